// GPU tests of device::topK (label gpu): the k largest and smallest of u32 and f32 keys of
// 2^20 + 7 elements, k = 1, 100 and 5000, on device buffers, against a host stable sort of the
// indices (ties in index order, floats in the radix order); heavily repeated keys that go down
// to the last digit; k = n; calls sharing one TopKTemp; and the errors (outputs of the wrong
// size, k > n).
#include <doctest/doctest.h>

#include <cstring>
#include <obsidian/obsidian.hpp>
#include <random>

#include "../select_support.hpp"
#include "../support.hpp"

using namespace obsidian;
using testing::referenceTopK;

namespace {

// Random keys: u32 as testing::randomKeys draws them (below `below` if not 0); f32 not of any
// bits but i / 7 for integers i in -10^6 .. 10^6: both signs, repeats and zeros.
template <class K>
std::vector<K> gpuKeys(size_t n, uint32_t seed, uint32_t below = 0) {
  if constexpr (std::is_same_v<K, float>) {
    std::mt19937_64 rng(seed);
    std::vector<float> v(n);
    for (float& x : v) {
      x = static_cast<float>(static_cast<int64_t>(rng() % 2000001) - 1000000) / 7.0f;
    }
    return v;
  } else {
    return testing::randomKeys<K>(n, seed, below);
  }
}

template <class K>
void checkOnGpu(const std::vector<K>& keys, size_t k, bool largest, const std::string& what,
                device::TopKTemp* temp = nullptr) {
  const std::vector<uint32_t> want = referenceTopK(keys, k, largest);
  std::vector<K> wantValues(k);
  for (size_t i = 0; i < k; ++i) wantValues[i] = keys[want[i]];
  gpu::DeviceBuffer<K> in(keys), values(k);
  gpu::DeviceBuffer<uint32_t> indices(k);
  device::topK(in, k, values, indices, largest, {}, temp);
  const std::vector<K> got = values.download();
  CAPTURE(what);
  CAPTURE(k);
  CAPTURE(largest);
  CHECK_MESSAGE(testing::sameBits(got, wantValues), "values");
  CHECK_MESSAGE(indices.download() == want, "indices (ties in index order)");
}

}  // namespace

TEST_CASE("gpu: topK of u32 and f32, 2^20 + 7 keys, k = 1, 100 and 5000") {
  const size_t n = (size_t{1} << 20) + 7;
  const std::vector<uint32_t> words = gpuKeys<uint32_t>(n, 1);
  const std::vector<float> floats = gpuKeys<float>(n, 2);
  for (size_t k : {size_t{1}, size_t{100}, size_t{5000}}) {
    checkOnGpu(words, k, true, "u32");
    checkOnGpu(words, k, false, "u32");
    checkOnGpu(floats, k, true, "f32");
    checkOnGpu(floats, k, false, "f32");
  }
  // Five values: every level keeps about n / 5 keys, down to the last digit.
  const std::vector<uint32_t> fives = gpuKeys<uint32_t>(n, 3, 5);
  checkOnGpu(fives, 1, true, "u32 % 5");
  checkOnGpu(fives, 5000, false, "u32 % 5");
  // k = n: every key, sorted.
  checkOnGpu(gpuKeys<float>(100003, 4), 100003, true, "f32, k = n");
}

TEST_CASE("gpu: topK call after call on one TopKTemp, larger and smaller inputs") {
  device::TopKTemp temp;
  checkOnGpu(gpuKeys<uint32_t>(300007, 6, 5), 2000, true, "u32 % 5", &temp);
  const size_t held = temp.bytes();
  CHECK(held > 0);
  checkOnGpu(gpuKeys<float>(1000, 7), 10, false, "f32, fewer", &temp);
  CHECK(temp.bytes() >= held);  // kept, not given back
  checkOnGpu(gpuKeys<uint32_t>((size_t{1} << 20) + 7, 8), 100, true, "u32, more", &temp);
  checkOnGpu(gpuKeys<uint32_t>(300007, 6, 5), 2000, true, "u32 % 5 again", &temp);
}

TEST_CASE("gpu: topK's errors: outputs of the wrong size, k > n") {
  const std::vector<uint32_t> keys = gpuKeys<uint32_t>(1000, 5);
  gpu::DeviceBuffer<uint32_t> in(keys), values(10), indices(10), longer(11);
  CHECK(testing::errorOf([&] {
          device::topK(in, 10, longer, indices);
        }).find("topK: the values' output holds 11 elements; it must hold 10") !=
        std::string::npos);
  CHECK(testing::errorOf([&] {
          device::topK(in, 10, values, longer);
        }).find("topK: the indices' output holds 11") != std::string::npos);
  const std::string tooMany = testing::errorOf([&] { device::topK(in, 1001, values, indices); });
  CHECK(tooMany.find("topK") != std::string::npos);
  CHECK(tooMany.find("k 1001 of 1000") != std::string::npos);
  // The right sizes work after the refusals.
  device::topK(in, 10, values, indices);
  CHECK(indices.download() == referenceTopK(keys, 10, true));
}
