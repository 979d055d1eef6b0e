// Smart constructors for expression nodes: type checks, constant folding and trivial
// simplification. Folding follows CUDA's semantics for each type (wrap-around integers,
// float rounding after every operation) so that the simulator and the GPU agree with it.
#include "obsidian/exp.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <sstream>

#include "ir/scalar_ops.hpp"

namespace obsidian {

bool isComparison(BinOp op) {
  switch (op) {
    case BinOp::Eq:
    case BinOp::Ne:
    case BinOp::Lt:
    case BinOp::Le:
    case BinOp::Gt:
    case BinOp::Ge: return true;
    default: return false;
  }
}

const char* binOpName(BinOp op) {
  switch (op) {
    case BinOp::Add: return "+";
    case BinOp::Sub: return "-";
    case BinOp::Mul: return "*";
    case BinOp::Div: return "/";
    case BinOp::Mod: return "%";
    case BinOp::BitAnd: return "&";
    case BinOp::BitOr: return "|";
    case BinOp::BitXor: return "^";
    case BinOp::Shl: return "<<";
    case BinOp::Shr: return ">>";
    case BinOp::And: return "&&";
    case BinOp::Or: return "||";
    case BinOp::Eq: return "==";
    case BinOp::Ne: return "!=";
    case BinOp::Lt: return "<";
    case BinOp::Le: return "<=";
    case BinOp::Gt: return ">";
    case BinOp::Ge: return ">=";
    case BinOp::Min: return "min";
    case BinOp::Max: return "max";
    case BinOp::Pow: return "pow";
  }
  return "?";
}

const char* unOpName(UnOp op) {
  switch (op) {
    case UnOp::Neg: return "-";
    case UnOp::Not: return "!";
    case UnOp::BitNot: return "~";
    case UnOp::Sqrt: return "sqrt";
    case UnOp::Rsqrt: return "rsqrt";
    case UnOp::Exp: return "exp";
    case UnOp::Exp2: return "exp2";
    case UnOp::Log: return "log";
    case UnOp::Log2: return "log2";
    case UnOp::Sin: return "sin";
    case UnOp::Cos: return "cos";
    case UnOp::Tan: return "tan";
    case UnOp::Fabs: return "fabs";
    case UnOp::Floor: return "floor";
    case UnOp::Ceil: return "ceil";
    case UnOp::Abs: return "abs";
  }
  return "?";
}

namespace ir {
namespace {

std::shared_ptr<ExpNode> node(ExpKind k, ScalarType t) {
  auto n = std::make_shared<ExpNode>();
  n->kind = k;
  n->type = t;
  return n;
}

bool isIntLiteral(const ExpPtr& e) { return e->isLiteral() && !isFloat(e->type); }

std::string describe(BinOp op) { return std::string("operator") + binOpName(op); }

ExpPtr foldBinary(BinOp op, ScalarType t, const ExpPtr& a, const ExpPtr& b) {
  if (op == BinOp::Pow) return nullptr;  // host and device libm may differ
  if ((op == BinOp::Div || op == BinOp::Mod) && t == ScalarType::I32 &&
      signedOf(t, a->bits) == std::numeric_limits<int32_t>::min() && signedOf(t, b->bits) == -1) {
    return nullptr;  // overflows: left to run time
  }
  const Value r = evalBinary(op, t, literalValue(*a), literalValue(*b));
  return literalOf(isComparison(op) ? ScalarType::Bool : t, r);
}

bool commutative(BinOp op) {
  switch (op) {
    case BinOp::Add:
    case BinOp::Mul:
    case BinOp::BitAnd:
    case BinOp::BitOr:
    case BinOp::BitXor:
    case BinOp::And:
    case BinOp::Or:
    case BinOp::Eq:
    case BinOp::Ne:
    case BinOp::Min:
    case BinOp::Max: return true;
    default: return false;
  }
}

}  // namespace

ExpPtr literalInt(ScalarType t, uint64_t bits) {
  OBSIDIAN_ASSERT(!isFloat(t), "integer literal of an integer type");
  auto n = node(ExpKind::Literal, t);
  n->bits = bits & typeMask(t);
  return n;
}

ExpPtr literalReal(ScalarType t, double value) {
  OBSIDIAN_ASSERT(isFloat(t), "real literal of a float type");
  auto n = node(ExpKind::Literal, t);
  n->real = roundTo(t, value);
  return n;
}

ExpPtr u32(uint32_t v) { return literalInt(ScalarType::U32, v); }

ExpPtr var(ScalarType t, const std::string& name) {
  OBSIDIAN_ASSERT(!name.empty(), "variables have names");
  auto n = node(ExpKind::Var, t);
  n->name = name;
  return n;
}

ExpPtr threadIdx() { return node(ExpKind::ThreadIdx, ScalarType::U32); }
ExpPtr blockIdx() { return node(ExpKind::BlockIdx, ScalarType::U32); }
ExpPtr gridDim() { return node(ExpKind::GridDim, ScalarType::U32); }

bool isLiteralValue(const ExpPtr& e, uint64_t bits) {
  return isIntLiteral(e) && e->bits == (bits & typeMask(e->type));
}

bool equal(const ExpPtr& a, const ExpPtr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->type != b->type) return false;
  switch (a->kind) {
    case ExpKind::Literal: return isFloat(a->type) ? a->real == b->real : a->bits == b->bits;
    case ExpKind::Var: return a->name == b->name;
    case ExpKind::ThreadIdx:
    case ExpKind::BlockIdx:
    case ExpKind::GridDim: return true;
    case ExpKind::Unary: return a->unOp == b->unOp && equal(a->args[0], b->args[0]);
    case ExpKind::Binary:
      return a->binOp == b->binOp && equal(a->args[0], b->args[0]) && equal(a->args[1], b->args[1]);
    case ExpKind::Select:
      return equal(a->args[0], b->args[0]) && equal(a->args[1], b->args[1]) &&
             equal(a->args[2], b->args[2]);
    case ExpKind::Cast: return equal(a->args[0], b->args[0]);
    case ExpKind::Index:
      return a->array == b->array && a->vecWidth == b->vecWidth && a->vecLane == b->vecLane &&
             equal(a->args[0], b->args[0]);
  }
  return false;
}

bool literalU32(const ExpPtr& e, uint32_t& out) {
  if (!e->isLiteral() || e->type != ScalarType::U32) return false;
  out = static_cast<uint32_t>(e->bits);
  return true;
}

ExpPtr unary(UnOp op, ExpPtr a) {
  OBSIDIAN_ASSERT(a != nullptr, "unary operand");
  const ScalarType t = a->type;
  switch (op) {
    case UnOp::Not:
      OBSIDIAN_ASSERT(t == ScalarType::Bool, "! takes bool");
      if (a->isLiteral()) return literalInt(t, a->bits ? 0 : 1);
      if (a->kind == ExpKind::Unary && a->unOp == UnOp::Not) return a->args[0];
      break;
    case UnOp::BitNot:
      OBSIDIAN_ASSERT(isInteger(t), "~ takes an integer");
      if (a->isLiteral()) return literalInt(t, ~a->bits);
      break;
    case UnOp::Neg:
      OBSIDIAN_ASSERT(t != ScalarType::Bool, "- takes a number");
      if (a->isLiteral()) {
        return isFloat(t) ? literalReal(t, -a->real) : literalInt(t, uint64_t{0} - a->bits);
      }
      if (a->kind == ExpKind::Unary && a->unOp == UnOp::Neg) return a->args[0];
      break;
    case UnOp::Abs:
      OBSIDIAN_ASSERT(t == ScalarType::I32, "abs takes int32");
      if (a->isLiteral()) {
        const int64_t v = signedOf(t, a->bits);
        return literalInt(t, static_cast<uint64_t>(v < 0 ? -v : v));
      }
      break;
    default:
      OBSIDIAN_ASSERT(isFloat(t), std::string(unOpName(op)) + " takes a float");
      if (a->isLiteral()) {
        // Only operations that are exact in IEEE arithmetic are folded.
        if (op == UnOp::Fabs) return literalReal(t, std::fabs(a->real));
        if (op == UnOp::Floor) return literalReal(t, std::floor(a->real));
        if (op == UnOp::Ceil) return literalReal(t, std::ceil(a->real));
        if (op == UnOp::Sqrt) return literalReal(t, roundTo(t, std::sqrt(a->real)));
      }
      break;
  }
  auto n = node(ExpKind::Unary, t);
  n->unOp = op;
  n->args[0] = std::move(a);
  return n;
}

ExpPtr binary(BinOp op, ExpPtr a, ExpPtr b) {
  OBSIDIAN_ASSERT(a && b, "binary operands");
  OBSIDIAN_ASSERT(a->type == b->type,
                  std::string("operands of ") + binOpName(op) + " have one type");
  const ScalarType t = a->type;
  const bool integer = !isFloat(t);
  if ((op == BinOp::Div || op == BinOp::Mod) && integer && isIntLiteral(b) && b->bits == 0) {
    throw Error(describe(op) + ": division by a constant zero in a kernel expression");
  }
  if ((op == BinOp::Shl || op == BinOp::Shr) && isIntLiteral(b) && b->bits >= bitWidth(t)) {
    const std::string amount =
        isSigned(t) ? std::to_string(signedOf(t, b->bits)) : std::to_string(b->bits);
    throw Error(describe(op) + ": shift by " + amount + " is out of range for " +
                std::string(cudaTypeName(t)) + " (width " + std::to_string(bitWidth(t)) + ")");
  }
  if (a->isLiteral() && b->isLiteral()) {
    if (ExpPtr folded = foldBinary(op, t, a, b)) return folded;
  }
  if (commutative(op) && a->isLiteral() && !b->isLiteral()) std::swap(a, b);

  if (integer) {
    const bool bZero = isLiteralValue(b, 0), bOne = isLiteralValue(b, 1);
    const bool aZero = isLiteralValue(a, 0);
    switch (op) {
      case BinOp::Add:
        if (bZero) return a;
        // x / c * c + x % c  ->  x  (holds for C's truncating division too)
        if (a->kind == ExpKind::Binary && a->binOp == BinOp::Mul && b->kind == ExpKind::Binary &&
            b->binOp == BinOp::Mod && a->args[0]->kind == ExpKind::Binary &&
            a->args[0]->binOp == BinOp::Div && equal(a->args[0]->args[0], b->args[0]) &&
            equal(a->args[0]->args[1], a->args[1]) && equal(a->args[1], b->args[1])) {
          return b->args[0];
        }
        // (x + c1) + c2  ->  x + (c1 + c2)
        if (b->isLiteral() && a->kind == ExpKind::Binary && a->binOp == BinOp::Add &&
            a->args[1]->isLiteral()) {
          return binary(BinOp::Add, a->args[0], binary(BinOp::Add, a->args[1], b));
        }
        break;
      case BinOp::Sub:
        if (bZero) return a;
        break;
      case BinOp::Mul:
        if (bOne) return a;
        if (bZero) return b;
        break;
      case BinOp::Div:
        if (bOne) return a;
        break;
      case BinOp::Mod:
        if (bOne) return literalInt(t, 0);
        break;
      case BinOp::BitAnd:
        if (bZero) return b;
        if (isIntLiteral(b) && b->bits == typeMask(t)) return a;
        break;
      case BinOp::BitOr:
      case BinOp::BitXor:
        if (bZero) return a;
        break;
      case BinOp::Shl:
      case BinOp::Shr:
        if (bZero || aZero) return a;
        break;
      case BinOp::And:
        if (b->isLiteral()) return b->bits ? a : b;
        break;
      case BinOp::Or:
        if (b->isLiteral()) return b->bits ? b : a;
        break;
      default: break;
    }
  }
  auto n = node(ExpKind::Binary, isComparison(op) ? ScalarType::Bool : t);
  n->binOp = op;
  n->args[0] = std::move(a);
  n->args[1] = std::move(b);
  return n;
}

ExpPtr select(ExpPtr c, ExpPtr a, ExpPtr b) {
  OBSIDIAN_ASSERT(c && a && b, "select operands");
  OBSIDIAN_ASSERT(c->type == ScalarType::Bool, "select condition is bool");
  OBSIDIAN_ASSERT(a->type == b->type, "select branches have one type");
  if (c->isLiteral()) return c->bits ? a : b;
  if (a == b) return a;
  auto n = node(ExpKind::Select, a->type);
  n->args = {std::move(c), std::move(a), std::move(b)};
  return n;
}

ExpPtr cast(ScalarType to, ExpPtr a) {
  OBSIDIAN_ASSERT(a != nullptr, "cast operand");
  if (a->type == to) return a;
  if (a->isLiteral()) {
    if (to == ScalarType::Bool) {
      return literalInt(to, isFloat(a->type) ? (a->real != 0) : (a->bits != 0));
    }
    if (isFloat(a->type) && isFloat(to)) return literalReal(to, a->real);
    if (!isFloat(a->type) && isFloat(to)) {
      const double v = isSigned(a->type) ? static_cast<double>(signedOf(a->type, a->bits))
                                         : static_cast<double>(a->bits);
      return literalReal(to, v);
    }
    if (!isFloat(a->type) && !isFloat(to)) {
      const uint64_t v =
          isSigned(a->type) ? static_cast<uint64_t>(signedOf(a->type, a->bits)) : a->bits;
      return literalInt(to, v);
    }
    // float -> integer: folded only when the value is in range (CUDA saturates otherwise).
    const double v = std::trunc(a->real);
    if (to == ScalarType::I32 && v >= -2147483648.0 && v <= 2147483647.0) {
      return literalInt(to, static_cast<uint64_t>(static_cast<int64_t>(v)));
    }
    if (!isSigned(to) && v >= 0 && v < std::ldexp(1.0, static_cast<int>(bitWidth(to)))) {
      return literalInt(to, static_cast<uint64_t>(v));
    }
  }
  auto n = node(ExpKind::Cast, to);
  n->args[0] = std::move(a);
  return n;
}

ExpPtr index(ScalarType elem, ArrayId array, ExpPtr ix) {
  OBSIDIAN_ASSERT(ix && ix->type == ScalarType::U32, "array indices are uint32");
  auto n = node(ExpKind::Index, elem);
  n->array = array;
  n->args[0] = std::move(ix);
  return n;
}

ExpPtr vectorIndex(ScalarType elem, ArrayId array, ExpPtr elementIx, ExpPtr vectorIx,
                   uint32_t width, uint32_t lane) {
  OBSIDIAN_ASSERT(elementIx && vectorIx && elementIx->type == ScalarType::U32 &&
                      vectorIx->type == ScalarType::U32,
                  "vector indices are uint32");
  OBSIDIAN_ASSERT(width > 1 && width <= 16 && lane < width && width * sizeOf(elem) <= 16,
                  "vector loads are at most 16 bytes");
  auto n = node(ExpKind::Index, elem);
  n->array = array;
  n->vecWidth = static_cast<uint8_t>(width);
  n->vecLane = static_cast<uint8_t>(lane);
  n->args[0] = std::move(elementIx);
  n->args[1] = std::move(vectorIx);
  return n;
}

uint32_t knownMultiple(const ExpPtr& e) {
  constexpr uint64_t kMax = uint64_t{1} << 31;
  auto pow2Of = [](uint64_t v) -> uint64_t { return v == 0 ? kMax : (v & (~v + 1)); };
  if (!e || e->type != ScalarType::U32) return 1;
  uint64_t m = 1;
  switch (e->kind) {
    case ExpKind::Literal: m = pow2Of(e->bits & 0xffffffffu); break;
    case ExpKind::Binary:
      switch (e->binOp) {
        case BinOp::Add:
        case BinOp::Sub: m = std::min(knownMultiple(e->args[0]), knownMultiple(e->args[1])); break;
        case BinOp::Mul: m = uint64_t{knownMultiple(e->args[0])} * knownMultiple(e->args[1]); break;
        case BinOp::Shl: {
          uint32_t s = 0;
          if (literalU32(e->args[1], s) && s < 32) m = uint64_t{knownMultiple(e->args[0])} << s;
          break;
        }
        default: break;
      }
      break;
    default: break;
  }
  return static_cast<uint32_t>(std::min(m, kMax));
}

}  // namespace ir
}  // namespace obsidian
