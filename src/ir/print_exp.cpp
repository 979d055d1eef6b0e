// Expressions in CUDA syntax with C precedence: parentheses only where they are needed, plus
// where mixing bitwise and arithmetic operators would be easy to misread.
#include <charconv>
#include <cmath>
#include <cstring>

#include "ir/print.hpp"

namespace obsidian::ir {
namespace {

constexpr int kPrimary = 16;
constexpr int kUnary = 15;
constexpr int kSelect = 3;

int binPrec(BinOp op) {
  switch (op) {
    case BinOp::Mul:
    case BinOp::Div:
    case BinOp::Mod: return 13;
    case BinOp::Add:
    case BinOp::Sub: return 12;
    case BinOp::Shl:
    case BinOp::Shr: return 11;
    case BinOp::Lt:
    case BinOp::Le:
    case BinOp::Gt:
    case BinOp::Ge: return 10;
    case BinOp::Eq:
    case BinOp::Ne: return 9;
    case BinOp::BitAnd: return 8;
    case BinOp::BitXor: return 7;
    case BinOp::BitOr: return 6;
    case BinOp::And: return 5;
    case BinOp::Or: return 4;
    case BinOp::Min:
    case BinOp::Max:
    case BinOp::Pow: return kPrimary;  // printed as calls
  }
  return kPrimary;
}

// u8 arithmetic is promoted to int in C++; the result is cast back so it wraps like uint8.
bool wrapsU8(const ExpNode& e) {
  if (e.type != ScalarType::U8) return false;
  if (e.kind == ExpKind::Unary) return e.unOp == UnOp::Neg || e.unOp == UnOp::BitNot;
  if (e.kind == ExpKind::Binary) return binPrec(e.binOp) != kPrimary;
  return false;
}

int precOf(const ExpNode& e) {
  switch (e.kind) {
    case ExpKind::Literal:
      if (isFloat(e.type)) return std::signbit(e.real) ? kUnary : kPrimary;
      if (e.type == ScalarType::I32 && static_cast<int32_t>(e.bits) < 0) return kUnary;
      return e.type == ScalarType::U8 ? kUnary : kPrimary;
    case ExpKind::Var:
    case ExpKind::ThreadIdx:
    case ExpKind::BlockIdx:
    case ExpKind::GridDim:
    case ExpKind::Index: return kPrimary;
    case ExpKind::Unary:
      if (wrapsU8(e)) return kUnary;
      return (e.unOp == UnOp::Neg || e.unOp == UnOp::Not || e.unOp == UnOp::BitNot) ? kUnary
                                                                                    : kPrimary;
    case ExpKind::Binary: return wrapsU8(e) ? kUnary : binPrec(e.binOp);
    case ExpKind::Select: return kSelect;
    case ExpKind::Cast: return kUnary;
  }
  return kPrimary;
}

bool isBitwiseOrShift(int prec) { return prec == 6 || prec == 7 || prec == 8 || prec == 11; }

// Function names printed here are reserved as kernel names in src/ir/identifiers.cpp (from
// unOpName/binOpName with their "f" variants, and fmin/fmax): add any new one there.
std::string mathName(const char* base, ScalarType t) {
  return t == ScalarType::F32 ? std::string(base) + "f" : std::string(base);
}

class Printer {
 public:
  explicit Printer(const std::vector<ArrayDecl>& arrays) : arrays_(arrays) {}

  std::string print(const ExpPtr& e) {
    const ExpNode& n = *e;
    std::string s = printRaw(n);
    return wrapsU8(n) ? "(uint8_t)(" + s + ")" : s;
  }

 private:
  std::string operand(const ExpPtr& child, int minPrec, int parentPrec) {
    std::string s = print(child);
    const int p = precOf(*child);
    bool parens = p < minPrec;
    // Clarity: a bitwise/shift operator next to another class of binary operator.
    if (!parens && child->kind == ExpKind::Binary && p != kPrimary && !wrapsU8(*child)) {
      if ((isBitwiseOrShift(parentPrec) || isBitwiseOrShift(p)) && p != parentPrec) parens = true;
      if (parentPrec == 4 && p == 5) parens = true;  // a || (b && c)
    }
    return parens ? "(" + s + ")" : s;
  }

  std::string printRaw(const ExpNode& n) {
    switch (n.kind) {
      case ExpKind::Literal: return printLiteral(n);
      case ExpKind::Var: return n.name;
      case ExpKind::ThreadIdx: return "threadIdx.x";
      case ExpKind::BlockIdx: return "blockIdx.x";
      case ExpKind::GridDim: return "gridDim.x";
      case ExpKind::Index: {
        OBSIDIAN_ASSERT(n.array < arrays_.size(), "index of a known array");
        if (n.vecWidth > 1) {
          // One lane of a vector: the CUDA compiler merges the lanes of one vector into a
          // single wide load (ld.global.v4), which it may do since the vector type is aligned.
          static const char* lanes = "xyzw";
          return "((const " + vectorTypeName(n.type, n.vecWidth) + "*)" + arrays_[n.array].name +
                 ")[" + print(n.args[1]) + "]." + lanes[n.vecLane];
        }
        const ArrayDecl& a = arrays_[n.array];
        if (a.space == MemorySpace::Register) {
          // The lane's own element is its register; another lane's is a shuffle.
          static const ExpPtr lane = ir::binary(BinOp::Mod, ir::threadIdx(), ir::u32(32));
          if (equal(n.args[0], lane)) return a.name;
          return "__shfl_sync(0xffffffffu, " + a.name + ", " + print(n.args[0]) + ")";
        }
        // Grid state is read through L2: another block may have written it in this launch.
        if (a.space == MemorySpace::GridState)
          return "__ldcg(&" + a.name + "[" + print(n.args[0]) + "])";
        return a.name + "[" + print(n.args[0]) + "]";
      }
      case ExpKind::Cast:
        return "(" + std::string(cudaTypeName(n.type)) + ")" + operand(n.args[0], kUnary, kUnary);
      case ExpKind::Select:
        return operand(n.args[0], kSelect + 1, kSelect) + " ? " +
               operand(n.args[1], kSelect + 1, kSelect) + " : " +
               operand(n.args[2], kSelect, kSelect);
      case ExpKind::Unary: return unary(n);
      case ExpKind::Binary: return binary(n);
    }
    return "?";
  }

  std::string unary(const ExpNode& n) {
    const ScalarType t = n.type;
    switch (n.unOp) {
      case UnOp::Neg:
      case UnOp::Not:
      case UnOp::BitNot: {
        std::string a = operand(n.args[0], kUnary, kUnary);
        if (!a.empty() && (a[0] == '-' || a[0] == '!' || a[0] == '~')) a = "(" + a + ")";
        return unOpName(n.unOp) + a;
      }
      case UnOp::Abs: return "abs(" + print(n.args[0]) + ")";
      default: return mathName(unOpName(n.unOp), t) + "(" + print(n.args[0]) + ")";
    }
  }

  std::string binary(const ExpNode& n) {
    const ScalarType t = n.args[0]->type;
    switch (n.binOp) {
      case BinOp::Min:
      case BinOp::Max: {
        const std::string a = print(n.args[0]), b = print(n.args[1]);
        if (isFloat(t)) {
          return mathName(n.binOp == BinOp::Min ? "fmin" : "fmax", t) + "(" + a + ", " + b + ")";
        }
        if (t == ScalarType::U8) {
          return std::string(binOpName(n.binOp)) + "((unsigned int)" +
                 operand(n.args[0], kUnary, kUnary) + ", (unsigned int)" +
                 operand(n.args[1], kUnary, kUnary) + ")";
        }
        return std::string(binOpName(n.binOp)) + "(" + a + ", " + b + ")";
      }
      case BinOp::Pow:
        return mathName("pow", t) + "(" + print(n.args[0]) + ", " + print(n.args[1]) + ")";
      default: {
        const int p = binPrec(n.binOp);
        return operand(n.args[0], p, p) + " " + binOpName(n.binOp) + " " +
               operand(n.args[1], p + 1, p);
      }
    }
  }

  const std::vector<ArrayDecl>& arrays_;
};

std::string shortestReal(double v, bool single) {
  char buf[64];
  const auto r = single ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v))
                        : std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

std::string printLiteral(const ExpNode& e) {
  switch (e.type) {
    case ScalarType::Bool: return e.bits ? "true" : "false";
    case ScalarType::U8: return "(uint8_t)" + std::to_string(e.bits);
    case ScalarType::U32: return std::to_string(e.bits) + "u";
    case ScalarType::U64: return std::to_string(e.bits) + "ull";
    case ScalarType::I32: {
      const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(e.bits));
      if (v == INT32_MIN) return "(-2147483647 - 1)";
      return std::to_string(v);
    }
    case ScalarType::F32:
    case ScalarType::F64: {
      const bool single = e.type == ScalarType::F32;
      if (std::isnan(e.real))
        return single ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000ll)";
      if (std::isinf(e.real)) {
        const bool neg = e.real < 0;
        if (single) return neg ? "__int_as_float(0xff800000)" : "__int_as_float(0x7f800000)";
        return neg ? "__longlong_as_double(0xfff0000000000000ll)"
                   : "__longlong_as_double(0x7ff0000000000000ll)";
      }
      return shortestReal(e.real, single) + (single ? "f" : "");
    }
  }
  return "?";
}

std::string printExp(const ExpPtr& e, const std::vector<ArrayDecl>& arrays) {
  return Printer(arrays).print(e);
}

}  // namespace obsidian::ir
