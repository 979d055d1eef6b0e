/// Half precision and 8-bit floats on the host: the element types Half (IEEE binary16, CUDA's
/// __half), BFloat16 (CUDA's __nv_bfloat16), Fp8E4M3 and Fp8E5M2 (CUDA's __nv_fp8_e4m3 and
/// __nv_fp8_e5m2), the packed pairs Half2 and BFloat162 (__half2, __nv_bfloat162), and the one
/// rounding routine that the host types, constant folding and the
/// simulator all convert with, so that none can disagree with another.
/// @file
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace obsidian {

namespace detail {

/// The layout of a binary float narrower than f32: sign, exponent and mantissa bits.
struct SmallFloatFormat {
  int exponentBits;  ///< width of the biased exponent
  int mantissaBits;  ///< stored fraction bits (without the hidden bit)
  bool hasInfinity;  ///< IEEE-like (f16, bf16, e5m2); e4m3 has no infinity, only NaN 0x7f/0xff
  bool saturates;    ///< conversions to it saturate to the largest finite value (fp8's
                     ///< satfinite, as CUDA converts: infinities too)
  uint32_t canonicalNaN;  ///< the NaN a computation or conversion gives (measured on sm_90)

  /// The exponent bias.
  constexpr int bias() const { return (1 << (exponentBits - 1)) - 1; }
  /// The largest unbiased exponent of a finite value.
  constexpr int maxExponent() const { return hasInfinity ? bias() : bias() + 1; }
  /// The largest finite value's bits (sign clear).
  constexpr uint32_t maxFiniteBits() const {
    const uint32_t field = (1u << exponentBits) - 1;
    const uint32_t top = field << mantissaBits;
    return hasInfinity ? top - 1 : top | ((1u << mantissaBits) - 2);
  }
  /// Bits of the whole value (sign included).
  constexpr int bits() const { return 1 + exponentBits + mantissaBits; }
};

// NaNs as the H100 and H200 (sm_90) make them: cvt.rn.f16.f32 and cvt.rn.bf16.f32 of any NaN
// give 0x7fff, cvt.rn.satfinite.e4m3x2 / e5m2x2 give 0x7f (tests/gpu/test_gpu_half.cpp).
inline constexpr SmallFloatFormat kHalfFormat{5, 10, true, false, 0x7fffu};
inline constexpr SmallFloatFormat kBFloat16Format{8, 7, true, false, 0x7fffu};
inline constexpr SmallFloatFormat kE4M3Format{4, 3, false, true, 0x7fu};
inline constexpr SmallFloatFormat kE5M2Format{5, 2, true, true, 0x7fu};

/// Whether bits of format f are a NaN.
constexpr bool smallFloatIsNaN(const SmallFloatFormat& f, uint32_t bits) {
  const uint32_t field = (bits >> f.mantissaBits) & ((1u << f.exponentBits) - 1);
  const uint32_t mantissa = bits & ((1u << f.mantissaBits) - 1);
  if (field != (1u << f.exponentBits) - 1) return false;
  return f.hasInfinity ? mantissa != 0 : mantissa == (1u << f.mantissaBits) - 1;
}

/// The value of bits of format f as a double (exact). A NaN keeps its sign and payload in the
/// double's top mantissa bits, so that smallFloatBits gives the same bits back (values move
/// between memory and registers unchanged, as on the GPU).
inline double smallFloatValue(const SmallFloatFormat& f, uint32_t bits) {
  const bool negative = (bits >> (f.bits() - 1)) & 1u;
  const uint32_t field = (bits >> f.mantissaBits) & ((1u << f.exponentBits) - 1);
  const uint32_t mantissa = bits & ((1u << f.mantissaBits) - 1);
  if (smallFloatIsNaN(f, bits)) {
    return std::bit_cast<double>((uint64_t{negative} << 63) | 0x7ff0000000000000ull |
                                 (uint64_t{mantissa} << (52 - f.mantissaBits)));
  }
  double v;
  if (field == (1u << f.exponentBits) - 1 && f.hasInfinity) {
    v = INFINITY;
  } else if (field == 0) {
    v = std::ldexp(static_cast<double>(mantissa), 1 - f.bias() - f.mantissaBits);
  } else {
    v = std::ldexp(static_cast<double>(mantissa | (1u << f.mantissaBits)),
                   static_cast<int>(field) - f.bias() - f.mantissaBits);
  }
  return negative ? -v : v;
}

/// x rounded to format f, to nearest with ties to even, as CUDA's conversions round (__float2half_rn,
/// __float2bfloat16_rn, __nv_cvt_float_to_fp8 with __NV_SATFINITE): past the largest finite value to
/// infinity, or to the largest finite value where f saturates; a NaN to f's canonical NaN.
inline uint32_t smallFloatRound(const SmallFloatFormat& f, double x) {
  if (std::isnan(x)) return f.canonicalNaN;
  const uint32_t sign = std::signbit(x) ? 1u << (f.bits() - 1) : 0u;
  const double a = std::fabs(x);
  const uint32_t infinity = ((1u << f.exponentBits) - 1) << f.mantissaBits;
  const uint32_t overflow = f.saturates ? f.maxFiniteBits() : infinity;
  if (std::isinf(a)) return sign | overflow;
  if (a == 0) return sign;
  const int emin = 1 - f.bias();
  int e = std::ilogb(a);
  if (e < emin) e = emin;  // subnormal: the quantum of the smallest exponent
  // a / quantum is exact (a power-of-two scaling) and nearbyint rounds it to even.
  const double q = std::nearbyint(std::ldexp(a, f.mantissaBits - e));
  const double r = std::ldexp(q, e - f.mantissaBits);  // the rounded value, exact
  if (r > smallFloatValue(f, f.maxFiniteBits())) return sign | overflow;
  if (r < std::ldexp(1.0, emin)) return sign | static_cast<uint32_t>(q);  // subnormal (or 0)
  const int re = std::ilogb(r);
  const uint32_t mantissa =
      static_cast<uint32_t>(std::ldexp(r, f.mantissaBits - re)) & ((1u << f.mantissaBits) - 1);
  return sign | (static_cast<uint32_t>(re + f.bias()) << f.mantissaBits) | mantissa;
}

/// The bits of a value of format f held as a double (the inverse of smallFloatValue): a NaN's
/// sign and payload kept (a payload of zero gets the top mantissa bit, so it stays a NaN; in
/// e4m3 every NaN is the one pattern), an infinity kept where f has one (e5m2's ±inf, which a
/// load gives and a store keeps, though a conversion saturates), any other value rounded as
/// smallFloatRound.
inline uint32_t smallFloatBits(const SmallFloatFormat& f, double v) {
  if (std::isinf(v) && f.hasInfinity) {
    return (uint32_t{v < 0} << (f.bits() - 1)) | (((1u << f.exponentBits) - 1) << f.mantissaBits);
  }
  if (!std::isnan(v)) return smallFloatRound(f, v);
  const uint64_t b = std::bit_cast<uint64_t>(v);
  const uint32_t sign = static_cast<uint32_t>(b >> 63) << (f.bits() - 1);
  const uint32_t field = ((1u << f.exponentBits) - 1) << f.mantissaBits;
  const uint32_t all = (1u << f.mantissaBits) - 1;
  uint32_t mantissa = static_cast<uint32_t>(b >> (52 - f.mantissaBits)) & all;
  if (!f.hasInfinity) mantissa = all;
  if (mantissa == 0) mantissa = 1u << (f.mantissaBits - 1);
  return sign | field | mantissa;
}

/// x as a double rounded to odd (truncated, its last bit set if any bit was lost): rounding it
/// once more to at most 51 bits gives x rounded directly (the GPU converts 64-bit integers and
/// doubles to these formats the same way, through an f32 rounded to odd).
inline double oddDouble(uint64_t x) {
  const int width = 64 - std::countl_zero(x);
  if (width <= 53) return static_cast<double>(x);
  const int shift = width - 53;
  uint64_t top = x >> shift;
  if ((top << shift) != x) top |= 1;
  return std::ldexp(static_cast<double>(top), shift);
}

/// A host element type of format F, stored as its bits (what the GPU's type holds).
template <const SmallFloatFormat& F, class Storage>
struct SmallFloat {
  Storage bits = 0;  ///< the value's bits, as in memory

  constexpr SmallFloat() = default;
  /// x rounded to nearest even (CUDA's conversion; a NaN gives the canonical NaN).
  explicit SmallFloat(double x) : bits(static_cast<Storage>(smallFloatRound(F, x))) {}
  /// x rounded to nearest even.
  explicit SmallFloat(float x) : SmallFloat(static_cast<double>(x)) {}
  /// The value whose bits are b.
  static constexpr SmallFloat fromBits(Storage b) {
    SmallFloat s;
    s.bits = b;
    return s;
  }
  /// The value, exactly.
  double toDouble() const { return smallFloatValue(F, bits); }
  /// The value as a float (exact: every value of these formats is a float).
  explicit operator float() const { return static_cast<float>(toDouble()); }
  /// The value as a double (exact).
  explicit operator double() const { return toDouble(); }
  /// Whether it is a NaN.
  bool isNaN() const { return smallFloatIsNaN(F, bits); }
  /// Equal bits (not IEEE equality: a NaN equals itself, -0 differs from +0), as tests compare
  /// the simulator's results with the GPU's.
  friend constexpr bool operator==(SmallFloat a, SmallFloat b) { return a.bits == b.bits; }
};

}  // namespace detail

/// IEEE binary16 (CUDA's __half): 5 exponent bits, 10 mantissa bits.
using Half = detail::SmallFloat<detail::kHalfFormat, uint16_t>;
/// bfloat16 (CUDA's __nv_bfloat16): f32's 8 exponent bits, 7 mantissa bits.
using BFloat16 = detail::SmallFloat<detail::kBFloat16Format, uint16_t>;
/// 8-bit float e4m3 (CUDA's __nv_fp8_e4m3): no infinity, largest 448, NaN 0x7f / 0xff.
using Fp8E4M3 = detail::SmallFloat<detail::kE4M3Format, uint8_t>;
/// 8-bit float e5m2 (CUDA's __nv_fp8_e5m2): IEEE-like, largest 57344.
using Fp8E5M2 = detail::SmallFloat<detail::kE5M2Format, uint8_t>;

namespace detail {
/// Two values of a 16-bit format packed in one 32-bit word, `lo` in the low 16 bits (CUDA's
/// __half2 and __nv_bfloat162: .x is the low half). Kernels compute on both lanes at once, each
/// lane as CUDA's packed instructions do (see Exp<Half2> in exp.hpp).
template <class Lane>
struct SmallFloatPair {
  Lane lo;  ///< the low 16 bits (CUDA's .x, __low2half)
  Lane hi;  ///< the high 16 bits (CUDA's .y, __high2half)

  constexpr SmallFloatPair() = default;
  /// The pair (lo, hi).
  constexpr SmallFloatPair(Lane l, Lane h) : lo(l), hi(h) {}
  /// The pair whose word is w (lo in its low 16 bits).
  static constexpr SmallFloatPair fromBits(uint32_t w) {
    return {Lane::fromBits(static_cast<uint16_t>(w)),
            Lane::fromBits(static_cast<uint16_t>(w >> 16))};
  }
  /// The word, as in memory (lo in its low 16 bits).
  constexpr uint32_t bits() const { return uint32_t{lo.bits} | (uint32_t{hi.bits} << 16); }
  /// Equal bits in both lanes (as Lane's ==: a NaN equals itself, -0 differs from +0).
  friend constexpr bool operator==(SmallFloatPair a, SmallFloatPair b) {
    return a.bits() == b.bits();
  }
};
}  // namespace detail

/// Two Half values in one 32-bit word (CUDA's __half2).
using Half2 = detail::SmallFloatPair<Half>;
/// Two BFloat16 values in one 32-bit word (CUDA's __nv_bfloat162).
using BFloat162 = detail::SmallFloatPair<BFloat16>;
static_assert(sizeof(Half2) == 4 && sizeof(BFloat162) == 4, "a pair is one 32-bit word");

}  // namespace obsidian
