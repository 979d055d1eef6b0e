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
