// GPU tests of scatters (label gpu): permute by an index array and permuteInto's scatter-add on
// the device match plain C++.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <obsidian/obsidian.hpp>
#include <random>

#include "../kernels.hpp"
#include "../support.hpp"

using namespace obsidian;

TEST_CASE("gpu: permute by an index array, and a scatter-add") {
  const size_t n = (size_t{1} << 22) + 3;
  const std::vector<uint32_t> in = ::testing::randomWords(n, 1);
  std::vector<uint32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0u);
  std::shuffle(idx.begin(), idx.end(), std::mt19937(2));
  gpu::DeviceBuffer<uint32_t> din(in), didx(idx), out(n);
  gpu::launch(obsidian::testing::permuteByIndex(), {din, didx, out});
  std::vector<uint32_t> want(n);
  for (size_t i = 0; i < n; ++i) want[idx[i]] = in[i];
  CHECK(out.download() == want);
  gpu::DeviceBuffer<uint32_t> bins(16);
  bins.zero();
  gpu::launch(obsidian::testing::scatterAddCounts(), {din, bins});
  std::vector<uint32_t> counts(16, 0);
  for (uint32_t x : in) ++counts[x % 16];
  CHECK(bins.download() == counts);
}
