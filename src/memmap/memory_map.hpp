// Pass: memory map. Places every shared array in one dynamic shared-memory buffer.
#pragma once

#include <vector>

#include "ir/pipeline_state.hpp"
#include "memmap/liveness.hpp"

namespace obsidian {

// memoryMap(k, plans, live, limit): IR -> analysis. Simulates the program against the
// first-fit Allocator, allocating each shared array at its Allocate and freeing it where `live`
// says, and returns the MemoryMap (ir/pipeline_state.hpp): every shared array's offset, each
// placed array's bytes and live range, and the peak, the kernel's shared bytes. Warp arrays
// take one slice per real warp that runs their program (the `used` warps of its plan in
// `plans`; SharedPlace::warpSlices). Throws an Error naming the arrays live at the peak when
// the peak exceeds `limit` bytes. With reuse false, no array is ever freed (every array gets
// bytes of its own).
MemoryMap memoryMap(const KernelIR& k, const SpreadPlans& plans, const Liveness& live,
                    uint32_t limit, bool reuse = true);

// Slices of a shared array in the block: 1, or its warp slices for a warp array (warpSlices,
// as the memory map set them; 0: one per warp of the block).
uint32_t sharedSlices(const ArrayDecl& a, uint32_t threadsPerBlock, uint32_t warpSlices = 0);
// Bytes a shared array occupies in the block (all warp slices for a warp array).
uint32_t sharedFootprint(const ArrayDecl& a, uint32_t threadsPerBlock, uint32_t warpSlices = 0);

}  // namespace obsidian
