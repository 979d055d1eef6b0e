// The baselines of the whole-array benchmark (bench/array/array_bench.cpp), on the default
// stream, none synchronized:
//  - one conjugate-gradient iteration as the cuBLAS + cuSPARSE calls a library user writes
//    (cuSPARSE's SpMV for q = A p, cublasSdot for p . q with the result on the device, a tiny
//    kernel for alpha = rho / (p . q) and -alpha, copies x -> x1 and r -> r1 for the in-place
//    cublasSaxpy, two cublasSaxpy with alpha and -alpha on the device, cublasSdot for r1 . r1);
//  - y = softmax_rows(A) x as the natural unfused hand-written CUDA: two kernels, one warp per
//    row each (the row's max; then the sums of exp(a - max) and of exp(a - max) x, divided).
#pragma once

#include <cstdint>

namespace bench {

class VendorSpmv;  // cuda_spmv.hpp

// The device buffers of one CG iteration (n elements each but the scalars). `spmv` computes
// q = A p (a VendorSpmv made over p and q). scalars holds 3 floats: p . q, alpha and -alpha.
struct VendorCgBuffers {
  uint32_t n = 0;
  const float *p = nullptr, *x = nullptr, *r = nullptr;
  const float* rho = nullptr;  // one float: the rho of the iteration
  float *q = nullptr, *x1 = nullptr, *r1 = nullptr;
  float* rho1 = nullptr;     // one float: r1 . r1
  float* scalars = nullptr;  // three floats
};

// The calls one iteration makes: SpMV, Sdot, the alpha kernel, two copies, two Saxpy, Sdot.
constexpr int kVendorCgCalls = 8;

// One CG iteration: q = A p; alpha = rho / (p . q); x1 = x + alpha p; r1 = r - alpha q;
// rho1 = r1 . r1.
void vendorCgIteration(const VendorSpmv& spmv, const VendorCgBuffers& b);

// The kernels the hand-written softmax-GEMV launches.
constexpr int kHandSoftmaxKernels = 2;

// y = softmax_rows(A) x for the row-major rows x cols matrix `a` (rows of `pitch` floats):
// m[r] = max of row r; y[r] = (sum exp(a - m[r]) x) / (sum exp(a - m[r])). m holds rows floats.
void handSoftmaxGemv(const float* a, uint32_t rows, uint32_t cols, uint32_t pitch, const float* x,
                     float* m, float* y);

}  // namespace bench
