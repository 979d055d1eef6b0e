// Scalar element types that kernels compute with, and what each is called in CUDA.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace obsidian {

enum class ScalarType : uint8_t { U8, U32, I32, U64, F32, F64, Bool };

template <class T>
struct ScalarTraits;  // only the types below are kernel scalars

template <>
struct ScalarTraits<uint8_t> {
  static constexpr ScalarType type = ScalarType::U8;
};
template <>
struct ScalarTraits<uint32_t> {
  static constexpr ScalarType type = ScalarType::U32;
};
template <>
struct ScalarTraits<int32_t> {
  static constexpr ScalarType type = ScalarType::I32;
};
template <>
struct ScalarTraits<uint64_t> {
  static constexpr ScalarType type = ScalarType::U64;
};
template <>
struct ScalarTraits<float> {
  static constexpr ScalarType type = ScalarType::F32;
};
template <>
struct ScalarTraits<double> {
  static constexpr ScalarType type = ScalarType::F64;
};
template <>
struct ScalarTraits<bool> {
  static constexpr ScalarType type = ScalarType::Bool;
};

template <class T>
concept KernelScalar = requires {
  ScalarTraits<T>::type;
};

template <class T>
inline constexpr ScalarType scalarTypeOf = ScalarTraits<T>::type;

constexpr bool isFloat(ScalarType t) { return t == ScalarType::F32 || t == ScalarType::F64; }
constexpr bool isSigned(ScalarType t) { return t == ScalarType::I32 || isFloat(t); }
constexpr bool isInteger(ScalarType t) { return !isFloat(t) && t != ScalarType::Bool; }

constexpr uint32_t sizeOf(ScalarType t) {
  switch (t) {
    case ScalarType::U8:
    case ScalarType::Bool: return 1;
    case ScalarType::U32:
    case ScalarType::I32:
    case ScalarType::F32: return 4;
    case ScalarType::U64:
    case ScalarType::F64: return 8;
  }
  return 0;
}

constexpr uint32_t bitWidth(ScalarType t) { return t == ScalarType::Bool ? 1 : 8 * sizeOf(t); }

// The type's name in generated CUDA (and in reports).
constexpr std::string_view cudaTypeName(ScalarType t) {
  switch (t) {
    case ScalarType::U8: return "uint8_t";
    case ScalarType::U32: return "uint32_t";
    case ScalarType::I32: return "int32_t";
    case ScalarType::U64: return "uint64_t";
    case ScalarType::F32: return "float";
    case ScalarType::F64: return "double";
    case ScalarType::Bool: return "bool";
  }
  return "?";
}

// CUDA's vector type of `width` elements of t (the type of a vector load), e.g. uint4; empty
// where CUDA has none (u8 and bool, widths other than 2 and 4, more than 16 bytes).
inline std::string vectorTypeName(ScalarType t, uint32_t width) {
  const char* base = nullptr;
  switch (t) {
    case ScalarType::U32: base = "uint"; break;
    case ScalarType::I32: base = "int"; break;
    case ScalarType::F32: base = "float"; break;
    case ScalarType::U64: base = "ulonglong"; break;
    case ScalarType::F64: base = "double"; break;
    case ScalarType::U8:
    case ScalarType::Bool: return "";
  }
  if ((width != 2 && width != 4) || width * sizeOf(t) > 16) return "";
  return std::string(base) + std::to_string(width);
}

}  // namespace obsidian
