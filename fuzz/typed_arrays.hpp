// The kernel's array arguments after its inputs as arrays of their own element types. The
// reference gives every array as words (an element's bits, zero-extended); a kernel may write
// an output of narrower or float elements (a vector store's, Recipe::store), so the launches
// pass each array as its parameter's type and read it back as words, bit for bit.
#pragma once

#include <bit>
#include <cstdint>
#include <obsidian/obsidian.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace fuzz {

// A host array of one of the element types the fuzzer's kernels write.
using TypedArray =
    std::variant<std::vector<uint32_t>, std::vector<uint8_t>, std::vector<uint16_t>,
                 std::vector<float>, std::vector<obsidian::Half>, std::vector<obsidian::BFloat16>,
                 std::vector<obsidian::Fp8E4M3>, std::vector<obsidian::Fp8E5M2>>;
// The same on the device.
using DeviceArray = std::variant<
    obsidian::gpu::DeviceBuffer<uint32_t>, obsidian::gpu::DeviceBuffer<uint8_t>,
    obsidian::gpu::DeviceBuffer<uint16_t>, obsidian::gpu::DeviceBuffer<float>,
    obsidian::gpu::DeviceBuffer<obsidian::Half>, obsidian::gpu::DeviceBuffer<obsidian::BFloat16>,
    obsidian::gpu::DeviceBuffer<obsidian::Fp8E4M3>, obsidian::gpu::DeviceBuffer<obsidian::Fp8E5M2>>;

// The element types of kernel k's array parameters after its first `inputs` arrays (the
// mutable arrays and the outputs, in argument order).
inline std::vector<obsidian::ScalarType> argumentTypes(const obsidian::KernelIR& k, size_t inputs) {
  std::vector<obsidian::ScalarType> types;
  size_t arrays = 0;
  for (const obsidian::Param& p : k.params) {
    if (p.kind == obsidian::ParamKind::Array && arrays++ >= inputs) types.push_back(p.type);
  }
  return types;
}

// An element's bits as a word (zero-extended), and back (the word's low bits).
template <class T>
uint32_t wordOf(const T& x) {
  static_assert(sizeof(T) <= 4);
  if constexpr (obsidian::SmallFloatScalar<T>) {
    return x.bits;
  } else if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<uint32_t>(x);
  } else {
    static_assert(std::is_unsigned_v<T>);
    return x;
  }
}
template <class T>
T fromWord(uint32_t w) {
  static_assert(sizeof(T) <= 4);
  if constexpr (obsidian::SmallFloatScalar<T>) {
    return T::fromBits(static_cast<decltype(T{}.bits)>(w));
  } else if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<float>(w);
  } else {
    return static_cast<T>(w);
  }
}

// The words as an array of element type t.
inline TypedArray typedArray(obsidian::ScalarType t, const std::vector<uint32_t>& words) {
  auto of = [&words]<class T>(std::type_identity<T>) {
    std::vector<T> v(words.size());
    for (size_t i = 0; i < words.size(); ++i) v[i] = fromWord<T>(words[i]);
    return TypedArray(std::move(v));
  };
  switch (t) {
    case obsidian::ScalarType::U32: return TypedArray(words);
    case obsidian::ScalarType::U8: return of(std::type_identity<uint8_t>{});
    case obsidian::ScalarType::U16: return of(std::type_identity<uint16_t>{});
    case obsidian::ScalarType::F32: return of(std::type_identity<float>{});
    case obsidian::ScalarType::F16: return of(std::type_identity<obsidian::Half>{});
    case obsidian::ScalarType::BF16: return of(std::type_identity<obsidian::BFloat16>{});
    case obsidian::ScalarType::E4M3: return of(std::type_identity<obsidian::Fp8E4M3>{});
    case obsidian::ScalarType::E5M2: return of(std::type_identity<obsidian::Fp8E5M2>{});
    case obsidian::ScalarType::I32:
    case obsidian::ScalarType::U64:
    case obsidian::ScalarType::F64:
    case obsidian::ScalarType::Bool:
    case obsidian::ScalarType::F16x2:  // pairs are drawn as words (PairMap)
    case obsidian::ScalarType::BF16x2: break;
  }
  throw std::logic_error("fuzz: no array argument of element type " +
                         std::string(obsidian::cudaTypeName(t)));
}

// The array's elements as words.
template <class T>
std::vector<uint32_t> wordsOf(const std::vector<T>& v) {
  std::vector<uint32_t> words(v.size());
  for (size_t i = 0; i < v.size(); ++i) words[i] = wordOf(v[i]);
  return words;
}
inline std::vector<uint32_t> wordsOf(const TypedArray& a) {
  return std::visit([](const auto& v) { return wordsOf(v); }, a);
}
inline std::vector<uint32_t> wordsOf(const DeviceArray& a) {
  return std::visit([](const auto& d) { return wordsOf(d.download()); }, a);
}

// The words as arrays of the types, one each.
inline std::vector<TypedArray> typedArrays(const std::vector<obsidian::ScalarType>& types,
                                           const std::vector<std::vector<uint32_t>>& words) {
  if (types.size() != words.size()) {
    throw std::logic_error("fuzz: " + std::to_string(words.size()) + " arrays for " +
                           std::to_string(types.size()) + " array parameters");
  }
  std::vector<TypedArray> arrays;
  for (size_t j = 0; j < words.size(); ++j) arrays.push_back(typedArray(types[j], words[j]));
  return arrays;
}

// The launch argument of a host or device array (writable: the kernel may write it).
inline obsidian::KernelArg argumentOf(TypedArray& a) {
  return std::visit([](auto& v) { return obsidian::KernelArg(v); }, a);
}
inline obsidian::KernelArg argumentOf(DeviceArray& a) {
  return std::visit([](auto& d) { return obsidian::KernelArg(d); }, a);
}
// A device copy of the array.
inline DeviceArray deviceCopy(const TypedArray& a) {
  return std::visit(
      [](const auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        return DeviceArray(std::in_place_type<obsidian::gpu::DeviceBuffer<T>>, v);
      },
      a);
}

}  // namespace fuzz
