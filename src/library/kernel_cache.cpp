// The device algorithms' kernel cache (include/obsidian/device/kernel_cache.hpp).
#include "obsidian/device/kernel_cache.hpp"

#include <map>
#include <mutex>

namespace obsidian::detail {

Kernel cachedDeviceKernel(const std::string& key, const std::function<Kernel()>& make) {
  static std::mutex mutex;
  static std::map<std::string, Kernel> kernels;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = kernels.find(key); it != kernels.end()) return it->second;
  Kernel k = make();
  kernels.emplace(key, k);
  return k;
}

}  // namespace obsidian::detail
