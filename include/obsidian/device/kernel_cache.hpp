// The kernels of the device algorithms (histogramEven, transpose, ...), made once per key and
// kept for the process: a capture takes milliseconds, and the GPU runtime loads a kernel once
// per Kernel object, so a call that captured afresh every time would also load afresh.
#pragma once

#include <functional>
#include <string>

#include "obsidian/kernel.hpp"

namespace obsidian::detail {

// The kernel cached under `key` (which must name everything the kernel depends on), made with
// `make` the first time. Safe to call from several threads.
Kernel cachedDeviceKernel(const std::string& key, const std::function<Kernel()>& make);

}  // namespace obsidian::detail
