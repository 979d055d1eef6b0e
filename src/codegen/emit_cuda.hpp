// Pass: emit CUDA. Prints a virtualized, memory-mapped kernel as CUDA C++.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/pipeline_state.hpp"
#include "obsidian/ir.hpp"

namespace obsidian {

// emitCuda(k, memory): the whole translation unit: a self-contained prelude (NVRTC has no
// standard headers), and one extern "C" __global__ function named k.name with __launch_bounds__
// of k.threadsPerBlock. Shared arrays become typed pointers into one dynamic shared buffer of
// memory.sharedBytes at their offsets in `memory`, the memory map's result (without one: no
// shared memory, as for hand-built IR in tests). A dumb printer: every IR node has its case,
// and ForAll/DistrPar (which virtualize removes) are internal errors.
//
// Bounds checks (the checked mode of launch and of exported headers): with `checks` other than
// None, every write and atomic to a global array (a parameter or grid state) is guarded by
// `index < length`; a write out of bounds is not done, and the first one is recorded in the
// module's `unsigned long long <k.name>_violation` as ((array id + 1) << 32) | index (see
// decodeViolation). IfDefined puts the guards and the record under #ifdef OBSIDIAN_CHECKED.
enum class Checks : uint8_t { None, Always, IfDefined };
std::string emitCuda(const KernelIR& k, const MemoryMap& memory = {}, Checks checks = Checks::None);

// The line of emitCuda(k, memory) (Checks::None: Kernel::cuda()) where each statement of k.body
// starts, for the statements in pre-order (the order sim::Compiler numbers them in).
std::vector<uint32_t> cudaStatementLines(const KernelIR& k, const MemoryMap& memory);

// Just the __global__ function (no prelude, no header comment). `externC` false gives it
// internal C++ linkage (static), so exported kernels live in a namespace of the user's choosing
// and a header can be included by several translation units.
std::string emitKernelFunction(const KernelIR& k, const MemoryMap& memory, bool externC,
                               Checks checks = Checks::None);

// Whether k uses a small float (f16, bf16, fp8) anywhere: in an array, a parameter or any
// expression; its translation unit then includes ir::printSmallFloatPrelude().
bool usesSmallFloats(const KernelIR& k);

// The name of the violation record of a checked kernel.
std::string violationSymbol(const KernelIR& k);
// What a non-zero violation record says: "a write to m0[1234] is out of bounds: m0 has 100
// elements ..."; `length` evaluates a parameter's length expression for the launch.
std::string describeViolation(const KernelIR& k, uint64_t record,
                              const std::function<uint64_t(const ExpPtr&)>& length);

}  // namespace obsidian
