// Hazard detection for the simulator's machine (sim/machine.hpp): races on shared and global
// memory, reads of shared memory nothing wrote, barriers reached by only part of a block or
// warp, and register shuffles that only part of a warp takes part in. Races are found with
// happens-before epochs, not with an interleaving: two accesses of different threads to one
// address race when no barrier separates them (a __syncthreads for any two threads of a
// block, a __syncwarp for two threads of one warp) and one of them writes; across blocks, any
// such pair races unless both are atomic, or the earlier block published its access (a fence,
// then an atomic on a grid-state array) and the later one acquired it (an atomic there after).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/scalar_ops.hpp"
#include "sim/program.hpp"

namespace obsidian::sim {

// The threads of a block that execute a statement, in increasing order.
using Lanes = std::vector<uint32_t>;

// Where the machine is, for messages: the real block it runs and the statement it executes.
struct Cursor {
  uint32_t block = 0;
  const CStmt* stmt = nullptr;
};

// One access, for happens-before checks.
struct Access {
  int32_t block = -1;  // -1: none
  uint32_t thread = 0;
  uint32_t epoch = 0;      // __syncthreads passed by the block before the access
  uint32_t warpEpoch = 0;  // __syncwarp passed by the thread's warp before the access
  uint32_t fences = 0;     // __threadfence executed by the block before the access
  const CStmt* stmt = nullptr;
  bool atomic = false;
};

// The accesses to one address that later ones must be checked against. Readers since the last
// write, enough of them that a racing write always meets one: the first reader of the current
// barrier interval, the latest reader from another warp than it, the latest other reader from
// its warp, and the latest reader from an earlier block (blocks are never ordered).
struct Shadow {
  Access write;
  Access first, otherWarp, sameWarp, otherBlock;
  bool written = false;  // shared memory: written since the virtual block started
};

// A tracked global array's shadow, in pages made on first touch: grid state has room for every
// tile an input may have (2^20 look-back words), of which a launch touches a few.
struct ShadowPages {
  static constexpr size_t kPage = 1024;
  std::vector<std::unique_ptr<std::array<Shadow, kPage>>> pages;
  bool tracked() const { return !pages.empty(); }
  Shadow& at(uint64_t i) {
    std::unique_ptr<std::array<Shadow, kPage>>& page = pages[i / kPage];
    if (!page) page = std::make_unique<std::array<Shadow, kPage>>();
    return (*page)[i % kPage];
  }
};

// The happens-before clock of the running block (barriers and fences passed) and the shadow of
// every address that is checked. Barriers are counted whether or not hazards are detected:
// a barrier that only part of a block reaches cannot be executed, so it is always reported.
class Hazards {
 public:
  // For kernel k with `sharedBytes` of shared memory per block (the memory map's). With
  // `detect` false only divergent barriers and shuffles are reported. `at` is read for
  // messages.
  Hazards(const KernelIR& k, uint32_t sharedBytes, bool detect, const Cursor& at);

  bool detecting() const { return detect_; }

  // ---- messages (the machine's own checks, bounds and division by zero, use them too)
  std::string who(uint32_t block, uint32_t thread) const;
  std::string element(ArrayId a, uint64_t i) const;
  [[noreturn]] void hazard(const std::string& what) const;

  // ---- the clock
  // A fresh real block: no barrier passed, nothing acquired, its shared memory undefined.
  void startBlock();
  // A new virtual block in the same real block: its shared memory is undefined again.
  void startVirtualBlock();
  // __syncthreads (s.level Block) or __syncwarp, reached by `lanes`: the whole block, or every
  // thread of each warp that reaches it, must take part.
  void barrier(const CStmt& s, const Lanes& lanes);
  void fence() { fences_ += 1; }
  // An atomic on array a (a grid-state array publishes and acquires; others do nothing).
  void atomicOn(ArrayId a);

  // ---- accesses by thread t to element i of array a
  // Global and grid-state arrays: checked where the array is tracked (trackGlobal).
  // (The checks are inline where nothing is tracked: the machine calls them on every access.)
  void trackGlobal(ArrayId a, size_t count);
  void global(ArrayId a, uint64_t i, uint32_t t, bool isWrite, bool atomic) {
    if (globalShadow_[a].tracked()) checkGlobal(a, i, t, isWrite, atomic);
  }
  // Shared memory: the element's `size` bytes at byte offset `at` of the block's shared memory.
  void shared(uint64_t at, uint32_t size, ArrayId a, uint64_t i, uint32_t t, bool isWrite,
              bool atomic) {
    if (detect_) checkShared(at, size, a, i, t, isWrite, atomic);
  }
  // A read of register array a at lane indices ix[t]: reading another lane's register is a
  // __shfl_sync, which the whole warp must take part in; so is a vote (ix is then unused).
  void converged(ArrayId a, const Lanes& lanes, const ir::Value* ix,
                 WarpVote vote = WarpVote::None) const;

 private:
  bool concurrent(const Access& prev, uint32_t t) const;
  Access access(uint32_t t, bool atomic) const;
  void race(const char* space, ArrayId a, uint64_t i, const Access& prev, const char* prevDid,
            uint32_t t, const char* did) const;
  void checkRead(Shadow& s, const char* space, ArrayId a, uint64_t i, uint32_t t, bool atomic);
  void checkWrite(Shadow& s, const char* space, ArrayId a, uint64_t i, uint32_t t, bool atomic);
  void checkGlobal(ArrayId a, uint64_t i, uint32_t t, bool isWrite, bool atomic);
  void checkShared(uint64_t at, uint32_t size, ArrayId a, uint64_t i, uint32_t t, bool isWrite,
                   bool atomic);
  static uint32_t firstMissing(const Lanes& lanes, uint32_t from, uint32_t to);

  const KernelIR& k_;
  const uint32_t threads_;
  const bool detect_;
  const Cursor& at_;
  std::vector<Shadow> smemShadow_;         // per byte of shared memory
  std::vector<ShadowPages> globalShadow_;  // per array, per element (tracked ones)
  // Per grid-state array: the blocks that published their writes through an atomic on it
  // after a fence, block -> the number of fences it had executed by then (its accesses before
  // that many are published).
  std::vector<std::map<uint32_t, uint32_t>> published_;
  std::vector<uint32_t> warpEpoch_;        // __syncwarp passed, per warp
  uint32_t epoch_ = 0;                     // __syncthreads passed by this block
  uint32_t fences_ = 0;                    // __threadfence executed by this block so far
  std::map<uint32_t, uint32_t> acquired_;  // block -> its accesses before that many fences
};

}  // namespace obsidian::sim
