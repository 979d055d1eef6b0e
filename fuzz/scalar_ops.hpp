// The fuzzer's scalar operators, written once for both the obsidian interpretation (W is
// obsidian::EWord32) and the reference (W is uint32_t): unsigned wrap-around makes the two
// agree bit for bit. opText gives the same operator as C++ source for repros.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <obsidian/exp.hpp>
#include <obsidian/memory_ops.hpp>
#include <string>
#include <type_traits>

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

// ------------------------------------------------------------------ narrow types
// The reference's u8 or u16 value: C++ computes X's arithmetic in (unsigned) 32 bits, and the
// result is truncated back to X; that is what the kernels compute (the CUDA printer widens to
// unsigned int where int could overflow, the simulator masks). Shift amounts stay below 32.
template <class X>
struct Narrow {
  using Scalar = X;
  static constexpr uint32_t kMask = static_cast<X>(~X{0});
  uint32_t v;
  explicit Narrow(uint32_t x) : v(x & kMask) {}
  friend Narrow operator+(Narrow a, Narrow b) { return Narrow(a.v + b.v); }
  friend Narrow operator-(Narrow a, Narrow b) { return Narrow(a.v - b.v); }
  friend Narrow operator*(Narrow a, Narrow b) { return Narrow(a.v * b.v); }
  friend Narrow operator/(Narrow a, Narrow b) { return Narrow(a.v / b.v); }
  friend Narrow operator%(Narrow a, Narrow b) { return Narrow(a.v % b.v); }
  friend Narrow operator^(Narrow a, Narrow b) { return Narrow(a.v ^ b.v); }
  friend Narrow operator|(Narrow a, Narrow b) { return Narrow(a.v | b.v); }
  friend Narrow operator&(Narrow a, Narrow b) { return Narrow(a.v & b.v); }
  friend Narrow operator<<(Narrow a, Narrow b) { return Narrow(a.v << b.v); }
  friend Narrow operator>>(Narrow a, Narrow b) { return Narrow(a.v >> b.v); }
  friend Narrow operator~(Narrow a) { return Narrow(~a.v); }
  friend Narrow operator-(Narrow a) { return Narrow(0u - a.v); }
  friend bool operator<(Narrow a, Narrow b) { return a.v < b.v; }
  friend Narrow min(Narrow a, Narrow b) { return a.v < b.v ? a : b; }
  friend Narrow max(Narrow a, Narrow b) { return a.v < b.v ? b : a; }
};
template <class X>
Narrow<X> narrowSelect(bool c, Narrow<X> a, Narrow<X> b) {
  return c ? a : b;
}
template <class X>
obsidian::Exp<X> narrowSelect(const obsidian::EBool& c, const obsidian::Exp<X>& a,
                              const obsidian::Exp<X>& b) {
  return obsidian::ifThenElse(c, a, b);
}
// N (Exp<X> or Narrow<X>) as the same kind of value of type Y.
template <class N, class Y>
struct Rebind;
template <class X, class Y>
struct Rebind<obsidian::Exp<X>, Y> {
  using type = obsidian::Exp<Y>;
};
template <class X, class Y>
struct Rebind<Narrow<X>, Y> {
  using type = Narrow<Y>;
};
template <class Y, class X>
obsidian::Exp<Y> narrowCast(const obsidian::Exp<X>& e) {
  return obsidian::cast<Y>(e);
}
template <class Y, class X>
Narrow<Y> narrowCast(Narrow<X> n) {
  return Narrow<Y>(n.v);
}
// The word's low bits as X (w32ToW8, w32ToW16), and back (w8ToW32, w16ToW32).
template <class X>
Narrow<X> toNarrow(uint32_t w) {
  return Narrow<X>(w);
}
template <class X>
obsidian::Exp<X> toNarrow(const obsidian::EWord32& w) {
  return obsidian::cast<X>(w);
}
template <class X>
uint32_t widen(Narrow<X> n) {
  return n.v;
}
inline obsidian::EWord32 widen(const obsidian::EWord8& e) { return obsidian::w8ToW32(e); }
inline obsidian::EWord32 widen(const obsidian::EWord16& e) { return obsidian::w16ToW32(e); }

// The narrow operators over N = Exp<X> or Narrow<X> (X = uint8_t or uint16_t), constant c:
// a u16 product past INT_MAX, shifts (by literals below the width, the library's rule, and by
// values up to 31, which shift the promoted value), division, select, ~ and unary minus, products
// of literals (folded at generation time, in X), and a round trip through the other narrow type.
template <class N>
N narrowOp(uint32_t which, uint32_t c, const N& x) {
  using X = typename N::Scalar;
  using Other = std::conditional_t<sizeof(X) == 1, uint16_t, uint8_t>;
  using O = typename Rebind<N, Other>::type;
  constexpr uint32_t bits = 8 * sizeof(X);
  const N k(c);
  switch (which % kNarrowOps) {
    case 0: return x * x + k;
    case 1: return ((x << N(c % bits)) ^ (k << (x & N(31u)))) + (x >> (k & N(bits - 1)));
    case 2: return x / (k | N(1u)) + x % (k | N(1u));
    case 3: return narrowSelect(x < k, ~x, max(x, k) - (-x));
    case 4: return x * (k * k) + min(x, k + k);
    default: return narrowCast<X>((narrowCast<Other>(x ^ k) >> O(1u)) * O(c)) + x;
  }
}
// A NarrowMap step's function of a word (width 8 or 16).
template <class W>
W narrowMap(uint32_t which, uint32_t c, uint32_t width, const W& w) {
  if (width == 8) return widen(narrowOp(which, c, toNarrow<uint8_t>(w)));
  return widen(narrowOp(which, c, toNarrow<uint16_t>(w)));
}
// The same as C++ source: a lambda over the word w.
inline std::string narrowMapText(uint32_t which, uint32_t c, uint32_t width) {
  const std::string bits = std::to_string(width), other = width == 8 ? "16" : "8";
  const std::string N = "EWord" + bits, O = "EWord" + other;
  const uint32_t mask = width == 8 ? 0xffu : 0xffffu, otherMask = width == 8 ? 0xffffu : 0xffu;
  auto lit = [](const std::string& type, uint32_t v) {
    return type + "(" + std::to_string(v) + "u)";
  };
  std::string e;
  switch (which % kNarrowOps) {
    case 0: e = "x * x + k"; break;
    case 1:
      e = "((x << " + lit(N, c % width) + ") ^ (k << (x & " + lit(N, 31) + "))) + (x >> (k & " +
          lit(N, width - 1) + "))";
      break;
    case 2: e = "x / (k | " + lit(N, 1) + ") + x % (k | " + lit(N, 1) + ")"; break;
    case 3: e = "ifThenElse(x < k, ~x, max(x, k) - (-x))"; break;
    case 4: e = "x * (k * k) + min(x, k + k)"; break;
    default:
      e = "cast<uint" + bits + "_t>((cast<uint" + other + "_t>(x ^ k) >> " + lit(O, 1) + ") * " +
          lit(O, c & otherMask) + ") + x";
      break;
  }
  return "[](const EWord32& w) { const " + N + " x = w32ToW" + bits + "(w); const " + N + " k(" +
         std::to_string(c & mask) + "u); return w" + bits + "ToW32(" + e + "); }";
}

// The effect's atomic operations (Result::EffectAtomic), all order-independent.
inline uint32_t accWord(uint32_t which, uint32_t acc, uint32_t v) {
  switch (which % kAccOps) {
    case 0: return acc + v;
    case 1: return acc - v;
    case 2: return std::min(acc, v);
    case 3: return std::max(acc, v);
    case 4: return acc & v;
    case 5: return acc | v;
    default: return acc ^ v;
  }
}
inline const char* accName(uint32_t which) {
  static const char* const names[] = {"atomicAdd", "atomicSub", "atomicMin", "atomicMax",
                                      "atomicAnd", "atomicOr",  "atomicXor"};
  return names[which % kAccOps];
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
