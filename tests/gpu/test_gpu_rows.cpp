// GPU tests (label gpu) of the language's matrix and chunking helpers on the device, against
// plain C++: RowAligned<4> rows read with vectors<4>, the transpose written by 2-D thread
// layouts (push2 with a ThreadLayout2), and any length cut by splitUpRagged for blocks.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../kernels.hpp"
#include "../matrix_kernels.hpp"

using namespace obsidian;
using namespace obsidian::testing;

TEST_CASE("gpu: RowAligned<4> rows read with vectors<4>") {
  const Kernel k = rowVectorSums();
  const uint32_t rows = 1001, cols = 1003, pitch = 1008;
  const std::vector<float> in = randomMatrix(rows, pitch, 5);
  gpu::DeviceBuffer<float> din(in), out(size_t{rows} * (cols / 4));
  gpu::launch(k, {din, rows, cols, pitch, out});
  CHECK(out.download() == rowVectorSumsReference(in, rows, cols, pitch));
}

TEST_CASE("gpu: the transpose written by 2-D thread layouts") {
  for (const ThreadLayout2 layout : {ThreadLayout2{8, 32}, ThreadLayout2{3, 10}}) {
    const Kernel k = transposeLayout(layout);
    const uint32_t rows = 2049, cols = 1000, pitch = 1001;
    const std::vector<float> in = randomMatrix(rows, pitch, 6);
    gpu::DeviceBuffer<float> din(in), out(size_t{rows} * cols);
    gpu::launch(k, {din, rows, cols, pitch, out});
    CHECK(out.download() == transposeReference(in, rows, cols, pitch));
  }
}

TEST_CASE("gpu: splitUpRagged chunks of any length, the ragged end's writes dropped") {
  const Kernel k = raggedPairs();
  for (size_t n : {size_t{1}, size_t{1000001}, size_t{1} << 20}) {
    const std::vector<uint32_t> in = ::testing::randomWords(n, static_cast<uint32_t>(n));
    gpu::DeviceBuffer<uint32_t> din(in), out(n);
    gpu::launch(k, {din, out});
    CHECK(out.download() == raggedPairsReference(in));
  }
}
