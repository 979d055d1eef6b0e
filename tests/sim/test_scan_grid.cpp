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
