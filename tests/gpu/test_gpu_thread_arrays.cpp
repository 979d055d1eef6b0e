// GPU tests of thread arrays (label gpu): a block's and a warp's items kept in registers across
// their barriers match plain C++ and the simulator.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../support.hpp"
#include "../thread_array_kernels.hpp"

using namespace obsidian;
using namespace obsidian::testing;

TEST_CASE("gpu: thread arrays keep a thread's items across barriers") {
  const Kernel block = threadItemsKernel(), direct = threadItemsKernel(false),
               warp = warpItemsKernel();
  for (size_t chunks : {size_t{1}, size_t{3}, size_t{1} << 13}) {
    CAPTURE(chunks);
    const std::vector<uint32_t> in =
        ::testing::randomWords(512 * chunks, static_cast<uint32_t>(chunks));
    gpu::DeviceBuffer<uint32_t> din(in), dout(in.size());
    gpu::launch(block, {din, dout});
    CHECK(dout.download() == threadItemsReference(in));
    gpu::launch(direct, {din, dout});
    CHECK(dout.download() == threadItemsReference(in));
    gpu::launch(warp, {din, dout});
    CHECK(dout.download() == warpItemsReference(in));
    if (chunks < 10) {
      std::vector<uint32_t> sim(in.size());
      simulate(block, {in, sim});
      CHECK(sim == threadItemsReference(in));
    }
  }
}
