// The pass pipeline's entry and what it produces (internal: the public Kernel hides it).
#pragma once

#include <string>
#include <vector>

#include "ir/pipeline_state.hpp"
#include "obsidian/ir.hpp"
#include "obsidian/kernel.hpp"
#include "obsidian/report.hpp"

namespace obsidian {

// Faults planted in the lowered kernel, so that tests and the fuzzer can check that the
// simulator catches what they break (testing::withFaults in kernel/kernel_access.hpp).
struct Faults {
  int dropBarrier = -1;     // remove the n-th barrier (pre-order) of the lowered kernel
  std::string shrinkArray;  // declare this shared array shorter than it was allocated:
  uint32_t shrinkTo = 0;    //   shrinkTo elements
};

struct LowerOptions {
  uint32_t sharedMemoryLimit = 227 * 1024;
  bool dumpIr = false;
  bool reuseSharedMemory = true;
  bool shareSubexpressions = true;
  Faults faults;
};

// Everything lowering produced; see lower.cpp for the passes.
struct LoweredKernel {
  KernelIR reified;
  KernelIR lowered;
  // The memory map's result for `lowered`: its shared arrays' offsets and warp slices, each
  // placed array's bytes and live range, and the kernel's shared bytes.
  MemoryMap memory;
  std::string cuda;
  BarrierCounts barriers;
  std::vector<PassTiming> timings;        // reify first, then each pass
  std::vector<std::string> nvrtcOptions;  // CaptureOptions::nvrtcOptions
  std::string irDump;                     // the IR after each pass, when dumping was asked for
  LowerOptions options;                   // what it was lowered with
  std::vector<PostconditionCheck> postconditions;  // set by capture
};

// The pass pipeline (reified IR -> CUDA). Throws Error for user mistakes it finds.
LoweredKernel lowerKernel(KernelIR reified, const LowerOptions& options);

}  // namespace obsidian
