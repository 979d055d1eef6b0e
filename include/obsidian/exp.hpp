/// Scalar expressions: an untyped, immutable, shared node (ExpNode) built only through smart
/// constructors that fold constants, and the typed front end Exp<T> with C++ operators.
/// @file
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "obsidian/error.hpp"
#include "obsidian/types.hpp"

namespace obsidian {

/// The id of an array of a kernel (Context::arrays, KernelIR's declarations).
using ArrayId = uint32_t;

/// What an ExpNode is; which of its fields mean something depends on it.
enum class ExpKind : uint8_t {
  Literal,    ///< a constant: ExpNode::bits or ExpNode::real
  Var,        ///< a named scalar: loop index, declared variable, kernel parameter
  ThreadIdx,  ///< threadIdx.x: introduced by virtualization only
  BlockIdx,   ///< blockIdx.x: introduced by virtualization only
  GridDim,    ///< gridDim.x: introduced by virtualization only
  Unary,      ///< unOp applied to args[0]
  Binary,     ///< binOp applied to args[0] and args[1]
  Select,     ///< c ? a : b, only the chosen side is evaluated
  Cast,       ///< args[0] converted to `type`
  BitCast,    ///< the same bits read as another type of the same size (u32 <-> i32 <-> f32, u64 <->
              ///< f64)
  Index,      ///< array[index]; with vecWidth > 1, one lane of an aligned vector load
  Fma,        ///< args[0] * args[1] + args[2] rounded once (per lane of a pair: __hfma2)
};

/// Unary operators of ExpKind::Unary nodes.
enum class UnOp : uint8_t {
  Neg,     ///< -x
  Not,     ///< !x (bool)
  BitNot,  ///< ~x (integers)
  Sqrt,    ///< sqrt (floats, as all up to Ceil)
  Rsqrt,   ///< 1 / sqrt
  Exp,     ///< e^x
  Exp2,    ///< 2^x
  Log,     ///< natural logarithm
  Log2,    ///< base-2 logarithm
  Sin,     ///< sine
  Cos,     ///< cosine
  Tan,     ///< tangent
  Fabs,    ///< absolute value of a float
  Floor,   ///< round down
  Ceil,    ///< round up
  Abs,     ///< absolute value of an int32
  // Bit intrinsics of unsigned words (u32, u64); the value has the operand's type.
  Popc,  ///< the number of set bits (__popc, __popcll)
  Clz,   ///< the number of leading zero bits: the width for 0 (__clz, __clzll)
  Ffs,   ///< the position of the lowest set bit, from 1; 0 for 0 (__ffs, __ffsll)
  Brev,  ///< the bits in reverse order (__brev, __brevll)
};

/// The case labels of the bit intrinsics (Popc, Clz, Ffs, Brev), listed once for the switches
/// that treat them alike (see OBSIDIAN_FLOAT_MATH_UNOPS).
#define OBSIDIAN_BIT_UNOPS \
  case UnOp::Popc:         \
  case UnOp::Clz:          \
  case UnOp::Ffs:          \
  case UnOp::Brev

/// A warp vote (ExpNode::vote): an Index node of a register array (forceReg) read by a whole
/// warp at once, each lane contributing its own element. The value is every lane's the same
/// for Ballot, Any and All; MatchAny gives each lane its own.
enum class WarpVote : uint8_t {
  None,      ///< an ordinary read of the element at the index
  Ballot,    ///< u32: bit l set where lane l's element (bool) holds (__ballot_sync)
  Any,       ///< bool: some lane's element holds (__any_sync)
  All,       ///< bool: every lane's element holds (__all_sync)
  MatchAny,  ///< u32: the lanes whose element has the same bits as this lane's (__match_any_sync)
};
/// The vote's CUDA function ("__ballot_sync", ...); "" for WarpVote::None.
const char* warpVoteName(WarpVote v);

/// The case labels of the float math operators: each takes and gives a float and prints as a
/// math call (sqrtf, expf, ...). Switches that treat them alike use this one list, so a new one
/// is added here and to UnOp, and every exhaustive switch over UnOp still compiles only once it
/// is handled.
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

/// Binary operators of ExpKind::Binary nodes.
enum class BinOp : uint8_t {
  Add,     ///< a + b
  Sub,     ///< a - b
  Mul,     ///< a * b
  Div,     ///< a / b
  Mod,     ///< a % b (integers)
  BitAnd,  ///< a & b
  BitOr,   ///< a | b
  BitXor,  ///< a ^ b
  Shl,     ///< a << b
  Shr,     ///< a >> b
  And,     ///< a && b (bool)
  Or,      ///< a || b (bool)
  Eq,      ///< a == b
  Ne,      ///< a != b
  Lt,      ///< a < b
  Le,      ///< a <= b
  Gt,      ///< a > b
  Ge,      ///< a >= b
  Min,     ///< min(a, b)
  Max,     ///< max(a, b)
  Pow,     ///< pow(a, b) (floats)
};

struct ExpNode;
/// Expressions are immutable and shared: a node is referenced by every expression that uses it.
using ExpPtr = std::shared_ptr<const ExpNode>;

/// The deepest expression obsidian accepts: every walk over expressions (printers, passes, the
/// simulator) runs on a stack sized for this depth (ir/deep_stack.hpp), so a deeper one is
/// refused when it is built, with an Error, instead of overflowing a stack later.
inline constexpr uint32_t kMaxExpDepth = uint32_t{1} << 16;

/// An untyped, immutable scalar expression node. Which fields mean something depends on `kind`.
struct ExpNode {
  ExpKind kind;              ///< what the node is
  ScalarType type;           ///< the type of its value
  UnOp unOp = UnOp::Neg;     ///< Unary: the operator
  BinOp binOp = BinOp::Add;  ///< Binary: the operator
  uint64_t bits = 0;         ///< Literal of an integer or bool type (two's complement for i32)
  double real = 0;           ///< Literal of a float type
  std::string name;          ///< Var; for a node marked `share`, the name its variable should get
  ArrayId array = 0;         ///< Index
  /// Index of a vector read: element args[0] is lane vecLane of the vecWidth-element vector
  /// args[1] (args[0] == args[1] * vecWidth + vecLane), printed as one wide load that the CUDA
  /// compiler merges with the other lanes of the same vector.
  uint8_t vecWidth = 1;
  uint8_t vecLane = 0;  ///< Index of a vector read: the lane (see vecWidth)
  /// Index of a register array (forceReg) at the executing lane's own element: virtualize marks
  /// it, and the printer reads the lane's register instead of shuffling.
  bool ownLane = false;
  /// Index of a register array: a warp vote over all its lanes' elements instead of a read of
  /// one (the index is then the literal 0 and unused; see WarpVote).
  WarpVote vote = WarpVote::None;
  /// Marked by share(): the value is bound to a variable of its own wherever a statement
  /// evaluates it on every path, even when it is used only once (codegen/share.hpp).
  bool share = false;
  /// The operands (Unary: 1, Binary: 2, Select: c, a, b; Fma: a, b, c; Cast: 1; Index: the
  /// index).
  std::array<ExpPtr, 3> args{};
  /// Nodes on the longest path to a leaf (1 for a leaf), kept by the smart constructors.
  uint32_t depth = 1;
  /// Var and Index leaves: the capture that made the variable or the array (0: made outside
  /// any capture, e.g.\ by a pass). verify rejects leaves of another capture.
  uint32_t origin = 0;

  /// Whether the node is a constant (ExpKind::Literal).
  bool isLiteral() const { return kind == ExpKind::Literal; }

  /// An empty node; the smart constructors fill it in.
  ExpNode() = default;
  /// Copies a node (the copy shares the operands).
  ExpNode(const ExpNode&) = default;
  /// Copies a node (the copy shares the operands).
  ExpNode& operator=(const ExpNode&) = default;
  /// Frees a deep expression with a worklist: the default destructor would recurse as deep as
  /// the expression (a fold over 10^5 elements overflows any thread's stack).
  ~ExpNode();
};

/// Whether op compares (==, !=, <, <=, >, >=): its result is bool.
bool isComparison(BinOp op);
/// The operator's name in C ("+", "<<", ...).
const char* binOpName(BinOp op);
/// The operator's name as printed ("-", "sqrtf", ...).
const char* unOpName(UnOp op);
/// Printed as a prefix operator (-x, !x, ~x) rather than a call (sqrtf(x)).
bool isPrefixOp(UnOp op);
/// One of the bit intrinsics of unsigned words (popc, clz, ffs, brev).
bool isBitIntrinsic(UnOp op);

/// Smart constructors: the only way nodes are made. They check operand types (internal errors:
/// the typed front end never builds ill-typed nodes), fold constants and drop trivial operations
/// (x + 0, x * 1, true && x, casts to the same type) so generated code stays readable.
namespace ir {
/// A literal of integer or bool type t with the given bits (two's complement for i32).
ExpPtr literalInt(ScalarType t, uint64_t bits);
/// A literal of float type t.
ExpPtr literalReal(ScalarType t, double value);
/// A variable, tied to the capture running on this thread (see currentCapture).
ExpPtr var(ScalarType t, const std::string& name);
/// threadIdx.x (for virtualization only).
ExpPtr threadIdx();
/// blockIdx.x (for virtualization only).
ExpPtr blockIdx();
/// gridDim.x (for virtualization only).
ExpPtr gridDim();
/// op a, folded when a is a literal.
ExpPtr unary(UnOp op, ExpPtr a);
/// a op b, folded and simplified (x + 0, x * 1, ...).
ExpPtr binary(BinOp op, ExpPtr a, ExpPtr b);
/// c ? a : b; a literal c picks its side.
ExpPtr select(ExpPtr c, ExpPtr a, ExpPtr b);
/// a converted to type `to` (dropped when a already has that type).
ExpPtr cast(ScalarType to, ExpPtr a);
/// a's bits as type `to` (the same size; not bool): no conversion.
ExpPtr bitcast(ScalarType to, ExpPtr a);
/// a * b + c rounded once, of a pair type (each lane as CUDA's __hfma2).
ExpPtr fma(ExpPtr a, ExpPtr b, ExpPtr c);
/// array[ix]; `origin` is the capture that made the array (0 for arrays of no capture).
ExpPtr index(ScalarType elem, ArrayId array, ExpPtr ix, uint32_t origin = 0);
/// Element `elementIx` (== vectorIx * width + lane) of a global array, read as lane `lane` of the
/// width-element vector `vectorIx`.
ExpPtr vectorIndex(ScalarType elem, ArrayId array, ExpPtr elementIx, ExpPtr vectorIx,
                   uint32_t width, uint32_t lane, uint32_t origin = 0);
/// array[ix] of a register array where ix is the executing lane (see ExpNode::ownLane).
ExpPtr ownLaneIndex(ScalarType elem, ArrayId array, ExpPtr ix, uint32_t origin = 0);
/// The warp vote `v` over register array `array` whose elements have type `elem` (see
/// WarpVote): bool elements for Ballot, Any and All; for MatchAny any type but bool.
ExpPtr warpVote(WarpVote v, ScalarType elem, ArrayId array, uint32_t origin = 0);
/// The Index node e (of any kind: plain, vector lane, own lane, vote) reading at `ix` instead:
/// every other field as it was, except a share mark (as for every node a pass rebuilds).
ExpPtr reindex(const ExpPtr& e, ExpPtr ix);
/// The largest power of two (up to 2^31) that e's value is known to be a multiple of, from its
/// shape alone (literals, +, *, <<); 1 when nothing is known.
uint32_t knownMultiple(const ExpPtr& e);
/// An upper bound on the value of a u32 or u64 expression from its shape alone (literals, /,
/// *, +, min, max, %, >>, &); the type's maximum when nothing better is known.
uint64_t upperBound(const ExpPtr& e);
/// The u32 literal v.
ExpPtr u32(uint32_t v);
/// e marked to be bound to a variable of its own (ExpNode::share), named `name` when one is
/// given (a C identifier that generated code does not reserve; Error otherwise). Leaves
/// (literals, variables) are returned as they are: they need no binding.
ExpPtr share(const ExpPtr& e, const std::string& name = "");

/// Whether e is a literal with the given bits.
bool isLiteralValue(const ExpPtr& e, uint64_t bits);
/// Structural equality (same tree, same names and literals).
bool equal(const ExpPtr& a, const ExpPtr& b);
/// Literal u32 value of e, if it is one.
bool literalU32(const ExpPtr& e, uint32_t& out);

/// The serial number of the capture running on this thread (0 outside captures). Variables
/// made now belong to it.
uint32_t currentCapture();
/// Sets currentCapture for its lifetime (the capture's Context scope).
class CaptureScope {
 public:
  /// Makes `serial` the current capture until destroyed.
  explicit CaptureScope(uint32_t serial);
  ~CaptureScope();  ///< makes the previous capture current again
  /// @{
  /// Not copyable: each scope restores the previous capture once.
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
  /// @}

 private:
  uint32_t previous_;
};
}  // namespace ir

template <KernelScalar T>
class Exp;

namespace detail {
// Which C++ values may become a literal of T without silently losing meaning:
// integers into any numeric type, floating point only into floating point, bool into bool, and
// a Half (BFloat16, ...) value into its own type.
template <class U, class T>
concept LiteralFor = (std::is_arithmetic_v<U> &&
                      ((std::is_same_v<T, bool> && std::is_same_v<U, bool>) ||
                       (!std::is_same_v<T, bool> && !std::is_same_v<U, bool> &&
                        (FloatScalar<T> || std::is_integral_v<U>)))) ||
                     ((SmallFloatScalar<T> || PairScalar<T>)&&std::is_same_v<U, T>);

template <class T, class U>
ExpPtr makeLiteral(U v) {
  constexpr ScalarType st = scalarTypeOf<T>;
  if constexpr (PairScalar<T>) {
    return ir::literalInt(st, v.bits());  // a pair is held as its word (types.hpp)
  } else if constexpr (SmallFloatScalar<T>) {
    // Rounded once, to nearest even (integers exactly: half.hpp's odd rounding first).
    const SmallFloatFormat& f = *scalarInfo(st).small;
    if constexpr (std::is_same_v<U, T>) {
      return ir::literalReal(st, v.toDouble());  // a NaN's bits kept
    } else if constexpr (std::is_integral_v<U>) {
      double d = 0;
      if constexpr (std::is_signed_v<U>) {
        d = v < 0 ? -oddDouble(0ull - static_cast<uint64_t>(v)) : oddDouble(static_cast<uint64_t>(v));
      } else {
        d = oddDouble(static_cast<uint64_t>(v));
      }
      return ir::literalReal(st, smallFloatValue(f, smallFloatRound(f, d)));
    } else {
      return ir::literalReal(st, smallFloatValue(f, smallFloatRound(f, static_cast<double>(v))));
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (std::is_same_v<T, float>) {
      return ir::literalReal(st, detail::widenF32(static_cast<float>(v)));
    }
    return ir::literalReal(st, static_cast<double>(static_cast<T>(v)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return ir::literalInt(st, v ? 1 : 0);
  } else {
    return ir::literalInt(
        st, static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(static_cast<T>(v))));
  }
}

// The rules of arithmetic on T, as one static_assert each (not a page of candidates).
template <class T>
constexpr void checkArithmetic() {
  static_assert(!std::is_same_v<T, bool>, "arithmetic needs a numeric Exp, not Exp<bool>");
  static_assert(!Fp8Scalar<T>,
                "fp8 values are converted, not computed with: cast<float>(x) (or Half, "
                "BFloat16) first, and cast<Fp8E4M3>(y) to store");
}
// The one rule of what a pair (Half2, BFloat162) does: its operations are CUDA's packed ones.
template <class T>
constexpr void checkPairHas() {
  static_assert(!PairScalar<T>,
                "Half2 and BFloat162 have + - * fma min max neg abs (and pack2, bitcast to "
                "uint32_t); compare, divide or convert their lanes: lowLane(x), highLane(x)");
}
}  // namespace detail

/// A typed scalar expression. Operators build IR; nothing is computed until the kernel runs.
template <KernelScalar T>
class Exp {
 public:
  using Scalar = T;  ///< the C++ type of the value (uint32_t for EWord32)

  /// Wraps a node of type T (made by the smart constructors in obsidian::ir).
  explicit Exp(ExpPtr node) : node_(std::move(node)) {
    OBSIDIAN_ASSERT(node_ && node_->type == scalarTypeOf<T>, "Exp<T> wraps a node of type T");
  }
  /// A literal: any C++ value that converts to T without silently losing meaning (integers
  /// into any numeric type, floating point only into floating point, bool into bool).
  template <class U>
  requires detail::LiteralFor<U, T> Exp(U v)
      : node_(detail::makeLiteral<T>(v)) {}  // NOLINT: literals convert

  /// The untyped node the expression wraps.
  const ExpPtr& node() const { return node_; }

  /// @name Arithmetic (numeric types)
  /// @{

  /// The operation's expression; literals fold now, everything else is computed when the kernel
  /// runs.
  friend Exp operator+(const Exp& a, const Exp& b) { return arith(BinOp::Add, a, b); }
  friend Exp operator-(const Exp& a, const Exp& b) { return arith(BinOp::Sub, a, b); }
  friend Exp operator*(const Exp& a, const Exp& b) { return arith(BinOp::Mul, a, b); }
  friend Exp operator/(const Exp& a, const Exp& b) {
    detail::checkPairHas<T>();
    return arith(BinOp::Div, a, b);
  }
  friend Exp operator%(const Exp& a, const Exp& b) {
    detail::checkPairHas<T>();
    static_assert(!FloatScalar<T>,
                  "operator% needs an integer Exp (floats have no remainder operator)");
    return arith(BinOp::Mod, a, b);
  }
  friend Exp operator-(const Exp& a) {
    static_assert(!std::is_same_v<T, bool>, "unary minus needs a numeric Exp");
    detail::checkArithmetic<T>();
    return Exp(ir::unary(UnOp::Neg, a.node_));
  }
  /// @}
  /// @name Bitwise (integer types; bool allowed for &, |, ^)
  /// @{

  /// The operation's expression, as C's operator on T.
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
  /// @}
  /// @name Logic (bool)
  /// @{

  /// The operation's expression; as in C, the right side of && and || is evaluated only when
  /// it decides the result.
  friend Exp operator&&(const Exp& a, const Exp& b) { return logic(BinOp::And, a, b); }
  friend Exp operator||(const Exp& a, const Exp& b) { return logic(BinOp::Or, a, b); }
  friend Exp operator!(const Exp& a) {
    static_assert(std::is_same_v<T, bool>, "operator! needs an Exp<bool>");
    return Exp(ir::unary(UnOp::Not, a.node_));
  }
  /// @}
  /// @name Comparisons
  /// @{

  /// The comparison's EBool expression.
  friend Exp<bool> operator==(const Exp& a, const Exp& b) { return cmp(BinOp::Eq, a, b); }
  friend Exp<bool> operator!=(const Exp& a, const Exp& b) { return cmp(BinOp::Ne, a, b); }
  friend Exp<bool> operator<(const Exp& a, const Exp& b) { return cmp(BinOp::Lt, a, b); }
  friend Exp<bool> operator<=(const Exp& a, const Exp& b) { return cmp(BinOp::Le, a, b); }
  friend Exp<bool> operator>(const Exp& a, const Exp& b) { return cmp(BinOp::Gt, a, b); }
  friend Exp<bool> operator>=(const Exp& a, const Exp& b) { return cmp(BinOp::Ge, a, b); }
  /// @}

  /// The smaller of a and b (numeric types).
  friend Exp min(const Exp& a, const Exp& b) { return arith(BinOp::Min, a, b); }
  /// The larger of a and b (numeric types).
  friend Exp max(const Exp& a, const Exp& b) { return arith(BinOp::Max, a, b); }

  /// @name Compound assignment
  /// @{

  /// Rebinds this expression to `*this op b` (builds IR; the kernel's variables are assigned
  /// with Program::assign).
  Exp& operator+=(const Exp& b) { return *this = *this + b; }
  Exp& operator-=(const Exp& b) { return *this = *this - b; }
  Exp& operator*=(const Exp& b) { return *this = *this * b; }
  /// @}

 private:
  static Exp arith(BinOp op, const Exp& a, const Exp& b) {
    detail::checkArithmetic<T>();
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
    detail::checkPairHas<T>();
    static_assert(!Fp8Scalar<T>, "fp8 values are not compared: cast<float>(x) first");
    return Exp<bool>(ir::binary(op, a.node_, b.node_));
  }

  ExpPtr node_;
};

using EWord8 = Exp<uint8_t>;    ///< an 8-bit unsigned expression
using EWord16 = Exp<uint16_t>;  ///< a 16-bit unsigned expression
using EWord32 = Exp<uint32_t>;  ///< a 32-bit unsigned expression: indices and lengths
using EWord64 = Exp<uint64_t>;  ///< a 64-bit unsigned expression
using EInt32 = Exp<int32_t>;    ///< a 32-bit signed expression
using EFloat = Exp<float>;      ///< a float expression
using EDouble = Exp<double>;    ///< a double expression
using EBool = Exp<bool>;        ///< a condition
using EHalf = Exp<Half>;          ///< a half (binary16) expression, computed in f32
using EBFloat16 = Exp<BFloat16>;  ///< a bfloat16 expression, computed in f32
using EHalf2 = Exp<Half2>;        ///< two half lanes, computed per lane (__half2)
using EBFloat162 = Exp<BFloat162>;  ///< two bfloat16 lanes, computed per lane (__nv_bfloat162)

/// Whether T is an Exp (value): true for Exp<X>, false for anything else.
template <class T>
struct IsExp : std::false_type {};
/// An Exp<T> is an Exp.
template <class T>
struct IsExp<Exp<T>> : std::true_type {};
/// Whether T (ignoring const and references) is an Exp: literal or expression, in generic code.
template <class T>
inline constexpr bool isExp = IsExp<std::remove_cvref_t<T>>::value;

// ---- casts: one generic cast and the paper's names for the common ones ----
/// cast<To>(e): e's value converted to To, as C's conversion (dropped when From is To).
template <KernelScalar To, KernelScalar From>
Exp<To> cast(const Exp<From>& e) {
  detail::checkPairHas<To>();
  detail::checkPairHas<From>();
  return Exp<To>(ir::cast(scalarTypeOf<To>, e.node()));
}
/// bitcast<To>(e): e's bits read as a To of the same size, with no conversion (CUDA's
/// __float_as_uint and kin): u32, i32 and f32 among themselves, u64 and f64, Half or BFloat16
/// and u16, Fp8E4M3 or Fp8E5M2 and u8, Half2 or BFloat162 and u32. What packs a 32-bit value of any
/// type into half of a 64-bit word (see bits32/fromBits32 below).
template <KernelScalar To, KernelScalar From>
Exp<To> bitcast(const Exp<From>& e) {
  constexpr bool small = (SmallFloatScalar<To> && std::is_unsigned_v<From>) ||
                         (SmallFloatScalar<From> && std::is_unsigned_v<To>);
  constexpr bool pair = (PairScalar<To> && std::is_same_v<From, uint32_t>) ||
                        (PairScalar<From> && std::is_same_v<To, uint32_t>);
  static_assert(pair || (!PairScalar<To> && !PairScalar<From>),
                "bitcast of a Half2 or BFloat162 is to or from uint32_t (its word)");
  static_assert(sizeof(To) == sizeof(From) && (sizeof(To) >= 4 || small || pair) &&
                    !std::is_same_v<To, bool> && !std::is_same_v<From, bool>,
                "bitcast<To>(e) needs types of the same size: u32, i32, f32 among themselves, "
                "u64 and f64, Half or BFloat16 and u16, an fp8 type and u8, or a pair and u32");
  return Exp<To>(ir::bitcast(scalarTypeOf<To>, e.node()));
}
/// bits32(e): the bits of a value of at most 32 bits as a u32 (zero-extended when narrower);
/// fromBits32<X>(w) is its inverse. Together with 64-bit shifts they pack two such values in one
/// u64, read and written by one access (device/scan.hpp's tile status words).
template <KernelScalar X>
EWord32 bits32(const Exp<X>& e) {
  static_assert(sizeof(X) <= 4, "bits32 needs a type of at most 32 bits");
  if constexpr (std::is_same_v<X, float> || std::is_same_v<X, int32_t> || PairScalar<X>) {
    return bitcast<uint32_t>(e);
  } else if constexpr (SmallFloatScalar<X>) {
    using Word = std::conditional_t<sizeof(X) == 2, uint16_t, uint8_t>;
    return cast<uint32_t>(bitcast<Word>(e));
  } else {
    return cast<uint32_t>(e);
  }
}
/// fromBits32<X>(w): the X whose bits bits32 gave (the inverse of bits32).
template <KernelScalar X>
Exp<X> fromBits32(const EWord32& w) {
  static_assert(sizeof(X) <= 4, "fromBits32 needs a type of at most 32 bits");
  if constexpr (std::is_same_v<X, float> || std::is_same_v<X, int32_t> || PairScalar<X>) {
    return bitcast<X>(w);
  } else if constexpr (SmallFloatScalar<X>) {
    using Word = std::conditional_t<sizeof(X) == 2, uint16_t, uint8_t>;
    return bitcast<X>(cast<Word>(w));
  } else if constexpr (std::is_same_v<X, bool>) {
    return w != 0u;
  } else {
    return cast<X>(w);
  }
}

/// @name Casts by the paper's names
/// @{

/// cast<To>(e) for the common pairs, named as in the paper: w32ToF is cast<float> of an
/// EWord32, fToW32 cast<uint32_t> of an EFloat, and so on (W: unsigned word, I: int, F: float,
/// D: double).
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
/// @}

// ---- math functions on floating point expressions (abs also on int32) ----
#define OBSIDIAN_FLOAT_FN(fn, op)                         \
  template <class T>                                      \
  requires FloatScalar<T> Exp<T> fn(const Exp<T>& a) {    \
    detail::checkArithmetic<T>();                         \
    return Exp<T>(ir::unary(UnOp::op, a.node()));         \
  }
/// @name Math functions on floating point expressions (abs also on int32)
/// @{

/// The function of a float or double expression, printed as CUDA's math call (sqrtf, expf,
/// ...; rsqrt is 1 / sqrt). Of a Half or BFloat16: sqrt, fabs, floor and ceil in f32, the others
/// in f64, then rounded once (correctly rounded, so the simulator is exact).
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

/// a to the power b (float or double; b converts from a literal).
template <class T>
requires FloatScalar<T> Exp<T> pow(const Exp<T>& a, const std::type_identity_t<Exp<T>>& b) {
  detail::checkArithmetic<T>();
  return Exp<T>(ir::binary(BinOp::Pow, a.node(), b.node()));
}
/// The absolute value of an int32 expression.
inline EInt32 abs(const EInt32& a) { return EInt32(ir::unary(UnOp::Abs, a.node())); }
/// @}

/// @name Packed pairs of 16-bit floats (Half2, BFloat162)
/// Each operation works on both lanes at once, as CUDA's packed intrinsics do: + - * (__hadd2,
/// __hsub2, __hmul2: each lane rounded to nearest even; printed as their _rn forms, which the
/// CUDA compiler may not contract into an fma), fma (__hfma2: one rounding a lane), unary minus
/// and abs (__hneg2, __habs2: the sign bits, NaNs included), min and max (__hmin2, __hmax2: a
/// NaN lane gives the other operand's lane, two NaNs the canonical NaN, -0 below +0).
/// @{

/// The lane type of pair type P (Half for Half2, BFloat16 for BFloat162).
template <class P>
using LaneOf = decltype(P::lo);

/// fma(a, b, c): a * b + c in each lane, rounded once (__hfma2).
template <class T>
requires PairScalar<T> Exp<T> fma(const Exp<T>& a, const std::type_identity_t<Exp<T>>& b,
                                  const std::type_identity_t<Exp<T>>& c) {
  return Exp<T>(ir::fma(a.node(), b.node(), c.node()));
}
/// abs(x): each lane's absolute value (__habs2: the sign bits cleared).
template <class T>
requires PairScalar<T> Exp<T> abs(const Exp<T>& x) {
  return Exp<T>(ir::unary(UnOp::Fabs, x.node()));
}
/// lowLane(x): the lane in the low 16 bits (CUDA's __low2half, __low2bfloat16; .x).
template <class T>
requires PairScalar<T> Exp<LaneOf<T>> lowLane(const Exp<T>& x) {
  return bitcast<LaneOf<T>>(cast<uint16_t>(bitcast<uint32_t>(x)));
}
/// highLane(x): the lane in the high 16 bits (CUDA's __high2half, __high2bfloat16; .y).
template <class T>
requires PairScalar<T> Exp<LaneOf<T>> highLane(const Exp<T>& x) {
  return bitcast<LaneOf<T>>(cast<uint16_t>(bitcast<uint32_t>(x) >> 16u));
}
/// pack2(lo, hi): the pair of two Half (BFloat16) values, lo in the low 16 bits
/// (__halves2half2, __halves2bfloat162).
template <class L>
requires(std::is_same_v<L, Half> ||
         std::is_same_v<L, BFloat16>) auto pack2(const Exp<L>& lo,
                                                 const std::type_identity_t<Exp<L>>& hi) {
  using P = std::conditional_t<std::is_same_v<L, Half>, Half2, BFloat162>;
  const EWord32 word =
      cast<uint32_t>(bitcast<uint16_t>(lo)) | (cast<uint32_t>(bitcast<uint16_t>(hi)) << 16u);
  return bitcast<P>(word);
}
/// floats2Pair<P>(lo, hi): two floats each rounded to nearest even into pair type P
/// (__floats2half2_rn, __floats2bfloat162_rn).
template <class P>
requires PairScalar<P> Exp<P> floats2Pair(const Exp<float>& lo, const Exp<float>& hi) {
  return pack2(cast<LaneOf<P>>(lo), cast<LaneOf<P>>(hi));
}
/// @}

/// @name Bit intrinsics of unsigned words (u32, u64)
/// @{

/// popc(x): the number of set bits of x (CUDA's __popc, __popcll). Counts are EWord32 for both
/// widths, as CUDA's results are int.
template <KernelScalar T>
EWord32 popc(const Exp<T>& x) {
  static_assert(std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>,
                "popc needs an unsigned word, EWord32 or EWord64 (bitcast or cast others)");
  return cast<uint32_t>(Exp<T>(ir::unary(UnOp::Popc, x.node())));
}
/// clz(x): the number of leading zero bits of x: 32 (or 64) for 0 (__clz, __clzll).
template <KernelScalar T>
EWord32 clz(const Exp<T>& x) {
  static_assert(std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>,
                "clz needs an unsigned word, EWord32 or EWord64 (bitcast or cast others)");
  return cast<uint32_t>(Exp<T>(ir::unary(UnOp::Clz, x.node())));
}
/// ffs(x): the position of x's lowest set bit counting from 1, and 0 for 0 (__ffs, __ffsll).
template <KernelScalar T>
EWord32 ffs(const Exp<T>& x) {
  static_assert(std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>,
                "ffs needs an unsigned word, EWord32 or EWord64 (bitcast or cast others)");
  return cast<uint32_t>(Exp<T>(ir::unary(UnOp::Ffs, x.node())));
}
/// brev(x): x's bits in reverse order (bit 0 becomes the top bit; __brev, __brevll).
template <KernelScalar T>
Exp<T> brev(const Exp<T>& x) {
  static_assert(std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>,
                "brev needs an unsigned word, EWord32 or EWord64 (bitcast or cast others)");
  return Exp<T>(ir::unary(UnOp::Brev, x.node()));
}
/// @}

/// share(e) (obsidian's `let`): e's value is computed once, into a variable of its own, by the
/// statement that uses it; every use in that statement, and in the statements after it until
/// something could change the value, reads the variable. Repeated subexpressions are shared
/// without it (the share pass, CaptureOptions::shareSubexpressions); share() binds a value even
/// when it is used once, and `name` (a C identifier) names its variable in the generated CUDA.
/// A value evaluated only under a condition (one side of ifThenElse, the right of && or ||) is
/// bound only where it is evaluated on every path, so share() never adds a read the program
/// would not make.
template <KernelScalar T>
Exp<T> share(const Exp<T>& e, const std::string& name = "") {
  return Exp<T>(ir::share(e.node(), name));
}

/// Named variable of a kernel (used by the library for loop indices and parameters).
template <KernelScalar T>
Exp<T> variable(const std::string& name) {
  return Exp<T>(ir::var(scalarTypeOf<T>, name));
}

}  // namespace obsidian
