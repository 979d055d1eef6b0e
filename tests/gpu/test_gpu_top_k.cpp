// GPU tests of device::topK (label gpu): the k largest and smallest of u32 and f32 keys of
// 2^20 + 7 elements, k = 1, 100 and 5000, on device buffers, against a host stable sort of the
// indices (ties in index order, floats in the radix order); heavily repeated keys that go down
// to the last digit; k = n; calls sharing one TopKTemp; and the errors (outputs of the wrong
// size, k > n). device::segmentedTopK on about 10^6 u32 and f32 keys in segments of mixed
// lengths (empty, a few keys, thousands, one of 300000), both orders, k = 1, 64 and 5000,
// against the host's top k of each segment (indices within it, K{} and 2^32 - 1 past a short
// segment), calls sharing one TopKTemp, and its outputs of the wrong size.
#include <doctest/doctest.h>

#include <algorithm>
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

namespace {

// Offsets from 3 until about `total` keys: an eighth of the segments empty, three eighths of
// 1 .. 20 keys, half of 0 .. 4000, and one of 300000 a third of the way; the keys run 5 past
// the last offset.
std::vector<uint32_t> mixedSegments(size_t total, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> offsets{3};
  bool placed = false;
  while (offsets.back() < total) {
    const uint32_t r = rng() % 8;
    uint32_t length = r == 0 ? 0 : r < 4 ? 1 + rng() % 20 : rng() % 4001;
    if (!placed && offsets.back() >= total / 3) {
      length = 300000;
      placed = true;
    }
    offsets.push_back(offsets.back() + length);
  }
  return offsets;
}

// segmentedTopK on device buffers against the host's top k of each segment alone.
template <class K>
void checkSegmentedOnGpu(const std::vector<K>& keys, const std::vector<uint32_t>& offsets, size_t k,
                         bool largest, const std::string& what, device::TopKTemp* temp = nullptr) {
  const size_t segments = offsets.size() - 1;
  const auto [wantValues, wantIndices] = testing::referenceSegmentedTopK(keys, offsets, k, largest);
  gpu::DeviceBuffer<K> in(keys), values(segments * k);
  gpu::DeviceBuffer<uint32_t> at(offsets), indices(segments * k);
  values.fill(K{7});  // places the call misses would show
  indices.fill(7u);
  device::segmentedTopK(in, at, k, values, indices, largest, {}, temp);
  CAPTURE(what);
  CAPTURE(k);
  CAPTURE(largest);
  CHECK_MESSAGE(testing::sameBits(values.download(), wantValues), "values");
  CHECK_MESSAGE(indices.download() == wantIndices,
                "indices (within the segment, ties in index order)");
}

}  // namespace

TEST_CASE("gpu: segmentedTopK of u32 and f32, 10^6 keys in mixed segments, one TopKTemp") {
  const std::vector<uint32_t> offsets = mixedSegments(1000000, 9);
  const size_t n = offsets.back() + 5;
  const std::vector<uint32_t> words = gpuKeys<uint32_t>(n, 10);
  const std::vector<float> floats = gpuKeys<float>(n, 11);
  for (size_t k : {size_t{1}, size_t{64}, size_t{5000}}) {
    checkSegmentedOnGpu(words, offsets, k, true, "u32");
    checkSegmentedOnGpu(words, offsets, k, false, "u32");
    checkSegmentedOnGpu(floats, offsets, k, true, "f32");
    checkSegmentedOnGpu(floats, offsets, k, false, "f32");
  }
  // Five values: ties across k's border in every segment of more than a few keys.
  checkSegmentedOnGpu(gpuKeys<uint32_t>(n, 12, 5), offsets, 100, true, "u32 % 5");
  // Calls sharing one TopKTemp: a larger input, then a smaller one, then the first again.
  device::TopKTemp temp;
  checkSegmentedOnGpu(floats, offsets, 64, true, "f32 on a TopKTemp", &temp);
  const size_t held = temp.bytes();
  CHECK(held > 0);
  const std::vector<uint32_t> fewer = mixedSegments(20000, 13);
  checkSegmentedOnGpu(gpuKeys<uint32_t>(fewer.back() + 5, 14), fewer, 10, false,
                      "u32, fewer, on the TopKTemp", &temp);
  CHECK(temp.bytes() >= held);  // kept, not given back
  checkSegmentedOnGpu(floats, offsets, 64, true, "f32 on the TopKTemp again", &temp);
  // Outputs of the wrong size are refused, naming the call and the sizes.
  const std::vector<uint32_t> two = {0, 600, 1000};
  gpu::DeviceBuffer<uint32_t> in(std::vector<uint32_t>(words.begin(), words.begin() + 1000)),
      at(two), values(20), indices(20), longer(21);
  CHECK(testing::errorOf([&] {
          device::segmentedTopK(in, at, 10, longer, indices);
        }).find("segmentedTopK: the values' output holds 21 elements; it must hold 20") !=
        std::string::npos);
  CHECK(testing::errorOf([&] {
          device::segmentedTopK(in, at, 10, values, longer);
        }).find("segmentedTopK: the indices' output holds 21") != std::string::npos);
  device::segmentedTopK(in, at, 10, values, indices, false);
  const std::vector<uint32_t> got = indices.download();
  CHECK(std::vector<uint32_t>(got.begin(), got.begin() + 10) ==
        referenceTopK(std::vector<uint32_t>(words.begin(), words.begin() + 600), 10, false));
}
