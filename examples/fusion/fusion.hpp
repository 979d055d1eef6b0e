// Fused outputs (include/obsidian/fused.hpp) on the kernel-fusion BLAS seed's AXPYDOT, in its
// two forms. The example (fusion.cpp) and the tests (tests/sim/test_fused.cpp, tests/gpu/) run
// both.
#pragma once

#include <obsidian/obsidian.hpp>

namespace fusion {

using namespace obsidian;

// AXPYDOT (the kernel-fusion BLAS seed, 002): z = w - alpha * v, and each block's partial dot
// product of z and u, over chunks of threads x perThread elements (the host adds the
// partials). Fused: each block computes its chunk of z once, into shared memory, and writes
// both outputs from it: one grid loop, w, v and u read once. Two passes: a tuple of two
// Push<Grid> outputs, two grid loops, the second computing z from w and v again.
inline Kernel axpydot(bool fused, uint32_t threads = 256, uint32_t perThread = 4) {
  const uint32_t chunk = threads * perThread;
  // The block's partial dot product of a chunk: thread t folds elements t, t + threads, ...
  // (coalesced), then the block folds the threads' sums.
  auto partialDot = [threads, perThread](const Program<Block>& p, const SPull<EFloat>& z,
                                         const SPull<EFloat>& u) {
    const auto perThreadSums = mkPull(threads, [=](const EWord32& t) {
      EFloat acc = z[t] * u[t];
      for (uint32_t k = 1; k < perThread; ++k) acc = acc + z[t + k * threads] * u[t + k * threads];
      return acc;
    });
    return blockReduce(p, Sum{}, perThreadSums);
  };
  using Pair = hana::tuple<EFloat, EFloat>;
  auto first = [](const Pair& x) { return hana::at_c<0>(x); };
  auto second = [](const Pair& x) { return hana::at_c<1>(x); };
  const CaptureOptions names{.names = {"alpha", "w", "v", "u"}, .outputNames = {"z", "partial"}};
  auto inputs = [chunk](const EFloat& alpha, const DPull<EFloat>& w, const DPull<EFloat>& v,
                        const DPull<EFloat>& u) {
    require(len(w) == len(v) && len(v) == len(u), "w, v and u have the same length");
    const auto z =
        zipWith([alpha](const EFloat& a, const EFloat& b) { return a - alpha * b; }, w, v);
    return splitUp(chunk, zip(z, u));  // chunks of (z, u)
  };
  if (fused) {
    return capture(
        "axpydotFused", threads,
        [=](EFloat alpha, DPull<EFloat> w, DPull<EFloat> v, DPull<EFloat> u) {
          return pConcat(fmap(
              [=](const SPull<Pair>& c) {
                return exec<Block>([=](const Program<Block>& p) {
                  const auto zs = force(p, push<Block>(fmap(first, c)));
                  const auto us = fmap(second, c);
                  return fuse(push<Block>(zs), singletonPush<Block>([=](const Program<Block>& q) {
                                return partialDot(q, zs, us);
                              }));
                });
              },
              inputs(alpha, w, v, u)));
        },
        names);
  }
  return capture(
      "axpydotTwoPasses", threads,
      [=](EFloat alpha, DPull<EFloat> w, DPull<EFloat> v, DPull<EFloat> u) {
        const auto chunks = inputs(alpha, w, v, u);
        return hana::make_tuple(
            pConcat(
                fmap([=](const SPull<Pair>& c) { return push<Block>(fmap(first, c)); }, chunks)),
            pConcat(fmap(
                [=](const SPull<Pair>& c) {
                  return singletonPush<Block>([=](const Program<Block>& q) {
                    return partialDot(q, fmap(first, c), fmap(second, c));
                  });
                },
                chunks)));
      },
      names);
}

}  // namespace fusion
