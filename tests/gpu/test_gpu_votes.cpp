// GPU tests of warp votes and bit intrinsics (label gpu): every case of vote_kernels.hpp on the
// device matches plain C++ and the simulator, bit for bit (float NaNs, -0 and +0 in match_any;
// zeros in clz and ffs).
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../vote_kernels.hpp"

using namespace obsidian;
using namespace obsidian::testing;

TEST_CASE("gpu: warp votes and bit intrinsics match C++ and the simulator") {
  for (uint32_t i = 0; i < kVoteCases; ++i) {
    const auto c = static_cast<VoteCase>(i);
    CAPTURE(voteCaseName(c));
    const Kernel k = voteKernel(c);
    for (size_t blocks : {size_t{1}, size_t{5}, size_t{1} << 14}) {
      const std::vector<uint32_t> in =
          voteInput(64 * blocks, static_cast<uint32_t>(i * 31 + blocks));
      gpu::DeviceBuffer<uint32_t> din(in), dout(in.size());
      gpu::launch(k, {din, dout});
      const std::vector<uint32_t> got = dout.download();
      CHECK(got == voteReference(c, in));
      if (blocks < 100) {
        std::vector<uint32_t> sim(in.size());
        simulate(k, {in, sim});
        CHECK(sim == got);
      }
    }
  }
}
