// What a captured kernel needs and costs, as plain data (Kernel::report()): parameters, shared
// memory with each array's place and live range, global memory access sites and grid passes,
// barriers, pre- and postconditions, pass timings, and the compiler's registers and spills
// once compiled. JSON is separate (obsidian/report_json.hpp), so a program that does not ask
// for it does not compile nlohmann/json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace obsidian {

struct PassTiming {
  std::string pass;
  double milliseconds = 0;
};

struct BarrierCounts {
  uint32_t block = 0;  // __syncthreads() in the generated code
  uint32_t warp = 0;   // __syncwarp()
};

struct ReportParam {
  std::string name;
  std::string type;    // the element type for arrays, in CUDA ("uint32_t")
  std::string kind;    // "input", "output", "mutable", "length" or "scalar"
  std::string length;  // arrays: the elements the kernel may touch, in CUDA; empty otherwise
};

struct ReportPrecondition {
  std::string condition;  // in CUDA, over the scalar parameters
  std::string message;
};

// A postcondition (ensure) on an output: `condition` holds for every element `index`.
struct ReportPostcondition {
  std::string output;
  std::string condition;  // in CUDA, over the element's index `index`
  std::string index;
  std::string message;
};

// A shared array where the memory map put it; positions are pre-order statement numbers of
// the program the memory map saw.
struct ReportSharedArray {
  std::string name;
  std::string type;
  std::string level;  // of the program that allocated it: "Warp" or "Block"
  uint32_t elements = 0;
  uint32_t bytes = 0;  // all warp slices for a warp array
  uint32_t offset = 0;
  uint32_t liveFrom = 0;
  uint32_t liveTo = 0;
};

struct ReportLocalArray {
  std::string name;
  std::string type;
  uint32_t elements = 0;
};

// Where the generated code touches one global array (an input, output, mutable or grid-state
// array): its access sites, each counted in the elements it moves once it runs (a vector load
// of W elements counts W; reads the share pass bound to one variable count once). How often
// a site runs depends on the launch: SimStats::traffic counts what a run moved.
struct ReportTraffic {
  std::string array;
  std::string type;
  uint32_t loads = 0;
  uint32_t stores = 0;
  uint32_t atomics = 0;
};

// What ptxas said, once the kernel is compiled.
struct ReportCompiled {
  std::string arch;
  int registers = -1;
  int spillStoreBytes = 0;
  int spillLoadBytes = 0;
  int stackBytes = 0;
  double compileMilliseconds = 0;
};

struct KernelReport {
  std::string name;
  uint32_t threadsPerBlock = 0;
  uint32_t sharedBytes = 0;
  std::string gridBlocks;  // blocks to launch, in CUDA over the parameters
  std::vector<ReportParam> params;
  std::vector<ReportPrecondition> preconditions;
  std::vector<ReportPostcondition> postconditions;
  std::vector<ReportSharedArray> sharedArrays;
  std::vector<ReportLocalArray> localArrays;
  std::vector<ReportTraffic> traffic;
  // Loops over the grid in the program as written: one per Push<Grid> output, one for all the
  // parts of a fused one (pConcat of fuse). Each pass reads its inputs again.
  uint32_t gridPasses = 0;
  BarrierCounts barriers;
  std::vector<std::string> nvrtcOptions;  // CaptureOptions::nvrtcOptions
  std::vector<PassTiming> timings;        // reify first, then each pass
  std::optional<ReportCompiled> compiled;
};

}  // namespace obsidian
