// The hand-written row-wise kernels (see cuda_rowwise.hpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda_rowwise.hpp"

namespace bench {
namespace {

// 16 bytes of T as floats, and back.
template <class T>
struct Pack;
template <>
struct Pack<float> {
  static constexpr int kW = 4;
  __device__ static void unpack(uint4 u, float* f) {
    f[0] = __uint_as_float(u.x);
    f[1] = __uint_as_float(u.y);
    f[2] = __uint_as_float(u.z);
    f[3] = __uint_as_float(u.w);
  }
  __device__ static uint4 pack(const float* f) {
    return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]),
                      __float_as_uint(f[3]));
  }
};
template <class H, class H2>
struct PackHalves {
  static constexpr int kW = 8;
  __device__ static float2 two(uint32_t w) {
    H2 h = *reinterpret_cast<H2*>(&w);
    if constexpr (sizeof(H) == 2 && std::is_same_v<H, __half>) {
      return __half22float2(h);
    } else {
      return __bfloat1622float2(h);
    }
  }
  __device__ static uint32_t word(float a, float b) {
    H2 h;
    if constexpr (std::is_same_v<H, __half>) {
      h = __floats2half2_rn(a, b);
    } else {
      h = __floats2bfloat162_rn(a, b);
    }
    return *reinterpret_cast<uint32_t*>(&h);
  }
  __device__ static void unpack(uint4 u, float* f) {
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 t = two(w[i]);
      f[2 * i] = t.x;
      f[2 * i + 1] = t.y;
    }
  }
  __device__ static uint4 pack(const float* f) {
    return make_uint4(word(f[0], f[1]), word(f[2], f[3]), word(f[4], f[5]), word(f[6], f[7]));
  }
};
template <>
struct Pack<__half> : PackHalves<__half, __half2> {};
template <>
struct Pack<__nv_bfloat16> : PackHalves<__nv_bfloat16, __nv_bfloat162> {};

// The block's sum or max of v, in every thread (one barrier to gather, one to reuse the slots).
template <bool kMax>
__device__ float blockAll(float v, float* slots) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const float u = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, u) : v + u;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  if (lane == 0) slots[warp] = v;
  __syncthreads();
  v = lane < warps ? slots[lane] : (kMax ? -INFINITY : 0.0f);
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const float u = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, u) : v + u;
  }
  __syncthreads();  // the slots are free again
  return v;
}

template <class T, int kV>
__global__ void __launch_bounds__(1024)
    rowKernel(HandOp op, const uint4* __restrict__ in, const uint4* __restrict__ gamma,
              const uint4* __restrict__ beta, uint4* __restrict__ out, int vcols, float eps) {
  constexpr int kW = Pack<T>::kW;
  __shared__ float slots[32];
  const size_t first = size_t{blockIdx.x} * vcols;
  float x[kV * kW];
  bool valid[kV];
#pragma unroll
  for (int k = 0; k < kV; ++k) {
    const int j = threadIdx.x + k * blockDim.x;
    valid[k] = j < vcols;
    if (valid[k]) {
      Pack<T>::unpack(in[first + j], x + k * kW);
    } else {
#pragma unroll
      for (int l = 0; l < kW; ++l) x[k * kW + l] = op == HandOp::Softmax ? -INFINITY : 0.0f;
    }
  }
  const float n = static_cast<float>(vcols * kW);
  float a = 0, b = 0;
  if (op == HandOp::Softmax) {
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < kV * kW; ++i) m = fmaxf(m, x[i]);
    a = blockAll<true>(m, slots);
    float s = 0;
#pragma unroll
    for (int i = 0; i < kV * kW; ++i) {
      x[i] = __expf(x[i] - a);
      s += x[i];
    }
    b = 1.0f / blockAll<false>(s, slots);
  } else if (op == HandOp::LayerNorm) {
    float s = 0;
#pragma unroll
    for (int i = 0; i < kV * kW; ++i) s += x[i];
    a = blockAll<false>(s, slots) / n;
    float q = 0;
#pragma unroll
    for (int k = 0; k < kV; ++k) {
#pragma unroll
      for (int l = 0; l < kW; ++l) {
        const float d = x[k * kW + l] - a;
        q += valid[k] ? d * d : 0.0f;
      }
    }
    b = rsqrtf(blockAll<false>(q, slots) / n + eps);
  } else {
    float q = 0;
#pragma unroll
    for (int i = 0; i < kV * kW; ++i) q += x[i] * x[i];
    a = rsqrtf(blockAll<false>(q, slots) / n + eps);
  }
#pragma unroll
  for (int k = 0; k < kV; ++k) {
    const int j = threadIdx.x + k * blockDim.x;
    if (!valid[k]) continue;
    float y[kW], g[kW], c[kW];
    if (op != HandOp::Softmax) Pack<T>::unpack(gamma[j], g);
    if (op == HandOp::LayerNorm) Pack<T>::unpack(beta[j], c);
#pragma unroll
    for (int l = 0; l < kW; ++l) {
      const float v = x[k * kW + l];
      y[l] = op == HandOp::Softmax     ? v * b
             : op == HandOp::LayerNorm ? (v - a) * b * g[l] + c[l]
                                       : v * a * g[l];
    }
    out[first + j] = Pack<T>::pack(y);
  }
}

template <class T>
bool launchRows(HandOp op, const void* in, const void* gamma, const void* beta, void* out,
                uint32_t rows, uint32_t cols, float eps) {
  constexpr int kW = Pack<T>::kW;
  if (cols % kW != 0) return false;
  const int vcols = static_cast<int>(cols / kW);
  // Four vectors a thread where the block allows, else more (up to 32 values).
  int threads = (vcols + 3) / 4;
  threads = threads < 32 ? 32 : threads > 1024 ? 1024 : (threads + 31) / 32 * 32;
  const int each = (vcols + threads - 1) / threads;
  const auto* i = static_cast<const uint4*>(in);
  const auto* g = static_cast<const uint4*>(gamma);
  const auto* b = static_cast<const uint4*>(beta);
  auto* o = static_cast<uint4*>(out);
  switch (each) {
    case 1: rowKernel<T, 1><<<rows, threads>>>(op, i, g, b, o, vcols, eps); return true;
    case 2: rowKernel<T, 2><<<rows, threads>>>(op, i, g, b, o, vcols, eps); return true;
    case 3:
    case 4: rowKernel<T, 4><<<rows, threads>>>(op, i, g, b, o, vcols, eps); return true;
    default:
      if (each * kW > 32) return false;
      rowKernel<T, 32 / kW><<<rows, threads>>>(op, i, g, b, o, vcols, eps);
      return true;
  }
}

}  // namespace

bool handRowwise(HandOp op, HandType type, const void* in, const void* gamma, const void* beta,
                 void* out, uint32_t rows, uint32_t cols, float eps) {
  switch (type) {
    case HandType::F32: return launchRows<float>(op, in, gamma, beta, out, rows, cols, eps);
    case HandType::F16: return launchRows<__half>(op, in, gamma, beta, out, rows, cols, eps);
    case HandType::BF16:
      return launchRows<__nv_bfloat16>(op, in, gamma, beta, out, rows, cols, eps);
  }
  return false;
}

}  // namespace bench
