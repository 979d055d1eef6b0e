/// Scalar element types that kernels compute with, and what each is called in CUDA.
/// @file
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "obsidian/half.hpp"

namespace obsidian {

/// The scalar types of kernels, as values (the IR's types); ScalarTraits maps C++ types to them.
enum class ScalarType : uint8_t {
  U8,     ///< uint8_t
  U16,    ///< uint16_t
  U32,    ///< uint32_t (EWord32: indices and lengths)
  I32,    ///< int32_t
  U64,    ///< uint64_t
  F32,    ///< float
  F64,    ///< double
  Bool,   ///< bool (conditions)
  F16,    ///< Half (IEEE binary16, CUDA's __half): computed in f32, rounded after each operation
  BF16,   ///< BFloat16 (CUDA's __nv_bfloat16): computed in f32, rounded after each operation
  E4M3,   ///< Fp8E4M3 (CUDA's __nv_fp8_e4m3): converted, not computed with
  E5M2,   ///< Fp8E5M2 (CUDA's __nv_fp8_e5m2): converted, not computed with
  F16x2,  ///< Half2 (CUDA's __half2): two f16 lanes in one word, each computed as CUDA's packed
          ///< instructions do; held by the IR and the simulator as its 32-bit word
  BF16x2  ///< BFloat162 (CUDA's __nv_bfloat162): two bf16 lanes in one word, as F16x2
};

/// The ScalarType of a C++ type T, as `type`: only the types below are kernel scalars.
template <class T>
struct ScalarTraits;

/// uint8_t is ScalarType::U8.
template <>
struct ScalarTraits<uint8_t> {
  static constexpr ScalarType type = ScalarType::U8;  ///< ScalarType::U8
};
/// uint16_t is ScalarType::U16.
template <>
struct ScalarTraits<uint16_t> {
  static constexpr ScalarType type = ScalarType::U16;  ///< ScalarType::U16
};
/// uint32_t is ScalarType::U32.
template <>
struct ScalarTraits<uint32_t> {
  static constexpr ScalarType type = ScalarType::U32;  ///< ScalarType::U32
};
/// int32_t is ScalarType::I32.
template <>
struct ScalarTraits<int32_t> {
  static constexpr ScalarType type = ScalarType::I32;  ///< ScalarType::I32
};
/// uint64_t is ScalarType::U64.
template <>
struct ScalarTraits<uint64_t> {
  static constexpr ScalarType type = ScalarType::U64;  ///< ScalarType::U64
};
/// float is ScalarType::F32.
template <>
struct ScalarTraits<float> {
  static constexpr ScalarType type = ScalarType::F32;  ///< ScalarType::F32
};
/// double is ScalarType::F64.
template <>
struct ScalarTraits<double> {
  static constexpr ScalarType type = ScalarType::F64;  ///< ScalarType::F64
};
/// bool is ScalarType::Bool.
template <>
struct ScalarTraits<bool> {
  static constexpr ScalarType type = ScalarType::Bool;  ///< ScalarType::Bool
};

/// Half is ScalarType::F16.
template <>
struct ScalarTraits<Half> {
  static constexpr ScalarType type = ScalarType::F16;  ///< ScalarType::F16
};
/// BFloat16 is ScalarType::BF16.
template <>
struct ScalarTraits<BFloat16> {
  static constexpr ScalarType type = ScalarType::BF16;  ///< ScalarType::BF16
};
/// Fp8E4M3 is ScalarType::E4M3.
template <>
struct ScalarTraits<Fp8E4M3> {
  static constexpr ScalarType type = ScalarType::E4M3;  ///< ScalarType::E4M3
};
/// Fp8E5M2 is ScalarType::E5M2.
template <>
struct ScalarTraits<Fp8E5M2> {
  static constexpr ScalarType type = ScalarType::E5M2;  ///< ScalarType::E5M2
};

/// Half2 is ScalarType::F16x2.
template <>
struct ScalarTraits<Half2> {
  static constexpr ScalarType type = ScalarType::F16x2;  ///< ScalarType::F16x2
};
/// BFloat162 is ScalarType::BF16x2.
template <>
struct ScalarTraits<BFloat162> {
  static constexpr ScalarType type = ScalarType::BF16x2;  ///< ScalarType::BF16x2
};

/// A C++ type that kernels compute with: one that ScalarTraits knows.
template <class T>
concept KernelScalar = requires {
  ScalarTraits<T>::type;
};

/// The ScalarType of the kernel scalar T.
template <class T>
inline constexpr ScalarType scalarTypeOf = ScalarTraits<T>::type;

/// A kernel scalar that is floating point: float, double, Half, BFloat16, Fp8E4M3, Fp8E5M2.
template <class T>
concept FloatScalar = KernelScalar<T> &&
    (std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ||
     std::is_same_v<T, Fp8E4M3> || std::is_same_v<T, Fp8E5M2>);
/// A float narrower than f32 (Half, BFloat16, Fp8E4M3, Fp8E5M2): computed in f32, stored narrow.
template <class T>
concept SmallFloatScalar = FloatScalar<T> && !std::is_floating_point_v<T>;
/// An 8-bit float (Fp8E4M3, Fp8E5M2): converted to and from, not computed with.
template <class T>
concept Fp8Scalar = std::is_same_v<T, Fp8E4M3> || std::is_same_v<T, Fp8E5M2>;
/// A packed pair of 16-bit floats (Half2, BFloat162): not a FloatScalar (it is not one number),
/// it has only the per-lane operations of exp.hpp.
template <class T>
concept PairScalar = std::is_same_v<T, Half2> || std::is_same_v<T, BFloat162>;

/// Everything the compiler knows about a scalar type, in one place: a new ScalarType fails to
/// compile here (-Wswitch) until its row says what it is, and every predicate below derives
/// from the row, so a new signed type computes as signed everywhere.
struct ScalarInfo {
  std::string_view cudaName;    ///< its name in generated CUDA (and in reports)
  uint32_t bytes;               ///< in memory
  bool floating;                ///< IEEE binary floating point
  bool isSigned;                ///< two's complement (integers) or a sign bit (floats)
  std::string_view vectorBase;  ///< CUDA's vector types are vectorBase + width ("uint4"); empty
                                ///< where CUDA has none
  const detail::SmallFloatFormat* small;  ///< a float narrower than f32: its format (computed
                                          ///< in f32, see half.hpp); null for the others
  bool computes;  ///< arithmetic and comparisons are defined (not fp8: only conversions)
  /// A packed pair's lane type (F16 for F16x2, BF16 for BF16x2); the type itself for every
  /// other. A pair is neither floating (no generic float rule may see its word as a number)
  /// nor an integer: it computes only per lane (scalar_ops.cpp, pairs).
  ScalarType lane;
};

/// The row of ScalarInfo for type t.
constexpr ScalarInfo scalarInfo(ScalarType t) {
  switch (t) {
    case ScalarType::U8: return {"uint8_t", 1, false, false, "", nullptr, true, ScalarType::U8};
    case ScalarType::U16: return {"uint16_t", 2, false, false, "", nullptr, true, ScalarType::U16};
    case ScalarType::U32:
      return {"uint32_t", 4, false, false, "uint", nullptr, true, ScalarType::U32};
    case ScalarType::I32: return {"int32_t", 4, false, true, "int", nullptr, true, ScalarType::I32};
    case ScalarType::U64:
      return {"uint64_t", 8, false, false, "ulonglong", nullptr, true, ScalarType::U64};
    case ScalarType::F32: return {"float", 4, true, true, "float", nullptr, true, ScalarType::F32};
    case ScalarType::F64:
      return {"double", 8, true, true, "double", nullptr, true, ScalarType::F64};
    case ScalarType::Bool: return {"bool", 1, false, false, "", nullptr, true, ScalarType::Bool};
    // The generated CUDA's own names (obsidian_half is __half where cuda_fp16.h is included:
    // ir::printSmallFloatPrelude).
    case ScalarType::F16:
      return {"obsidian_half", 2, true, true, "", &detail::kHalfFormat, true, ScalarType::F16};
    case ScalarType::BF16:
      return {"obsidian_bfloat16", 2, true, true, "", &detail::kBFloat16Format, true,
              ScalarType::BF16};
    case ScalarType::E4M3:
      return {"obsidian_fp8_e4m3", 1, true, true, "", &detail::kE4M3Format, false,
              ScalarType::E4M3};
    case ScalarType::E5M2:
      return {"obsidian_fp8_e5m2", 1, true, true, "", &detail::kE5M2Format, false,
              ScalarType::E5M2};
    // Pairs: moved as words (no CUDA vector type of them), computed per lane.
    case ScalarType::F16x2:
      return {"obsidian_half2", 4, false, false, "", nullptr, true, ScalarType::F16};
    case ScalarType::BF16x2:
      return {"obsidian_bfloat162", 4, false, false, "", nullptr, true, ScalarType::BF16};
  }
  return {"?", 0, false, false, "", nullptr, false, t};
}

/// Whether t is floating point (f32, f64, and the small floats).
constexpr bool isFloat(ScalarType t) { return scalarInfo(t).floating; }
/// Whether t is a float narrower than f32 (f16, bf16, e4m3, e5m2): held in f32 while computed.
constexpr bool isSmallFloat(ScalarType t) { return scalarInfo(t).small != nullptr; }
/// Whether t has arithmetic and comparisons (every type but the fp8 formats).
constexpr bool computes(ScalarType t) { return scalarInfo(t).computes; }
/// Whether t is signed (i32 and the floats).
constexpr bool isSigned(ScalarType t) { return scalarInfo(t).isSigned; }
/// Whether t is a signed integer (i32).
constexpr bool isSignedInteger(ScalarType t) { return isSigned(t) && !isFloat(t); }
/// Whether t is a packed pair of 16-bit floats (F16x2, BF16x2).
constexpr bool isPair(ScalarType t) { return scalarInfo(t).lane != t; }
/// A pair's lane type (F16 or BF16); t itself for the others.
constexpr ScalarType laneOf(ScalarType t) { return scalarInfo(t).lane; }
/// Whether the generated CUDA holds t in a type of its own (obsidian_half, obsidian_half2, ...,
/// printSmallFloatPrelude), made from and read as its bits (obsidian_make_*, obsidian_bits).
constexpr bool hasPreludeType(ScalarType t) { return isSmallFloat(t) || isPair(t); }
/// Whether t is an integer type (not a float, not bool, not a pair).
constexpr bool isInteger(ScalarType t) {
  return !isFloat(t) && t != ScalarType::Bool && !isPair(t);
}
/// Bytes of one element of t in memory.
constexpr uint32_t sizeOf(ScalarType t) { return scalarInfo(t).bytes; }
/// Bits of t: 1 for bool, 8 * sizeOf(t) for the others.
constexpr uint32_t bitWidth(ScalarType t) { return t == ScalarType::Bool ? 1 : 8 * sizeOf(t); }
/// The type's name in generated CUDA (and in reports).
constexpr std::string_view cudaTypeName(ScalarType t) { return scalarInfo(t).cudaName; }

/// CUDA's vector type of `width` elements of t (the type of a vector load), e.g.\ uint4; empty
/// where CUDA has none (u8, u16 and bool, widths other than 2 and 4, more than 16 bytes).
inline std::string vectorTypeName(ScalarType t, uint32_t width) {
  const ScalarInfo info = scalarInfo(t);
  if (info.vectorBase.empty() || (width != 2 && width != 4) || width * info.bytes > 16) return "";
  return std::string(info.vectorBase) + std::to_string(width);
}

/// Whether `width` consecutive elements of t can be read as one vector (vectors<W>): a power of
/// two of at least 2 elements, at most 16 bytes (one ld.global.v4), not bool. Where CUDA has no
/// vector type of t (u8, u16), the vector is read as 32-bit words whose bits hold the lanes.
constexpr bool hasVectorLoad(ScalarType t, uint32_t width) {
  return t != ScalarType::Bool && width >= 2 && (width & (width - 1)) == 0 &&
         width * sizeOf(t) <= 16;
}

namespace detail {
// The IR, the simulator and kernel arguments hold every float as a double. An f32 widens with
// its NaN bits intact: sign, payload (the double's top 23 mantissa bits) and signalling bit
// (a hardware float -> double conversion would set the quiet bit, and the GPU moves a NaN's
// bits unchanged), so that narrowF32(widenF32(f)) has f's bits for every f.
inline double widenF32(float f) {
  const uint32_t b = std::bit_cast<uint32_t>(f);
  if ((b & 0x7f800000u) != 0x7f800000u || (b & 0x7fffffu) == 0) return static_cast<double>(f);
  return std::bit_cast<double>((uint64_t{b >> 31} << 63) | 0x7ff0000000000000ull |
                               (uint64_t{b & 0x7fffffu} << 29));
}
// The f32 a widened double holds. A NaN keeps its sign and its payload's top 23 bits; one whose
// top 23 bits are zero (no widened f32 is) is given the quiet bit, so it stays a NaN.
inline float narrowF32(double d) {
  if (d == d) return static_cast<float>(d);
  const uint64_t b = std::bit_cast<uint64_t>(d);
  uint32_t mantissa = static_cast<uint32_t>(b >> 29) & 0x7fffffu;
  if (mantissa == 0) mantissa = 0x400000u;
  return std::bit_cast<float>(static_cast<uint32_t>((b >> 63) << 31) | 0x7f800000u | mantissa);
}
}  // namespace detail

}  // namespace obsidian
