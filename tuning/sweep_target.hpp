// Where a sweep's points are built and run (sweep_target.cpp): the mode, the architecture to
// compile for and the device; the GPU required unless simulating, and the device's context
// created while the first points are generated and compiled.
#pragma once

#include <future>
#include <string>

#include "sweep.hpp"

namespace tuning::detail {

// Where a point is built and run: the mode's name, the architecture to compile for, the device.
struct Target {
  std::string mode, arch, device;
};

// Throws the user-level Error for a GPU sweep without a GPU. Asking loads and initializes the
// driver (cuInit: about as long as creating the context), counted as the device's
// initialization.
void requireGpu(bool simulate, SweepSummary& s);

// Where points are built and run: the architecture to compile for and the device's name, read
// without the device's context, and (on the GPU) the context being created meanwhile (~0.1 s),
// so that a sweep generates and compiles its first points while it is made.
struct OpenDevice {
  std::string arch, device;
  std::future<void> context;  // valid until awaited
};
OpenDevice openDevice(bool simulate, SweepSummary& s);
// Waits for the context (the time counted as the device's initialization).
void awaitContext(OpenDevice& d, SweepSummary& s);

}  // namespace tuning::detail
