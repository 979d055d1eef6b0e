// currentSm (include/obsidian/device/policy.hpp): the architecture a device algorithm picks its
// policy for. A stand-in until the lead's own definition is merged.
#include "obsidian/device/policy.hpp"

#include "obsidian/runtime.hpp"

namespace obsidian {

SmVersion currentSm() {
  if (!gpu::available()) return kSimulatedSm;
  const gpu::DeviceInfo& info = gpu::Device::get().info();
  return static_cast<SmVersion>(info.major * 10 + info.minor);
}

}  // namespace obsidian
