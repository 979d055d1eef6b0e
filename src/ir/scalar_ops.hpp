// The meaning of every scalar operation on values, as CUDA computes it: wrap-around integers,
// truncating signed division, float results rounded to float after each operation. Constant
// folding and the simulator both use it, so they cannot disagree.
#pragma once

#include <cstdint>
#include <optional>

#include "obsidian/exp.hpp"

namespace obsidian::ir {

// A value of some ScalarType: integers and bool in `u` (two's complement, masked to the
// type's width), floats in `f` (f32 values are doubles that are exactly floats).
union Value {
  uint64_t u;
  double f;
};

inline Value intValue(uint64_t u) {
  Value v;
  v.u = u;
  return v;
}
inline Value realValue(double f) {
  Value v;
  v.f = f;
  return v;
}

uint64_t typeMask(ScalarType t);
// v rounded to the precision of float type t (f32 values are doubles that are exact floats).
double roundTo(ScalarType t, double v);
// v rounded to the small float type t (f16, bf16, fp8) as CUDA converts: to nearest even, a NaN
// to the canonical NaN (half.hpp).
double smallFloatOf(ScalarType t, double v);
// The bits of a value of integer type t as a signed number (sign-extended from t's width
// where t is a signed integer).
int64_t signedOf(ScalarType t, uint64_t bits);
// The bits of integer type t that hold the integral value v, if t can hold it exactly.
std::optional<uint64_t> integerBits(ScalarType t, double v);

// op applied to operands of type t (comparisons yield a bool in `u`). Integer division or
// remainder by zero throws Error; callers that can report better (the simulator) check first.
// A NaN result has the GPU's bits: 0x7fffffff for f32; for f64 the first NaN operand quieted,
// or 0xfff8000000000000 (see floatResult in scalar_ops.cpp).
Value evalBinary(BinOp op, ScalarType t, Value a, Value b);
Value evalUnary(UnOp op, ScalarType t, Value a);
// a * b + c of pair type t, each lane rounded once (CUDA's __hfma2).
Value evalFma(ScalarType t, Value a, Value b, Value c);
// Conversion as CUDA does it; float to integer saturates, NaN becomes 0 (to u8 and u16: to u32
// first, then truncated); between f32 and f64 a NaN is quieted, its sign and payload kept.
Value evalCast(ScalarType to, ScalarType from, Value a);
// The same bits read as `to` (types of one size, see ir::bitcast). f32 values are widened
// doubles (detail::widenF32), so every f32 bit pattern survives, signalling NaNs included.
Value evalBitCast(ScalarType to, ScalarType from, Value a);

// The value of a literal node, and a literal node for a value.
Value literalValue(const ExpNode& e);
ExpPtr literalOf(ScalarType t, Value v);

}  // namespace obsidian::ir
