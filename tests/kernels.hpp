// Kernels that several test files exercise from different sides (generated code, simulation).
#pragma once

#include <obsidian/obsidian.hpp>

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

}  // namespace obsidian::testing
