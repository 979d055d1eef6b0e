// The fuzzer's scalar operators, written once for both the obsidian interpretation (W is
// obsidian::EWord32) and the reference (W is uint32_t): unsigned wrap-around makes the two
// agree bit for bit. opText gives the same operator as C++ source for repros.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <obsidian/exp.hpp>
#include <string>

#include "recipe.hpp"

namespace fuzz {

inline uint32_t wordMin(uint32_t a, uint32_t b) { return std::min(a, b); }
inline uint32_t wordMax(uint32_t a, uint32_t b) { return std::max(a, b); }
inline obsidian::EWord32 wordMin(const obsidian::EWord32& a, const obsidian::EWord32& b) {
  return min(a, b);
}
inline obsidian::EWord32 wordMax(const obsidian::EWord32& a, const obsidian::EWord32& b) {
  return max(a, b);
}

template <class W>
W unaryOp(uint32_t which, uint32_t c, const W& x) {
  switch (which % kUnaryOps) {
    case 0: return x * W(c | 1u) + W(1u);
    case 1: return x ^ W(c);
    case 2: return (x >> W(c % 8u)) + W(c);
    case 3: return wordMax(x, W(c));
    default: return x * x + W(c);
  }
}

template <class W>
W binaryOp(uint32_t which, const W& a, const W& b) {
  switch (which % kBinaryOps) {
    case 0: return a + b;
    case 1: return a ^ b;
    case 2: return wordMax(a, b);
    case 3: return wordMin(a, b);
    default: return a * W(3u) + b;
  }
}

// The collectives' operators: 0 a + b, 1 a ^ b, 2 max, 3 min, 4 a & b, 5 a | b (obsidian's Sum,
// BitXor, Max, Min, BitAnd, BitOr in the kernels: see build.hpp), and 6 the composition of
// affine maps x -> m x + k modulo 2^16 (m in the high half-word, k in the low one: "a, then
// b"), associative but not commutative, so that a collective that reorders its elements shows.
template <class W>
W affine16(const W& a, const W& b) {
  return (((a >> W(16u)) * (b >> W(16u))) << W(16u)) |
         (((b >> W(16u)) * (a & W(65535u)) + (b & W(65535u))) & W(65535u));
}
inline uint32_t collectiveWord(uint32_t which, uint32_t a, uint32_t b) {
  switch (which % kCollectiveOps) {
    case 0: return a + b;
    case 1: return a ^ b;
    case 2: return std::max(a, b);
    case 3: return std::min(a, b);
    case 4: return a & b;
    case 5: return a | b;
    default: return affine16(a, b);
  }
}
inline uint32_t collectiveIdentity(uint32_t which) {
  switch (which % kCollectiveOps) {
    case 3:
    case 4: return 0xffffffffu;
    case 6: return 0x10000u;
    default: return 0;
  }
}
// The operator as C++ source: an operator object of obsidian/operators.hpp, or a lambda.
inline std::string collectiveText(uint32_t which) {
  switch (which % kCollectiveOps) {
    case 0: return "Sum{}";
    case 1: return "BitXor{}";
    case 2: return "Max{}";
    case 3: return "Min{}";
    case 4: return "BitAnd{}";
    case 5: return "BitOr{}";
    default:
      return "[](const EWord32& a, const EWord32& b) { return (((a >> 16u) * (b >> 16u)) << 16u) "
             "| (((b >> 16u) * (a & 65535u) + (b & 65535u)) & 65535u); }";
  }
}
inline const char* collectiveName(uint32_t which) {
  static const char* const names[] = {"sum", "xor", "max", "min", "and", "or", "affine16"};
  return names[which % kCollectiveOps];
}

// Float arithmetic on a word: x >> 8 is exact as a float, the product rounds, the sum rounds
// again (kernels are compiled with --fmad=false, so the GPU rounds twice too), and the result
// stays below 2^26, where converting back to uint32_t is defined.
inline float floatFactor(uint32_t c) { return static_cast<float>(c % 1024u) / 256.0f; }
inline uint32_t floatOp(uint32_t which, uint32_t c, uint32_t x) {
  const float f = static_cast<float>(x >> 8u) * floatFactor(c);
  return static_cast<uint32_t>(which % 2 == 0 ? f + 0.5f : std::max(f, 100.0f));
}
inline obsidian::EWord32 floatOp(uint32_t which, uint32_t c, const obsidian::EWord32& x) {
  const obsidian::EFloat f = obsidian::w32ToF(x >> 8u) * floatFactor(c);
  return obsidian::fToW32(which % 2 == 0 ? f + 0.5f : max(f, obsidian::EFloat(100.0f)));
}

// The same operators as the body of a C++ lambda over EWord32 (x, or a and b).
inline std::string unaryText(uint32_t which, uint32_t c) {
  const std::string k = std::to_string(c) + "u";
  switch (which % kUnaryOps) {
    case 0: return "x * " + std::to_string(c | 1u) + "u + 1u";
    case 1: return "x ^ " + k;
    case 2: return "(x >> " + std::to_string(c % 8u) + "u) + " + k;
    case 3: return "max(x, EWord32(" + k + "))";
    default: return "x * x + " + k;
  }
}
inline std::string floatText(uint32_t which, uint32_t c) {
  char k[32];
  std::snprintf(k, sizeof k, "%.9gf", static_cast<double>(floatFactor(c)));
  const std::string f = "w32ToF(x >> 8u) * " + std::string(k);
  return which % 2 == 0 ? "fToW32(" + f + " + 0.5f)" : "fToW32(max(" + f + ", EFloat(100.0f)))";
}
inline std::string binaryText(uint32_t which) {
  switch (which % kBinaryOps) {
    case 0: return "a + b";
    case 1: return "a ^ b";
    case 2: return "max(a, b)";
    case 3: return "min(a, b)";
    default: return "a * 3u + b";
  }
}

}  // namespace fuzz
