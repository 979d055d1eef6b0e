// Barracuda's stencils (seed 000, Chapter 4) in obsidian: the forward difference and Spencer's
// 15-point moving average over vectors, a Jacobi step of the 2-D Laplace equation (5 points),
// and 3 x 3 and 5 x 5 blurs, each in two forms: reading its neighbours straight from global
// memory (Barracuda without its shared-memory optimization), and reading them from a tile
// loaded once, with its halo, into shared memory (with it). And the thesis's fusion benchmark,
// the root mean square error of two vectors, fused into one pass and as the unfused pipeline of
// its subexpressions. Plain C++ references beside each.
// The example (stencils.cpp) checks both forms on the simulator and the GPU; bench/stencils
// races them against hand-written CUDA.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <obsidian/device/reduce.hpp>
#include <obsidian/obsidian.hpp>
#include <string>
#include <vector>

namespace stencils {

using namespace obsidian;

// Where a kernel reads its neighbours.
enum class Memory { Global, Shared };
inline std::string name(Memory m) { return m == Memory::Global ? "Global" : "Shared"; }

// ---------------------------------------------------------------- 1-D windows
// A 1-D stencil of `width` consecutive inputs: out[i] = f(w) for i < len(in) - width + 1, where
// w(k) = in[i + k] (k < width). The output is shorter than the input by width - 1, as
// Barracuda's slices make it; the input must hold at least one window (a launch precondition).
struct Window {
  uint32_t width;
  // Outputs per block (Shared). 4096 measured on the H100 (bench/RESULTS.md): the moving
  // average at 2^26 took 184 us, against 195 us at 2048 and 187 us at 8192.
  uint32_t tile = 4096;
  uint32_t threads = 256;
};

// Weights of the stencils below, shared by the kernels and the references.
inline const std::array<float, 15> kSpencer = {-3, -6, -5, 3, 21, 46, 67, 74,
                                               67, 46, 21, 3, -5, -6, -3};  // / 320
inline constexpr float kSpencerScale = 1.0f / 320.0f;

// windowGlobal(in, width, f): one thread per output, reading its width inputs from global
// memory (neighbouring threads read the same elements again: from L1 at best).
template <class F>
auto windowGlobal(const DPull<EFloat>& in, uint32_t width, F f) {
  require(len(in) >= width,
          "the input holds a whole window of " + std::to_string(width) + " elements");
  return push<Grid>(mkPull(len(in) - (width - 1u), [=](const EWord32& i) {
    return f([=](uint32_t k) { return in[i + k]; });
  }));
}

// windowShared(in, shape, f): each block loads its tile's tile + width - 1 inputs into shared
// memory once (force2 of a 1-row matrix: all of a thread's loads in flight together), then each
// thread computes its outputs from there; the last tile's outputs past the end are dropped
// (pConcat2's cols).
template <class F>
auto windowShared(const DPull<EFloat>& in, const Window& shape, F f) {
  require(len(in) >= shape.width,
          "the input holds a whole window of " + std::to_string(shape.width) + " elements");
  const EWord32 outputs = len(in) - (shape.width - 1u);
  const uint32_t tile = shape.tile, halo = shape.tile + shape.width - 1u;
  const EWord32 tiles = outputs / tile + cast<uint32_t>(outputs % tile != 0u);
  const auto haloTile = [=](const EWord32&, const EWord32& j) {
    return SPull2<EFloat>(1u, halo, [=](const EWord32&, const EWord32& c) {
      const EWord32 k = j * tile + c;
      return ifThenElse(k < len(in), in[k], EFloat(0.0f));  // past the end: never used
    });
  };
  return pConcat2(
      fmap(
          [=](const SPull2<EFloat>& h) {
            return exec<Block>([=](const Program<Block>& p) {
              const SPull2<EFloat> s = force2(p, h, Padding::None);
              return push2<Block>(mkPull2(1u, tile, [=](const EWord32&, const EWord32& c) {
                return f([=](uint32_t k) { return s(0u, c + k); });
              }));
            });
          },
          mkPull2(1u, tiles, haloTile)),
      1u, outputs);
}

template <class F>
Kernel windowKernel(const std::string& name, const Window& shape, F f, Memory memory) {
  const CaptureOptions names{.names = {"in"}, .outputNames = {"out"}};
  if (memory == Memory::Global) {
    return capture(
        name + "Global", shape.threads,
        [shape, f](DPull<EFloat> in) { return windowGlobal(in, shape.width, f); }, names);
  }
  return capture(
      name + "Shared", shape.threads,
      [shape, f](DPull<EFloat> in) { return windowShared(in, shape, f); }, names);
}

// The forward difference: out[i] = in[i + 1] - in[i].
inline const auto kDifference = [](const auto& w) { return w(1) - w(0); };
inline Kernel forwardDifference(Memory memory, Window shape = {2}) {
  shape.width = 2;
  return windowKernel("forwardDifference", shape, kDifference, memory);
}

// Spencer's 15-point moving average: out[i] = sum_k kSpencer[k] in[i + k] / 320.
inline const auto kMovingAverage = [](const auto& w) {
  auto acc = w(0) * kSpencer[0];
  for (uint32_t k = 1; k < kSpencer.size(); ++k) acc = acc + w(k) * kSpencer[k];
  return acc * kSpencerScale;
};
inline Kernel movingAverage(Memory memory, Window shape = {15}) {
  shape.width = 15;
  return windowKernel("movingAverage", shape, kMovingAverage, memory);
}

// The C++ reference of a window stencil (float arithmetic in the kernels' order).
template <class F>
std::vector<float> windowReference(const std::vector<float>& in, uint32_t width, F f) {
  std::vector<float> out(in.size() + 1 - width);
  for (size_t i = 0; i < out.size(); ++i) out[i] = f([&](uint32_t k) { return in[i + k]; });
  return out;
}

// ---------------------------------------------------------------- 2-D stencils
// A 2-D stencil of the given radius, clamped at the edges: out(r, c) = f(nb), nb(dr, dc) the
// input's element (r + dr, c + dc) with the row and column clamped into the matrix.
struct Stencil2 {
  uint32_t radius;
  uint32_t tileRows = 0, tileCols = 0;  // each block's outputs (Shared); 0: kTiles' choice
  uint32_t threads = 256;
};

// The tile of the Shared form by radius, with 256 threads. Chosen on the H100 (2026-11-24,
// `obsidian-bench-stencils --2d-only --tile-rows R --tile-cols C`, bench/RESULTS.md "Barracuda's
// stencils"): over 16 x 32 (stencil's default), 32 x 32, 16 x 64, 32 x 64, 8 x 128, 64 x 32
// and 64 x 64, radius 1 (Jacobi, 3 x 3 blur) is fastest at 16 x 64 (Jacobi 201 us at 8192^2,
// 246 us at 16 x 32), radius 2 (5 x 5 blur) at 64 x 64 (333 us, 406 us at 16 x 32).
struct Tile {
  uint32_t rows, cols;
};
inline Tile tileFor(uint32_t radius) { return radius <= 1 ? Tile{16, 64} : Tile{64, 64}; }

// The Jacobi step of the 2-D Laplace equation: the mean of the four neighbours.
inline const auto kJacobi = [](const auto& nb) {
  return (nb(-1, 0) + nb(1, 0) + nb(0, -1) + nb(0, 1)) * 0.25f;
};
// Binomial blurs: 3 x 3 (1 2 1)^2 / 16 and 5 x 5 (1 4 6 4 1)^2 / 256.
template <uint32_t Radius>
inline const auto kBlur = [](const auto& nb) {
  static_assert(Radius == 1 || Radius == 2, "kBlur: radius 1 (3 x 3) or 2 (5 x 5)");
  static constexpr std::array<float, 5> weights =
      Radius == 1 ? std::array<float, 5>{1, 2, 1, 0, 0} : std::array<float, 5>{1, 4, 6, 4, 1};
  static constexpr float scale = Radius == 1 ? 1.0f / 16 : 1.0f / 256;
  constexpr int r = Radius;
  auto acc = nb(-r, -r) * (weights[0] * weights[0]);
  for (int dr = -r; dr <= r; ++dr) {
    for (int dc = -r; dc <= r; ++dc) {
      if (dr == -r && dc == -r) continue;
      acc = acc + nb(dr, dc) * (weights[dr + r] * weights[dc + r]);
    }
  }
  return acc * scale;
};

// stencilGlobal(in, f): one thread per output (push2<Grid>), each reading its neighbours from
// global memory with clamped indices.
template <class F>
auto stencilGlobal(const DPull2<EFloat>& in, F f) {
  const EWord32 rows = in.rows(), cols = in.cols();
  return push2<Grid>(mkPull2(rows, cols, [=](const EWord32& r, const EWord32& c) {
    return f([=](int dr, int dc) {
      const auto clamp = [](const EWord32& i, int d, const EWord32& n) {
        if (d < 0) return ifThenElse(i < uint32_t(-d), EWord32(0u), i - uint32_t(-d));
        return d == 0 ? i : min(i + uint32_t(d), n - 1u);
      };
      return in(clamp(r, dr, rows), clamp(c, dc, cols));
    });
  }));
}

template <class F>
Kernel stencilKernel(const std::string& name, const Stencil2& shape, F f, Memory memory) {
  const CaptureOptions names{.names = {"in"}, .outputNames = {"out"}};
  if (memory == Memory::Global) {
    return capture(
        name + "Global", shape.threads, [f](DPull2<EFloat> in) { return stencilGlobal(in, f); },
        names);
  }
  return capture(
      name + "Shared", shape.threads,
      [shape, f](DPull2<EFloat> in) {
        const Tile chosen = tileFor(shape.radius);
        return stencil(in, shape.radius, f,
                       {.tileRows = shape.tileRows ? shape.tileRows : chosen.rows,
                        .tileCols = shape.tileCols ? shape.tileCols : chosen.cols,
                        .boundary = Boundary::Clamp});
      },
      names);
}

inline Kernel jacobi(Memory memory, Stencil2 shape = {1}) {
  shape.radius = 1;
  return stencilKernel("jacobi", shape, kJacobi, memory);
}
template <uint32_t Radius>
Kernel blur(Memory memory, Stencil2 shape = {Radius}) {
  shape.radius = Radius;
  return stencilKernel("blur" + std::to_string(2 * Radius + 1), shape, kBlur<Radius>, memory);
}

// The C++ reference of a clamped 2-D stencil over a dense rows x cols matrix.
template <class F>
std::vector<float> stencilReference(const std::vector<float>& in, uint32_t rows, uint32_t cols,
                                    F f) {
  std::vector<float> out(size_t{rows} * cols);
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) {
      out[size_t{r} * cols + c] = f([&](int dr, int dc) {
        const int64_t rr = std::clamp<int64_t>(int64_t{r} + dr, 0, rows - 1);
        const int64_t cc = std::clamp<int64_t>(int64_t{c} + dc, 0, cols - 1);
        return in[size_t(rr) * cols + size_t(cc)];
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------- RMSE (array fusion)
// rmse x y = sqrt (sum ((x - y)^2) / len x), Barracuda's Listing 4.1.
inline const auto kSquaredDifference = [](const auto& a, const auto& b) {
  const auto d = a - b;
  return d * d;
};

// Fused: one launch reading x and y once with 16-byte loads, the squared differences folded as
// they arrive (transformReduceAll), and the last block writing the root of the mean. `blocks`
// is what the device holds at once (gpu::occupancyBlocks of the kernel; any number on the
// simulator).
inline Kernel rmseFused(uint32_t blocks, const ReducePolicy& policy = reducePolicy()) {
  return capture("rmseFused", policy.threads,
                 [=](DPull<EFloat> x, DPull<EFloat> y) {
                   // (transformReduceAll requires x and y to have one length.)
                   require(len(x) > 0u, "x and y are not empty");
                   const EFloat count = cast<float>(len(x));
                   return fmap([count](const EFloat& sum) { return sqrt(sum / count); },
                               transformReduceAll<float>(Sum{}, 0.0f, kSquaredDifference, policy,
                                                         blocks, x, y));
                 },
                 {.names = {"x", "y"}, .outputNames = {"rmse"}});
}

// Unfused, as Barracuda without array fusion runs it: one kernel per subexpression, each
// result made manifest in global memory: d = x - y, s = d^2, then the sum (reduceAll); the host
// takes the root of the mean.
struct RmseUnfused {
  Kernel difference, square, sum;
};
inline RmseUnfused rmseUnfused(uint32_t sumBlocks, const ReducePolicy& policy = reducePolicy()) {
  const uint32_t threads = policy.threads;
  return {capture("rmseDifference", threads,
                  [](DPull<EFloat> x, DPull<EFloat> y) {
                    require(len(x) == len(y), "x and y have the same length");
                    return push<Grid>(
                        zipWith([](const EFloat& a, const EFloat& b) { return a - b; }, x, y));
                  },
                  {.names = {"x", "y"}, .outputNames = {"d"}}),
          capture("rmseSquare", threads,
                  [](DPull<EFloat> d) {
                    return push<Grid>(fmap([](const EFloat& v) { return v * v; }, d));
                  },
                  {.names = {"d"}, .outputNames = {"s"}}),
          reduceKernel<float>(Sum{}, 0.0f, policy, sumBlocks)};
}

// The C++ reference (in double).
inline double rmseReference(const std::vector<float>& x, const std::vector<float>& y) {
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = double(x[i]) - double(y[i]);
    sum += d * d;
  }
  return std::sqrt(sum / double(x.size()));
}

}  // namespace stencils
