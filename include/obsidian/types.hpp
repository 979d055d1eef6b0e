/// Scalar element types that kernels compute with, and what each is called in CUDA.
/// @file
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace obsidian {

/// The scalar types of kernels, as values (the IR's types); ScalarTraits maps C++ types to them.
enum class ScalarType : uint8_t {
  U8,   ///< uint8_t
  U16,  ///< uint16_t
  U32,  ///< uint32_t (EWord32: indices and lengths)
  I32,  ///< int32_t
  U64,  ///< uint64_t
  F32,  ///< float
  F64,  ///< double
  Bool  ///< bool (conditions)
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

/// A C++ type that kernels compute with: one that ScalarTraits knows.
template <class T>
concept KernelScalar = requires {
  ScalarTraits<T>::type;
};

/// The ScalarType of the kernel scalar T.
template <class T>
inline constexpr ScalarType scalarTypeOf = ScalarTraits<T>::type;

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
};

/// The row of ScalarInfo for type t.
constexpr ScalarInfo scalarInfo(ScalarType t) {
  switch (t) {
    case ScalarType::U8: return {"uint8_t", 1, false, false, ""};
    case ScalarType::U16: return {"uint16_t", 2, false, false, ""};
    case ScalarType::U32: return {"uint32_t", 4, false, false, "uint"};
    case ScalarType::I32: return {"int32_t", 4, false, true, "int"};
    case ScalarType::U64: return {"uint64_t", 8, false, false, "ulonglong"};
    case ScalarType::F32: return {"float", 4, true, true, "float"};
    case ScalarType::F64: return {"double", 8, true, true, "double"};
    case ScalarType::Bool: return {"bool", 1, false, false, ""};
  }
  return {"?", 0, false, false, ""};
}

/// Whether t is floating point (f32, f64).
constexpr bool isFloat(ScalarType t) { return scalarInfo(t).floating; }
/// Whether t is signed (i32 and the floats).
constexpr bool isSigned(ScalarType t) { return scalarInfo(t).isSigned; }
/// Whether t is a signed integer (i32).
constexpr bool isSignedInteger(ScalarType t) { return isSigned(t) && !isFloat(t); }
/// Whether t is an integer type (not a float, not bool).
constexpr bool isInteger(ScalarType t) { return !isFloat(t) && t != ScalarType::Bool; }
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
