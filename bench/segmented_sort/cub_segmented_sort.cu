// CUB's segmented sorts (see cub_segmented_sort.hpp).
#include <climits>
#include <cstdint>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <stdexcept>
#include <string>

#include "cub_segmented_sort.hpp"

namespace bench {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

void sort(void* temp, size_t& bytes, const void* keysIn, void* keysOut, const void* valuesIn,
          void* valuesOut, size_t n, size_t segments, const void* offsets, CubSegmented which,
          bool pairs) {
  // DeviceSegmentedRadixSort counts in int.
  if (n > INT_MAX || segments > INT_MAX) {
    throw std::runtime_error("cub segmented sort: at most 2^31 - 1 keys and segments");
  }
  const unsigned* ki = static_cast<const unsigned*>(keysIn);
  unsigned* ko = static_cast<unsigned*>(keysOut);
  const unsigned* vi = static_cast<const unsigned*>(valuesIn);
  unsigned* vo = static_cast<unsigned*>(valuesOut);
  // 32-bit offsets, as ours: the begin offsets, and the end offsets one later.
  const unsigned* begin = static_cast<const unsigned*>(offsets);
  const unsigned* end = begin ? begin + 1 : nullptr;  // null while asking for the bytes
  const int count = static_cast<int>(n), segs = static_cast<int>(segments);
  if (which == CubSegmented::Sort) {
    // In this CCCL, StableSortKeys / StableSortPairs call the very same dispatch as these
    // (stable by the radix sorts inside); the benchmark checks CUB's outputs against a host
    // stable sort.
    if (!pairs) {
      check(cub::DeviceSegmentedSort::SortKeys(temp, bytes, ki, ko, count, segs, begin, end),
            "cub::DeviceSegmentedSort::SortKeys");
    } else {
      check(
          cub::DeviceSegmentedSort::SortPairs(temp, bytes, ki, ko, vi, vo, count, segs, begin, end),
          "cub::DeviceSegmentedSort::SortPairs");
    }
  } else if (!pairs) {
    check(cub::DeviceSegmentedRadixSort::SortKeys(temp, bytes, ki, ko, count, segs, begin, end),
          "cub::DeviceSegmentedRadixSort::SortKeys");
  } else {
    check(cub::DeviceSegmentedRadixSort::SortPairs(temp, bytes, ki, ko, vi, vo, count, segs, begin,
                                                   end),
          "cub::DeviceSegmentedRadixSort::SortPairs");
  }
}

}  // namespace

size_t cubSegmentedSortTempBytes(size_t n, size_t segments, CubSegmented which, bool pairs) {
  size_t bytes = 0;
  sort(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, n, segments, nullptr, which, pairs);
  return bytes;
}

void cubSegmentedSort(const void* keysIn, void* keysOut, const void* valuesIn, void* valuesOut,
                      size_t n, size_t segments, const void* offsets, CubSegmented which,
                      void* temp, size_t bytes) {
  sort(temp, bytes, keysIn, keysOut, valuesIn, valuesOut, n, segments, offsets, which,
       valuesIn != nullptr);
}

}  // namespace bench
