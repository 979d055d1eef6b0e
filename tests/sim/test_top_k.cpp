// device::topK on the simulator: the k largest (or smallest) elements in order with their u32
// indices, checked against a host stable sort of the indices by the keys' order words (ties in
// index order), for random and heavily repeated keys of every width (one level for u8, eight
// for u64 and f64), floats with signed zeros, infinities and NaNs in the radix order, k from 0
// to n, small policies (so that a few thousand keys take several levels) and the table's; and
// the errors. device::segmentedTopK likewise, segment by segment (indices within the segment,
// places past a segment shorter than k holding K{} and 2^32 - 1): empty segments, segments
// shorter than k, of k and longer, one of a few thousand keys (the segmented sort's passes over
// several small tiles), the first offset past 0 and the last short of the keys, k = 1 to k past
// every segment, repeated keys, floats in the radix order, k = 0 and no segments; and its
// errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <obsidian/obsidian.hpp>
#include <random>

#include "../select_support.hpp"
#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;
using testing::randomKeys;
using testing::referenceSegmentedTopK;
using testing::referenceTopK;

namespace {

// Small tiles (the split's 64 x 5, count blocks of 64 x 2) and at most 64 candidates left: a
// few thousand keys take several levels.
device::Options small(const char* candidates = "64", SimOptions sim = {}) {
  device::Options o;
  o.policy = {{"candidates", candidates},
              {"split_threads", "64"},
              {"split_items", "5"},
              {"threads", "64"},
              {"items", "2"}};
  o.simulation = sim;
  return o;
}

// topK against the reference: the values bit for bit (NaNs, signed zeros) and the indices.
template <class K>
void checkTopK(const std::vector<K>& keys, size_t k, bool largest, const device::Options& o,
               const std::string& what) {
  const std::vector<uint32_t> want = referenceTopK(keys, k, largest);
  std::vector<K> wantValues(k);
  for (size_t i = 0; i < k; ++i) wantValues[i] = keys[want[i]];
  std::vector<K> values(3);  // resized to k
  std::vector<uint32_t> indices(5);
  device::topK(keys, k, values, indices, largest, o);
  CAPTURE(what);
  CAPTURE(k);
  CAPTURE(largest);
  REQUIRE(values.size() == k);
  REQUIRE(indices.size() == k);
  CHECK_MESSAGE(testing::sameBits(values, wantValues), "values");
  CHECK_MESSAGE(indices == want, "indices (ties in index order)");
}

}  // namespace

TEST_CASE("topK: random u32 keys, the largest and the smallest, k from 1 to n") {
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(3000, 1);
  for (size_t k : {size_t{1}, size_t{5}, size_t{100}, size_t{1500}}) {
    checkTopK(keys, k, true, small(), "largest");
    checkTopK(keys, k, false, small(), "smallest");
  }
  checkTopK(keys, keys.size(), true, small(), "k = n");
  // One candidate: random keys stop a level later (about 12 keys share a first digit).
  checkTopK(keys, 77, true, small("1"), "candidates 1");
  // The split's tiles drawn by blocks from the last to the first, and by two real blocks.
  checkTopK(keys, 100, true, small("64", SimOptions{0, true, uint64_t{1} << 24, true, false}),
            "blocks reversed");
  checkTopK(keys, 100, false, small("64", SimOptions{2, true, uint64_t{1} << 24, false, false}),
            "two real blocks");
}

TEST_CASE("topK: many equal keys, down to the last digit, ties by index") {
  // Five values, about 400 of each: every level keeps hundreds, and the last digit takes the
  // first ones by index.
  std::vector<uint32_t> fives = randomKeys<uint32_t>(2000, 2, 5);
  for (size_t k : {size_t{1}, size_t{401}, size_t{2000}}) {
    checkTopK(fives, k, true, small(), "values % 5, largest");
  }
  checkTopK(fives, 7, false, small(), "values % 5, smallest");
  // Below 1000: two levels of zero digits, then a level of four digits, then the last.
  checkTopK(randomKeys<uint32_t>(3000, 3, 1000), 250, true, small("4"), "below 1000");
  // All equal: the first k by index.
  checkTopK(std::vector<uint32_t>(500, 9), 33, false, small(), "all equal");
}

TEST_CASE("topK: floats in the radix order, -0 before +0 and NaNs at the ends") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> keys = {3.5f, -0.0f, 0.0f, -inf,
                                   nan,  -2.0f, inf,  std::copysign(nan, -1.0f),
                                   0.0f, -0.0f, 7.0f, -7.0f};
  std::vector<float> values;
  std::vector<uint32_t> indices;
  // Largest: +NaN, +inf, 7, 3.5, the +0s, the -0s, -2, -7, -inf, -NaN.
  device::topK(keys, 12, values, indices, true, small());
  CHECK(indices == std::vector<uint32_t>{4, 6, 10, 0, 2, 8, 1, 9, 5, 11, 3, 7});
  CHECK(std::isnan(values[0]));
  CHECK(!std::signbit(values[0]));
  CHECK(!std::signbit(values[4]));
  CHECK(std::signbit(values[6]));
  CHECK(std::isnan(values[11]));
  CHECK(std::signbit(values[11]));
  // Smallest: -NaN, -inf, -7, -2, the -0s, the +0s, 3.5, 7, +inf, +NaN.
  device::topK(keys, 12, values, indices, false, small());
  CHECK(indices == std::vector<uint32_t>{7, 3, 11, 5, 1, 9, 2, 8, 0, 10, 6, 4});
  // A k that splits the zeros: the first by index.
  device::topK(keys, 5, values, indices, true, small());
  CHECK(indices == std::vector<uint32_t>{4, 6, 10, 0, 2});
  device::topK(keys, 7, values, indices, false, small());
  CHECK(indices == std::vector<uint32_t>{7, 3, 11, 5, 1, 9, 2});
  // Random floats of both signs with signed zeros, infinities and NaNs of both signs mixed in,
  // and any bit pattern.
  std::vector<float> mixed = randomKeys<float>(2000, 4);
  std::mt19937 rng(5);
  for (float& x : mixed) {
    x = static_cast<float>(static_cast<int32_t>(rng() % 20001) - 10000) / 8.0f;
  }
  const float specials[] = {0.0f, -0.0f, inf, -inf, nan, std::copysign(nan, -1.0f)};
  for (size_t i = 0; i < mixed.size(); i += 7) mixed[i] = specials[rng() % 6];
  checkTopK(mixed, 60, true, small(), "f32 mixed, largest");
  checkTopK(mixed, 60, false, small(), "f32 mixed, smallest");
  checkTopK(mixed, 1000, true, small(), "f32 mixed, k = n / 2");
  checkTopK(randomKeys<float>(2000, 6), 45, true, small(), "f32 any bits");
}

TEST_CASE("topK: narrow keys (u8, u16, f16, bf16) and i32") {
  const std::vector<uint8_t> bytes = randomKeys<uint8_t>(1000, 7);
  checkTopK(bytes, 1, true, small(), "u8 (one level)");
  checkTopK(bytes, 123, true, small(), "u8 (one level)");
  checkTopK(bytes, 500, false, small(), "u8 (one level)");
  const std::vector<uint16_t> shorts = randomKeys<uint16_t>(1500, 8);
  checkTopK(shorts, 40, true, small("4"), "u16 (two levels)");
  checkTopK(shorts, 750, false, small("4"), "u16 (two levels)");
  checkTopK(randomKeys<int32_t>(1500, 9), 90, true, small("8"), "i32");
  checkTopK(randomKeys<int32_t>(1500, 9), 90, false, small("8"), "i32");
  checkTopK(randomKeys<Half>(1500, 10), 70, true, small("4"), "f16 (any bits)");
  checkTopK(randomKeys<BFloat16>(1500, 11), 70, false, small("4"), "bf16 (any bits)");
}

TEST_CASE("topK: 64-bit keys, eight levels") {
  const std::vector<uint64_t> wide = randomKeys<uint64_t>(1500, 12);
  checkTopK(wide, 100, true, small("1"), "u64 random");
  checkTopK(wide, 20, false, small("1"), "u64 random");
  // Three values: every level down to the last digit.
  checkTopK(randomKeys<uint64_t>(800, 13, 3), 300, true, small(), "u64 % 3");
  checkTopK(randomKeys<double>(1500, 14), 50, false, small("1"), "f64 any bits");
  // Four doubles (the zeros of both signs among them): eight levels.
  const double few[] = {-1.5, 0.0, -0.0, 2.25};
  std::vector<double> doubles(800);
  std::mt19937 rng(15);
  for (double& d : doubles) d = few[rng() % 4];
  checkTopK(doubles, 400, true, small(), "f64 four values");
  checkTopK(doubles, 201, false, small(), "f64 four values");
}

TEST_CASE("topK: k = 0, n = 1, n = 0 and the table's policy") {
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(100, 16);
  std::vector<uint32_t> values(4, 1), indices(4, 1);
  device::topK(keys, 0, values, indices, true, small());
  CHECK(values.empty());
  CHECK(indices.empty());
  const std::vector<float> none;
  std::vector<float> noValues(2);
  device::topK(none, 0, noValues, indices);
  CHECK(noValues.empty());
  CHECK(indices.empty());
  const std::vector<float> one = {-3.0f};
  checkTopK(one, 1, true, small(), "n = 1");
  checkTopK(one, 1, false, {}, "n = 1, the table's policy");
  checkTopK(one, 0, true, small(), "n = 1, k = 0");
  // The table's policy (4096 candidates: one level, then the sort).
  std::vector<float> floats(3000);
  std::mt19937 rng(17);
  for (float& x : floats)
    x = static_cast<float>(static_cast<int32_t>(rng() % 2000001) - 1000000) / 7.0f;
  checkTopK(floats, 100, true, {}, "f32, the table's policy");
  checkTopK(randomKeys<uint32_t>(3000, 18, 5), 10, false, {}, "u32 % 5, the table's policy");
}

TEST_CASE("topK: the errors name the call and the rule") {
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(10, 19);
  std::vector<uint32_t> values, indices;
  const std::string tooMany = errorOf([&] { device::topK(keys, 11, values, indices); });
  CHECK(tooMany.find("topK") != std::string::npos);
  CHECK(tooMany.find("k 11 of 10") != std::string::npos);
  const std::vector<float> empty;
  std::vector<float> floats;
  CHECK(errorOf([&] { device::topK(empty, 1, floats, indices); }).find("topK") !=
        std::string::npos);
  device::Options unknown;
  unknown.policy = {{"radix_bits", "4"}};
  CHECK(errorOf([&] {
          device::topK(keys, 3, values, indices, true, unknown);
        }).find("no field 'radix_bits'") != std::string::npos);
  device::Options zero;
  zero.policy = {{"candidates", "0"}};
  CHECK(errorOf([&] { device::topK(keys, 3, values, indices, true, zero); }).find("'candidates'") !=
        std::string::npos);
}

// segmentedTopK (host vectors): each segment's top k by the host's referenceTopK of the segment
// alone (indices within it), K{} and 2^32 - 1 past a segment shorter than k.
namespace {

// segmentedTopK's tiles are the segmented sort's (options.policy sets its fields, not the
// top-k's): 64 threads x 2 keys (128 keys), 6-bit digits, so a few hundred keys make a segment
// of several tiles sorted by passes over global memory.
device::Options segSmall(SimOptions sim = {}) {
  device::Options o;
  o.policy = {{"threads", "64"}, {"items", "2"}, {"radix_bits", "6"}};
  o.simulation = sim;
  return o;
}

// Offsets from `first` through segments of the given lengths.
std::vector<uint32_t> segmentsFrom(uint32_t first, const std::vector<uint32_t>& lengths) {
  std::vector<uint32_t> offsets{first};
  for (uint32_t l : lengths) offsets.push_back(offsets.back() + l);
  return offsets;
}

// The mixed layout, from offset 5 (the keys run 7 past its last offset): empty segments (first,
// in the middle, last), 1, 2 and 3 keys, around 16 and around the small tile (128), and long
// ones of 600 and 3000 keys.
std::vector<uint32_t> mixedSegments() {
  return segmentsFrom(5, {0, 1, 2, 3, 15, 16, 17, 0, 127, 128, 129, 600, 3000, 50, 0});
}

// A value of bytes 0x4d: what the outputs hold before the call, so that a place the call does
// not write shows.
template <class K>
K sentinel() {
  K x;
  std::memset(&x, 0x4d, sizeof(K));
  return x;
}

// segmentedTopK against the reference, the values bit for bit (NaNs, signed zeros, the K{} of
// short segments) and the indices; the outputs hold the sentinel before (at their final size,
// so resizing does not zero them).
template <class K>
void checkSegmentedTopK(const std::vector<K>& keys, const std::vector<uint32_t>& offsets, size_t k,
                        bool largest, const device::Options& o, const std::string& what) {
  const auto [wantValues, wantIndices] = referenceSegmentedTopK(keys, offsets, k, largest);
  std::vector<K> values(wantValues.size(), sentinel<K>());
  std::vector<uint32_t> indices(wantIndices.size(), 0x4d4d4d4du);
  device::segmentedTopK(keys, offsets, k, values, indices, largest, o);
  CAPTURE(what);
  CAPTURE(k);
  CAPTURE(largest);
  REQUIRE(values.size() == (offsets.size() - 1) * k);
  REQUIRE(indices.size() == (offsets.size() - 1) * k);
  CHECK_MESSAGE(testing::sameBits(values, wantValues), "values");
  CHECK_MESSAGE(indices == wantIndices, "indices (within the segment, ties in index order)");
}

}  // namespace

TEST_CASE("segmentedTopK: random u32 keys, every segment length, k = 1, 16 and past all") {
  const std::vector<uint32_t> offsets = mixedSegments();
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(offsets.back() + 7, 21);
  // k = 1 (segments of 0, 1 and more), 16 (15 short, 16 equal, 17 longer), 128 (the tile) and
  // 3500 (longer than every segment: all short, each sorted whole and the rest filled).
  for (size_t k : {size_t{1}, size_t{16}, size_t{128}, size_t{3500}}) {
    checkSegmentedTopK(keys, offsets, k, true, segSmall(), "largest");
    checkSegmentedTopK(keys, offsets, k, false, segSmall(), "smallest");
  }
  // The whole array as one segment, and one segment of the keys' middle.
  checkSegmentedTopK(keys, {0, static_cast<uint32_t>(keys.size())}, 40, true, segSmall(),
                     "one segment of everything");
  checkSegmentedTopK(keys, {1000, 1700}, 9, false, segSmall(), "one segment from 1000");
  // Blocks from the last to the first, and three real blocks for all the segments.
  SimOptions reversed;
  reversed.reverseBlocks = true;
  checkSegmentedTopK(keys, offsets, 16, true, segSmall(reversed), "blocks reversed");
  SimOptions few;
  few.blocks = 3;
  checkSegmentedTopK(keys, offsets, 16, false, segSmall(few), "3 real blocks");
}

TEST_CASE("segmentedTopK: the segmented sort's table policy and a smaller tile for short ones") {
  // The table's tiles (512 x 8, and 512 x 2 for short segments): segments around 1024 and 4096,
  // and one of two tiles.
  const std::vector<uint32_t> big = segmentsFrom(2, {1023, 1024, 1025, 0, 4096, 7, 9000, 300});
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(big.back() + 3, 22);
  checkSegmentedTopK(keys, big, 100, true, {}, "the table's policy");
  checkSegmentedTopK(keys, big, 1024, false, {}, "the table's policy");
  device::Options twoTiles = segSmall();
  twoTiles.policy.push_back({"small_items", "1"});
  const std::vector<uint32_t> offsets = mixedSegments();
  checkSegmentedTopK(randomKeys<uint32_t>(offsets.back() + 7, 23), offsets, 20, true, twoTiles,
                     "a smaller tile for short segments");
}

TEST_CASE("segmentedTopK: heavily repeated keys, ties by index within each segment") {
  const std::vector<uint32_t> offsets = mixedSegments();
  const size_t n = offsets.back() + 7;
  // Five values: every segment of more than a few keys has ties across k's border.
  const std::vector<uint32_t> fives = randomKeys<uint32_t>(n, 24, 5);
  for (size_t k : {size_t{1}, size_t{16}, size_t{700}}) {
    checkSegmentedTopK(fives, offsets, k, true, segSmall(), "values % 5");
    checkSegmentedTopK(fives, offsets, k, false, segSmall(), "values % 5");
  }
  // All equal: each segment's first k by index, 0 .. k - 1 within it.
  const std::vector<uint32_t> same(n, 9);
  checkSegmentedTopK(same, offsets, 33, false, segSmall(), "all equal");
  std::vector<uint32_t> values, indices;
  device::segmentedTopK(same, offsets, 33, values, indices, true, segSmall());
  std::vector<uint32_t> firsts;
  for (size_t s = 0; s + 1 < offsets.size(); ++s) {
    for (uint32_t i = 0; i < 33; ++i) {
      firsts.push_back(i < offsets[s + 1] - offsets[s] ? i : 0xffffffffu);
    }
  }
  CHECK(indices == firsts);
}

TEST_CASE("segmentedTopK: floats in the radix order, -0 before +0 and NaNs at the ends") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Three keys before the segment: its indices count from its own start.
  const std::vector<float> keys = {
      1.0f, 2.0f,  3.0f, 3.5f, -0.0f, 0.0f, -inf, nan, -2.0f, inf, std::copysign(nan, -1.0f),
      0.0f, -0.0f, 7.0f, -7.0f};
  const std::vector<uint32_t> offsets = {0, 3, 15};
  std::vector<float> values;
  std::vector<uint32_t> indices;
  // Largest, k = 14 (two past the 12 keys): +NaN, +inf, 7, 3.5, the +0s, the -0s, -2, -7, -inf,
  // -NaN, then K{} (+0) and 2^32 - 1 twice.
  device::segmentedTopK(keys, offsets, 14, values, indices, true, segSmall());
  REQUIRE(values.size() == 28);
  REQUIRE(indices.size() == 28);
  CHECK(std::vector<uint32_t>(indices.begin(), indices.begin() + 14) ==
        std::vector<uint32_t>{2, 1, 0, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu,
                              0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu,
                              0xffffffffu, 0xffffffffu});
  CHECK(std::vector<uint32_t>(indices.begin() + 14, indices.end()) ==
        std::vector<uint32_t>{4, 6, 10, 0, 2, 8, 1, 9, 5, 11, 3, 7, 0xffffffffu, 0xffffffffu});
  CHECK(std::isnan(values[14]));
  CHECK(!std::signbit(values[14]));
  CHECK(!std::signbit(values[18]));
  CHECK(std::signbit(values[20]));
  CHECK(std::isnan(values[25]));
  CHECK(std::signbit(values[25]));
  const std::vector<float> zeros(2, 0.0f);
  CHECK(testing::sameBitsAt(values, 26, zeros));  // K{}: +0, bit for bit
  // Smallest, k = 7 (splits the zeros: the first by index): -NaN, -inf, -7, -2, the -0s, +0.
  device::segmentedTopK(keys, offsets, 7, values, indices, false, segSmall());
  CHECK(std::vector<uint32_t>(indices.begin() + 7, indices.end()) ==
        std::vector<uint32_t>{7, 3, 11, 5, 1, 9, 2});
  CHECK(std::vector<uint32_t>(indices.begin(), indices.begin() + 7) ==
        std::vector<uint32_t>{0, 1, 2, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu});
  checkSegmentedTopK(keys, offsets, 5, true, segSmall(), "the specials, k = 5");
  // Random halves of both signs with signed zeros, infinities and NaNs of both signs mixed in,
  // in the mixed layout; and floats of any bits.
  const std::vector<uint32_t> layout = mixedSegments();
  std::vector<float> mixed(layout.back() + 7);
  std::mt19937 rng(25);
  for (float& x : mixed) {
    x = static_cast<float>(static_cast<int32_t>(rng() % 20001) - 10000) / 8.0f;
  }
  const float specials[] = {0.0f, -0.0f, inf, -inf, nan, std::copysign(nan, -1.0f)};
  for (size_t i = 0; i < mixed.size(); i += 5) mixed[i] = specials[rng() % 6];
  checkSegmentedTopK(mixed, layout, 16, true, segSmall(), "f32 mixed");
  checkSegmentedTopK(mixed, layout, 16, false, segSmall(), "f32 mixed");
  checkSegmentedTopK(mixed, layout, 200, true, segSmall(), "f32 mixed, k past most segments");
  checkSegmentedTopK(randomKeys<float>(layout.back() + 7, 26), layout, 3, false, segSmall(),
                     "f32 any bits");
}

TEST_CASE("segmentedTopK: 64-bit keys in short segments") {
  const std::vector<uint32_t> offsets = segmentsFrom(1, {0, 5, 40, 127, 3, 90});
  const size_t n = offsets.back() + 2;
  checkSegmentedTopK(randomKeys<uint64_t>(n, 27), offsets, 8, true, segSmall(), "u64");
  checkSegmentedTopK(randomKeys<double>(n, 28), offsets, 8, false, segSmall(), "f64 any bits");
}

TEST_CASE("segmentedTopK: k = 0, no segments, no keys") {
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(100, 29);
  // k = 0: nothing, whatever the segments.
  std::vector<uint32_t> values(4, 1), indices(4, 1);
  device::segmentedTopK(keys, std::vector<uint32_t>{0, 50, 100}, 0, values, indices, true,
                        segSmall());
  CHECK(values.empty());
  CHECK(indices.empty());
  // No segments (offsets {0}, or {60}): nothing.
  values.assign(4, 1);
  indices.assign(4, 1);
  device::segmentedTopK(keys, std::vector<uint32_t>{0}, 5, values, indices, false, segSmall());
  CHECK(values.empty());
  CHECK(indices.empty());
  values.assign(4, 1);
  indices.assign(4, 1);
  device::segmentedTopK(keys, std::vector<uint32_t>{60}, 5, values, indices, true);
  CHECK(values.empty());
  CHECK(indices.empty());
  // No keys: three empty segments fill all their places.
  const std::vector<float> none;
  std::vector<float> floats(6, -1.0f);
  device::segmentedTopK(none, std::vector<uint32_t>{0, 0, 0, 0}, 2, floats, indices, true,
                        segSmall());
  CHECK(testing::sameBits(floats, std::vector<float>(6, 0.0f)));
  CHECK(indices == std::vector<uint32_t>(6, 0xffffffffu));
  device::segmentedTopK(none, std::vector<uint32_t>{0}, 2, floats, indices);
  CHECK(floats.empty());
  CHECK(indices.empty());
  // Outputs of any size before are resized to segments x k.
  std::vector<uint32_t> shorter(1, 5), longer(500, 5);
  device::segmentedTopK(keys, std::vector<uint32_t>{0, 50, 100}, 7, shorter, longer, true,
                        segSmall());
  CHECK(shorter.size() == 14);
  CHECK(longer.size() == 14);
  const auto [wantValues, wantIndices] =
      referenceSegmentedTopK(keys, std::vector<uint32_t>{0, 50, 100}, 7, true);
  CHECK(shorter == wantValues);
  CHECK(longer == wantIndices);
}

TEST_CASE("segmentedTopK: the errors name the call and the rule") {
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(10, 30);
  std::vector<uint32_t> values(2, 77), indices(2, 77);
  const auto topKWith = [&](std::vector<uint32_t> offsets, size_t k = 3) {
    return errorOf([&] { device::segmentedTopK(keys, offsets, k, values, indices); });
  };
  // segments x k at 2^32 or more, refused before anything is read or resized (the offsets here
  // are bad too: that check comes later).
  const std::string big = topKWith({0, 4, 8, 10}, size_t{1} << 31);
  CHECK(big.find("segmentedTopK") != std::string::npos);
  CHECK(big.find("segments x k must be below 2^32; got 3 x 2147483648") != std::string::npos);
  CHECK(topKWith({0, 4, 11, 10}, size_t{1} << 31).find("segments x k must be below 2^32") !=
        std::string::npos);
  CHECK(values == std::vector<uint32_t>(2, 77));
  CHECK(indices == std::vector<uint32_t>(2, 77));
  // 2^32 - 1 places are allowed by that rule (then refused here as offsets past the keys, before
  // any output is sized).
  CHECK(topKWith({0, 11}, 0xffffffffull).find("past the 10 keys") != std::string::npos);
  // The offsets: decreasing, past the keys, none.
  const std::string decreasing = topKWith({0, 5, 4, 10});
  CHECK(decreasing.find("segmentedTopK") != std::string::npos);
  CHECK(decreasing.find("the offsets must not decrease; offsets[2] = 4 < offsets[1] = 5") !=
        std::string::npos);
  const std::string past = topKWith({0, 5, 11});
  CHECK(past.find("segmentedTopK") != std::string::npos);
  CHECK(past.find("offsets[2] = 11 is past the 10 keys") != std::string::npos);
  CHECK(topKWith({11}).find("past the 10 keys") != std::string::npos);
  const std::string none = topKWith({});
  CHECK(none.find("segmentedTopK") != std::string::npos);
  CHECK(none.find("the offsets hold segments + 1 entries") != std::string::npos);
  CHECK(none.find("got none") != std::string::npos);
  // options.policy names the segmented sort's fields, not the top-k's.
  CHECK(errorOf([&] {
          device::segmentedTopK(keys, std::vector<uint32_t>{0, 10}, 3, values, indices, true,
                                small());
        }).find("no field 'candidates'") != std::string::npos);
  device::Options narrow;
  narrow.policy = {{"threads", "128"}};  // 8-bit digits need 256 threads
  CHECK(
      errorOf([&] {
        device::segmentedTopK(keys, std::vector<uint32_t>{0, 10}, 3, values, indices, true, narrow);
      }).find("8-bit digits are 256") != std::string::npos);
  // The right call works after the refusals.
  device::segmentedTopK(keys, std::vector<uint32_t>{0, 10}, 3, values, indices, true, segSmall());
  CHECK(indices == referenceTopK(keys, 3, true));
}
