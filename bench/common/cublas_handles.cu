// The benchmarks' cuBLAS handles (see cublas_handles.hpp).
#include <stdexcept>
#include <string>

#include "cublas_handles.hpp"

namespace bench {

cublasHandle_t cublasHandle(cublasPointerMode_t mode) {
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

void cublasCheck(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + " failed with status " + std::to_string(s));
  }
}

}  // namespace bench
