// The parts of the segmented sort (include/obsidian/device/segmented_sort.hpp) that need no
// template: the shape rules and the check of host offsets.
#include "obsidian/device/segmented_sort.hpp"

namespace obsidian {

namespace detail {

void checkSegmentedSortPolicy(const char* what, const SegmentedSortPolicy& p) {
  checkRadixBlock(what, p.threads, p.radixBits);
  if (p.items == 0 || p.items > 32) {
    throw Error(std::string(what) + ": items (keys a thread holds) must be 1..32; got " +
                std::to_string(p.items));
  }
}

}  // namespace detail

namespace device::detail {

void checkSegmentOffsets(const char* what, const std::vector<uint32_t>& offsets, size_t n) {
  for (size_t s = 0; s < offsets.size(); ++s) {
    if (offsets[s] > n) {
      throw Error(std::string(what) + ": offsets[" + std::to_string(s) + "] = " +
                  std::to_string(offsets[s]) + " is past the " + std::to_string(n) + " keys");
    }
    if (s > 0 && offsets[s] < offsets[s - 1]) {
      throw Error(std::string(what) + ": the offsets must not decrease; offsets[" +
                  std::to_string(s) + "] = " + std::to_string(offsets[s]) + " < offsets[" +
                  std::to_string(s - 1) + "] = " + std::to_string(offsets[s - 1]));
    }
  }
}

}  // namespace device::detail

}  // namespace obsidian
