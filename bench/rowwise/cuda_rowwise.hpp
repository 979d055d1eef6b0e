// Hand-written row-wise CUDA kernels (cuda_rowwise.cu, built by nvcc): the yardstick the
// rowwise benchmark races. One block per row, the row held in registers (16-byte loads), warp
// shuffles and one shared slot per warp for each block reduction, f32 math: as such kernels are
// written by hand (the softmax measured at 183.6 us for f32 16384 x 4096 in issue 42).
#pragma once

#include <cstdint>

namespace bench {

enum class HandOp { Softmax, LayerNorm, RmsNorm };
enum class HandType { F32, F16, BF16 };

// Enqueues op over rows x cols elements of `type` (cols a multiple of 16 bytes' worth, at most
// 32 values a thread at 1024 threads) on the default stream; gamma and beta are the norms'
// column arrays (null for softmax; beta null for rmsNorm). Returns false for a shape it does not
// take.
bool handRowwise(HandOp op, HandType type, const void* in, const void* gamma, const void* beta,
                 void* out, uint32_t rows, uint32_t cols, float eps);

}  // namespace bench
