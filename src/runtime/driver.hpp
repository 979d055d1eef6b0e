// The CUDA driver API, loaded with dlopen("libcuda.so.1") on first use, so that the library,
// its tests and the demo start and run on machines without a driver or GPU. Every call is
// checked by check(), which throws CudaError naming the call, cuGetErrorName and the kernel.
#pragma once

#include <cuda.h>

#include <string>

namespace obsidian::driver {

struct Api {
#define OBSIDIAN_DRIVER_FUNCTION(name) decltype(&::name) name = nullptr;
#include "runtime/driver_functions.inc"
#undef OBSIDIAN_DRIVER_FUNCTION
};

// The loaded and initialised driver, or null where there is none (see unavailableReason()).
const Api* api();
// Why api() is null or no device can be used: "libcuda.so.1 cannot be loaded (...)",
// "cuInit failed: CUDA_ERROR_NO_DEVICE", ...
std::string unavailableReason();

// Throws CudaError("<call> failed[ for kernel <kernel>]: <CUDA_ERROR_NAME> (<description>)").
void check(CUresult result, const char* call, const std::string& kernel = "");

}  // namespace obsidian::driver

#define OBSIDIAN_CU(call, ...) \
  ::obsidian::driver::check(::obsidian::driver::api()->call(__VA_ARGS__), #call)
#define OBSIDIAN_CU_KERNEL(kernel, call, ...) \
  ::obsidian::driver::check(::obsidian::driver::api()->call(__VA_ARGS__), #call, kernel)
