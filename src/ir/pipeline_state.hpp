// The pass pipeline's state: what the passes decide about a kernel, kept beside its IR in side
// tables keyed by loop and array identity. The public KernelIR (obsidian/ir.hpp) holds the
// program only; these stay inside the library.
// - SpreadPlans: how each parallel loop runs on the real threads, lanes, warps or blocks;
//   made by planVirtualization (codegen/virtualize.hpp), read by liveness, the memory map and
//   virtualize, and dropped once virtualize has replaced the loops.
// - MemoryMap: where each shared array lies in the block's dynamic shared memory, and how much
//   of it the kernel needs; made by the memory map (memmap/memory_map.hpp), kept with the
//   lowered kernel (LoweredKernel::memory) for emitCuda, the IR dump, the simulator, the
//   report and export.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "obsidian/ir.hpp"

namespace obsidian {

// How a parallel loop's n instances are laid onto the real threads, lanes, warps or blocks.
// Decided once, by the virtualization plan, before liveness; liveness, the memory map and
// virtualize read it instead of working it out again.
enum class Spread : uint8_t {
  Unplanned,  // no plan (a default SpreadPlan)
  Exact,      // n == real: instance i runs on real one i
  Guard,      // n < real: `if (real index < n)`
  Loop,       // n > real, or known only at launch: `for (i = real index; i < n; i += real)`
};
struct SpreadPlan {
  Spread shape = Spread::Unplanned;
  uint32_t real = 0;  // real threads, lanes or warps sharing the instances (0: the grid's)
  uint32_t used = 0;  // of those, the ones that run at least one instance (0: the grid's)
};

// A parallel loop's identity from the plan to virtualize: its number among the kernel's ForAll
// and DistrPar statements in pre-order (a statement before the statements of its bodies, the
// bodies in ir::childBodies order). The passes in between add only barriers, so the numbers
// stay valid until virtualize replaces the loops; each pass that reads the plan counts the
// loops as it walks the body.
using LoopId = uint32_t;
inline bool isParallelLoop(const Stmt& s) {
  return std::holds_alternative<ForAll>(s.node) || std::holds_alternative<DistrPar>(s.node);
}

// The virtualization plan: each parallel loop's SpreadPlan, indexed by LoopId.
using SpreadPlans = std::vector<SpreadPlan>;

// Where the memory map put one shared array.
struct SharedPlace {
  bool placed = false;      // the memory map has set `offset`
  uint32_t offset = 0;      // byte offset in the block's dynamic shared memory
  uint32_t warpSlices = 0;  // an array of a Warp program: the warp slices the block holds, one
                            // per real warp that runs the program (fewer than the block's warps
                            // where fewer virtual warps run); 0 otherwise
};

// A placed shared array with its size and live range (positions are pre-order statement
// numbers of the program the memory map saw: the reified IR plus reuse barriers).
struct ArrayPlacement {
  ArrayId array = 0;
  uint32_t offset = 0;
  uint32_t bytes = 0;
  uint32_t liveFrom = 0;
  uint32_t liveTo = 0;
};

// The memory map's result. Empty (nothing placed, no shared memory) for IR the memory map has
// not seen.
struct MemoryMap {
  std::vector<SharedPlace> arrays;         // by ArrayId (arrays added later are not placed)
  std::vector<ArrayPlacement> placements;  // the placed arrays, in allocation order
  uint32_t sharedBytes = 0;                // the peak: the kernel's shared memory per block

  const SharedPlace& of(ArrayId a) const {
    static const SharedPlace none;
    return a < arrays.size() ? arrays[a] : none;
  }
};

}  // namespace obsidian
