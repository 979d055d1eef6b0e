// An nvcc-built program using a kernel exported by the installed obsidian at build time.
#include "inc.cuh"
int main() {
  uint32_t* data = nullptr;
  if (cudaMalloc(&data, 1024 * sizeof(uint32_t)) != cudaSuccess) return 77;  // no GPU
  const cudaError_t e = consumer::inc_launch(data, 1024, data, 1024);
  cudaFree(data);
  return e == cudaSuccess ? 0 : 1;
}
