// Hand-written CUDA baselines of Barracuda's stencils (bench/stencils): each in the two designs
// the thesis compares, a naive one reading every neighbour from global memory and a tiled one
// staging its block's inputs with their halo in shared memory, with the weights and the order of
// operations of examples/stencils/stencils.hpp. Launched on the default stream.
#pragma once

#include <cstdint>

namespace bench {

enum class Stencil1 { Difference, Spencer };  // forward difference, Spencer's 15-point average
enum class Stencil2 { Jacobi, Blur3, Blur5 };

// out[i] = f(in[i .. i + width)) for i < n - width + 1 (n >= width).
void cudaStencil1(Stencil1 s, bool tiled, const float* in, float* out, uint32_t n);
// out(r, c) = f(the clamped neighbourhood of in(r, c)), dense rows x cols.
void cudaStencil2(Stencil2 s, bool tiled, const float* in, float* out, uint32_t rows,
                  uint32_t cols);

// The fused RMSE, sqrt(sum((x - y)^2) / n), in one launch: 16-byte loads, a grid-strided
// sweep by `blocks` blocks, warp shuffles and a shared-memory block sum, one atomicAdd per
// block into state[0], and the last block (a ticket in state[1]) writing *result and clearing
// the state for the next launch. `state` is two words, zero before the first launch.
void cudaRmse(const float* x, const float* y, uint32_t n, float* result, uint32_t* state,
              uint32_t blocks);
// The blocks cudaRmse fills the device with.
uint32_t cudaRmseBlocks();

}  // namespace bench
