// The hand-written stencils (see cuda_stencils.hpp).
#include "cuda_stencils.hpp"

namespace bench {
namespace {

__constant__ float kSpencer[15] = {-3, -6, -5, 3, 21, 46, 67, 74, 67, 46, 21, 3, -5, -6, -3};
__constant__ float kBinomial3[3] = {1, 2, 1};
__constant__ float kBinomial5[5] = {1, 4, 6, 4, 1};

template <Stencil1 S>
struct Window;
template <>
struct Window<Stencil1::Difference> {
  static constexpr int width = 2;
  template <class W>
  __device__ static float apply(W w) {
    return w(1) - w(0);
  }
};
template <>
struct Window<Stencil1::Spencer> {
  static constexpr int width = 15;
  template <class W>
  __device__ static float apply(W w) {
    float acc = w(0) * kSpencer[0];
#pragma unroll
    for (int k = 1; k < 15; ++k) acc = acc + w(k) * kSpencer[k];
    return acc * (1.0f / 320.0f);
  }
};

template <Stencil1 S>
__global__ void naive1(const float* __restrict__ in, float* __restrict__ out, uint32_t n) {
  const uint32_t outputs = n - (Window<S>::width - 1);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < outputs;
       i += gridDim.x * blockDim.x) {
    out[i] = Window<S>::apply([&](int k) { return in[i + k]; });
  }
}

// 256 threads, each computing 8 outputs of the block's tile of 2048 from shared memory.
constexpr uint32_t kThreads1 = 256, kItems1 = 8, kTile1 = kThreads1 * kItems1;

template <Stencil1 S>
__global__ void __launch_bounds__(kThreads1)
    tiled1(const float* __restrict__ in, float* __restrict__ out, uint32_t n) {
  constexpr uint32_t halo = kTile1 + Window<S>::width - 1;
  __shared__ float tile[halo];
  const uint32_t outputs = n - (Window<S>::width - 1);
  const uint32_t first = blockIdx.x * kTile1;
#pragma unroll
  for (uint32_t j = threadIdx.x; j < halo; j += kThreads1) {
    tile[j] = first + j < n ? in[first + j] : 0.0f;
  }
  __syncthreads();
#pragma unroll
  for (uint32_t k = 0; k < kItems1; ++k) {
    const uint32_t j = threadIdx.x + k * kThreads1;
    if (first + j < outputs) out[first + j] = Window<S>::apply([&](int d) { return tile[j + d]; });
  }
}

template <Stencil2 S>
struct Neighbourhood;
template <>
struct Neighbourhood<Stencil2::Jacobi> {
  static constexpr int radius = 1;
  template <class N>
  __device__ static float apply(N nb) {
    return (nb(-1, 0) + nb(1, 0) + nb(0, -1) + nb(0, 1)) * 0.25f;
  }
};
template <int R>
struct Blur {
  static constexpr int radius = R;
  template <class N>
  __device__ static float apply(N nb) {
    const float* w = R == 1 ? kBinomial3 : kBinomial5;
    float acc = nb(-R, -R) * (w[0] * w[0]);
#pragma unroll
    for (int dr = -R; dr <= R; ++dr) {
#pragma unroll
      for (int dc = -R; dc <= R; ++dc) {
        if (dr == -R && dc == -R) continue;
        acc = acc + nb(dr, dc) * (w[dr + R] * w[dc + R]);
      }
    }
    return acc * (R == 1 ? 1.0f / 16 : 1.0f / 256);
  }
};
template <>
struct Neighbourhood<Stencil2::Blur3> : Blur<1> {};
template <>
struct Neighbourhood<Stencil2::Blur5> : Blur<2> {};

__device__ inline uint32_t clampTo(int64_t i, uint32_t n) {
  return i < 0 ? 0u : i >= n ? n - 1 : static_cast<uint32_t>(i);
}

constexpr uint32_t kTileCols = 32, kTileRows = 32, kRowsPerPass = 8;

template <Stencil2 S>
__global__ void naive2(const float* __restrict__ in, float* __restrict__ out, uint32_t rows,
                       uint32_t cols) {
  const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  out[size_t{r} * cols + c] = Neighbourhood<S>::apply([&](int dr, int dc) {
    return in[size_t{clampTo(int64_t{r} + dr, rows)} * cols + clampTo(int64_t{c} + dc, cols)];
  });
}

// Blocks of 32 x 8 threads, each computing a 32 x 32 tile (4 rows a thread) from a shared
// copy of the tile and its halo (clamped at the edges), padded against bank conflicts.
template <Stencil2 S>
__global__ void __launch_bounds__(kTileCols* kRowsPerPass)
    tiled2(const float* __restrict__ in, float* __restrict__ out, uint32_t rows, uint32_t cols) {
  constexpr int R = Neighbourhood<S>::radius;
  constexpr uint32_t hr = kTileRows + 2 * R, hc = kTileCols + 2 * R;
  __shared__ float tile[hr][hc + 1];
  const int64_t r0 = int64_t{blockIdx.y} * kTileRows - R, c0 = int64_t{blockIdx.x} * kTileCols - R;
  const uint32_t tid = threadIdx.y * kTileCols + threadIdx.x;
  for (uint32_t j = tid; j < hr * hc; j += kTileCols * kRowsPerPass) {
    const uint32_t hrow = j / hc, hcol = j % hc;
    tile[hrow][hcol] = in[size_t{clampTo(r0 + hrow, rows)} * cols + clampTo(c0 + hcol, cols)];
  }
  __syncthreads();
  const uint32_t c = blockIdx.x * kTileCols + threadIdx.x;
#pragma unroll
  for (uint32_t k = 0; k < kTileRows; k += kRowsPerPass) {
    const uint32_t tr = threadIdx.y + k, r = blockIdx.y * kTileRows + tr;
    if (r < rows && c < cols) {
      out[size_t{r} * cols + c] = Neighbourhood<S>::apply(
          [&](int dr, int dc) { return tile[tr + R + dr][threadIdx.x + R + dc]; });
    }
  }
}

template <Stencil1 S>
void launch1(bool tiled, const float* in, float* out, uint32_t n) {
  const uint32_t outputs = n - (Window<S>::width - 1);
  if (tiled) {
    tiled1<S><<<(outputs + kTile1 - 1) / kTile1, kThreads1>>>(in, out, n);
  } else {
    naive1<S><<<(outputs + 255) / 256, 256>>>(in, out, n);
  }
}

template <Stencil2 S>
void launch2(bool tiled, const float* in, float* out, uint32_t rows, uint32_t cols) {
  if (tiled) {
    const dim3 grid((cols + kTileCols - 1) / kTileCols, (rows + kTileRows - 1) / kTileRows);
    tiled2<S><<<grid, dim3(kTileCols, kRowsPerPass)>>>(in, out, rows, cols);
  } else {
    const dim3 grid((cols + 31) / 32, (rows + 7) / 8);
    naive2<S><<<grid, dim3(32, 8)>>>(in, out, rows, cols);
  }
}

constexpr uint32_t kRmseThreads = 256;

__global__ void __launch_bounds__(kRmseThreads)
    rmse(const float* __restrict__ x, const float* __restrict__ y, uint32_t n, float* result,
         uint32_t* state) {
  float acc = 0;
  const uint32_t vectors = n / 4, stride = gridDim.x * kRmseThreads;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  const float4* y4 = reinterpret_cast<const float4*>(y);
  for (uint32_t i = blockIdx.x * kRmseThreads + threadIdx.x; i < vectors; i += stride) {
    const float4 a = x4[i], b = y4[i];
    const float d0 = a.x - b.x, d1 = a.y - b.y, d2 = a.z - b.z, d3 = a.w - b.w;
    acc += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
  }
  const uint32_t tail = vectors * 4 + blockIdx.x * kRmseThreads + threadIdx.x;
  if (tail < n) {
    const float d = x[tail] - y[tail];
    acc += d * d;
  }
  for (int o = 16; o > 0; o /= 2) acc += __shfl_down_sync(0xffffffffu, acc, o);
  __shared__ float warps[kRmseThreads / 32];
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0;
    for (uint32_t w = 0; w < kRmseThreads / 32; ++w) sum += warps[w];
    atomicAdd(reinterpret_cast<float*>(&state[0]), sum);
    __threadfence();
    // The ticket wraps to 0 after the last block: ready for the next launch.
    if (atomicInc(&state[1], gridDim.x - 1) == gridDim.x - 1) {
      __threadfence();
      const float total = atomicExch(reinterpret_cast<float*>(&state[0]), 0.0f);
      *result = sqrtf(total / static_cast<float>(n));
    }
  }
}

}  // namespace

void cudaRmse(const float* x, const float* y, uint32_t n, float* result, uint32_t* state,
              uint32_t blocks) {
  rmse<<<blocks, kRmseThreads>>>(x, y, n, result, state);
}

uint32_t cudaRmseBlocks() {
  int perSm = 0, device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, rmse, kRmseThreads, 0);
  return static_cast<uint32_t>(perSm * sms);
}

void cudaStencil1(Stencil1 s, bool tiled, const float* in, float* out, uint32_t n) {
  if (s == Stencil1::Difference) {
    launch1<Stencil1::Difference>(tiled, in, out, n);
  } else {
    launch1<Stencil1::Spencer>(tiled, in, out, n);
  }
}

void cudaStencil2(Stencil2 s, bool tiled, const float* in, float* out, uint32_t rows,
                  uint32_t cols) {
  switch (s) {
    case Stencil2::Jacobi: return launch2<Stencil2::Jacobi>(tiled, in, out, rows, cols);
    case Stencil2::Blur3: return launch2<Stencil2::Blur3>(tiled, in, out, rows, cols);
    case Stencil2::Blur5: return launch2<Stencil2::Blur5>(tiled, in, out, rows, cols);
  }
}

}  // namespace bench
