// scanGrid (decoupled look-back) on the simulator: inclusive and exclusive scans of any length
// with the paper's block scans and the thread-sequential one, blocks in any order and fewer
// real blocks than tiles, a non-commutative operator, and a kernel that waits on a block
// index instead of a ticket caught when the blocks run in another order.
#include <doctest/doctest.h>

#include <obsidian/sim.hpp>

#include "../../examples/scan/scan.hpp"
#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;
using testing::randomWords;

namespace {

EWord32 plusW(const EWord32& a, const EWord32& b) { return a + b; }
// The last non-zero value: associative, not commutative.
EWord32 lastNonZero(const EWord32& a, const EWord32& b) { return ifThenElse(b != 0u, b, a); }

template <class F>
std::vector<uint32_t> scanOf(const std::vector<uint32_t>& in, F f, bool inclusive,
                             uint32_t identity) {
  std::vector<uint32_t> out(in.size());
  uint32_t acc = identity;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!inclusive) out[i] = acc;
    acc = i == 0 && inclusive ? in[0] : f(acc, in[i]);
    if (inclusive) out[i] = acc;
  }
  return out;
}

}  // namespace

TEST_CASE("scanGrid: inclusive and exclusive, any length, blocks in any order") {
  const auto koggeStone = blockScanOf(BlockScanAlgorithm::KoggeStone, plusW);
  for (ScanKind kind : {ScanKind::Inclusive, ScanKind::Exclusive}) {
    const Kernel k = scanGridKernel<uint32_t>("scanKS", plusW, koggeStone, 64, 32, kind, 0u);
    const bool inclusive = kind == ScanKind::Inclusive;
    for (size_t n : {1u, 5u, 64u, 65u, 1000u}) {
      const std::vector<uint32_t> in = randomWords(n, static_cast<uint32_t>(n), 1000);
      const std::vector<uint32_t> want = scanOf(
          in, [](uint32_t a, uint32_t b) { return a + b; }, inclusive, 0);
      for (int mode = 0; mode < 3; ++mode) {
        SimOptions o;
        o.reverseBlocks = mode == 1;
        o.blocks = mode == 2 ? 2 : 0;  // fewer real blocks than tiles: each draws several
        std::vector<uint32_t> out(n, 0xdeadbeef);
        simulate(k, {in, out}, o);
        CHECK_MESSAGE(out == want, "n " << n << ", mode " << mode << ", inclusive " << inclusive);
      }
    }
  }
}

TEST_CASE("scanGrid: a non-commutative operator keeps the order of the tiles") {
  const auto sklansky3 = blockScanOf(BlockScanAlgorithm::Sklansky3, lastNonZero);
  const Kernel k = scanGridKernel<uint32_t>("scanLast", lastNonZero, sklansky3, 64, 32);
  CHECK(k.cuda().find("__shfl_sync") != std::string::npos);  // the look-back's window
  std::vector<uint32_t> in = randomWords(5000, 3, 4);        // many zeros; windows of 32 tiles
  const std::vector<uint32_t> want = scanOf(
      in, [](uint32_t a, uint32_t b) { return b != 0 ? b : a; }, true, 0);
  std::vector<uint32_t> out(in.size());
  SimOptions reverse;
  reverse.reverseBlocks = true;
  simulate(k, {in, out}, reverse);
  CHECK(out == want);
}

TEST_CASE("scanGrid: the thread-sequential block scan, f32 and u32") {
  const Kernel k = scanKernel<uint32_t>(plusW, ScanPolicy{64, 3});
  for (size_t n : {1u, 191u, 192u, 193u, 2000u}) {
    const std::vector<uint32_t> in = randomWords(n, 9, 1u << 20);
    std::vector<uint32_t> out(n);
    simulate(k, {in, out});
    CHECK(out == scanOf(
                     in, [](uint32_t a, uint32_t b) { return a + b; }, true, 0));
  }
  const auto plusF = [](const EFloat& a, const EFloat& b) { return a + b; };
  const Kernel kf = scanKernel<float>(plusF, ScanPolicy{32, 5}, ScanKind::Exclusive, 0.0f);
  std::vector<float> in(500), out(500);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0.5f * static_cast<float>(i % 5);
  simulate(kf, {in, out});
  float acc = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    CHECK(out[i] == acc);  // halves and small sums: exact in any order
    acc += in[i];
  }
}

TEST_CASE("scanGrid: status for a bounded number of tiles, checked at launch") {
  const auto ks = blockScanOf(BlockScanAlgorithm::KoggeStone, plusW);
  const Kernel k = capture("small", 32, [ks](DPull<EWord32> in) {
    return scanGrid<uint32_t>(plusW, ks, in, ScanShape{32, 4});
  });
  std::vector<uint32_t> in(200), out(200);
  CHECK(errorOf([&] {
          simulate(k, {in, out});
        }) ==
        "launch of kernel small: scanGrid has status for 4 tiles of 32 elements (n0 / 32u + "
        "(uint32_t)(n0 % 32u != 0u) <= 4u fails with n0 = 200)");
}

TEST_CASE("simulator: waiting on a lower block index, not a ticket, never ends in another order") {
  // Block b waits until block b - 1 has set its flag: right only if blocks run in index order.
  const Kernel k = capture("byIndex", 32, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return mkPush<Block, EWord32>(1u, [c](const Program<Block>& p, const Writer<EWord32>& w) {
            const SMutable<uint32_t> flags = newGlobal<uint32_t>(p, 8);
            p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
              const EWord32 b = c[0u];
              t.cond(b > 0u, [&](const Program<Thread>& u) {
                const EWord32 seen = u.declare(atomicOr(u, flags, b - 1u, 0u));
                u.seqWhile(seen == 0u, [&](const Program<Thread>& v) {
                  v.assign(seen, atomicOr(v, flags, b - 1u, 0u));
                });
              });
              atomicExch(t, flags, b, 1u);
              w(t, b, 0u);
            });
          });
        },
        splitUp(1, in)));
  });
  std::vector<uint32_t> in = {0, 1, 2, 3}, out(4);
  simulate(k, {in, out});
  CHECK(out == in);
  SimOptions o;
  o.reverseBlocks = true;
  o.maxStepsPerThread = 1000;
  CHECK(errorOf([&] {
          simulate(k, {in, out}, o);
        }).starts_with("simulate(kernel byIndex): gave up after"));
}

namespace {
// Scans `in` with policy's tiles on the simulator three ways (in order, blocks reversed, two
// real blocks drawing every ticket) and checks each against `want`.
template <class X, class Op>
void checkScanAll(Op f, const ScanPolicy& policy, ScanKind kind, X identity,
                  const std::vector<X>& in, const std::vector<X>& want) {
  const Kernel k = scanKernel<X>(f, policy, kind, identity);
  for (int mode = 0; mode < 3; ++mode) {
    SimOptions o;
    o.reverseBlocks = mode == 1;
    o.blocks = mode == 2 ? 2 : 0;
    std::vector<X> out(in.size());
    simulate(k, {in, out}, o);
    CHECK_MESSAGE(out == want, "n " << in.size() << ", mode " << mode);
  }
}
}  // namespace

TEST_CASE("scanGrid: values of at most 32 bits ride in one status word with their flag") {
  // Negative i32 and f32 values set the word's top bit; a max-scan's prefixes are all negative.
  std::vector<int32_t> in(3000);
  const std::vector<uint32_t> r = randomWords(in.size(), 21);
  for (size_t i = 0; i < in.size(); ++i) in[i] = -static_cast<int32_t>(r[i] % 100000) - 1;
  const auto maxOf = [](int32_t a, int32_t b) { return std::max(a, b); };
  checkScanAll<int32_t>(Max{}, ScanPolicy{32, 5}, ScanKind::Inclusive, INT32_MIN, in,
                        ::testing::hostScan<int32_t>(in, maxOf, true, INT32_MIN));
  std::vector<float> fin(3000);
  for (size_t i = 0; i < fin.size(); ++i) fin[i] = -0.25f * static_cast<float>(r[i] % 8);
  const std::vector<float> fwant = ::testing::hostScan<float>(
      fin, [](float a, float b) { return a + b; }, false, 0.0f);  // quarters: exact
  checkScanAll<float>(Sum{}, ScanPolicy{32, 5}, ScanKind::Exclusive, 0.0f, fin, fwant);
  // The packed word needs no fence: the only one left orders the epoch before the ticket.
  const std::string cuda = scanKernel<float>(Sum{}, ScanPolicy{32, 5}).cuda();
  CHECK(::testing::count(cuda, "__threadfence()") == 1);
  CHECK(cuda.find("__float_as_uint(") != std::string::npos);
  CHECK(cuda.find("__uint_as_float(") != std::string::npos);
  CHECK(cuda.find("__device__ uint64_t") != std::string::npos);
}

TEST_CASE("scanGrid: 64-bit values keep a flag word, value arrays and fences") {
  std::vector<uint64_t> in(2500);
  const std::vector<uint32_t> r = randomWords(in.size(), 22);
  for (size_t i = 0; i < in.size(); ++i) in[i] = (uint64_t{r[i]} << 31) + r[(i + 1) % r.size()];
  checkScanAll<uint64_t>(Sum{}, ScanPolicy{32, 3}, ScanKind::Inclusive, uint64_t{0}, in,
                         ::testing::hostScan<uint64_t>(
                             in, [](uint64_t a, uint64_t b) { return a + b; }, true, 0));
  std::vector<double> din(2500);
  for (size_t i = 0; i < din.size(); ++i) din[i] = 0.5 * static_cast<double>(r[i] % 1000);
  checkScanAll<double>(Sum{}, ScanPolicy{64, 3}, ScanKind::Exclusive, 0.0, din,
                       ::testing::hostScan<double>(
                           din, [](double a, double b) { return a + b; }, false, 0.0));
  const std::string cuda = scanKernel<double>(Sum{}, ScanPolicy{64, 3}).cuda();
  CHECK(::testing::count(cuda, "__threadfence()") == 5);  // epoch, 3 publishes, the look-back
  CHECK(cuda.find("__device__ uint64_t") == std::string::npos);
}

TEST_CASE("scanGrid: tiles loaded warp-striped or block-striped through shared memory") {
  const std::vector<uint32_t> in = randomWords(5003, 23);
  const std::vector<uint32_t> want = ::testing::hostScan<uint32_t>(
      in, [](uint32_t a, uint32_t b) { return a + b; }, true, 0u);
  const ScanPolicy warp{64, 5, BlockLoadAlgorithm::WarpStriped};
  const ScanPolicy block{64, 5, BlockLoadAlgorithm::Striped};
  checkScanAll<uint32_t>(Sum{}, warp, ScanKind::Inclusive, 0u, in, want);
  checkScanAll<uint32_t>(Sum{}, block, ScanKind::Inclusive, 0u, in, want);
  const std::string direct = scanKernel<uint32_t>(Sum{}, ScanPolicy{64, 5}).cuda();
  // Each thread reads its elements twice (a fold, then the scan): from the input, or from the
  // staged tile, which costs one barrier more.
  CHECK(::testing::count(direct, "__syncthreads()") == 5);
  for (const ScanPolicy& staged : {warp, block}) {
    CHECK(::testing::count(scanKernel<uint32_t>(Sum{}, staged).cuda(), "__syncthreads()") == 6);
  }
  // The warp-striped staging adds no bank conflicts (5 elements per thread: odd), and each of
  // its loads covers consecutive memory (more of the sectors it touches are ones it needs).
  SimOptions o;
  o.profile = true;
  const auto profileOf = [&](const ScanPolicy& policy) {
    std::vector<uint32_t> out(in.size());
    const SimStats s = simulate(scanKernel<uint32_t>(Sum{}, policy), {in, out}, o);
    CHECK(out == want);
    return s.profile.total;
  };
  const SimCounters d = profileOf(ScanPolicy{64, 5}), w = profileOf(warp);
  CHECK(w[Counter::SharedLoadConflicts] == d[Counter::SharedLoadConflicts]);
  CHECK(w[Counter::SharedStoreConflicts] == d[Counter::SharedStoreConflicts]);
  CHECK(w[Counter::GlobalLoadSectors] < d[Counter::GlobalLoadSectors]);
  CHECK(w.globalLoadEfficiency() > d.globalLoadEfficiency());
}

TEST_CASE("seqScanBlock: vectorized loads of scalars; tuples through the other loads") {
  const Kernel ok = capture("vec", 32, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& t) {
          return exec<Block>([t](const Program<Block>& p) {
            return push<Block>(seqScanBlock(p, 4, plusW, t, BlockLoadAlgorithm::Vectorized));
          });
        },
        splitUp(128, in)));
  });
  std::vector<uint32_t> in = randomWords(256, 24), out(256);
  simulate(ok, {in, out});
  std::vector<uint32_t> want(256);
  for (size_t b = 0; b < 2; ++b) {
    uint32_t acc = 0;
    for (size_t i = 0; i < 128; ++i) want[b * 128 + i] = acc += in[b * 128 + i];
  }
  CHECK(out == want);
  using Pair = hana::tuple<EWord32, EWord32>;
  const auto both = [](const Pair& a, const Pair& b) {
    return Pair(hana::at_c<0>(a) + hana::at_c<0>(b), hana::at_c<1>(a) + hana::at_c<1>(b));
  };
  CHECK(errorOf([&] {
          capture("vecPairs", 32, [both](DPull<EWord32> in) {
            return pConcat(fmap(
                [both](const SPull<EWord32>& t) {
                  return exec<Block>([t, both](const Program<Block>& p) {
                    const SPull<Pair> pairs = fmap([](const EWord32& x) { return Pair(x, x); }, t);
                    return push<Block>(
                        fmap([](const Pair& x) { return hana::at_c<0>(x); },
                             seqScanBlock(p, 4, both, pairs, BlockLoadAlgorithm::Vectorized)));
                  });
                },
                splitUp(128, in)));
          });
        }) == "blockLoad(vectorized) needs scalar elements (an Exp), not tuples");
  // Pairs (x, 1) scanned warp-striped: the prefix sums and the positions.
  const Kernel k = capture("pairs", 32, [both](DPull<EWord32> in) {
    return pConcat(fmap(
        [both](const SPull<EWord32>& t) {
          return exec<Block>([t, both](const Program<Block>& p) {
            const SPull<Pair> pairs = fmap([](const EWord32& x) { return Pair(x, 1u); }, t);
            return push<Block>(
                fmap([](const Pair& x) { return hana::at_c<0>(x) * hana::at_c<1>(x); },
                     seqScanBlock(p, 3, both, pairs, BlockLoadAlgorithm::WarpStriped)));
          });
        },
        splitUp(96, in)));
  });
  std::vector<uint32_t> pin = randomWords(192, 26, 1000), pout(192), pwant(192);
  for (size_t b = 0; b < 2; ++b) {
    uint32_t acc = 0;
    for (uint32_t i = 0; i < 96; ++i) pwant[b * 96 + i] = (acc += pin[b * 96 + i]) * (i + 1);
  }
  simulate(k, {pin, pout});
  CHECK(pout == pwant);
}

TEST_CASE("scanGrid: the look-back's back-off sleeps between polls and changes no result") {
  ScanPolicy policy{32, 5};
  policy.delayNs = 350;
  const std::vector<uint32_t> in = randomWords(4001, 25);
  checkScanAll<uint32_t>(Sum{}, policy, ScanKind::Inclusive, 0u, in,
                         ::testing::hostScan<uint32_t>(
                             in, [](uint32_t a, uint32_t b) { return a + b; }, true, 0u));
  const std::string cuda = scanKernel<uint32_t>(Sum{}, policy).cuda();
  CHECK(::testing::count(cuda, "__nanosleep(350u);") == 1);  // in the polling loop only
  const size_t poll = cuda.find("while (");
  CHECK(poll < cuda.find("__nanosleep("));
  CHECK(scanKernel<uint32_t>(Sum{}, ScanPolicy{32, 5}).cuda().find("__nanosleep") ==
        std::string::npos);
  CHECK(errorOf([] {
          capture("sleepy", 32, [](DPull<EWord32> in) {
            return scanAll<uint32_t>(Sum{}, in,
                                     ScanPolicy{32, 5, BlockLoadAlgorithm::Direct, 2000000});
          });
        }).ends_with("nanosleep(2000000): at most 1000000 ns (1 ms)"));
}

TEST_CASE("seqScanBlock: an operator that uses an operand twice stays linear in the elements") {
  // Each thread folds its 33 elements in a loop: as one expression, max's a > b ? a : b would
  // repeat the fold so far at every step (2^33 copies).
  const auto maxOf = [](const EWord32& a, const EWord32& b) { return ifThenElse(a > b, a, b); };
  const Kernel k = capture("maxScan", 32, [maxOf](DPull<EWord32> in) {
    return pConcat(fmap(
        [maxOf](const SPull<EWord32>& t) {
          return exec<Block>([t, maxOf](const Program<Block>& p) {
            return push<Block>(seqScanBlock(p, 33, maxOf, t));
          });
        },
        splitUp(32 * 33, in)));
  });
  CHECK(k.cuda().size() < 20000);
  const std::vector<uint32_t> in = randomWords(2 * 32 * 33, 27);
  std::vector<uint32_t> out(in.size()), want(in.size());
  for (size_t b = 0; b < 2; ++b) {
    uint32_t acc = 0;
    for (size_t i = 0; i < 32 * 33; ++i) want[b * 1056 + i] = acc = std::max(acc, in[b * 1056 + i]);
  }
  simulate(k, {in, out});
  CHECK(out == want);
}
