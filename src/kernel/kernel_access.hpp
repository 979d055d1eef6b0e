// The library's own access to a Kernel's lowered form (the public header hides the pipeline),
// and the test-only entry that plants faults in a kernel.
#pragma once

#include "codegen/lower.hpp"
#include "obsidian/kernel.hpp"

namespace obsidian {
namespace detail {

struct KernelAccess {
  static Kernel make(LoweredKernel lowered);
  static const LoweredKernel& lowered(const Kernel& k) { return *k.data_; }
};

}  // namespace detail

namespace testing {
// k lowered again from its reified IR with `faults` planted (a dropped barrier, a shrunk
// array), so tests and the fuzzer can check that the simulator catches what they break.
// Throws Error when the fault names a barrier or an array the kernel does not have.
Kernel withFaults(const Kernel& k, const Faults& faults);
}  // namespace testing

}  // namespace obsidian
