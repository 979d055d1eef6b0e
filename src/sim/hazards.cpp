// Hazard detection for the simulator (see sim/hazards.hpp).
#include "sim/hazards.hpp"

#include <algorithm>

#include "obsidian/sim.hpp"

namespace obsidian::sim {

Hazards::Hazards(const KernelIR& k, uint32_t sharedBytes, bool detect, const Cursor& at)
    : k_(k),
      threads_(k.threadsPerBlock),
      detect_(detect),
      at_(at),
      globalShadow_(k.arrays.size()),
      published_(k.arrays.size()),
      warpEpoch_((k.threadsPerBlock + 31) / 32, 0) {
  if (detect_) smemShadow_.assign(sharedBytes, Shadow{});
}

// ---- messages
std::string Hazards::who(uint32_t block, uint32_t thread) const {
  return "block " + std::to_string(block) + " thread " + std::to_string(thread);
}

void Hazards::hazard(const std::string& what) const {
  throw HazardError("simulate(kernel " + k_.name + "): " + what);
}

std::string Hazards::element(ArrayId a, uint64_t i) const {
  return k_.arrays[a].name + "[" + std::to_string(i) + "]";
}

// ---- the clock
void Hazards::startBlock() {
  epoch_ = 0;
  fences_ = 0;
  acquired_.clear();
  std::fill(warpEpoch_.begin(), warpEpoch_.end(), 0);
  if (detect_) std::fill(smemShadow_.begin(), smemShadow_.end(), Shadow{});
}

void Hazards::startVirtualBlock() {
  if (!detect_) return;
  for (Shadow& sh : smemShadow_) sh.written = false;
}

void Hazards::barrier(const CStmt& s, const Lanes& lanes) {
  if (s.level == Level::Block) {
    if (lanes.size() != threads_) {
      hazard("__syncthreads() reached by only part of block " + std::to_string(at_.block) + ": " +
             std::to_string(lanes.size()) + " of " + std::to_string(threads_) +
             " threads (first missing: thread " + std::to_string(firstMissing(lanes, 0, threads_)) +
             ") at `" + s.text + "`");
    }
    ++epoch_;
    return;
  }
  size_t i = 0;
  while (i < lanes.size()) {
    const uint32_t w = lanes[i] / 32;
    const uint32_t warpEnd = std::min(threads_, (w + 1) * 32);
    size_t j = i;
    while (j < lanes.size() && lanes[j] / 32 == w) ++j;
    if (j - i != warpEnd - w * 32) {
      const Lanes part(lanes.begin() + static_cast<long>(i), lanes.begin() + static_cast<long>(j));
      hazard("__syncwarp() reached by only part of warp " + std::to_string(w) + " of block " +
             std::to_string(at_.block) + ": " + std::to_string(j - i) + " of " +
             std::to_string(warpEnd - w * 32) + " threads (first missing: thread " +
             std::to_string(firstMissing(part, w * 32, warpEnd)) + ") at `" + s.text + "`");
    }
    ++warpEpoch_[w];
    i = j;
  }
}

uint32_t Hazards::firstMissing(const Lanes& lanes, uint32_t from, uint32_t to) {
  uint32_t expect = from;
  for (uint32_t t : lanes) {
    if (t != expect) return expect;
    ++expect;
  }
  return expect < to ? expect : to;
}

// A block's atomic on a grid-state array publishes what it did before its last fence and
// acquires what the blocks before it published there (their atomics came first).
void Hazards::atomicOn(ArrayId a) {
  if (k_.arrays[a].space != MemorySpace::GridState) return;
  std::map<uint32_t, uint32_t>& published = published_[a];
  if (fences_ > 0) published[at_.block] = fences_;
  for (const auto& [b, f] : published) {
    if (b == at_.block) continue;
    uint32_t& mine = acquired_[b];
    mine = std::max(mine, f);
  }
}

// ---- happens-before
bool Hazards::concurrent(const Access& prev, uint32_t t) const {
  if (prev.block < 0) return false;
  if (prev.block != static_cast<int32_t>(at_.block)) {
    // Other blocks are unordered, unless this block acquired the access through an atomic
    // that the other block published it with (a fence, then an atomic on the same array).
    const auto it = acquired_.find(static_cast<uint32_t>(prev.block));
    return it == acquired_.end() || prev.fences >= it->second;
  }
  if (prev.thread == t || prev.epoch != epoch_) return false;
  const bool sameWarp = prev.thread / 32 == t / 32;
  return !(sameWarp && prev.warpEpoch != warpEpoch_[t / 32]);
}

Access Hazards::access(uint32_t t, bool atomic) const {
  return Access{
      static_cast<int32_t>(at_.block), t, epoch_, warpEpoch_[t / 32], fences_, at_.stmt, atomic};
}

void Hazards::race(const char* space, ArrayId a, uint64_t i, const Access& prev,
                   const char* prevDid, uint32_t t, const char* did) const {
  hazard(std::string(space) + " race on " + element(a, i) + ": " + who(at_.block, t) + " " + did +
         " it in `" + at_.stmt->text + "` and " +
         who(static_cast<uint32_t>(prev.block), prev.thread) + " " + prevDid + " it in `" +
         (prev.stmt ? prev.stmt->text : "?") + "` with no barrier between them");
}

void Hazards::checkRead(Shadow& s, const char* space, ArrayId a, uint64_t i, uint32_t t,
                        bool atomic) {
  if (concurrent(s.write, t) && !(atomic && s.write.atomic)) {
    race(space, a, i, s.write, "wrote", t, atomic ? "atomically updates" : "reads");
  }
  const Access now = access(t, atomic);
  for (Access* r : {&s.first, &s.otherWarp, &s.sameWarp}) {
    if (r->block < 0) continue;
    if (r->block != now.block) {
      s.otherBlock = *r;  // stays concurrent with this block's writes
      *r = Access{};
    } else if (r->epoch != now.epoch) {
      *r = Access{};  // a __syncthreads separates it from everything this block does now
    }
  }
  if (s.first.block < 0) {
    s.first = now;
  } else if (s.first.thread / 32 != t / 32) {
    s.otherWarp = now;
  } else if (s.first.thread != t) {
    s.sameWarp = now;
  }
}

void Hazards::checkWrite(Shadow& s, const char* space, ArrayId a, uint64_t i, uint32_t t,
                         bool atomic) {
  const char* did = atomic ? "atomically updates" : "writes";
  if (concurrent(s.write, t) && !(atomic && s.write.atomic))
    race(space, a, i, s.write, "wrote", t, did);
  for (const Access* r : {&s.first, &s.otherWarp, &s.sameWarp, &s.otherBlock}) {
    if (concurrent(*r, t) && !(atomic && r->atomic)) race(space, a, i, *r, "read", t, did);
  }
  s.write = access(t, atomic);
  s.first = s.otherWarp = s.sameWarp = s.otherBlock = Access{};
  s.written = true;
}

// ---- accesses
void Hazards::trackGlobal(ArrayId a, size_t count) {
  if (!detect_) return;
  ShadowPages& shadow = globalShadow_[a];
  shadow.pages.clear();
  shadow.pages.resize((count + ShadowPages::kPage - 1) / ShadowPages::kPage);
}

void Hazards::checkGlobal(ArrayId a, uint64_t i, uint32_t t, bool isWrite, bool atomic) {
  Shadow& shadow = globalShadow_[a].at(i);
  if (isWrite) {
    checkWrite(shadow, "global-memory", a, i, t, atomic);
  } else {
    checkRead(shadow, "global-memory", a, i, t, atomic);
  }
}

void Hazards::checkShared(uint64_t at, uint32_t size, ArrayId a, uint64_t i, uint32_t t,
                          bool isWrite, bool atomic) {
  for (uint32_t b = 0; b < size; ++b) {
    Shadow& s = smemShadow_[at + b];
    if (atomic && !s.written) {
      hazard("atomic update of shared " + element(a, i) + " that nothing wrote, by " +
             who(at_.block, t) + " in `" + at_.stmt->text + "`");
    }
    if (isWrite) {
      checkWrite(s, "shared-memory", a, i, t, atomic);
    } else {
      if (!s.written) {  // an atomic update reads the old value too
        hazard("read of shared " + element(a, i) + " that nothing wrote, by " + who(at_.block, t) +
               " in `" + at_.stmt->text + "`");
      }
      checkRead(s, "shared-memory", a, i, t, atomic);
    }
  }
}

void Hazards::converged(ArrayId a, const Lanes& lanes, const ir::Value* ix, WarpVote vote) const {
  const bool isVote = vote != WarpVote::None;
  for (size_t i = 0; i < lanes.size();) {
    const uint32_t w = lanes[i] / 32;
    size_t j = i;
    bool shuffles = isVote;
    while (j < lanes.size() && lanes[j] / 32 == w) {
      shuffles = shuffles || ix[lanes[j]].u != lanes[j] % 32;
      ++j;
    }
    const uint32_t warpLanes = std::min<uint32_t>(32, threads_ - w * 32);
    if (shuffles && j - i != warpLanes) {
      hazard(std::string(isVote ? warpVoteName(vote) : "__shfl_sync") + " of register array " +
             k_.arrays[a].name +
             " reached by only part of "
             "warp " +
             std::to_string(w) + " of block " + std::to_string(at_.block) + ": " +
             std::to_string(j - i) + " of " + std::to_string(warpLanes) + " lanes at `" +
             at_.stmt->text + "`");
    }
    i = j;
  }
}

}  // namespace obsidian::sim
