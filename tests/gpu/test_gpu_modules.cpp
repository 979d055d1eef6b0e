// GPU test (label gpu): the device's cache of loaded modules stays within its capacity over
// more distinct kernels than it holds, every kernel still launches correctly (evicted ones are
// loaded again), and a Function handle that is held keeps its module loaded and launchable.
#include <doctest/doctest.h>

#include <numeric>
#include <obsidian/obsidian.hpp>
#include <obsidian/runtime.hpp>

#include "runtime/driver.hpp"

using namespace obsidian;

namespace {

// x + c for every element: a distinct source, so a distinct module, per c.
Kernel addKernel(uint32_t c) {
  return capture("add_" + std::to_string(c), 256, [c](DPull<EWord32> in) {
    return push<Grid>(fmap([c](EWord32 x) { return x + c; }, in));
  });
}

// Restores the device's capacity whatever the test does.
struct CapacityGuard {
  gpu::Device& device;
  size_t capacity;
  ~CapacityGuard() { device.setModuleCapacity(capacity); }
};

}  // namespace

TEST_CASE("gpu: loaded modules stay within the capacity, and held functions stay loaded") {
  gpu::Device& d = gpu::Device::get();
  const CapacityGuard guard{d, d.moduleCapacity()};
  CHECK(guard.capacity == gpu::Device::kDefaultModuleCapacity);
  CHECK_THROWS_WITH_AS(d.setModuleCapacity(0), doctest::Contains("at least one module"), Error);
  constexpr size_t capacity = 4;
  d.setModuleCapacity(capacity);
  CHECK(d.loadedModules() <= capacity);

  const uint32_t n = 1000;
  std::vector<uint32_t> in(n);
  std::iota(in.begin(), in.end(), 7u);
  gpu::DeviceBuffer<uint32_t> din(in), dout(n);
  std::vector<Kernel> kernels;
  for (uint32_t c = 1; c <= 12; ++c) kernels.push_back(addKernel(c));
  auto launchAndCheck = [&](size_t i) {
    dout.zero();
    gpu::launch(kernels[i], {din, dout});
    const std::vector<uint32_t> out = dout.download();
    bool ok = true;
    for (uint32_t j = 0; j < n; ++j) ok = ok && out[j] == in[j] + static_cast<uint32_t>(i + 1);
    CHECK_MESSAGE(ok, "kernel " << kernels[i].name());
  };

  for (int round = 0; round < 2; ++round) {  // the second round loads evicted modules again
    for (size_t i = 0; i < kernels.size(); ++i) {
      launchAndCheck(i);
      CHECK(d.loadedModules() <= capacity);
    }
  }
  CHECK(d.loadedModules() == capacity);

  {
    const gpu::Function held = d.function(kernels[0]);
    for (size_t i = 1; i < kernels.size(); ++i) {
      launchAndCheck(i);
      CHECK(d.loadedModules() <= capacity + 1);  // the held module is spared
    }
    // Not evicted and loaded again: the same function.
    CHECK(d.function(kernels[0]).handle() == held.handle());
    // ...and launchable through the handle itself.
    dout.zero();
    CUdeviceptr a = din.address(), b = dout.address();
    uint32_t count = n;
    void* params[] = {&a, &count, &b};
    d.makeCurrent();
    driver::check(
        driver::api()->cuLaunchKernel(static_cast<CUfunction>(held.handle()), (n + 255) / 256, 1, 1,
                                      256, 1, 1, 0, nullptr, params, nullptr),
        "cuLaunchKernel");
    d.synchronize();
    const std::vector<uint32_t> out = dout.download();
    bool ok = true;
    for (uint32_t j = 0; j < n; ++j) ok = ok && out[j] == in[j] + 1;
    CHECK(ok);
  }
  launchAndCheck(5);  // held no more: the cache trims back to its capacity
  CHECK(d.loadedModules() == capacity);
}
