// GPU tests of the radix sort (label gpu): keys alone and pairs of several key types, in both
// orders and over a bit range, match a host stable sort for awkward sizes, call after call on
// one RadixSortTemp (each pass a new epoch, so an earlier call's look-back status never
// confuses a later one) and on storage of their own.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <obsidian/obsidian.hpp>
#include <random>

#include "../support.hpp"

using namespace obsidian;

namespace {

template <class K>
std::vector<K> randomKeys(size_t n, uint32_t seed, uint64_t below = 0) {
  std::mt19937_64 rng(seed);
  std::vector<K> v(n);
  for (K& k : v) {
    uint64_t r = rng();
    if (below) r %= below;
    if constexpr (std::is_same_v<K, float>) {
      k = static_cast<float>(static_cast<int64_t>(r % 2000001) - 1000000) / 7.0f;
    } else if constexpr (std::is_same_v<K, Half>) {
      k = Half(static_cast<float>(static_cast<int64_t>(r % 4001) - 2000) / 8.0f);
    } else {
      k = static_cast<K>(r);
    }
  }
  return v;
}

// The stable order of the keys (by value; descending: largest first), as indices.
template <class K>
std::vector<uint32_t> stableOrder(const std::vector<K>& keys, bool descending) {
  std::vector<uint32_t> idx(keys.size());
  std::iota(idx.begin(), idx.end(), 0u);
  const auto value = [&](uint32_t i) {
    if constexpr (std::is_same_v<K, Half>) {
      return static_cast<float>(keys[i]);
    } else {
      return keys[i];
    }
  };
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
    return descending ? value(b) < value(a) : value(a) < value(b);
  });
  return idx;
}

template <class K>
void checkOnGpu(size_t n, bool descending, device::RadixSortTemp* temp, uint32_t seed) {
  const std::vector<K> keys = randomKeys<K>(n, seed);
  const std::vector<uint32_t> idx = stableOrder(keys, descending);
  std::vector<K> want(n);
  for (size_t i = 0; i < n; ++i) want[i] = keys[idx[i]];
  std::vector<uint32_t> values(n);
  std::iota(values.begin(), values.end(), 0u);
  gpu::DeviceBuffer<K> in(keys), out(n);
  gpu::DeviceBuffer<uint32_t> vin(values), vout(n);
  const RadixOrder order{descending};
  device::radixSortKeys(in, out, order, {}, temp);
  const std::vector<K> got = out.download();
  CHECK_MESSAGE(std::memcmp(got.data(), want.data(), n * sizeof(K)) == 0,
                "keys, n " << n << (descending ? " descending" : ""));
  out.zero();
  device::radixSortPairs(in, out, vin, vout, order, {}, temp);
  const std::vector<K> gotPairs = out.download();
  CHECK_MESSAGE(std::memcmp(gotPairs.data(), want.data(), n * sizeof(K)) == 0,
                "pairs' keys, n " << n);
  CHECK_MESSAGE(vout.download() == idx, "pairs' values (stable), n " << n);
}

}  // namespace

TEST_CASE("gpu: radix sort of u32, f32, u64 and f16 keys and pairs, any length, call after call") {
  device::RadixSortTemp temp;
  for (size_t n : {size_t{1}, size_t{1000}, (size_t{1} << 20) + 3, (size_t{1} << 24) + 7}) {
    for (int repeat = 0; repeat < 2; ++repeat) {
      checkOnGpu<uint32_t>(n, repeat == 1, &temp, static_cast<uint32_t>(n) + repeat);
    }
    checkOnGpu<float>(n, false, &temp, 3);
    checkOnGpu<uint64_t>(n, true, nullptr, 4);  // storage of its own
  }
  checkOnGpu<Half>(100003, false, &temp, 5);
  CHECK(temp.bytes() > 0);
}

TEST_CASE("gpu: radix sort over a bit range, and its errors") {
  const size_t n = 300007;
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(n, 9);
  gpu::DeviceBuffer<uint32_t> in(keys), out(n);
  device::radixSortKeys(in, out, RadixOrder{false, 8, 20});
  std::vector<uint32_t> want = keys;
  std::stable_sort(want.begin(), want.end(), [](uint32_t a, uint32_t b) {
    return ((a >> 8) & 0xFFFu) < ((b >> 8) & 0xFFFu);
  });
  CHECK(out.download() == want);
  gpu::DeviceBuffer<uint32_t> shorter(n - 1);
  CHECK(testing::errorOf([&] {
          device::radixSortKeys(in, shorter);
        }).find("as many keys as the input") != std::string::npos);
  CHECK(testing::errorOf([&] {
          device::radixSortKeys(in, in);
        }).find("another buffer than the input") != std::string::npos);
}
