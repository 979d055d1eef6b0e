// The shared-memory allocator the memory map simulates: a pure first-fit allocator over one
// linear address range, remembering the peak it ever used (the paper's greedy strategy).
#pragma once

#include <cstdint>
#include <map>

namespace obsidian {

class Allocator {
 public:
  // Every block starts at a multiple of `alignment` (a power of two).
  explicit Allocator(uint32_t alignment = 16);

  // The lowest aligned offset where `bytes` fit between blocks in use (first fit).
  uint32_t allocate(uint32_t bytes);
  // Release the block that starts at `offset` (it must be in use).
  void free(uint32_t offset);

  uint32_t peak() const { return peak_; }    // highest end offset ever in use
  uint32_t inUse() const { return inUse_; }  // bytes in use now
  const std::map<uint32_t, uint32_t>& blocks() const { return used_; }  // offset -> bytes

 private:
  uint32_t alignment_;
  std::map<uint32_t, uint32_t> used_;
  uint32_t peak_ = 0;
  uint32_t inUse_ = 0;
};

}  // namespace obsidian
