// The messages of the speed capabilities' user errors (wide loads, registers, grid state, the
// one-launch reductions and scans); the rules checked at launch are tested beside their
// features (tests/sim/test_fast_reduce.cpp, test_shuffles.cpp, test_scan_grid.cpp).
#include <doctest/doctest.h>

#include "../../examples/reduce/reduce.hpp"
#include "../../examples/scan/scan.hpp"
#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;

namespace {
EWord32 plusW(const EWord32& a, const EWord32& b) { return a + b; }

// A one-block kernel whose block program is `body`.
template <class F>
Kernel blockKernel(uint32_t threads, F body) {
  return capture("k", threads, [body](DPull<EWord32> in) {
    return pConcat(fmap(
        [body](const SPull<EWord32>& c) {
          return singletonPush<Block>([c, body](const Program<Block>& p) { return body(p, c); });
        },
        splitUp(64, in)));
  });
}
}  // namespace

TEST_CASE("errors: warpReduce needs a power of two of at most 32 elements") {
  CHECK(errorOf([] {
          blockKernel(32, [](const Program<Block>& p, const SPull<EWord32>& c) {
            return force(p, pConcat(fmap(
                                [](const SPull<EWord32>& w) {
                                  return singletonPush<Warp>([w](const Program<Warp>& q) {
                                    return warpReduce(q, plusW, splitAt(24, w).first);
                                  });
                                },
                                splitUp(32, c))))[0u];
          });
        }) == "warpReduce needs a power of two of at most 32 elements; got 24");
}

TEST_CASE("errors: newGlobal needs at least one element") {
  CHECK(errorOf([] {
          blockKernel(32, [](const Program<Block>& p, const SPull<EWord32>& c) {
            newGlobal<uint32_t>(p, 0);
            return c[0u];
          });
        }) == "newGlobal: a grid-state array needs at least one element; got 0");
}

TEST_CASE("errors: the one-launch reductions and scans check their shapes") {
  CHECK(errorOf([] {
          reduceKernel<uint32_t>(plusW, 0u, ReducePolicy{64, 4, 4}, 0);
        }) == "reduceAll needs at least one block; got 0");
  CHECK(errorOf([] { segmentedReduceKernel<uint32_t>(plusW, 0u, 0, SegmentedReducePolicy{64}); }) ==
        "segmentedReduce needs segments of at least one element; got 0");
  CHECK(errorOf(
            [] { segmentedReduceKernel<uint32_t>(plusW, 0u, 1000, SegmentedReducePolicy{96}); }) ==
        "blockReduce needs 32, 64, 128, 256, 512 or 1024 elements (a power-of-two number of "
        "warps); got 96");
  CHECK(errorOf([] {
          capture("k", 32, [](DPull<EWord32> in) {
            const auto ks = blockScanOf(BlockScanAlgorithm::KoggeStone, plusW);
            return scanGrid<uint32_t>(plusW, ks, in, ScanShape{0});
          });
        }) == "scanGrid needs a tile of at least one element; got 0");
  CHECK(errorOf([] {
          capture("k", 48, [](DPull<EWord32> in) {
            const auto scan = [](const Program<Block>& p, const SPull<EWord32>& arr) {
              return seqScanBlock(p, 3, plusW, arr);
            };
            return scanGrid<uint32_t>(plusW, scan, in, ScanShape{144});
          });
        }) ==
        "seqScanBlock needs threads x seq elements (threads a multiple of 32); got 144 "
        "elements for 48 threads and seq 3");
}
