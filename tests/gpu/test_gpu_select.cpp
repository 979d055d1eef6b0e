// GPU tests of the selections and runs (label gpu): every ready call of device/select.hpp on
// device buffers, with the table's policy, at 2^20 + 123 elements (hundreds of tiles, the
// look-back among blocks that really run at once) and at 3 (one partial tile), against a host
// reference. Without a GPU the whole executable reports itself skipped (gpu_main.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <obsidian/obsidian.hpp>
#include <random>

#include "../select_support.hpp"
#include "../support.hpp"

using namespace obsidian;
using testing::hostPartition;
using testing::hostReduceByKey;
using testing::hostScanByKey;
using testing::hostUnique;
using testing::randomValues;
using testing::sameBitsAt;

namespace {

const size_t kLengths[] = {(size_t{1} << 20) + 123, 3};

// n keys in runs of 1 to 8 (now and then up to 20000, over several tiles); consecutive runs
// differ. Not testing::runKeys, whose runs are shaped around a small simulator tile: these know
// nothing of the table's tile and run long over many of them.
std::vector<uint32_t> longRunKeys(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v;
  v.reserve(n);
  uint32_t key = 0;
  while (v.size() < n) {
    size_t runLen = 1 + rng() % 8;
    if (rng() % 1024 == 0) runLen = 1 + rng() % 20000;
    key = (key + 1 + rng() % 4) % 5;
    for (size_t i = 0; i < runLen && v.size() < n; ++i) v.push_back(key);
  }
  return v;
}

}  // namespace

TEST_CASE("gpu: selectIf, selectFlagged and selectUnique on device buffers") {
  for (size_t n : kLengths) {
    CAPTURE(n);
    const std::vector<uint32_t> in = testing::randomWords(n, static_cast<uint32_t>(n), 1000);
    std::vector<uint8_t> flags(n);
    for (size_t i = 0; i < n; ++i) flags[i] = static_cast<uint8_t>(in[i] % 5 == 0 ? 3 : 0);
    gpu::DeviceBuffer<uint32_t> dIn(in), out(n), count(1);
    gpu::DeviceBuffer<uint8_t> dFlags(flags);

    device::selectIf(dIn, out, count, [](const EWord32& v) { return v % 2u == 1u; });
    std::vector<uint32_t> want;
    for (uint32_t v : in) {
      if (v % 2 == 1) want.push_back(v);
    }
    REQUIRE(count.download()[0] == want.size());
    CHECK(sameBitsAt(out.download(), 0, want));

    device::selectFlagged(dIn, dFlags, out, count);
    want.clear();
    for (size_t i = 0; i < n; ++i) {
      if (flags[i] != 0) want.push_back(in[i]);
    }
    REQUIRE(count.download()[0] == want.size());
    CHECK(sameBitsAt(out.download(), 0, want));

    const std::vector<uint32_t> keys = longRunKeys(n, 7);
    gpu::DeviceBuffer<uint32_t> dKeys(keys);
    device::selectUnique(dKeys, out, count);
    want = hostUnique(keys);
    REQUIRE(count.download()[0] == want.size());
    CHECK(sameBitsAt(out.download(), 0, want));
  }
}

TEST_CASE("gpu: partitionIf, partitionFlagged and partitionThreeWay on device buffers") {
  for (size_t n : kLengths) {
    CAPTURE(n);
    const std::vector<uint32_t> in = testing::randomWords(n, static_cast<uint32_t>(n) + 1, 1000);
    std::vector<uint32_t> flags(n);
    for (size_t i = 0; i < n; ++i) flags[i] = in[i] % 3 == 0 ? in[i] + 1 : 0;
    gpu::DeviceBuffer<uint32_t> dIn(in), dFlags(flags), out(n), count(1);

    device::partitionIf(dIn, out, count, [](const EWord32& v) { return v < 400u; });
    auto [want, kept] = hostPartition(in, [&](size_t i) { return in[i] < 400; });
    CHECK(count.download()[0] == kept);
    CHECK(out.download() == want);

    device::partitionFlagged(dIn, dFlags, out, count);
    std::tie(want, kept) = hostPartition(in, [&](size_t i) { return flags[i] != 0; });
    CHECK(count.download()[0] == kept);
    CHECK(out.download() == want);

    gpu::DeviceBuffer<uint32_t> first(n), second(n), others(n), counts(2);
    device::partitionThreeWay(
        dIn, first, second, others, counts, [](const EWord32& v) { return v % 2u == 0u; },
        [](const EWord32& v) { return v % 3u == 0u; });
    std::vector<uint32_t> a, b, c;
    for (uint32_t v : in) (v % 2 == 0 ? a : v % 3 == 0 ? b : c).push_back(v);
    const std::vector<uint32_t> got = counts.download();
    CHECK(got[0] == a.size());
    CHECK(got[1] == b.size());
    CHECK(sameBitsAt(first.download(), 0, a));
    CHECK(sameBitsAt(second.download(), 0, b));
    CHECK(sameBitsAt(others.download(), 0, c));
  }
}

TEST_CASE("gpu: reduceByKey and runLengthEncode on device buffers") {
  for (size_t n : kLengths) {
    CAPTURE(n);
    const std::vector<uint32_t> keys = longRunKeys(n, static_cast<uint32_t>(n) + 2);
    const std::vector<uint32_t> words = testing::randomWords(n, 3);
    const std::vector<float> floats = randomValues<float>(n, 3);  // f32 halves from the same words
    gpu::DeviceBuffer<uint32_t> dKeys(keys), dWords(words), keysOut(n), foldsOut(n), runs(1);
    gpu::DeviceBuffer<float> dFloats(floats), maxima(n);

    device::reduceByKey(dKeys, dWords, keysOut, foldsOut, runs, Sum{});
    const auto sums = hostReduceByKey(keys, words, [](uint32_t a, uint32_t b) { return a + b; });
    REQUIRE(runs.download()[0] == sums.first.size());
    CHECK(sameBitsAt(keysOut.download(), 0, sums.first));
    CHECK(sameBitsAt(foldsOut.download(), 0, sums.second));

    device::reduceByKey(dKeys, dFloats, keysOut, maxima, runs, Max{});
    const auto maxes =
        hostReduceByKey(keys, floats, [](float a, float b) { return std::max(a, b); });
    REQUIRE(runs.download()[0] == maxes.first.size());
    CHECK(sameBitsAt(keysOut.download(), 0, maxes.first));
    CHECK(sameBitsAt(maxima.download(), 0, maxes.second));

    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(keys[i] * 50u);
    gpu::DeviceBuffer<uint8_t> dBytes(bytes), unique(n);
    gpu::DeviceBuffer<uint32_t> lengths(n);
    device::runLengthEncode(dBytes, unique, lengths, runs);
    const auto rle = hostReduceByKey(bytes, std::vector<uint32_t>(n, 1u),
                                     [](uint32_t a, uint32_t b) { return a + b; });
    REQUIRE(runs.download()[0] == rle.first.size());
    CHECK(sameBitsAt(unique.download(), 0, rle.first));
    CHECK(sameBitsAt(lengths.download(), 0, rle.second));
  }
}

TEST_CASE("gpu: inclusiveScanByKey and exclusiveScanByKey on device buffers") {
  for (size_t n : kLengths) {
    CAPTURE(n);
    const std::vector<uint32_t> keys = longRunKeys(n, static_cast<uint32_t>(n) + 4);
    const std::vector<uint32_t> words = testing::randomWords(n, 5);
    const std::vector<float> floats = randomValues<float>(n, 5);  // f32 halves from the same words
    gpu::DeviceBuffer<uint32_t> dKeys(keys), dWords(words), out(n);
    gpu::DeviceBuffer<float> dFloats(floats), floatsOut(n);
    const auto sum = [](uint32_t a, uint32_t b) { return a + b; };

    device::inclusiveScanByKey(dKeys, dWords, out, Sum{});
    CHECK(out.download() == hostScanByKey(keys, words, sum, true, 0u));
    device::exclusiveScanByKey(dKeys, dWords, out, Sum{}, 100u);  // not the identity, as CUB's
    CHECK(out.download() == hostScanByKey(keys, words, sum, false, 100u));

    const float lowest = -std::numeric_limits<float>::infinity();
    device::exclusiveScanByKey(dKeys, dFloats, floatsOut, Max{}, lowest);
    const std::vector<float> want = hostScanByKey(
        keys, floats, [](float a, float b) { return std::max(a, b); }, false, lowest);
    CHECK(sameBitsAt(floatsOut.download(), 0, want));
  }
}

TEST_CASE("gpu: the selections' and runs' buffers must fit") {
  gpu::DeviceBuffer<uint32_t> in(std::vector<uint32_t>(10, 1)), shorter(9), out(10), count(1);
  CHECK(testing::errorOf([&] { device::selectFlagged(in, shorter, out, count); }) ==
        "selectFlagged: the flags are 9; the input's elements 10");
  CHECK(testing::errorOf([&] {
          device::selectIf(in, shorter, count, [](const EWord32& v) { return v != 0u; });
        }) == "selectIf: the output holds 9 elements; it must hold 10");
  gpu::DeviceBuffer<uint32_t> keysOut(10), runs(1);
  CHECK(testing::errorOf([&] { device::reduceByKey(in, shorter, keysOut, out, runs, Sum{}); }) ==
        "reduceByKey: the values are 9; the input's elements 10");
}
