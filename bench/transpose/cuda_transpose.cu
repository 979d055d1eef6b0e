// The hand-written tiled transpose (see cuda_transpose.hpp).
#include "cuda_transpose.hpp"

namespace bench {
namespace {

constexpr int kTile = 32, kRowsPerPass = 8;

__global__ void tiledTranspose(const uint32_t* __restrict__ in, uint32_t* __restrict__ out,
                               uint32_t rows, uint32_t cols) {
  __shared__ uint32_t tile[kTile][kTile + 1];
  const uint32_t c0 = blockIdx.x * kTile, r0 = blockIdx.y * kTile;
  const uint32_t x = threadIdx.x;
#pragma unroll
  for (int k = 0; k < kTile; k += kRowsPerPass) {
    const uint32_t r = r0 + threadIdx.y + k, c = c0 + x;
    if (r < rows && c < cols) tile[threadIdx.y + k][x] = in[size_t{r} * cols + c];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kTile; k += kRowsPerPass) {
    const uint32_t oc = c0 + threadIdx.y + k, orow = r0 + x;  // out[oc][orow] = in[orow][oc]
    if (oc < cols && orow < rows) out[size_t{oc} * rows + orow] = tile[x][threadIdx.y + k];
  }
}

}  // namespace

void cudaTranspose(const uint32_t* in, uint32_t* out, uint32_t rows, uint32_t cols) {
  const dim3 grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
  tiledTranspose<<<grid, dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols);
}

}  // namespace bench
