// Scalar operation semantics (see scalar_ops.hpp).
#include "ir/scalar_ops.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>

namespace obsidian::ir {

uint64_t typeMask(ScalarType t) {
  const uint32_t w = bitWidth(t);
  return w >= 64 ? ~uint64_t{0} : ((uint64_t{1} << w) - 1);
}

int64_t signedOf(ScalarType t, uint64_t bits) {
  // Sign-extend from the type's width (two's complement); a 64-bit pattern converts as is.
  const uint32_t w = bitWidth(t);
  if (!isSignedInteger(t) || w >= 64) return static_cast<int64_t>(bits);
  const uint64_t sign = uint64_t{1} << (w - 1);
  const uint64_t v = bits & typeMask(t);
  return static_cast<int64_t>((v ^ sign) - sign);
}

namespace {
// The integer type t's range as doubles: [lo, top) with both ends powers of two (exact).
void rangeOf(ScalarType t, double& lo, double& top) {
  const int w = static_cast<int>(bitWidth(t));
  lo = isSignedInteger(t) ? -std::ldexp(1.0, w - 1) : 0.0;
  top = std::ldexp(1.0, isSignedInteger(t) ? w - 1 : w);
}
uint64_t bitsOf(ScalarType t, double integral) {
  const uint64_t b = isSignedInteger(t) ? static_cast<uint64_t>(static_cast<int64_t>(integral))
                                        : static_cast<uint64_t>(integral);
  return b & typeMask(t);
}
}  // namespace

std::optional<uint64_t> integerBits(ScalarType t, double v) {
  double lo = 0, top = 0;
  rangeOf(t, lo, top);
  if (!(v >= lo && v < top) || v != std::trunc(v)) return std::nullopt;
  return bitsOf(t, v);
}

double roundTo(ScalarType t, double v) {
  if (const detail::SmallFloatFormat* f = scalarInfo(t).small) {
    return detail::smallFloatValue(*f, detail::smallFloatBits(*f, v));  // a NaN keeps its bits
  }
  if (t != ScalarType::F32) return v;
  return detail::widenF32(detail::narrowF32(v));  // a NaN keeps its bits (types.hpp)
}

double smallFloatOf(ScalarType t, double v) {
  const detail::SmallFloatFormat& f = *scalarInfo(t).small;
  return detail::smallFloatValue(f, detail::smallFloatRound(f, v));
}

namespace {

// NaN results as the GPU gives them (measured on the H100 and H200, sm_90; the simulator's
// tests pin each case): every f32 operation whose result is NaN gives the canonical
// 0x7fffffff, whatever its operands' bits (negation and fabsf included: they compile to an
// FADD); an f64 operation gives its NaN operand with the quiet bit set (sign and payload kept,
// even by negation and fabs), or 0xfff8000000000000 when no operand is a NaN (inf - inf). Of two
// NaN operands the GPU returns either, as the operand order ptxas chose decides (fuzz/RESULTS.md,
// finding 6); here the first, always.
constexpr uint64_t kCanonicalF32Bits = 0x7fffffffu;
constexpr uint64_t kDefaultF64NaN = 0xfff8000000000000ull;
constexpr uint64_t kF64QuietBit = uint64_t{1} << 51;

double quietF64(double x) {
  return std::bit_cast<double>(std::bit_cast<uint64_t>(x) | kF64QuietBit);
}

// r, the result of an operation of type t on x and y (y = x for a unary one), with its NaN
// made as the GPU makes it.
double floatResult(ScalarType t, double r, double x, double y) {
  // A small float's operation is printed as f32 arithmetic on its operands converted to f32,
  // rounded back once: r (exact, or rounded to double) rounded to f32 is the GPU's f32 result
  // (double rounding is innocuous for + - * / sqrt at 53 >= 2 * 24 + 2 bits), and any NaN
  // becomes the format's canonical NaN.
  if (isSmallFloat(t)) return smallFloatOf(t, std::isnan(r) ? r : roundTo(ScalarType::F32, r));
  if (!std::isnan(r)) return roundTo(t, r);
  if (t == ScalarType::F32)
    return detail::widenF32(std::bit_cast<float>(uint32_t{kCanonicalF32Bits}));
  if (std::isnan(x)) return quietF64(x);
  if (std::isnan(y)) return quietF64(y);
  return std::bit_cast<double>(kDefaultF64NaN);
}

// fminf/fmaxf and fmin/fmax as the GPU computes them: a NaN operand gives the other one, and
// -0 is below +0 (both NaN: a NaN, which floatResult makes the GPU's).
double minOf(double x, double y) {
  if (std::isnan(x)) return y;
  if (std::isnan(y)) return x;
  if (x == y) return std::signbit(x) ? x : y;
  return x < y ? x : y;
}
double maxOf(double x, double y) {
  if (std::isnan(x)) return y;
  if (std::isnan(y)) return x;
  if (x == y) return std::signbit(x) ? y : x;
  return x > y ? x : y;
}

// ---- packed pairs (F16x2, BF16x2): a value is its 32-bit word, each 16-bit lane computed as
// CUDA's packed instructions compute it (add.rn, sub.rn, mul.rn, fma.rn .f16x2/.bf16x2, min,
// max); the printer's prelude prints exactly these instructions (print_exp.cpp).

// Lane `lane` (0: the low 16 bits) of pair word w, and the word with that lane set to b.
uint32_t laneBits(uint64_t w, int lane) {
  return static_cast<uint32_t>(w >> (16 * lane)) & 0xffffu;
}

// x rounded once to the lane format of pair t (to nearest even; a NaN to the canonical NaN, as
// the packed instructions give).
uint32_t laneRound(ScalarType t, double x) {
  return detail::smallFloatRound(*scalarInfo(laneOf(t)).small, x);
}
double laneValue(ScalarType t, uint32_t bits) {
  return detail::smallFloatValue(*scalarInfo(laneOf(t)).small, bits);
}

// f applied to each lane of the words: f(laneA, laneB) -> the lane's result bits.
template <class F>
Value perLane(uint64_t a, uint64_t b, F f) {
  uint64_t r = 0;
  for (int lane = 0; lane < 2; ++lane) {
    r |= uint64_t{f(laneBits(a, lane), laneBits(b, lane))} << (16 * lane);
  }
  return intValue(r);
}

// x + y exactly rounded to a lane format: halves and bfloat16s sum exactly in a double, or
// (bf16 operands far apart) are rounded to double first, which is innocuous at 53 >= 2 * 8 + 2
// bits (double rounding of + - * is correct when the wide format has 2p + 2 bits).
Value pairBinary(BinOp op, ScalarType t, Value a, Value b) {
  const uint32_t nan = scalarInfo(laneOf(t)).small->canonicalNaN;
  return perLane(a.u, b.u, [&](uint32_t xb, uint32_t yb) -> uint32_t {
    const double x = laneValue(t, xb), y = laneValue(t, yb);
    switch (op) {
      case BinOp::Add: return laneRound(t, x + y);
      case BinOp::Sub: return laneRound(t, x - y);
      case BinOp::Mul: return laneRound(t, x * y);  // exact in double (at most 22 bits)
      case BinOp::Min:
      case BinOp::Max: {
        // min.f16x2 / max.f16x2 (and bf16x2): a NaN lane gives the other operand's lane (its
        // bits), two NaNs the canonical NaN, -0 below +0 (CUDA's __hmin2 / __hmax2).
        if (std::isnan(x) && std::isnan(y)) return nan;
        if (std::isnan(x)) return yb;
        if (std::isnan(y)) return xb;
        if (x == y) return (std::signbit(x) == (op == BinOp::Min)) ? xb : yb;
        return ((x < y) == (op == BinOp::Min)) ? xb : yb;
      }
      default: OBSIDIAN_ASSERT(false, std::string("no pair ") + binOpName(op)); return 0;
    }
  });
}

template <class T>
bool compare(BinOp op, T x, T y) {
  switch (op) {
    case BinOp::Eq: return x == y;
    case BinOp::Ne: return x != y;
    case BinOp::Lt: return x < y;
    case BinOp::Le: return x <= y;
    case BinOp::Gt: return x > y;
    case BinOp::Ge: return x >= y;
    default: return false;
  }
}
}  // namespace

Value evalBinary(BinOp op, ScalarType t, Value a, Value b) {
  if (isPair(t)) return pairBinary(op, t, a, b);
  if (isComparison(op)) {
    bool r;
    if (isFloat(t)) {
      r = compare(op, a.f, b.f);
    } else if (isSigned(t)) {
      r = compare(op, signedOf(t, a.u), signedOf(t, b.u));
    } else {
      r = compare(op, a.u, b.u);
    }
    return intValue(r ? 1 : 0);
  }
  if (isFloat(t)) {
    double r = 0;
    switch (op) {
      case BinOp::Add: r = a.f + b.f; break;
      case BinOp::Sub: r = a.f - b.f; break;
      case BinOp::Mul: r = a.f * b.f; break;
      case BinOp::Div: r = a.f / b.f; break;
      case BinOp::Min: r = minOf(a.f, b.f); break;
      case BinOp::Max: r = maxOf(a.f, b.f); break;
      case BinOp::Pow:
        // A small float's pow is computed in f64 and rounded once (as printed).
        if (isSmallFloat(t)) return realValue(smallFloatOf(t, std::pow(a.f, b.f)));
        r = t == ScalarType::F32
                ? static_cast<double>(std::pow(static_cast<float>(a.f), static_cast<float>(b.f)))
                : std::pow(a.f, b.f);
        break;
      default: OBSIDIAN_ASSERT(false, std::string("no float ") + binOpName(op));
    }
    return realValue(floatResult(t, r, a.f, b.f));
  }
  const uint64_t x = a.u, y = b.u;
  const bool sgn = isSigned(t);
  uint64_t r = 0;
  switch (op) {
    case BinOp::Add: r = x + y; break;
    case BinOp::Sub: r = x - y; break;
    case BinOp::Mul: r = x * y; break;
    case BinOp::Div:
    case BinOp::Mod: {
      if ((y & typeMask(t)) == 0) throw Error(std::string("integer ") + binOpName(op) + " by zero");
      if (sgn) {
        const int64_t sx = signedOf(t, x), sy = signedOf(t, y);
        if (sx == std::numeric_limits<int32_t>::min() && sy == -1) {
          r = op == BinOp::Div ? x : 0;  // what the GPU's instruction sequence gives
        } else {
          r = static_cast<uint64_t>(op == BinOp::Div ? sx / sy : sx % sy);
        }
      } else {
        r = op == BinOp::Div ? x / y : x % y;
      }
      break;
    }
    case BinOp::BitAnd: r = x & y; break;
    case BinOp::BitOr: r = x | y; break;
    case BinOp::BitXor: r = x ^ y; break;
    // Shift amounts at or above the width are undefined in CUDA C++; PTX clamps them.
    case BinOp::Shl: r = y >= bitWidth(t) ? 0 : x << y; break;
    case BinOp::Shr:
      if (sgn) {
        r = static_cast<uint64_t>(signedOf(t, x) >> std::min<uint64_t>(y, bitWidth(t) - 1));
      } else {
        r = y >= bitWidth(t) ? 0 : x >> y;
      }
      break;
    case BinOp::And: r = (x && y) ? 1 : 0; break;
    case BinOp::Or: r = (x || y) ? 1 : 0; break;
    case BinOp::Min: r = sgn ? (signedOf(t, x) < signedOf(t, y) ? x : y) : std::min(x, y); break;
    case BinOp::Max: r = sgn ? (signedOf(t, x) > signedOf(t, y) ? x : y) : std::max(x, y); break;
    default: OBSIDIAN_ASSERT(false, std::string("no integer ") + binOpName(op));
  }
  return intValue(r & typeMask(t));
}

Value evalUnary(UnOp op, ScalarType t, Value a) {
  if (isPair(t)) {
    // __hneg2 and __habs2 flip or clear the sign bits (printed so: xor / and of the word),
    // which keeps a NaN a NaN with its payload.
    OBSIDIAN_ASSERT(op == UnOp::Neg || op == UnOp::Fabs, "pairs have - and abs");
    return intValue(op == UnOp::Neg ? (a.u ^ 0x80008000u) : (a.u & 0x7fff7fffu));
  }
  switch (op) {
    case UnOp::Not: return intValue(a.u ? 0 : 1);
    case UnOp::BitNot: return intValue(~a.u & typeMask(t));
    case UnOp::Neg:
      if (isFloat(t)) return realValue(floatResult(t, -a.f, a.f, a.f));
      return intValue((uint64_t{0} - a.u) & typeMask(t));
    case UnOp::Abs: {
      const int64_t v = signedOf(t, a.u);
      return intValue(static_cast<uint64_t>(v < 0 ? -v : v) & typeMask(t));
    }
    OBSIDIAN_BIT_UNOPS: {
      // Unsigned words of 32 or 64 bits, as CUDA's __popc, __clz, __ffs, __brev (and ll).
      const uint32_t w = bitWidth(t);
      const uint64_t x = a.u & typeMask(t);
      if (op == UnOp::Popc) return intValue(static_cast<uint64_t>(std::popcount(x)));
      if (op == UnOp::Clz) return intValue(static_cast<uint64_t>(std::countl_zero(x)) - (64 - w));
      if (op == UnOp::Ffs) {
        return intValue(x == 0 ? 0 : static_cast<uint64_t>(std::countr_zero(x)) + 1);
      }
      uint64_t r = 0;  // Brev
      for (uint32_t b = 0; b < w; ++b) r |= ((x >> b) & 1u) << (w - 1 - b);
      return intValue(r);
    }
    OBSIDIAN_FLOAT_MATH_UNOPS:
      break;
  }
  const bool single = t == ScalarType::F32;
  const float x32 = static_cast<float>(a.f);
  if (isSmallFloat(t) && op != UnOp::Sqrt && op != UnOp::Fabs && op != UnOp::Floor &&
      op != UnOp::Ceil) {
    // Computed in f64 and rounded once (as printed): the f64 result is within an ulp of the
    // exact one, far finer than the format's, so this is the correctly rounded result.
    double r = 0;
    switch (op) {
      case UnOp::Rsqrt: r = 1.0 / std::sqrt(a.f); break;
      case UnOp::Exp: r = std::exp(a.f); break;
      case UnOp::Exp2: r = std::exp2(a.f); break;
      case UnOp::Log: r = std::log(a.f); break;
      case UnOp::Log2: r = std::log2(a.f); break;
      case UnOp::Sin: r = std::sin(a.f); break;
      case UnOp::Cos: r = std::cos(a.f); break;
      case UnOp::Tan: r = std::tan(a.f); break;
      default: OBSIDIAN_ASSERT(false, std::string("small float ") + unOpName(op));
    }
    return realValue(smallFloatOf(t, r));
  }
  double r = 0;
  switch (op) {
    case UnOp::Sqrt: r = single ? std::sqrt(x32) : std::sqrt(a.f); break;
    case UnOp::Rsqrt: r = single ? 1.0f / std::sqrt(x32) : 1.0 / std::sqrt(a.f); break;
    case UnOp::Exp: r = single ? std::exp(x32) : std::exp(a.f); break;
    case UnOp::Exp2: r = single ? std::exp2(x32) : std::exp2(a.f); break;
    case UnOp::Log: r = single ? std::log(x32) : std::log(a.f); break;
    case UnOp::Log2: r = single ? std::log2(x32) : std::log2(a.f); break;
    case UnOp::Sin: r = single ? std::sin(x32) : std::sin(a.f); break;
    case UnOp::Cos: r = single ? std::cos(x32) : std::cos(a.f); break;
    case UnOp::Tan: r = single ? std::tan(x32) : std::tan(a.f); break;
    case UnOp::Fabs: r = std::fabs(a.f); break;
    case UnOp::Floor: r = std::floor(a.f); break;
    case UnOp::Ceil: r = std::ceil(a.f); break;
    case UnOp::Not:
    case UnOp::BitNot:
    case UnOp::Neg:
    case UnOp::Abs:
    OBSIDIAN_BIT_UNOPS:
      OBSIDIAN_ASSERT(false, std::string("unary ") + unOpName(op) + " returned above");
  }
  return realValue(floatResult(t, r, a.f, a.f));
}

Value evalFma(ScalarType t, Value a, Value b, Value c) {
  OBSIDIAN_ASSERT(isPair(t), "fma of pairs");
  uint64_t r = 0;
  for (int lane = 0; lane < 2; ++lane) {
    const double x = laneValue(t, laneBits(a.u, lane)), y = laneValue(t, laneBits(b.u, lane));
    const double z = laneValue(t, laneBits(c.u, lane));
    const double p = x * y;  // exact: at most 2 * 11 significant bits, in f16's or bf16's range
    double s = p + z;
    if (std::isfinite(s)) {
      // TwoSum: s + e is p + z exactly. Where e != 0, s is replaced by its neighbour toward e
      // when s is even (s rounded to odd): a 53-bit value rounded to odd rounds once more to
      // the lane's 11 (or 8) bits as p + z itself would, ties included (never a false tie).
      const double bv = s - p, av = s - bv;
      const double e = (p - av) + (z - bv);
      if (e != 0 && (std::bit_cast<uint64_t>(s) & 1u) == 0) {
        s = std::nextafter(s, e > 0 ? INFINITY : -INFINITY);
      }
    }
    r |= uint64_t{laneRound(t, s)} << (16 * lane);
  }
  return intValue(r);
}

Value evalCast(ScalarType to, ScalarType from, Value a) {
  if (to == from) return a;
  if (isSmallFloat(from) && to != ScalarType::F32) {
    return evalCast(to, ScalarType::F32, evalCast(ScalarType::F32, from, a));
  }
  if (isSmallFloat(from)) {
    // Exact, but for NaNs: cvt.f32.f16 gives the canonical 0x7fffffff (fp8 converts through
    // f16), a bf16 widens with its bits (cvt.f32.bf16 is a shift).
    if (!std::isnan(a.f)) return a;
    if (from != ScalarType::BF16) {
      return realValue(detail::widenF32(std::bit_cast<float>(uint32_t{kCanonicalF32Bits})));
    }
    const uint32_t bits = detail::smallFloatBits(*scalarInfo(from).small, a.f);
    return realValue(detail::widenF32(std::bit_cast<float>(bits << 16)));
  }
  if (isSmallFloat(to)) {
    // Rounded once to nearest even from the exact value (a u64 through oddDouble, which keeps
    // the rounding exact); a NaN gives the canonical NaN.
    double v = a.f;
    if (isSmallFloat(from) || from == ScalarType::U8 || from == ScalarType::U16 ||
        from == ScalarType::Bool) {
      v = evalCast(ScalarType::F32, from, a).f;
    } else if (!isFloat(from)) {
      v = isSigned(from) ? static_cast<double>(signedOf(from, a.u)) : detail::oddDouble(a.u);
    }
    return realValue(smallFloatOf(to, v));
  }
  if (to == ScalarType::Bool) return intValue(isFloat(from) ? (a.f != 0) : (a.u != 0));
  if (isFloat(to)) {
    if (isFloat(from) && std::isnan(a.f)) {
      // cvt between f32 and f64 quiets a NaN and keeps its sign and payload (what fits).
      const double quiet = quietF64(a.f);
      return realValue(to == ScalarType::F32 ? roundTo(to, quiet) : quiet);
    }
    if (isFloat(from)) return realValue(roundTo(to, a.f));
    const double v =
        isSigned(from) ? static_cast<double>(signedOf(from, a.u)) : static_cast<double>(a.u);
    return realValue(roundTo(to, v));
  }
  if (!isFloat(from)) {
    const uint64_t v = isSigned(from) ? static_cast<uint64_t>(signedOf(from, a.u)) : a.u;
    return intValue(v & typeMask(to));
  }
  // float -> integer: truncate, saturate at the type's range, NaN -> 0 (cvt.rzi.sat); to a type
  // narrower than 32 bits through u32, as CUDA does it (see ir::cast).
  if (sizeOf(to) < 4) return evalCast(to, ScalarType::U32, evalCast(ScalarType::U32, from, a));
  if (std::isnan(a.f)) return intValue(0);
  const double v = std::trunc(a.f);
  double lo = 0, top = 0;
  rangeOf(to, lo, top);
  if (v <= lo) return intValue(bitsOf(to, lo));
  if (v >= top) return intValue(isSignedInteger(to) ? typeMask(to) >> 1 : typeMask(to));
  return intValue(bitsOf(to, v));
}

Value evalBitCast(ScalarType to, ScalarType from, Value a) {
  OBSIDIAN_ASSERT(sizeOf(to) == sizeOf(from), "bitcast between types of one size");
  if (to == from) return a;
  uint64_t bits = a.u & typeMask(from);
  if (const detail::SmallFloatFormat* f = scalarInfo(from).small) {
    bits = detail::smallFloatBits(*f, a.f);
  }
  if (const detail::SmallFloatFormat* f = scalarInfo(to).small) {
    return realValue(detail::smallFloatValue(*f, static_cast<uint32_t>(bits)));
  }
  if (from == ScalarType::F32) bits = std::bit_cast<uint32_t>(detail::narrowF32(a.f));
  if (from == ScalarType::F64) bits = std::bit_cast<uint64_t>(a.f);
  if (to == ScalarType::F32) {
    return realValue(detail::widenF32(std::bit_cast<float>(static_cast<uint32_t>(bits))));
  }
  if (to == ScalarType::F64) return realValue(std::bit_cast<double>(bits));
  return intValue(bits & typeMask(to));
}

Value literalValue(const ExpNode& e) {
  OBSIDIAN_ASSERT(e.isLiteral(), "a literal");
  return isFloat(e.type) ? realValue(e.real) : intValue(e.bits);
}

ExpPtr literalOf(ScalarType t, Value v) {
  return isFloat(t) ? literalReal(t, v.f) : literalInt(t, v.u);
}

}  // namespace obsidian::ir
