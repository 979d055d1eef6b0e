// GPU tests of the segmented sort (label gpu): u32 and f32 keys, alone and with u32 values, in
// both orders and over a bit range, for many short segments (random lengths 0 .. 5000, and
// 0 .. 20), empty ones, and one long segment of 300000 keys (the LSD passes over global memory),
// the first segment starting past 0 and the last ending short of the keys (places outside
// every segment are never written), match a host stable sort of each segment, call after call
// on one SegmentedSortTemp and on storage of their own; and the errors of device buffers.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <obsidian/obsidian.hpp>
#include <random>

#include "../select_support.hpp"
#include "../support.hpp"

using namespace obsidian;

namespace {

// u32 over the whole range (or below `below`); f32 in sevenths of -10^6 .. 10^6 (no -0, no NaN).
template <class K>
std::vector<K> gpuKeys(size_t n, uint32_t seed, uint64_t below = 0) {
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

// Offsets from 3: segments of random lengths 0 .. maxLength until about `total` keys, with one
// of `longOne` keys (if not 0) a third of the way; the keys run 5 past the last offset.
std::vector<uint32_t> randomOffsets(size_t total, uint32_t maxLength, uint32_t longOne,
                                    uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> offsets{3};
  bool placed = longOne == 0;
  while (offsets.back() < total) {
    uint32_t length = rng() % (maxLength + 1);
    if (!placed && offsets.back() >= total / 3) {
      length = longOne;
      placed = true;
    }
    offsets.push_back(offsets.back() + length);
  }
  return offsets;
}

// The host's result: every segment sorted stably by bits order.beginBit .. endBit of the order
// words (with the keys' places as values); `outside` elsewhere.
template <class K>
std::pair<std::vector<K>, std::vector<uint32_t>> hostSegmented(const std::vector<K>& keys,
                                                               const std::vector<uint32_t>& offsets,
                                                               const RadixOrder& o, K outside,
                                                               uint32_t outsideValue) {
  const uint32_t end = o.endBit ? o.endBit : 8 * sizeof(K);
  const uint64_t mask = (uint64_t{1} << (end - o.beginBit)) - 1;
  std::vector<K> want(keys.size(), outside);
  std::vector<uint32_t> places(keys.size(), outsideValue);
  for (size_t s = 0; s + 1 < offsets.size(); ++s) {
    std::vector<uint32_t> idx(offsets[s + 1] - offsets[s]);
    std::iota(idx.begin(), idx.end(), offsets[s]);
    std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
      return ((testing::orderBits(keys[a], o.descending) >> o.beginBit) & mask) <
             ((testing::orderBits(keys[b], o.descending) >> o.beginBit) & mask);
    });
    for (size_t i = 0; i < idx.size(); ++i) {
      want[offsets[s] + i] = keys[idx[i]];
      places[offsets[s] + i] = idx[i];
    }
  }
  return {want, places};
}

template <class K>
void checkOnGpu(const std::vector<uint32_t>& offsets, const RadixOrder& order,
                device::SegmentedSortTemp* temp, uint32_t seed, const std::string& what) {
  const size_t n = offsets.back() + 5;
  const std::vector<K> keys = gpuKeys<K>(n, seed);
  // Outside every segment the outputs keep what they held: a sentinel.
  K sentinel;
  std::memset(&sentinel, 0x5a, sizeof(K));
  const uint32_t valueSentinel = 0xdeadbeefu;
  const auto [want, places] = hostSegmented(keys, offsets, order, sentinel, valueSentinel);
  std::vector<uint32_t> values(n);
  std::iota(values.begin(), values.end(), 0u);
  gpu::DeviceBuffer<K> in(keys), out(std::vector<K>(n, sentinel));
  gpu::DeviceBuffer<uint32_t> vin(values), vout(std::vector<uint32_t>(n, valueSentinel));
  gpu::DeviceBuffer<uint32_t> dOffsets(offsets);
  device::segmentedSortKeys(in, out, dOffsets, order, {}, temp);
  CHECK_MESSAGE(testing::sameBits(out.download(), want), what << ": keys alone");
  out.upload(std::vector<K>(n, sentinel));
  device::segmentedSortPairs(in, out, vin, vout, dOffsets, order, {}, temp);
  CHECK_MESSAGE(testing::sameBits(out.download(), want), what << ": pairs' keys");
  CHECK_MESSAGE(vout.download() == places, what << ": pairs' values (stable)");
}

}  // namespace

TEST_CASE("gpu: segmented sort of u32 and f32 keys and pairs, short and long segments") {
  device::SegmentedSortTemp temp;
  // 2^20 keys in segments of 0 .. 5000, and one of 300000.
  const std::vector<uint32_t> mixed = randomOffsets(size_t{1} << 20, 5000, 300000, 1);
  checkOnGpu<uint32_t>(mixed, {}, &temp, 2, "u32, mixed");
  checkOnGpu<uint32_t>(mixed, {true}, &temp, 3, "u32 descending, mixed");
  checkOnGpu<float>(mixed, {}, &temp, 4, "f32, mixed");
  checkOnGpu<float>(mixed, {true}, nullptr, 5, "f32 descending, mixed, storage of its own");
  // Many tiny segments: 2^20 keys in segments of 0 .. 20.
  const std::vector<uint32_t> tiny = randomOffsets(size_t{1} << 20, 20, 0, 6);
  checkOnGpu<uint32_t>(tiny, {}, &temp, 7, "u32, tiny segments");
  // Segments around the default tile (256 x 8 = 2048) and a few long ones.
  const std::vector<uint32_t> around = {0, 2047, 4095, 6143, 6144, 6145, 200000, 400001, 1000000};
  checkOnGpu<uint32_t>(around, {}, &temp, 8, "u32, around the tile");
  // Bits 8 .. 20: equal there, the input order stays.
  checkOnGpu<uint32_t>(mixed, {false, 8, 20}, &temp, 9, "u32 bits 8 .. 20");
  CHECK(temp.bytes() > 0);
}

TEST_CASE("gpu: segmented sort's errors") {
  const size_t n = 1000;
  const std::vector<uint32_t> keys = gpuKeys<uint32_t>(n, 9);
  gpu::DeviceBuffer<uint32_t> in(keys), out(n), shorter(n - 1);
  gpu::DeviceBuffer<uint32_t> offsets(std::vector<uint32_t>{0, 500, 1000});
  CHECK(testing::has(testing::errorOf([&] { device::segmentedSortKeys(in, shorter, offsets); }),
                     "as many elements as the input"));
  CHECK(testing::has(testing::errorOf([&] { device::segmentedSortKeys(in, in, offsets); }),
                     "another buffer than the input"));
  gpu::DeviceBuffer<uint32_t> vin(keys), vout(n);
  CHECK(testing::has(
      testing::errorOf([&] { device::segmentedSortPairs(in, out, vin, shorter, offsets); }),
      "as many elements as the input"));
  CHECK(testing::has(
      testing::errorOf([&] { device::segmentedSortPairs(in, out, vin, vin, offsets); }),
      "another buffer than the input"));
  CHECK(testing::has(
      testing::errorOf([&] { device::segmentedSortPairs(in, out, shorter, vout, offsets); }),
      "as many values as keys"));
  gpu::DeviceBuffer<uint32_t> noOffsets(0);
  CHECK(testing::has(testing::errorOf([&] { device::segmentedSortKeys(in, out, noOffsets); }),
                     "got none"));
  // A correct call after the errors.
  device::segmentedSortKeys(in, out, offsets);
  std::vector<uint32_t> want = keys;
  std::sort(want.begin(), want.begin() + 500);
  std::sort(want.begin() + 500, want.end());
  CHECK(out.download() == want);
}
