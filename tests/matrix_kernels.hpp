// Kernels on matrices (obsidian/matrix.hpp: DPull2 parameters, tiles, pConcat2, force2,
// stencil), shared by the simulator tests (tests/sim/test_matrix.cpp) and the GPU tests
// (tests/gpu/test_gpu_matrix.cpp), with their C++ references.
#pragma once

#include <algorithm>
#include <obsidian/obsidian.hpp>
#include <vector>

#include "support.hpp"

namespace obsidian::testing {

// A rows x pitch matrix of random floats (multiples of 0.25 in [-100, 150)).
inline std::vector<float> randomMatrix(uint32_t rows, uint32_t pitch, uint32_t seed) {
  const std::vector<uint32_t> w = ::testing::randomWords(size_t{rows} * pitch, seed, 1000);
  std::vector<float> m(w.size());
  for (size_t i = 0; i < w.size(); ++i) m[i] = static_cast<float>(w[i]) * 0.25f - 100.0f;
  return m;
}

// The tiled transpose: tile (i, j) of the result is the transposed view of the input's tile
// (j, i), staged in a padded shared tile (force2 of the pull tile: each thread's loads
// together; or, elementwise, force2 of push2<Block> of it).
inline Kernel transpose2d(uint32_t threads = 256, uint32_t tile = 32,
                          Padding padding = Padding::Auto, bool elementwise = false) {
  return capture("transpose2d", threads, [tile, padding, elementwise](DPull2<EFloat> in) {
    return pConcat2(fmap(
                        [padding, elementwise](const SPull2<EFloat>& t) {
                          return exec<Block>([t, padding, elementwise](const Program<Block>& p) {
                            const SPull2<EFloat> s = elementwise
                                                         ? force2(p, push2<Block>(t), padding)
                                                         : force2(p, t, padding);
                            return push2<Block>(transpose(s));
                          });
                        },
                        transpose(tiles(tile, tile, in))),
                    in.cols(), in.rows());
  });
}

// out[r * vc + j] = the lanes' sum of vector j of row r of a RowAligned<4> matrix (vc = cols / 4
// whole vectors a row), each row read with vectors<4>.
inline Kernel rowVectorSums() {
  return capture("rowVectors", 64, [](RowAligned<4, EFloat> m) {
    const EWord32 vc = m.cols() / 4u;
    const auto rows = rowsOf(m);
    return push<Grid>(mkPull(m.rows() * vc, [rows, vc](const EWord32& i) {
      const Vector<4, float> v = vectors<4>(rows[i / vc])[i % vc];
      return hana::at_c<0>(v) + hana::at_c<1>(v) + hana::at_c<2>(v) + hana::at_c<3>(v);
    }));
  });
}

inline std::vector<float> rowVectorSumsReference(const std::vector<float>& in, uint32_t rows,
                                                 uint32_t cols, uint32_t pitch) {
  const uint32_t vc = cols / 4;
  std::vector<float> want(size_t{rows} * vc);
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t j = 0; j < vc; ++j) {
      const float* v = &in[size_t{r} * pitch + 4 * j];
      want[size_t{r} * vc + j] = v[0] + v[1] + v[2] + v[3];
    }
  }
  return want;
}

// The tiled transpose with the transposed tile written by a 2-D thread layout (push2 with a
// ThreadLayout2) instead of one element per thread, row after row.
inline Kernel transposeLayout(ThreadLayout2 layout) {
  return capture("transposeLayout", 256, [layout](DPull2<EFloat> in) {
    return pConcat2(fmap(
                        [layout](const SPull2<EFloat>& t) {
                          return exec<Block>([t, layout](const Program<Block>& p) {
                            return push2<Block>(transpose(force2(p, t)), layout);
                          });
                        },
                        transpose(tiles(32, 32, in))),
                    in.cols(), in.rows());
  });
}

// The 5-point average, (up + down + left + right + centre) * 0.2, of every element.
inline Kernel blur5(const StencilOptions& options = {}, uint32_t threads = 128) {
  return capture("blur5", threads, [options](DPull2<EFloat> in) {
    return stencil(
        in, 1,
        [](const Neighbourhood<float>& nb) {
          return (nb(-1, 0) + nb(1, 0) + nb(0, -1) + nb(0, 1) + nb(0, 0)) * 0.2f;
        },
        options);
  });
}

// The reference of blur5 on a rows x cols matrix with the given pitch, in blur5's order.
inline std::vector<float> blur5Reference(const std::vector<float>& in, uint32_t rows, uint32_t cols,
                                         uint32_t pitch, Boundary boundary) {
  auto at = [&](int64_t r, int64_t c) {
    if (boundary == Boundary::Zero && (r < 0 || c < 0 || r >= rows || c >= cols)) return 0.0f;
    r = std::clamp<int64_t>(r, 0, rows - 1);
    c = std::clamp<int64_t>(c, 0, cols - 1);
    return in[r * pitch + c];
  };
  std::vector<float> out(size_t{rows} * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      out[r * cols + c] =
          (at(r - 1, c) + at(r + 1, c) + at(r, c - 1) + at(r, c + 1) + at(r, c)) * 0.2f;
    }
  }
  return out;
}

// The transpose of a rows x cols matrix with the given pitch, dense.
inline std::vector<float> transposeReference(const std::vector<float>& in, uint32_t rows,
                                             uint32_t cols, uint32_t pitch) {
  std::vector<float> out(size_t{rows} * cols);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * pitch + c];
  }
  return out;
}

}  // namespace obsidian::testing
