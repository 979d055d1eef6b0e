// NVRTC, loaded with dlopen on first use like the driver (runtime/driver.hpp), so that a
// program built with obsidian starts on machines without NVRTC and says what it looked for,
// and how to fix it, when it first needs to compile. nvrtc.h is included for the types and
// the prototypes the function pointers are declared from; nothing links libnvrtc.
#pragma once

#include <nvrtc.h>

#include <string>
#include <vector>

namespace obsidian::nvrtc {

struct Api {
#define OBSIDIAN_NVRTC_FUNCTION(name) decltype(&::name) name = nullptr;
#include "runtime/nvrtc_functions.inc"
#undef OBSIDIAN_NVRTC_FUNCTION
};

// The environment variable that names the NVRTC library to load (a path or a file name).
inline constexpr const char* kLibraryVariable = "OBSIDIAN_NVRTC_LIBRARY";

// Where NVRTC is looked for, in order: `variable` alone when it is set and not empty (the user
// chose); else the soname of the toolkit obsidian was built against (libnvrtc.so.13 for CUDA
// 13), plain libnvrtc.so, and the soname in that toolkit's library directory (found even where
// the toolkit is not on the loader's path).
std::vector<std::string> candidates(const char* variable);

// NVRTC from the first candidate that loads and has every function obsidian uses. Throws Error
// naming every candidate tried (and why, where it was not simply missing) and the fix:
// "NVRTC not found: tried libnvrtc.so.13, libnvrtc.so; install the CUDA toolkit's NVRTC or set
// OBSIDIAN_NVRTC_LIBRARY to its path".
Api load(const std::vector<std::string>& candidates);

// The process's NVRTC, loaded once on first use from candidates(getenv(kLibraryVariable)).
// Where it is absent, every call throws load's Error.
const Api& api();

}  // namespace obsidian::nvrtc
