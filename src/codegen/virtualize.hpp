// Pass: virtualization. Maps the program's virtual threads, warps and blocks onto the real
// ones, in two steps that live together so that changing virtualization touches one pass:
// the plan decides, the apply step rewrites; every other pass reads their results.
#pragma once

#include "ir/pipeline_state.hpp"
#include "obsidian/ir.hpp"

namespace obsidian {

// planVirtualization(k): decides, for k.threadsPerBlock real threads and any number of real
// blocks, how each parallel loop's n instances run, and returns a SpreadPlan per loop, by
// LoopId (ir/pipeline_state.hpp; read by liveness and the memory map before virtualize
// applies it):
// - ForAll over n threads of a Block (lanes of a Warp) with T real ones (T = 32 for lanes):
//   Exact when n == T, Guard when n < T, Loop when n > T (the paper's q full passes plus a
//   remainder, without duplicating the body); used = min(n, T).
// - DistrPar of n Warp programs over the T/32 real warps: likewise.
// - DistrPar of Block programs, and ForAll over the threads of the grid: Loop over the grid
//   (real and used 0: the grid is known at launch).
// Also sets k.gridBlocks, the number of blocks that gives every virtual block a real one.
SpreadPlans planVirtualization(KernelIR& k);

// virtualize(k, plans): IR -> IR, applying the plan that planVirtualization made for k.
// - Exact: the body with the index replaced by the real thread (lane, warp) index.
// - Guard: that body under `if (index < n)`.
// - Loop: `for (i = index; i < n; i += T)`; over the grid, `for (b = blockIdx.x; b < n;
//   b += gridDim.x)` for blocks and a grid-stride loop for threads, so the kernel is correct
//   for any number of launched blocks.
// - Accesses to warp arrays get the real warp's slice added to their index.
// - A register array read at the executing lane's own element (the index is the lane loop's
//   variable) is marked ownLane: the lane's register, not a shuffle.
// Every loop and guard it makes carries `made` (what it virtualizes), so that the printer and
// the simulator read marks instead of recognising shapes.
KernelIR virtualize(KernelIR k, const SpreadPlans& plans);

// Whether k has been through virtualize: no ForAll or DistrPar is left (virtualize removes
// them all, and changes nothing in a kernel without them): what emitCuda prints.
bool virtualized(const KernelIR& k);

}  // namespace obsidian
