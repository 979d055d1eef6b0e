// CUB's scans (see cub_scan.hpp).
#include <cub/device/device_scan.cuh>
#include <stdexcept>
#include <string>

#include "cub_scan.hpp"

namespace bench {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <class T>
void scan(void* temp, size_t& bytes, const void* in, void* out, size_t n, bool exclusive) {
  const T* i = static_cast<const T*>(in);
  T* o = static_cast<T*>(out);
  if (exclusive) {
    check(cub::DeviceScan::ExclusiveSum(temp, bytes, i, o, static_cast<int64_t>(n)),
          "cub::DeviceScan::ExclusiveSum");
  } else {
    check(cub::DeviceScan::InclusiveSum(temp, bytes, i, o, static_cast<int64_t>(n)),
          "cub::DeviceScan::InclusiveSum");
  }
}

}  // namespace

size_t cubScanTempBytes(size_t n, bool isFloat, bool exclusive) {
  size_t bytes = 0;
  isFloat ? scan<float>(nullptr, bytes, nullptr, nullptr, n, exclusive)
          : scan<unsigned>(nullptr, bytes, nullptr, nullptr, n, exclusive);
  return bytes;
}

void cubScanSum(const void* in, void* out, size_t n, bool isFloat, bool exclusive, void* temp,
                size_t bytes) {
  isFloat ? scan<float>(temp, bytes, in, out, n, exclusive)
          : scan<unsigned>(temp, bytes, in, out, n, exclusive);
}

}  // namespace bench
