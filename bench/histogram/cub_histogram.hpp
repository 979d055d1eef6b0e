// CUB's even histogram behind a plain C++ interface (compiled by nvcc in cub_histogram.cu), so
// the benchmark, built with the host compiler and obsidian, runs it on the same buffers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bench {

enum class SampleKind { U8, U32, F32 };

// Enqueue cub::DeviceHistogram::HistogramEven of in[0, n) into `bins` counters over
// [lower, upper) on the default stream. `temp` must hold cubHistogramTempBytes(...) bytes.
size_t cubHistogramTempBytes(SampleKind kind, int bins, size_t n);
void cubHistogramEven(SampleKind kind, const void* in, size_t n, uint32_t* counts, int bins,
                      double lower, double upper, void* temp, size_t tempBytes);

}  // namespace bench
