// CUB's reductions (see cub_reduce.hpp).
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <stdexcept>

#include "cub_reduce.hpp"

namespace bench {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Segment offsets s * segment, computed on the fly (no offsets array to read).
struct SegmentStart {
  uint32_t segment;
  __host__ __device__ long long operator()(long long s) const { return s * segment; }
};

template <class T>
size_t reduceTemp(size_t n) {
  size_t bytes = 0;
  check(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const T*>(nullptr),
                               static_cast<T*>(nullptr), static_cast<int64_t>(n)),
        "cub::DeviceReduce::Sum (size)");
  return bytes;
}

template <class T>
void reduce(const void* in, size_t n, void* out, void* temp, size_t bytes) {
  check(cub::DeviceReduce::Sum(temp, bytes, static_cast<const T*>(in), static_cast<T*>(out),
                               static_cast<int64_t>(n)),
        "cub::DeviceReduce::Sum");
}

template <class T>
size_t segmentedTemp(size_t segments, uint32_t segment) {
  size_t bytes = 0;
  auto begin = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0),
                                               SegmentStart{segment});
  check(cub::DeviceSegmentedReduce::Sum(nullptr, bytes, static_cast<const T*>(nullptr),
                                        static_cast<T*>(nullptr), static_cast<int64_t>(segments),
                                        begin, begin + 1),
        "cub::DeviceSegmentedReduce::Sum (size)");
  return bytes;
}

template <class T>
void segmented(const void* in, size_t segments, uint32_t segment, void* out, void* temp,
               size_t bytes) {
  auto begin = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0),
                                               SegmentStart{segment});
  check(
      cub::DeviceSegmentedReduce::Sum(temp, bytes, static_cast<const T*>(in), static_cast<T*>(out),
                                      static_cast<int64_t>(segments), begin, begin + 1),
      "cub::DeviceSegmentedReduce::Sum");
}

}  // namespace

size_t cubReduceTempBytes(size_t n, bool isFloat) {
  return isFloat ? reduceTemp<float>(n) : reduceTemp<uint32_t>(n);
}
void cubReduceSum(const void* in, size_t n, void* out, bool isFloat, void* temp, size_t bytes) {
  isFloat ? reduce<float>(in, n, out, temp, bytes) : reduce<uint32_t>(in, n, out, temp, bytes);
}
size_t cubSegmentedTempBytes(size_t segments, uint32_t segment, bool isFloat) {
  return isFloat ? segmentedTemp<float>(segments, segment)
                 : segmentedTemp<uint32_t>(segments, segment);
}
void cubSegmentedSum(const void* in, size_t segments, uint32_t segment, void* out, bool isFloat,
                     void* temp, size_t bytes) {
  isFloat ? segmented<float>(in, segments, segment, out, temp, bytes)
          : segmented<uint32_t>(in, segments, segment, out, temp, bytes);
}

}  // namespace bench
