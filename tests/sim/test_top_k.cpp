// device::topK on the simulator: the k largest (or smallest) elements in order with their u32
// indices, checked against a host stable sort of the indices by the keys' order words (ties in
// index order), for random and heavily repeated keys of every width (one level for u8, eight
// for u64 and f64), floats with signed zeros, infinities and NaNs in the radix order, k from 0
// to n, small policies (so that a few thousand keys take several levels) and the table's; and
// the errors.
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
