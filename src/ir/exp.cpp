// Smart constructors for expression nodes: type checks, constant folding and trivial
// simplification. Folding follows CUDA's semantics for each type (wrap-around integers,
// float rounding after every operation) so that the simulator and the GPU agree with it.
#include "obsidian/exp.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "ir/identifiers.hpp"
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
    case UnOp::Popc: return "popc";
    case UnOp::Clz: return "clz";
    case UnOp::Ffs: return "ffs";
    case UnOp::Brev: return "brev";
  }
  return "?";
}

bool isBitIntrinsic(UnOp op) {
  switch (op) {
    OBSIDIAN_BIT_UNOPS:
      return true;
    case UnOp::Neg:
    case UnOp::Not:
    case UnOp::BitNot:
    case UnOp::Abs:
      OBSIDIAN_FLOAT_MATH_UNOPS:
      return false;
  }
  return false;
}

const char* warpVoteName(WarpVote v) {
  switch (v) {
    case WarpVote::None: return "";
    case WarpVote::Ballot: return "__ballot_sync";
    case WarpVote::Any: return "__any_sync";
    case WarpVote::All: return "__all_sync";
    case WarpVote::MatchAny: return "__match_any_sync";
  }
  return "?";
}

bool isPrefixOp(UnOp op) {
  switch (op) {
    case UnOp::Neg:
    case UnOp::Not:
    case UnOp::BitNot: return true;
        OBSIDIAN_FLOAT_MATH_UNOPS:
        OBSIDIAN_BIT_UNOPS:
    case UnOp::Abs: return false;
  }
  return false;
}

ExpNode::~ExpNode() {
  if (depth <= 64) return;  // shallow: the ordinary recursive release is bounded
  std::vector<ExpPtr> pending;
  for (ExpPtr& a : args) {
    if (a) pending.push_back(std::move(a));
  }
  while (!pending.empty()) {
    ExpPtr p = std::move(pending.back());
    pending.pop_back();
    // The last owner of p takes its children, so p itself is freed without recursing. Nodes
    // are made non-const by make_shared (ir::node), so changing one here is well defined.
    if (p.use_count() == 1) {
      for (ExpPtr& a : const_cast<ExpNode&>(*p).args) {
        if (a) pending.push_back(std::move(a));
      }
    }
  }
}

namespace ir {
namespace {

thread_local uint32_t captureSerial = 0;

std::shared_ptr<ExpNode> node(ExpKind k, ScalarType t) {
  auto n = std::make_shared<ExpNode>();
  n->kind = k;
  n->type = t;
  return n;
}

// Sets n's depth from its operands (all set by now) and refuses one deeper than kMaxExpDepth.
ExpPtr withDepth(std::shared_ptr<ExpNode> n) {
  uint32_t d = 0;
  for (const ExpPtr& a : n->args) {
    if (a) d = std::max(d, a->depth);
  }
  if (d + 1 > kMaxExpDepth) {
    throw Error("expression: an expression nested " + std::to_string(d + 1) +
                " operations deep is deeper than the " + std::to_string(kMaxExpDepth) +
                " obsidian supports (e.g. foldPull1 over a long static array): fold in a loop "
                "(seqReduce, seqFoldStrided) or force partial results first");
  }
  n->depth = d + 1;
  return n;
}

bool isIntLiteral(const ExpPtr& e) { return e->isLiteral() && !isFloat(e->type); }

std::string describe(BinOp op) { return std::string("operator") + binOpName(op); }

ExpPtr foldBinary(BinOp op, ScalarType t, const ExpPtr& a, const ExpPtr& b) {
  if (op == BinOp::Pow) return nullptr;  // host and device libm may differ
  // The most negative value divided by -1 overflows a signed type.
  if ((op == BinOp::Div || op == BinOp::Mod) && isSignedInteger(t) &&
      a->bits == (typeMask(t) >> 1) + 1 && signedOf(t, b->bits) == -1) {
    return nullptr;  // overflows: left to run time
  }
  const Value r = evalBinary(op, t, literalValue(*a), literalValue(*b));
  return literalOf(isComparison(op) ? ScalarType::Bool : t, r);
}

bool isNanLiteral(const ExpPtr& e) {
  return e->isLiteral() && isFloat(e->type) && std::isnan(e->real);
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

ExpPtr share(const ExpPtr& e, const std::string& name) {
  if (!name.empty()) {
    if (!isIdentifier(name)) {
      throw Error("share(e, \"" + name + "\"): the name must be a C identifier (a letter or _, " +
                  "then letters, digits and _)");
    }
    if (const auto why = reservedIdentifierReason(name)) {
      throw Error("share(e, \"" + name + "\"): the name must be free in generated code; '" + name +
                  "' is " + *why);
    }
  }
  switch (e->kind) {
    case ExpKind::Literal:
    case ExpKind::Var:
    case ExpKind::ThreadIdx:
    case ExpKind::BlockIdx:
    case ExpKind::GridDim: return e;
    case ExpKind::Unary:
    case ExpKind::Binary:
    case ExpKind::Select:
    case ExpKind::Cast:
    case ExpKind::BitCast:
    case ExpKind::Index:
    case ExpKind::Fma: break;
  }
  if (e->share && e->name == name) return e;
  auto n = std::make_shared<ExpNode>(*e);
  n->share = true;
  n->name = name;
  return n;
}

ExpPtr var(ScalarType t, const std::string& name) {
  OBSIDIAN_ASSERT(!name.empty(), "variables have names");
  auto n = node(ExpKind::Var, t);
  n->name = name;
  n->origin = captureSerial;
  return n;
}

uint32_t currentCapture() { return captureSerial; }
CaptureScope::CaptureScope(uint32_t serial) : previous_(captureSerial) { captureSerial = serial; }
CaptureScope::~CaptureScope() { captureSerial = previous_; }

ExpPtr threadIdx() { return node(ExpKind::ThreadIdx, ScalarType::U32); }
ExpPtr blockIdx() { return node(ExpKind::BlockIdx, ScalarType::U32); }
ExpPtr gridDim() { return node(ExpKind::GridDim, ScalarType::U32); }

bool isLiteralValue(const ExpPtr& e, uint64_t bits) {
  return isIntLiteral(e) && e->bits == (bits & typeMask(e->type));
}

namespace {
// Whether c1 + c2 (or c1 - c2) fits integer type t, so that re-associating (x + c1) + c2 into
// x + (c1 + c2) adds no signed overflow to the printed code (undefined in C++): where the two
// steps did not overflow, the one step does not either. Unsigned types wrap: always.
bool combinedFits(ScalarType t, const ExpPtr& c1, const ExpPtr& c2, bool subtract) {
  if (!isSignedInteger(t)) return true;
  OBSIDIAN_ASSERT(scalarInfo(t).bytes <= 4, "signed integers of 32 bits at most");
  const int64_t x = signedOf(t, c1->bits), y = signedOf(t, c2->bits);
  const int64_t r = subtract ? x - y : x + y;  // |x|, |y| <= 2^31: no int64 overflow
  const int64_t half = int64_t{1} << (scalarInfo(t).bytes * 8 - 1);
  return r >= -half && r < half;
}
}  // namespace

bool equal(const ExpPtr& a, const ExpPtr& b) {
  // A worklist, not recursion: expressions may be kMaxExpDepth deep.
  std::vector<std::pair<const ExpNode*, const ExpNode*>> todo{{a.get(), b.get()}};
  while (!todo.empty()) {
    const auto [x, y] = todo.back();
    todo.pop_back();
    if (x == y) continue;
    if (!x || !y || x->kind != y->kind || x->type != y->type || x->depth != y->depth) return false;
    bool same = true;
    switch (x->kind) {
      case ExpKind::Literal:
        same = isFloat(x->type) ? x->real == y->real : x->bits == y->bits;
        break;
      case ExpKind::Var: same = x->name == y->name && x->origin == y->origin; break;
      case ExpKind::ThreadIdx:
      case ExpKind::BlockIdx:
      case ExpKind::GridDim:
      case ExpKind::Select:
      case ExpKind::Cast:
      case ExpKind::BitCast:
      case ExpKind::Fma: break;
      case ExpKind::Unary: same = x->unOp == y->unOp; break;
      case ExpKind::Binary: same = x->binOp == y->binOp; break;
      case ExpKind::Index:
        same = x->array == y->array && x->origin == y->origin && x->vecWidth == y->vecWidth &&
               x->vecLane == y->vecLane && x->ownLane == y->ownLane && x->vote == y->vote;
        break;
    }
    if (!same) return false;
    for (size_t i = 0; i < x->args.size(); ++i)
      todo.push_back({x->args[i].get(), y->args[i].get()});
  }
  return true;
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
      OBSIDIAN_ASSERT(t != ScalarType::Bool && computes(t), "- takes a number");
      if (a->isLiteral()) {
        return literalOf(t, evalUnary(op, t, literalValue(*a)));
      }
      if (a->kind == ExpKind::Unary && a->unOp == UnOp::Neg) return a->args[0];
      break;
    case UnOp::Abs:
      OBSIDIAN_ASSERT(isSignedInteger(t), "abs takes a signed integer");
      if (a->isLiteral()) {
        const int64_t v = signedOf(t, a->bits);
        return literalInt(t, static_cast<uint64_t>(v < 0 ? -v : v));
      }
      break;
    OBSIDIAN_BIT_UNOPS:
      OBSIDIAN_ASSERT(t == ScalarType::U32 || t == ScalarType::U64,
                      std::string(unOpName(op)) + " takes an unsigned word");
      if (a->isLiteral()) return literalOf(t, evalUnary(op, t, literalValue(*a)));
      break;
    OBSIDIAN_FLOAT_MATH_UNOPS:
      OBSIDIAN_ASSERT((isFloat(t) && computes(t)) || (isPair(t) && op == UnOp::Fabs),
                      std::string(unOpName(op)) + " takes a float (fabs also a pair)");
      if (a->isLiteral()) {
        // Only operations that are exact in IEEE arithmetic are folded (NaNs as the GPU makes
        // them: evalUnary).
        if (op == UnOp::Fabs || op == UnOp::Floor || op == UnOp::Ceil || op == UnOp::Sqrt) {
          return literalOf(t, evalUnary(op, t, literalValue(*a)));
        }
      }
      break;
  }
  auto n = node(ExpKind::Unary, t);
  n->unOp = op;
  n->args[0] = std::move(a);
  return withDepth(std::move(n));
}

ExpPtr binary(BinOp op, ExpPtr a, ExpPtr b) {
  OBSIDIAN_ASSERT(a && b, "binary operands");
  OBSIDIAN_ASSERT(a->type == b->type,
                  std::string("operands of ") + binOpName(op) + " have one type");
  const ScalarType t = a->type;
  OBSIDIAN_ASSERT(computes(t), std::string(binOpName(op)) + " on a type that computes");
  // A pair's word is no number: none of the integer rules (x + 0, x * 1, ...) hold for it.
  const bool integer = !isFloat(t) && !isPair(t);
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
  // A NaN constant decides +, -, *, / and comparisons whatever the other operand is (f32: the
  // GPU's 0x7fffffff; f64: the constant quieted), and min and max give the other operand:
  // folded here, because the CUDA compiler folds them too, by LLVM's NaN propagation (keeping
  // the constant's payload where the GPU's f32 arithmetic gives its canonical NaN); with no such
  // operation left in the printed code, the simulator and the GPU run the same thing.
  // Not for the small floats: their operations are printed through f32 conversions that the CUDA
  // compiler cannot see into (and every NaN result is the canonical one).
  if (isFloat(t) && !isSmallFloat(t) && (isNanLiteral(a) || isNanLiteral(b))) {
    const ExpPtr& nan = isNanLiteral(a) ? a : b;
    switch (op) {
      case BinOp::Add:
      case BinOp::Sub:
      case BinOp::Mul:
      case BinOp::Div:
      case BinOp::Eq:
      case BinOp::Ne:
      case BinOp::Lt:
      case BinOp::Le:
      case BinOp::Gt:
      case BinOp::Ge: return foldBinary(op, t, nan, nan);
      case BinOp::Min:
      case BinOp::Max: return isNanLiteral(a) ? b : a;
      default: break;
    }
  }
  // min(x, x) and max(x, x) are x: the CUDA compiler folds them so (LLVM's maxnum(x, x) -> x,
  // keeping a NaN x's bits where the GPU's instruction gives its canonical NaN), so they are
  // folded here too and the simulator runs what the GPU runs (fuzz/RESULTS.md, finding 7).
  // Not for the small floats and pairs: their min of two NaNs is the canonical NaN.
  if ((op == BinOp::Min || op == BinOp::Max) && !isSmallFloat(t) && !isPair(t) && equal(a, b)) {
    return a;
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
            a->args[1]->isLiteral() && combinedFits(t, a->args[1], b, false)) {
          return binary(BinOp::Add, a->args[0], binary(BinOp::Add, a->args[1], b));
        }
        // (x - c1) + c2  ->  x + (c2 - c1) (wrapping): Sklansky's i % 4 - 2 + 2 is i % 4, so
        // that i / 4 * 4 + (i % 4 - 2 + 2) is i, and both sides of its select read one element
        if (b->isLiteral() && a->kind == ExpKind::Binary && a->binOp == BinOp::Sub &&
            a->args[1]->isLiteral() && combinedFits(t, b, a->args[1], true)) {
          return binary(BinOp::Add, a->args[0], binary(BinOp::Sub, b, a->args[1]));
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
  return withDepth(std::move(n));
}

ExpPtr select(ExpPtr c, ExpPtr a, ExpPtr b) {
  OBSIDIAN_ASSERT(c && a && b, "select operands");
  OBSIDIAN_ASSERT(c->type == ScalarType::Bool, "select condition is bool");
  OBSIDIAN_ASSERT(a->type == b->type, "select branches have one type");
  if (c->isLiteral()) return c->bits ? a : b;
  if (a == b) return a;
  auto n = node(ExpKind::Select, a->type);
  n->args = {std::move(c), std::move(a), std::move(b)};
  return withDepth(std::move(n));
}

ExpPtr cast(ScalarType to, ExpPtr a) {
  OBSIDIAN_ASSERT(a != nullptr, "cast operand");
  if (a->type == to) return a;
  // A small float (f16, bf16, fp8) converts to anything but f32 through f32 (exact), and from
  // types that f32 holds exactly (u8, u16, bool, the small floats) through f32: only f32, f64,
  // u32, i32 and u64 convert to one directly (see printSmallFloatPrelude).
  if (isSmallFloat(a->type) && to != ScalarType::F32) {
    return cast(to, cast(ScalarType::F32, std::move(a)));
  }
  if (isSmallFloat(to) && a->type != ScalarType::F32 && a->type != ScalarType::F64 &&
      a->type != ScalarType::U32 && a->type != ScalarType::I32 && a->type != ScalarType::U64) {
    return cast(to, cast(ScalarType::F32, std::move(a)));
  }
  if (a->isLiteral() && (isSmallFloat(to) || isSmallFloat(a->type))) {
    return literalOf(to, evalCast(to, a->type, literalValue(*a)));
  }
  // CUDA converts a float to an integer narrower than 32 bits through 32 bits (cvt.rzi.u32,
  // then truncation: (uint8_t)300.0f is 44, not 255); spelled out, so that the printed code
  // says what the simulator computes.
  if (isFloat(a->type) && isInteger(to) && sizeOf(to) < 4) {
    return cast(to, cast(ScalarType::U32, std::move(a)));
  }
  if (a->isLiteral()) {
    if (to == ScalarType::Bool) {
      return literalInt(to, isFloat(a->type) ? (a->real != 0) : (a->bits != 0));
    }
    if (isFloat(a->type) && isFloat(to))
      return literalOf(to, evalCast(to, a->type, literalValue(*a)));
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
    if (const std::optional<uint64_t> bits = integerBits(to, std::trunc(a->real))) {
      return literalInt(to, *bits);
    }
  }
  auto n = node(ExpKind::Cast, to);
  n->args[0] = std::move(a);
  return withDepth(std::move(n));
}

ExpPtr bitcast(ScalarType to, ExpPtr a) {
  OBSIDIAN_ASSERT(a != nullptr, "bitcast operand");
  OBSIDIAN_ASSERT(sizeOf(to) == sizeOf(a->type) && to != ScalarType::Bool &&
                      a->type != ScalarType::Bool &&
                      (sizeOf(to) >= 4 || isSmallFloat(to) || isSmallFloat(a->type)),
                  "bitcast between types of one size");
  if (a->type == to) return a;
  if (a->kind == ExpKind::BitCast && a->args[0]->type == to) return a->args[0];
  if (a->isLiteral()) return literalOf(to, evalBitCast(to, a->type, literalValue(*a)));
  auto n = node(ExpKind::BitCast, to);
  n->args[0] = std::move(a);
  return withDepth(std::move(n));
}

ExpPtr fma(ExpPtr a, ExpPtr b, ExpPtr c) {
  OBSIDIAN_ASSERT(a && b && c, "fma operands");
  OBSIDIAN_ASSERT(isPair(a->type) && a->type == b->type && a->type == c->type,
                  "fma of three operands of one pair type");
  if (a->isLiteral() && b->isLiteral() && c->isLiteral()) {
    return literalOf(a->type,
                     evalFma(a->type, literalValue(*a), literalValue(*b), literalValue(*c)));
  }
  auto n = node(ExpKind::Fma, a->type);
  n->args = {std::move(a), std::move(b), std::move(c)};
  return withDepth(std::move(n));
}

namespace {
ExpPtr scalarIndex(ScalarType elem, ArrayId array, ExpPtr ix, uint32_t origin, bool ownLane) {
  OBSIDIAN_ASSERT(ix && ix->type == ScalarType::U32, "array indices are uint32");
  auto n = node(ExpKind::Index, elem);
  n->array = array;
  n->origin = origin;
  n->ownLane = ownLane;
  n->args[0] = std::move(ix);
  return withDepth(std::move(n));
}
}  // namespace

ExpPtr index(ScalarType elem, ArrayId array, ExpPtr ix, uint32_t origin) {
  return scalarIndex(elem, array, std::move(ix), origin, false);
}

ExpPtr ownLaneIndex(ScalarType elem, ArrayId array, ExpPtr ix, uint32_t origin) {
  return scalarIndex(elem, array, std::move(ix), origin, true);
}

ExpPtr warpVote(WarpVote v, ScalarType elem, ArrayId array, uint32_t origin) {
  OBSIDIAN_ASSERT(v != WarpVote::None, "a vote");
  OBSIDIAN_ASSERT((v == WarpVote::MatchAny) == (elem != ScalarType::Bool),
                  "ballot, any and all vote on bools; matchAny on values");
  const ScalarType result =
      v == WarpVote::Any || v == WarpVote::All ? ScalarType::Bool : ScalarType::U32;
  auto n = node(ExpKind::Index, result);
  n->array = array;
  n->origin = origin;
  n->vote = v;
  n->args[0] = u32(0);
  return withDepth(std::move(n));
}

ExpPtr reindex(const ExpPtr& e, ExpPtr ix) {
  OBSIDIAN_ASSERT(e->kind == ExpKind::Index && ix && ix->type == ScalarType::U32,
                  "reindex of an array read by a uint32 index");
  if (ix == e->args[0]) return e;
  auto n = std::make_shared<ExpNode>(*e);
  n->args[0] = std::move(ix);
  n->share = false;  // as every rebuilt node (rewrite): the share pass marks what it binds
  n->name.clear();
  return withDepth(std::move(n));
}

ExpPtr vectorIndex(ScalarType elem, ArrayId array, ExpPtr elementIx, ExpPtr vectorIx,
                   uint32_t width, uint32_t lane, uint32_t origin) {
  OBSIDIAN_ASSERT(elementIx && vectorIx && elementIx->type == ScalarType::U32 &&
                      vectorIx->type == ScalarType::U32,
                  "vector indices are uint32");
  OBSIDIAN_ASSERT(hasVectorLoad(elem, width) && lane < width,
                  "vector loads are of 2^k elements, at most 16 bytes");
  auto n = node(ExpKind::Index, elem);
  n->array = array;
  n->vecWidth = static_cast<uint8_t>(width);
  n->vecLane = static_cast<uint8_t>(lane);
  n->origin = origin;
  n->args[0] = std::move(elementIx);
  n->args[1] = std::move(vectorIx);
  return withDepth(std::move(n));
}

uint32_t knownMultiple(const ExpPtr& e) {
  constexpr uint64_t kMax = uint64_t{1} << 31;
  auto pow2Of = [](uint64_t v) -> uint64_t { return v == 0 ? kMax : (v & (~v + 1)); };
  // Shape analysis of index arithmetic, which is shallow; deeper means "nothing known".
  if (!e || e->type != ScalarType::U32 || e->depth > 64) return 1;
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

uint64_t upperBound(const ExpPtr& e) {
  const uint64_t top = typeMask(e->type);
  if (isFloat(e->type) || isSigned(e->type) || e->type == ScalarType::Bool || e->depth > 64) {
    return top;  // lengths are shallow unsigned arithmetic; the rest is not analysed
  }
  auto clamp = [top](uint64_t v) { return std::min(v, top); };
  auto mulSat = [&](uint64_t x, uint64_t y) {
    return (x != 0 && y > top / x) ? top : clamp(x * y);
  };
  switch (e->kind) {
    case ExpKind::Literal: return e->bits;
    // CUDA's limits: 1024 threads per block, 2^31 - 1 blocks.
    case ExpKind::ThreadIdx: return 1023;
    case ExpKind::BlockIdx: return 0x7ffffffe;
    case ExpKind::GridDim: return 0x7fffffff;
    case ExpKind::Cast:
      if (!isFloat(e->args[0]->type) && !isSigned(e->args[0]->type)) {
        return clamp(upperBound(e->args[0]));
      }
      return top;
    case ExpKind::BitCast: return top;  // from a float or a signed integer
    case ExpKind::Select: return std::max(upperBound(e->args[1]), upperBound(e->args[2]));
    case ExpKind::Binary: {
      const ExpPtr& a = e->args[0];
      const ExpPtr& b = e->args[1];
      uint64_t lit = 0;
      const bool bLit = isIntLiteral(b) && (lit = b->bits, true);
      switch (e->binOp) {
        case BinOp::Add: {
          const uint64_t x = upperBound(a), y = upperBound(b);
          return x > top - y ? top : x + y;  // a wrap-around could give anything
        }
        case BinOp::Mul: return mulSat(upperBound(a), upperBound(b));
        case BinOp::Div: return bLit && lit > 0 ? upperBound(a) / lit : upperBound(a);
        case BinOp::Mod: return bLit && lit > 0 ? std::min(upperBound(a), lit - 1) : upperBound(a);
        case BinOp::Shr: return bLit ? upperBound(a) >> lit : upperBound(a);
        case BinOp::Shl: return bLit ? mulSat(upperBound(a), uint64_t{1} << lit) : top;
        case BinOp::BitAnd: return std::min(upperBound(a), upperBound(b));
        case BinOp::Min: return std::min(upperBound(a), upperBound(b));
        case BinOp::Max: return std::max(upperBound(a), upperBound(b));
        default: return top;
      }
    }
    default: return top;
  }
}

}  // namespace ir
}  // namespace obsidian
