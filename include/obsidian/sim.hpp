/// The simulator: runs a generated kernel on the CPU exactly as lowered (after the memory map
/// and virtualization) with a real launch geometry, and reports hazards: shared- and
/// global-memory races, out-of-bounds accesses, reads of shared memory nothing wrote, and
/// barriers reached by only part of a block or warp.
/// @file
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "obsidian/arguments.hpp"
#include "obsidian/kernel.hpp"
#include "obsidian/profile.hpp"

namespace obsidian {

/// A hazard the simulator found: the message names the kernel, the array and index, the two
/// threads (block, thread) and the two statements involved.
class HazardError : public Error {
 public:
  /// A HazardError whose what() is `message`.
  explicit HazardError(const std::string& message) : Error(message) {}
};

/// How simulate runs a kernel.
struct SimOptions {
  /// Real blocks to launch; 0 launches the kernel's gridBlocks (at least one). Fewer blocks
  /// than that exercise the kernel's virtualization of blocks.
  uint32_t blocks = 0;
  /// Check for hazards (races, out-of-bounds, uninitialised shared reads). Off, the simulator
  /// still stops at out-of-bounds accesses and divergent barriers, which it cannot execute.
  bool detectHazards = true;
  /// Give up (with an Error) after this many statement executions per thread on average:
  /// a guard against loops that never end.
  uint64_t maxStepsPerThread = uint64_t{1} << 24;
  /// Run the real blocks from the last to the first. A GPU runs blocks in any order; a kernel
  /// that waits on a block with a lower index (instead of one that drew an earlier ticket) never
  /// ends this way, and the step limit above reports it.
  bool reverseBlocks = false;
  /// Count what the memory system and the warps would see (obsidian/profile.hpp): SimStats::
  /// profile. Off, nothing is counted and nothing costs.
  bool profile = false;
};

/// The global memory one run moved, per global array (input, output, mutable and grid-state
/// arrays, in the kernel's array order): elements read, written and atomically updated, summed
/// over every thread (bytes: times elementBytes).
struct SimTraffic {
  std::string array;          ///< the array's name
  uint32_t elementBytes = 0;  ///< bytes per element
  uint64_t loads = 0;         ///< elements read
  uint64_t stores = 0;        ///< elements written
  uint64_t atomics = 0;       ///< elements atomically updated
};

/// What one simulated run did.
struct SimStats {
  uint32_t blocks = 0;              ///< real blocks run
  uint32_t threadsPerBlock = 0;     ///< real threads per block
  uint64_t threadSteps = 0;         ///< statement executions summed over threads
  std::vector<SimTraffic> traffic;  ///< per global array, in the kernel's array order
  SimProfile profile;               ///< with SimOptions::profile
};

/// simulate(k, args, options): run kernel k on host arrays. Arguments are checked as for a GPU
/// launch (bindArguments) before anything runs. Throws HazardError for hazards, Error for bad
/// arguments.
SimStats simulate(const Kernel& k, const std::vector<KernelArg>& args,
                  const SimOptions& options = {});

}  // namespace obsidian
