// CUB's even histogram (see cub_histogram.hpp).
#include <cub/device/device_histogram.cuh>
#include <stdexcept>
#include <string>

#include "cub_histogram.hpp"

namespace bench {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Levels: int for u8 samples (upper may be 256), the sample type otherwise.
template <class T, class Level>
size_t run(const void* in, size_t n, uint32_t* counts, int bins, double lower, double upper,
           void* temp, size_t bytes) {
  check(cub::DeviceHistogram::HistogramEven(temp, bytes, static_cast<const T*>(in), counts,
                                            bins + 1, static_cast<Level>(lower),
                                            static_cast<Level>(upper), static_cast<int64_t>(n)),
        "cub::DeviceHistogram::HistogramEven");
  return bytes;
}

size_t dispatch(SampleKind kind, const void* in, size_t n, uint32_t* counts, int bins, double lower,
                double upper, void* temp, size_t bytes) {
  switch (kind) {
    case SampleKind::U8: return run<uint8_t, int>(in, n, counts, bins, lower, upper, temp, bytes);
    case SampleKind::U32:
      return run<uint32_t, uint32_t>(in, n, counts, bins, lower, upper, temp, bytes);
    case SampleKind::F32: return run<float, float>(in, n, counts, bins, lower, upper, temp, bytes);
  }
  return 0;
}

}  // namespace

size_t cubHistogramTempBytes(SampleKind kind, int bins, size_t n) {
  return dispatch(kind, nullptr, n, nullptr, bins, 0, 1, nullptr, 0);
}

void cubHistogramEven(SampleKind kind, const void* in, size_t n, uint32_t* counts, int bins,
                      double lower, double upper, void* temp, size_t bytes) {
  dispatch(kind, in, n, counts, bins, lower, upper, temp, bytes);
}

}  // namespace bench
