// The simulator's performance counters (see sim/counters.hpp).
#include "sim/counters.hpp"

#include <algorithm>

namespace obsidian::sim {
namespace {

constexpr uint32_t kWarp = 32;
constexpr uint32_t kSector = 32;
constexpr uint32_t kBanks = 32;

// Sorts v and drops repeats; returns how many distinct values it holds.
size_t distinct(std::vector<uint64_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v.size();
}

struct Kinds {
  Counter requests, sectors, ideal;
};
Kinds globalKinds(AccessKind k) {
  switch (k) {
    case AccessKind::Load:
      return {Counter::GlobalLoadRequests, Counter::GlobalLoadSectors,
              Counter::GlobalLoadIdealSectors};
    case AccessKind::Store:
      return {Counter::GlobalStoreRequests, Counter::GlobalStoreSectors,
              Counter::GlobalStoreIdealSectors};
    case AccessKind::Atomic: break;
  }
  return {Counter::GlobalAtomicRequests, Counter::GlobalAtomicSectors,
          Counter::GlobalAtomicIdealSectors};
}
Kinds sharedKinds(AccessKind k) {
  switch (k) {
    case AccessKind::Load:
      return {Counter::SharedLoadRequests, Counter::SharedLoadWavefronts,
              Counter::SharedLoadConflicts};
    case AccessKind::Store:
      return {Counter::SharedStoreRequests, Counter::SharedStoreWavefronts,
              Counter::SharedStoreConflicts};
    case AccessKind::Atomic: break;
  }
  return {Counter::SharedAtomicRequests, Counter::SharedAtomicWavefronts,
          Counter::SharedAtomicConflicts};
}

}  // namespace

Counters::Counters(size_t statements, const std::vector<uint64_t>& globalBytes)
    : counts_(statements), touched_(globalBytes.size()) {
  for (size_t a = 0; a < globalBytes.size(); ++a) {
    touched_[a].assign((globalBytes[a] + kSector - 1) / kSector, 0);
  }
}

template <class F>
void Counters::forWarps(const Lanes& lanes, F&& f) {
  // lanes is sorted (the machine only ever filters the block's thread list), so each warp's
  // lanes are one run.
  size_t begin = 0;
  while (begin < lanes.size()) {
    const uint32_t warp = lanes[begin] / kWarp;
    size_t end = begin + 1;
    while (end < lanes.size() && lanes[end] / kWarp == warp) ++end;
    f(begin, end);
    begin = end;
  }
}

void Counters::statement(uint32_t s, const Lanes& lanes) {
  SimCounters& c = counts_[s];
  forWarps(lanes, [&](size_t, size_t) { ++c[Counter::WarpStatements]; });
  c[Counter::ActiveLanes] += lanes.size();
}

void Counters::branch(uint32_t s, const Lanes& lanes, const Lanes& taken) {
  // A warp diverges where it has lanes both in `taken` and not: walk the two sorted lists.
  size_t t = 0;
  forWarps(lanes, [&](size_t begin, size_t end) {
    const uint32_t warp = lanes[begin] / kWarp;
    while (t < taken.size() && taken[t] / kWarp < warp) ++t;
    size_t in = 0;
    while (t + in < taken.size() && taken[t + in] / kWarp == warp) ++in;
    if (in != 0 && in != end - begin) ++counts_[s][Counter::DivergentBranches];
  });
}

void Counters::barrier(uint32_t s, Level level, const Lanes& lanes) {
  kept_.clear();
  sharedLoaded_.clear();
  const Counter c = level == Level::Block ? Counter::Barriers : Counter::WarpSyncs;
  forWarps(lanes, [&](size_t, size_t) { ++counts_[s][c]; });
}

void Counters::fence(uint32_t s, const Lanes& lanes) {
  kept_.clear();
  sharedLoaded_.clear();
  forWarps(lanes, [&](size_t, size_t) { ++counts_[s][Counter::Fences]; });
}

void Counters::shuffle(uint32_t s, const Lanes& lanes) {
  forWarps(lanes, [&](size_t, size_t) { ++counts_[s][Counter::Shuffles]; });
}

void Counters::arithmetic(uint32_t s, const Lanes& lanes, bool isFloat) {
  SimCounters& c = counts_[s];
  forWarps(lanes, [&](size_t, size_t) { ++c[Counter::ArithmeticInstructions]; });
  if (isFloat) c[Counter::FloatOperations] += lanes.size();
}

void Counters::atomics(uint32_t s, const std::vector<uint64_t>& addresses, size_t begin,
                       size_t end) {
  scratch_.assign(addresses.begin() + static_cast<ptrdiff_t>(begin),
                  addresses.begin() + static_cast<ptrdiff_t>(end));
  counts_[s][Counter::AtomicLanes] += end - begin;
  counts_[s][Counter::AtomicAddresses] += distinct(scratch_);
}

void Counters::global(uint32_t s, AccessKind kind, ArrayId a, bool readOnly, uint32_t bytes,
                      const Lanes& lanes, const std::vector<uint64_t>& addresses) {
  const Kinds k = globalKinds(kind);
  SimCounters& c = counts_[s];
  // An atomic orders memory: shared words kept in registers are loaded again after it. A store
  // through a global pointer cannot write shared memory (the CUDA compiler gives a kernel's
  // pointer parameters the global address space), so shared words stay kept across it (the
  // look-back scan's tile number across the tile's stores); global values loaded before it
  // may have been overwritten.
  if (kind == AccessKind::Atomic) {  // the shared accesses before it counted first
    flush();
    kept_.clear();
    sharedLoaded_.clear();
  }
  if (kind != AccessKind::Load) {
    loaded_.clear();
  } else if (readOnly) {
    for (const Loaded& l : loaded_) {
      if (l.array == a && l.lanes == lanes && l.addresses == addresses) return;
    }
    loaded_.push_back({a, lanes, addresses});
  }
  std::vector<uint32_t>& touched = touched_[a];
  forWarps(lanes, [&](size_t begin, size_t end) {
    ++c[k.requests];
    if (kind == AccessKind::Atomic) atomics(s, addresses, begin, end);
    // Ideal: the distinct bytes asked for, packed into sectors.
    scratch_.assign(addresses.begin() + static_cast<ptrdiff_t>(begin),
                    addresses.begin() + static_cast<ptrdiff_t>(end));
    c[k.ideal] += (distinct(scratch_) * bytes + kSector - 1) / kSector;
    scratch_.clear();
    for (size_t j = begin; j < end; ++j) {
      for (uint64_t sec = addresses[j] / kSector; sec <= (addresses[j] + bytes - 1) / kSector;
           ++sec) {
        scratch_.push_back(sec);
      }
    }
    c[k.sectors] += distinct(scratch_);
    for (uint64_t sec : scratch_) {
      if (sec >= touched.size() || touched[sec] == block_ + 1) continue;
      if (touched[sec] == 0) ++c[Counter::GlobalFirstTouchSectors];
      ++c[Counter::GlobalBlockFirstTouchSectors];
      touched[sec] = block_ + 1;
    }
  });
}

void Counters::shared(uint32_t s, AccessKind kind, uint32_t bytes, uint64_t base,
                      const Lanes& lanes, const std::vector<uint64_t>& addresses) {
  if (kind == AccessKind::Atomic) {
    boundary();
    countShared(s, kind, bytes, base, lanes, addresses);
    return;
  }
  // Only accesses by the same lanes merge. A load after a store ends the run: the CUDA compiler
  // cannot move a shared store past a shared load it cannot prove apart (every shared array is
  // an offset into one buffer, indexed by unknown values), so the stores before the load and
  // those after it are not merged (Sklansky3's first level: its two stores stay 4-byte).
  if (!pending_.empty() && pending_.front().lanes != lanes) boundary();
  if (kind == AccessKind::Load) {
    // Loaded by these lanes at these addresses since the last boundary, and not written since
    // as far as the compiler can tell: the register is reused.
    for (const SharedLoaded& l : sharedLoaded_) {
      if (l.bytes == bytes && l.lanes == lanes && l.addresses == addresses) return;
    }
    sharedLoaded_.push_back({bytes, lanes, addresses});
    if (std::any_of(pending_.begin(), pending_.end(),
                    [](const Pending& p) { return p.kind == AccessKind::Store; })) {
      flush();
    }
  } else {
    // A store may write any word from its array's start up (see countShared).
    std::erase_if(sharedLoaded_, [&](const SharedLoaded& l) {
      return std::any_of(l.addresses.begin(), l.addresses.end(),
                         [&](uint64_t a) { return a + l.bytes > base; });
    });
  }
  pending_.push_back({s, kind, bytes, base, lanes, addresses});
}

void Counters::boundary() {
  flush();
  loaded_.clear();
  sharedLoaded_.clear();
}

void Counters::flush() {
  // Merge pairs whose second access starts where the first ends, every lane's first aligned
  // to the pair's size, up to 16 bytes (what ld.shared.v2 / .v4 take).
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t i = 0; i < pending_.size() && !merged; ++i) {
      Pending& p = pending_[i];
      if (p.bytes * 2 > 16) continue;
      for (size_t q = 0; q < pending_.size() && !merged; ++q) {
        const Pending& r = pending_[q];
        if (q == i || r.kind != p.kind || r.bytes != p.bytes) continue;
        bool adjacent = true;
        for (size_t j = 0; j < p.addresses.size() && adjacent; ++j) {
          adjacent =
              r.addresses[j] == p.addresses[j] + p.bytes && p.addresses[j] % (2 * p.bytes) == 0;
        }
        if (!adjacent) continue;
        p.bytes *= 2;
        pending_.erase(pending_.begin() + static_cast<ptrdiff_t>(q));
        merged = true;
      }
    }
  }
  for (const Pending& p : pending_) {
    countShared(p.statement, p.kind, p.bytes, p.base, p.lanes, p.addresses);
  }
  pending_.clear();
}

void Counters::countShared(uint32_t s, AccessKind kind, uint32_t bytes, uint64_t base,
                           const Lanes& lanes, const std::vector<uint64_t>& addresses) {
  if (kind == AccessKind::Atomic) {
    kept_.clear();  // an atomic orders memory: kept values are loaded again after it
  } else if (kind == AccessKind::Store) {
    // Every shared array is an offset into one buffer, its index unsigned: for all the CUDA
    // compiler can prove, a store may write any word from its array's start up, and none below
    // (the look-back scan's tile number, arr0[0u], stays in a register across its tile's
    // stores to the arrays above it).
    kept_.erase(kept_.lower_bound(base >= 3 ? base - 3 : 0), kept_.end());
  } else if (!addresses.empty() && bytes <= 4 &&
             std::all_of(addresses.begin(), addresses.end(),
                         [&](uint64_t a) { return a == addresses[0]; })) {
    std::bitset<1024>& kept = kept_[addresses[0]];  // words of up to 4 bytes
    bool all = true;
    for (uint32_t l : lanes) all = all && kept[l];
    if (all) return;  // in a register already: no load
    for (uint32_t l : lanes) kept.set(l);
  }
  const Kinds k = sharedKinds(kind);
  SimCounters& c = counts_[s];
  // Lanes served together: the whole warp for accesses up to 4 bytes, half-warps for 8-byte and
  // quarter-warps for 16-byte ones.
  const uint32_t group = bytes <= 4 ? kWarp : kWarp * 4 / bytes;
  const uint32_t words = std::max<uint32_t>(bytes / 4, 1);
  forWarps(lanes, [&](size_t begin, size_t end) {
    ++c[k.requests];
    if (kind == AccessKind::Atomic) atomics(s, addresses, begin, end);
    size_t j = begin;
    while (j < end) {
      const uint32_t g = lanes[j] % kWarp / group;
      // The distinct words of this group, keyed (bank, word) so that one bank's are adjacent.
      scratch_.clear();
      for (; j < end && lanes[j] % kWarp / group == g; ++j) {
        for (uint32_t w = 0; w < words; ++w) {
          const uint64_t word = addresses[j] / 4 + w;
          scratch_.push_back((word % kBanks) << 48 | word);
        }
      }
      distinct(scratch_);
      uint64_t busiest = 0, run = 0;
      for (size_t i = 0; i < scratch_.size(); ++i) {
        run = (i > 0 && scratch_[i] >> 48 == scratch_[i - 1] >> 48) ? run + 1 : 1;
        busiest = std::max(busiest, run);
      }
      c[k.sectors] += busiest;
      c[k.ideal] += busiest - 1;
    }
  });
}

}  // namespace obsidian::sim
