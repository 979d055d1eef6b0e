// Runtime costs on the device: NVRTC compile time of increment and red5, a kernel-cache disk
// hit (a fresh KernelCache on a warm directory, as a new process sees it), and the launch
// overhead of gpu::launch against a bare cuLaunchKernel of the same loaded function.
// Usage: obsidian-bench-runtime [results.json]
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <obsidian/cache.hpp>
#include <obsidian/runtime.hpp>

#include "../../examples/increment/increment.hpp"
#include "runtime/driver.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace obsidian;
  if (!gpu::available()) {
    std::cout << "no CUDA device (" << gpu::unavailableReason() << "): nothing to measure\n";
    return 0;
  }
  nlohmann::json out;
  gpu::Device& device = gpu::Device::get();
  out["device"] = device.info().name;
  CompileOptions options;
  options.arch = device.info().arch();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("obsidian-bench-cache-" + std::to_string(getpid()));

  for (const Kernel& k : {paper::incrementKernel(),
                          obsidian::tileReduceKernel<uint32_t>(obsidian::BlockReduceAlgorithm::Red5,
                                                               obsidian::Sum{}, 4096, 512)}) {
    std::vector<double> nvrtc, disk;
    for (int r = 0; r < 5; ++r) {
      std::filesystem::remove_all(dir);
      KernelCache cold(dir);
      auto t = Clock::now();
      cold.get(k.cuda(), k.name(), options);
      nvrtc.push_back(msSince(t));
      for (int i = 0; i < 20; ++i) {
        KernelCache fresh(dir);  // nothing in memory: a new process's view
        t = Clock::now();
        fresh.get(k.cuda(), k.name(), options);
        disk.push_back(msSince(t));
      }
    }
    out[k.name()]["nvrtcMs"] = medianOf(nvrtc);
    out[k.name()]["diskHitMs"] = medianOf(disk);
    std::cout << k.name() << ": NVRTC compile " << medianOf(nvrtc) << " ms, disk-cache hit "
              << medianOf(disk) << " ms (medians)\n";
  }
  std::filesystem::remove_all(dir);

  // Launch overhead: many launches of a small kernel without synchronizing, per launch.
  const Kernel k = paper::incrementKernel();
  std::vector<uint32_t> host(256, 1);
  gpu::DeviceBuffer<uint32_t> din(host), dout(256);
  gpu::LaunchOptions noSync;
  noSync.synchronize = false;
  gpu::launch(k, {din, dout});                        // load and warm up
  const gpu::Function function = device.function(k);  // held: its module stays loaded
  CUfunction f = static_cast<CUfunction>(function.handle());
  CUdeviceptr a = din.address(), b = dout.address();
  uint32_t n = 256;
  void* params[] = {&a, &n, &b};
  const int launches = 20000;
  std::vector<double> ours, bare;
  for (int r = 0; r < 7; ++r) {
    device.synchronize();
    auto t = Clock::now();
    for (int i = 0; i < launches; ++i) {
      driver::check(
          driver::api()->cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr),
          "cuLaunchKernel");
    }
    bare.push_back(msSince(t) * 1000 / launches);
    device.synchronize();
    t = Clock::now();
    for (int i = 0; i < launches; ++i) gpu::launch(k, {din, dout}, noSync);
    ours.push_back(msSince(t) * 1000 / launches);
    device.synchronize();
  }
  out["launchUs"]["bareCuLaunchKernel"] = medianOf(bare);
  out["launchUs"]["gpuLaunch"] = medianOf(ours);
  out["launchUs"]["overhead"] = medianOf(ours) - medianOf(bare);
  std::cout << "launch: bare cuLaunchKernel " << medianOf(bare) << " us, gpu::launch "
            << medianOf(ours) << " us, overhead " << medianOf(ours) - medianOf(bare)
            << " us per launch (medians of 7 x " << launches << ")\n";
  if (dout.download() != std::vector<uint32_t>(256, 2)) {
    std::cerr << "wrong result\n";
    return 1;
  }
  if (argc > 1) std::ofstream(argv[1]) << out.dump(2) << "\n";
  return 0;
}
