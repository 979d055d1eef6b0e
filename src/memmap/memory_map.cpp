// Pass: memory map (see memory_map.hpp).
#include "memmap/memory_map.hpp"

#include <map>

#include "ir/ir_walk.hpp"
#include "memmap/allocator.hpp"

namespace obsidian {

uint32_t sharedSlices(const ArrayDecl& a, uint32_t threadsPerBlock, uint32_t warpSlices) {
  if (a.level != Level::Warp) return 1;
  return warpSlices ? warpSlices : (threadsPerBlock + 31) / 32;
}

uint32_t sharedFootprint(const ArrayDecl& a, uint32_t threadsPerBlock, uint32_t warpSlices) {
  const uint64_t slices = sharedSlices(a, threadsPerBlock, warpSlices);
  const uint64_t bytes = uint64_t{a.length} * sizeOf(a.type) * slices;
  if (bytes > UINT32_MAX) {
    throw Error("shared array " + a.name + " of " + std::to_string(a.length) +
                " elements is larger than 4 GB");
  }
  return static_cast<uint32_t>(bytes);
}

namespace {

// A Warp program runs on the real warps its plan uses (planVirtualization), so its shared
// arrays need that many slices, not one per warp of the block. Walks the body in pre-order,
// counting parallel loops as the plan numbered them.
class WarpSlices {
 public:
  WarpSlices(const KernelIR& k, const SpreadPlans& plans, MemoryMap& map)
      : k_(k), plans_(plans), map_(map) {}

  void assign(const Body& b, uint32_t slices) {
    for (const Stmt& s : b) {
      if (const auto* a = std::get_if<Allocate>(&s.node)) {
        const ArrayDecl& d = k_.arrays[a->array];
        if (d.space == MemorySpace::Shared && d.level == Level::Warp) {
          OBSIDIAN_ASSERT(slices > 0, "warp arrays are allocated inside planned warp programs");
          map_.arrays[a->array].warpSlices = slices;
        }
      }
      uint32_t inner = slices;
      if (isParallelLoop(s)) {
        const LoopId id = nextLoop_++;
        if (const auto* d = std::get_if<DistrPar>(&s.node); d && d->level == Level::Warp) {
          OBSIDIAN_ASSERT(id < plans_.size() && plans_[id].shape != Spread::Unplanned,
                          "planVirtualization runs before the memory map");
          inner = plans_[id].used;
        }
      }
      for (const Body* child : ir::childBodies(s)) assign(*child, inner);
    }
  }

 private:
  const KernelIR& k_;
  const SpreadPlans& plans_;
  MemoryMap& map_;
  LoopId nextLoop_ = 0;
};

class Simulation {
 public:
  Simulation(const KernelIR& k, MemoryMap& map, const Liveness& live, uint32_t limit, bool reuse)
      : k_(k), map_(map), limit_(limit) {
    for (const ArrayLiveness& l : live.arrays) {
      byAlloc_[l.allocPos] = l;
      if (reuse) freesAt_[l.freePos].push_back(l.array);
    }
  }

  void run() {
    walk(k_.body);
    map_.sharedBytes = alloc_.peak();
    if (alloc_.peak() > limit_) {
      std::string live;
      for (const auto& [id, offset] : atPeak_) {
        const ArrayDecl& a = k_.arrays[id];
        if (!live.empty()) live += ", ";
        live += a.name + " (" + std::to_string(footprint(id)) + " B at offset " +
                std::to_string(offset) + ")";
      }
      throw Error("memory map (kernel " + k_.name + "): needs " + std::to_string(alloc_.peak()) +
                  " bytes of shared memory at its peak, over the limit of " +
                  std::to_string(limit_) + " bytes; arrays live at the peak: " + live);
    }
  }

 private:
  void walk(const Body& b) {
    for (const Stmt& s : b) {
      const uint32_t p = pos_++;
      if (std::holds_alternative<Allocate>(s.node)) {
        const auto it = byAlloc_.find(p);
        if (it != byAlloc_.end()) place(it->second);
      }
      for (const Body* child : ir::childBodies(s)) walk(*child);
      const auto f = freesAt_.find(p);
      if (f != freesAt_.end()) {
        for (ArrayId a : f->second) {
          alloc_.free(map_.arrays[a].offset);
          live_.erase(a);
        }
      }
    }
  }

  uint32_t footprint(ArrayId a) const {
    return sharedFootprint(k_.arrays[a], k_.threadsPerBlock, map_.arrays[a].warpSlices);
  }

  void place(const ArrayLiveness& l) {
    SharedPlace& a = map_.arrays[l.array];
    const uint32_t bytes = footprint(l.array);
    a.offset = alloc_.allocate(bytes);
    a.placed = true;
    live_[l.array] = a.offset;
    if (alloc_.peak() > peakSeen_) {
      peakSeen_ = alloc_.peak();
      atPeak_ = live_;
    }
    map_.placements.push_back(ArrayPlacement{l.array, a.offset, bytes, l.allocPos, l.freePos});
  }

  const KernelIR& k_;
  MemoryMap& map_;
  uint32_t limit_;
  Allocator alloc_;
  std::map<uint32_t, ArrayLiveness> byAlloc_;
  std::map<uint32_t, std::vector<ArrayId>> freesAt_;
  std::map<ArrayId, uint32_t> live_, atPeak_;
  uint32_t pos_ = 0;
  uint32_t peakSeen_ = 0;
};

}  // namespace

MemoryMap memoryMap(const KernelIR& k, const SpreadPlans& plans, const Liveness& live,
                    uint32_t limit, bool reuse) {
  MemoryMap map;
  map.arrays.resize(k.arrays.size());
  WarpSlices(k, plans, map).assign(k.body, 0);
  Simulation(k, map, live, limit, reuse).run();
  return map;
}

}  // namespace obsidian
