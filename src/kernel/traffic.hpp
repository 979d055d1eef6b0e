// What the report says about a kernel's global memory traffic (KernelReport::traffic and
// gridPasses), read off its IR.
#pragma once

#include <vector>

#include "obsidian/ir.hpp"
#include "obsidian/report.hpp"

namespace obsidian {

// The access sites of every global and grid-state array of the lowered kernel `k`, in array
// order: the elements each site reads, writes or updates once it runs (a vector load of W
// elements counts W). Reads that the share pass bound to one variable count once.
std::vector<ReportTraffic> globalTraffic(const KernelIR& k);

// The loops over the grid in the program as written (reified): DistrPar over blocks and
// ForAll over the grid's threads, reached through grid-level loops and branches only. Each is
// a pass of the whole grid over its inputs.
uint32_t gridPasses(const KernelIR& reified);

}  // namespace obsidian
