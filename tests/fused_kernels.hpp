// Kernels with fused outputs (fuse, pConcat and tConcat of fused arrays), shared by the
// simulator tests (tests/sim/test_fused.cpp) and the GPU tests (tests/gpu/test_gpu_fused.cpp).
#pragma once

#include <obsidian/obsidian.hpp>

#include "../examples/fusion/fusion.hpp"

namespace obsidian::testing {

using fusion::axpydot;  // AXPYDOT fused and in two passes

// Per group of four consecutive elements of `in` (one group per thread, 64 threads a block),
// from one thread program fused at Thread level (tConcat, then pConcat, of fuse(fuse(a, b),
// c)): `plusOne` (each element + 1), `sums` (the group's sum) and `maxes` (its maximum), beside
// `doubled` (2 x each element), a separate output of its own grid loop.
inline Kernel groupStats() {
  return capture(
      "groupStats", 64,
      [](DPull<EWord32> in) {
        auto add = [](const EWord32& a, const EWord32& b) { return a + b; };
        auto larger = [](const EWord32& a, const EWord32& b) { return max(a, b); };
        const auto perThread = fmap(
            [=](const SPull<EWord32>& g) {
              return fuse(fuse(push<Thread>(fmap([](const EWord32& x) { return x + 1u; }, g)),
                               seqReduce(add, g)),
                          seqReduce(larger, g));
            },
            splitUp(4, in));
        const auto stats =
            pConcat(fmap([](const auto& b) { return tConcat<Block>(b); }, splitUp(64, perThread)));
        return hana::make_tuple(push<Grid>(fmap([](const EWord32& x) { return x * 2u; }, in)),
                                stats);
      },
      {.names = {"in"}, .outputNames = {"doubled", "plusOne", "sums", "maxes"}});
}

}  // namespace obsidian::testing
