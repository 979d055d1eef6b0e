// Output plus a count: selectIf, selectFlagged, selectUnique, partitionIf, partitionFlagged and
// partitionThreeWay write their parts and counts from one grid loop (scanAll's tiles and
// look-back) on the simulator, for every length from empty to several tiles, blocks in any
// order and fewer real blocks than tiles, with hazard detection on; their ready calls on host
// vectors and their errors; and blockScanItems, the block scan over thread arrays beneath them
// and beneath scanAll.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <obsidian/obsidian.hpp>
#include <utility>

#include "../select_support.hpp"
#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;
using testing::hostPartition;
using testing::hostUnique;
using testing::lengthsAround;
using testing::randomWords;
using testing::runKeys;
using testing::sameBitsAt;
using testing::simMode;
using testing::untouchedFrom;

namespace {

// Runs a selection kernel (in[, flags] -> selected, count) three ways and checks each against
// `want` (bit for bit); the places past the count keep what they held.
template <class X>
void checkSelection(const Kernel& k, std::vector<KernelArg> inputs, const std::vector<X>& want,
                    size_t n) {
  for (int mode = 0; mode < 3; ++mode) {
    std::vector<X> out(n, X{77});
    std::vector<uint32_t> count(1, 0xdeadbeef);
    std::vector<KernelArg> args = inputs;
    args.push_back(KernelArg(out));
    args.push_back(KernelArg(count));
    simulate(k, args, simMode(mode));
    REQUIRE_MESSAGE(count[0] == want.size(), "n " << n << ", mode " << mode);
    CHECK_MESSAGE(sameBitsAt(out, 0, want), "n " << n << ", mode " << mode);
    CHECK_MESSAGE(untouchedFrom(out, want.size()), "n " << n << ", mode " << mode);
  }
}

// Runs a partition kernel (in[, flags] -> all elements, count) three ways: every place of the
// output is written, `want` bit for bit, and the count.
template <class X>
void checkPartition(const Kernel& k, std::vector<KernelArg> inputs, const std::vector<X>& want,
                    uint32_t wantCount) {
  for (int mode = 0; mode < 3; ++mode) {
    std::vector<X> out(want.size(), X{77});
    std::vector<uint32_t> count(1, 0xdeadbeef);
    std::vector<KernelArg> args = inputs;
    args.push_back(KernelArg(out));
    args.push_back(KernelArg(count));
    simulate(k, args, simMode(mode));
    CHECK_MESSAGE(count[0] == wantCount, "n " << want.size() << ", mode " << mode);
    CHECK_MESSAGE(sameBitsAt(out, 0, want), "n " << want.size() << ", mode " << mode);
  }
}

float floatOfBits(uint32_t bits) {
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

TEST_CASE("selectIf: the selected elements in order and their count, from one grid loop") {
  const ScanPolicy policy{64, 3};  // tiles of 192
  const Kernel k = capture("selectThirds", 64, [policy](DPull<EWord32> in) {
    return selectIf<uint32_t>(
        in, [](const EWord32& v) { return v % 3u == 0u; }, policy);
  });
  CHECK(k.report().gridPasses == 1);
  for (size_t n : {0u, 1u, 2u, 191u, 192u, 193u, 1000u, 4099u}) {
    const std::vector<uint32_t> in = randomWords(n, static_cast<uint32_t>(n) + 3);
    std::vector<uint32_t> want;
    for (uint32_t v : in) {
      if (v % 3 == 0) want.push_back(v);
    }
    checkSelection<uint32_t>(k, {KernelArg(in)}, want, n);
  }
  // None and all selected.
  const std::vector<uint32_t> none(500, 1), all(500, 3);
  checkSelection<uint32_t>(k, {KernelArg(none)}, {}, 500);
  checkSelection<uint32_t>(k, {KernelArg(all)}, all, 500);
}

TEST_CASE("selectFlagged: flags of another type pick the elements; f32 values keep their bits") {
  const ScanPolicy policy{32, 5, BlockLoadAlgorithm::WarpStriped};
  const Kernel k = capture("selectByFlags", 32, [policy](DPull<EFloat> in, DPull<Exp<uint8_t>> f) {
    return selectFlagged<float>(in, f, policy);
  });
  for (size_t n : {0u, 1u, 159u, 160u, 161u, 2000u}) {
    const std::vector<uint32_t> r = randomWords(2 * n, static_cast<uint32_t>(n) + 11);
    std::vector<float> in(n);
    std::vector<uint8_t> flags(n);
    std::vector<float> want;
    for (size_t i = 0; i < n; ++i) {
      in[i] = static_cast<float>(static_cast<int32_t>(r[i])) * 1e-3f;
      flags[i] = static_cast<uint8_t>(r[n + i] % 4 == 0 ? r[n + i] >> 8 | 1 : 0);
      if (flags[i] != 0) want.push_back(in[i]);
    }
    checkSelection<float>(k, {KernelArg(in), KernelArg(flags)}, want, n);
  }
  std::vector<float> in(10, 1.0f), out(10);
  std::vector<uint8_t> flags(9, 1);
  std::vector<uint32_t> count(1);
  CHECK(errorOf([&] {
          simulate(k, {in, flags, out, count});
        }).find("selectFlagged: the flags are as many as the elements") != std::string::npos);
}

TEST_CASE("selectIf: the policy's shape rules") {
  CHECK(errorOf([] {
          capture("badItems", 64, [](DPull<EWord32> in) {
            return selectIf<uint32_t>(
                in, [](const EWord32& v) { return v != 0u; }, ScanPolicy{64, 0});
          });
        }) ==
        "selectIf needs whole warps of threads and at least one item per thread; got 64 "
        "threads and 0 items");
  CHECK(errorOf([] {
          capture("badThreads", 128, [](DPull<EWord32> in) {
            return selectIf<uint32_t>(
                in, [](const EWord32& v) { return v != 0u; }, ScanPolicy{64, 3});
          });
        }) == "selectIf: the policy's tiles are for 64 threads; the kernel's blocks have 128");
  CHECK(errorOf([] {
          capture("badScan", 128, [](DPull<EWord32> in) {
            return scanAll<uint32_t>(Sum{}, in, ScanPolicy{64, 3});
          });
        }) == "scanAll: the policy's tiles are for 64 threads; the kernel's blocks have 128");
}

TEST_CASE("blockScanItems: exclusive prefixes of thread arrays across warps, order kept") {
  // 96 threads (3 warps) x 5 items; a non-commutative operator (the last non-zero value) shows
  // that items and threads are combined in order.
  const auto lastNonZero = [](const EWord32& a, const EWord32& b) {
    return ifThenElse(b != 0u, b, a);
  };
  for (bool commutative : {true, false}) {
    const Kernel k = capture("itemsScan", 96, [=](DPull<EWord32> in) {
      return pConcat(fmap(
          [=](const SPull<EWord32>& c) {
            return exec<Block>([=](const Program<Block>& p) {
              const ThreadArray<uint32_t> items = threadArray<uint32_t>(p, 5);
              p.forAll(96u, [&](const Program<Thread>& t, const EWord32& tid) {
                for (uint32_t j = 0; j < 5; ++j) items.write(t, j, c[tid * 5u + j]);
              });
              const auto f = [=](const EWord32& a, const EWord32& b) {
                return commutative ? a + b : lastNonZero(a, b);
              };
              const ItemsPrefix<uint32_t> s = blockScanItems(p, f, items);
              // Out: per thread its exclusive prefix (thread 0: the aggregate instead).
              return mkPush<Block, EWord32>(
                  96u, [=](const Program<Block>& q, const Writer<EWord32>& w) {
                    q.forAll(96u, [&](const Program<Thread>& t, const EWord32& tid) {
                      w(t, ifThenElse(tid == 0u, s.aggregate, s.before[0]), tid);
                    });
                  });
            });
          },
          splitUp(480, in)));
    });
    std::vector<uint32_t> in = randomWords(480 * 3, 5, 1000);
    for (size_t i = 0; i < in.size(); i += 7) in[i] = 0;  // zeros for lastNonZero to skip
    std::vector<uint32_t> out(96 * 3), want(96 * 3);
    for (size_t b = 0; b < 3; ++b) {
      uint32_t acc = 0;
      for (size_t t = 0; t < 96; ++t) {
        want[b * 96 + t] = acc;
        for (size_t j = 0; j < 5; ++j) {
          const uint32_t v = in[b * 480 + t * 5 + j];
          acc = commutative ? acc + v : (v != 0 ? v : acc);
        }
      }
      want[b * 96] = acc;
    }
    simulate(k, {in, out});
    CHECK(out == want);
  }
  CHECK(errorOf([] {
          capture("itemsOdd", 48, [](DPull<EWord32> in) {
            return pConcat(fmap(
                [](const SPull<EWord32>& c) {
                  return exec<Block>([c](const Program<Block>& p) {
                    const ThreadArray<uint32_t> items = threadArray<uint32_t>(p, 1);
                    p.forAll(48u, [&](const Program<Thread>& t, const EWord32& tid) {
                      items.write(t, 0, c[tid]);
                    });
                    const auto s = blockScanItems(p, Sum{}, items);
                    return push<Block>(mkPull(1u, [s](const EWord32&) { return s.aggregate; }));
                  });
                },
                splitUp(48, in)));
          });
        }) ==
        "blockScanItems needs a block of whole warps (a multiple of 32 threads, at most "
        "1024); got 48 threads");
}

TEST_CASE("selections: the simulator's modes detect hazards") {
  // The look-back cases run with hazard detection on in every mode (SimOptions' default).
  for (int mode = 0; mode < 3; ++mode) CHECK(simMode(mode).detectHazards);
}

TEST_CASE("selectUnique: the first element of each run, runs across tiles, in one grid loop") {
  const ScanPolicy policy{64, 3};  // tiles of 192
  const Kernel k = capture("uniqueWords", 64, [policy](DPull<EWord32> in) {
    return selectUnique<uint32_t>(in, policy);
  });
  CHECK(k.report().gridPasses == 1);
  for (size_t n : lengthsAround(192)) {
    const std::vector<uint32_t> in = runKeys(n, static_cast<uint32_t>(n) + 1, 192);
    checkSelection<uint32_t>(k, {KernelArg(in)}, hostUnique(in), n);
  }
  // One run over every tile; every element a run of its own.
  const std::vector<uint32_t> same(1000, 9);
  checkSelection<uint32_t>(k, {KernelArg(same)}, {9u}, 1000);
  std::vector<uint32_t> distinct(1000);
  for (size_t i = 0; i < distinct.size(); ++i) distinct[i] = static_cast<uint32_t>(i % 7);
  checkSelection<uint32_t>(k, {KernelArg(distinct)}, distinct, 1000);
  // A run that ends at a tile's last element and one that starts at a tile's first.
  std::vector<uint32_t> edges(192 * 3, 1);
  std::fill(edges.begin() + 192, edges.begin() + 384, 2u);
  checkSelection<uint32_t>(k, {KernelArg(edges)}, {1u, 2u, 1u}, edges.size());
}

TEST_CASE("selectUnique: f32 NaNs are runs of their own, -0 and +0 one run (the first kept)") {
  const ScanPolicy policy{32, 5, BlockLoadAlgorithm::WarpStriped};  // tiles of 160
  const Kernel k = capture("uniqueFloats", 32,
                           [policy](DPull<EFloat> in) { return selectUnique<float>(in, policy); });
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float nan2 = floatOfBits(0x7fc00123u), negNan = floatOfBits(0xffc00000u);
  // A few elements.
  const std::vector<float> few = {-0.0f, 0.0f, 0.0f, -0.0f, nan, nan, 1.0f, 1.0f, negNan, 0.0f};
  const std::vector<float> fewWant = {-0.0f, nan, nan, 1.0f, negNan, 0.0f};
  CHECK(hostUnique(few).size() == fewWant.size());
  checkSelection<float>(k, {KernelArg(few)}, fewWant, few.size());
  // Several tiles of runs drawn from {1, 2, -0, +0, NaNs}; at the first tile border -0 | +0
  // (one run: -0 kept), at the second NaN | NaN (two runs), at the third 2 | 2 (one run).
  const std::vector<float> pool = {1.0f, 2.0f, -0.0f, 0.0f, nan, nan2, negNan};
  std::mt19937 rng(17);
  std::vector<float> in;
  while (in.size() < 3 * 160 + 77) {
    const float v = pool[rng() % pool.size()];
    for (uint32_t r = 1 + rng() % 4; r > 0; --r) in.push_back(v);
  }
  in[158] = 1.0f, in[159] = -0.0f, in[160] = 0.0f, in[161] = 1.0f;
  in[318] = 1.0f, in[319] = nan, in[320] = nan2, in[321] = 1.0f;
  in[478] = 1.0f, in[479] = 2.0f, in[480] = 2.0f, in[481] = 1.0f;
  const std::vector<float> want = hostUnique(in);
  checkSelection<float>(k, {KernelArg(in)}, want, in.size());
  // The border cases as the reference has them: -0 opens its run, both NaNs are kept.
  std::vector<float> out(in.size());
  std::vector<uint32_t> count(1);
  simulate(k, {KernelArg(in), KernelArg(out), KernelArg(count)});
  size_t negZeroAt = 0;
  for (size_t i = 0, r = 0; i < in.size(); ++i) {
    if (i == 0 || in[i] != in[i - 1]) ++r;
    if (i == 159) negZeroAt = r - 1;
  }
  REQUIRE(negZeroAt < count[0]);
  CHECK(out[negZeroAt] == 0.0f);
  CHECK(std::signbit(out[negZeroAt]));
  CHECK(std::isnan(out[negZeroAt + 2]));
  CHECK(std::isnan(out[negZeroAt + 3]));
}

TEST_CASE("partitionIf: the kept elements in order, then the others last first, and the count") {
  const ScanPolicy policy{64, 3};  // tiles of 192
  const Kernel k = capture("partitionThirds", 64, [policy](DPull<EWord32> in) {
    return partitionIf<uint32_t>(
        in, [](const EWord32& v) { return v % 3u == 0u; }, policy);
  });
  CHECK(k.report().gridPasses == 1);
  for (size_t n : lengthsAround(192)) {
    const std::vector<uint32_t> in = randomWords(n, static_cast<uint32_t>(n) + 5);
    const auto [want, count] = hostPartition(in, [&](size_t i) { return in[i] % 3 == 0; });
    checkPartition<uint32_t>(k, {KernelArg(in)}, want, count);
  }
  // None and all kept: the others reversed; the input as it is.
  std::vector<uint32_t> none(500);
  for (size_t i = 0; i < none.size(); ++i) none[i] = 3 * static_cast<uint32_t>(i) + 1;
  checkPartition<uint32_t>(k, {KernelArg(none)}, std::vector<uint32_t>(none.rbegin(), none.rend()),
                           0);
  std::vector<uint32_t> all(500);
  for (size_t i = 0; i < all.size(); ++i) all[i] = 3 * static_cast<uint32_t>(i);
  checkPartition<uint32_t>(k, {KernelArg(all)}, all, 500);
}

TEST_CASE("partitionFlagged: f32 elements by u32 flags, kept first, the others last first") {
  const ScanPolicy policy{32, 5, BlockLoadAlgorithm::WarpStriped};  // tiles of 160
  const Kernel k = capture("partitionByFlags", 32, [policy](DPull<EFloat> in, DPull<EWord32> f) {
    return partitionFlagged<float>(in, f, policy);
  });
  for (size_t n : lengthsAround(160)) {
    const std::vector<uint32_t> r = randomWords(2 * n, static_cast<uint32_t>(n) + 7);
    std::vector<float> in(n);
    std::vector<uint32_t> flags(n);
    for (size_t i = 0; i < n; ++i) {
      in[i] = static_cast<float>(static_cast<int32_t>(r[i])) * 1e-3f;
      flags[i] = r[n + i] % 3 == 0 ? r[n + i] | 0x100u : 0u;  // any non-zero value flags
    }
    const auto [want, count] = hostPartition(in, [&](size_t i) { return flags[i] != 0; });
    checkPartition<float>(k, {KernelArg(in), KernelArg(flags)}, want, count);
  }
  std::vector<float> in(10, 1.0f), out(10);
  std::vector<uint32_t> flags(11, 1), count(1);
  CHECK(errorOf([&] {
          simulate(k, {in, flags, out, count});
        }).find("partitionFlagged: the flags are as many as the elements") != std::string::npos);
}

TEST_CASE("partitionThreeWay: the first part, the second of the rest, the others, in order") {
  const ScanPolicy policy{64, 3};  // tiles of 192
  // Even elements first; of the odd ones the multiples of 3 (a multiple of 6 goes first).
  const Kernel k = capture("threeWays", 64, [policy](DPull<EWord32> in) {
    return partitionThreeWay<uint32_t>(
        in, [](const EWord32& v) { return v % 2u == 0u; },
        [](const EWord32& v) { return v % 3u == 0u; }, policy);
  });
  CHECK(k.report().gridPasses == 1);
  for (size_t n : lengthsAround(192)) {
    const std::vector<uint32_t> in = randomWords(n, static_cast<uint32_t>(n) + 9, 1000);
    std::vector<uint32_t> first, second, others;
    for (uint32_t v : in) (v % 2 == 0 ? first : v % 3 == 0 ? second : others).push_back(v);
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<uint32_t> a(n, 77), b(n, 77), c(n, 77), counts(2, 0xdeadbeef);
      simulate(k, {KernelArg(in), KernelArg(a), KernelArg(b), KernelArg(c), KernelArg(counts)},
               simMode(mode));
      CAPTURE(n);
      CAPTURE(mode);
      CHECK(counts[0] == first.size());
      CHECK(counts[1] == second.size());
      CHECK(sameBitsAt(a, 0, first));
      CHECK(sameBitsAt(b, 0, second));
      CHECK(sameBitsAt(c, 0, others));
      CHECK(untouchedFrom(a, first.size()));
      CHECK(untouchedFrom(b, second.size()));
      CHECK(untouchedFrom(c, others.size()));
    }
  }
}

TEST_CASE("selections: the ready calls on host vectors, small tiles and the table's") {
  device::Options small;
  small.policy = {{"threads", "64"}, {"items", "5"}};  // tiles of 320: 3001 elements span 10
  device::Options reversed = small;
  reversed.simulation = simMode(1);
  reversed.simulation.blocks = 3;
  for (const device::Options* o : {&small, &reversed}) {
    const std::vector<uint32_t> in = randomWords(3001, 31, 1000);
    const std::vector<uint8_t> flags = [&] {
      std::vector<uint8_t> f(in.size());
      for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<uint8_t>(in[i] % 5 == 0 ? 2 : 0);
      return f;
    }();
    const auto odd = [](const EWord32& v) { return v % 2u == 1u; };
    std::vector<uint32_t> out, count;
    // selectIf
    device::selectIf(in, out, count, odd, *o);
    std::vector<uint32_t> want;
    for (uint32_t v : in) {
      if (v % 2 == 1) want.push_back(v);
    }
    REQUIRE(count.size() == 1);
    CHECK(out.size() == in.size());
    CHECK(count[0] == want.size());
    CHECK(sameBitsAt(out, 0, want));
    CHECK(device::selectIf(in, odd, *o) == want);
    // selectFlagged
    device::selectFlagged(in, flags, out, count, *o);
    want.clear();
    for (size_t i = 0; i < in.size(); ++i) {
      if (flags[i] != 0) want.push_back(in[i]);
    }
    CHECK(count[0] == want.size());
    CHECK(sameBitsAt(out, 0, want));
    // selectUnique
    const std::vector<uint32_t> runs = runKeys(3001, 33, 320);
    device::selectUnique(runs, out, count, *o);
    want = hostUnique(runs);
    CHECK(count[0] == want.size());
    CHECK(sameBitsAt(out, 0, want));
    CHECK(device::selectUnique(runs, *o) == want);
    // partitionIf
    device::partitionIf(in, out, count, odd, *o);
    auto [parted, kept] = hostPartition(in, [&](size_t i) { return in[i] % 2 == 1; });
    CHECK(count[0] == kept);
    CHECK(out == parted);
    // partitionFlagged
    device::partitionFlagged(in, flags, out, count, *o);
    std::tie(parted, kept) = hostPartition(in, [&](size_t i) { return flags[i] != 0; });
    CHECK(count[0] == kept);
    CHECK(out == parted);
    // partitionThreeWay
    std::vector<uint32_t> a, b, c, counts;
    device::partitionThreeWay(
        in, a, b, c, counts, [](const EWord32& v) { return v < 300u; },
        [](const EWord32& v) { return v < 700u; }, *o);
    std::vector<uint32_t> lows, mids, highs;
    for (uint32_t v : in) (v < 300 ? lows : v < 700 ? mids : highs).push_back(v);
    REQUIRE(counts.size() == 2);
    CHECK(a.size() == in.size());
    CHECK(counts[0] == lows.size());
    CHECK(counts[1] == mids.size());
    CHECK(sameBitsAt(a, 0, lows));
    CHECK(sameBitsAt(b, 0, mids));
    CHECK(sameBitsAt(c, 0, highs));
  }
  // The table's policy (256 x 15: 5000 elements span two tiles).
  const std::vector<uint32_t> in = randomWords(5000, 35, 1000);
  std::vector<uint32_t> out, count;
  device::partitionIf(in, out, count, [](const EWord32& v) { return v % 4u == 0u; });
  const auto [parted, kept] = hostPartition(in, [&](size_t i) { return in[i] % 4 == 0; });
  CHECK(count[0] == kept);
  CHECK(out == parted);
}

TEST_CASE("selections: the ready calls' errors name the call") {
  const std::vector<uint32_t> in(10, 1);
  const std::vector<uint8_t> fewer(9, 1);
  std::vector<uint32_t> out, count;
  CHECK(errorOf([&] { device::selectFlagged(in, fewer, out, count); }) ==
        "selectFlagged: the flags are 9; the input's elements 10");
  CHECK(errorOf([&] { device::partitionFlagged(in, fewer, out, count); }) ==
        "partitionFlagged: the flags are 9; the input's elements 10");
  // Threads that are not whole warps: the call's capture refuses them.
  device::Options odd;
  odd.policy = {{"threads", "48"}};
  CHECK(errorOf([&] {
          device::selectIf(
              in, out, count, [](const EWord32& v) { return v != 0u; }, odd);
        }).find("selectIf needs whole warps of threads") != std::string::npos);
  CHECK(errorOf([&] {
          device::selectUnique(in, out, count, odd);
        }).find("selectUnique needs whole warps of threads") != std::string::npos);
  std::vector<uint32_t> a, b, c, counts;
  CHECK(errorOf([&] {
          device::partitionThreeWay(
              in, a, b, c, counts, [](const EWord32& v) { return v != 0u; },
              [](const EWord32& v) { return v != 1u; }, odd);
        }).find("partitionThreeWay needs whole warps of threads") != std::string::npos);
  // Language level: the policy's threads and the kernel's.
  CHECK(errorOf([] {
          capture("partitionOdd", 48, [](DPull<EWord32> in) {
            return partitionIf<uint32_t>(
                in, [](const EWord32& v) { return v != 0u; }, ScanPolicy{48, 3});
          });
        }) ==
        "partitionIf needs whole warps of threads and at least one item per thread; got 48 "
        "threads and 3 items");
}
