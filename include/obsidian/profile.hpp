/// Performance counters without a GPU: what the memory system and the warps of a GPU would see
/// when a kernel runs, counted by the simulator (SimOptions::profile) per kernel and per
/// statement of the generated CUDA, and a cost model that turns them into a predicted time.
///
/// Everything is counted at warp level, as the hardware issues it: the active lanes of one warp
/// executing one access of one statement are one request. What the counts assume:
/// - global memory: a request touches the 32-byte sectors its lanes' bytes fall in (arrays start
///   on 256-byte boundaries, as cudaMalloc gives); a wide load (vectors<W>) is one request of
///   W elements per lane. Grid-state arrays and volatile (atomic) loads count as global loads.
/// - shared memory: 32 banks of 4 bytes. A request takes one wavefront per distinct 4-byte word
///   in its busiest bank (lanes reading one word share it: broadcast); 8-byte accesses are
///   served by half-warps and 16-byte ones by quarter-warps, each its own wavefronts (the CUDA
///   programming guide's rules for compute capability 5.0 and later). Conflicts are the
///   wavefronts beyond one per served group.
/// - the generated CUDA is executed as written: a load the CUDA compiler removes or merges
///   (a value it keeps in a register across statements) is still counted.
/// @file
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace obsidian {

/// The counters, in one table: counterName gives each its JSON and table name.
enum class Counter : uint8_t {
  /// Global memory (parameters and grid-state arrays): warp-level requests, the 32-byte sectors
  /// they touch, and the sectors they would touch packed (coalescing efficiency = ideal /
  /// sectors).
  GlobalLoadRequests,
  GlobalLoadSectors,         ///< loads: 32-byte sectors touched
  GlobalLoadIdealSectors,    ///< loads: sectors if packed
  GlobalStoreRequests,       ///< stores: warp-level requests
  GlobalStoreSectors,        ///< stores: sectors touched
  GlobalStoreIdealSectors,   ///< stores: sectors if packed
  GlobalAtomicRequests,      ///< atomics: warp-level requests
  GlobalAtomicSectors,       ///< atomics: sectors touched
  GlobalAtomicIdealSectors,  ///< atomics: sectors if packed
  /// Sectors of global memory touched for the first time in the run (by this statement): the
  /// traffic no cache can avoid; and for the first time by the block touching them: what goes
  /// past the SM's L1 when the block's working set stays in it.
  GlobalFirstTouchSectors,
  GlobalBlockFirstTouchSectors,  ///< sectors touched for the first time by their block
  /// Shared memory: requests, wavefronts (passes through the banks) and bank conflicts
  /// (wavefronts beyond the ideal).
  SharedLoadRequests,
  SharedLoadWavefronts,    ///< loads: wavefronts
  SharedLoadConflicts,     ///< loads: bank conflicts
  SharedStoreRequests,     ///< stores: requests
  SharedStoreWavefronts,   ///< stores: wavefronts
  SharedStoreConflicts,    ///< stores: bank conflicts
  SharedAtomicRequests,    ///< atomics: requests
  SharedAtomicWavefronts,  ///< atomics: wavefronts
  SharedAtomicConflicts,   ///< atomics: bank conflicts
  /// Divergence: statement executions by warps (a warp with at least one active lane), the
  /// active lanes summed over them (SIMT efficiency = activeLanes / (32 warpStatements)), and
  /// branches where a warp's lanes went different ways (an if, or a loop some lanes leave).
  WarpStatements,
  ActiveLanes,        ///< active lanes summed over the warp statements
  DivergentBranches,  ///< branches where a warp's lanes went different ways
  /// Synchronization and exchange, per warp: __syncthreads, __syncwarp, __threadfence, shuffles.
  Barriers,
  WarpSyncs,  ///< __syncwarp
  Fences,     ///< __threadfence
  Shuffles,   ///< shuffles
  /// Atomics (global and shared): the lanes that update and the distinct addresses they update,
  /// per request summed (lanes / addresses: how many lanes contend on one address).
  AtomicLanes,
  AtomicAddresses,  ///< distinct addresses they update, per request summed
  /// Instructions a roofline needs: warp-level arithmetic (unary, binary, cast and select
  /// operations) and lane-level floating-point operations.
  ArithmeticInstructions,
  FloatOperations,  ///< lane-level floating-point operations
  Count_            ///< the number of counters (not a counter)
};
/// The number of counters: the size of SimCounters::values.
inline constexpr size_t kCounterCount = static_cast<size_t>(Counter::Count_);

/// "globalLoadRequests", ...
const char* counterName(Counter c);

/// One value per Counter.
struct SimCounters {
  std::array<uint64_t, kCounterCount> values{};  ///< indexed by Counter
  /// Counter c's value.
  uint64_t& operator[](Counter c) { return values[static_cast<size_t>(c)]; }
  /// Counter c's value.
  uint64_t operator[](Counter c) const { return values[static_cast<size_t>(c)]; }
  /// Adds o's counts (a statement's into the total, one run's into another's).
  SimCounters& operator+=(const SimCounters& o) {
    for (size_t i = 0; i < kCounterCount; ++i) values[i] += o.values[i];
    return *this;
  }
  /// Ratios, 1 where there was nothing to count.
  double globalLoadEfficiency() const;             ///< ideal / actual load sectors
  double globalStoreEfficiency() const;            ///< ideal / actual store sectors
  double sharedLoadWavefrontsPerRequest() const;   ///< shared load wavefronts / requests
  double sharedStoreWavefrontsPerRequest() const;  ///< shared store wavefronts / requests
  double simtEfficiency() const;                   ///< activeLanes / (32 warpStatements)
};

/// One statement of the generated CUDA that ran.
struct SimStatementProfile {
  uint32_t statement = 0;  ///< pre-order number in the lowered kernel
  uint32_t cudaLine = 0;   ///< its first line in Kernel::cuda()
  std::string text;        ///< as the simulator's messages quote it
  uint32_t loops = 0;      ///< loops around it (virtualization's included)
  /// Iterations of the loops around it whose bounds are literals (the CUDA compiler unrolls
  /// them; their loads are in flight together), at most 64; 1 outside such loops.
  uint32_t unrolled = 1;
  SimCounters counters;  ///< what its executions counted
};

/// The counters of one simulated run (SimResult::profile), in total and per statement.
struct SimProfile {
  bool enabled = false;  ///< SimOptions::profile was set
  /// @{
  /// Real blocks and threads per block of the run.
  uint32_t blocks = 0;
  uint32_t threadsPerBlock = 0;
  /// @}
  uint32_t sharedBytes = 0;                     ///< the kernel's shared memory per block
  SimCounters total;                            ///< the whole run's counts
  std::vector<SimStatementProfile> statements;  ///< those that ran, in program order
};

/// The machine the cost model predicts for: throughputs and latencies (defaults: the H100 SXM
/// of the device machine, bench/RESULTS.md's copy roofline; see profile.cpp for each figure's
/// source).
struct DeviceModel {
  std::string name = "H100 SXM";      ///< what the model is of
  uint32_t sms = 132;                 ///< streaming multiprocessors
  double clockGHz = 1.755;            ///< SM clock
  double dramGBps = 2990;             ///< measured device copy (read + write)
  double l2SectorsPerClock = 96;      ///< sectors the L2 delivers to the SMs per clock (all slices)
  double l1SectorsPerSmPerClock = 4;  ///< sectors an SM's L1 delivers per clock (128 bytes)
  double dramLatencyNs = 900;         ///< a load that misses in L2, under load
  uint32_t maxThreadsPerSm = 2048;    ///< resident threads per SM
  uint32_t maxBlocksPerSm = 32;       ///< resident blocks per SM
  uint32_t sharedBytesPerSm = 228 * 1024;  ///< shared memory per SM
  double issuePerSmPerClock = 4;           ///< warp instructions (four schedulers)
  double sassPerOperation = 2;             ///< machine instructions per counted operation
  double blockDispatchClocks = 200;        ///< an SM starts at most one block per this many clocks
  double sharedWavefrontsPerSmPerClock = 1;  ///< shared-memory wavefronts an SM serves per clock
  double barrierClocks = 20;                 ///< a block's __syncthreads with nothing to wait for,
  double barrierClocksPerWarp = 5;           ///<   and for each of its warps
  double loopOverlap = 2;           ///< iterations of a loop whose loads the compiler overlaps
  double launchMicroseconds = 2.5;  ///< a kernel launch with nothing to do
};

/// What the cost model predicts for one run, and which resource bounds it.
struct CostEstimate {
  double microseconds = 0;  ///< the predicted time: the slowest resource's, plus the launch
  std::string bound;  ///< "dram", "l2", "l1", "issue", "shared", "blocks", "latency" or "launch"
  /// @{
  /// Each resource's time in microseconds, launch excluded: the largest names `bound` (unless
  /// the launch takes longer).
  double dramUs = 0, l2Us = 0, l1Us = 0, issueUs = 0, sharedUs = 0, blocksUs = 0, latencyUs = 0;
  /// @}
  /// @{
  /// The latency term's parts: waves of resident blocks, warps resident per SM, and per warp
  /// the global load round trips, barriers and instructions.
  double waves = 0, residentWarps = 0, loadRounds = 0, barriers = 0, instructions = 0;
  /// @}
};

/// predictTime(p, m): the time of the profiled run on machine m: the slowest of
/// DRAM traffic (first-touch sectors), L2 traffic (sectors new to their block), L1 traffic (all
/// sectors), instruction issue, shared-memory wavefronts, and the latency of a block's chain of
/// load round trips and barriers, one wave of resident blocks after another; plus the launch.
/// `scale` multiplies every counter first: a run on a slice of the problem predicts the whole
/// (tuning sweeps simulate n / scale elements).
CostEstimate predictTime(const SimProfile& p, const DeviceModel& m = {}, double scale = 1);

/// The counters for a person: the kernel's totals (global requests and sectors with their
/// coalescing efficiency, shared wavefronts and conflicts, SIMT efficiency, barriers, shuffles,
/// atomics), the predicted time and what bounds it, and the `top` statements that move the most
/// (global sectors plus shared wavefronts), each with its line of CUDA.
std::string profileSummary(const SimProfile& p, size_t top = 3, const DeviceModel& m = {});

}  // namespace obsidian
