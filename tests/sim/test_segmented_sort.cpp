// The segmented sort on the simulator (include/obsidian/device/segmented_sort.hpp): segments of
// every length around a small tile (empty, one key, shorter than the tile, exactly a tile, and
// longer: the LSD passes over global memory), the first offset past 0 and the last short of the
// keys (places outside every segment stay 0), every key type in both orders (floats with signed
// zeros, infinities and NaNs), bit ranges, radix bits giving an odd and an even number of
// passes, keys alone and pairs (u32 places as values: stability), the default policy, blocks
// reversed and fewer real blocks than segments; and its errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <obsidian/obsidian.hpp>
#include <random>

#include "../select_support.hpp"
#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;
using testing::orderBits;
using testing::randomKeys;

namespace {

// A tile of 64 threads x 2 keys (128 keys), 6-bit digits: a few hundred keys make a long
// segment of several tiles.
device::Options small(SimOptions sim = {}, uint32_t threads = 64, uint32_t radixBits = 6) {
  device::Options o;
  o.policy = {{"threads", std::to_string(threads)},
              {"items", "2"},
              {"radix_bits", std::to_string(radixBits)}};
  o.simulation = sim;
  return o;
}
constexpr size_t kTile = 128;

// Offsets from `first` through segments of the given lengths.
std::vector<uint32_t> offsetsOf(uint32_t first, const std::vector<uint32_t>& lengths) {
  std::vector<uint32_t> offsets{first};
  for (uint32_t l : lengths) offsets.push_back(offsets.back() + l);
  return offsets;
}

// The mixed layout: the first segment starts at 5, the last ends 7 keys short of the end; empty
// segments (first, in the middle, last), one key, shorter than the tile, a tile less one, a
// tile, a tile and one, and long ones (two tiles, several with a partial last tile).
std::vector<uint32_t> mixedOffsets(size_t tile) {
  const uint32_t t = static_cast<uint32_t>(tile);
  return offsetsOf(5, {0, 1, 3, 0, t - 1, t, t + 1, 0, 2, 4 * t + 88, 50, 1, 0, 2 * t, 17, 0});
}

// The stable order of keys[from .. to) by bits begin .. end of their order words, as places.
template <class K>
std::vector<uint32_t> segmentOrder(const std::vector<K>& keys, uint32_t from, uint32_t to,
                                   const RadixOrder& o) {
  const uint32_t end = o.endBit ? o.endBit : 8 * sizeof(K);
  const uint64_t mask =
      end - o.beginBit == 64 ? ~uint64_t{0} : (uint64_t{1} << (end - o.beginBit)) - 1;
  std::vector<uint32_t> idx(to - from);
  std::iota(idx.begin(), idx.end(), from);
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
    return ((orderBits(keys[a], o.descending) >> o.beginBit) & mask) <
           ((orderBits(keys[b], o.descending) >> o.beginBit) & mask);
  });
  return idx;
}

// Sorts keys alone and with their places as values, and checks every segment against the host's
// stable sort and every place outside all segments for the value-initialized 0.
template <class K>
void checkSegmented(const std::vector<K>& keys, const std::vector<uint32_t>& offsets,
                    const RadixOrder& order, const device::Options& o, const std::string& what) {
  const size_t n = keys.size();
  std::vector<K> want(n, K{});
  std::vector<uint32_t> wantValues(n, 0u);
  for (size_t s = 0; s + 1 < offsets.size(); ++s) {
    const std::vector<uint32_t> idx = segmentOrder(keys, offsets[s], offsets[s + 1], order);
    for (size_t i = 0; i < idx.size(); ++i) {
      want[offsets[s] + i] = keys[idx[i]];
      wantValues[offsets[s] + i] = idx[i];
    }
  }
  std::vector<K> out;
  device::segmentedSortKeys(keys, out, offsets, order, o);
  CHECK_MESSAGE(testing::sameBits(out, want), what << ": keys alone");
  std::vector<uint32_t> values(n);
  std::iota(values.begin(), values.end(), 0u);
  std::vector<K> pairKeys;
  std::vector<uint32_t> pairValues;
  device::segmentedSortPairs(keys, pairKeys, values, pairValues, offsets, order, o);
  CHECK_MESSAGE(testing::sameBits(pairKeys, want), what << ": pairs' keys");
  CHECK_MESSAGE(pairValues == wantValues, what << ": pairs' values (stable)");
}

template <class K>
void checkType(const char* name, uint32_t seed) {
  const std::vector<uint32_t> offsets = mixedOffsets(kTile);
  const size_t n = offsets.back() + 7;
  const std::vector<K> keys = randomKeys<K>(n, seed);
  checkSegmented(keys, offsets, {}, small(), std::string(name) + " ascending");
  checkSegmented(keys, offsets, {true}, small(), std::string(name) + " descending");
  // Few distinct keys: long runs of equal digits keep their order.
  checkSegmented(randomKeys<K>(n, seed + 1, 3), offsets, {}, small(),
                 std::string(name) + " three keys");
}

}  // namespace

TEST_CASE("segmented sort: every key type, every segment length, keys alone and pairs") {
  checkType<uint8_t>("u8", 1);
  checkType<uint16_t>("u16", 2);
  checkType<uint32_t>("u32", 3);
  checkType<int32_t>("i32", 4);
  checkType<float>("f32", 5);
  checkType<uint64_t>("u64", 6);
  checkType<double>("f64", 7);
  checkType<Half>("f16", 8);
}

TEST_CASE("segmented sort: floats by their order, -0 before +0, infinities and NaNs") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> specials = {3.5f, -0.0f, 0.0f,  -inf, 1e-30f,  -2.0f, nan, inf,
                                       -nan, 0.0f,  -0.0f, 7.0f, -1e-30f, -7.0f, nan, -0.0f};
  // A short segment of the specials alone, then a long one of the specials among random bits
  // (NaNs of any payload too), then the specials again past a gap.
  std::vector<float> keys = specials;
  std::vector<float> noise = randomKeys<float>(3 * kTile + 21, 31);
  for (size_t i = 0; i < noise.size(); i += 23) noise[i] = specials[(i / 23) % specials.size()];
  keys.insert(keys.end(), noise.begin(), noise.end());
  keys.push_back(1.0f);  // outside every segment
  keys.insert(keys.end(), specials.begin(), specials.end());
  const uint32_t a = static_cast<uint32_t>(specials.size());
  const uint32_t b = a + static_cast<uint32_t>(noise.size());
  const std::vector<uint32_t> offsets = {0, a, b, b + 1, b + 1 + a};
  checkSegmented(keys, {0, a, b}, {}, small(), "specials, ascending");
  checkSegmented(keys, offsets, {true}, small(), "specials, descending");
  std::vector<float> sorted;
  device::segmentedSortKeys(keys, sorted, std::vector<uint32_t>{0, a}, {}, small());
  // -NaN, -inf, -7, -2, -1e-30, three -0 (in order), two +0, 1e-30, 3.5, 7, inf, two NaN.
  CHECK(std::isnan(sorted[0]));
  CHECK(std::signbit(sorted[0]));
  CHECK(sorted[1] == -inf);
  CHECK(sorted[2] == -7.0f);
  for (int i = 5; i < 8; ++i) CHECK((sorted[i] == 0.0f && std::signbit(sorted[i])));
  for (int i = 8; i < 10; ++i) CHECK((sorted[i] == 0.0f && !std::signbit(sorted[i])));
  CHECK(sorted[13] == inf);
  CHECK((std::isnan(sorted[14]) && std::isnan(sorted[15]) && !std::signbit(sorted[15])));
}

TEST_CASE("segmented sort: bit ranges, and radix bits of an odd and an even number of passes") {
  const std::vector<uint32_t> offsets = mixedOffsets(kTile);
  const size_t n = offsets.back() + 7;
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(n, 21);
  // 32 bits: 7 passes of 5 bits (odd), 6 of 6 (even), 5 of 7 (odd) and 4 of 8 (even).
  checkSegmented(keys, offsets, {}, small({}, 64, 5), "5-bit digits, 7 passes");
  checkSegmented(keys, offsets, {true}, small({}, 64, 6), "6-bit digits, 6 passes, descending");
  checkSegmented(keys, offsets, {}, small({}, 128, 7), "7-bit digits, 5 passes");
  checkSegmented(keys, offsets, {}, small({}, 256, 8), "8-bit digits, 4 passes");
  // Bits 4 .. 13 (two passes); bits 3 .. 8 (one pass: straight into the output); bits 20 .. 32
  // descending; equal there, the input order stays.
  checkSegmented(keys, offsets, {false, 4, 13}, small(), "bits 4 .. 13");
  checkSegmented(keys, offsets, {false, 3, 8}, small(), "bits 3 .. 8, one pass");
  checkSegmented(keys, offsets, {true, 20, 32}, small(), "bits 20 .. 32 descending");
  // No bits: every segment as it is.
  checkSegmented(keys, offsets, {false, 9, 9}, small(), "no bits");
  const std::vector<uint64_t> wide = randomKeys<uint64_t>(n, 22);
  checkSegmented(wide, offsets, {false, 30, 64}, small(), "u64 bits 30 .. 64");
  checkSegmented(wide, offsets, {true, 0, 7}, small(), "u64 bits 0 .. 7 descending");
}

TEST_CASE("segmented sort: random layouts, blocks reversed, fewer real blocks, default policy") {
  // Forty segments of random lengths 0 .. 300 (a quarter of them empty), from offset 3.
  std::mt19937 rng(41);
  std::vector<uint32_t> lengths;
  for (int s = 0; s < 40; ++s) lengths.push_back(rng() % 4 == 0 ? 0 : rng() % 301);
  const std::vector<uint32_t> offsets = offsetsOf(3, lengths);
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(offsets.back() + 2, 42);
  checkSegmented(keys, offsets, {}, small(), "random layout");
  SimOptions reversed;
  reversed.reverseBlocks = true;
  checkSegmented(keys, offsets, {true}, small(reversed), "random layout, blocks reversed");
  SimOptions few;
  few.blocks = 3;  // each real block sorts several segments
  checkSegmented(keys, offsets, {}, small(few), "random layout, 3 real blocks");
  // A second tile of one key a thread: segments to 64 keys in it, to 128 in the tile, longer
  // ones by passes.
  device::Options twoTiles = small();
  twoTiles.policy.push_back({"small_items", "1"});
  checkSegmented(keys, offsets, {}, twoTiles, "random layout, a smaller tile for short ones");
  // The default policy's tiles: segments around 2048, and one of three tiles.
  const std::vector<uint32_t> big = offsetsOf(1, {2047, 2048, 2049, 0, 6000, 300});
  const std::vector<uint32_t> bigKeys = randomKeys<uint32_t>(big.back() + 1, 43);
  checkSegmented(bigKeys, big, {}, {}, "the default policy");
}

TEST_CASE("segmented sort: no keys, no segments, one segment of everything") {
  const std::vector<uint32_t> none;
  std::vector<uint32_t> out = {9};
  device::segmentedSortKeys(none, out, std::vector<uint32_t>{0}, {}, small());
  CHECK(out.empty());
  device::segmentedSortKeys(none, out, std::vector<uint32_t>{0, 0, 0}, {}, small());
  CHECK(out.empty());
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(300, 51);
  // No segments: nothing written, the output all zeros.
  device::segmentedSortKeys(keys, out, std::vector<uint32_t>{0}, {}, small());
  CHECK(out == std::vector<uint32_t>(300, 0u));
  checkSegmented(keys, {0, 300}, {}, small(), "one segment of everything");
  checkSegmented(keys, {300, 300}, {}, small(), "one empty segment at the end");
}

TEST_CASE("segmented sort: the errors name the rule") {
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(10, 1);
  std::vector<uint32_t> out;
  const auto sortWith = [&](std::vector<uint32_t> offsets) {
    return errorOf([&] { device::segmentedSortKeys(keys, out, offsets, {}, small()); });
  };
  CHECK(testing::has(sortWith({0, 5, 4, 10}), "must not decrease"));
  CHECK(testing::has(sortWith({0, 5, 11}), "past the 10 keys"));
  CHECK(testing::has(sortWith({11}), "past the 10 keys"));
  CHECK(testing::has(sortWith({}), "got none"));
  const std::vector<uint32_t> offsets = {0, 10};
  CHECK(testing::has(errorOf([&] {
                       device::segmentedSortKeys(keys, out, offsets, {false, 0, 33});
                     }),
                     "within the key's 32 bits"));
  CHECK(testing::has(errorOf([&] {
                       device::segmentedSortKeys(keys, out, offsets, {false, 9, 8});
                     }),
                     "the first not past the last"));
  const std::vector<uint8_t> bytes(10, 0);
  std::vector<uint8_t> bytesOut;
  CHECK(testing::has(errorOf([&] {
                       device::segmentedSortKeys(bytes, bytesOut, offsets, {false, 0, 9});
                     }),
                     "within the key's 8 bits"));
  device::Options narrow;
  narrow.policy = {{"threads", "128"}};  // 8-bit digits need 256 threads
  CHECK(testing::has(errorOf([&] { device::segmentedSortKeys(keys, out, offsets, {}, narrow); }),
                     "8-bit digits are 256"));
  CHECK(testing::has(
      errorOf([&] { device::segmentedSortKeys(keys, out, offsets, {}, small({}, 32, 6)); }),
      "6-bit digits are 64"));
  device::Options bad;
  bad.policy = {{"items", "0"}};
  CHECK(testing::has(errorOf([&] { device::segmentedSortKeys(keys, out, offsets, {}, bad); }),
                     "items"));
  const std::vector<uint32_t> fewer(9, 0);
  std::vector<uint32_t> valuesOut;
  CHECK(testing::has(
      errorOf([&] { device::segmentedSortPairs(keys, out, fewer, valuesOut, offsets); }),
      "as many values as keys"));
  // Not in place: the output is another vector (keys, and values).
  std::vector<uint32_t> same = keys, values(10, 1);
  CHECK(testing::has(errorOf([&] { device::segmentedSortKeys(same, same, offsets); }),
                     "segmentedSortKeys: the output must be another vector than the input"));
  CHECK(
      testing::has(errorOf([&] { device::segmentedSortPairs(keys, out, values, values, offsets); }),
                   "segmentedSortPairs: the output must be another vector than the input"));
}
