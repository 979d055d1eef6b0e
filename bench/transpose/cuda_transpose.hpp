// A hand-written tiled transpose in CUDA (cuda_transpose.cu, built by nvcc): the yardstick the
// transpose benchmark races, beside the copy roofline.
#pragma once

#include <cstdint>

namespace bench {

// Enqueue out = the cols x rows transpose of the row-major rows x cols u32 matrix `in` on the
// default stream: 32 x 32 tiles padded to 33 columns in shared memory, 32 x 8 threads per block.
void cudaTranspose(const uint32_t* in, uint32_t* out, uint32_t rows, uint32_t cols);

}  // namespace bench
