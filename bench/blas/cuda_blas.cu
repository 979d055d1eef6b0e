// The CUBLAS sequences of the fused BLAS benchmark (see cuda_blas.hpp).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "cuda_blas.hpp"

namespace bench {
namespace {

cublasHandle_t handle(cublasPointerMode_t mode) {
  const auto create = [](cublasPointerMode_t m) {
    cublasHandle_t created = nullptr;
    if (cublasCreate(&created) != CUBLAS_STATUS_SUCCESS) {
      throw std::runtime_error("cublasCreate failed");
    }
    cublasSetPointerMode(created, m);
    return created;
  };
  static const cublasHandle_t device = create(CUBLAS_POINTER_MODE_DEVICE);
  static const cublasHandle_t host = create(CUBLAS_POINTER_MODE_HOST);
  return mode == CUBLAS_POINTER_MODE_DEVICE ? device : host;
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + " failed with status " + std::to_string(s));
  }
}

}  // namespace

void cublasSequence(const std::string& name, float alpha, float beta,
                    const std::map<std::string, float*>& buffers, uint32_t n, uint32_t rows,
                    uint32_t cols, bool inPlaceOnly) {
  const cublasHandle_t h = handle(CUBLAS_POINTER_MODE_HOST);
  const auto p = [&](const char* b) { return buffers.at(b); };
  const int vn = static_cast<int>(n), m = static_cast<int>(rows), c = static_cast<int>(cols);
  const int mat = m * c;
  const float one = 1.0f, zero = 0.0f, minusAlpha = -alpha;
  // Row-major rows x cols = column-major cols x rows (lda = cols).
  const auto ax = [&](float a, const float* A, const float* x, float b, float* y) {  // y = aAx+by
    check(cublasSgemv(h, CUBLAS_OP_T, c, m, &a, A, c, x, 1, &b, y, 1), "cublasSgemv(T)");
  };
  const auto atx = [&](float a, const float* A, const float* x, float b, float* y) {
    check(cublasSgemv(h, CUBLAS_OP_N, c, m, &a, A, c, x, 1, &b, y, 1), "cublasSgemv(N)");
  };
  if (name == "AXPYDOT") {  // z = w; z -= alpha v; r = z . u
    check(cublasScopy(h, vn, p("w"), 1, p("z"), 1), "cublasScopy");
    check(cublasSaxpy(h, vn, &minusAlpha, p("v"), 1, p("z"), 1), "cublasSaxpy");
    check(cublasSdot(handle(CUBLAS_POINTER_MODE_DEVICE), vn, p("z"), 1, p("u"), 1, p("r")),
          "cublasSdot");
  } else if (name == "SSCAL") {  // y = x; y *= alpha
    if (!inPlaceOnly) check(cublasScopy(h, vn, p("x"), 1, p("y"), 1), "cublasScopy");
    check(cublasSscal(h, vn, &alpha, p("y"), 1), "cublasSscal");
  } else if (name == "WAXPBY") {  // w = x; w *= alpha; w += beta y
    check(cublasScopy(h, vn, p("x"), 1, p("w"), 1), "cublasScopy");
    check(cublasSscal(h, vn, &alpha, p("w"), 1), "cublasSscal");
    check(cublasSaxpy(h, vn, &beta, p("y"), 1, p("w"), 1), "cublasSaxpy");
  } else if (name == "VADD") {  // x = w; x += y; x += z
    check(cublasScopy(h, vn, p("w"), 1, p("x"), 1), "cublasScopy");
    check(cublasSaxpy(h, vn, &one, p("y"), 1, p("x"), 1), "cublasSaxpy");
    check(cublasSaxpy(h, vn, &one, p("z"), 1, p("x"), 1), "cublasSaxpy");
  } else if (name == "MADD") {  // C = A; C += B
    check(cublasScopy(h, mat, p("A"), 1, p("C"), 1), "cublasScopy");
    check(cublasSaxpy(h, mat, &one, p("B"), 1, p("C"), 1), "cublasSaxpy");
  } else if (name == "SGEMV") {  // z = y; z = alpha A x + beta z
    check(cublasScopy(h, m, p("y"), 1, p("z"), 1), "cublasScopy");
    ax(alpha, p("A"), p("x"), beta, p("z"));
  } else if (name == "GESUMMV") {  // y = alpha A x; y += beta B x
    ax(alpha, p("A"), p("x"), zero, p("y"));
    ax(beta, p("B"), p("x"), one, p("y"));
  } else if (name == "ATAX") {  // t = A x; y = A^T t
    ax(one, p("A"), p("x"), zero, p("t"));
    atx(one, p("A"), p("t"), zero, p("y"));
  } else if (name == "SGEMVT") {  // x = z; x = beta A^T y + x; w = alpha A x
    check(cublasScopy(h, c, p("z"), 1, p("x"), 1), "cublasScopy");
    atx(beta, p("A"), p("y"), one, p("x"));
    ax(alpha, p("A"), p("x"), zero, p("w"));
  } else if (name == "GEMVER") {  // B = A; B += u1 v1^T; B += u2 v2^T; x = z; x += beta B^T y;
                                  // w = alpha B x
    check(cublasScopy(h, mat, p("A"), 1, p("B"), 1), "cublasScopy");
    check(cublasSger(h, c, m, &one, p("v1"), 1, p("u1"), 1, p("B"), c), "cublasSger");
    check(cublasSger(h, c, m, &one, p("v2"), 1, p("u2"), 1, p("B"), c), "cublasSger");
    check(cublasScopy(h, c, p("z"), 1, p("x"), 1), "cublasScopy");
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
  check(cublasSgeam(handle(CUBLAS_POINTER_MODE_HOST), CUBLAS_OP_N, CUBLAS_OP_N, n, m, &one, a, n,
                    &one, b, n, c, n),
        "cublasSgeam");
}

}  // namespace bench
