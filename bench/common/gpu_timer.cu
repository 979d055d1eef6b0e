// Helper kernels and CUDA runtime calls for the CUB comparisons (see gpu_timer.hpp).
#include <cuda_runtime.h>

#include <stdexcept>

#include "gpu_timer.hpp"

namespace bench {
namespace {

__global__ void readAll(const uint4* data, size_t vectors, uint32_t* sink) {
  uint32_t acc = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < vectors;
       i += size_t{gridDim.x} * blockDim.x) {
    const uint4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;  // practically never: the reads must not be removed
}

__global__ void copyAll(const uint4* src, uint4* dst, size_t vectors) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < vectors;
       i += size_t{gridDim.x} * blockDim.x) {
    dst[i] = src[i];
  }
}

void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw std::runtime_error(what + ": " + cudaGetErrorString(e));
}

int gridFor(const void* kernel, int threads) {
  int perSm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, threads, 0), "occupancy");
  return perSm * multiprocessors();
}

}  // namespace

void checkCuda(const std::string& what) {
  check(cudaGetLastError(), what);
  check(cudaDeviceSynchronize(), what);
}

void* deviceAlloc(size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  return p;
}
void deviceFree(void* p) { cudaFree(p); }
void upload(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "upload");
}
void download(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "download");
}

std::string deviceName() {
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
  return p.name;
}

int multiprocessors() {
  int n = 0;
  check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, 0), "multiprocessors");
  return n;
}

void readKernel(const void* data, size_t bytes, uint32_t* sink) {
  static const int grid = gridFor(reinterpret_cast<const void*>(readAll), 512);
  readAll<<<grid, 512>>>(static_cast<const uint4*>(data), bytes / 16, sink);
}

void copyKernel(const void* src, void* dst, size_t bytes) {
  static const int grid = gridFor(reinterpret_cast<const void*>(copyAll), 512);
  copyAll<<<grid, 512>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst), bytes / 16);
}

}  // namespace bench
