// Pass: liveness analysis of shared arrays (IR -> analysis).
#pragma once

#include <map>
#include <set>
#include <vector>

#include "ir/pipeline_state.hpp"
#include "obsidian/ir.hpp"

namespace obsidian {

// Statement positions are pre-order numbers over the whole kernel body, starting at 0.
struct ArrayLiveness {
  ArrayId array = 0;
  uint32_t allocPos = 0;    // the Allocate
  uint32_t lastUsePos = 0;  // last statement (in the allocating list, subtree included) using it
  uint32_t freePos = 0;     // after this statement completes, the memory may be reused
};

struct Liveness {
  std::vector<ArrayLiveness> arrays;  // shared arrays, in allocation order
  // Loop bodies (and bodies of distributed warp/block programs) at whose end a barrier of
  // the given level must be added so the next iteration may reuse the memory safely.
  std::map<const Body*, Level> needsTrailingSync;
  uint32_t statements = 0;
};

// analyzeLiveness(k, plans): for every shared array, where it is allocated, last used and
// freed, given the virtualization plan of k (planVirtualization: how many virtual warps each
// real warp runs).
// An array is live from its Allocate to the last statement of the allocating list that uses
// it (a use inside a nested loop keeps it live for the whole loop, as in the paper); it is
// freed only at the next barrier of its level after that, so memory handed to another array
// is never written while a slower thread may still read the old one. Warp arrays are freed at
// the first __syncthreads() after their warp program. Where no such barrier follows inside a
// loop body, the body is listed in needsTrailingSync and the array freed at its end (a
// __syncwarp suffices where only warp slices are concerned and the body has no block-wide
// shared array).
Liveness analyzeLiveness(const KernelIR& k, const SpreadPlans& plans);

}  // namespace obsidian
