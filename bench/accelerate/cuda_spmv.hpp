// The SpMV benchmark's baseline (bench/accelerate/spmv_bench.cpp): cuSPARSE's generic SpMV on a
// CSR matrix of 32-bit indices and floats, y = A x, with its descriptors, work buffer and
// preprocessing made once per matrix, so each timed call is the product alone.
#pragma once

#include <cstdint>
#include <memory>

namespace bench {

class VendorSpmv {
 public:
  // algorithm: 1 for CUSPARSE_SPMV_CSR_ALG1, 2 for CUSPARSE_SPMV_CSR_ALG2 (deterministic).
  // The arrays are device pointers and must outlive this object.
  VendorSpmv(int algorithm, uint32_t rows, uint32_t cols, uint32_t nnz, const uint32_t* rowOffsets,
             const uint32_t* columns, const float* values, const float* x, float* y);
  ~VendorSpmv();
  VendorSpmv(const VendorSpmv&) = delete;
  VendorSpmv& operator=(const VendorSpmv&) = delete;
  void operator()() const;  // on the default stream, not synchronized

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace bench
