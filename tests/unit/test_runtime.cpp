// The GPU runtime on any machine: without a device every use says "no CUDA device" clearly,
// and launch arguments are checked before the device is touched, with the same messages as
// the simulator. (tests/gpu/ holds the tests that need a device.)
#include <doctest/doctest.h>

#include <obsidian/runtime.hpp>
#include <obsidian/sim.hpp>
#include <obsidian/timing.hpp>

#include "../../examples/increment/increment.hpp"
#include "../../examples/reduce/reduce.hpp"
#include "../support.hpp"
#include "runtime/driver.hpp"

using namespace obsidian;

TEST_CASE("runtime: no CUDA device is a clear error, and the library keeps working") {
  if (gpu::available()) {
    MESSAGE("a CUDA device is present; the no-device path is not exercised here");
    CHECK(gpu::deviceCount() > 0);
    CHECK(gpu::unavailableReason().empty());
    return;
  }
  CHECK(gpu::deviceCount() == 0);
  CHECK_FALSE(gpu::unavailableReason().empty());
  CHECK_THROWS_WITH_AS(gpu::Device::get(), doctest::Contains("no CUDA device: "), Error);
  CHECK_THROWS_WITH_AS(gpu::deviceInfo(), doctest::Contains("no CUDA device: "), Error);
  CHECK_THROWS_WITH_AS(gpu::DeviceBuffer<uint32_t>(16), doctest::Contains("no CUDA device: "),
                       Error);
  // Valid arguments get as far as the device.
  const Kernel k = paper::red3Kernel();
  const auto fake = KernelArg::deviceArray(ScalarType::U32, 0x1000, 1024, false);
  const auto fakeOut = KernelArg::deviceArray(ScalarType::U32, 0x2000, 2, true);
  CHECK_THROWS_WITH_AS(gpu::launch(k, {fake, fakeOut}), doctest::Contains("no CUDA device: "),
                       Error);
  // ...and the simulator still runs.
  std::vector<uint32_t> in(1024, 1), out(2);
  simulate(k, {in, out});
  CHECK(out == std::vector<uint32_t>{512, 512});
}

TEST_CASE("runtime: launch arguments are checked before the device is touched") {
  const Kernel k = paper::red3Kernel();
  const auto in = KernelArg::deviceArray(ScalarType::U32, 0x1000, 1000, false);
  const auto out = KernelArg::deviceArray(ScalarType::U32, 0x2000, 2, true);
  CHECK_THROWS_WITH_AS(gpu::launch(k, {in, out}),
                       "launch of kernel red3: splitUp(512) needs a length divisible by 512 "
                       "(n0 % 512u == 0u fails with n0 = 1000)",
                       Error);
  CHECK_THROWS_WITH_AS(gpu::launch(k, {in}),
                       "launch of kernel red3: expected 2 argument(s) (in0: uint32_t array, out0: "
                       "writable uint32_t array); got 1",
                       Error);
  const auto readOnlyOut = KernelArg::deviceArray(ScalarType::U32, 0x2000, 2, false);
  const auto in1024 = KernelArg::deviceArray(ScalarType::U32, 0x1000, 1024, false);
  CHECK_THROWS_WITH_AS(gpu::launch(k, {in1024, readOnlyOut}),
                       doctest::Contains("argument 1 (out0) is written by the kernel"), Error);
  const auto small = KernelArg::deviceArray(ScalarType::U32, 0x2000, 1, true);
  CHECK_THROWS_WITH_AS(gpu::launch(k, {in1024, small}),
                       "launch of kernel red3: argument out0 has 1 elements; the kernel writes 2 "
                       "(n0 / 512u)",
                       Error);
  const auto floats = KernelArg::deviceArray(ScalarType::F32, 0x1000, 1024, false);
  CHECK_THROWS_WITH_AS(gpu::launch(k, {floats, out}),
                       "launch of kernel red3: argument 0 (in0) must be an array of uint32_t; got "
                       "a read-only device array of 1024 float",
                       Error);
  const auto null = KernelArg::deviceArray(ScalarType::U32, 0, 1024, false);
  CHECK_THROWS_WITH_AS(gpu::launch(k, {null, out}),
                       "launch of kernel red3: argument 0 (in0) is a null array", Error);
  std::vector<uint32_t> host(1024), hostOut(2);
  CHECK_THROWS_WITH_AS(gpu::launch(k, {host, hostOut}),
                       "launch of kernel red3: argument 0 is a host array; the GPU needs a "
                       "gpu::DeviceBuffer",
                       Error);
  CHECK_THROWS_WITH_AS(simulate(k, {in1024, out}),
                       "simulate(kernel red3): argument 0 is a device buffer; the simulator runs "
                       "on host arrays (std::vector, std::span)",
                       Error);
}

TEST_CASE("runtime: a failed CUDA call names the call, the error and the kernel") {
  CHECK_NOTHROW(driver::check(CUDA_SUCCESS, "cuMemAlloc", "red3"));
  try {
    driver::check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc", "red3");
    FAIL("check did not throw");
  } catch (const CudaError& e) {
    CHECK(e.code() == CUDA_ERROR_OUT_OF_MEMORY);
    const std::string expected =
        gpu::available() ? "cuMemAlloc failed for kernel red3: CUDA_ERROR_OUT_OF_MEMORY "
                           "(out of memory)"
                         : "cuMemAlloc failed for kernel red3: CUresult 2";
    CHECK(std::string(e.what()) == expected);
  }
}

TEST_CASE("gpu::summarize: the median, min and max of a timing's samples") {
  gpu::Timing odd;
  odd.samplesMs = {3.0, 1.0, 2.0};
  gpu::summarize(odd);
  CHECK(odd.medianMs == 2.0);
  CHECK(odd.minMs == 1.0);
  CHECK(odd.maxMs == 3.0);
  gpu::Timing even;
  even.samplesMs = {4.0, 1.0, 2.0, 3.0};
  gpu::summarize(even);
  CHECK(even.medianMs == 2.5);
  gpu::Timing none;
  CHECK(::testing::errorOf([&] { gpu::summarize(none); }) ==
        "gpu::summarize: a timing needs at least one sample");
}
