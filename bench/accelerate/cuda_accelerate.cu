// The baselines of Accelerate's benchmarks (see cuda_accelerate.hpp).
#include <cublas_v2.h>

#include <stdexcept>
#include <string>

#include "../common/cublas_handles.hpp"
#include "cuda_accelerate.hpp"

namespace bench {
namespace {

constexpr float kRiskFree = 0.02f, kVolatility = 0.30f;

__device__ inline float cnd(float d) {
  const float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  const float c =
      0.39894228040143267794f * expf(-0.5f * d * d) *
      (k * (0.31938153f +
            k * (-0.356563782f + k * (1.781477937f + k * (-1.821255978f + k * 1.330274429f)))));
  return d > 0 ? 1.0f - c : c;
}

__global__ void blackScholes(const float* __restrict__ s, const float* __restrict__ x,
                             const float* __restrict__ t, float* __restrict__ call,
                             float* __restrict__ put, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float S = s[i], X = x[i], T = t[i];
    const float sqrtT = sqrtf(T);
    const float d1 =
        (logf(S / X) + (kRiskFree + 0.5f * kVolatility * kVolatility) * T) / (kVolatility * sqrtT);
    const float d2 = d1 - kVolatility * sqrtT;
    const float cndD1 = cnd(d1), cndD2 = cnd(d2);
    const float expRT = expf(-kRiskFree * T);
    call[i] = S * cndD1 - X * expRT * cndD2;
    put[i] = X * expRT * (1.0f - cndD2) - S * (1.0f - cndD1);
  }
}

}  // namespace

void vendorDot(const float* x, const float* y, uint32_t n, float* result) {
  cublasCheck(
      cublasSdot(cublasHandle(CUBLAS_POINTER_MODE_DEVICE), static_cast<int>(n), x, 1, y, 1, result),
      "cublasSdot");
}

void vendorSaxpy(float alpha, const float* x, float* y, uint32_t n) {
  cublasCheck(
      cublasSaxpy(cublasHandle(CUBLAS_POINTER_MODE_HOST), static_cast<int>(n), &alpha, x, 1, y, 1),
      "cublasSaxpy");
}

void vendorSgemm(const float* a, const float* b, float* c, uint32_t n) {
  // Row-major c = a b is column-major c^T = b^T a^T: the operands exchanged.
  const float one = 1.0f, zero = 0.0f;
  const int k = static_cast<int>(n);
  cublasCheck(cublasSgemm(cublasHandle(CUBLAS_POINTER_MODE_HOST), CUBLAS_OP_N, CUBLAS_OP_N, k, k, k,
                          &one, b, k, a, k, &zero, c, k),
              "cublasSgemm");
}

void cudaBlackScholes(const float* s, const float* x, const float* t, float* call, float* put,
                      uint32_t n) {
  // The samples launch a fixed grid of 480 x 128 and loop; an occupancy-sized grid here.
  static const int grid = [] {
    int perSm = 0, device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, blackScholes, 128, 0);
    return perSm * sms;
  }();
  blackScholes<<<grid, 128>>>(s, x, t, call, put, n);
}

}  // namespace bench
