// CUB's scans behind a plain C++ interface (compiled by nvcc in cub_scan.cu), so the scan
// benchmark, built with the host compiler and obsidian, runs them on the same buffers.
#pragma once

#include <cstddef>

namespace bench {

enum class ScanElement { U32, F32, U64, F64 };

// Enqueue cub::DeviceScan::InclusiveSum (or ExclusiveSum) of in[0, n) into out on the default
// stream; `temp` must hold cubScanTempBytes(n, ...) bytes.
size_t cubScanTempBytes(size_t n, ScanElement type, bool exclusive);
void cubScanSum(const void* in, void* out, size_t n, ScanElement type, bool exclusive, void* temp,
                size_t tempBytes);

// Enqueue cub::DeviceSelect::If of the u32 elements of in[0, n) below `below` into out, their
// count into *count (a u32 on the device); `temp` must hold cubSelectBelowTempBytes(n) bytes.
size_t cubSelectBelowTempBytes(size_t n);
void cubSelectBelow(const void* in, void* out, void* count, size_t n, unsigned below, void* temp,
                    size_t tempBytes);

}  // namespace bench
