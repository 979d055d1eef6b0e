// The fuzzer's scalar operators, written once for both the obsidian interpretation (W is
// obsidian::EWord32) and the reference (W is uint32_t): unsigned wrap-around makes the two
// agree bit for bit. opText gives the same operator as C++ source for repros.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
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

// ------------------------------------------------------------------ float bits (issue 40)
// Words read as f32 (and f64) bit patterns, NaNs among them, through float operations and back
// to their bits: the outputs are words, so they compare bit for bit. The reference computes
// every result's bits as the GPU does (sm_90), with its own code (not the library's):
// - f32: an operation whose result is NaN gives 0x7fffffff, whatever its operands (negation and
//   fabsf of a NaN too); otherwise IEEE round to nearest (no FMA: --fmad=false, no FTZ).
// - f64: a NaN result is the first NaN operand with the quiet bit set (sign and payload kept;
//   negation and fabs keep a NaN's sign too), or 0xfff8000000000000 when no operand is a NaN.
// - fmin/fmax: a NaN operand gives the other operand; -0 is below +0; both NaN: a NaN as above.
// - f32 -> f64 and f64 -> f32 quiet a NaN and keep its sign and (the top of) its payload.
// - f32 -> u32 truncates and saturates; NaN gives 0.
// - moves, selects, bitcasts and literals keep every bit (signalling NaNs too).
// - A NaN literal operand decides at capture time, as the CUDA compiler would fold it
//   (ir::binary in src/ir/exp.cpp): +, -, *, / give that literal's NaN (f32: 0x7fffffff; f64:
//   the literal quieted), whatever the other operand; fmin/fmax give the other operand as it
//   is, a NaN too. So the reference's values know whether they are literals (`lit`: a literal,
//   or folded from literals).
struct RefF32 {
  uint32_t b;
  bool lit = false;
};
struct RefF64 {
  uint64_t b;
  bool lit = false;
};
inline bool nan32(uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0; }
inline bool nan64(uint64_t b) {
  return (b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0xfffffffffffffull) != 0;
}
inline float hostF(RefF32 x) { return std::bit_cast<float>(x.b); }
inline double hostD(RefF64 x) { return std::bit_cast<double>(x.b); }
// How many NaN bit patterns the reference's float steps returned as words (--stats).
inline uint64_t& referenceNaNs() {
  static uint64_t n = 0;
  return n;
}
// An f32 result r of an operation on x and y: the canonical NaN for any NaN (a NaN literal
// operand folds to the same bits, but the result is a literal then).
inline RefF32 f32Result(float r, RefF32 x, RefF32 y) {
  const bool lit = (x.lit && y.lit) || (x.lit && nan32(x.b)) || (y.lit && nan32(y.b));
  if (nan32(x.b) || nan32(y.b) || std::isnan(r)) return RefF32{0x7fffffffu, lit};
  return RefF32{std::bit_cast<uint32_t>(r), lit};
}
inline RefF64 f64Result(double r, RefF64 x, RefF64 y) {
  constexpr uint64_t quiet = uint64_t{1} << 51;
  if (!(x.lit && y.lit)) {  // a NaN literal against a value: the literal's NaN
    if (x.lit && nan64(x.b)) return RefF64{x.b | quiet, true};
    if (y.lit && nan64(y.b)) return RefF64{y.b | quiet, true};
  }
  const bool lit = x.lit && y.lit;
  if (nan64(x.b)) return RefF64{x.b | quiet, lit};
  if (nan64(y.b)) return RefF64{y.b | quiet, lit};
  if (std::isnan(r)) return RefF64{0xfff8000000000000ull, lit};
  return RefF64{std::bit_cast<uint64_t>(r), lit};
}
inline RefF32 operator+(RefF32 x, RefF32 y) { return f32Result(hostF(x) + hostF(y), x, y); }
inline RefF32 operator-(RefF32 x, RefF32 y) { return f32Result(hostF(x) - hostF(y), x, y); }
inline RefF32 operator*(RefF32 x, RefF32 y) { return f32Result(hostF(x) * hostF(y), x, y); }
inline RefF32 operator/(RefF32 x, RefF32 y) { return f32Result(hostF(x) / hostF(y), x, y); }
inline RefF32 operator-(RefF32 x) {
  return RefF32{nan32(x.b) ? 0x7fffffffu : x.b ^ 0x80000000u, x.lit};
}
inline RefF32 fabs(RefF32 x) { return RefF32{nan32(x.b) ? 0x7fffffffu : x.b & 0x7fffffffu, x.lit}; }
inline RefF64 operator+(RefF64 x, RefF64 y) { return f64Result(hostD(x) + hostD(y), x, y); }
inline RefF64 operator*(RefF64 x, RefF64 y) { return f64Result(hostD(x) * hostD(y), x, y); }
inline RefF64 operator-(RefF64 x) {
  return nan64(x.b) ? f64Result(0, x, x) : RefF64{x.b ^ 0x8000000000000000ull, x.lit};
}
inline RefF64 fabs(RefF64 x) {
  return nan64(x.b) ? f64Result(0, x, x) : RefF64{x.b & 0x7fffffffffffffffull, x.lit};
}
// fminf/fmaxf (fmin/fmax): the other operand for a NaN, -0 below +0.
template <class F>
F refMinMax(F x, F y, bool isMax) {
  constexpr bool single = std::is_same_v<F, RefF32>;
  const auto nan = [](F v) {
    if constexpr (single) {
      return nan32(v.b);
    } else {
      return nan64(v.b);
    }
  };
  const bool lit = x.lit && y.lit;
  if (!lit && x.lit && nan(x)) return y;  // a NaN literal: the other operand as it is
  if (!lit && y.lit && nan(y)) return x;
  F r = y;
  if (nan(x) && nan(y)) {
    if constexpr (single) {
      r = RefF32{0x7fffffffu};
    } else {
      r = f64Result(0, x, y);
    }
  } else if (nan(y)) {
    r = x;
  } else if (!nan(x)) {
    const auto hx = std::bit_cast<std::conditional_t<single, float, double>>(x.b);
    const auto hy = std::bit_cast<std::conditional_t<single, float, double>>(y.b);
    if (hx == hy) {
      r = (std::signbit(hx) != isMax) ? x : y;  // +-0: min -0, max +0
    } else {
      r = (hx < hy) != isMax ? x : y;
    }
  }
  r.lit = lit;
  return r;
}
inline RefF32 min(RefF32 x, RefF32 y) { return refMinMax(x, y, false); }
inline RefF32 max(RefF32 x, RefF32 y) { return refMinMax(x, y, true); }
inline RefF64 min(RefF64 x, RefF64 y) { return refMinMax(x, y, false); }
inline RefF64 max(RefF64 x, RefF64 y) { return refMinMax(x, y, true); }
inline bool operator<(RefF32 x, RefF32 y) { return hostF(x) < hostF(y); }
inline bool operator>(RefF32 x, RefF32 y) { return hostF(x) > hostF(y); }
inline bool operator<=(RefF32 x, RefF32 y) { return hostF(x) <= hostF(y); }
inline bool operator>=(RefF32 x, RefF32 y) { return hostF(x) >= hostF(y); }
inline bool operator==(RefF32 x, RefF32 y) { return hostF(x) == hostF(y); }
inline bool operator!=(RefF32 x, RefF32 y) { return hostF(x) != hostF(y); }

// The two interpretations' float types and conversions: FloatWorld<uint32_t> (the reference)
// and FloatWorld<EWord32> (obsidian).
template <class W>
struct FloatWorld;
template <>
struct FloatWorld<uint32_t> {
  using F = RefF32;
  using D = RefF64;
  using W64 = uint64_t;
  static F asF32(uint32_t w) { return F{w}; }
  static bool isNan(F f) { return nan32(f.b); }
  static uint32_t bits(F f) {
    if (nan32(f.b)) ++referenceNaNs();
    return f.b;
  }
  static D asF64(uint64_t w) { return D{w}; }
  static uint64_t bits64(D d) {
    if (nan64(d.b)) ++referenceNaNs();
    return d.b;
  }
  static F lit(uint32_t b) { return F{b, true}; }
  static D lit64(uint64_t b) { return D{b, true}; }
  static uint64_t wide(uint32_t w) { return w; }
  static uint32_t low(uint64_t w) { return static_cast<uint32_t>(w); }
  static D toF64(F f) {
    if (nan32(f.b)) {
      return D{
          (uint64_t{f.b >> 31} << 63) | 0x7ff8000000000000ull | (uint64_t{f.b & 0x7fffffu} << 29),
          f.lit};
    }
    return D{std::bit_cast<uint64_t>(static_cast<double>(hostF(f))), f.lit};
  }
  static F toF32(D d) {
    if (nan64(d.b)) {
      return F{static_cast<uint32_t>(d.b >> 63) << 31 | 0x7fc00000u |
                   static_cast<uint32_t>((d.b >> 29) & 0x7fffffu),
               d.lit};
    }
    // Round to nearest; past the largest float (FLT_MAX and half its ulp, a tie that rounds to
    // even: infinity) C++ leaves the conversion undefined, so those are written out.
    const double v = hostD(d);
    if (std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max())) {
      const bool inf = std::fabs(v) >= 0x1.ffffffp127;
      const float m =
          inf ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::max();
      return F{std::bit_cast<uint32_t>(std::signbit(v) ? -m : m), d.lit};
    }
    return F{std::bit_cast<uint32_t>(static_cast<float>(v)), d.lit};
  }
  static uint32_t toU32(F f) {
    const float v = hostF(f);
    if (std::isnan(v) || v <= 0.0f) return 0;
    if (v >= 4294967296.0f) return 0xffffffffu;
    return static_cast<uint32_t>(v);
  }
  // A select is no literal (its condition depends on the data).
  template <class T>
  static T select(bool c, const T& a, const T& b) {
    T r = c ? a : b;
    if constexpr (std::is_same_v<T, F> || std::is_same_v<T, D>) r.lit = false;
    return r;
  }
};
template <>
struct FloatWorld<obsidian::EWord32> {
  using F = obsidian::EFloat;
  using D = obsidian::EDouble;
  using W64 = obsidian::EWord64;
  static F asF32(const obsidian::EWord32& w) { return obsidian::bitcast<float>(w); }
  static obsidian::EBool isNan(const F& f) { return f != f; }
  static obsidian::EWord32 bits(const F& f) { return obsidian::bitcast<uint32_t>(f); }
  static D asF64(const W64& w) { return obsidian::bitcast<double>(w); }
  static W64 bits64(const D& d) { return obsidian::bitcast<uint64_t>(d); }
  static F lit(uint32_t b) { return F(std::bit_cast<float>(b)); }
  static D lit64(uint64_t b) { return D(std::bit_cast<double>(b)); }
  static W64 wide(const obsidian::EWord32& w) { return obsidian::w32ToW64(w); }
  static obsidian::EWord32 low(const W64& w) { return obsidian::w64ToW32(w); }
  static D toF64(const F& f) { return obsidian::fToD(f); }
  static F toF32(const D& d) { return obsidian::dToF(d); }
  static obsidian::EWord32 toU32(const F& f) { return obsidian::fToW32(f); }
  template <class T>
  static T select(const obsidian::EBool& c, const T& a, const T& b) {
    return obsidian::ifThenElse(c, a, b);
  }
};

// The f32 that a float step reads from word x: where (x & 7) < t a NaN pattern of x's sign and
// payload (quiet or signalling by its bit 22; an infinity where the payload is 0), else x's
// bits, or +-0 (x's sign) where (x & 0x1c0) == 0. (The steps below select on bits 3 to 5.)
template <class W>
typename FloatWorld<W>::F floatIn(uint32_t t, const W& x) {
  using FW = FloatWorld<W>;
  return FW::select(
      (x & W(7u)) < W(t), FW::asF32((x & W(0x807fffffu)) | W(0x7f800000u)),
      FW::select((x & W(0x1c0u)) == W(0u), FW::asF32(x & W(0x80000000u)), FW::asF32(x)));
}
constexpr uint32_t kFloatBitsOps = 8;
// A FloatBits step's function of word x: t the NaN threshold (floatIn), k the f32 literal's
// bits, kd the f64 literal's bits (k in the low half).
template <class W>
W floatBitsOp(uint32_t which, uint32_t t, uint32_t k, uint32_t khi, const W& x) {
  using FW = FloatWorld<W>;
  using F = typename FW::F;
  using D = typename FW::D;
  using W64 = typename FW::W64;
  const F v = floatIn(t, x);
  const F c = FW::lit(k);
  const auto bit = [&x](uint32_t m) { return (x & W(m)) == W(0u); };
  switch (which % kFloatBitsOps) {
    case 0: return FW::bits(FW::select(bit(8), v, c));  // moves and selects
    case 1: return FW::bits(FW::select(bit(8), (v + c) * v, v / c - v));
    case 2: return FW::bits(FW::select(bit(8), -v, fabs(v)));
    case 3: {  // comparisons, as bits of a word
      const W one(1u), zero(0u);
      return (x << W(6u)) | FW::select(v < c, one, zero) | FW::select(v == v, W(2u), zero) |
             FW::select(v != c, W(4u), zero) | FW::select(v >= c, W(8u), zero) |
             FW::select(c > v, W(16u), zero) | FW::select(v <= v, W(32u), zero);
    }
    case 4:  // fminf/fmaxf: NaN operands, and +0 against -0
      return FW::bits(FW::select(bit(8), FW::select(bit(16), min(v, c), max(c, v)),
                                 FW::select(bit(16), min(v, -v), max(v, -v))));
    case 5: {  // f32 -> f64 -> f32, with f64 arithmetic between
      const D d = FW::toF64(v);
      return FW::bits(
          FW::select(bit(8), FW::toF32(d), FW::toF32(d * FW::lit64(uint64_t{khi} << 32 | k))));
    }
    case 6: return FW::toU32(FW::select(bit(8), v, v * c));  // f32 -> u32
    default: {  // f64 bit patterns (NaNs of x's sign and payload) or v widened; f64 arithmetic
      const W64 hi = FW::wide((x & W(0x800fffffu)) | W(0x7ff00000u));
      const D e = FW::select(bit(32), FW::asF64((hi << W64(32u)) | FW::wide(x * W(0x9e3779b9u))),
                             FW::toF64(v));
      const D cd = FW::lit64(uint64_t{khi} << 32 | k);
      const W64 r = FW::bits64(FW::select(bit(8), FW::select(bit(16), e + cd, -e),
                                          FW::select(bit(16), fabs(e), max(e, cd))));
      return FW::low(r >> W64(32u)) ^ FW::low(r);
    }
  }
}
// A FloatScan step's operator over two f32 (which < kFloatScanOps; kFloatScanOps itself: no
// scan, the floats forced as they are).
constexpr uint32_t kFloatScanOps = 5;
template <class W>
typename FloatWorld<W>::F floatScanOp(uint32_t which, const typename FloatWorld<W>::F& a,
                                      const typename FloatWorld<W>::F& b) {
  using FW = FloatWorld<W>;
  switch (which % kFloatScanOps) {
    case 0: return a + b;
    case 1: return min(a, b);
    case 2: return max(a, b);
    case 3: return a * b;
    // Widened: which of two NaN operands an f64 add returns is the GPU's choice (the compiler
    // orders the operands; fuzz/RESULTS.md, finding 6), so two NaNs give a, unadded.
    default:
      return FW::select(FW::isNan(a) && FW::isNan(b), a, FW::toF32(FW::toF64(a) + FW::toF64(b)));
  }
}
// The f32 literal's bits (printed as in floatBitsText).
inline std::string hex(uint64_t v, const char* suffix) {
  char s[32];
  std::snprintf(s, sizeof s, "0x%llx%s", static_cast<unsigned long long>(v), suffix);
  return s;
}
// floatIn as C++ source over the word x.
inline std::string floatInText(uint32_t t) {
  return "ifThenElse((x & 7u) < " + std::to_string(t) +
         "u, bitcast<float>((x & 0x807fffffu) | 0x7f800000u), ifThenElse((x & 0x1c0u) == 0u, "
         "bitcast<float>(x & 0x80000000u), bitcast<float>(x)))";
}
// A FloatBits step as a lambda over the word x.
inline std::string floatBitsText(uint32_t which, uint32_t t, uint32_t k, uint32_t khi) {
  const std::string lit = "EFloat(std::bit_cast<float>(" + hex(k, "u") + "))";
  const std::string lit64 =
      "EDouble(std::bit_cast<double>(" + hex(uint64_t{khi} << 32 | k, "ull") + "))";
  std::string s = "[](const EWord32& x) { const EFloat v = " + floatInText(t) +
                  "; const EFloat c = " + lit + "; ";
  auto bit = [](uint32_t m) { return "(x & " + std::to_string(m) + "u) == 0u"; };
  switch (which % kFloatBitsOps) {
    case 0: s += "return bitcast<uint32_t>(ifThenElse(" + bit(8) + ", v, c));"; break;
    case 1:
      s += "return bitcast<uint32_t>(ifThenElse(" + bit(8) + ", (v + c) * v, v / c - v));";
      break;
    case 2: s += "return bitcast<uint32_t>(ifThenElse(" + bit(8) + ", -v, fabs(v)));"; break;
    case 3:
      s += "return (x << 6u) | ifThenElse(v < c, EWord32(1u), EWord32(0u)) | ifThenElse(v == v, "
           "EWord32(2u), EWord32(0u)) | ifThenElse(v != c, EWord32(4u), EWord32(0u)) | "
           "ifThenElse(v >= c, EWord32(8u), EWord32(0u)) | ifThenElse(c > v, EWord32(16u), "
           "EWord32(0u)) | ifThenElse(v <= v, EWord32(32u), EWord32(0u));";
      break;
    case 4:
      s += "return bitcast<uint32_t>(ifThenElse(" + bit(8) + ", ifThenElse(" + bit(16) +
           ", min(v, c), max(c, v)), ifThenElse(" + bit(16) + ", min(v, -v), max(v, -v))));";
      break;
    case 5:
      s += "const EDouble d = fToD(v); return bitcast<uint32_t>(ifThenElse(" + bit(8) +
           ", dToF(d), dToF(d * " + lit64 + ")));";
      break;
    case 6: s += "return fToW32(ifThenElse(" + bit(8) + ", v, v * c));"; break;
    default:
      s += "const EWord64 hi = w32ToW64((x & 0x800fffffu) | 0x7ff00000u); const EDouble e = "
           "ifThenElse(" +
           bit(32) +
           ", bitcast<double>((hi << EWord64(32u)) | w32ToW64(x * 0x9e3779b9u)), fToD(v)); const "
           "EDouble cd = " +
           lit64 + "; const EWord64 r = bitcast<uint64_t>(ifThenElse(" + bit(8) + ", ifThenElse(" +
           bit(16) + ", e + cd, -e), ifThenElse(" + bit(16) +
           ", fabs(e), max(e, cd)))); return w64ToW32(r >> EWord64(32u)) ^ w64ToW32(r);";
      break;
  }
  return s + " }";
}
// A FloatScan step's operator as a lambda over two EFloat.
inline std::string floatScanText(uint32_t which) {
  std::string e;
  switch (which % kFloatScanOps) {
    case 0: e = "a + b"; break;
    case 1: e = "min(a, b)"; break;
    case 2: e = "max(a, b)"; break;
    case 3: e = "a * b"; break;
    default: e = "ifThenElse(a != a && b != b, a, dToF(fToD(a) + fToD(b)))"; break;
  }
  return "[](const EFloat& a, const EFloat& b) { return " + e + "; }";
}

// ------------------------------------------------------------------ bit intrinsics
// popc, clz, ffs and brev of u32 and u64 words (CUDA's __popc, __clz, __ffs, __brev and their
// ll forms): BitsWorld<uint32_t> computes them with its own code (the reference: std's bit
// functions and a loop), BitsWorld<EWord32> calls the library's.
template <class W>
struct BitsWorld;
template <>
struct BitsWorld<uint32_t> {
  using W64 = uint64_t;
  static uint64_t wide(uint32_t w) { return w; }
  static uint32_t low(uint64_t w) { return static_cast<uint32_t>(w); }
  template <class U>
  static uint32_t popc(U x) {
    return static_cast<uint32_t>(std::popcount(x));
  }
  template <class U>
  static uint32_t clz(U x) {  // the width for 0
    return static_cast<uint32_t>(std::countl_zero(x));
  }
  template <class U>
  static uint32_t ffs(U x) {  // the lowest set bit, from 1; 0 for 0
    return x == 0 ? 0u : static_cast<uint32_t>(std::countr_zero(x)) + 1u;
  }
  template <class U>
  static U brev(U x) {
    constexpr int bits = 8 * sizeof(U);
    U r = 0;
    for (int i = 0; i < bits; ++i) r |= static_cast<U>((x >> i) & 1u) << (bits - 1 - i);
    return r;
  }
};
template <>
struct BitsWorld<obsidian::EWord32> {
  using W64 = obsidian::EWord64;
  static W64 wide(const obsidian::EWord32& w) { return obsidian::w32ToW64(w); }
  static obsidian::EWord32 low(const W64& w) { return obsidian::w64ToW32(w); }
  template <class U>
  static obsidian::EWord32 popc(const U& x) {
    return obsidian::popc(x);
  }
  template <class U>
  static obsidian::EWord32 clz(const U& x) {
    return obsidian::clz(x);
  }
  template <class U>
  static obsidian::EWord32 ffs(const U& x) {
    return obsidian::ffs(x);
  }
  template <class U>
  static U brev(const U& x) {
    return obsidian::brev(x);
  }
};
// A BitsMap step's function of word x with constant c: the u32 intrinsics of x (shifted by the
// constant, so that clz and ffs take every value), and those of the u64 word
// y = u64(x) | u64(x * (c | 1)) << 32 (shifted by x or c), each combined with x or c so that the
// values vary. bitsText prints the same.
template <class W>
W bitsOp(uint32_t which, uint32_t c, const W& x) {
  using BW = BitsWorld<W>;
  using W64 = typename BW::W64;
  switch (which % kBitsOps) {
    case 0: return x ^ BW::popc(x);
    case 1: return BW::clz(x >> W(c % 32u)) + x;
    case 2: return (BW::ffs(x << W(c % 32u)) << W(8u)) ^ x;
    case 3: return BW::brev(x) ^ W(c);
    default: break;
  }
  const W64 y = BW::wide(x) | (BW::wide(x * W(c | 1u)) << W64(32u));
  switch (which % kBitsOps) {
    case 4: return BW::popc(y) + x;
    case 5: return BW::clz(y >> BW::wide(x & W(63u))) ^ x;
    case 6: return BW::ffs(y << W64(c % 64u)) + x;
    case 7: {
      const W64 r = BW::brev(y);
      return BW::low(r) ^ BW::low(r >> W64(32u));
    }
    default: {  // all four of y together (as tests/vote_kernels.hpp's BitsU64)
      const W64 r = BW::brev(y);
      return (BW::popc(y) ^ (BW::clz(y) << W(8u)) ^ (BW::ffs(y) << W(16u)) ^ BW::low(r) ^
              BW::low(r >> W64(32u))) +
             x;
    }
  }
}
// A BitsMap step as a lambda over the word x.
inline std::string bitsText(uint32_t which, uint32_t c) {
  const std::string k = std::to_string(c) + "u";
  const std::string y = "const EWord64 y = w32ToW64(x) | (w32ToW64(x * " + std::to_string(c | 1u) +
                        "u) << EWord64(32u)); ";
  std::string e;
  switch (which % kBitsOps) {
    case 0: e = "return x ^ popc(x);"; break;
    case 1: e = "return clz(x >> " + std::to_string(c % 32u) + "u) + x;"; break;
    case 2: e = "return (ffs(x << " + std::to_string(c % 32u) + "u) << 8u) ^ x;"; break;
    case 3: e = "return brev(x) ^ " + k + ";"; break;
    case 4: e = y + "return popc(y) + x;"; break;
    case 5: e = y + "return clz(y >> w32ToW64(x & 63u)) ^ x;"; break;
    case 6: e = y + "return ffs(y << EWord64(" + std::to_string(c % 64u) + "u)) + x;"; break;
    case 7:
      e = y + "const EWord64 r = brev(y); return w64ToW32(r) ^ w64ToW32(r >> EWord64(32u));";
      break;
    default:
      e = y +
          "const EWord64 r = brev(y); return (popc(y) ^ (clz(y) << 8u) ^ (ffs(y) << 16u) ^ "
          "w64ToW32(r) ^ w64ToW32(r >> EWord64(32u))) + x;";
      break;
  }
  return "[](const EWord32& x) { " + e + " }";
}

// ------------------------------------------------------------------ half precision and fp8
// Half and BFloat16 values (and the fp8 formats that they convert to and from) read from words,
// computed with or converted, and back to words bit for bit. SmallWorld<uint32_t> (the
// reference) computes every result with its own code, not half.hpp's: a table of each format's
// fields, values decoded to host floats, f32 arithmetic, and a rounding routine of its own over
// integer significands (smallRound). It follows the semantics of src/ir/scalar_ops.cpp (what the
// printed CUDA computes on sm_90):
// - + - * / and sqrt of the operands' exact values in f32, rounded once to the format; rsqrt in
//   f64 (1 / sqrt), rounded once; -, fabs, floor and ceil exact; min and max give the other
//   operand for a NaN and order -0 below +0. (The transcendental functions and pow are not
//   drawn: the GPU computes them in f64 to within an ulp or two, not correctly rounded, so no
//   reference can know every result's bits.)
// - Every NaN result of an operation is the format's canonical NaN (0x7fff; fp8: 0x7f); moves,
//   selects, bitcasts and literals keep a NaN's bits (the NaN-literal folds of f32 and f64 do not
//   apply to these formats).
// - To f32 exactly; a NaN gives 0x7fffffff, but a bf16 NaN widens with its bits (a shift). To
//   f64 and the integers through f32 (integers: truncated and saturated, a NaN gives 0; u8: the
//   u32's low byte).
// - To a format: rounded once to nearest even from the exact value (of an f32, f64, u32, i32 or
//   u64; from another small format through f32), past the largest finite value to infinity (fp8:
//   saturated to the largest finite value, infinities too), a NaN to the canonical NaN.

// A format's fields, as the reference knows them.
struct SmallFormat {
  int exponentBits, mantissaBits;
  bool infinity;   // else (e4m3) the top exponent is a number but for the one NaN mantissa
  bool saturates;  // conversions to it saturate (fp8's satfinite)
  uint32_t nan;    // the canonical NaN
  uint32_t sign() const { return 1u << (exponentBits + mantissaBits); }
  uint32_t top() const { return (1u << exponentBits) - 1; }
  uint32_t mantissaMask() const { return (1u << mantissaBits) - 1; }
  int bias() const { return (1 << (exponentBits - 1)) - 1; }
  uint32_t largest() const {  // the largest finite value's bits
    return infinity ? (top() << mantissaBits) - 1 : (top() << mantissaBits) | (mantissaMask() - 1);
  }
};
template <class S>
constexpr SmallFormat smallFormat() {
  if constexpr (std::is_same_v<S, obsidian::Half>) {
    return {5, 10, true, false, 0x7fffu};
  } else if constexpr (std::is_same_v<S, obsidian::BFloat16>) {
    return {8, 7, true, false, 0x7fffu};
  } else if constexpr (std::is_same_v<S, obsidian::Fp8E4M3>) {
    return {4, 3, false, true, 0x7fu};
  } else {
    static_assert(std::is_same_v<S, obsidian::Fp8E5M2>);
    return {5, 2, true, true, 0x7fu};
  }
}
inline bool smallNaN(const SmallFormat& f, uint32_t b) {
  const uint32_t e = (b >> f.mantissaBits) & f.top(), m = b & f.mantissaMask();
  return e == f.top() && (f.infinity ? m != 0 : m == f.mantissaMask());
}
// The value of bits b (not a NaN), exactly (every value of these formats is a float).
inline float smallValue(const SmallFormat& f, uint32_t b) {
  const uint32_t e = (b >> f.mantissaBits) & f.top(), m = b & f.mantissaMask();
  float v = 0;
  if (e == f.top() && f.infinity) {
    v = std::numeric_limits<float>::infinity();
  } else if (e == 0) {
    v = std::ldexp(static_cast<float>(m), 1 - f.bias() - f.mantissaBits);
  } else {
    v = std::ldexp(static_cast<float>(m | (1u << f.mantissaBits)),
                   static_cast<int>(e) - f.bias() - f.mantissaBits);
  }
  return (b & f.sign()) != 0 ? -v : v;
}
// An infinity of the sign, or the largest finite value where f saturates.
inline uint32_t smallOverflow(const SmallFormat& f, bool negative) {
  return (negative ? f.sign() : 0u) |
         (f.saturates ? f.largest() : f.top() << static_cast<uint32_t>(f.mantissaBits));
}
// The bits of f nearest to (-1)^negative * sig * 2^exp (exact: sig has up to 64 bits), ties to
// even.
inline uint32_t smallRound(const SmallFormat& f, bool negative, uint64_t sig, int exp) {
  const uint32_t sign = negative ? f.sign() : 0u;
  if (sig == 0) return sign;
  const int m = f.mantissaBits, emin = 1 - f.bias();
  const int e = static_cast<int>(std::bit_width(sig)) - 1 + exp;  // the value's exponent
  int quantum = std::max(e, emin) - m;                            // the last kept bit's
  const int shift = quantum - exp;
  uint64_t q = 0;  // the value in quanta
  if (shift <= 0) {
    q = sig << -shift;  // exact: below 2^(m + 1)
  } else if (shift > 64) {
    q = 0;  // below half a quantum
  } else {
    q = shift == 64 ? 0 : sig >> shift;
    const uint64_t rest = shift == 64 ? sig : sig & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rest > half || (rest == half && (q & 1) != 0)) ++q;
  }
  if (q >> (m + 1) != 0) {  // rounded up into the next binade
    q >>= 1;
    ++quantum;
  }
  if (q < (uint64_t{1} << m)) return sign | static_cast<uint32_t>(q);  // subnormal, or zero
  const int field = quantum + m + f.bias();
  const uint32_t mantissa = static_cast<uint32_t>(q) & f.mantissaMask();
  const int most = static_cast<int>(f.infinity ? f.top() - 1 : f.top());
  if (field > most || (!f.infinity && field == most && mantissa == f.mantissaMask())) {
    return smallOverflow(f, negative);
  }
  return sign | static_cast<uint32_t>(field) << m | mantissa;
}
inline uint32_t smallFromF32Bits(const SmallFormat& f, uint32_t b) {
  const bool negative = (b >> 31) != 0;
  const uint32_t e = (b >> 23) & 0xffu, m = b & 0x7fffffu;
  if (e == 0xffu) return m != 0 ? f.nan : smallOverflow(f, negative);
  if (e == 0) return smallRound(f, negative, m, -149);
  return smallRound(f, negative, m | 0x800000u, static_cast<int>(e) - 150);
}
inline uint32_t smallFromF64Bits(const SmallFormat& f, uint64_t b) {
  const bool negative = (b >> 63) != 0;
  const uint64_t e = (b >> 52) & 0x7ffu, m = b & 0xfffffffffffffull;
  if (e == 0x7ffu) return m != 0 ? f.nan : smallOverflow(f, negative);
  if (e == 0) return smallRound(f, negative, m, -1074);
  return smallRound(f, negative, m | (uint64_t{1} << 52), static_cast<int>(e) - 1075);
}
inline uint32_t smallToF32Bits(const SmallFormat& f, uint32_t b) {
  if (smallNaN(f, b)) return f.exponentBits == 8 ? b << 16 : 0x7fffffffu;  // bf16: a shift
  return std::bit_cast<uint32_t>(smallValue(f, b));
}

// The reference's value of format S: its bits.
template <class S>
struct RefSmall {
  uint32_t b;
};
// The value as a host float (a NaN: a NaN).
template <class S>
float hostSmall(RefSmall<S> v) {
  constexpr SmallFormat f = smallFormat<S>();
  return smallNaN(f, v.b) ? std::numeric_limits<float>::quiet_NaN() : smallValue(f, v.b);
}
// An operation's f32 result r rounded to S (a NaN: the canonical NaN).
template <class S>
RefSmall<S> smallResult(float r) {
  return RefSmall<S>{smallFromF32Bits(smallFormat<S>(), std::bit_cast<uint32_t>(r))};
}
template <class S>
RefSmall<S> operator+(RefSmall<S> a, RefSmall<S> b) {
  return smallResult<S>(hostSmall(a) + hostSmall(b));
}
template <class S>
RefSmall<S> operator-(RefSmall<S> a, RefSmall<S> b) {
  return smallResult<S>(hostSmall(a) - hostSmall(b));
}
template <class S>
RefSmall<S> operator*(RefSmall<S> a, RefSmall<S> b) {
  return smallResult<S>(hostSmall(a) * hostSmall(b));
}
template <class S>
RefSmall<S> operator/(RefSmall<S> a, RefSmall<S> b) {
  return smallResult<S>(hostSmall(a) / hostSmall(b));
}
template <class S>
RefSmall<S> operator-(RefSmall<S> a) {
  constexpr SmallFormat f = smallFormat<S>();
  return RefSmall<S>{smallNaN(f, a.b) ? f.nan : a.b ^ f.sign()};
}
template <class S>
RefSmall<S> fabs(RefSmall<S> a) {
  constexpr SmallFormat f = smallFormat<S>();
  return RefSmall<S>{smallNaN(f, a.b) ? f.nan : a.b & ~f.sign()};
}
template <class S>
RefSmall<S> sqrt(RefSmall<S> a) {
  return smallResult<S>(std::sqrt(hostSmall(a)));
}
// 1 / sqrt in f64, rounded once to S (as printed: IEEE f64 operations, so the GPU's result is
// this one too).
template <class S>
RefSmall<S> rsqrt(RefSmall<S> a) {
  const double r = 1.0 / std::sqrt(static_cast<double>(hostSmall(a)));
  return RefSmall<S>{smallFromF64Bits(smallFormat<S>(), std::bit_cast<uint64_t>(r))};
}
template <class S>
RefSmall<S> floor(RefSmall<S> a) {
  return smallResult<S>(std::floor(hostSmall(a)));
}
template <class S>
RefSmall<S> ceil(RefSmall<S> a) {
  return smallResult<S>(std::ceil(hostSmall(a)));
}
// fminf/fmaxf of the exact values: the other operand for a NaN (both: the canonical NaN), -0
// below +0.
template <class S>
RefSmall<S> smallMinMax(RefSmall<S> a, RefSmall<S> b, bool isMax) {
  constexpr SmallFormat f = smallFormat<S>();
  const bool na = smallNaN(f, a.b), nb = smallNaN(f, b.b);
  if (na && nb) return RefSmall<S>{f.nan};
  if (na) return b;
  if (nb) return a;
  const float x = hostSmall(a), y = hostSmall(b);
  if (x == y) return std::signbit(x) != isMax ? a : b;
  return (x < y) != isMax ? a : b;
}
template <class S>
RefSmall<S> min(RefSmall<S> a, RefSmall<S> b) {
  return smallMinMax(a, b, false);
}
template <class S>
RefSmall<S> max(RefSmall<S> a, RefSmall<S> b) {
  return smallMinMax(a, b, true);
}
template <class S>
bool operator<(RefSmall<S> a, RefSmall<S> b) {
  return hostSmall(a) < hostSmall(b);
}
template <class S>
bool operator>(RefSmall<S> a, RefSmall<S> b) {
  return hostSmall(a) > hostSmall(b);
}
template <class S>
bool operator<=(RefSmall<S> a, RefSmall<S> b) {
  return hostSmall(a) <= hostSmall(b);
}
template <class S>
bool operator>=(RefSmall<S> a, RefSmall<S> b) {
  return hostSmall(a) >= hostSmall(b);
}
template <class S>
bool operator==(RefSmall<S> a, RefSmall<S> b) {
  return hostSmall(a) == hostSmall(b);
}
template <class S>
bool operator!=(RefSmall<S> a, RefSmall<S> b) {
  return hostSmall(a) != hostSmall(b);
}

// The two interpretations' small float values and conversions: SmallWorld<uint32_t> (the
// reference) and SmallWorld<EWord32> (obsidian). Small<T> is a value of format T.
template <class W>
struct SmallWorld;
template <>
struct SmallWorld<uint32_t> {
  template <class T>
  using Small = RefSmall<T>;
  using FW = FloatWorld<uint32_t>;
  template <class T>
  static RefSmall<T> lit(uint32_t b) {
    return RefSmall<T>{b & 0xffffu};
  }
  template <class T>
  static RefSmall<T> fromBits(uint32_t w) {  // w's low 16 bits
    return RefSmall<T>{w & 0xffffu};
  }
  template <class T>
  static uint32_t bits(RefSmall<T> v) {
    return v.b;
  }
  static uint32_t f32Bits(RefF32 f) { return f.b; }  // (not counted as FloatWorld's bits are)
  template <class T>
  static RefF32 toF32(RefSmall<T> v) {
    return RefF32{smallToF32Bits(smallFormat<T>(), v.b)};
  }
  template <class T>
  static RefF64 toF64(RefSmall<T> v) {
    return FW::toF64(toF32(v));
  }
  template <class To>
  static RefSmall<To> fromF32(RefF32 f) {
    return RefSmall<To>{smallFromF32Bits(smallFormat<To>(), f.b)};
  }
  template <class To>
  static RefSmall<To> fromF64(RefF64 d) {
    return RefSmall<To>{smallFromF64Bits(smallFormat<To>(), d.b)};
  }
  template <class To, class From>
  static RefSmall<To> convert(RefSmall<From> v) {
    return fromF32<To>(toF32(v));
  }
  template <class To>
  static RefSmall<To> fromU32(uint32_t x) {
    return RefSmall<To>{smallRound(smallFormat<To>(), false, x, 0)};
  }
  template <class To>
  static RefSmall<To> fromI32(uint32_t x) {  // x's bits read as an i32
    const bool negative = (x >> 31) != 0;
    return RefSmall<To>{smallRound(smallFormat<To>(), negative, negative ? 0u - x : x, 0)};
  }
  template <class To>
  static RefSmall<To> fromU64(uint64_t x) {
    return RefSmall<To>{smallRound(smallFormat<To>(), false, x, 0)};
  }
  static RefF64 f64(uint32_t x) { return RefF64{std::bit_cast<uint64_t>(static_cast<double>(x))}; }
  template <class T>
  static uint32_t toU32(RefSmall<T> v) {
    return FW::toU32(toF32(v));
  }
  // Truncated and saturated to [-2^31, 2^31), a NaN to 0: the i32's bits.
  template <class T>
  static uint32_t toI32(RefSmall<T> v) {
    const float x = hostF(toF32(v));
    if (std::isnan(x)) return 0;
    if (x <= -2147483648.0f) return 0x80000000u;
    if (x >= 2147483648.0f) return 0x7fffffffu;
    return static_cast<uint32_t>(static_cast<int32_t>(x));
  }
  template <class T>
  static uint32_t toU8(RefSmall<T> v) {
    return toU32(v) & 0xffu;
  }
  template <class T>
  static T select(bool c, const T& a, const T& b) {
    return FW::select(c, a, b);
  }
};
template <>
struct SmallWorld<obsidian::EWord32> {
  template <class T>
  using Small = obsidian::Exp<T>;
  using W = obsidian::EWord32;
  template <class T>
  static obsidian::Exp<T> lit(uint32_t b) {
    return obsidian::Exp<T>(T::fromBits(static_cast<uint16_t>(b)));
  }
  template <class T>
  static obsidian::Exp<T> fromBits(const W& w) {
    return obsidian::fromBits32<T>(w);
  }
  template <class T>
  static W bits(const obsidian::Exp<T>& v) {
    return obsidian::bits32(v);
  }
  static W f32Bits(const obsidian::EFloat& f) { return obsidian::bitcast<uint32_t>(f); }
  template <class T>
  static obsidian::EFloat toF32(const obsidian::Exp<T>& v) {
    return obsidian::cast<float>(v);
  }
  template <class T>
  static obsidian::EDouble toF64(const obsidian::Exp<T>& v) {
    return obsidian::cast<double>(v);
  }
  template <class To>
  static obsidian::Exp<To> fromF32(const obsidian::EFloat& f) {
    return obsidian::cast<To>(f);
  }
  template <class To>
  static obsidian::Exp<To> fromF64(const obsidian::EDouble& d) {
    return obsidian::cast<To>(d);
  }
  template <class To, class From>
  static obsidian::Exp<To> convert(const obsidian::Exp<From>& v) {
    return obsidian::cast<To>(v);
  }
  template <class To>
  static obsidian::Exp<To> fromU32(const W& x) {
    return obsidian::cast<To>(x);
  }
  template <class To>
  static obsidian::Exp<To> fromI32(const W& x) {
    return obsidian::cast<To>(obsidian::cast<int32_t>(x));
  }
  template <class To>
  static obsidian::Exp<To> fromU64(const obsidian::EWord64& x) {
    return obsidian::cast<To>(x);
  }
  static obsidian::EDouble f64(const W& x) { return obsidian::cast<double>(x); }
  template <class T>
  static W toU32(const obsidian::Exp<T>& v) {
    return obsidian::cast<uint32_t>(v);
  }
  template <class T>
  static W toI32(const obsidian::Exp<T>& v) {
    return obsidian::cast<uint32_t>(obsidian::cast<int32_t>(v));
  }
  template <class T>
  static W toU8(const obsidian::Exp<T>& v) {
    return obsidian::cast<uint32_t>(obsidian::cast<uint8_t>(v));
  }
  template <class T>
  static T select(const obsidian::EBool& c, const T& a, const T& b) {
    return obsidian::ifThenElse(c, a, b);
  }
};

// The f32 that the steps read from word x where they want values about a small format's range:
// x's sign and mantissa, an exponent from -31 to 32 (x's bits 23 to 28).
template <class W>
typename FloatWorld<W>::F smallNear(const W& x) {
  return FloatWorld<W>::asF32((x & W(0x807fffffu)) |
                              ((W(96u) + ((x >> W(23u)) & W(63u))) << W(23u)));
}
// The exponent field of the 16-bit format S.
template <class S>
constexpr uint32_t smallExponentMask() {
  return std::is_same_v<S, obsidian::Half> ? 0x7c00u : 0x7f80u;
}
// The bits of S that a step reads from word x's high half: its exponent cleared where x & 8 (a
// subnormal or zero), then set where x & 4 (a NaN of x's payload, quiet or signalling, or an
// infinity), so that NaNs and subnormals are common.
template <class S, class W>
W smallPattern(const W& x) {
  constexpr uint32_t e = smallExponentMask<S>();
  return ((x >> W(16u)) & ~((x & W(8u)) * W(e / 8))) | ((x & W(4u)) * W(e / 4));
}
// The value of format S that a step reads from word x, by x & 3: 0 smallPattern(x) (any
// pattern, half of them NaNs and infinities); 1 smallNear(x) converted (rounding, overflow,
// underflow); 2 x's bits as an f32 converted (f32 NaNs, infinities and subnormals); 3 the u32
// x >> (x >> 27) converted (integers, rounded).
template <class S, class W>
typename SmallWorld<W>::template Small<S> smallIn(const W& x) {
  using SW = SmallWorld<W>;
  using FW = FloatWorld<W>;
  const W k = x & W(3u);
  return SW::select(k == W(0u), SW::template fromBits<S>(smallPattern<S>(x)),
                    SW::select(k == W(1u), SW::template fromF32<S>(smallNear(x)),
                               SW::select(k == W(2u), SW::template fromF32<S>(FW::asF32(x)),
                                          SW::template fromU32<S>(x >> (x >> W(27u))))));
}
// The other 16-bit format.
template <class S>
using OtherSmall =
    std::conditional_t<std::is_same_v<S, obsidian::Half>, obsidian::BFloat16, obsidian::Half>;
// A word whose value lies just above a tie of S's rounding (x's top bits as S's kept bits, then
// the half bit, zeros, and x's low byte, which an f32 drops): an f32 in between would round it
// to the tie, and then to even, where S rounds it up.
template <class S, class W>
W smallTie(const W& x) {
  constexpr uint32_t kept = std::is_same_v<S, obsidian::Half> ? 11 : 8;
  constexpr uint32_t between = ((1u << (32 - kept)) - 1) & ~0xffu;
  return ((x | W(0x80000000u)) & W(~between)) | W(1u << (31 - kept));
}
// The second parameter p's values: an f32 factor, an f64 scale, an f64 nudge.
inline uint32_t smallFactorBits(uint32_t p) {
  return std::bit_cast<uint32_t>(static_cast<float>(p % 1024u) / 64.0f);
}
inline uint64_t smallScaleBits(uint32_t p) { return uint64_t{1023u - 16u - p % 40u} << 52; }
inline uint64_t smallNudgeBits(uint32_t p) { return uint64_t{1023u - 20u - p % 40u} << 52; }
constexpr uint64_t kThreeBits = 0x4008000000000000ull;  // 3.0
// A SmallFloatMap step's function of word x over the value v = smallIn(x) of format S and the
// literal k of its bits c & 0xffff; p = c >> 16 is the second parameter. smallFloatText prints
// the same.
template <class S, class W>
W smallFloatOp(uint32_t which, uint32_t c, const W& x) {
  using SW = SmallWorld<W>;
  using FW = FloatWorld<W>;
  using V = typename SW::template Small<S>;
  using O = OtherSmall<S>;
  using E4 = obsidian::Fp8E4M3;
  using E5 = obsidian::Fp8E5M2;
  const V v = smallIn<S>(x);
  const V k = SW::template lit<S>(c);
  const uint32_t p = c >> 16;
  const auto bit = [&x](uint32_t m) { return (x & W(m)) == W(0u); };
  switch (which % kSmallFloatOps) {
    case 0: return SW::bits(SW::select(bit(0x100), v, k));  // moves and selects
    case 1: return SW::bits(SW::select(bit(0x100), (v + k) * v, v / k - v));
    case 2:  // min and max: NaN operands, and +0 against -0
      return SW::bits(SW::select(bit(0x100), SW::select(bit(0x200), min(v, k), max(k, v)),
                                 SW::select(bit(0x200), min(v, -v), max(v, -v))));
    case 3: {  // comparisons, as bits of a word
      const W one(1u), zero(0u);
      return (x << W(6u)) | SW::select(v < k, one, zero) | SW::select(v == v, W(2u), zero) |
             SW::select(v != k, W(4u), zero) | SW::select(v >= k, W(8u), zero) |
             SW::select(k > v, W(16u), zero) | SW::select(v <= v, W(32u), zero);
    }
    case 4:
      return SW::bits(SW::select(
          bit(0x100), SW::select(bit(0x200), sqrt(v), SW::select(bit(0x400), -v, rsqrt(v))),
          SW::select(bit(0x200), fabs(v), SW::select(bit(0x400), floor(v), ceil(v)))));
    case 5: {  // to f32 (its bits), f32 arithmetic, back
      const auto f = SW::toF32(v);
      return SW::f32Bits(f) ^
             (SW::bits(SW::template fromF32<S>(f * FW::lit(smallFactorBits(p)) + SW::toF32(k)))
              << W(16u));
    }
    case 6:  // to integers
      return SW::toU32(v) ^ (SW::toI32(v) * W(3u)) ^ (SW::toU8(v) << W(24u));
    case 7: {  // from integers (u32, i32, u64) and f64, each rounded once: values past an
               // f32's precision, just above ties (smallTie) or not
      const W t = SW::select(bit(0x400), smallTie<S>(x), x);
      const auto y = FW::wide(x) | (FW::wide(t) << typename FW::W64(32u));
      return SW::bits(SW::select(
          bit(0x100),
          SW::select(bit(0x200), SW::template fromU32<S>(t), SW::template fromI32<S>(x)),
          SW::select(bit(0x200), SW::template fromU64<S>(y >> FW::wide(x & W(63u))),
                     SW::template fromF64<S>(SW::f64(t) * FW::lit64(smallScaleBits(p))))));
    }
    case 8: {  // to fp8 and back
      const auto a = SW::template convert<E4>(v);
      const auto b = SW::template convert<E5>(v);
      return SW::bits(a) | (SW::bits(b) << W(8u)) |
             (SW::bits(
                  SW::select(bit(0x100), SW::template convert<S>(a), SW::template convert<S>(b)))
              << W(16u));
    }
    case 9: {  // fp8 of f32 values and of integers, and fp8 to f32
      const auto f = FW::select(bit(0x200), smallNear(x), FW::asF32(x));
      const auto a = SW::template fromF32<E4>(f);
      const auto b = SW::template fromF32<E5>(f);
      const auto n = SW::template fromU32<E5>(x >> (x >> W(27u)));
      return (SW::bits(a) | (SW::bits(b) << W(8u)) | (SW::bits(n) << W(16u))) ^
             SW::f32Bits(FW::select(bit(0x100), SW::toF32(a), SW::toF32(b)));
    }
    default: {  // the other format, and f64 arithmetic rounded once to S
      const auto o = SW::template convert<O>(v);
      const auto d = SW::toF64(v) * FW::lit64(kThreeBits) + FW::lit64(smallNudgeBits(p));
      return SW::bits(o) | (SW::bits(SW::select(bit(0x100), SW::template convert<S>(o),
                                                SW::template fromF64<S>(d)))
                            << W(16u));
    }
  }
}
template <class W>
W smallFloatMap(uint32_t which, uint32_t format, uint32_t c, const W& x) {
  return format == 0 ? smallFloatOp<obsidian::Half>(which, c, x)
                     : smallFloatOp<obsidian::BFloat16>(which, c, x);
}
// The word that a SmallFloatForce step of form `form` makes of word x, as the reference computes
// it: the bits of x's S value, of its e4m3 or e5m2, or the S value's bits plus x.
template <class S>
uint32_t smallForceWord(uint32_t form, uint32_t x) {
  using SW = SmallWorld<uint32_t>;
  const RefSmall<S> v = smallIn<S>(x);
  switch (form % kSmallFloatForces) {
    case 1: return SW::bits(SW::convert<obsidian::Fp8E4M3>(v));
    case 2: return SW::bits(SW::convert<obsidian::Fp8E5M2>(v));
    case 3: return SW::bits(v) + x;
    default: return SW::bits(v);
  }
}

// The same as C++ source.
inline const char* smallName(uint32_t format) { return format == 0 ? "Half" : "BFloat16"; }
constexpr const char* kSmallNearText =
    "bitcast<float>((x & 0x807fffffu) | ((96u + ((x >> 23u) & 63u)) << 23u))";
inline std::string smallPatternText(uint32_t format) {
  const uint32_t e =
      format == 0 ? smallExponentMask<obsidian::Half>() : smallExponentMask<obsidian::BFloat16>();
  return "((x >> 16u) & ~((x & 8u) * " + hex(e / 8, "u") + ")) | ((x & 4u) * " + hex(e / 4, "u") +
         ")";
}
inline std::string smallTieText(uint32_t format) {
  const uint32_t kept = format == 0 ? 11 : 8;
  const uint32_t between = ((1u << (32 - kept)) - 1) & ~0xffu;
  return "((x | 0x80000000u) & " + hex(~between, "u") + ") | " + hex(1u << (31 - kept), "u");
}
inline std::string smallInText(uint32_t format) {
  const std::string s = smallName(format);
  return "ifThenElse((x & 3u) == 0u, fromBits32<" + s + ">(" + smallPatternText(format) +
         "), ifThenElse((x & 3u) == 1u, cast<" + s + ">(" + kSmallNearText +
         "), ifThenElse((x & 3u) == 2u, cast<" + s + ">(bitcast<float>(x)), cast<" + s +
         ">(x >> (x >> 27u)))))";
}
// A SmallFloatMap step as a lambda over the word x.
inline std::string smallFloatText(uint32_t which, uint32_t format, uint32_t c) {
  const std::string s = smallName(format), e = "Exp<" + s + ">";
  const std::string other = format == 0 ? "BFloat16" : "Half";
  const uint32_t p = c >> 16;
  std::string t = "[](const EWord32& x) { const " + e + " v = " + smallInText(format) + "; const " +
                  e + " k(" + s + "::fromBits(" + hex(c & 0xffffu, "u") + ")); ";
  auto bit = [](uint32_t m) { return "(x & " + std::to_string(m) + "u) == 0u"; };
  switch (which % kSmallFloatOps) {
    case 0: t += "return bits32(ifThenElse(" + bit(0x100) + ", v, k));"; break;
    case 1: t += "return bits32(ifThenElse(" + bit(0x100) + ", (v + k) * v, v / k - v));"; break;
    case 2:
      t += "return bits32(ifThenElse(" + bit(0x100) + ", ifThenElse(" + bit(0x200) +
           ", min(v, k), max(k, v)), ifThenElse(" + bit(0x200) + ", min(v, -v), max(v, -v))));";
      break;
    case 3:
      t += "return (x << 6u) | ifThenElse(v < k, EWord32(1u), EWord32(0u)) | ifThenElse(v == v, "
           "EWord32(2u), EWord32(0u)) | ifThenElse(v != k, EWord32(4u), EWord32(0u)) | "
           "ifThenElse(v >= k, EWord32(8u), EWord32(0u)) | ifThenElse(k > v, EWord32(16u), "
           "EWord32(0u)) | ifThenElse(v <= v, EWord32(32u), EWord32(0u));";
      break;
    case 4:
      t += "return bits32(ifThenElse(" + bit(0x100) + ", ifThenElse(" + bit(0x200) +
           ", sqrt(v), ifThenElse(" + bit(0x400) + ", -v, rsqrt(v))), ifThenElse(" + bit(0x200) +
           ", fabs(v), ifThenElse(" + bit(0x400) + ", floor(v), ceil(v)))));";
      break;
    case 5:
      t += "const EFloat f = cast<float>(v); return bitcast<uint32_t>(f) ^ (bits32(cast<" + s +
           ">(f * EFloat(std::bit_cast<float>(" + hex(smallFactorBits(p), "u") +
           ")) + cast<float>(k))) << 16u);";
      break;
    case 6:
      t += "return cast<uint32_t>(v) ^ (cast<uint32_t>(cast<int32_t>(v)) * 3u) ^ "
           "(cast<uint32_t>(cast<uint8_t>(v)) << 24u);";
      break;
    case 7:
      t += "const EWord32 t = ifThenElse(" + bit(0x400) + ", " + smallTieText(format) +
           ", x); const EWord64 y = w32ToW64(x) | (w32ToW64(t) << EWord64(32u)); return "
           "bits32(ifThenElse(" +
           bit(0x100) + ", ifThenElse(" + bit(0x200) + ", cast<" + s + ">(t), cast<" + s +
           ">(cast<int32_t>(x))), ifThenElse(" + bit(0x200) + ", cast<" + s +
           ">(y >> w32ToW64(x & 63u)), cast<" + s +
           ">(cast<double>(t) * EDouble(std::bit_cast<double>(" + hex(smallScaleBits(p), "ull") +
           "))))));";
      break;
    case 8:
      t += "const Exp<Fp8E4M3> a = cast<Fp8E4M3>(v); const Exp<Fp8E5M2> b = cast<Fp8E5M2>(v); "
           "return bits32(a) | (bits32(b) << 8u) | (bits32(ifThenElse(" +
           bit(0x100) + ", cast<" + s + ">(a), cast<" + s + ">(b))) << 16u);";
      break;
    case 9:
      t += "const EFloat f = ifThenElse(" + bit(0x200) + ", " + kSmallNearText +
           ", bitcast<float>(x)); const Exp<Fp8E4M3> a = cast<Fp8E4M3>(f); const Exp<Fp8E5M2> b "
           "= cast<Fp8E5M2>(f); const Exp<Fp8E5M2> n = cast<Fp8E5M2>(x >> (x >> 27u)); return "
           "(bits32(a) | (bits32(b) << 8u) | (bits32(n) << 16u)) ^ bitcast<uint32_t>(ifThenElse(" +
           bit(0x100) + ", cast<float>(a), cast<float>(b)));";
      break;
    default:
      t += "const Exp<" + other + "> o = cast<" + other +
           ">(v); const EDouble d = cast<double>(v) * EDouble(std::bit_cast<double>(" +
           hex(kThreeBits, "ull") + ")) + EDouble(std::bit_cast<double>(" +
           hex(smallNudgeBits(p), "ull") + ")); return bits32(o) | (bits32(ifThenElse(" +
           bit(0x100) + ", cast<" + s + ">(o), cast<" + s + ">(d))) << 16u);";
      break;
  }
  return t + " }";
}

// ------------------------------------------------------------------ thread arrays
// ThreadItems (recipe.hpp): thread t's value is its items folded from the first (v = item 0,
// then v = threadItemsFold(v, item k) for k = 1 .. I - 1, where threadItemsFolds: the first item
// alone otherwise), and its result for item k reads that value of thread (t + offset) % T. W is
// uint32_t (the reference) or EWord32 (the builder); the text forms print the same expressions.
inline bool threadItemsFolds(uint32_t which) { return which % 4 != 2; }
template <class W>
W threadItemsFold(uint32_t which, const W& v, const W& item) {
  switch (which % 4) {
    case 0: return v ^ item;
    case 1: return v + item;
    default: return v * W(33u) + item;  // 3 (2 does not fold)
  }
}
inline std::string threadItemsFoldText(uint32_t which, const std::string& v,
                                       const std::string& item) {
  switch (which % 4) {
    case 0: return v + " ^ " + item;
    case 1: return v + " + " + item;
    default: return v + " * 33u + " + item;
  }
}
template <class W>
W threadItemsOut(uint32_t which, uint32_t k, const W& item, const W& neighbour) {
  switch (which % 4) {
    case 0: return item + neighbour;
    case 1: return item ^ neighbour;
    case 2: return item * W(3u) + neighbour;
    default: return (item ^ (neighbour >> W(3u))) + W(k);
  }
}
inline std::string threadItemsOutText(uint32_t which, const std::string& k, const std::string& item,
                                      const std::string& neighbour) {
  switch (which % 4) {
    case 0: return item + " + " + neighbour;
    case 1: return item + " ^ " + neighbour;
    case 2: return item + " * 3u + " + neighbour;
    default: return "(" + item + " ^ (" + neighbour + " >> 3u)) + " + k;
  }
}
// The neighbour whose value thread t reads: thread (t + offset) % T, offset in 1 .. T.
inline uint32_t threadItemsOffset(uint32_t constant, uint32_t threads) {
  return 1u + constant % threads;
}
// ThreadItems' scan form (Node::scan = 1 + which): blockScanItems' operators, each associative
// with the identity 0, so the threads past the loop's T, which keep zeros, change no prefix:
// 0 a + b, 1 max, 2 a ^ b, 3 the last value that is not a multiple of 4 (b unless b & 3 is 0),
// which is not commutative, so that a scan that reorders items or threads shows: the last
// non-zero value of the test's, keyed on the low bits so that random words (few of them zero)
// keep an earlier item in one case of four. itemsScanWord is the reference's, itemsScanOp the
// builder's, itemsScanText the printer's.
inline uint32_t itemsScanWord(uint32_t which, uint32_t a, uint32_t b) {
  switch (which % kItemsScanOps) {
    case 0: return a + b;
    case 1: return std::max(a, b);
    case 2: return a ^ b;
    default: return (b & 3u) != 0u ? b : a;
  }
}
inline obsidian::EWord32 itemsScanOp(uint32_t which, const obsidian::EWord32& a,
                                     const obsidian::EWord32& b) {
  switch (which % kItemsScanOps) {
    case 0: return a + b;
    case 1: return max(a, b);
    case 2: return a ^ b;
    default: return obsidian::ifThenElse((b & 3u) != 0u, b, a);
  }
}
inline std::string itemsScanText(uint32_t which, const std::string& a, const std::string& b) {
  switch (which % kItemsScanOps) {
    case 0: return a + " + " + b;
    case 1: return "max(" + a + ", " + b + ")";
    case 2: return a + " ^ " + b;
    default: return "ifThenElse((" + b + " & 3u) != 0u, " + b + ", " + a + ")";
  }
}

// ------------------------------------------------------------------ vector stores
// The values that unvectors<W> writes (Recipe::store), one per word x, of element type
// kStoreTypes[type]: u8 and u16 x's low bits; u32 x; f32 floatIn(kStoreSpecials, x) (NaN
// patterns, infinities and zeros among them); Half and BFloat16 smallIn(x) (NaN patterns,
// subnormals, computed conversions); e4m3 and e5m2 smallIn<Half>(x) converted. A value is
// stored as it is, so the output holds its bits: the reference's word is those bits.
constexpr uint32_t kStoreSpecials = 2;
inline const char* storeTypeName(uint32_t type) {
  static const char* const names[] = {"uint8_t", "uint16_t", "uint32_t", "float",
                                      "Half",    "BFloat16", "Fp8E4M3",  "Fp8E5M2"};
  static_assert(std::size(names) == kStoreTypes);
  return names[type % kStoreTypes];
}
inline uint32_t storeTypeBytes(uint32_t type) {
  static const uint32_t bytes[] = {1, 2, 4, 4, 2, 2, 1, 1};
  static_assert(std::size(bytes) == kStoreTypes);
  return bytes[type % kStoreTypes];
}
// Whether unvectors<W> of the type exists: W a power of two from 2, W * size at most 16 bytes.
inline bool storeWidthFits(uint32_t type, uint32_t width) {
  return width >= 2 && (width & (width - 1)) == 0 && width * storeTypeBytes(type) <= 16;
}
// Calls f(std::type_identity<S>{}) with the C++ type S of `type`.
template <class F>
auto withStoreType(uint32_t type, F f) {
  switch (type % kStoreTypes) {
    case 0: return f(std::type_identity<uint8_t>{});
    case 1: return f(std::type_identity<uint16_t>{});
    case 2: return f(std::type_identity<uint32_t>{});
    case 3: return f(std::type_identity<float>{});
    case 4: return f(std::type_identity<obsidian::Half>{});
    case 5: return f(std::type_identity<obsidian::BFloat16>{});
    case 6: return f(std::type_identity<obsidian::Fp8E4M3>{});
    default: return f(std::type_identity<obsidian::Fp8E5M2>{});
  }
}
// The value of type S for word x, in the kernel.
template <class S>
obsidian::Exp<S> storeValue(const obsidian::EWord32& x) {
  if constexpr (std::is_same_v<S, uint8_t> || std::is_same_v<S, uint16_t>) {
    return toNarrow<S>(x);
  } else if constexpr (std::is_same_v<S, uint32_t>) {
    return x;
  } else if constexpr (std::is_same_v<S, float>) {
    return floatIn(kStoreSpecials, x);
  } else if constexpr (std::is_same_v<S, obsidian::Half> || std::is_same_v<S, obsidian::BFloat16>) {
    return smallIn<S>(x);
  } else {
    static_assert(std::is_same_v<S, obsidian::Fp8E4M3> || std::is_same_v<S, obsidian::Fp8E5M2>);
    return obsidian::cast<S>(smallIn<obsidian::Half>(x));
  }
}
// The bits of the value of type `type` for word x, as the reference computes them (its own
// floatIn, smallIn and conversions: SmallWorld<uint32_t>).
inline uint32_t storeBits(uint32_t type, uint32_t x) {
  using SW = SmallWorld<uint32_t>;
  switch (type % kStoreTypes) {
    case 0: return x & 0xffu;
    case 1: return x & 0xffffu;
    case 2: return x;
    case 3: return floatIn(kStoreSpecials, x).b;  // (not counted as the float steps' NaNs)
    case 4: return SW::bits(smallIn<obsidian::Half>(x));
    case 5: return SW::bits(smallIn<obsidian::BFloat16>(x));
    case 6: return SW::bits(SW::convert<obsidian::Fp8E4M3>(smallIn<obsidian::Half>(x)));
    default: return SW::bits(SW::convert<obsidian::Fp8E5M2>(smallIn<obsidian::Half>(x)));
  }
}
// storeValue as C++ source: an expression over the word x.
inline std::string storeValueText(uint32_t type) {
  switch (type % kStoreTypes) {
    case 0: return "w32ToW8(x)";
    case 1: return "w32ToW16(x)";
    case 2: return "x";
    case 3: return floatInText(kStoreSpecials);
    case 4: return smallInText(0);
    case 5: return smallInText(1);
    default: return std::string("cast<") + storeTypeName(type) + ">(" + smallInText(0) + ")";
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

// ------------------------------------------------------------------ packed pairs
// Half2 and BFloat162 (PairMap): the word x read as a pair v (lo in its low 16 bits; where
// x & 0x18 is 0x18, its lanes' signs alone: +-0), with the literal pair k (the step's constant)
// and u (x * 0x9e3779b1: other lanes, NaNs and infinities among them), selected by x's bits 0
// and 1, computed with the packed operations and back to a word bit for bit.
// The reference computes each lane with its own code, not half.hpp's nor scalar_ops.cpp's:
// exact sums and products of integer significands (a far smaller operand kept as a sticky bit),
// rounded once by smallRound. It follows the semantics of src/ir/scalar_ops.cpp's pairs (the
// PTX of the prelude: add.rn, sub.rn, mul.rn, fma.rn, min, max .f16x2 / .bf16x2):
// - + - * and fma: each lane the exact result rounded once to nearest even; any NaN result
//   (a NaN operand, inf - inf, 0 * inf) the canonical 0x7fff; an exact zero sum +0 unless both
//   addends are -0.
// - Unary minus and abs: the sign bit flipped or cleared (NaNs keep their payload).
// - min and max: a NaN lane gives the other operand's lane, two NaNs the canonical NaN, -0 is
//   below +0.
// - pack2, lowLane, highLane: the lanes' bits moved.

// (-1)^negative * sig * 2^exp, exactly.
struct PairTerm {
  bool negative;
  uint64_t sig;
  int exp;
};
inline PairTerm pairTerm(const SmallFormat& f, uint32_t b) {
  const uint32_t e = (b >> f.mantissaBits) & f.top(), m = b & f.mantissaMask();
  const bool negative = (b & f.sign()) != 0;
  if (e == 0) return {negative, m, 1 - f.bias() - f.mantissaBits};
  return {negative, m | (1u << f.mantissaBits), static_cast<int>(e) - f.bias() - f.mantissaBits};
}
inline PairTerm pairProduct(const PairTerm& a, const PairTerm& b) {
  return {a.negative != b.negative, a.sig * b.sig, a.exp + b.exp};  // at most 22 bits
}
// a + b, exact but for a b below 2^-30 of a, which becomes a sticky bit of its sign: it cannot
// reach a rounding boundary of the result (rounded to at most 11 bits) that b would not.
inline PairTerm pairSum(PairTerm a, PairTerm b) {
  if (a.sig == 0 && b.sig == 0) return {a.negative && b.negative, 0, 0};
  if (b.sig == 0) return a;
  if (a.sig == 0) return b;
  const auto top = [](const PairTerm& t) {
    return static_cast<int>(std::bit_width(t.sig)) + t.exp;
  };
  if (top(a) < top(b)) std::swap(a, b);
  if (top(a) - top(b) > 30) b = {b.negative, 1, top(a) - 31};
  const int e = std::min(a.exp, b.exp);  // both aligned within 52 bits
  const uint64_t x = a.sig << (a.exp - e), y = b.sig << (b.exp - e);
  if (a.negative == b.negative) return {a.negative, x + y, e};
  if (x == y) return {false, 0, 0};  // exact cancellation: +0 to nearest
  return x > y ? PairTerm{a.negative, x - y, e} : PairTerm{b.negative, y - x, e};
}
inline bool pairInf(const SmallFormat& f, uint32_t b) {
  return ((b >> f.mantissaBits) & f.top()) == f.top() && (b & f.mantissaMask()) == 0;
}
inline uint32_t pairInfinity(const SmallFormat& f, bool negative) {
  return (negative ? f.sign() : 0u) | f.top() << static_cast<uint32_t>(f.mantissaBits);
}
// One lane of fma(a, b, c) (mul: c absent; add: b absent, a * 1).
enum class PairLaneOp { Add, Sub, Mul, Fma };
inline uint32_t pairLane(const SmallFormat& f, PairLaneOp op, uint32_t a, uint32_t b, uint32_t c) {
  const bool negative = (a & f.sign()) != 0;
  if (op == PairLaneOp::Add || op == PairLaneOp::Sub) {  // a + b as fma(a, 1, b)
    c = op == PairLaneOp::Sub ? b ^ f.sign() : b;
    b = static_cast<uint32_t>(f.bias()) << static_cast<uint32_t>(f.mantissaBits);  // 1.0
  }
  const bool addend = op != PairLaneOp::Mul;
  if (smallNaN(f, a) || smallNaN(f, b) || (addend && smallNaN(f, c))) return f.nan;
  const bool pNeg = negative != ((b & f.sign()) != 0);
  const PairTerm ta = pairTerm(f, a), tb = pairTerm(f, b);
  const bool aInf = pairInf(f, a), bInf = pairInf(f, b);
  if ((aInf && !bInf && tb.sig == 0) || (bInf && !aInf && ta.sig == 0)) return f.nan;  // 0 * inf
  const bool pInf = aInf || bInf;
  if (addend && pairInf(f, c)) {
    const bool cNeg = (c & f.sign()) != 0;
    if (pInf && pNeg != cNeg) return f.nan;  // inf - inf
    return pairInfinity(f, cNeg);
  }
  if (pInf) return pairInfinity(f, pNeg);
  PairTerm t = pairProduct(ta, tb);
  if (addend) t = pairSum(t, pairTerm(f, c));
  return smallRound(f, t.negative, t.sig, t.exp);
}
inline uint32_t pairMinMax(const SmallFormat& f, bool isMin, uint32_t a, uint32_t b) {
  const bool na = smallNaN(f, a), nb = smallNaN(f, b);
  if (na && nb) return f.nan;
  if (na) return b;
  if (nb) return a;
  const float x = smallValue(f, a), y = smallValue(f, b);
  if (x == y) return ((a & f.sign()) != 0) == isMin ? a : b;
  return (x < y) == isMin ? a : b;
}
template <class F>
uint32_t pairLanes(F f) {
  return f(0) | (f(16) << 16);
}
// A PairMap step's function of word x (format 0 Half2, 1 BFloat162; c: the literal pair k's
// bits), as the reference computes it. pairMapExp builds the same, pairText prints it.
inline uint32_t pairMapRef(uint32_t which, uint32_t format, uint32_t c, uint32_t x) {
  const SmallFormat f =
      format == 0 ? smallFormat<obsidian::Half>() : smallFormat<obsidian::BFloat16>();
  const uint32_t v = (x & 0x18u) == 0x18u ? x & 0x80008000u : x, k = c, u = x * 0x9e3779b1u;
  const auto lane = [](uint32_t w, int at) { return (w >> at) & 0xffffu; };
  const auto op2 = [&](PairLaneOp op, uint32_t a, uint32_t b) {
    return pairLanes([&](int at) { return pairLane(f, op, lane(a, at), lane(b, at), 0); });
  };
  const auto fma = [&](uint32_t a, uint32_t b, uint32_t d) {
    return pairLanes([&](int at) {
      return pairLane(f, PairLaneOp::Fma, lane(a, at), lane(b, at), lane(d, at));
    });
  };
  const auto mm = [&](bool isMin, uint32_t a, uint32_t b) {
    return pairLanes([&](int at) { return pairMinMax(f, isMin, lane(a, at), lane(b, at)); });
  };
  const bool b1 = (x & 1u) == 0, b2 = (x & 2u) == 0;
  switch (which % kPairOps) {
    case 0: return b1 ? op2(PairLaneOp::Add, v, k) : op2(PairLaneOp::Sub, v, u);
    case 1: return b1 ? op2(PairLaneOp::Mul, v, k) : op2(PairLaneOp::Mul, u, v);
    case 2: return b1 ? fma(v, k, u) : fma(u, v, k);
    case 3:
      return b1 ? (b2 ? mm(true, v, k) : mm(false, k, u))
                : (b2 ? mm(true, v, v ^ 0x80008000u) : mm(false, v, v ^ 0x80008000u));
    case 4: return b1 ? v ^ 0x80008000u : u & 0x7fff7fffu;
    default: return op2(PairLaneOp::Add, (v >> 16) | (k << 16), u);
  }
}
template <class P>
obsidian::EWord32 pairOpExp(uint32_t which, uint32_t c, const obsidian::EWord32& x) {
  using namespace obsidian;
  const Exp<P> v = bitcast<P>(ifThenElse((x & 0x18u) == 0x18u, x & 0x80008000u, x)),
               k(P::fromBits(c)), u = bitcast<P>(x * 0x9e3779b1u);
  const EBool b1 = (x & 1u) == 0u, b2 = (x & 2u) == 0u;
  switch (which % kPairOps) {
    case 0: return bitcast<uint32_t>(ifThenElse(b1, v + k, v - u));
    case 1: return bitcast<uint32_t>(ifThenElse(b1, v * k, u * v));
    case 2: return bitcast<uint32_t>(ifThenElse(b1, fma(v, k, u), fma(u, v, k)));
    case 3:
      return bitcast<uint32_t>(ifThenElse(b1, ifThenElse(b2, min(v, k), max(k, u)),
                                          ifThenElse(b2, min(v, -v), max(v, -v))));
    case 4: return bitcast<uint32_t>(ifThenElse(b1, -v, abs(u)));
    default: return bitcast<uint32_t>(pack2(highLane(v), lowLane(k)) + u);
  }
}
inline obsidian::EWord32 pairMapExp(uint32_t which, uint32_t format, uint32_t c,
                                    const obsidian::EWord32& x) {
  return format == 0 ? pairOpExp<obsidian::Half2>(which, c, x)
                     : pairOpExp<obsidian::BFloat162>(which, c, x);
}
inline std::string pairText(uint32_t which, uint32_t format, uint32_t c) {
  const std::string p = format == 0 ? "Half2" : "BFloat162", e = "Exp<" + p + ">";
  std::string t = "[](const EWord32& x) { const " + e + " v = bitcast<" + p +
                  ">(ifThenElse((x & 0x18u) == 0x18u, x & 0x80008000u, x)), k(" + p +
                  "::fromBits(" + hex(c, "u") + ")), u = bitcast<" + p +
                  ">(x * 0x9e3779b1u); const EBool b1 = (x & 1u) == 0u, b2 = (x & 2u) == 0u; "
                  "return bitcast<uint32_t>(";
  switch (which % kPairOps) {
    case 0: t += "ifThenElse(b1, v + k, v - u)"; break;
    case 1: t += "ifThenElse(b1, v * k, u * v)"; break;
    case 2: t += "ifThenElse(b1, fma(v, k, u), fma(u, v, k))"; break;
    case 3:
      t += "ifThenElse(b1, ifThenElse(b2, min(v, k), max(k, u)), ifThenElse(b2, min(v, -v), "
           "max(v, -v)))";
      break;
    case 4: t += "ifThenElse(b1, -v, abs(u))"; break;
    default: t += "pack2(highLane(v), lowLane(k)) + u"; break;
  }
  return t + "); }";
}

// ------------------------------------------------------------------ radix sorts
// BlockRadixSort (recipe.hpp): its key type K (Node::format), as the printer names it and as
// the builder calls f(std::type_identity<K>{}).
inline const char* sortKeyName(uint32_t format) {
  static const char* const names[] = {"uint32_t", "int32_t", "float"};
  static_assert(std::size(names) == kSortKeyTypes);
  return names[format % kSortKeyTypes];
}
template <class F>
auto withSortKey(uint32_t format, F f) {
  switch (format % kSortKeyTypes) {
    case 0: return f(std::type_identity<uint32_t>{});
    case 1: return f(std::type_identity<int32_t>{});
    default: return f(std::type_identity<float>{});
  }
}
// The reference's RadixKey<K>::toBits of the word x's bits read as a K: i32 its sign bit
// flipped (negatives first), f32 every bit of a negative value (larger magnitudes first) and
// the sign bit of the others (NaNs by their sign, past the infinities); descending every bit
// flipped after that.
inline uint32_t sortOrderBits(uint32_t format, bool descending, uint32_t x) {
  constexpr uint32_t sign = 0x80000000u;
  uint32_t b = x;
  switch (format % kSortKeyTypes) {
    case 0: break;
    case 1: b = x ^ sign; break;
    default: b = x ^ ((x & sign) != 0 ? 0xffffffffu : sign); break;
  }
  return descending ? ~b : b;
}
// What BlockRadixSort orders by: bits [begin, end) of the order bits b (0 for an empty range).
inline uint32_t sortDigits(uint32_t begin, uint32_t end, uint32_t b) {
  if (begin >= end) return 0;
  const uint32_t span = end - begin;
  return (b >> begin) & (span == 32 ? 0xffffffffu : (1u << span) - 1u);
}
// The second value array's word for the word x (the first: x's place in its chunk), and the
// factor of the places in the result (2 * constant + 1: odd, so no two places agree).
constexpr uint32_t kSortValueFactor = 0x9e3779b1u;
inline uint32_t sortPlaceFactor(uint32_t constant) { return 2u * constant + 1u; }

// ------------------------------------------------------------------ discontinuities
// BlockDiscontinuity (recipe.hpp): its collective (Node::adjacent) as the printer calls it.
inline const char* adjacentName(uint32_t kind) {
  static const char* const names[] = {"blockFlagHeads", "blockFlagTails",
                                      "blockAdjacentDifference"};
  static_assert(std::size(names) == kAdjacentKinds);
  return names[kind % kAdjacentKinds];
}
// A flag's factor in the result (x ^ flag * factor): a flag that is wrong, or not 0 or 1,
// changes many bits of the word, which later steps are unlikely to hide.
constexpr uint32_t kAdjacentFlagFactor = 0x9e3779b1u;

// ------------------------------------------------------------------ merge sorts
// BlockMergeSort (recipe.hpp): its comparator (Node::order, mask Node::constant) on words, for
// the reference; the kernel passes Ascending{}, Descending{} or mergeMaskedText's lambda.
inline bool mergeLess(uint32_t order, uint32_t mask, uint32_t a, uint32_t b) {
  switch (order % kMergeOrders) {
    case 0: return a < b;
    case 1: return b < a;
    case 2: return (a & mask) < (b & mask);
    default: return (b & mask) < (a & mask);
  }
}
// The comparator as the printer writes it (build.hpp's withMergeOrder passes the same).
inline std::string mergeOrderText(uint32_t order, uint32_t mask) {
  const std::string m = hex(mask, "u");
  switch (order % kMergeOrders) {
    case 0: return "Ascending{}";
    case 1: return "Descending{}";
    case 2:
      return "[](const EWord32& a, const EWord32& b) { return (a & " + m + ") < (b & " + m + "); }";
    default:
      return "[](const EWord32& a, const EWord32& b) { return (b & " + m + ") < (a & " + m + "); }";
  }
}
// The key of the tile's padding (elements from the chunk's size on): with every element valid
// (Node::valid 0) the greatest by the order, which sorts after the chunk (ties too: the padding
// comes last in the tile, and the sort is stable); with a valid count the least, which a sort
// that took the padding in would move in front.
inline uint32_t mergePadKey(uint32_t order, uint32_t valid) {
  const bool ascending = order % 2 == 0;  // orders 0 and 2
  return (valid == 0) == ascending ? 0xffffffffu : 0u;
}
// The value array's factor in the result (key ^ place * factor): odd, so no two places agree.
constexpr uint32_t kMergeValueFactor = 0x9e3779b1u;

}  // namespace fuzz
