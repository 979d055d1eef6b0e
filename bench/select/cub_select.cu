// CUB's selections, partitions and run calls (see cub_select.hpp).
#include <cub/device/device_partition.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/functional>
#include <stdexcept>
#include <string>

#include "cub_select.hpp"

namespace bench {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// The benchmark's predicates: a value below a bound.
struct Below {
  unsigned bound;
  __host__ __device__ bool operator()(unsigned v) const { return v < bound; }
};
constexpr unsigned kHalf = 1u << 31, kQuarter = 1u << 30;

// One call; with temp null, only its storage size into `bytes`.
void run(CubSelect op, const CubSelectArgs& a, void* temp, size_t& bytes) {
  const unsigned* in = static_cast<const unsigned*>(a.in);
  unsigned* out = static_cast<unsigned*>(a.out);
  unsigned* count = static_cast<unsigned*>(a.count);
  const auto n = static_cast<int64_t>(a.n);
  switch (op) {
    case CubSelect::If:
      return check(cub::DeviceSelect::If(temp, bytes, in, out, count, n, Below{kHalf}),
                   "cub::DeviceSelect::If");
    case CubSelect::Flagged:
      return check(cub::DeviceSelect::Flagged(
                       temp, bytes, in, static_cast<const unsigned char*>(a.aux), out, count, n),
                   "cub::DeviceSelect::Flagged");
    case CubSelect::Unique:
      return check(cub::DeviceSelect::Unique(temp, bytes, in, out, count, n),
                   "cub::DeviceSelect::Unique");
    case CubSelect::PartitionIf:
      return check(cub::DevicePartition::If(temp, bytes, in, out, count, n, Below{kHalf}),
                   "cub::DevicePartition::If");
    case CubSelect::PartitionThreeWay:
      return check(cub::DevicePartition::If(temp, bytes, in, out, static_cast<unsigned*>(a.out2),
                                            static_cast<unsigned*>(a.out3), count, n,
                                            Below{kQuarter}, Below{kHalf}),
                   "cub::DevicePartition::If (three-way)");
    case CubSelect::RunLengthEncode:
      // Encode counts in int: the benchmark's sizes are below 2^31.
      return check(
          cub::DeviceRunLengthEncode::Encode(temp, bytes, in, out, static_cast<unsigned*>(a.out2),
                                             count, static_cast<int>(a.n)),
          "cub::DeviceRunLengthEncode::Encode");
    case CubSelect::ReduceByKey:
      return check(cub::DeviceReduce::ReduceByKey(
                       temp, bytes, in, out, static_cast<const float*>(a.aux),
                       static_cast<float*>(a.out2), count, cuda::std::plus<>{}, n),
                   "cub::DeviceReduce::ReduceByKey");
    case CubSelect::ScanByKey:
      return check(
          cub::DeviceScan::InclusiveScanByKey(temp, bytes, in, static_cast<const float*>(a.aux),
                                              static_cast<float*>(a.out), cuda::std::plus<>{}, n),
          "cub::DeviceScan::InclusiveScanByKey");
  }
}

}  // namespace

size_t cubSelectTempBytes(CubSelect op, size_t n) {
  size_t bytes = 0;
  CubSelectArgs a;
  a.n = n;
  run(op, a, nullptr, bytes);
  return bytes;
}

void cubSelect(CubSelect op, const CubSelectArgs& args, void* temp, size_t tempBytes) {
  run(op, args, temp, tempBytes);
}

}  // namespace bench
