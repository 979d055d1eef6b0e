// Kernels with contracts (require, ensure) and named parameters, shared by the simulator tests
// (tests/sim/test_contracts.cpp) and the GPU tests (tests/gpu/test_gpu_contracts.cpp).
#pragma once

#include <obsidian/obsidian.hpp>

namespace obsidian::testing {

// The first element of each group of g: an output of len(in) / g elements, so that its length
// and grid divide by the scalar g (a launch with g = 0 is refused, issue 40). Shared with the
// exported launchers' host checks (tests/export_host).
inline Kernel groupsKernel() {
  return capture("groups", 32,
                 [](DPull<EWord32> in, EWord32 g) {
                   return push<Grid>(DPull<EWord32>(
                       len(in) / g, [in, g](const EWord32& i) { return in[i * g]; }));
                 },
                 {.names = {"in", "g"}});
}

// z = alpha * x + y over 256-element blocks, its parameters named. Preconditions: x and y
// have one length (require) and a multiple of 256 (splitUp). Postconditions: z is not below y
// (true for alpha >= 0 and x >= 0) and z is not NaN.
inline Kernel namedSaxpy() {
  return capture("saxpy", 256,
                 [](EFloat alpha, DPull<EFloat> x, DPull<EFloat> y) {
                   require(len(x) == len(y), "x and y have the same length");
                   const auto z = pConcat(fmap(
                       [alpha](const SPull<hana::tuple<EFloat, EFloat>>& c) {
                         return push<Block>(fmap(
                             [alpha](const hana::tuple<EFloat, EFloat>& v) {
                               return alpha * hana::at_c<0>(v) + hana::at_c<1>(v);
                             },
                             c));
                       },
                       splitUp(256, zip(x, y))));
                   return ensure(
                       ensure(
                           z, [](const EFloat& v) { return v == v; }, "z is a number"),
                       [y](const DPull<EFloat>& out, const EWord32& i) { return out[i] >= y[i]; },
                       "z is not below y");
                 },
                 {.names = {"alpha", "x", "y"}, .outputNames = {"z"}});
}

// out = in, with the relational postcondition that out is sorted.
inline Kernel sortedCopy() {
  return capture("sortedCopy", 128, [](DPull<EWord32> in) {
    return ensure(
        push<Grid>(in),
        [](const DPull<EWord32>& out, const EWord32& i) {
          return i == 0u || out[i - 1u] <= out[i];  // || guards the read of out[-1]
        },
        "out is sorted");
  });
}

// pairs = (x, 2x) for every x of in, ensured below `limit` in its first component: a
// postcondition on an output of tuples, and a scalar parameter in the condition.
inline Kernel boundedPairs() {
  return capture(
      "boundedPairs", 64,
      [](DPull<EWord32> in, EWord32 limit) {
        return ensure(
            push<Grid>(fmap([](const EWord32& v) { return hana::make_tuple(v, v * 2u); }, in)),
            [limit](const hana::tuple<EWord32, EWord32>& p) { return hana::at_c<0>(p) < limit; },
            "every pair's first is below limit");
      },
      {.names = {"in", "limit"}, .outputNames = {"pairs"}});
}

}  // namespace obsidian::testing
