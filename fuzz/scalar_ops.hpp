// The fuzzer's scalar operators, written once for both the obsidian interpretation (W is
// obsidian::EWord32) and the reference (W is uint32_t): unsigned wrap-around makes the two
// agree bit for bit. opText gives the same operator as C++ source for repros.
#pragma once

#include <algorithm>
#include <cstdint>
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
