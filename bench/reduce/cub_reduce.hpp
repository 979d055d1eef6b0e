// CUB's reductions behind a plain C++ interface (compiled by nvcc in cub_reduce.cu), so the
// benchmark, built with the host compiler and obsidian, runs them on the same buffers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bench {

// Enqueue cub::DeviceReduce::Sum of in[0, n) into *out on the default stream. `temp` must hold
// cubReduceTempBytes(n) bytes.
size_t cubReduceTempBytes(size_t n, bool isFloat);
void cubReduceSum(const void* in, size_t n, void* out, bool isFloat, void* temp, size_t tempBytes);

// cub::DeviceSegmentedReduce::Sum over `segments` segments of `segment` elements each.
size_t cubSegmentedTempBytes(size_t segments, uint32_t segment, bool isFloat);
void cubSegmentedSum(const void* in, size_t segments, uint32_t segment, void* out, bool isFloat,
                     void* temp, size_t tempBytes);

}  // namespace bench
