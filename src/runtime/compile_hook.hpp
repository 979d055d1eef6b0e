// A test-only hook into NVRTC compiles: tests that a compile on one thread does not hold up
// other threads (a launch of a loaded kernel) stop the compile at a known point with it, so
// they need not race the compile's duration (which instrumentation such as compute-sanitizer
// changes by orders of magnitude).
#pragma once

#include <functional>
#include <string>

namespace obsidian::testing {
// `hook(kernelName)` runs on the compiling thread at the start of every compileCuda, before
// NVRTC is called; an empty function removes it. Not for concurrent installs.
void setCompileHook(std::function<void(const std::string& kernelName)> hook);
}  // namespace obsidian::testing
