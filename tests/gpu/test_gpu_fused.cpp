// GPU tests of fused outputs (label gpu): AXPYDOT fused into one grid loop and in two passes
// compute the same z and partial dots on the device as on the host, at a size with many
// virtual blocks per real one; thread programs fused through tConcat and pConcat.
#include <doctest/doctest.h>

#include <cmath>
#include <obsidian/obsidian.hpp>

#include "../fused_kernels.hpp"
#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::testing;
using ::testing::randomWords;

TEST_CASE("gpu: AXPYDOT fused and in two passes") {
  const uint32_t chunk = 1024, blocks = 4096 + 3, n = chunk * blocks;
  const std::vector<uint32_t> a = randomWords(n, 11, 2001), b = randomWords(n, 12, 2001),
                              c = randomWords(n, 13, 2001);
  std::vector<float> w(n), v(n), u(n);
  for (uint32_t i = 0; i < n; ++i) {
    w[i] = static_cast<float>(a[i]) / 1000.0f - 1.0f;
    v[i] = static_cast<float>(b[i]) / 1000.0f - 1.0f;
    u[i] = static_cast<float>(c[i]) / 1000.0f - 1.0f;
  }
  const float alpha = -1.25f;
  gpu::DeviceBuffer<float> dw(w), dv(v), du(u);
  for (bool fused : {true, false}) {
    INFO("fused " << fused);
    const Kernel k = axpydot(fused);
    gpu::DeviceBuffer<float> dz(n), dp(blocks);
    gpu::LaunchOptions few;
    few.blocks = 1000;  // several virtual blocks per real one
    gpu::launch(k, {alpha, dw, dv, du, dz, dp}, few);
    const std::vector<float> z = dz.download(), p = dp.download();
    for (uint32_t i = 0; i < n; ++i) {  // (the device may contract to a fused multiply-add)
      const double ref = double(w[i]) - double(alpha) * v[i];
      REQUIRE(std::fabs(z[i] - ref) <= 1e-6 * (1 + std::fabs(ref)));
    }
    for (uint32_t blk = 0; blk < blocks; ++blk) {
      double dot = 0;
      for (uint32_t i = blk * chunk; i < (blk + 1) * chunk; ++i) dot += double(z[i]) * u[i];
      REQUIRE(std::fabs(p[blk] - dot) < 1e-3 * (1 + std::fabs(dot)));
    }
  }
}

TEST_CASE("gpu: thread programs fused through tConcat and pConcat") {
  const Kernel k = groupStats();
  const uint32_t n = 256 * 1001;
  const std::vector<uint32_t> in = randomWords(n, 5);
  gpu::DeviceBuffer<uint32_t> din(in), doubled(n), plusOne(n), sums(n / 4), maxes(n / 4);
  gpu::launch(k, {din, doubled, plusOne, sums, maxes});
  const std::vector<uint32_t> d = doubled.download(), p = plusOne.download(), s = sums.download(),
                              m = maxes.download();
  for (uint32_t i = 0; i < n; ++i) {
    REQUIRE(d[i] == in[i] * 2u);
    REQUIRE(p[i] == in[i] + 1u);
  }
  for (uint32_t g = 0; g < n / 4; ++g) {
    const uint32_t* x = &in[4 * g];
    REQUIRE(s[g] == x[0] + x[1] + x[2] + x[3]);
    REQUIRE(m[g] == std::max(std::max(x[0], x[1]), std::max(x[2], x[3])));
  }
}
