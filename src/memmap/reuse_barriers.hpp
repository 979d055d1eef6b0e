// Pass: reuse barriers. Adds the barriers that liveness found missing at the end of loop
// bodies, so that a later iteration (or a later virtual block or warp) may write memory that a
// slower thread of this iteration still reads.
#pragma once

#include "memmap/liveness.hpp"

namespace obsidian {

// insertReuseBarriers(k, live): k with a Sync of the listed level appended to every body in
// live.needsTrailingSync (bodies of k itself, identified by address). Returns true when it
// changed k (liveness must then be computed again).
bool insertReuseBarriers(KernelIR& k, const Liveness& live);

}  // namespace obsidian
