// A CUDA application built with nvcc that uses kernels exported by obsidian at build time:
// no obsidian at run time. It checks every result against a CPU reference: PASS/FAIL; exit
// code 77 where there is no GPU (the tests report that as skipped).
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "blocksums.cuh"
#include "dup_a.cuh"
#include "dup_b.cuh"
#include "effects.cuh"
#include "mandel.cuh"
#include "reduce.cuh"
#include "scan.cuh"

namespace {

#define CHECK_CUDA(call)                                                        \
  do {                                                                          \
    const cudaError_t e_ = (call);                                              \
    if (e_ != cudaSuccess) {                                                    \
      std::printf("%s failed: %s\n", #call, cudaGetErrorString(e_));           \
      return false;                                                             \
    }                                                                           \
  } while (0)

std::vector<uint32_t> randomWords(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) x = rng();
  return v;
}

bool largeReduce(size_t n) {
  const std::vector<uint32_t> host = randomWords(n, static_cast<unsigned>(n));
  uint32_t *in = nullptr, *result = nullptr;
  CHECK_CUDA(cudaMalloc(&in, n * sizeof(uint32_t)));
  CHECK_CUDA(cudaMalloc(&result, sizeof(uint32_t)));
  CHECK_CUDA(cudaMemcpy(in, host.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
  CHECK_CUDA(embed::reduce::sum(in, n, result));
  uint32_t got = 0;
  CHECK_CUDA(cudaMemcpy(&got, result, sizeof got, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(result));
  const uint32_t expected = std::accumulate(host.begin(), host.end(), 0u);
  std::printf("large reduction of %zu elements: %s\n", n, got == expected ? "PASS" : "FAIL");
  return got == expected;
}

bool blockSums() {
  const size_t blocks = 1000, n = blocks * 512;
  const std::vector<uint32_t> host = randomWords(n, 7);
  uint32_t *in = nullptr, *out = nullptr;
  CHECK_CUDA(cudaMalloc(&in, n * sizeof(uint32_t)));
  CHECK_CUDA(cudaMalloc(&out, blocks * sizeof(uint32_t)));
  CHECK_CUDA(cudaMemcpy(in, host.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
  bool ok = true;
  // The launcher checks what obsidian's launch checks: a bad length launches nothing.
  ok = ok && embed::blocksums::red5_launch(in, n - 1, out, blocks) == cudaErrorInvalidValue;
  ok = ok && embed::blocksums::red5_launch(in, n, out, blocks - 1) == cudaErrorInvalidValue;
  ok = ok && embed::blocksums::red5_launch(nullptr, n, out, blocks) == cudaErrorInvalidValue;
  // The same kernel from two exported headers: no collision.
  CHECK_CUDA(embed::a::red5_launch(in, n, out, blocks));
  CHECK_CUDA(embed::b::red5_launch(in, n, out, blocks));
  CHECK_CUDA(embed::blocksums::red5_launch(in, n, out, blocks));
  std::vector<uint32_t> got(blocks);
  CHECK_CUDA(cudaMemcpy(got.data(), out, blocks * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(out));
  for (size_t b = 0; b < blocks; ++b) {
    const uint32_t expected = std::accumulate(host.begin() + b * 512, host.begin() + (b + 1) * 512, 0u);
    ok = ok && got[b] == expected;
  }
  std::printf("block sums (red5, bad arguments refused): %s\n", ok ? "PASS" : "FAIL");
  return ok;
}

bool largeScan(size_t n, bool exclusive) {
  const std::vector<uint32_t> host = randomWords(n, static_cast<unsigned>(n) + 1);
  uint32_t *in = nullptr, *out = nullptr;
  CHECK_CUDA(cudaMalloc(&in, n * sizeof(uint32_t)));
  CHECK_CUDA(cudaMalloc(&out, n * sizeof(uint32_t)));
  CHECK_CUDA(cudaMemcpy(in, host.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
  CHECK_CUDA(embed::scan::scan(in, n, out, exclusive));
  std::vector<uint32_t> got(n);
  CHECK_CUDA(cudaMemcpy(got.data(), out, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(out));
  uint32_t acc = 0;
  bool ok = true;
  for (size_t i = 0; i < n; ++i) {
    if (exclusive) {
      ok = ok && got[i] == acc;
      acc += host[i];
    } else {
      acc += host[i];
      ok = ok && got[i] == acc;
    }
  }
  std::printf("large %s scan of %zu elements: %s\n", exclusive ? "exclusive" : "inclusive", n,
              ok ? "PASS" : "FAIL");
  return ok;
}

// The Mandelbrot image of the paper, rows of 256 pixels, against plain C++ (the header says
// the kernel wants --fmad=false, which CMake gives nvcc for this target).
bool mandelbrot() {
  const uint32_t width = 256, height = 192;
  uint8_t* image = nullptr;
  CHECK_CUDA(cudaMalloc(&image, width * height));
  CHECK_CUDA(embed::mandel::mandel_launch(height, image, width * height));
  std::vector<uint8_t> got(width * height);
  CHECK_CUDA(cudaMemcpy(got.data(), image, got.size(), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(image));
  const float xmax = 1.2f, xmin = -2.0f, ymax = 1.2f, ymin = -1.2f;
  const float deltaP = (xmax - xmin) / static_cast<float>(width);
  const float deltaQ = (ymax - ymin) / static_cast<float>(height);
  size_t differing = 0;
  for (uint32_t b = 0; b < height; ++b) {
    for (uint32_t t = 0; t < width; ++t) {
      float x = 0, y = 0;
      uint32_t iter = 1;
      while (x * x + y * y < 4.0f && iter < 512) {
        const float nx = x * x - y * y + (static_cast<float>(t) * deltaP + xmin);
        const float ny = 2.0f * x * y + (ymax - static_cast<float>(b) * deltaQ);
        x = nx;
        y = ny;
        ++iter;
      }
      differing += got[b * width + t] != static_cast<uint8_t>((iter % 16) * 16);
    }
  }
  std::printf("Mandelbrot %ux%u: %zu pixels differ from C++: %s\n", width, height, differing,
              differing == 0 ? "PASS" : "FAIL");
  return differing == 0;
}

// An effect-only kernel: its launcher takes the input and the bins, no output.
bool effectOnly() {
  const size_t n = 256 * 1000 + 256;
  std::vector<uint32_t> in(n);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint32_t>(i * 2654435761u);
  std::vector<uint32_t> want(16, 0);
  for (uint32_t x : in) ++want[x % 16];
  uint32_t *dIn = nullptr, *dBins = nullptr;
  CHECK_CUDA(cudaMalloc(&dIn, n * 4));
  CHECK_CUDA(cudaMalloc(&dBins, 16 * 4));
  CHECK_CUDA(cudaMemcpy(dIn, in.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dBins, 0, 16 * 4));
  CHECK_CUDA(embed::effects::countMod16_launch(dIn, n, dBins, 16));
  std::vector<uint32_t> got(16);
  CHECK_CUDA(cudaMemcpy(got.data(), dBins, 16 * 4, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(dIn));
  CHECK_CUDA(cudaFree(dBins));
  const bool ok = got == want;
  std::printf("effect-only kernel (counts modulo 16 of %zu elements): %s\n", n,
              ok ? "PASS" : "FAIL");
  return ok;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  bool ok = blockSums();
  ok = mandelbrot() && ok;
  ok = effectOnly() && ok;
  for (size_t n : {size_t{1}, size_t{1000}, (size_t{1} << 20) + 3}) {
    ok = largeScan(n, false) && ok;
    ok = largeScan(n, true) && ok;
  }
  for (size_t n : {size_t{1}, size_t{1000}, (size_t{1} << 20) + 3, size_t{1} << 26}) {
    ok = largeReduce(n) && ok;
  }
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
