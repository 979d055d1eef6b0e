// CUB's merge sort (see cub_merge_sort.hpp).
#include <cstdint>
#include <cub/device/device_merge_sort.cuh>
#include <stdexcept>
#include <string>

#include "cub_merge_sort.hpp"

namespace bench {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// The comparators: CUB's merge sort takes any strict weak order as a functor.
struct AscendingLess {
  template <class T>
  __host__ __device__ bool operator()(const T& a, const T& b) const {
    return a < b;
  }
};
struct DescendingLess {
  template <class T>
  __host__ __device__ bool operator()(const T& a, const T& b) const {
    return b < a;
  }
};

template <class K, class Less>
void sort(void* temp, size_t& bytes, const void* keysIn, void* keysOut, const void* valuesIn,
          void* valuesOut, size_t n, bool pairs) {
  if (n > UINT32_MAX) throw std::runtime_error("cub merge sort: at most 2^32 - 1 keys");
  const uint32_t count = static_cast<uint32_t>(n);  // 32-bit offsets, as ours
  const K* ki = static_cast<const K*>(keysIn);
  K* ko = static_cast<K*>(keysOut);
  if (!pairs) {
    check(cub::DeviceMergeSort::SortKeysCopy(temp, bytes, ki, ko, count, Less{}),
          "cub::DeviceMergeSort::SortKeysCopy");
  } else {
    check(
        cub::DeviceMergeSort::SortPairsCopy(temp, bytes, ki, static_cast<const unsigned*>(valuesIn),
                                            ko, static_cast<unsigned*>(valuesOut), count, Less{}),
        "cub::DeviceMergeSort::SortPairsCopy");
  }
}

template <class F>
void withCase(MergeSortCase what, F f) {
  switch (what) {
    case MergeSortCase::U32Ascending: return f(unsigned{}, AscendingLess{});
    case MergeSortCase::F32Descending: return f(float{}, DescendingLess{});
  }
}

}  // namespace

size_t cubMergeSortTempBytes(size_t n, MergeSortCase what, bool pairs) {
  size_t bytes = 0;
  withCase(what, [&](auto k, auto less) {
    sort<decltype(k), decltype(less)>(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, n, pairs);
  });
  return bytes;
}

void cubMergeSort(const void* keysIn, void* keysOut, const void* valuesIn, void* valuesOut,
                  size_t n, MergeSortCase what, void* temp, size_t bytes) {
  withCase(what, [&](auto k, auto less) {
    sort<decltype(k), decltype(less)>(temp, bytes, keysIn, keysOut, valuesIn, valuesOut, n,
                                      valuesIn != nullptr);
  });
}

}  // namespace bench
