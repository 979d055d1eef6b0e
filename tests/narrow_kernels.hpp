// Kernels over narrow elements (u8, u16) that the simulator, NVRTC and GPU tests share, with
// their plain C++ references: u16 arithmetic, and wide loads of u8 and u16 (vectors<W>).
#pragma once

#include <boost/hana/for_each.hpp>
#include <cmath>
#include <cstdint>
#include <obsidian/obsidian.hpp>
#include <random>
#include <string>
#include <vector>

namespace obsidian::testing {

// ------------------------------------------------------------------ u16 arithmetic
// Every kind of u16 operation, element by element: products that pass INT_MAX in int
// arithmetic, shifts by up to 31, division, remainder, ~, unary minus, min/max, comparisons,
// a scalar parameter, and casts to and from u32 and f32 (a float out of u16's range goes
// through u32, as CUDA converts it). Outputs: four u16 arrays and one u32 array.
inline Kernel u16Kernel() {
  return capture("u16ops", 64, [](DPull<EWord16> a, DPull<EWord16> b, EWord16 s, EFloat f) {
    return push<Grid>(zipWith(
        [s, f](const EWord16& x, const EWord16& y) {
          const EWord16 d = y | EWord16(1);  // a divisor that is never zero
          const EWord16 r0 = x * y + s;
          const EWord16 r1 = (x << (y & EWord16(31))) ^ (x >> EWord16(3));
          const EWord16 r2 = x / d + x % d - ~y;
          const EWord16 r3 = ifThenElse(x < y, min(x, y), max(x, s)) - (-x);
          const EWord32 r4 = w16ToW32(x) * 3u + cast<uint32_t>(x == y) +
                             w16ToW32(w32ToW16(w16ToW32(x) * 65537u + 7u)) +
                             w16ToW32(cast<uint16_t>(w32ToF(w16ToW32(y)) * f));
          return hana::make_tuple(r0, r1, r2, r3, r4);
        },
        a, b));
  });
}

struct U16Results {
  std::vector<uint16_t> r0, r1, r2, r3;
  std::vector<uint32_t> r4;
  bool operator==(const U16Results&) const = default;
};

inline U16Results u16Sized(size_t n) {
  U16Results r;
  r.r0.assign(n, 0);
  r.r1.assign(n, 0);
  r.r2.assign(n, 0);
  r.r3.assign(n, 0);
  r.r4.assign(n, 0);
  return r;
}

// u16Kernel in C++: u16 values computed in u32 and truncated, as the GPU does.
inline U16Results u16Reference(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                               uint16_t s, float f) {
  U16Results r = u16Sized(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const uint32_t x = a[i], y = b[i], d = y | 1u;
    const uint32_t sh = y & 31u;
    r.r0[i] = static_cast<uint16_t>(x * y + s);
    r.r1[i] = static_cast<uint16_t>(static_cast<uint16_t>(x << sh) ^ (x >> 3));
    r.r2[i] = static_cast<uint16_t>(x / d + x % d - static_cast<uint16_t>(~y));
    r.r3[i] = static_cast<uint16_t>((x < y ? std::min(x, y) : std::max<uint32_t>(x, s)) + x);
    const float p = static_cast<float>(y) * f;
    const uint32_t q = !(p > 0.0f)          ? 0u
                       : p >= 4294967296.0f ? UINT32_MAX
                                            : static_cast<uint32_t>(p);
    r.r4[i] = x * 3u + (x == y ? 1u : 0u) + static_cast<uint16_t>(x * 65537u + 7u) +
              static_cast<uint16_t>(q);
  }
  return r;
}

// n random values of X, reproducible from `seed`; every 7th one is X's largest (wrap-around).
template <class X>
std::vector<X> randomNarrow(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<X> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i % 7 == 3 ? X(~X{0}) : static_cast<X>(rng());
  return v;
}

// ------------------------------------------------------------------ wide loads of u8 and u16
// The lanes of a vector hashed in order (h = h * 31 + lane), so that a lane read from the
// wrong bytes changes the result.
template <uint32_t W, class X>
EWord32 laneHash(const Vector<W, X>& v) {
  EWord32 h(0u);
  hana::for_each(v, [&h](const Exp<X>& x) { h = h * 31u + cast<uint32_t>(x); });
  return h;
}

// vectorHashes<X, W>: out[j] is the laneHash of vector j of the input, for the len / W whole
// vectors, and out[len / W] the hash of the last len % W elements read as scalars (the tail,
// padded with zeros to W - 1 lanes). Output length: n / W + 1.
template <class X, uint32_t W>
Kernel vectorHashes(const std::string& name, uint32_t threads = 64) {
  return capture(name, threads, [](DPull<Exp<X>> in) {
    const auto v = vectors<W>(in);
    const EWord32 whole = len(v), n = len(in);
    return push<Grid>(mkPull(whole + 1u, [v, in, whole, n](const EWord32& j) {
      EWord32 tail(0u);
      for (uint32_t k = 0; k + 1 < W; ++k) {
        const EWord32 i = whole * W + k;
        tail = tail * 31u + ifThenElse(i < n, cast<uint32_t>(in[i]), EWord32(0u));
      }
      return ifThenElse(j < whole, laneHash<W, X>(v[j]), tail);
    }));
  });
}

template <class X, uint32_t W>
std::vector<uint32_t> vectorHashesReference(const std::vector<X>& in) {
  const size_t whole = in.size() / W;
  std::vector<uint32_t> out(whole + 1, 0);
  for (size_t j = 0; j < whole; ++j) {
    for (uint32_t k = 0; k < W; ++k) out[j] = out[j] * 31u + in[j * W + k];
  }
  for (uint32_t k = 0; k + 1 < W; ++k) {
    const size_t i = whole * W + k;
    out[whole] = out[whole] * 31u + (i < in.size() ? in[i] : 0u);
  }
  return out;
}

// Only the vectors (no tail): each vector's lane hash. The kernel whose PTX shows one load
// per vector.
template <class X, uint32_t W>
Kernel vectorHashesOnly(const std::string& name) {
  return capture(name, 64, [](DPull<Exp<X>> in) {
    return push<Grid>(
        fmap([](const Vector<W, X>& v) { return laneHash<W, X>(v); }, vectors<W>(in)));
  });
}

// A histogram-like count in splitUp pieces: one block per `piece` elements (a piece starts at
// a multiple of W), one thread per vector of the piece; out[j] counts the lanes of vector j at
// or above `threshold`. The input's length must divide by `piece`.
template <class X, uint32_t W>
Kernel pieceCounts(const std::string& name, uint32_t piece, X threshold) {
  return capture(name, 32, [piece, threshold](DPull<Exp<X>> in) {
    return pConcat(fmap(
        [threshold](const SPull<Exp<X>>& c) {
          return push<Block>(fmap(
              [threshold](const Vector<W, X>& v) {
                EWord32 count(0u);
                hana::for_each(v, [&count, threshold](const Exp<X>& x) {
                  count = count + cast<uint32_t>(x >= Exp<X>(threshold));
                });
                return count;
              },
              vectors<W>(c)));
        },
        splitUp(piece, in)));
  });
}

template <class X, uint32_t W>
std::vector<uint32_t> pieceCountsReference(const std::vector<X>& in, X threshold) {
  std::vector<uint32_t> out(in.size() / W, 0);
  for (size_t i = 0; i < out.size() * W; ++i) out[i / W] += in[i] >= threshold ? 1u : 0u;
  return out;
}

}  // namespace obsidian::testing
