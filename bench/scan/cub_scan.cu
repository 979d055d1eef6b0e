// CUB's scans (see cub_scan.hpp).
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
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

// The predicate of the select benchmark: a value below a threshold.
struct Below {
  unsigned below;
  __host__ __device__ bool operator()(unsigned v) const { return v < below; }
};

void selectBelow(void* temp, size_t& bytes, const void* in, void* out, void* count, size_t n,
                 unsigned below) {
  check(cub::DeviceSelect::If(temp, bytes, static_cast<const unsigned*>(in),
                              static_cast<unsigned*>(out), static_cast<unsigned*>(count),
                              static_cast<int64_t>(n), Below{below}),
        "cub::DeviceSelect::If");
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

size_t cubSelectBelowTempBytes(size_t n) {
  size_t bytes = 0;
  selectBelow(nullptr, bytes, nullptr, nullptr, nullptr, n, 0);
  return bytes;
}

void cubSelectBelow(const void* in, void* out, void* count, size_t n, unsigned below, void* temp,
                    size_t bytes) {
  selectBelow(temp, bytes, in, out, count, n, below);
}

}  // namespace bench
