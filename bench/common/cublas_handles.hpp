// The benchmarks' cuBLAS handles and status check, shared by every family that races cuBLAS.
#pragma once

#include <cublas_v2.h>

namespace bench {

// One handle per pointer mode (a dot's result in device memory, an axpy's alpha on the host),
// created on first use and kept, so no call switches modes inside a timed run.
cublasHandle_t cublasHandle(cublasPointerMode_t mode);

// Throws std::runtime_error naming `what` and the status when `s` is not success.
void cublasCheck(cublasStatus_t s, const char* what);

}  // namespace bench
