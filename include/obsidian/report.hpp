/// What a captured kernel needs and costs, as plain data (Kernel::report()): parameters, shared
/// memory with each array's place and live range, global memory access sites and grid passes,
/// barriers, pre- and postconditions, pass timings, and the compiler's registers and spills
/// once compiled. JSON is separate (obsidian/report_json.hpp), so a program that does not ask
/// for it does not compile nlohmann/json.
/// @file
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace obsidian {

/// How long one step of making the kernel took.
struct PassTiming {
  std::string pass;         ///< "reify" or the pass's name
  double milliseconds = 0;  ///< its wall time
};

/// The barriers in the generated code, by level.
struct BarrierCounts {
  uint32_t block = 0;  ///< __syncthreads() in the generated code
  uint32_t warp = 0;   ///< __syncwarp()
};

/// One parameter of the kernel, in order.
struct ReportParam {
  std::string name;    ///< its name in the generated code
  std::string type;    ///< the element type for arrays, in CUDA ("uint32_t")
  std::string kind;    ///< "input", "output", "mutable", "length" or "scalar"
  std::string length;  ///< arrays: the elements the kernel may touch, in CUDA; empty otherwise
};

/// A precondition (require, or a combinator's check on dynamic lengths) checked before launch.
struct ReportPrecondition {
  std::string condition;  ///< in CUDA, over the scalar parameters
  std::string message;    ///< what a failure reports
};

/// A postcondition (ensure) on an output: `condition` holds for every element `index`.
struct ReportPostcondition {
  std::string output;     ///< the output's name
  std::string condition;  ///< in CUDA, over the element's index `index`
  std::string index;      ///< the name of the index variable in `condition`
  std::string message;    ///< what a violation reports
};

/// A shared array where the memory map put it; positions are pre-order statement numbers of
/// the program the memory map saw.
struct ReportSharedArray {
  std::string name;       ///< its name in the generated code
  std::string type;       ///< the element type, in CUDA
  std::string level;      ///< of the program that allocated it: "Warp" or "Block"
  uint32_t elements = 0;  ///< its length
  uint32_t bytes = 0;     ///< all warp slices for a warp array
  uint32_t offset = 0;    ///< in bytes, in the kernel's dynamic shared memory
  uint32_t liveFrom = 0;  ///< the first position where it is live
  uint32_t liveTo = 0;    ///< the last position where it is live
};

/// A per-thread array (force at Thread level), in registers or local memory.
struct ReportLocalArray {
  std::string name;       ///< its name in the generated code
  std::string type;       ///< the element type, in CUDA
  uint32_t elements = 0;  ///< its length
};

/// Where the generated code touches one global array (an input, output, mutable or grid-state
/// array): its access sites, each counted in the elements it moves once it runs (a vector load
/// of W elements counts W; reads the share pass bound to one variable count once). How often
/// a site runs depends on the launch: SimStats::traffic counts what a run moved.
struct ReportTraffic {
  std::string array;     ///< the array's name
  std::string type;      ///< the element type, in CUDA
  uint32_t loads = 0;    ///< elements read per run of its read sites
  uint32_t stores = 0;   ///< elements written per run of its write sites
  uint32_t atomics = 0;  ///< elements updated per run of its atomic sites
};

/// What ptxas said, once the kernel is compiled.
struct ReportCompiled {
  std::string arch;                ///< the arch compiled for ("sm_90")
  int registers = -1;              ///< per thread; -1: ptxas reported none
  int spillStoreBytes = 0;         ///< bytes of spill stores
  int spillLoadBytes = 0;          ///< bytes of spill loads
  int stackBytes = 0;              ///< stack frame
  double compileMilliseconds = 0;  ///< the compile's wall time
};

/// What a captured kernel needs and costs (Kernel::report()); as JSON: toJson.
struct KernelReport {
  std::string name;                               ///< the kernel's name
  uint32_t threadsPerBlock = 0;                   ///< real threads per block
  uint32_t sharedBytes = 0;                       ///< dynamic shared memory per block
  std::string gridBlocks;                         ///< blocks to launch, in CUDA over the parameters
  std::vector<ReportParam> params;                ///< in order
  std::vector<ReportPrecondition> preconditions;  ///< checked before launch
  std::vector<ReportPostcondition> postconditions;  ///< checked by simulate and checked launches
  std::vector<ReportSharedArray> sharedArrays;      ///< where the memory map put each
  std::vector<ReportLocalArray> localArrays;        ///< per-thread arrays
  std::vector<ReportTraffic> traffic;               ///< one entry per global array touched
  /// Loops over the grid in the program as written: one per Push<Grid> output, one for all the
  /// parts of a fused one (pConcat of fuse). Each pass reads its inputs again.
  uint32_t gridPasses = 0;
  BarrierCounts barriers;                  ///< in the generated code
  std::vector<std::string> nvrtcOptions;   ///< CaptureOptions::nvrtcOptions
  std::vector<PassTiming> timings;         ///< reify first, then each pass
  std::optional<ReportCompiled> compiled;  ///< the latest compile; empty until compiled
};

}  // namespace obsidian
