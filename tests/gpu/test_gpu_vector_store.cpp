// GPU tests of vector stores (label gpu): unvectors<W> of every element type writes the same
// bits on the device as plain C++ and the simulator, for lengths with a tail, and a misaligned
// output is refused before launch.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../vector_store_kernels.hpp"

using namespace obsidian;
using namespace obsidian::testing;

namespace {

template <class X, uint32_t W>
void checkReverseLanesOnGpu() {
  const Kernel k = reverseLanes<X, W>("reverse", 256);
  for (size_t n : {size_t{1}, size_t{W - 1}, size_t{37 * W + W / 2 + 1}, (size_t{1} << 22) + W - 1,
                   size_t{1} << 22}) {
    const std::vector<X> in = randomBitPatterns<X>(n, static_cast<uint32_t>(n + W));
    gpu::DeviceBuffer<X> din(in);
    gpu::DeviceBuffer<X> out(n);
    gpu::launch(k, {din, out});
    const std::vector<X> got = out.download();
    CHECK_MESSAGE(sameBits(got, reverseLanesReference<X, W>(in)),
                  cudaTypeName(scalarTypeOf<X>) << " unvectors<" << W << ">, n = " << n);
    if (n < 5000) {  // the simulator agrees
      std::vector<X> sim(n);
      simulate(k, {in, sim});
      CHECK(sameBits(sim, got));
    }
  }
}

}  // namespace

TEST_CASE("gpu: unvectors<W> of every element type, lengths with a tail, bit for bit") {
  checkReverseLanesOnGpu<float, 4>();
  checkReverseLanesOnGpu<float, 2>();
  checkReverseLanesOnGpu<int32_t, 4>();
  checkReverseLanesOnGpu<uint64_t, 2>();
  checkReverseLanesOnGpu<double, 2>();
  checkReverseLanesOnGpu<uint8_t, 16>();
  checkReverseLanesOnGpu<uint8_t, 2>();
  checkReverseLanesOnGpu<uint16_t, 8>();
  checkReverseLanesOnGpu<uint16_t, 4>();
  checkReverseLanesOnGpu<Half, 8>();
  checkReverseLanesOnGpu<BFloat16, 4>();
  checkReverseLanesOnGpu<Fp8E4M3, 16>();
  checkReverseLanesOnGpu<Fp8E5M2, 4>();
}

TEST_CASE("gpu: an output written with 16-byte vector stores must be 16-byte aligned") {
  const Kernel k = reverseLanes<float, 4>("reverse", 256);
  const std::vector<float> in = randomBitPatterns<float>(64, 1);
  gpu::DeviceBuffer<float> din(in);
  gpu::DeviceBuffer<float> out(80);
  const KernelArg shifted = KernelArg::deviceArray(ScalarType::F32, out.address() + 4, 64, true);
  CHECK_THROWS_WITH(gpu::launch(k, {din, shifted}),
                    "launch of kernel reverse: argument 1 (out0) must be 16-byte aligned: the "
                    "kernel writes it with 16-byte vector stores (unvectors<W>); got an address 4 "
                    "bytes past a multiple of 16");
  const KernelArg aligned = KernelArg::deviceArray(ScalarType::F32, out.address() + 16, 64, true);
  gpu::launch(k, {din, aligned});  // a valid launch works after it
  const std::vector<float> got = out.download();
  CHECK(sameBits(std::vector<float>(got.begin() + 4, got.begin() + 68),
                 reverseLanesReference<float, 4>(in)));
}
