// Kernels that several test files exercise from different sides (generated code, simulation).
#pragma once

#include <algorithm>
#include <obsidian/obsidian.hpp>
#include <vector>

namespace obsidian::testing {

// A 16-bin histogram of each chunk in shared memory (atomics), added into the global `bins`
// (atomics again); the input is also copied to the output.
inline Kernel histogramKernel(const std::string& name, uint32_t threads, uint32_t chunk) {
  return capture(name, threads, [chunk](DPull<EWord32> in, DMutable<uint32_t> bins) {
    return pConcat(fmap(
        [bins, chunk](const SPull<EWord32>& c) {
          return exec<Block>([c, bins, chunk](const Program<Block>& p) {
            const SMutable<uint32_t> local = newShared<uint32_t>(p, 16);
            p.forAll(16u,
                     [&](const Program<Thread>& t, const EWord32& i) { write(t, local, i, 0u); });
            p.sync();
            p.forAll(chunk, [&](const Program<Thread>& t, const EWord32& i) {
              atomicAdd(t, local, c[i] % 16u, 1u);
            });
            p.sync();
            p.forAll(16u, [&](const Program<Thread>& t, const EWord32& i) {
              atomicAdd(t, bins, i, local[i]);
            });
            return push<Block>(c);
          });
        },
        splitUp(chunk, in)));
  });
}

// Each element x of the input adds 1 to bins[x % 16] of the global `bins` (a data-dependent
// index: with fewer than 16 bins, x % 16 can be out of bounds), one block per 64 elements; the
// input is also copied to the output.
inline Kernel scatterKernel(const std::string& name) {
  return capture(name, 64, [](DPull<EWord32> in, DMutable<uint32_t> bins) {
    return pConcat(fmap(
        [bins](const SPull<EWord32>& c) {
          return exec<Block>([bins, c](const Program<Block>& p) {
            p.forAll(64u, [&](const Program<Thread>& t, const EWord32& i) {
              atomicAdd(t, bins, c[i] % 16u, 1u);
            });
            return push<Block>(c);
          });
        },
        splitUp(64, in)));
  });
}

// Expressions that C precedence would regroup if printed bare beside an operator the generated
// code writes itself: out[i] counts the iterations of two loops whose bounds are
// `x % 2 == 0 ? 5 : 9` and `x & 7` (printed bare after `s < `, the first loop would never end),
// and bins[x & 15] += 1 (a checked launch's guard compares the index with the length).
inline Kernel precedenceKernel(const std::string& name) {
  return capture(name, 64, [](DPull<EWord32> in, DMutable<uint32_t> bins) {
    return pConcat(fmap(
        [bins](const SPull<EWord32>& c) {
          return exec<Block>([bins, c](const Program<Block>& p) {
            const SMutable<uint32_t> counts = newShared<uint32_t>(p, 64);
            p.forAll(64u, [&](const Program<Thread>& t, const EWord32& i) {
              const EWord32 x = c[i];
              const EWord32 n = t.declare(EWord32(0u));
              t.seqFor(ifThenElse(x % 2u == 0u, EWord32(5u), EWord32(9u)),
                       [&](const Program<Thread>& s, const EWord32&) { s.assign(n, n + 1u); });
              t.seqFor(x & 7u,
                       [&](const Program<Thread>& s, const EWord32&) { s.assign(n, n + 1u); });
              write(t, counts, i, n);
              atomicAdd(t, bins, x & 15u, 1u);
            });
            p.sync();
            return push<Block>(
                SPull<EWord32>(64u, [counts](const EWord32& i) { return counts[i]; }));
          });
        },
        splitUp(64, in)));
  });
}

// Sorts each block's chunk of n (a power of two) elements ascending with a bitonic network, as
// a new user writes it: one forcePull stage per compare-exchange step, element i keeping the
// min or the max of itself and its partner i ^ j. Every element expression names both inputs
// twice (in min and in max), so without subexpression sharing each stage reads them twice.
inline Kernel bitonicKernel(const std::string& name, uint32_t n,
                            const CaptureOptions& options = {}) {
  return capture(
      name, n,
      [n](DPull<EWord32> in) {
        return pConcat(fmap(
            [n](const SPull<EWord32>& c) {
              return exec<Block>([n, c](const Program<Block>& p) {
                SPull<EWord32> x = c;
                for (uint32_t k = 2; k <= n; k *= 2) {
                  for (uint32_t j = k / 2; j > 0; j /= 2) {
                    const SPull<EWord32> cur = x;
                    x = forcePull(p, SPull<EWord32>(n, [cur, j, k](const EWord32& i) {
                                    const EWord32 a = cur[i], b = cur[i ^ j];
                                    // Ascending where bit k of i is 0; the lower of a pair keeps
                                    // the min.
                                    return ifThenElse(((i & k) == 0u) == ((i & j) == 0u), min(a, b),
                                                      max(a, b));
                                  }));
                  }
                }
                return push<Block>(x);
              });
            },
            splitUp(n, in)));
      },
      options);
}

// Any length in chunks of 64 (splitUpRagged), one block each: each block stages its chunk in
// shared memory and adds each element's pair partner (j ^ 1); past the end the last chunk
// repeats the last element, and takeP drops its writes there. out[i] = in[i] +
// in[min(i ^ 1, n - 1)].
inline Kernel raggedPairs() {
  return capture("raggedPairs", 64, [](DPull<EWord32> in) {
    return takeP(len(in), pConcat(fmap(
                              [](const SPull<EWord32>& c) {
                                return exec<Block>([c](const Program<Block>& p) {
                                  const SPull<EWord32> s = forcePull(p, c);
                                  return push<Block>(SPull<EWord32>(64, [s](const EWord32& j) {
                                    return s[j] + s[j ^ 1u];
                                  }));
                                });
                              },
                              splitUpRagged(64, in))));
  });
}

inline std::vector<uint32_t> raggedPairsReference(const std::vector<uint32_t>& in) {
  std::vector<uint32_t> want(in.size());
  for (size_t i = 0; i < in.size(); ++i) want[i] = in[i] + in[std::min(i ^ 1, in.size() - 1)];
  return want;
}

// permute with an index array: out[idx[i]] = in[i] (idx a permutation of 0 .. n - 1).
inline Kernel permuteByIndex() {
  return capture("permuteByIndex", 64, [](DPull<EWord32> in, DPull<EWord32> idx) {
    return permute(len(in), push<Grid>(in), idx);
  });
}

// permuteInto with Sum: bins[in[i] % 16] += 1 for every element (a scatter-add: a histogram).
inline Kernel scatterAddCounts() {
  return capture("scatterAdd", 64, [](DPull<EWord32> in, DMutable<uint32_t> bins) {
    return effect([=](const Program<Grid>& g) {
      permuteInto(g, bins, Sum{}, push<Grid>(fmap([](const EWord32&) { return EWord32(1u); }, in)),
                  [in](const EWord32& i) { return in[i] % 16u; });
    });
  });
}

}  // namespace obsidian::testing
