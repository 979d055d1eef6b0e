// The parts of the merge sort (include/obsidian/block/merge_sort.hpp,
// include/obsidian/device/merge_sort.hpp) that need no template: the shape rules.
#include "obsidian/device/merge_sort.hpp"

namespace obsidian::detail {

void checkMergeSortTile(const char* what, uint32_t items, const std::vector<uint32_t>& valueItems) {
  for (const uint32_t v : valueItems) {
    if (v != items) {
      throw Error(std::string(what) + ": each thread holds " + std::to_string(items) +
                  " keys and " + std::to_string(v) + " values; they pair one to one");
    }
  }
}

void checkMergeSortPolicy(const char* what, const MergeSortPolicy& p) {
  if (p.threads == 0 || p.threads % 32 != 0 || p.threads > 1024) {
    throw Error(std::string(what) +
                " needs blocks of whole warps (a multiple of 32 threads, at most 1024); got " +
                std::to_string(p.threads) + " threads");
  }
  if (p.items == 0 || p.items > 32) {
    throw Error(std::string(what) + ": items (keys a thread sorts) must be 1..32; got " +
                std::to_string(p.items));
  }
}

}  // namespace obsidian::detail
