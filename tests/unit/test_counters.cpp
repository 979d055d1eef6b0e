// The simulator's counting rules (sim/counters.hpp) on addresses given by hand: sectors of
// global requests, the bank rules for 4-, 8- and 16-byte shared accesses with broadcast, the
// merging of adjacent shared loads, values kept in registers, and divergence per warp.
#include <doctest/doctest.h>

#include <numeric>

#include "sim/counters.hpp"

using namespace obsidian;
using obsidian::sim::AccessKind;
using obsidian::sim::Counters;
using obsidian::sim::Lanes;

namespace {

Lanes lanes(uint32_t from, uint32_t n) {
  Lanes l(n);
  std::iota(l.begin(), l.end(), from);
  return l;
}

// Byte addresses base + stride * lane for each lane.
std::vector<uint64_t> addresses(const Lanes& l, uint64_t base, uint64_t stride) {
  std::vector<uint64_t> a;
  for (uint32_t t : l) a.push_back(base + stride * (t % 32));
  return a;
}

// The counts of one shared access of `bytes` per lane, counted at the boundary.
SimCounters sharedAccess(uint32_t bytes, const std::vector<uint64_t>& a, const Lanes& l,
                         AccessKind kind = AccessKind::Load) {
  Counters c(1, {});
  c.shared(0, kind, bytes, 0, l, a);
  c.boundary();
  return c.perStatement()[0];
}

}  // namespace

TEST_CASE("counters: global sectors, ideal sectors and first touches") {
  Counters c(2, {4096});
  const Lanes w = lanes(0, 64);                                       // two warps
  c.global(0, AccessKind::Load, 0, false, 4, w, addresses(w, 0, 4));  // coalesced: 4 sectors each
  c.global(1, AccessKind::Load, 0, false, 4, w,
           addresses(w, 8, 4));  // misaligned by 8 bytes: 5 each
  const SimCounters& a = c.perStatement()[0];
  CHECK(a[Counter::GlobalLoadRequests] == 2);
  CHECK(a[Counter::GlobalLoadSectors] == 8);
  CHECK(a[Counter::GlobalLoadIdealSectors] == 8);
  CHECK(a[Counter::GlobalFirstTouchSectors] == 4);  // both warps read the same 128 bytes
  const SimCounters& b = c.perStatement()[1];
  CHECK(b[Counter::GlobalLoadSectors] == 10);
  CHECK(b[Counter::GlobalLoadIdealSectors] == 8);
  CHECK(b[Counter::GlobalFirstTouchSectors] == 1);  // only bytes 128..135 are new
  // A new block touches them again past its L1, not past the L2.
  c.startBlock();
  c.global(0, AccessKind::Store, 0, false, 16, lanes(0, 32), addresses(lanes(0, 32), 0, 16));
  CHECK(c.perStatement()[0][Counter::GlobalStoreSectors] == 16);
  CHECK(c.perStatement()[0][Counter::GlobalBlockFirstTouchSectors] == 4 + 16);
  CHECK(c.perStatement()[0][Counter::GlobalFirstTouchSectors] == 4 + 11);
}

TEST_CASE("counters: shared banks for 4-, 8- and 16-byte accesses, with broadcast") {
  const Lanes w = lanes(0, 32);
  // 4 bytes: consecutive words, one wavefront; stride 2 words, 2-way; stride 32, 32-way.
  CHECK(sharedAccess(4, addresses(w, 0, 4), w)[Counter::SharedLoadWavefronts] == 1);
  CHECK(sharedAccess(4, addresses(w, 0, 8), w)[Counter::SharedLoadConflicts] == 1);
  CHECK(sharedAccess(4, addresses(w, 0, 128), w)[Counter::SharedLoadWavefronts] == 32);
  // Every lane one word: broadcast, one wavefront.
  CHECK(sharedAccess(4, addresses(w, 64, 0), w)[Counter::SharedLoadWavefronts] == 1);
  // Bytes of one word read by four lanes each: one wavefront.
  CHECK(sharedAccess(1, addresses(w, 0, 1), w)[Counter::SharedLoadWavefronts] == 1);
  // 8 bytes, consecutive: two half-warps of 128 bytes, no conflict.
  SimCounters c8 = sharedAccess(8, addresses(w, 0, 8), w);
  CHECK(c8[Counter::SharedLoadWavefronts] == 2);
  CHECK(c8[Counter::SharedLoadConflicts] == 0);
  // 8 bytes at a 16-byte stride: each half-warp spans 256 bytes, 2-way.
  c8 = sharedAccess(8, addresses(w, 0, 16), w);
  CHECK(c8[Counter::SharedLoadWavefronts] == 4);
  CHECK(c8[Counter::SharedLoadConflicts] == 2);
  // 16 bytes, consecutive: four quarter-warps, no conflict; only the first quarter active: one.
  CHECK(sharedAccess(16, addresses(w, 0, 16), w)[Counter::SharedLoadWavefronts] == 4);
  const Lanes quarter = lanes(0, 8);
  CHECK(sharedAccess(16, addresses(quarter, 0, 16), quarter)[Counter::SharedLoadWavefronts] == 1);
  // Stores follow the same rules.
  CHECK(sharedAccess(4, addresses(w, 0, 128), w,
                     AccessKind::Store)[Counter::SharedStoreConflicts] == 31);
}

TEST_CASE("counters: adjacent aligned shared loads of the same lanes merge into one wide load") {
  const Lanes w = lanes(0, 32);
  Counters c(1, {});
  // a[2i] and a[2i + 1]: one 8-byte load per lane.
  c.shared(0, AccessKind::Load, 4, 0, w, addresses(w, 0, 8));
  c.shared(0, AccessKind::Load, 4, 0, w, addresses(w, 4, 8));
  c.boundary();
  CHECK(c.perStatement()[0][Counter::SharedLoadRequests] == 1);
  CHECK(c.perStatement()[0][Counter::SharedLoadWavefronts] == 2);
  // a[2i + 1] and a[2i + 2] are not aligned as a pair: two loads.
  Counters d(1, {});
  d.shared(0, AccessKind::Load, 4, 0, w, addresses(w, 4, 8));
  d.shared(0, AccessKind::Load, 4, 0, w, addresses(w, 8, 8));
  d.boundary();
  CHECK(d.perStatement()[0][Counter::SharedLoadRequests] == 2);
  // Across a boundary (a barrier, a branch), nothing merges.
  Counters e(1, {});
  e.shared(0, AccessKind::Load, 4, 0, w, addresses(w, 0, 8));
  e.boundary();
  e.shared(0, AccessKind::Load, 4, 0, w, addresses(w, 4, 8));
  e.boundary();
  CHECK(e.perStatement()[0][Counter::SharedLoadRequests] == 2);
}

TEST_CASE("counters: a word every lane reads is kept in a register until a store or barrier") {
  const Lanes w = lanes(0, 32);
  Counters c(1, {64});
  const std::vector<uint64_t> zero(32, 0);
  c.shared(0, AccessKind::Load, 4, 0, w, zero);
  c.boundary();
  c.shared(0, AccessKind::Load, 4, 0, w, zero);  // kept: no load
  c.boundary();
  CHECK(c.perStatement()[0][Counter::SharedLoadRequests] == 1);
  // A store to an array that starts above the word (at byte 16) cannot write it: still kept.
  c.shared(0, AccessKind::Store, 4, 16, w, addresses(w, 16, 4));
  c.boundary();
  c.shared(0, AccessKind::Load, 4, 0, w, zero);
  c.boundary();
  CHECK(c.perStatement()[0][Counter::SharedLoadRequests] == 1);
  // Nor can a store to global memory.
  c.global(0, AccessKind::Store, 0, false, 4, lanes(0, 1), {0});
  c.shared(0, AccessKind::Load, 4, 0, w, zero);
  c.boundary();
  CHECK(c.perStatement()[0][Counter::SharedLoadRequests] == 1);
  // A store to the word's own array (any index, for all the compiler knows): loaded again.
  c.shared(0, AccessKind::Store, 4, 0, lanes(0, 1), {8});
  c.boundary();
  c.shared(0, AccessKind::Load, 4, 0, w, zero);
  c.boundary();
  CHECK(c.perStatement()[0][Counter::SharedLoadRequests] == 2);
  c.barrier(0, Level::Block, w);
  c.shared(0, AccessKind::Load, 4, 0, w, zero);  // after a barrier: loaded again
  c.boundary();
  CHECK(c.perStatement()[0][Counter::SharedLoadRequests] == 3);
  c.global(0, AccessKind::Atomic, 0, false, 4, lanes(0, 1), {0});
  c.shared(0, AccessKind::Load, 4, 0, w, zero);  // after an atomic: loaded again
  c.boundary();
  CHECK(c.perStatement()[0][Counter::SharedLoadRequests] == 4);
}

TEST_CASE("counters: shared stores on either side of a shared load do not merge") {
  const Lanes w = lanes(0, 32);
  // b[2i] = ...; b[2i + 1] = ...: one 8-byte store per lane.
  Counters c(1, {});
  c.shared(0, AccessKind::Store, 4, 0, w, addresses(w, 0, 8));
  c.shared(0, AccessKind::Store, 4, 0, w, addresses(w, 4, 8));
  c.boundary();
  CHECK(c.perStatement()[0][Counter::SharedStoreRequests] == 1);
  // b[2i] = a[2i]; b[2i + 1] = a[2i] + a[2i + 1] (Sklansky3, b above a): the compiler cannot
  // move the first store past the loads (it cannot prove them apart): two 4-byte stores; a[2i]
  // is not read again (b starts above it) and a[2i + 1] is read alone: two 2-way conflicted
  // 4-byte loads, as Nsight Compute counts them.
  Counters d(1, {});
  d.shared(0, AccessKind::Load, 4, 0, w, addresses(w, 0, 8));
  d.shared(0, AccessKind::Store, 4, 512, w, addresses(w, 512, 8));
  d.shared(0, AccessKind::Load, 4, 0, w, addresses(w, 0, 8));
  d.shared(0, AccessKind::Load, 4, 0, w, addresses(w, 4, 8));
  d.shared(0, AccessKind::Store, 4, 512, w, addresses(w, 516, 8));
  d.boundary();
  CHECK(d.perStatement()[0][Counter::SharedStoreRequests] == 2);
  CHECK(d.perStatement()[0][Counter::SharedLoadRequests] == 2);
  CHECK(d.perStatement()[0][Counter::SharedLoadWavefronts] == 2 + 2);
  CHECK(d.perStatement()[0][Counter::SharedLoadConflicts] == 1 + 1);
}

TEST_CASE("counters: a shared load made again is reused unless a store may have written it") {
  const Lanes w = lanes(0, 32);
  const std::vector<uint64_t> a = addresses(w, 256, 4);
  Counters c(1, {});
  c.shared(0, AccessKind::Load, 4, 256, w, a);
  c.shared(0, AccessKind::Load, 4, 256, w, a);                      // reused
  c.shared(0, AccessKind::Store, 4, 512, w, addresses(w, 512, 4));  // above: cannot write it
  c.shared(0, AccessKind::Load, 4, 256, w, a);                      // reused
  c.shared(0, AccessKind::Load, 2, 256, w, a);                      // another width: loaded
  c.boundary();
  CHECK(c.perStatement()[0][Counter::SharedLoadRequests] == 2);
  c.shared(0, AccessKind::Load, 4, 256, w, a);                  // after a boundary: loaded again
  c.shared(0, AccessKind::Store, 4, 0, w, addresses(w, 0, 4));  // an array below: may write it
  c.shared(0, AccessKind::Load, 4, 256, w, a);                  // loaded again
  c.shared(0, AccessKind::Load, 4, 256, lanes(0, 16),
           std::vector<uint64_t>(a.begin(), a.begin() + 16));
  c.boundary();  // (other lanes: loaded)
  CHECK(c.perStatement()[0][Counter::SharedLoadRequests] == 2 + 3);
  c.shared(0, AccessKind::Load, 4, 256, w, a);
  c.barrier(0, Level::Block, w);
  c.shared(0, AccessKind::Load, 4, 256, w, a);  // after a barrier: loaded again
  c.boundary();
  CHECK(c.perStatement()[0][Counter::SharedLoadRequests] == 5 + 2);
}

TEST_CASE("counters: a read-only global load made again by the same lanes is reused") {
  const Lanes w = lanes(0, 32);
  Counters c(1, {4096, 4096});
  const std::vector<uint64_t> a = addresses(w, 0, 8);
  c.global(0, AccessKind::Load, 0, true, 4, w, a);
  c.global(0, AccessKind::Load, 0, true, 4, w, a);  // reused
  CHECK(c.perStatement()[0][Counter::GlobalLoadRequests] == 1);
  c.global(0, AccessKind::Load, 1, false, 4, w, a);  // a writable array: loaded
  c.global(0, AccessKind::Load, 1, false, 4, w, a);
  CHECK(c.perStatement()[0][Counter::GlobalLoadRequests] == 3);
  c.global(0, AccessKind::Store, 1, false, 4, lanes(0, 1), {0});
  c.global(0, AccessKind::Load, 0, true, 4, w, a);  // after a store: loaded again
  CHECK(c.perStatement()[0][Counter::GlobalLoadRequests] == 4);
  c.boundary();
  c.global(0, AccessKind::Load, 0, true, 4, w, a);  // after a boundary: loaded again
  CHECK(c.perStatement()[0][Counter::GlobalLoadRequests] == 5);
}

TEST_CASE("counters: divergence and SIMT efficiency per warp") {
  Counters c(1, {});
  const Lanes all = lanes(0, 64);
  c.statement(0, all);
  c.branch(0, all, lanes(0, 40));  // warp 0 all taken, warp 1 split
  c.statement(0, lanes(30, 4));    // two warps, four lanes
  const SimCounters& s = c.perStatement()[0];
  CHECK(s[Counter::WarpStatements] == 4);
  CHECK(s[Counter::ActiveLanes] == 68);
  CHECK(s[Counter::DivergentBranches] == 1);
  CHECK(s.simtEfficiency() == doctest::Approx(68.0 / 128));
}
