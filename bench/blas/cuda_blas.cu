// The CUBLAS sequences of the fused BLAS benchmark (see cuda_blas.hpp).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "../common/cublas_handles.hpp"
#include "cuda_blas.hpp"

namespace bench {

void cublasSequence(const std::string& name, float alpha, float beta,
                    const std::map<std::string, float*>& buffers, uint32_t n, uint32_t rows,
                    uint32_t cols, bool inPlaceOnly) {
  const cublasHandle_t h = cublasHandle(CUBLAS_POINTER_MODE_HOST);
  const auto p = [&](const char* b) { return buffers.at(b); };
  const int vn = static_cast<int>(n), m = static_cast<int>(rows), c = static_cast<int>(cols);
  const int mat = m * c;
  const float one = 1.0f, zero = 0.0f, minusAlpha = -alpha;
  // Row-major rows x cols = column-major cols x rows (lda = cols).
  const auto ax = [&](float a, const float* A, const float* x, float b, float* y) {  // y = aAx+by
    cublasCheck(cublasSgemv(h, CUBLAS_OP_T, c, m, &a, A, c, x, 1, &b, y, 1), "cublasSgemv(T)");
  };
  const auto atx = [&](float a, const float* A, const float* x, float b, float* y) {
    cublasCheck(cublasSgemv(h, CUBLAS_OP_N, c, m, &a, A, c, x, 1, &b, y, 1), "cublasSgemv(N)");
  };
  if (name == "AXPYDOT") {  // z = w; z -= alpha v; r = z . u
    cublasCheck(cublasScopy(h, vn, p("w"), 1, p("z"), 1), "cublasScopy");
    cublasCheck(cublasSaxpy(h, vn, &minusAlpha, p("v"), 1, p("z"), 1), "cublasSaxpy");
    cublasCheck(
        cublasSdot(cublasHandle(CUBLAS_POINTER_MODE_DEVICE), vn, p("z"), 1, p("u"), 1, p("r")),
        "cublasSdot");
  } else if (name == "SSCAL") {  // y = x; y *= alpha
    if (!inPlaceOnly) cublasCheck(cublasScopy(h, vn, p("x"), 1, p("y"), 1), "cublasScopy");
    cublasCheck(cublasSscal(h, vn, &alpha, p("y"), 1), "cublasSscal");
  } else if (name == "WAXPBY") {  // w = x; w *= alpha; w += beta y
    cublasCheck(cublasScopy(h, vn, p("x"), 1, p("w"), 1), "cublasScopy");
    cublasCheck(cublasSscal(h, vn, &alpha, p("w"), 1), "cublasSscal");
    cublasCheck(cublasSaxpy(h, vn, &beta, p("y"), 1, p("w"), 1), "cublasSaxpy");
  } else if (name == "VADD") {  // x = w; x += y; x += z
    cublasCheck(cublasScopy(h, vn, p("w"), 1, p("x"), 1), "cublasScopy");
    cublasCheck(cublasSaxpy(h, vn, &one, p("y"), 1, p("x"), 1), "cublasSaxpy");
    cublasCheck(cublasSaxpy(h, vn, &one, p("z"), 1, p("x"), 1), "cublasSaxpy");
  } else if (name == "MADD") {  // C = A; C += B
    cublasCheck(cublasScopy(h, mat, p("A"), 1, p("C"), 1), "cublasScopy");
    cublasCheck(cublasSaxpy(h, mat, &one, p("B"), 1, p("C"), 1), "cublasSaxpy");
  } else if (name == "SGEMV") {  // z = y; z = alpha A x + beta z
    cublasCheck(cublasScopy(h, m, p("y"), 1, p("z"), 1), "cublasScopy");
    ax(alpha, p("A"), p("x"), beta, p("z"));
  } else if (name == "GESUMMV") {  // y = alpha A x; y += beta B x
    ax(alpha, p("A"), p("x"), zero, p("y"));
    ax(beta, p("B"), p("x"), one, p("y"));
  } else if (name == "ATAX") {  // t = A x; y = A^T t
    ax(one, p("A"), p("x"), zero, p("t"));
    atx(one, p("A"), p("t"), zero, p("y"));
  } else if (name == "SGEMVT") {  // x = z; x = beta A^T y + x; w = alpha A x
    cublasCheck(cublasScopy(h, c, p("z"), 1, p("x"), 1), "cublasScopy");
    atx(beta, p("A"), p("y"), one, p("x"));
    ax(alpha, p("A"), p("x"), zero, p("w"));
  } else if (name == "GEMVER") {  // B = A; B += u1 v1^T; B += u2 v2^T; x = z; x += beta B^T y;
                                  // w = alpha B x
    cublasCheck(cublasScopy(h, mat, p("A"), 1, p("B"), 1), "cublasScopy");
    cublasCheck(cublasSger(h, c, m, &one, p("v1"), 1, p("u1"), 1, p("B"), c), "cublasSger");
    cublasCheck(cublasSger(h, c, m, &one, p("v2"), 1, p("u2"), 1, p("B"), c), "cublasSger");
    cublasCheck(cublasScopy(h, c, p("z"), 1, p("x"), 1), "cublasScopy");
    atx(beta, p("B"), p("y"), one, p("x"));
    ax(alpha, p("B"), p("x"), zero, p("w"));
  } else if (name == "BiCGK") {  // q = A p; s = A^T r
    ax(one, p("A"), p("p"), zero, p("q"));
    atx(one, p("A"), p("r"), zero, p("s"));
  } else {
    throw std::runtime_error("cublasSequence: no sequence " + name);
  }
}

void cublasGeamAdd(const float* a, const float* b, float* c, uint32_t rows, uint32_t cols) {
  const float one = 1.0f;
  const int m = static_cast<int>(rows), n = static_cast<int>(cols);
  cublasCheck(cublasSgeam(cublasHandle(CUBLAS_POINTER_MODE_HOST), CUBLAS_OP_N, CUBLAS_OP_N, n, m,
                          &one, a, n, &one, b, n, c, n),
              "cublasSgeam");
}

}  // namespace bench
