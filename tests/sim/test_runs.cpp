// Runs of equal keys on the simulator: reduceByKey, runLengthEncode and scanByKey (inclusive and
// exclusive) from one grid loop with the run pairs' look-back, for every length from empty to
// several tiles, runs across tile borders and over whole tiles, blocks in any order and fewer
// real blocks than tiles, hazard detection on (SimOptions' default), with the look-back status
// in one word behind fences and split in two; their ready calls on host vectors and their
// errors; and the block layer beneath them: blockFlagHeads, blockFlagTails and
// blockAdjacentDifference in a user's kernel.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <obsidian/obsidian.hpp>

#include "../select_support.hpp"
#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;
using testing::hostReduceByKey;
using testing::hostScanByKey;
using testing::lengthsAround;
using testing::randomValues;
using testing::randomWords;
using testing::runKeys;
using testing::sameBits;
using testing::sameBitsAt;
using testing::simMode;
using testing::untouchedFrom;

namespace {

// The language-level policies: tiles of 192 with the 64-bit status behind fences, and tiles of
// 160 (warp-striped loads) with it split in two packed words.
const ScanPolicy kFenced{64, 3};
const ScanPolicy kSplit{32, 5, BlockLoadAlgorithm::WarpStriped, 0, 0, true};

// A reduceByKey kernel of u32 keys and V values with f (language level), checked three ways
// against the host's fold `ref` for lengths around the policy's tile.
template <class V, class F, class Ref>
void checkReduceByKey(const std::string& name, const ScanPolicy& policy, F f, Ref ref,
                      uint32_t seed) {
  const size_t tile = policy.threads * policy.itemsPerThread;
  const Kernel k = capture(name, policy.threads, [=](DPull<EWord32> keys, DPull<Exp<V>> values) {
    return reduceByKey<uint32_t, V>(keys, values, f, policy);
  });
  CHECK(k.report().gridPasses == 1);
  for (size_t n : lengthsAround(tile)) {
    const std::vector<uint32_t> keys = runKeys(n, seed + static_cast<uint32_t>(n), tile);
    const std::vector<V> values = randomValues<V>(n, seed + 1 + static_cast<uint32_t>(n));
    const auto [wantKeys, wantFolds] = hostReduceByKey(keys, values, ref);
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<uint32_t> keysOut(n, 77), runs(1, 0xdeadbeef);
      std::vector<V> foldsOut(n, V{77});
      simulate(k,
               {KernelArg(keys), KernelArg(values), KernelArg(keysOut), KernelArg(foldsOut),
                KernelArg(runs)},
               simMode(mode));
      CAPTURE(name);
      CAPTURE(n);
      CAPTURE(mode);
      REQUIRE(runs[0] == wantKeys.size());
      CHECK(sameBitsAt(keysOut, 0, wantKeys));
      CHECK(sameBitsAt(foldsOut, 0, wantFolds));
      CHECK(untouchedFrom(keysOut, wantKeys.size()));
      CHECK(untouchedFrom(foldsOut, wantFolds.size()));
    }
  }
}

// A scanByKey kernel (language level) of u32 keys and V values, inclusive or exclusive,
// checked three ways for lengths around the policy's tile.
template <class V, class F, class Ref>
void checkScanByKey(const std::string& name, const ScanPolicy& policy, ScanKind kind, F f, Ref ref,
                    V identity, uint32_t seed) {
  const size_t tile = policy.threads * policy.itemsPerThread;
  const bool inclusive = kind == ScanKind::Inclusive;
  const Kernel k = capture(name + (inclusive ? "Incl" : "Excl"), policy.threads,
                           [=](DPull<EWord32> keys, DPull<Exp<V>> values) {
                             return scanByKey<uint32_t, V>(keys, values, f, kind, identity, policy);
                           });
  CHECK(k.report().gridPasses == 1);
  for (size_t n : lengthsAround(tile)) {
    const std::vector<uint32_t> keys = runKeys(n, seed + static_cast<uint32_t>(n), tile);
    const std::vector<V> values = randomValues<V>(n, seed + 1 + static_cast<uint32_t>(n));
    const std::vector<V> want = hostScanByKey(keys, values, ref, inclusive, identity);
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<V> out(n, V{77});
      simulate(k, {KernelArg(keys), KernelArg(values), KernelArg(out)}, simMode(mode));
      CHECK_MESSAGE(sameBits(out, want), name << (inclusive ? " inclusive" : " exclusive") << ", n "
                                              << n << ", mode " << mode);
    }
  }
}

// A runLengthEncode kernel of X keys (language level), checked three ways.
template <class X>
void checkRunLengthEncode(const std::string& name, const ScanPolicy& policy, uint32_t seed) {
  const size_t tile = policy.threads * policy.itemsPerThread;
  const Kernel k = capture(name, policy.threads,
                           [=](DPull<Exp<X>> in) { return runLengthEncode<X>(in, policy); });
  CHECK(k.report().gridPasses == 1);
  for (size_t n : lengthsAround(tile)) {
    const std::vector<uint32_t> words = runKeys(n, seed + static_cast<uint32_t>(n), tile);
    std::vector<X> in(n);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<X>(words[i] * 51u);
    const auto [wantKeys, wantLengths] = hostReduceByKey(
        in, std::vector<uint32_t>(n, 1u), [](uint32_t a, uint32_t b) { return a + b; });
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<X> unique(n, X{77});
      std::vector<uint32_t> lengths(n, 77), runs(1, 0xdeadbeef);
      simulate(k, {KernelArg(in), KernelArg(unique), KernelArg(lengths), KernelArg(runs)},
               simMode(mode));
      CAPTURE(name);
      CAPTURE(n);
      CAPTURE(mode);
      REQUIRE(runs[0] == wantKeys.size());
      CHECK(sameBitsAt(unique, 0, wantKeys));
      CHECK(sameBitsAt(lengths, 0, wantLengths));
      CHECK(untouchedFrom(unique, wantKeys.size()));
      CHECK(untouchedFrom(lengths, wantLengths.size()));
    }
  }
}

// The last non-zero value: associative, not commutative (shows that runs fold in order).
uint32_t lastNonZero(uint32_t a, uint32_t b) { return b != 0 ? b : a; }

}  // namespace

TEST_CASE("runs: the simulator's modes detect hazards") {
  // The look-back cases run with hazard detection on in every mode (SimOptions' default).
  for (int mode = 0; mode < 3; ++mode) CHECK(simMode(mode).detectHazards);
}

// (Each case below simulates a few dozen times at most: a run with hazard detection costs about
// a quarter of a second however short the input, for the look-back status' shadow.)
TEST_CASE("reduceByKey: u32 values summed, runs across tiles and over whole tiles") {
  checkReduceByKey<uint32_t>(
      "rbkSum", kFenced, Sum{}, [](uint32_t a, uint32_t b) { return a + b; }, 1);
}

TEST_CASE("reduceByKey: u32 values summed, the status split in two words") {
  checkReduceByKey<uint32_t>(
      "rbkSumSplit", kSplit, Sum{}, [](uint32_t a, uint32_t b) { return a + b; }, 2);
}

TEST_CASE("reduceByKey: f32 values, max") {
  checkReduceByKey<float>(
      "rbkMax", kFenced, Max{}, [](float a, float b) { return std::max(a, b); }, 3);
}

TEST_CASE("reduceByKey: f32 values, min, the status split in two words") {
  checkReduceByKey<float>(
      "rbkMinSplit", kSplit, Min{}, [](float a, float b) { return std::min(a, b); }, 4);
}

TEST_CASE("reduceByKey: i32 values with a user's operator") {
  checkReduceByKey<int32_t>(
      "rbkLambda", kSplit, [](const EInt32& a, const EInt32& b) { return a + b; },
      [](int32_t a, int32_t b) { return a + b; }, 5);
}

TEST_CASE("reduceByKey: a fold that is not commutative keeps each run's order") {
  checkReduceByKey<uint32_t>(
      "rbkLastNonZero", kFenced,
      [](const EWord32& a, const EWord32& b) { return ifThenElse(b != 0u, b, a); },
      [](uint32_t a, uint32_t b) { return lastNonZero(a, b); }, 6);
}

TEST_CASE("reduceByKey: one run over every tile, every element its own run") {
  const Kernel k = capture("rbkEdges", 64, [](DPull<EWord32> keys, DPull<EWord32> values) {
    return reduceByKey<uint32_t, uint32_t>(keys, values, Sum{}, kFenced);
  });
  const size_t n = 1000;
  const std::vector<uint32_t> values = randomValues<uint32_t>(n, 7);
  std::vector<uint32_t> distinct(n);
  for (size_t i = 0; i < n; ++i) distinct[i] = static_cast<uint32_t>(i % 3);
  for (const std::vector<uint32_t>& keys : {std::vector<uint32_t>(n, 5), distinct}) {
    const auto [wantKeys, wantFolds] =
        hostReduceByKey(keys, values, [](uint32_t a, uint32_t b) { return a + b; });
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<uint32_t> keysOut(n, 77), foldsOut(n, 77), runs(1);
      simulate(k, {keys, values, keysOut, foldsOut, runs}, simMode(mode));
      CAPTURE(mode);
      REQUIRE(runs[0] == wantKeys.size());
      CHECK(sameBitsAt(keysOut, 0, wantKeys));
      CHECK(sameBitsAt(foldsOut, 0, wantFolds));
    }
  }
}

TEST_CASE("runLengthEncode: u8 keys, the runs' first keys, lengths and count") {
  checkRunLengthEncode<uint8_t>("rleBytes", kFenced, 11);
}

TEST_CASE("runLengthEncode: u32 keys, the status split in two words") {
  checkRunLengthEncode<uint32_t>("rleWords", kSplit, 12);
}

TEST_CASE("scanByKey: inclusive u32 sums restart at every run") {
  checkScanByKey<uint32_t>(
      "sbkSum", kFenced, ScanKind::Inclusive, Sum{}, [](uint32_t a, uint32_t b) { return a + b; },
      0u, 21);
}

TEST_CASE("scanByKey: exclusive u32 sums, 0 at each run's first element") {
  checkScanByKey<uint32_t>(
      "sbkSum", kFenced, ScanKind::Exclusive, Sum{}, [](uint32_t a, uint32_t b) { return a + b; },
      0u, 22);
}

TEST_CASE("scanByKey: exclusive u32 sums from an init that is not the identity (as CUB's)") {
  checkScanByKey<uint32_t>(
      "sbkInit", kSplit, ScanKind::Exclusive, Sum{}, [](uint32_t a, uint32_t b) { return a + b; },
      100u, 25);
}

TEST_CASE("scanByKey: inclusive f32 max, the status split in two words") {
  checkScanByKey<float>(
      "sbkMax", kSplit, ScanKind::Inclusive, Max{}, [](float a, float b) { return std::max(a, b); },
      -std::numeric_limits<float>::infinity(), 23);
}

TEST_CASE("scanByKey: exclusive f32 max, -infinity at each run's first element") {
  checkScanByKey<float>(
      "sbkMax", kSplit, ScanKind::Exclusive, Max{}, [](float a, float b) { return std::max(a, b); },
      -std::numeric_limits<float>::infinity(), 24);
}

TEST_CASE("scanByKey: a scan that is not commutative keeps each run's order") {
  checkScanByKey<uint32_t>(
      "sbkLastNonZero", kSplit, ScanKind::Inclusive,
      [](const EWord32& a, const EWord32& b) { return ifThenElse(b != 0u, b, a); },
      [](uint32_t a, uint32_t b) { return lastNonZero(a, b); }, 0u, 25);
}

TEST_CASE("runs: the ready calls on host vectors, small tiles and the table's") {
  device::Options small;
  small.policy = {{"threads", "64"}, {"items", "5"}};  // tiles of 320: 3001 elements span 10
  device::Options reversed = small;
  reversed.simulation = simMode(1);
  reversed.simulation.blocks = 3;
  const size_t n = 3001;
  const std::vector<uint32_t> keys = runKeys(n, 41, 320);
  const std::vector<uint32_t> words = randomValues<uint32_t>(n, 42);
  const std::vector<float> floats = randomValues<float>(n, 43);
  const std::vector<int32_t> ints = randomValues<int32_t>(n, 44);
  const auto sum = [](auto a, auto b) { return a + b; };
  for (const device::Options* o : {&small, &reversed}) {
    std::vector<uint32_t> keysOut, runs, foldsOut;
    // reduceByKey: Sum of u32, Max of f32, a user's operator on i32.
    device::reduceByKey(keys, words, keysOut, foldsOut, runs, Sum{}, *o);
    auto [wantKeys, wantFolds] = hostReduceByKey(keys, words, sum);
    REQUIRE(runs.size() == 1);
    CHECK(keysOut.size() == n);
    CHECK(foldsOut.size() == n);
    REQUIRE(runs[0] == wantKeys.size());
    CHECK(sameBitsAt(keysOut, 0, wantKeys));
    CHECK(sameBitsAt(foldsOut, 0, wantFolds));
    std::vector<float> maxima;
    device::reduceByKey(keys, floats, keysOut, maxima, runs, Max{}, *o);
    const auto wantMax =
        hostReduceByKey(keys, floats, [](float a, float b) { return std::max(a, b); });
    REQUIRE(runs[0] == wantMax.first.size());
    CHECK(sameBitsAt(keysOut, 0, wantMax.first));
    CHECK(sameBitsAt(maxima, 0, wantMax.second));
    std::vector<int32_t> sums;
    device::reduceByKey(
        keys, ints, keysOut, sums, runs, [](const EInt32& a, const EInt32& b) { return a + b; },
        *o);
    const auto wantSums = hostReduceByKey(keys, ints, sum);
    REQUIRE(runs[0] == wantSums.first.size());
    CHECK(sameBitsAt(sums, 0, wantSums.second));
    // runLengthEncode of u8 keys.
    std::vector<uint8_t> bytes(n), unique;
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(keys[i] * 60u);
    std::vector<uint32_t> lengths;
    device::runLengthEncode(bytes, unique, lengths, runs, *o);
    const auto wantRle = hostReduceByKey(bytes, std::vector<uint32_t>(n, 1u), sum);
    REQUIRE(runs[0] == wantRle.first.size());
    CHECK(unique.size() == n);
    CHECK(lengths.size() == n);
    CHECK(sameBitsAt(unique, 0, wantRle.first));
    CHECK(sameBitsAt(lengths, 0, wantRle.second));
    // inclusiveScanByKey and exclusiveScanByKey.
    std::vector<uint32_t> scanned;
    device::inclusiveScanByKey(keys, words, scanned, Sum{}, *o);
    CHECK(scanned == hostScanByKey(keys, words, sum, true, 0u));
    std::vector<float> floatsScanned;
    device::exclusiveScanByKey(keys, floats, floatsScanned, Max{},
                               -std::numeric_limits<float>::infinity(), *o);
    CHECK(sameBits(floatsScanned, hostScanByKey(
                                      keys, floats, [](float a, float b) { return std::max(a, b); },
                                      false, -std::numeric_limits<float>::infinity())));
    device::exclusiveScanByKey(keys, words, scanned, Sum{}, 0u, *o);
    CHECK(scanned == hostScanByKey(keys, words, sum, false, 0u));
  }
  // The table's policy (256 x 9: 5000 elements span three tiles).
  const std::vector<uint32_t> longKeys = runKeys(5000, 45, 2304);
  const std::vector<uint32_t> longValues = randomValues<uint32_t>(5000, 46);
  std::vector<uint32_t> keysOut, foldsOut, runs;
  device::reduceByKey(longKeys, longValues, keysOut, foldsOut, runs);
  const auto [wantKeys, wantFolds] = hostReduceByKey(longKeys, longValues, sum);
  REQUIRE(runs[0] == wantKeys.size());
  CHECK(sameBitsAt(keysOut, 0, wantKeys));
  CHECK(sameBitsAt(foldsOut, 0, wantFolds));
}

TEST_CASE("runs: the errors name the call") {
  const std::vector<uint32_t> keys(10, 1), fewer(9, 1);
  std::vector<uint32_t> keysOut, foldsOut, runs, out;
  CHECK(errorOf([&] { device::reduceByKey(keys, fewer, keysOut, foldsOut, runs); }) ==
        "reduceByKey: the values are 9; the input's elements 10");
  CHECK(errorOf([&] { device::inclusiveScanByKey(keys, fewer, out); }) ==
        "inclusiveScanByKey: the values are 9; the input's elements 10");
  CHECK(errorOf([&] { device::exclusiveScanByKey(keys, fewer, out, Sum{}, 0u); }) ==
        "exclusiveScanByKey: the values are 9; the input's elements 10");
  // Threads that are not whole warps: the call's capture refuses them.
  device::Options odd;
  odd.policy = {{"threads", "48"}};
  CHECK(errorOf([&] {
          device::reduceByKey(keys, keys, keysOut, foldsOut, runs, Sum{}, odd);
        }).find("reduceByKey needs whole warps of threads") != std::string::npos);
  CHECK(errorOf([&] {
          device::runLengthEncode(keys, keysOut, foldsOut, runs, odd);
        }).find("runLengthEncode needs whole warps of threads") != std::string::npos);
  CHECK(errorOf([&] {
          device::inclusiveScanByKey(keys, keys, out, Sum{}, odd);
        }).find("scanByKey needs whole warps of threads") != std::string::npos);
  // Language level: keys and values of different lengths are refused at launch.
  const Kernel k = capture("rbkLengths", 64, [](DPull<EWord32> keys, DPull<EWord32> values) {
    return reduceByKey<uint32_t, uint32_t>(keys, values, Sum{}, kFenced);
  });
  keysOut.assign(10, 0);
  foldsOut.assign(10, 0);
  runs.assign(1, 0);
  CHECK(errorOf([&] {
          simulate(k, {keys, fewer, keysOut, foldsOut, runs});
        }).find("reduceByKey: the values are as many as the keys") != std::string::npos);
}

namespace {
// A kernel in which each block holds its tile of `in` in thread arrays (thread tid: elements
// tid * items .. tid * items + items - 1) and writes its heads, tails and differences (item
// minus the item before, as i32) where the items came from. The tile's predecessor and
// successor: mode 0, the neighbouring tiles' items (the first tile has no predecessor, the last
// no successor); mode 1, none for any tile (the stand-ins equal the tile's own edge items, which
// must not matter); mode 2, the stand-in 2 for every tile, present.
Kernel discontinuityKernel(uint32_t threads, uint32_t items, int mode) {
  const uint32_t tile = threads * items;
  return capture("discontinuity" + std::to_string(threads) + "x" + std::to_string(items) + "m" +
                     std::to_string(mode),
                 threads,
                 [=](DPull<EWord32> in, DMutable<uint32_t> heads, DMutable<uint32_t> tails,
                     DMutable<int32_t> diffs) {
                   return effect([=](const Program<Grid>& g) {
                     const EWord32 blocks = len(in) / tile;
                     g.distrPar(blocks, [&](const Program<Block>& p, const EWord32& bid) {
                       const EWord32 start = bid * tile;
                       const ThreadArray<uint32_t> mine = threadArray<uint32_t>(p, items);
                       p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                         for (uint32_t k = 0; k < items; ++k)
                           mine.write(t, k, in[start + tid * items + k]);
                       });
                       EWord32 before = EWord32(2u), after = EWord32(2u);
                       Exp<bool> hasBefore = Exp<bool>(true), hasAfter = Exp<bool>(true);
                       if (mode == 0) {
                         before = ifThenElse(bid != 0u, in[start - 1u], EWord32(0u));
                         after = ifThenElse(bid + 1u < blocks, in[start + tile], EWord32(0u));
                         hasBefore = bid != 0u;
                         hasAfter = bid + 1u < blocks;
                       } else if (mode == 1) {
                         before = in[start];
                         after = in[start + tile - 1u];
                         hasBefore = Exp<bool>(false);
                         hasAfter = Exp<bool>(false);
                       }
                       const ThreadArray<uint32_t> h = blockFlagHeads(p, mine, before, hasBefore);
                       const ThreadArray<uint32_t> tl = blockFlagTails(p, mine, after, hasAfter);
                       const ThreadArray<int32_t> d = blockAdjacentDifference<int32_t>(
                           p, mine,
                           [](const EWord32& x, const EWord32& previous) {
                             return cast<int32_t>(x) - cast<int32_t>(previous);
                           },
                           before);
                       p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                         for (uint32_t k = 0; k < items; ++k) {
                           const EWord32 i = start + tid * items + k;
                           write(t, heads, i, h[k]);
                           write(t, tails, i, tl[k]);
                           write(t, diffs, i, d[k]);
                         }
                       });
                     });
                   });
                 });
}
}  // namespace

TEST_CASE("blockFlagHeads, blockFlagTails, blockAdjacentDifference: a tile in thread arrays") {
  for (uint32_t items : {5u, 1u}) {
    const uint32_t threads = 64, tile = threads * items, blocks = 4;
    // Few distinct values: equal neighbours within threads, across threads and across tiles.
    std::vector<uint32_t> in = randomWords(tile * blocks, items, 3);
    in[tile - 1] = in[tile];              // equal across the first tile border
    in[2 * tile - 1] = in[2 * tile] + 1;  // different across the second
    for (int mode = 0; mode < 3; ++mode) {
      const Kernel k = discontinuityKernel(threads, items, mode);
      std::vector<uint32_t> heads(in.size(), 77), tails(in.size(), 77);
      std::vector<int32_t> diffs(in.size(), 77);
      simulate(k, {KernelArg(in), KernelArg(heads), KernelArg(tails), KernelArg(diffs)});
      std::vector<uint32_t> wantHeads(in.size()), wantTails(in.size());
      std::vector<int32_t> wantDiffs(in.size());
      for (size_t i = 0; i < in.size(); ++i) {
        const size_t b = i / tile, first = b * tile, last = first + tile - 1;
        // The predecessor / successor each mode gives the tile's edge items.
        const bool hasBefore = mode == 0 ? b != 0 : mode == 2;
        const bool hasAfter = mode == 0 ? b + 1 != blocks : mode == 2;
        const uint32_t before = i != first  ? in[i - 1]
                                : mode == 0 ? (b != 0 ? in[i - 1] : 0u)
                                : mode == 1 ? in[first]
                                            : 2u;
        const uint32_t after = i != last   ? in[i + 1]
                               : mode == 0 ? (b + 1 != blocks ? in[i + 1] : 0u)
                               : mode == 1 ? in[last]
                                           : 2u;
        wantHeads[i] = i == first && !hasBefore ? 1u : in[i] != before;
        wantTails[i] = i == last && !hasAfter ? 1u : in[i] != after;
        wantDiffs[i] = static_cast<int32_t>(in[i]) - static_cast<int32_t>(before);
      }
      CAPTURE(items);
      CAPTURE(mode);
      CHECK(heads == wantHeads);
      CHECK(tails == wantTails);
      CHECK(diffs == wantDiffs);
    }
  }
}
