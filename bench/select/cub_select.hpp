// CUB's selections, partitions and run calls behind a plain C++ interface (compiled by nvcc in
// cub_select.cu), so the select benchmark, built with the host compiler and obsidian, runs them
// on the same buffers.
#pragma once

#include <cstddef>

namespace bench {

// The CUB calls raced, on u32 elements (keys) and, where named, u8 flags or f32 values.
enum class CubSelect {
  If,                 // DeviceSelect::If, v < 2^31
  Flagged,            // DeviceSelect::Flagged, u8 flags
  Unique,             // DeviceSelect::Unique
  PartitionIf,        // DevicePartition::If (two-way), v < 2^31
  PartitionThreeWay,  // DevicePartition::If (three-way), v < 2^30, then v < 2^31
  RunLengthEncode,    // DeviceRunLengthEncode::Encode
  ReduceByKey,        // DeviceReduce::ReduceByKey, f32 values, plus
  ScanByKey,          // DeviceScan::InclusiveScanByKey, f32 values, plus
};

// The device pointers of one call; those a call does not use stay null.
struct CubSelectArgs {
  const void* in = nullptr;   // the u32 elements, or the keys
  const void* aux = nullptr;  // Flagged: the u8 flags; ReduceByKey, ScanByKey: the f32 values
  void* out = nullptr;        // the selection, the partition, the first part, the unique keys,
                              // or the scanned values
  void* out2 = nullptr;       // the second part, the run lengths (u32) or the folds (f32)
  void* out3 = nullptr;       // the three-way partition's unselected elements
  void* count = nullptr;      // u32: the count, the two parts' sizes, or the number of runs
  size_t n = 0;
};

// Enqueue the call on the default stream; `temp` must hold cubSelectTempBytes(op, n) bytes.
size_t cubSelectTempBytes(CubSelect op, size_t n);
void cubSelect(CubSelect op, const CubSelectArgs& args, void* temp, size_t tempBytes);

}  // namespace bench
