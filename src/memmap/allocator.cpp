// The first-fit shared-memory allocator (see allocator.hpp).
#include "memmap/allocator.hpp"

#include <algorithm>

#include "obsidian/error.hpp"

namespace obsidian {

Allocator::Allocator(uint32_t alignment) : alignment_(alignment) {
  OBSIDIAN_ASSERT(alignment > 0 && (alignment & (alignment - 1)) == 0,
                  "alignment is a power of two");
}

uint32_t Allocator::allocate(uint32_t bytes) {
  OBSIDIAN_ASSERT(bytes > 0, "allocations are not empty");
  auto align = [&](uint64_t x) { return (x + alignment_ - 1) & ~uint64_t{alignment_ - 1}; };
  uint64_t candidate = 0;
  for (const auto& [offset, size] : used_) {
    if (candidate + bytes <= offset) break;
    candidate = std::max<uint64_t>(candidate, align(uint64_t{offset} + size));
  }
  if (candidate + bytes > UINT32_MAX) {
    throw Error("shared memory: an allocation of " + std::to_string(bytes) +
                " bytes does not fit in a 32-bit address range");
  }
  const auto at = static_cast<uint32_t>(candidate);
  used_.emplace(at, bytes);
  inUse_ += bytes;
  peak_ = std::max(peak_, at + bytes);
  return at;
}

void Allocator::free(uint32_t offset) {
  const auto it = used_.find(offset);
  OBSIDIAN_ASSERT(it != used_.end(), "free of a block in use");
  inUse_ -= it->second;
  used_.erase(it);
}

}  // namespace obsidian
