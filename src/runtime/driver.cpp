// Loading the CUDA driver with dlopen (see driver.hpp).
#include "runtime/driver.hpp"

#include <dlfcn.h>

#include <mutex>

#include "obsidian/runtime.hpp"

namespace obsidian::driver {
namespace {

#define OBSIDIAN_STR(x) #x
#define OBSIDIAN_XSTR(x) OBSIDIAN_STR(x)

struct Loaded {
  Api api;
  bool ok = false;
  std::string reason;
};

Loaded load() {
  Loaded l;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    l.reason = std::string("libcuda.so.1 cannot be loaded (") + (e ? e : "unknown reason") +
               "): no NVIDIA driver on this machine";
    return l;
  }
  // The expanded macro name is the versioned symbol cuda.h maps the call to (cuMemAlloc_v2).
#define OBSIDIAN_DRIVER_FUNCTION(name)                                                     \
  l.api.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, OBSIDIAN_XSTR(name)));       \
  if (!l.api.name) {                                                                       \
    l.reason = std::string("the driver lacks ") + OBSIDIAN_XSTR(name) + ": it is too old"; \
    return l;                                                                              \
  }
#include "runtime/driver_functions.inc"
#undef OBSIDIAN_DRIVER_FUNCTION
  const CUresult r = l.api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    l.api.cuGetErrorName(r, &name);
    l.reason = std::string("cuInit failed: ") + (name ? name : "unknown error");
    return l;
  }
  int count = 0;
  if (l.api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    l.reason = "the driver reports no CUDA device";
    return l;
  }
  l.ok = true;
  return l;
}

const Loaded& loaded() {
  // Loaded once (thread-safe) and never destroyed: devices release their contexts at exit.
  static const Loaded& l = *new Loaded(load());
  return l;
}

}  // namespace

const Api* api() { return loaded().ok ? &loaded().api : nullptr; }

std::string unavailableReason() { return loaded().ok ? std::string() : loaded().reason; }

void check(CUresult result, const char* call, const std::string& kernel) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  if (const Api* a = api()) {
    a->cuGetErrorName(result, &name);
    a->cuGetErrorString(result, &text);
  }
  std::string message = std::string(call) + " failed";
  if (!kernel.empty()) message += " for kernel " + kernel;
  message += std::string(": ") + (name ? name : ("CUresult " + std::to_string(result)).c_str());
  if (text) message += std::string(" (") + text + ")";
  throw CudaError(message, static_cast<int>(result));
}

}  // namespace obsidian::driver
