// cuSPARSE's SpMV as the SpMV benchmark's baseline (see cuda_spmv.hpp).
#include <cuda_runtime.h>
#include <cusparse.h>

#include <stdexcept>
#include <string>

#include "cuda_spmv.hpp"

namespace bench {
namespace {

void check(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + " failed: " + cusparseGetErrorString(s));
  }
}

cusparseHandle_t handle() {
  static const cusparseHandle_t h = [] {
    cusparseHandle_t created = nullptr;
    check(cusparseCreate(&created), "cusparseCreate");
    return created;
  }();
  return h;
}

}  // namespace

struct VendorSpmv::State {
  cusparseSpMatDescr_t a = nullptr;
  cusparseDnVecDescr_t x = nullptr, y = nullptr;
  cusparseSpMVAlg_t algorithm = CUSPARSE_SPMV_CSR_ALG1;
  void* buffer = nullptr;
  float alpha = 1.0f, beta = 0.0f;
  // Here rather than in ~VendorSpmv, so that a constructor that throws half way frees too.
  ~State() {
    cudaFree(buffer);
    if (a) cusparseDestroySpMat(a);
    if (x) cusparseDestroyDnVec(x);
    if (y) cusparseDestroyDnVec(y);
  }
};

VendorSpmv::VendorSpmv(int algorithm, uint32_t rows, uint32_t cols, uint32_t nnz,
                       const uint32_t* rowOffsets, const uint32_t* columns, const float* values,
                       const float* x, float* y)
    : state_(new State) {
  State& s = *state_;
  s.algorithm = algorithm == 2 ? CUSPARSE_SPMV_CSR_ALG2 : CUSPARSE_SPMV_CSR_ALG1;
  check(cusparseCreateCsr(&s.a, rows, cols, nnz, const_cast<uint32_t*>(rowOffsets),
                          const_cast<uint32_t*>(columns), const_cast<float*>(values),
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                          CUDA_R_32F),
        "cusparseCreateCsr");
  check(cusparseCreateDnVec(&s.x, cols, const_cast<float*>(x), CUDA_R_32F), "cusparseCreateDnVec");
  check(cusparseCreateDnVec(&s.y, rows, y, CUDA_R_32F), "cusparseCreateDnVec");
  size_t bytes = 0;
  check(cusparseSpMV_bufferSize(handle(), CUSPARSE_OPERATION_NON_TRANSPOSE, &s.alpha, s.a, s.x,
                                &s.beta, s.y, CUDA_R_32F, s.algorithm, &bytes),
        "cusparseSpMV_bufferSize");
  if (bytes && cudaMalloc(&s.buffer, bytes) != cudaSuccess) {
    throw std::runtime_error("cudaMalloc of cuSPARSE's SpMV buffer failed");
  }
  check(cusparseSpMV_preprocess(handle(), CUSPARSE_OPERATION_NON_TRANSPOSE, &s.alpha, s.a, s.x,
                                &s.beta, s.y, CUDA_R_32F, s.algorithm, s.buffer),
        "cusparseSpMV_preprocess");
}

VendorSpmv::~VendorSpmv() = default;

void VendorSpmv::operator()() const {
  const State& s = *state_;
  check(cusparseSpMV(handle(), CUSPARSE_OPERATION_NON_TRANSPOSE, &s.alpha, s.a, s.x, &s.beta, s.y,
                     CUDA_R_32F, s.algorithm, s.buffer),
        "cusparseSpMV");
}

}  // namespace bench
