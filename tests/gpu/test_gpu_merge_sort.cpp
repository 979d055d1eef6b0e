// GPU tests of the merge sort (label gpu): keys alone and pairs of u32 (ascending, descending)
// and f32 (by a user's comparator) match a host stable sort for awkward sizes (one key, less
// than a tile, many merge passes), call after call on one MergeSortTemp and on storage of
// their own, with the default policy and a small one of non-power-of-two blocks; and the
// errors of device buffers that do not fit.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <obsidian/obsidian.hpp>
#include <random>

#include "../support.hpp"

using namespace obsidian;

namespace {

// n keys: u32 below `below` (0: any), f32 in sevenths of -1000000 .. 1000000 (x and -x both
// occur: a comparator by magnitude has ties).
template <class K>
std::vector<K> randomKeys(size_t n, uint32_t seed, uint64_t below = 0) {
  std::mt19937_64 rng(seed);
  std::vector<K> v(n);
  for (K& k : v) {
    uint64_t r = rng();
    if (below) r %= below;
    if constexpr (std::is_same_v<K, float>) {
      k = static_cast<float>(static_cast<int64_t>(r % 2000001) - 1000000) / 7.0f;
    } else {
      k = static_cast<K>(r);
    }
  }
  return v;
}

// The stable order of the keys by the host's comparator, as indices.
template <class K, class HostLess>
std::vector<uint32_t> stableOrder(const std::vector<K>& keys, HostLess less) {
  std::vector<uint32_t> idx(keys.size());
  std::iota(idx.begin(), idx.end(), 0u);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](uint32_t a, uint32_t b) { return less(keys[a], keys[b]); });
  return idx;
}

// Sorts the keys alone and with their indices as values on the GPU (by less; hostLess the same
// order on the host) and checks both against std::stable_sort.
template <class K, class Less, class HostLess>
void checkOnGpu(const std::vector<K>& keys, Less less, HostLess hostLess,
                const device::Options& options, device::MergeSortTemp* temp,
                const std::string& what) {
  const size_t n = keys.size();
  const std::vector<uint32_t> idx = stableOrder(keys, hostLess);
  std::vector<K> want(n);
  for (size_t i = 0; i < n; ++i) want[i] = keys[idx[i]];
  std::vector<uint32_t> values(n);
  std::iota(values.begin(), values.end(), 0u);
  gpu::DeviceBuffer<K> in(keys), out(n);
  gpu::DeviceBuffer<uint32_t> vin(values), vout(n);
  device::mergeSortKeys(in, out, less, options, temp);
  const std::vector<K> got = out.download();
  CHECK_MESSAGE(std::memcmp(got.data(), want.data(), n * sizeof(K)) == 0,
                what << ": keys, n " << n);
  out.zero();
  device::mergeSortPairs(in, out, vin, vout, less, options, temp);
  const std::vector<K> gotPairs = out.download();
  CHECK_MESSAGE(std::memcmp(gotPairs.data(), want.data(), n * sizeof(K)) == 0,
                what << ": pairs' keys, n " << n);
  CHECK_MESSAGE(vout.download() == idx, what << ": pairs' values (stable), n " << n);
  // The input is left as it was.
  CHECK_MESSAGE(in.download() == keys, what << ": input unchanged, n " << n);
}

}  // namespace

TEST_CASE("gpu: merge sort of u32 and f32 keys and pairs, any length, call after call") {
  device::MergeSortTemp temp;
  const auto up = [](uint32_t a, uint32_t b) { return a < b; };
  const auto down = [](uint32_t a, uint32_t b) { return b < a; };
  // By magnitude: x and -x tie and keep their order.
  const auto magnitude = [](const Exp<float>& a, const Exp<float>& b) { return fabs(a) < fabs(b); };
  const auto hostMagnitude = [](float a, float b) { return std::fabs(a) < std::fabs(b); };
  for (size_t n : {size_t{1}, size_t{1000}, (size_t{1} << 20) + 17}) {
    const uint32_t seed = static_cast<uint32_t>(n);
    // Many equal keys (below 1000): stability across tiles and every merge pass.
    const std::vector<uint32_t> keys = randomKeys<uint32_t>(n, seed, 1000);
    checkOnGpu(keys, Ascending{}, up, {}, &temp, "u32 ascending, shared temp");
    checkOnGpu(keys, Descending{}, down, {}, &temp, "u32 descending, shared temp");
    checkOnGpu(keys, Ascending{}, up, {}, nullptr, "u32 ascending, own temp");
    checkOnGpu(randomKeys<float>(n, seed + 1), magnitude, hostMagnitude, {}, &temp,
               "f32 by magnitude");
    // A small tile of a non-power-of-two block: many more merge passes.
    device::Options small;
    small.policy = {{"threads", "96"}, {"items", "5"}};
    checkOnGpu(keys, Ascending{}, up, small, &temp, "u32, 96 x 5 tiles");
  }
  CHECK(temp.bytes() > 0);
}

TEST_CASE("gpu: merge sort's errors on device buffers") {
  const size_t n = 1000;
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(n, 9);
  gpu::DeviceBuffer<uint32_t> in(keys), out(n), shorter(n - 1);
  CHECK(testing::errorOf([&] {
          device::mergeSortKeys(in, shorter);
        }).find("as many keys as the input") != std::string::npos);
  CHECK(testing::errorOf([&] {
          device::mergeSortKeys(in, in);
        }).find("another buffer than the input") != std::string::npos);
  gpu::DeviceBuffer<uint32_t> values(n), valuesOut(n);
  CHECK(testing::errorOf([&] {
          device::mergeSortPairs(in, out, values, shorter);
        }).find("as many values as keys") != std::string::npos);
  CHECK(testing::errorOf([&] {
          device::mergeSortPairs(in, out, values, values);
        }).find("another buffer than the input") != std::string::npos);
  // Nothing ran: the refused output still holds what it held.
  shorter.zero();
  CHECK(testing::errorOf([&] { device::mergeSortKeys(in, shorter); }) != "no error");
  CHECK(shorter.download() == std::vector<uint32_t>(n - 1, 0u));
  // A policy of part of a warp is rejected before anything runs.
  device::Options partWarp;
  partWarp.policy = {{"threads", "48"}};
  CHECK(testing::errorOf([&] {
          device::mergeSortKeys(in, out, Ascending{}, partWarp);
        }).find("whole warps") != std::string::npos);
  // The sort still works after the errors.
  device::mergeSortKeys(in, out);
  std::vector<uint32_t> want = keys;
  std::stable_sort(want.begin(), want.end());
  CHECK(out.download() == want);
}
