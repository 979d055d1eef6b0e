// Performance counters without a GPU: what the memory system and the warps of a GPU would see
// when a kernel runs, counted by the simulator (SimOptions::profile) per kernel and per
// statement of the generated CUDA, and a cost model that turns them into a predicted time.
//
// Everything is counted at warp level, as the hardware issues it: the active lanes of one warp
// executing one access of one statement are one request. What the counts assume:
// - global memory: a request touches the 32-byte sectors its lanes' bytes fall in (arrays start
//   on 256-byte boundaries, as cudaMalloc gives); a wide load (vectors<W>) is one request of
//   W elements per lane. Grid-state arrays and volatile (atomic) loads count as global loads.
// - shared memory: 32 banks of 4 bytes. A request takes one wavefront per distinct 4-byte word
//   in its busiest bank (lanes reading one word share it: broadcast); 8-byte accesses are
//   served by half-warps and 16-byte ones by quarter-warps, each its own wavefronts (the CUDA
//   programming guide's rules for compute capability 5.0 and later). Conflicts are the
//   wavefronts beyond one per served group.
// - the generated CUDA is executed as written: a load the CUDA compiler removes or merges
//   (a value it keeps in a register across statements) is still counted.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace obsidian {

// The counters, in one table: counterName gives each its JSON and table name.
enum class Counter : uint8_t {
  // Global memory (parameters and grid-state arrays): warp-level requests, the 32-byte sectors
  // they touch, and the sectors they would touch packed (coalescing efficiency = ideal /
  // sectors).
  GlobalLoadRequests,
  GlobalLoadSectors,
  GlobalLoadIdealSectors,
  GlobalStoreRequests,
  GlobalStoreSectors,
  GlobalStoreIdealSectors,
  GlobalAtomicRequests,
  GlobalAtomicSectors,
  GlobalAtomicIdealSectors,
  // Sectors of global memory touched for the first time in the run (by this statement): the
  // traffic no cache can avoid; and for the first time by the block touching them: what goes
  // past the SM's L1 when the block's working set stays in it.
  GlobalFirstTouchSectors,
  GlobalBlockFirstTouchSectors,
  // Shared memory: requests, wavefronts (passes through the banks) and bank conflicts
  // (wavefronts beyond the ideal).
  SharedLoadRequests,
  SharedLoadWavefronts,
  SharedLoadConflicts,
  SharedStoreRequests,
  SharedStoreWavefronts,
  SharedStoreConflicts,
  SharedAtomicRequests,
  SharedAtomicWavefronts,
  SharedAtomicConflicts,
  // Divergence: statement executions by warps (a warp with at least one active lane), the
  // active lanes summed over them (SIMT efficiency = activeLanes / (32 warpStatements)), and
  // branches where a warp's lanes went different ways (an if, or a loop some lanes leave).
  WarpStatements,
  ActiveLanes,
  DivergentBranches,
  // Synchronization and exchange, per warp: __syncthreads, __syncwarp, __threadfence, shuffles.
  Barriers,
  WarpSyncs,
  Fences,
  Shuffles,
  // Atomics (global and shared): the lanes that update and the distinct addresses they update,
  // per request summed (lanes / addresses: how many lanes contend on one address).
  AtomicLanes,
  AtomicAddresses,
  // Instructions a roofline needs: warp-level arithmetic (unary, binary, cast and select
  // operations) and lane-level floating-point operations.
  ArithmeticInstructions,
  FloatOperations,
  Count_
};
inline constexpr size_t kCounterCount = static_cast<size_t>(Counter::Count_);

// "globalLoadRequests", ...
const char* counterName(Counter c);

struct SimCounters {
  std::array<uint64_t, kCounterCount> values{};
  uint64_t& operator[](Counter c) { return values[static_cast<size_t>(c)]; }
  uint64_t operator[](Counter c) const { return values[static_cast<size_t>(c)]; }
  SimCounters& operator+=(const SimCounters& o) {
    for (size_t i = 0; i < kCounterCount; ++i) values[i] += o.values[i];
    return *this;
  }
  // Ratios, 1 where there was nothing to count.
  double globalLoadEfficiency() const;   // ideal / actual load sectors
  double globalStoreEfficiency() const;  // ideal / actual store sectors
  double sharedLoadWavefrontsPerRequest() const;
  double sharedStoreWavefrontsPerRequest() const;
  double simtEfficiency() const;  // activeLanes / (32 warpStatements)
};

// One statement of the generated CUDA that ran.
struct SimStatementProfile {
  uint32_t statement = 0;  // pre-order number in the lowered kernel
  uint32_t cudaLine = 0;   // its first line in Kernel::cuda()
  std::string text;        // as the simulator's messages quote it
  uint32_t loops = 0;      // loops around it (virtualization's included)
  // Iterations of the loops around it whose bounds are literals (the CUDA compiler unrolls
  // them; their loads are in flight together), at most 64; 1 outside such loops.
  uint32_t unrolled = 1;
  SimCounters counters;
};

struct SimProfile {
  bool enabled = false;  // SimOptions::profile was set
  uint32_t blocks = 0;   // real blocks and threads per block of the run
  uint32_t threadsPerBlock = 0;
  uint32_t sharedBytes = 0;  // the kernel's shared memory per block
  SimCounters total;
  std::vector<SimStatementProfile> statements;  // those that ran, in program order
};

// The machine the cost model predicts for: throughputs and latencies (defaults: the H100 SXM
// of the device machine, bench/RESULTS.md's copy roofline; see profile.cpp for each figure's
// source).
struct DeviceModel {
  std::string name = "H100 SXM";
  uint32_t sms = 132;
  double clockGHz = 1.755;
  double dramGBps = 2990;             // measured device copy (read + write)
  double l2SectorsPerClock = 96;      // sectors the L2 delivers to the SMs per clock (all slices)
  double l1SectorsPerSmPerClock = 4;  // sectors an SM's L1 delivers per clock (128 bytes)
  double dramLatencyNs = 900;         // a load that misses in L2, under load
  uint32_t maxThreadsPerSm = 2048;
  uint32_t maxBlocksPerSm = 32;
  uint32_t sharedBytesPerSm = 228 * 1024;
  double issuePerSmPerClock = 4;     // warp instructions (four schedulers)
  double sassPerOperation = 2;       // machine instructions per counted operation
  double blockDispatchClocks = 200;  // an SM starts at most one block per this many clocks
  double sharedWavefrontsPerSmPerClock = 1;
  double barrierClocks = 20;        // a block's __syncthreads with nothing to wait for,
  double barrierClocksPerWarp = 5;  //   and for each of its warps
  double loopOverlap = 2;           // iterations of a loop whose loads the compiler overlaps
  double launchMicroseconds = 2.5;  // a kernel launch with nothing to do
};

// What the cost model predicts for one run, and which resource bounds it.
struct CostEstimate {
  double microseconds = 0;
  std::string bound;  // "dram", "l2", "l1", "issue", "shared", "blocks", "latency" or "launch"
  double dramUs = 0, l2Us = 0, l1Us = 0, issueUs = 0, sharedUs = 0, blocksUs = 0, latencyUs = 0;
  // The latency term's parts: waves of resident blocks, warps resident per SM, and per warp
  // the global load round trips, barriers and instructions.
  double waves = 0, residentWarps = 0, loadRounds = 0, barriers = 0, instructions = 0;
};

// predictTime(p, m): the time of the profiled run on machine m: the slowest of
// DRAM traffic (first-touch sectors), L2 traffic (sectors new to their block), L1 traffic (all
// sectors), instruction issue, shared-memory wavefronts, and the latency of a block's chain of
// load round trips and barriers, one wave of resident blocks after another; plus the launch.
// `scale` multiplies every counter first: a run on a slice of the problem predicts the whole
// (tuning sweeps simulate n / scale elements).
CostEstimate predictTime(const SimProfile& p, const DeviceModel& m = {}, double scale = 1);

// The counters for a person: the kernel's totals (global requests and sectors with their
// coalescing efficiency, shared wavefronts and conflicts, SIMT efficiency, barriers, shuffles,
// atomics), the predicted time and what bounds it, and the `top` statements that move the most
// (global sectors plus shared wavefronts), each with its line of CUDA.
std::string profileSummary(const SimProfile& p, size_t top = 3, const DeviceModel& m = {});

}  // namespace obsidian
