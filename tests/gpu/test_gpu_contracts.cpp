// GPU tests of contracts and named parameters (label gpu): a checked launch runs the kernel's
// postconditions on the device and reports the first failing element exactly as the simulator
// does; an unchecked launch does not check; preconditions refuse the launch; named kernels run.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../contract_kernels.hpp"
#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::testing;
using ::testing::errorOf;

TEST_CASE("gpu: a checked launch checks postconditions like the simulator") {
  const Kernel k = sortedCopy();
  const size_t n = (size_t{1} << 22) + 77;  // many blocks of the check kernel, and a tail
  std::vector<uint32_t> in(n);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint32_t>(i / 5);
  gpu::DeviceBuffer<uint32_t> din(in), out(n);
  gpu::LaunchOptions checked;
  checked.checked = true;
  gpu::launch(k, {din, out}, checked);  // holds
  CHECK(out.download() == in);
  // Two failures: the first is reported, whichever thread found it first.
  std::swap(in[3000001], in[4000000]);
  std::swap(in[1234567], in[2345678]);
  din.upload(in);
  const std::string gpuError = errorOf([&] { gpu::launch(k, {din, out}, checked); });
  CHECK(
      gpuError.starts_with("launch of kernel sortedCopy (checked): postcondition \"out is "
                           "sorted\" fails: out0[1234568] = 246913 (the first failing element "
                           "of out0;"));
  // An unchecked launch does not look; the simulator reports the same element.
  gpu::launch(k, {din, out});
  CHECK(out.download() == in);
  std::vector<uint32_t> prefix(in.begin(), in.begin() + 2000000), simOut(2000000);
  CHECK(errorOf([&] {
          simulate(k, {prefix, simOut});
        })
            .starts_with("simulate(kernel sortedCopy): postcondition \"out is sorted\" fails: "
                         "out0[1234568] = 246913 (the first failing element of out0;"));
}

TEST_CASE("gpu: named parameters, a precondition and tuple postconditions") {
  const Kernel saxpy = namedSaxpy();
  const size_t n = size_t{1} << 20;
  std::vector<float> x(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000) * 0.5f;
    y[i] = static_cast<float>(i % 7) - 3.0f;
  }
  gpu::DeviceBuffer<float> dx(x), dy(y), dz(n), shortY(n - 256);
  gpu::LaunchOptions checked;
  checked.checked = true;
  gpu::launch(saxpy, {2.0f, dx, dy, dz}, checked);
  const std::vector<float> z = dz.download();
  for (size_t i = 0; i < n; ++i) REQUIRE(z[i] == 2.0f * x[i] + y[i]);
  CHECK(errorOf([&] {
          gpu::launch(saxpy, {2.0f, dx, shortY, dz});
        }).starts_with("launch of kernel saxpy: x and y have the same length"));
  x[777] = -10.0f;
  dx.upload(x);
  CHECK(errorOf([&] {
          gpu::launch(saxpy, {2.0f, dx, dy, dz}, checked);
        })
            .starts_with("launch of kernel saxpy (checked): postcondition \"z is not below y\" "
                         "fails: z[777] = -23 (the first failing element of z;"));

  const Kernel pairs = boundedPairs();
  std::vector<uint32_t> values = ::testing::randomWords(100000, 9, 500);
  values[54321] = 9999;
  gpu::DeviceBuffer<uint32_t> dv(values), first(values.size()), second(values.size());
  CHECK(errorOf([&] {
          gpu::launch(pairs, {dv, 500u, first, second}, checked);
        })
            .starts_with("launch of kernel boundedPairs (checked): postcondition \"every pair's "
                         "first is below limit\" fails: pairs_0[54321] = 9999, pairs_1[54321] = "
                         "19998 (the first failing element of pairs;"));
  gpu::launch(pairs, {dv, 10000u, first, second}, checked);
  CHECK(first.download() == values);
}
