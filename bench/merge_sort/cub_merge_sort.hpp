// CUB's merge sort behind a plain C++ interface (compiled by nvcc in cub_merge_sort.cu), so the
// merge sort benchmark, built with the host compiler and obsidian, runs it on the same buffers.
#pragma once

#include <cstddef>

namespace bench {

// The key types and orders the merge sort benchmark races: u32 keys by a < b, f32 keys by
// b < a (largest first), each a CUB comparator functor in cub_merge_sort.cu.
enum class MergeSortCase { U32Ascending, F32Descending };

// Enqueue cub::DeviceMergeSort::SortKeysCopy (values null) or SortPairsCopy (u32 values) of n
// keys (32-bit offsets: n < 2^32) on the default stream; the inputs are left as they are, and
// `temp` must hold cubMergeSortTempBytes(n, ...) bytes.
size_t cubMergeSortTempBytes(size_t n, MergeSortCase what, bool pairs);
void cubMergeSort(const void* keysIn, void* keysOut, const void* valuesIn, void* valuesOut,
                  size_t n, MergeSortCase what, void* temp, size_t tempBytes);

}  // namespace bench
