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
  const Counter c = level == Level::Block ? Counter::Barriers : Counter::WarpSyncs;
  forWarps(lanes, [&](size_t, size_t) { ++counts_[s][c]; });
}

void Counters::fence(uint32_t s, const Lanes& lanes) {
  kept_.clear();
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
  // An atomic orders memory; a store through a global pointer may, for all the CUDA compiler
  // knows, write any memory: values kept in registers are loaded again after either.
  if (kind != AccessKind::Load) {
    kept_.clear();
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

bool Counters::overlapsPendingStore(uint32_t bytes, const std::vector<uint64_t>& addresses) const {
  for (const Pending& p : pending_) {
    if (p.kind != AccessKind::Store) continue;
    for (size_t j = 0; j < addresses.size(); ++j) {
      if (addresses[j] < p.addresses[j] + p.bytes && p.addresses[j] < addresses[j] + bytes) {
        return true;
      }
    }
  }
  return false;
}

void Counters::shared(uint32_t s, AccessKind kind, uint32_t bytes, const Lanes& lanes,
                      const std::vector<uint64_t>& addresses) {
  if (kind == AccessKind::Atomic) {
    boundary();
    countShared(s, kind, bytes, lanes, addresses);
    return;
  }
  // Only accesses by the same lanes merge; a load of what a pending store wrote ends the run.
  if (!pending_.empty() && pending_.front().lanes != lanes) boundary();
  if (kind == AccessKind::Load && overlapsPendingStore(bytes, addresses)) boundary();
  pending_.push_back({s, kind, bytes, lanes, addresses});
}

void Counters::boundary() {
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
  for (const Pending& p : pending_) countShared(p.statement, p.kind, p.bytes, p.lanes, p.addresses);
  pending_.clear();
  loaded_.clear();
}

void Counters::countShared(uint32_t s, AccessKind kind, uint32_t bytes, const Lanes& lanes,
                           const std::vector<uint64_t>& addresses) {
  if (kind != AccessKind::Load) {
    // A store or atomic: the values kept of the words it writes are stale.
    // An atomic orders memory; a store through a global pointer may, for all the CUDA compiler
    // knows, write shared memory too: values kept in registers are loaded again after either.
    if (kind != AccessKind::Load) kept_.clear();
    for (uint64_t a : addresses) {
      for (auto it = kept_.lower_bound(a >= 3 ? a - 3 : 0);
           it != kept_.end() && it->first < a + bytes;) {
        it = kept_.erase(it);
      }
    }
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
