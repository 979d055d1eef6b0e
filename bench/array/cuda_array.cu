// The baselines of the whole-array benchmark (see cuda_array.hpp).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "../accelerate/cuda_spmv.hpp"
#include "../common/cublas_handles.hpp"
#include "cuda_array.hpp"

namespace bench {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// alpha = rho / (p . q) and -alpha, on the device (s: p . q, alpha, -alpha).
__global__ void cgAlphaKernel(const float* rho, float* s) {
  const float alpha = rho[0] / s[0];
  s[1] = alpha;
  s[2] = -alpha;
}

__device__ float warpMax(float v) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  return v;
}

__device__ float warpSum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
  return v;
}

constexpr unsigned kThreads = 256;  // 8 warps a block, one row each

// m[row] = the row's max. Vec: 16-byte loads (cols and pitch multiples of 4, a aligned).
template <bool Vec>
__global__ void __launch_bounds__(kThreads)
    rowMaxKernel(const float* __restrict__ a, uint32_t rows, uint32_t cols, uint32_t pitch,
                 float* __restrict__ m) {
  const uint32_t row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* r = a + size_t{row} * pitch;
  float v = -INFINITY;
  if (Vec) {
    const float4* r4 = reinterpret_cast<const float4*>(r);
#pragma unroll 4
    for (uint32_t c = lane; c < cols / 4; c += 32) {
      const float4 t = r4[c];
      v = fmaxf(v, fmaxf(fmaxf(t.x, t.y), fmaxf(t.z, t.w)));
    }
  } else {
#pragma unroll 4
    for (uint32_t c = lane; c < cols; c += 32) v = fmaxf(v, r[c]);
  }
  v = warpMax(v);
  if (lane == 0) m[row] = v;
}

// y[row] = (sum exp(a - m) x) / (sum exp(a - m)) over the row.
template <bool Vec>
__global__ void __launch_bounds__(kThreads)
    expDotKernel(const float* __restrict__ a, uint32_t rows, uint32_t cols, uint32_t pitch,
                 const float* __restrict__ x, const float* __restrict__ m, float* __restrict__ y) {
  const uint32_t row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* r = a + size_t{row} * pitch;
  const float mr = m[row];
  float s = 0, d = 0;
  if (Vec) {
    const float4* r4 = reinterpret_cast<const float4*>(r);
    const float4* x4 = reinterpret_cast<const float4*>(x);
#pragma unroll 4
    for (uint32_t c = lane; c < cols / 4; c += 32) {
      const float4 t = r4[c], u = x4[c];
      const float e0 = expf(t.x - mr), e1 = expf(t.y - mr), e2 = expf(t.z - mr),
                  e3 = expf(t.w - mr);
      s += (e0 + e1) + (e2 + e3);
      d += (e0 * u.x + e1 * u.y) + (e2 * u.z + e3 * u.w);
    }
  } else {
#pragma unroll 4
    for (uint32_t c = lane; c < cols; c += 32) {
      const float e = expf(r[c] - mr);
      s += e;
      d += e * x[c];
    }
  }
  s = warpSum(s);
  d = warpSum(d);
  if (lane == 0) y[row] = d / s;
}

}  // namespace

void vendorCgIteration(const VendorSpmv& spmv, const VendorCgBuffers& b) {
  const cublasHandle_t h = cublasHandle(CUBLAS_POINTER_MODE_DEVICE);
  const int n = static_cast<int>(b.n);
  const size_t bytes = size_t{b.n} * sizeof(float);
  spmv();  // q = A p
  cublasCheck(cublasSdot(h, n, b.p, 1, b.q, 1, b.scalars), "cublasSdot(p, q)");
  cgAlphaKernel<<<1, 1>>>(b.rho, b.scalars);
  check(cudaGetLastError(), "cgAlphaKernel");
  check(cudaMemcpyAsync(b.x1, b.x, bytes, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync(x1)");
  check(cudaMemcpyAsync(b.r1, b.r, bytes, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync(r1)");
  cublasCheck(cublasSaxpy(h, n, b.scalars + 1, b.p, 1, b.x1, 1), "cublasSaxpy(x1)");
  cublasCheck(cublasSaxpy(h, n, b.scalars + 2, b.q, 1, b.r1, 1), "cublasSaxpy(r1)");
  cublasCheck(cublasSdot(h, n, b.r1, 1, b.r1, 1, b.rho1), "cublasSdot(r1, r1)");
}

void handSoftmaxGemv(const float* a, uint32_t rows, uint32_t cols, uint32_t pitch, const float* x,
                     float* m, float* y) {
  const unsigned rowsPerBlock = kThreads / 32;
  const unsigned blocks = (rows + rowsPerBlock - 1) / rowsPerBlock;
  const bool vec = cols % 4 == 0 && pitch % 4 == 0 && reinterpret_cast<uintptr_t>(a) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(x) % 16 == 0;
  if (vec) {
    rowMaxKernel<true><<<blocks, kThreads>>>(a, rows, cols, pitch, m);
    expDotKernel<true><<<blocks, kThreads>>>(a, rows, cols, pitch, x, m, y);
  } else {
    rowMaxKernel<false><<<blocks, kThreads>>>(a, rows, cols, pitch, m);
    expDotKernel<false><<<blocks, kThreads>>>(a, rows, cols, pitch, x, m, y);
  }
  check(cudaGetLastError(), "handSoftmaxGemv");
}

}  // namespace bench
