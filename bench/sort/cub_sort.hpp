// CUB's radix sort behind a plain C++ interface (compiled by nvcc in cub_sort.cu), so the sort
// benchmark, built with the host compiler and obsidian, runs it on the same buffers.
#pragma once

#include <cstddef>

namespace bench {

enum class SortKey { U32, F32, U64 };

// Enqueue cub::DeviceRadixSort::SortKeys (values null) or SortPairs (u32 values) of n keys on
// the default stream; `temp` must hold cubSortTempBytes(n, ...) bytes.
size_t cubSortTempBytes(size_t n, SortKey type, bool pairs);
void cubSort(const void* keysIn, void* keysOut, const void* valuesIn, void* valuesOut, size_t n,
             SortKey type, void* temp, size_t tempBytes);

}  // namespace bench
