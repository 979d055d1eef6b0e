// The simulator's performance counters (SimOptions::profile; see obsidian/profile.hpp for what
// is counted and under which rules). The machine runs a block's threads in lock-step over sets
// of active lanes; each call here gets one such set for one access or statement and splits it
// into warps, as the hardware issues it.
#pragma once

#include <bitset>
#include <cstdint>
#include <map>
#include <vector>

#include "obsidian/ir.hpp"
#include "obsidian/profile.hpp"
#include "sim/hazards.hpp"

namespace obsidian::sim {

enum class AccessKind : uint8_t { Load, Store, Atomic };

class Counters {
 public:
  // `statements`: how many the compiled kernel has; `globalBytes`: per array, the bytes of a
  // global or grid-state array (0 for others), for first-touch sectors.
  Counters(size_t statements, const std::vector<uint64_t>& globalBytes);

  // Statement `s` executed by `lanes` (once per loop iteration for loops).
  void statement(uint32_t s, const Lanes& lanes);
  // Statement s split `lanes` into `taken` and the rest (an if, or a loop some lanes leave);
  // both sorted subsets of lanes.
  void branch(uint32_t s, const Lanes& lanes, const Lanes& taken);
  void barrier(uint32_t s, Level level, const Lanes& lanes);
  void fence(uint32_t s, const Lanes& lanes);
  void shuffle(uint32_t s, const Lanes& lanes);
  void arithmetic(uint32_t s, const Lanes& lanes, bool isFloat);

  // One access by every lane of `lanes`: lane lanes[j] touches `bytes` bytes at byte address
  // addresses[j] of array a (global: from the array's start; shared: in the block's shared
  // memory). A load of a read-only global array that the same lanes made at the same addresses
  // since the last boundary or global store is not made again (the CUDA compiler reuses it).
  void global(uint32_t s, AccessKind kind, ArrayId a, bool readOnly, uint32_t bytes,
              const Lanes& lanes, const std::vector<uint64_t>& addresses);
  // Shared loads and stores are counted at the next boundary: the CUDA compiler merges
  // accesses of adjacent, aligned words by the same lanes in straight-line code into one wide
  // access (two 4-byte loads of a[2i] and a[2i + 1] are one 8-byte load), and a load the same
  // lanes made at the same addresses, not written since, is not made again.
  // `base`: the array's first byte in shared memory (what the CUDA compiler knows of where a
  // store with an unknown index may land: at or above it).
  void shared(uint32_t s, AccessKind kind, uint32_t bytes, uint64_t base, const Lanes& lanes,
              const std::vector<uint64_t>& addresses);
  // The end of straight-line code (a branch, a loop iteration, a barrier, a block's end).
  void boundary();

  // A new real block starts (its sectors are new to it).
  void startBlock() {
    ++block_;
    kept_.clear();
  }

  const std::vector<SimCounters>& perStatement() const { return counts_; }

 private:
  // Calls f(begin, end) for each warp's run of lanes[begin, end).
  template <class F>
  static void forWarps(const Lanes& lanes, F&& f);
  // The lanes [begin, end) of one atomic request: their count and their distinct addresses.
  void atomics(uint32_t s, const std::vector<uint64_t>& addresses, size_t begin, size_t end);
  // Counts the shared accesses pending (merging adjacent ones) and starts a new run.
  void flush();
  void countShared(uint32_t s, AccessKind kind, uint32_t bytes, uint64_t base, const Lanes& lanes,
                   const std::vector<uint64_t>& addresses);
  struct Pending {
    uint32_t statement;
    AccessKind kind;
    uint32_t bytes;
    uint64_t base;
    Lanes lanes;
    std::vector<uint64_t> addresses;
  };

  std::vector<SimCounters> counts_;
  // Per global array, per sector: 1 + the last block that touched it (0: none yet).
  std::vector<std::vector<uint32_t>> touched_;
  uint32_t block_ = 0;
  std::vector<uint64_t> scratch_;
  std::vector<Pending> pending_;  // shared accesses since the last boundary, in order
  // Shared words every lane of a request read at one address (arr[0]), and the lanes that read
  // them, since the last barrier, fence or atomic: the CUDA compiler keeps such a value in a
  // register instead of loading it again, until a shared store that may write the word (one
  // to an array that starts at or below it).
  std::map<uint64_t, std::bitset<1024>> kept_;
  struct Loaded {
    ArrayId array;
    Lanes lanes;
    std::vector<uint64_t> addresses;
  };
  std::vector<Loaded> loaded_;  // read-only global loads since the last boundary or store
  // Shared loads since the last boundary (barrier, fence, atomic) that no store since may
  // have written, for all the CUDA compiler can tell: loaded again, they are reused.
  struct SharedLoaded {
    uint32_t bytes;
    Lanes lanes;
    std::vector<uint64_t> addresses;
  };
  std::vector<SharedLoaded> sharedLoaded_;
};

}  // namespace obsidian::sim
