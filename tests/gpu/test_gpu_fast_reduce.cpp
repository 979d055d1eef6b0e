// GPU tests of wide loads, warp shuffles and grid state (label gpu): the fast reductions of
// the library's device reductions (obsidian/device/reduce.hpp) match C++ and the simulator on the device, the one-launch
// reduction leaves its ticket ready for the next launch, and a misaligned array is refused.
#include <doctest/doctest.h>

#include <random>

#include "../../examples/reduce/reduce.hpp"

using namespace obsidian;

namespace {

EWord32 plusW(const EWord32& a, const EWord32& b) { return a + b; }

std::vector<uint32_t> words(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) x = rng();
  return v;
}

uint32_t sum(const std::vector<uint32_t>& v, size_t from, size_t n) {
  uint32_t s = 0;
  for (size_t i = from; i < from + n; ++i) s += v[i];
  return s;
}

}  // namespace

TEST_CASE("gpu: reduceAll in one launch, for awkward sizes, launch after launch") {
  const ReducePolicy policy{256, 4, 4};
  const Kernel k =
      reduceKernel<uint32_t>(plusW, 0u, policy, reduceBlocksOnGpu<uint32_t>(plusW, 0u, policy));
  gpu::DeviceBuffer<uint32_t> out(1);
  for (size_t n :
       {size_t{0}, size_t{1}, size_t{3}, size_t{4099}, size_t{1} << 20, (size_t{1} << 24) + 7}) {
    const std::vector<uint32_t> in = words(n, static_cast<uint32_t>(n));
    gpu::DeviceBuffer<uint32_t> din(in);
    for (int repeat = 0; repeat < 3; ++repeat) {  // the ticket wraps back to 0 every launch
      out.zero();
      gpu::launch(k, {din, out});
      CHECK_MESSAGE(out.download()[0] == sum(in, 0, n), "n = " << n << ", launch " << repeat);
    }
    if (n <= 5000) {  // the simulator agrees
      std::vector<uint32_t> sim(1);
      simulate(k, {in, sim});
      CHECK(sim[0] == sum(in, 0, n));
    }
  }
}

TEST_CASE("gpu: reduceAll with fewer real blocks than virtual ones (fillDevice off, 3 blocks)") {
  const Kernel k = reduceKernel<uint32_t>(plusW, 0u, ReducePolicy{128, 2, 0}, 64);
  const std::vector<uint32_t> in = words(1000003, 5);
  gpu::DeviceBuffer<uint32_t> din(in), out(1);
  gpu::LaunchOptions o;
  o.blocks = 3;
  gpu::launch(k, {din, out}, o);
  CHECK(out.download()[0] == sum(in, 0, in.size()));
}

TEST_CASE("gpu: redVec (16-byte loads, shuffles) matches C++ and the simulator") {
  for (uint32_t threads : {128u, 256u, 512u}) {
    const Kernel k =
        segmentedReduceKernel<uint32_t>(plusW, uint32_t{0}, 4096, SegmentedReducePolicy{threads});
    CHECK(k.cuda().find("((const uint4*)in0)") != std::string::npos);
    CHECK(k.cuda().find("__shfl_sync") != std::string::npos);
    const std::vector<uint32_t> in = words(4096 * 37, threads);
    gpu::DeviceBuffer<uint32_t> din(in), out(37);
    gpu::launch(k, {din, out});
    const std::vector<uint32_t> got = out.download();
    std::vector<uint32_t> sim(37);
    simulate(k, {in, sim});
    for (size_t s = 0; s < 37; ++s) CHECK(got[s] == sum(in, s * 4096, 4096));
    CHECK(got == sim);
  }
}

TEST_CASE("gpu: an array read with 16-byte vectors must be 16-byte aligned") {
  const Kernel k =
      segmentedReduceKernel<uint32_t>(plusW, uint32_t{0}, 1024, SegmentedReducePolicy{256});
  gpu::DeviceBuffer<uint32_t> din(2049), out(2);
  const KernelArg shifted = KernelArg::deviceArray(ScalarType::U32, din.address() + 4, 2048, false);
  CHECK_THROWS_WITH(gpu::launch(k, {shifted, out}),
                    "launch of kernel segmentedReduce: argument 0 (in0) must be 16-byte aligned: the "
                    "kernel reads it with 16-byte vector loads (vectors<W>); got an address 4 "
                    "bytes past a multiple of 16");
  gpu::DeviceBuffer<uint32_t> aligned(2048);
  gpu::launch(k, {aligned, out});  // the process stays usable: a valid launch works after it
}
