// Scalar expressions: an untyped, immutable, shared node (ExpNode) built only through smart
// constructors that fold constants, and the typed front end Exp<T> with C++ operators.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "obsidian/error.hpp"
#include "obsidian/types.hpp"

namespace obsidian {

using ArrayId = uint32_t;

enum class ExpKind : uint8_t {
  Literal,
  Var,        // a named scalar: loop index, declared variable, kernel parameter
  ThreadIdx,  // threadIdx.x: introduced by virtualization only
  BlockIdx,   // blockIdx.x: introduced by virtualization only
  GridDim,    // gridDim.x: introduced by virtualization only
  Unary,
  Binary,
  Select,  // c ? a : b, only the chosen side is evaluated
  Cast,
  BitCast,  // the same bits read as another type of the same size (u32 <-> i32 <-> f32, u64 <->
            // f64)
  Index,    // array[index]; with vecWidth > 1, one lane of an aligned vector load
};

enum class UnOp : uint8_t {
  Neg,
  Not,
  BitNot,
  Sqrt,
  Rsqrt,
  Exp,
  Exp2,
  Log,
  Log2,
  Sin,
  Cos,
  Tan,
  Fabs,
  Floor,
  Ceil,
  Abs,
};

// The case labels of the float math operators: each takes and gives a float and prints as a
// math call (sqrtf, expf, ...). Switches that treat them alike use this one list, so a new one
// is added here and to UnOp, and every exhaustive switch over UnOp still compiles only once it
// is handled.
#define OBSIDIAN_FLOAT_MATH_UNOPS \
  case UnOp::Sqrt:                \
  case UnOp::Rsqrt:               \
  case UnOp::Exp:                 \
  case UnOp::Exp2:                \
  case UnOp::Log:                 \
  case UnOp::Log2:                \
  case UnOp::Sin:                 \
  case UnOp::Cos:                 \
  case UnOp::Tan:                 \
  case UnOp::Fabs:                \
  case UnOp::Floor:               \
  case UnOp::Ceil

enum class BinOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  BitAnd,
  BitOr,
  BitXor,
  Shl,
  Shr,
  And,
  Or,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  Min,
  Max,
  Pow,
};

struct ExpNode;
using ExpPtr = std::shared_ptr<const ExpNode>;

// The deepest expression obsidian accepts: every walk over expressions (printers, passes, the
// simulator) runs on a stack sized for this depth (ir/deep_stack.hpp), so a deeper one is
// refused when it is built, with an Error, instead of overflowing a stack later.
inline constexpr uint32_t kMaxExpDepth = uint32_t{1} << 16;

struct ExpNode {
  ExpKind kind;
  ScalarType type;
  UnOp unOp = UnOp::Neg;
  BinOp binOp = BinOp::Add;
  uint64_t bits = 0;  // Literal of an integer or bool type (two's complement for i32)
  double real = 0;    // Literal of a float type
  std::string name;   // Var; for a node marked `share`, the name its variable should get
  ArrayId array = 0;  // Index
  // Index of a vector read: element args[0] is lane vecLane of the vecWidth-element vector
  // args[1] (args[0] == args[1] * vecWidth + vecLane), printed as one wide load that the CUDA
  // compiler merges with the other lanes of the same vector.
  uint8_t vecWidth = 1;
  uint8_t vecLane = 0;
  // Index of a register array (forceReg) at the executing lane's own element: virtualize marks
  // it, and the printer reads the lane's register instead of shuffling.
  bool ownLane = false;
  // Marked by share(): the value is bound to a variable of its own wherever a statement
  // evaluates it on every path, even when it is used only once (codegen/share.hpp).
  bool share = false;
  std::array<ExpPtr, 3> args{};
  // Nodes on the longest path to a leaf (1 for a leaf), kept by the smart constructors.
  uint32_t depth = 1;
  // Var and Index leaves: the capture that made the variable or the array (0: made outside
  // any capture, e.g. by a pass). verify rejects leaves of another capture.
  uint32_t origin = 0;

  bool isLiteral() const { return kind == ExpKind::Literal; }

  ExpNode() = default;
  ExpNode(const ExpNode&) = default;
  ExpNode& operator=(const ExpNode&) = default;
  // Frees a deep expression with a worklist: the default destructor would recurse as deep as
  // the expression (a fold over 10^5 elements overflows any thread's stack).
  ~ExpNode();
};

bool isComparison(BinOp op);
const char* binOpName(BinOp op);
const char* unOpName(UnOp op);
// Printed as a prefix operator (-x, !x, ~x) rather than a call (sqrtf(x)).
bool isPrefixOp(UnOp op);

// Smart constructors: the only way nodes are made. They check operand types (internal errors:
// the typed front end never builds ill-typed nodes), fold constants and drop trivial operations
// (x + 0, x * 1, true && x, casts to the same type) so generated code stays readable.
namespace ir {
ExpPtr literalInt(ScalarType t, uint64_t bits);
ExpPtr literalReal(ScalarType t, double value);
// A variable, tied to the capture running on this thread (see currentCapture).
ExpPtr var(ScalarType t, const std::string& name);
ExpPtr threadIdx();
ExpPtr blockIdx();
ExpPtr gridDim();
ExpPtr unary(UnOp op, ExpPtr a);
ExpPtr binary(BinOp op, ExpPtr a, ExpPtr b);
ExpPtr select(ExpPtr c, ExpPtr a, ExpPtr b);
ExpPtr cast(ScalarType to, ExpPtr a);
// a's bits as type `to` (the same size; not bool): no conversion.
ExpPtr bitcast(ScalarType to, ExpPtr a);
// array[ix]; `origin` is the capture that made the array (0 for arrays of no capture).
ExpPtr index(ScalarType elem, ArrayId array, ExpPtr ix, uint32_t origin = 0);
// Element `elementIx` (== vectorIx * width + lane) of a global array, read as lane `lane` of the
// width-element vector `vectorIx`.
ExpPtr vectorIndex(ScalarType elem, ArrayId array, ExpPtr elementIx, ExpPtr vectorIx,
                   uint32_t width, uint32_t lane, uint32_t origin = 0);
// array[ix] of a register array where ix is the executing lane (see ExpNode::ownLane).
ExpPtr ownLaneIndex(ScalarType elem, ArrayId array, ExpPtr ix, uint32_t origin = 0);
// The largest power of two (up to 2^31) that e's value is known to be a multiple of, from its
// shape alone (literals, +, *, <<); 1 when nothing is known.
uint32_t knownMultiple(const ExpPtr& e);
// An upper bound on the value of a u32 or u64 expression from its shape alone (literals, /,
// *, +, min, max, %, >>, &); the type's maximum when nothing better is known.
uint64_t upperBound(const ExpPtr& e);
ExpPtr u32(uint32_t v);
// e marked to be bound to a variable of its own (ExpNode::share), named `name` when one is
// given (a C identifier that generated code does not reserve; Error otherwise). Leaves
// (literals, variables) are returned as they are: they need no binding.
ExpPtr share(const ExpPtr& e, const std::string& name = "");

bool isLiteralValue(const ExpPtr& e, uint64_t bits);
// Structural equality (same tree, same names and literals).
bool equal(const ExpPtr& a, const ExpPtr& b);
// Literal u32 value of e, if it is one.
bool literalU32(const ExpPtr& e, uint32_t& out);

// The serial number of the capture running on this thread (0 outside captures). Variables
// made now belong to it.
uint32_t currentCapture();
// Sets currentCapture for its lifetime (the capture's Context scope).
class CaptureScope {
 public:
  explicit CaptureScope(uint32_t serial);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

 private:
  uint32_t previous_;
};
}  // namespace ir

template <KernelScalar T>
class Exp;

namespace detail {
// Which C++ values may become a literal of T without silently losing meaning:
// integers into any numeric type, floating point only into floating point, bool into bool.
template <class U, class T>
concept LiteralFor = std::is_arithmetic_v<U> &&
    ((std::is_same_v<T, bool> && std::is_same_v<U, bool>) ||
     (!std::is_same_v<T, bool> && !std::is_same_v<U, bool> &&
      (std::is_floating_point_v<T> || std::is_integral_v<U>)));

template <class T>
ExpPtr makeLiteral(T v) {
  constexpr ScalarType st = scalarTypeOf<T>;
  if constexpr (std::is_floating_point_v<T>) {
    if constexpr (std::is_same_v<T, float>) return ir::literalReal(st, detail::widenF32(v));
    return ir::literalReal(st, static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return ir::literalInt(st, v ? 1 : 0);
  } else {
    return ir::literalInt(st, static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(v)));
  }
}
}  // namespace detail

// A typed scalar expression. Operators build IR; nothing is computed until the kernel runs.
template <KernelScalar T>
class Exp {
 public:
  using Scalar = T;

  explicit Exp(ExpPtr node) : node_(std::move(node)) {
    OBSIDIAN_ASSERT(node_ && node_->type == scalarTypeOf<T>, "Exp<T> wraps a node of type T");
  }
  template <class U>
  requires detail::LiteralFor<U, T> Exp(U v)
      : node_(detail::makeLiteral<T>(static_cast<T>(v))) {}  // NOLINT: literals convert

  const ExpPtr& node() const { return node_; }

  // ---- arithmetic (numeric types) ----
  friend Exp operator+(const Exp& a, const Exp& b) { return arith(BinOp::Add, a, b); }
  friend Exp operator-(const Exp& a, const Exp& b) { return arith(BinOp::Sub, a, b); }
  friend Exp operator*(const Exp& a, const Exp& b) { return arith(BinOp::Mul, a, b); }
  friend Exp operator/(const Exp& a, const Exp& b) { return arith(BinOp::Div, a, b); }
  friend Exp operator%(const Exp& a, const Exp& b) {
    static_assert(!std::is_floating_point_v<T>,
                  "operator% needs an integer Exp (floats have no remainder operator)");
    return arith(BinOp::Mod, a, b);
  }
  friend Exp operator-(const Exp& a) {
    static_assert(!std::is_same_v<T, bool>, "unary minus needs a numeric Exp");
    return Exp(ir::unary(UnOp::Neg, a.node_));
  }
  // ---- bitwise (integer types; bool allowed for &, |, ^) ----
  friend Exp operator&(const Exp& a, const Exp& b) { return bits(BinOp::BitAnd, a, b); }
  friend Exp operator|(const Exp& a, const Exp& b) { return bits(BinOp::BitOr, a, b); }
  friend Exp operator^(const Exp& a, const Exp& b) { return bits(BinOp::BitXor, a, b); }
  friend Exp operator<<(const Exp& a, const Exp& b) { return shift(BinOp::Shl, a, b); }
  friend Exp operator>>(const Exp& a, const Exp& b) { return shift(BinOp::Shr, a, b); }
  friend Exp operator~(const Exp& a) {
    static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>,
                  "operator~ needs an integer Exp");
    return Exp(ir::unary(UnOp::BitNot, a.node_));
  }
  // ---- logic (bool) ----
  friend Exp operator&&(const Exp& a, const Exp& b) { return logic(BinOp::And, a, b); }
  friend Exp operator||(const Exp& a, const Exp& b) { return logic(BinOp::Or, a, b); }
  friend Exp operator!(const Exp& a) {
    static_assert(std::is_same_v<T, bool>, "operator! needs an Exp<bool>");
    return Exp(ir::unary(UnOp::Not, a.node_));
  }
  // ---- comparisons ----
  friend Exp<bool> operator==(const Exp& a, const Exp& b) { return cmp(BinOp::Eq, a, b); }
  friend Exp<bool> operator!=(const Exp& a, const Exp& b) { return cmp(BinOp::Ne, a, b); }
  friend Exp<bool> operator<(const Exp& a, const Exp& b) { return cmp(BinOp::Lt, a, b); }
  friend Exp<bool> operator<=(const Exp& a, const Exp& b) { return cmp(BinOp::Le, a, b); }
  friend Exp<bool> operator>(const Exp& a, const Exp& b) { return cmp(BinOp::Gt, a, b); }
  friend Exp<bool> operator>=(const Exp& a, const Exp& b) { return cmp(BinOp::Ge, a, b); }

  friend Exp min(const Exp& a, const Exp& b) { return arith(BinOp::Min, a, b); }
  friend Exp max(const Exp& a, const Exp& b) { return arith(BinOp::Max, a, b); }

  Exp& operator+=(const Exp& b) { return *this = *this + b; }
  Exp& operator-=(const Exp& b) { return *this = *this - b; }
  Exp& operator*=(const Exp& b) { return *this = *this * b; }

 private:
  static Exp arith(BinOp op, const Exp& a, const Exp& b) {
    static_assert(!std::is_same_v<T, bool>, "arithmetic needs a numeric Exp, not Exp<bool>");
    return Exp(ir::binary(op, a.node_, b.node_));
  }
  static Exp bits(BinOp op, const Exp& a, const Exp& b) {
    static_assert(std::is_integral_v<T>, "bitwise operators need an integer or bool Exp");
    return Exp(ir::binary(op, a.node_, b.node_));
  }
  static Exp shift(BinOp op, const Exp& a, const Exp& b) {
    static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "shifts need an integer Exp");
    return Exp(ir::binary(op, a.node_, b.node_));
  }
  static Exp logic(BinOp op, const Exp& a, const Exp& b) {
    static_assert(std::is_same_v<T, bool>, "&& and || need Exp<bool>");
    return Exp(ir::binary(op, a.node_, b.node_));
  }
  static Exp<bool> cmp(BinOp op, const Exp& a, const Exp& b) {
    return Exp<bool>(ir::binary(op, a.node_, b.node_));
  }

  ExpPtr node_;
};

using EWord8 = Exp<uint8_t>;
using EWord16 = Exp<uint16_t>;
using EWord32 = Exp<uint32_t>;
using EWord64 = Exp<uint64_t>;
using EInt32 = Exp<int32_t>;
using EFloat = Exp<float>;
using EDouble = Exp<double>;
using EBool = Exp<bool>;

template <class T>
struct IsExp : std::false_type {};
template <class T>
struct IsExp<Exp<T>> : std::true_type {};
template <class T>
inline constexpr bool isExp = IsExp<std::remove_cvref_t<T>>::value;

// ---- casts: one generic cast and the paper's names for the common ones ----
template <KernelScalar To, KernelScalar From>
Exp<To> cast(const Exp<From>& e) {
  return Exp<To>(ir::cast(scalarTypeOf<To>, e.node()));
}
// bitcast<To>(e): e's bits read as a To of the same size, with no conversion (CUDA's
// __float_as_uint and kin): u32, i32 and f32 among themselves, u64 and f64. What packs a
// 32-bit value of any type into half of a 64-bit word (see bits32/fromBits32 below).
template <KernelScalar To, KernelScalar From>
Exp<To> bitcast(const Exp<From>& e) {
  static_assert(sizeof(To) == sizeof(From) && sizeof(To) >= 4 && !std::is_same_v<To, bool> &&
                    !std::is_same_v<From, bool>,
                "bitcast<To>(e) needs types of the same size: u32, i32, f32 among themselves, or "
                "u64 and f64");
  return Exp<To>(ir::bitcast(scalarTypeOf<To>, e.node()));
}
// bits32(e): the bits of a value of at most 32 bits as a u32 (zero-extended when narrower);
// fromBits32<X>(w) is its inverse. Together with 64-bit shifts they pack two such values in one
// u64, read and written by one access (device/scan.hpp's tile status words).
template <KernelScalar X>
EWord32 bits32(const Exp<X>& e) {
  static_assert(sizeof(X) <= 4, "bits32 needs a type of at most 32 bits");
  if constexpr (std::is_same_v<X, float> || std::is_same_v<X, int32_t>) {
    return bitcast<uint32_t>(e);
  } else {
    return cast<uint32_t>(e);
  }
}
template <KernelScalar X>
Exp<X> fromBits32(const EWord32& w) {
  static_assert(sizeof(X) <= 4, "fromBits32 needs a type of at most 32 bits");
  if constexpr (std::is_same_v<X, float> || std::is_same_v<X, int32_t>) {
    return bitcast<X>(w);
  } else if constexpr (std::is_same_v<X, bool>) {
    return w != 0u;
  } else {
    return cast<X>(w);
  }
}

inline EFloat w32ToF(const EWord32& e) { return cast<float>(e); }
inline EWord32 fToW32(const EFloat& e) { return cast<uint32_t>(e); }
inline EWord8 w32ToW8(const EWord32& e) { return cast<uint8_t>(e); }
inline EWord32 w8ToW32(const EWord8& e) { return cast<uint32_t>(e); }
inline EWord16 w32ToW16(const EWord32& e) { return cast<uint16_t>(e); }
inline EWord32 w16ToW32(const EWord16& e) { return cast<uint32_t>(e); }
inline EInt32 w32ToI32(const EWord32& e) { return cast<int32_t>(e); }
inline EWord32 i32ToW32(const EInt32& e) { return cast<uint32_t>(e); }
inline EWord64 w32ToW64(const EWord32& e) { return cast<uint64_t>(e); }
inline EWord32 w64ToW32(const EWord64& e) { return cast<uint32_t>(e); }
inline EFloat i32ToF(const EInt32& e) { return cast<float>(e); }
inline EInt32 fToI32(const EFloat& e) { return cast<int32_t>(e); }
inline EDouble fToD(const EFloat& e) { return cast<double>(e); }
inline EFloat dToF(const EDouble& e) { return cast<float>(e); }

// ---- math functions on floating point expressions (abs also on int32) ----
#define OBSIDIAN_FLOAT_FN(fn, op)                                   \
  template <class T>                                                \
  requires std::is_floating_point_v<T> Exp<T> fn(const Exp<T>& a) { \
    return Exp<T>(ir::unary(UnOp::op, a.node()));                   \
  }
OBSIDIAN_FLOAT_FN(sqrt, Sqrt)
OBSIDIAN_FLOAT_FN(rsqrt, Rsqrt)
OBSIDIAN_FLOAT_FN(exp, Exp)
OBSIDIAN_FLOAT_FN(exp2, Exp2)
OBSIDIAN_FLOAT_FN(log, Log)
OBSIDIAN_FLOAT_FN(log2, Log2)
OBSIDIAN_FLOAT_FN(sin, Sin)
OBSIDIAN_FLOAT_FN(cos, Cos)
OBSIDIAN_FLOAT_FN(tan, Tan)
OBSIDIAN_FLOAT_FN(fabs, Fabs)
OBSIDIAN_FLOAT_FN(floor, Floor)
OBSIDIAN_FLOAT_FN(ceil, Ceil)
#undef OBSIDIAN_FLOAT_FN

template <class T>
requires std::is_floating_point_v<T> Exp<T> pow(const Exp<T>& a,
                                                const std::type_identity_t<Exp<T>>& b) {
  return Exp<T>(ir::binary(BinOp::Pow, a.node(), b.node()));
}
inline EInt32 abs(const EInt32& a) { return EInt32(ir::unary(UnOp::Abs, a.node())); }

// share(e) (obsidian's `let`): e's value is computed once, into a variable of its own, by the
// statement that uses it; every use in that statement, and in the statements after it until
// something could change the value, reads the variable. Repeated subexpressions are shared
// without it (the share pass, CaptureOptions::shareSubexpressions); share() binds a value even
// when it is used once, and `name` (a C identifier) names its variable in the generated CUDA.
// A value evaluated only under a condition (one side of ifThenElse, the right of && or ||) is
// bound only where it is evaluated on every path, so share() never adds a read the program
// would not make.
template <KernelScalar T>
Exp<T> share(const Exp<T>& e, const std::string& name = "") {
  return Exp<T>(ir::share(e.node(), name));
}

// Named variable of a kernel (used by the library for loop indices and parameters).
template <KernelScalar T>
Exp<T> variable(const std::string& name) {
  return Exp<T>(ir::var(scalarTypeOf<T>, name));
}

}  // namespace obsidian
