// Pass: virtualize. Maps the program's virtual threads, warps and blocks onto the real ones.
#pragma once

#include "obsidian/ir.hpp"

namespace obsidian {

// virtualize(k): IR -> IR for k.threadsPerBlock real threads and any number of real blocks.
// - ForAll over n threads of a Block (or lanes of a Warp) with T real ones: the body with the
//   index replaced by the thread (lane) index when n == T, guarded by `index < n` when n < T,
//   and a loop `for (i = index; i < n; i += T)` when n > T (the paper's q full passes plus a
//   remainder, without duplicating the body).
// - DistrPar of n warp programs over T/32 real warps: likewise with the warp index.
// - DistrPar of block programs over the grid: `for (b = blockIdx.x; b < n; b += gridDim.x)`,
//   so the kernel is correct for any number of launched blocks.
// - ForAll over the threads of the grid: a grid-stride loop.
// - Accesses to warp arrays get the real warp's slice added to their index.
// Also sets k.gridBlocks, the number of blocks that gives every virtual block a real one.
KernelIR virtualize(KernelIR k);

}  // namespace obsidian
