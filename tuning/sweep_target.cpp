// The device a sweep runs on (see sweep_target.hpp): required, described, its context made.
#include "sweep_target.hpp"

#include <obsidian/runtime.hpp>

#include "sweep_common.hpp"

namespace tuning::detail {

using obsidian::Error;
namespace gpu = obsidian::gpu;

void requireGpu(bool simulate, SweepSummary& s) {
  const auto t0 = Clock::now();
  if (!simulate && !gpu::available()) {
    throw Error("no CUDA device (" + gpu::unavailableReason() +
                "); use --simulate to verify the points on the CPU simulator");
  }
  s.deviceInitSeconds += secondsSince(t0);
}

OpenDevice openDevice(bool simulate, SweepSummary& s) {
  if (simulate) return {"sm_90", "simulator", {}};
  const auto t0 = Clock::now();
  const gpu::DeviceInfo info = gpu::deviceInfo();
  s.deviceInitSeconds += secondsSince(t0);
  return {info.arch(), info.name, std::async(std::launch::async, [] { gpu::Device::get(); })};
}

void awaitContext(OpenDevice& d, SweepSummary& s) {
  if (!d.context.valid()) return;
  const auto t0 = Clock::now();
  d.context.get();
  s.deviceInitSeconds += secondsSince(t0);
}

}  // namespace tuning::detail
