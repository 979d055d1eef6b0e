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

// scan<T> for the element type named by `type`.
template <class F>
void withType(ScanElement type, F f) {
  switch (type) {
    case ScanElement::U32: return f(unsigned{});
    case ScanElement::F32: return f(float{});
    case ScanElement::U64: return f(static_cast<unsigned long long>(0));
    case ScanElement::F64: return f(double{});
  }
}

}  // namespace

size_t cubScanTempBytes(size_t n, ScanElement type, bool exclusive) {
  size_t bytes = 0;
  withType(type,
           [&](auto x) { scan<decltype(x)>(nullptr, bytes, nullptr, nullptr, n, exclusive); });
  return bytes;
}

void cubScanSum(const void* in, void* out, size_t n, ScanElement type, bool exclusive, void* temp,
                size_t bytes) {
  withType(type, [&](auto x) { scan<decltype(x)>(temp, bytes, in, out, n, exclusive); });
}

}  // namespace bench
