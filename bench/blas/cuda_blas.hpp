// The baseline of the fused BLAS benchmark (bench/blas): each sequence of the kernel-fusion
// BLAS seed (002, Table 1) as the CUBLAS calls the paper raced, copies included where a CUBLAS
// routine works in place (the paper's tag S). Matrices are row-major and dense (rows x cols),
// so each is CUBLAS's column-major cols x rows matrix: A x is sgemv(T), A^T y is sgemv(N), and
// B += u v^T is sger(v, u). Everything is enqueued on the default stream.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace bench {

// Runs sequence `name` (AXPYDOT, ATAX, ...) over the device buffers named as in
// examples/blas/blas.hpp's Sequence (ATAX's temporary t among them). `inPlaceOnly`: SSCAL
// without the copy that makes it out of place (the timed form: CUBLAS's sscal alone).
void cublasSequence(const std::string& name, float alpha, float beta,
                    const std::map<std::string, float*>& buffers, uint32_t n, uint32_t rows,
                    uint32_t cols, bool inPlaceOnly = false);

// MADD by cublasSgeam (C = A + B, one call, out of place): the strongest CUBLAS form, beside the
// paper's copy + axpy.
void cublasGeamAdd(const float* a, const float* b, float* c, uint32_t rows, uint32_t cols);

}  // namespace bench
