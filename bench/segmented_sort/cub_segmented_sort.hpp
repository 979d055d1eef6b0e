// CUB's segmented sorts behind a plain C++ interface (compiled by nvcc in cub_segmented_sort.cu),
// so the segmented sort benchmark, built with the host compiler and obsidian, runs them on the
// same buffers.
#pragma once

#include <cstddef>

namespace bench {

// Which of CUB's two segmented sorts: cub::DeviceSegmentedSort (small, medium and large segments
// each sorted their own way) or cub::DeviceSegmentedRadixSort (a block a segment, LSD passes).
enum class CubSegmented { Sort, RadixSort };

// Enqueue CUB's SortKeys (values null) or SortPairs (u32 values) of n u32 keys ascending in
// `segments` segments on the default stream: segment s is offsets[s] .. offsets[s + 1] (begin
// offsets `offsets`, end offsets `offsets + 1`; u32, segments + 1 of them, on the device). The
// inputs are left as they are; `temp` must hold cubSegmentedSortTempBytes(...) bytes.
size_t cubSegmentedSortTempBytes(size_t n, size_t segments, CubSegmented which, bool pairs);
void cubSegmentedSort(const void* keysIn, void* keysOut, const void* valuesIn, void* valuesOut,
                      size_t n, size_t segments, const void* offsets, CubSegmented which,
                      void* temp, size_t tempBytes);

}  // namespace bench
