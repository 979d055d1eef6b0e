// Pass: memory map. Places every shared array in one dynamic shared-memory buffer.
#pragma once

#include <vector>

#include "memmap/liveness.hpp"

namespace obsidian {

// Where the memory map put a shared array, and when it is live (positions are pre-order
// statement numbers of the program the memory map saw: the reified IR plus reuse barriers).
struct ArrayPlacement {
  ArrayId array = 0;
  uint32_t offset = 0;
  uint32_t bytes = 0;
  uint32_t liveFrom = 0;
  uint32_t liveTo = 0;
};

// memoryMap(k, live, limit): simulate the program against the first-fit Allocator, allocating
// each shared array at its Allocate and freeing it where `live` says; set every shared array's
// offset and k.sharedBytes to the peak. Warp arrays take one slice per real warp that runs
// their program (ArrayDecl::warpSlices). Throws an
// Error naming the arrays live at the peak when the peak exceeds `limit` bytes. Returns each
// array's placement and live range. With reuse false, no array is ever freed (every array
// gets bytes of its own).
std::vector<ArrayPlacement> memoryMap(KernelIR& k, const Liveness& live, uint32_t limit,
                                      bool reuse = true);

// Slices of a shared array in the block: 1, or its warp slices for a warp array.
uint32_t sharedSlices(const ArrayDecl& a, uint32_t threadsPerBlock);
// Bytes a shared array occupies in the block (all warp slices for a warp array).
uint32_t sharedFootprint(const ArrayDecl& a, uint32_t threadsPerBlock);

}  // namespace obsidian
