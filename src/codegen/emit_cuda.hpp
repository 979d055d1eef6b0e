// Pass: emit CUDA. Prints a virtualized, memory-mapped kernel as CUDA C++.
#pragma once

#include <string>

#include "obsidian/ir.hpp"

namespace obsidian {

// emitCuda(k): the whole translation unit: a self-contained prelude (NVRTC has no standard
// headers), and one extern "C" __global__ function named k.name with __launch_bounds__ of
// k.threadsPerBlock. Shared arrays become typed pointers into one dynamic shared buffer at
// their memory-map offsets. A dumb printer: every IR node has its case, and ForAll/DistrPar
// (which virtualize removes) are internal errors.
std::string emitCuda(const KernelIR& k);

// Just the __global__ function (no prelude, no header comment). `externC` false gives it
// internal C++ linkage (static), so exported kernels live in a namespace of the user's choosing
// and a header can be included by several translation units.
std::string emitKernelFunction(const KernelIR& k, bool externC);

}  // namespace obsidian
