// GPU tests of matrices (label gpu): the tiled transpose and a stencil on shapes that leave
// partial tiles at the right and bottom, with a pitch, on fewer real blocks than tiles, against
// C++ (exactly: the stencil's sum is formed in the reference's order and rounded alike).
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../matrix_kernels.hpp"
#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::testing;

TEST_CASE("gpu: the tiled transpose of matrices with partial tiles and a pitch") {
  const Kernel k = transpose2d();
  for (const auto& [rows, cols, pitch] :
       {std::array<uint32_t, 3>{8191, 4097, 4100}, std::array<uint32_t, 3>{1000, 777, 777}}) {
    INFO(rows << " x " << cols);
    const std::vector<float> in = randomMatrix(rows, pitch, rows);
    gpu::DeviceBuffer<float> din(in), dout(size_t{rows} * cols);
    gpu::LaunchOptions few;
    few.blocks = 500;
    gpu::launch(k, {din, rows, cols, pitch, dout}, few);
    CHECK(dout.download() == transposeReference(in, rows, cols, pitch));
  }
}

TEST_CASE("gpu: a stencil with its halo in shared memory") {
  for (const Boundary b : {Boundary::Clamp, Boundary::Zero}) {
    const Kernel k = blur5({16, 32, b});
    const uint32_t rows = 2049, cols = 1999, pitch = 2048;
    const std::vector<float> in = randomMatrix(rows, pitch, 9);
    gpu::DeviceBuffer<float> din(in), dout(size_t{rows} * cols);
    gpu::launch(k, {din, rows, cols, pitch, dout});
    CHECK(dout.download() == blur5Reference(in, rows, cols, pitch, b));
  }
}

TEST_CASE("gpu: four steps of a stencil in one kernel equal four launches, bit for bit") {
  for (const Boundary b : {Boundary::Clamp, Boundary::Zero}) {
    const uint32_t rows = 1025, cols = 999;  // partial tiles at the right and bottom
    const std::vector<float> in = randomMatrix(rows, cols, 11);
    gpu::DeviceBuffer<float> din(in), dout(in.size()), a(in.size()), c(in.size());
    gpu::launch(blur5({16, 32, b, 4}), {din, rows, cols, cols, dout});
    const Kernel one = blur5({16, 32, b});
    gpu::launch(one, {din, rows, cols, cols, a});
    gpu::launch(one, {a, rows, cols, cols, c});
    gpu::launch(one, {c, rows, cols, cols, a});
    gpu::launch(one, {a, rows, cols, cols, c});
    CHECK(dout.download() == c.download());  // the same sums, rounded alike
    // The simulator agrees (on a corner of it: its first tiles).
    const uint32_t r2 = 40, c2 = 70;
    const std::vector<float> small = randomMatrix(r2, c2, 12);
    gpu::DeviceBuffer<float> ds(small), dso(small.size());
    gpu::launch(blur5({16, 32, b, 4}), {ds, r2, c2, c2, dso});
    std::vector<float> so(small.size());
    simulate(blur5({16, 32, b, 4}), {small, r2, c2, c2, so});
    CHECK(dso.download() == so);
  }
}
