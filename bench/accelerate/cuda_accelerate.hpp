// The baselines of Accelerate's benchmarks (bench/accelerate): cuBLAS's dot product and SAXPY,
// and the CUDA samples' Black-Scholes kernel written by hand, all on the default stream. (The
// cuBLAS calls are vendorDot and vendorSaxpy: cublas_v2.h defines the cublas* names as macros.)
#pragma once

#include <cstdint>

namespace bench {

// cublasSdot with the result left in device memory (pointer mode device: no synchronize).
void vendorDot(const float* x, const float* y, uint32_t n, float* result);
// cublasSaxpy: y = alpha * x + y, in place.
void vendorSaxpy(float alpha, const float* x, float* y, uint32_t n);
// cublasSgemm: c = a b of dense row-major n x n matrices (FP32, cuBLAS's default math mode).
void vendorSgemm(const float* a, const float* b, float* c, uint32_t n);
// The CUDA samples' BlackScholesGPU (a grid-strided loop over options, call and put from one
// computation of d1, d2 and the CNDs), with riskless rate 0.02 and volatility 0.30, and the
// precise math functions (expf, logf, sqrtf) obsidian's kernel calls.
void cudaBlackScholes(const float* s, const float* x, const float* t, float* call, float* put,
                      uint32_t n);

}  // namespace bench
