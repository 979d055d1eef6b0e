// CUB's radix sort (see cub_sort.hpp).
#include <cub/device/device_radix_sort.cuh>
#include <stdexcept>
#include <string>

#include "cub_sort.hpp"

namespace bench {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <class K>
void sort(void* temp, size_t& bytes, const void* keysIn, void* keysOut, const void* valuesIn,
          void* valuesOut, size_t n) {
  const K* ki = static_cast<const K*>(keysIn);
  K* ko = static_cast<K*>(keysOut);
  if (valuesIn == nullptr) {
    check(cub::DeviceRadixSort::SortKeys(temp, bytes, ki, ko, static_cast<int64_t>(n)),
          "cub::DeviceRadixSort::SortKeys");
  } else {
    check(cub::DeviceRadixSort::SortPairs(temp, bytes, ki, ko,
                                          static_cast<const unsigned*>(valuesIn),
                                          static_cast<unsigned*>(valuesOut),
                                          static_cast<int64_t>(n)),
          "cub::DeviceRadixSort::SortPairs");
  }
}

template <class F>
void withType(SortKey type, F f) {
  switch (type) {
    case SortKey::U32: return f(unsigned{});
    case SortKey::F32: return f(float{});
    case SortKey::U64: return f(static_cast<unsigned long long>(0));
  }
}

}  // namespace

size_t cubSortTempBytes(size_t n, SortKey type, bool pairs) {
  size_t bytes = 0;
  static unsigned dummy = 0;  // SortPairs is chosen by non-null values
  withType(type, [&](auto x) {
    sort<decltype(x)>(nullptr, bytes, nullptr, nullptr, pairs ? &dummy : nullptr, nullptr, n);
  });
  return bytes;
}

void cubSort(const void* keysIn, void* keysOut, const void* valuesIn, void* valuesOut, size_t n,
             SortKey type, void* temp, size_t bytes) {
  withType(type,
           [&](auto x) { sort<decltype(x)>(temp, bytes, keysIn, keysOut, valuesIn, valuesOut, n); });
}

}  // namespace bench
