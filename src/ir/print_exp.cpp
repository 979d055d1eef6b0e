// Expressions in CUDA syntax with C precedence: parentheses only where they are needed, plus
// where mixing bitwise and arithmetic operators would be easy to misread.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "ir/print.hpp"
#include "ir/scalar_ops.hpp"

namespace obsidian::ir {
namespace {

// An f64 NaN constant in the kernel's CUDA. ptxas (CUDA 13.0) quiets the low word of an f64
// immediate whose low 32 bits read as an f32 signalling NaN (0x7fa9e863 became 0x7fe9e863:
// fuzz/RESULTS.md, finding 5), so such a constant is made of its two 32-bit words in inline PTX
// (mov.b64 {lo, hi}), which ptxas keeps as integers; any other NaN is printed as a literal.
std::string deviceF64Nan(uint64_t bits) {
  const uint32_t lo = static_cast<uint32_t>(bits), hi = static_cast<uint32_t>(bits >> 32);
  const bool lowIsSignalling =
      (lo & 0x7f800000u) == 0x7f800000u && (lo & 0x003fffffu) != 0 && (lo & 0x00400000u) == 0;
  char buf[160];
  if (!lowIsSignalling) {
    std::snprintf(buf, sizeof buf, "__longlong_as_double(0x%016llxll)",
                  static_cast<unsigned long long>(bits));
  } else {
    std::snprintf(buf, sizeof buf,
                  "[] { double r; asm(\"mov.b64 %%0, {%%1, %%2};\" : \"=d\"(r) : \"r\"(0x%08xu), "
                  "\"r\"(0x%08xu)); return r; }()",
                  lo, hi);
  }
  return buf;
}

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

// Integers narrower than int (u8, u16) are promoted to int by C++ arithmetic.
bool promoted(ScalarType t) { return isInteger(t) && sizeOf(t) < sizeOf(ScalarType::I32); }

// Arithmetic on a promoted type: the result is cast back so it wraps like the type.
bool wrapsNarrow(const ExpNode& e) {
  if (!promoted(e.type)) return false;
  if (e.kind == ExpKind::Unary) return isPrefixOp(e.unOp);  // - and ~ (! takes bool)
  if (e.kind == ExpKind::Binary) return binPrec(e.binOp) != kPrimary;
  return false;
}

// Whether promoted int arithmetic on t could overflow (undefined) where t's own does not:
// u16 * u16 passes INT_MAX, and so may a left shift of a narrow value by up to 31 (255 << 24).
// The left operand is then widened to unsigned int, whose arithmetic wraps (the result is cast
// back to t).
bool widensLeft(BinOp op, ScalarType t) {
  if (!promoted(t)) return false;
  return op == BinOp::Shl || (op == BinOp::Mul && 2 * bitWidth(t) > 31);
}

// A lane of a vector of a type CUDA has no vector type of (u8, u16): the bits of a word,
// printed with a cast (see Printer::narrowLaneOf).
bool narrowLane(const ExpNode& e) {
  return e.kind == ExpKind::Index && e.vecWidth > 1 && vectorTypeName(e.type, e.vecWidth).empty();
}

// The small floats' helper names (printSmallFloatPrelude): obsidian_to_half, obsidian_make_half,
// obsidian_make_half2...
std::string smallName(ScalarType t) { return std::string(cudaTypeName(t)).substr(9); }
// The C type of the bits of a type of the prelude (obsidian_bits, obsidian_make_*).
std::string storageName(ScalarType t) {
  return sizeOf(t) == 4 ? "unsigned int" : sizeOf(t) == 2 ? "unsigned short" : "unsigned char";
}

// A node printed as a call to a small float helper (an operation computed in f32 and rounded
// back, a conversion to or from f32, a bitcast): its precedence is a call's.
bool smallCall(const ExpNode& e) {
  switch (e.kind) {
    case ExpKind::Unary:
    case ExpKind::Cast:
    case ExpKind::BitCast: return hasPreludeType(e.type) || hasPreludeType(e.args[0]->type);
    case ExpKind::Binary:  // a comparison prints as f32's
      return isSmallFloat(e.type) || isPair(e.type);
    case ExpKind::Fma: return true;
    default: return false;
  }
}

int precOf(const ExpNode& e) {
  if (smallCall(e)) return kPrimary;
  switch (e.kind) {
    case ExpKind::Literal:
      if (isFloat(e.type)) return std::signbit(e.real) ? kUnary : kPrimary;
      if (isSignedInteger(e.type) && signedOf(e.type, e.bits) < 0) return kUnary;
      return promoted(e.type) ? kUnary : kPrimary;  // printed with a cast
    case ExpKind::Var:
    case ExpKind::ThreadIdx:
    case ExpKind::BlockIdx:
    case ExpKind::GridDim: return kPrimary;
    case ExpKind::Index: return narrowLane(e) ? kUnary : kPrimary;
    case ExpKind::Unary:
      if (wrapsNarrow(e)) return kUnary;
      // A bit intrinsic prints with a cast to its word.
      return isPrefixOp(e.unOp) || isBitIntrinsic(e.unOp) ? kUnary : kPrimary;
    case ExpKind::Binary: return wrapsNarrow(e) ? kUnary : binPrec(e.binOp);
    case ExpKind::Select: return kSelect;
    case ExpKind::Cast: return kUnary;
    case ExpKind::BitCast: return kPrimary;  // a call, or a cast printed in parentheses
    case ExpKind::Fma: return kPrimary;      // a call
  }
  return kPrimary;
}

bool isBitwiseOrShift(int prec) { return prec == 6 || prec == 7 || prec == 8 || prec == 11; }

// Function names printed here are reserved as kernel names in src/ir/identifiers.cpp (from
// unOpName/binOpName with their "f" variants, and fmin/fmax): add any new one there.
std::string mathName(const char* base, ScalarType t) {
  return t == ScalarType::F32 ? std::string(base) + "f" : std::string(base);
}

// Appends to one buffer: printing an expression is linear in its size (returning strings
// level by level would copy a deep expression once per level).
// What the printed text is for: messages and reports (readable), the kernel's CUDA (which the
// CUDA compiler must not rewrite), or an exported launcher's host code (which must not trap).
enum class Target : uint8_t { Text, Device, Host };

class Printer {
 public:
  Printer(const std::vector<ArrayDecl>& arrays, std::string& out, Target target = Target::Text)
      : arrays_(arrays), out_(out), target_(target) {}
  // Host C++ (printHostExp): operations that trap or differ on the host call obsidian_host.
  Printer(const std::vector<ArrayDecl>& arrays, std::string& out, const std::string& zeroFlag)
      : arrays_(arrays), out_(out), target_(Target::Host), zeroFlag_(zeroFlag) {}
  bool divides() const { return divides_; }

  // e as the left (or right) operand of a binary operator `op` printed around it by the caller.
  void printOperandOf(BinOp op, bool right, const ExpPtr& e) {
    operand(e, binPrec(op) + (right ? 1 : 0), binPrec(op));
  }

  void print(const ExpPtr& e) {
    const ExpNode& n = *e;
    if (wrapsNarrow(n)) {
      out_ += "(" + std::string(cudaTypeName(n.type)) + ")(";
      printRaw(n);
      out_ += ")";
    } else {
      printRaw(n);
    }
  }

 private:
  void operand(const ExpPtr& child, int minPrec, int parentPrec) {
    const int p = precOf(*child);
    bool parens = p < minPrec;
    // Clarity: a bitwise/shift operator next to another class of binary operator.
    if (!parens && child->kind == ExpKind::Binary && p != kPrimary && !wrapsNarrow(*child)) {
      if ((isBitwiseOrShift(parentPrec) || isBitwiseOrShift(p)) && p != parentPrec) parens = true;
      if (parentPrec == 4 && p == 5) parens = true;  // a || (b && c)
    }
    if (parens) out_ += "(";
    print(child);
    if (parens) out_ += ")";
  }

  void printRaw(const ExpNode& n) {
    switch (n.kind) {
      case ExpKind::Literal:
        if (target_ == Target::Device && n.type == ScalarType::F64 && std::isnan(n.real)) {
          out_ += deviceF64Nan(std::bit_cast<uint64_t>(n.real));
          return;
        }
        out_ += printLiteral(n);
        return;
      case ExpKind::Var: out_ += n.name; return;
      case ExpKind::ThreadIdx: out_ += "threadIdx.x"; return;
      case ExpKind::BlockIdx: out_ += "blockIdx.x"; return;
      case ExpKind::GridDim: out_ += "gridDim.x"; return;
      case ExpKind::Index: {
        OBSIDIAN_ASSERT(n.array < arrays_.size(), "index of a known array");
        const ArrayDecl& a = arrays_[n.array];
        if (narrowLane(n)) {
          narrowLaneOf(n, a);
          return;
        }
        if (n.vecWidth > 1) {
          // One lane of a vector: the CUDA compiler merges the lanes of one vector into a
          // single wide load (ld.global.v4), which it may do since the vector type is aligned.
          static const char* lanes = "xyzw";
          out_ += "((const " + vectorTypeName(n.type, n.vecWidth) + "*)" + a.name + ")[";
          print(n.args[1]);
          out_ += "].";
          out_ += lanes[n.vecLane];
          return;
        }
        if (n.vote != WarpVote::None) {
          // Every lane's register at once. match_any has overloads of 32 and 64 bits only.
          OBSIDIAN_ASSERT(a.space == MemorySpace::Register, "votes are over register arrays");
          if (hasPreludeType(a.type)) {  // compared by their bits
            out_ += std::string(warpVoteName(n.vote)) + "(0xffffffffu, (unsigned)obsidian_bits(" +
                    a.name + "))";
            return;
          }
          out_ += std::string(warpVoteName(n.vote)) + "(0xffffffffu, " +
                  (n.vote == WarpVote::MatchAny && promoted(a.type) ? "(unsigned)" : "") + a.name +
                  ")";
          return;
        }
        if (a.space == MemorySpace::Register) {
          // The lane's own element is its register; another lane's is a shuffle.
          if (n.ownLane) {
            out_ += a.name;
            return;
          }
          if (hasPreludeType(a.type)) {  // CUDA's shuffles move words: the bits, widened
            out_ += "obsidian_make_" + smallName(a.type) + "((" + storageName(a.type) +
                    ")__shfl_sync(0xffffffffu, (unsigned)obsidian_bits(" + a.name + "), ";
            print(n.args[0]);
            out_ += "))";
            return;
          }
          out_ += "__shfl_sync(0xffffffffu, " + a.name + ", ";
          print(n.args[0]);
          out_ += ")";
          return;
        }
        // Grid state is read through L2: another block may have written it in this launch.
        const bool l2 = a.space == MemorySpace::GridState;
        if (l2 && hasPreludeType(a.type)) {  // __ldcg has no overload of obsidian_half2: its word
          out_ += "obsidian_make_" + smallName(a.type) + "(__ldcg((const " + storageName(a.type) +
                  "*)&" + a.name + "[";
          print(n.args[0]);
          out_ += "]))";
          return;
        }
        out_ += l2 ? "__ldcg(&" + a.name + "[" : a.name + "[";
        print(n.args[0]);
        out_ += l2 ? "])" : "]";
        return;
      }
      case ExpKind::Cast:
        if (smallCall(n)) {
          smallCast(n);
          return;
        }
        if (host() && isFloat(n.args[0]->type) && isInteger(n.type)) {  // saturating, NaN 0
          call("obsidian_host::toInteger<" + std::string(cudaTypeName(n.type)) + ">", n.args[0]);
          return;
        }
        if (target_ == Target::Device && isFloat(n.args[0]->type) && isFloat(n.type)) {
          // Between f32 and f64 through inline PTX, which the CUDA compiler cannot see into:
          // it would otherwise fold (float)(double)x to x and narrow f64 arithmetic on
          // widened f32 values to f32 arithmetic, which makes other NaN bits than the
          // conversions the program wrote (and the simulator runs).
          const bool widen = n.type == ScalarType::F64;
          out_ += widen ? "[](float x) { double r; asm(\"cvt.f64.f32 %0, %1;\" : \"=d\"(r) : "
                          "\"f\"(x)); return r; }("
                        : "[](double x) { float r; asm(\"cvt.rn.f32.f64 %0, %1;\" : \"=f\"(r) : "
                          "\"d\"(x)); return r; }(";
          print(n.args[0]);
          out_ += ")";
          return;
        }
        out_ += "(" + std::string(cudaTypeName(n.type)) + ")";
        operand(n.args[0], kUnary, kUnary);
        return;
      case ExpKind::BitCast: bitcast(n); return;
      case ExpKind::Select:
        operand(n.args[0], kSelect + 1, kSelect);
        out_ += " ? ";
        operand(n.args[1], kSelect + 1, kSelect);
        out_ += " : ";
        operand(n.args[2], kSelect, kSelect);
        return;
      case ExpKind::Unary: unary(n); return;
      case ExpKind::Binary: binary(n); return;
      case ExpKind::Fma: pairOperation(n); return;
    }
  }

  // Lane l of a vector of u8 or u16 elements, which CUDA has no 16-byte vector type of: the
  // vector is read as 32-bit words (uint4, uint2, or one uint32_t; a uint16_t for two u8), and
  // the lane is the bits of its word at its byte offset (little-endian, as in memory), shifted
  // down and cast to the element type: (uint8_t)(((const uint4*)in0)[v].y >> 8u). The lanes of
  // one vector read the same aligned words, which the CUDA compiler merges into one load
  // (ld.global.v4.u32) and extracts the lanes from with shifts.
  void narrowLaneOf(const ExpNode& n, const ArrayDecl& a) {
    static const char* lanes = "xyzw";
    const uint32_t size = sizeOf(n.type), bytes = n.vecWidth * size;
    const uint32_t wordBytes = std::min(bytes, 4u);
    const uint32_t offset = n.vecLane * size;  // bytes into the vector
    const std::string word =
        bytes >= 8 ? "uint" + std::to_string(bytes / 4) : (bytes == 4 ? "uint32_t" : "uint16_t");
    const uint32_t shift = 8 * (offset % wordBytes);
    const bool small = hasPreludeType(n.type);  // its bits, made a value of its type
    if (small) {
      out_ += "obsidian_make_" + smallName(n.type) + "((" + storageName(n.type) + ")";
    } else {
      out_ += "(" + std::string(cudaTypeName(n.type)) + ")";
    }
    if (shift > 0) out_ += "(";
    out_ += "((const " + word + "*)" + a.name + ")[";
    print(n.args[1]);
    out_ += "]";
    if (bytes >= 8) {
      out_ += ".";
      out_ += lanes[offset / wordBytes];
    }
    if (shift > 0) out_ += " >> " + std::to_string(shift) + "u)";
    if (small) out_ += ")";
  }

  void call(const std::string& fn, const ExpPtr& a) {
    out_ += fn + "(";
    print(a);
    out_ += ")";
  }
  void call(const std::string& fn, const ExpPtr& a, const ExpPtr& b) {
    out_ += fn + "(";
    print(a);
    out_ += ", ";
    print(b);
    out_ += ")";
  }

  // Conversions to and from the small floats (ir::cast leaves only these): to f32 exactly; to a
  // small float from f32 by cvt.rn, from f64, u32, i32 and u64 through an f32 rounded to odd
  // (obsidian_odd), which cvt.rn then rounds as if from the exact value.
  void smallCast(const ExpNode& n) {
    const ScalarType from = n.args[0]->type, to = n.type;
    if (host()) {
      throw Error("export: a launch-time expression converts " + std::string(cudaTypeName(from)) +
                  " to " + std::string(cudaTypeName(to)) +
                  ": half precision and fp8 values are computed on the GPU only");
    }
    if (isSmallFloat(from)) {
      OBSIDIAN_ASSERT(to == ScalarType::F32, "small floats convert through f32 (ir::cast)");
      call("obsidian_to_float", n.args[0]);
      return;
    }
    out_ += "obsidian_to_" + smallName(to) + "(";
    if (from == ScalarType::F32) {
      print(n.args[0]);
    } else {
      OBSIDIAN_ASSERT(from == ScalarType::F64 || from == ScalarType::U32 ||
                          from == ScalarType::I32 || from == ScalarType::U64,
                      "wide types convert to small floats directly (ir::cast)");
      call("obsidian_odd", n.args[0]);
    }
    out_ += ")";
  }

  // An operand of a small float operation, as the f32 it is computed in.
  void asF32(const ExpPtr& e) { call("obsidian_to_float", e); }
  // The same as f64 (for the operations computed in f64: exact, as every f32 is a double).
  void asF64(const ExpPtr& e) {
    out_ += "(double)";
    asF32(e);
  }

  // A small float operation: computed in f32 (+ - * / min max sqrt fabs floor ceil, and neg) or
  // f64 (the transcendental functions, rsqrt and pow, then rounded to odd), rounded back once.
  void smallOperation(const ExpNode& n) {
    const ScalarType t = n.args[0]->type;
    if (host()) {
      throw Error("export: a launch-time expression computes with " +
                  std::string(cudaTypeName(t)) +
                  ": half precision and fp8 values are computed on the GPU only");
    }
    if (n.kind == ExpKind::Binary && isComparison(n.binOp)) {
      asF32(n.args[0]);
      out_ += std::string(" ") + binOpName(n.binOp) + " ";
      asF32(n.args[1]);
      return;
    }
    out_ += "obsidian_to_" + smallName(t) + "(";
    if (n.kind == ExpKind::Binary) {
      switch (n.binOp) {
        case BinOp::Min:
        case BinOp::Max:
          out_ += n.binOp == BinOp::Min ? "fminf(" : "fmaxf(";
          asF32(n.args[0]);
          out_ += ", ";
          asF32(n.args[1]);
          out_ += ")";
          break;
        case BinOp::Pow:
          out_ += "obsidian_odd(pow(";
          asF64(n.args[0]);
          out_ += ", ";
          asF64(n.args[1]);
          out_ += "))";
          break;
        default:
          asF32(n.args[0]);
          out_ += std::string(" ") + binOpName(n.binOp) + " ";
          asF32(n.args[1]);
      }
    } else {
      switch (n.unOp) {
        case UnOp::Neg:
          out_ += "-";
          asF32(n.args[0]);
          break;
        case UnOp::Sqrt:
        case UnOp::Fabs:
        case UnOp::Floor:
        case UnOp::Ceil:
          out_ += mathName(unOpName(n.unOp), ScalarType::F32) + "(";
          asF32(n.args[0]);
          out_ += ")";
          break;
        case UnOp::Rsqrt:
          out_ += "obsidian_odd(1.0 / sqrt(";
          asF64(n.args[0]);
          out_ += "))";
          break;
        default:
          out_ += std::string("obsidian_odd(") + unOpName(n.unOp) + "(";
          asF64(n.args[0]);
          out_ += "))";
      }
    }
    out_ += ")";
  }

  // An operation on pairs: the prelude's function of the packed instruction, named after CUDA's
  // intrinsic (obsidian_hadd2 is __hadd2_rn: add.rn.f16x2, which the compiler may not contract).
  void pairOperation(const ExpNode& n) {
    const ScalarType t = n.type;
    if (host()) {
      throw Error("export: a launch-time expression computes with " + std::string(cudaTypeName(t)) +
                  ": half precision pairs are computed on the GPU only");
    }
    std::string fn;
    if (n.kind == ExpKind::Fma) {
      fn = "obsidian_hfma2";
    } else if (n.kind == ExpKind::Unary) {
      fn = n.unOp == UnOp::Neg ? "obsidian_hneg2" : "obsidian_habs2";
    } else {
      switch (n.binOp) {
        case BinOp::Add: fn = "obsidian_hadd2"; break;
        case BinOp::Sub: fn = "obsidian_hsub2"; break;
        case BinOp::Mul: fn = "obsidian_hmul2"; break;
        case BinOp::Min: fn = "obsidian_hmin2"; break;
        case BinOp::Max: fn = "obsidian_hmax2"; break;
        default: OBSIDIAN_ASSERT(false, std::string("pairs have no ") + binOpName(n.binOp));
      }
    }
    out_ += fn + "(";
    const size_t arity = n.kind == ExpKind::Fma ? 3 : n.kind == ExpKind::Binary ? 2 : 1;
    for (size_t i = 0; i < arity; ++i) {
      if (i > 0) out_ += ", ";
      print(n.args[i]);
    }
    out_ += ")";
  }

  // CUDA's reinterpreting intrinsics; between the integers of one size, a cast (the same bits).
  void bitcast(const ExpNode& n) {
    const ScalarType from = n.args[0]->type, to = n.type;
    if (hasPreludeType(to) || hasPreludeType(from)) {
      OBSIDIAN_ASSERT(!(hasPreludeType(to) && hasPreludeType(from)), "bitcast to or from a word");
      if (host()) {  // obsidian_bits and obsidian_make_* are device functions
        throw Error("export: a launch-time expression reads " +
                    std::string(cudaTypeName(hasPreludeType(to) ? to : from)) +
                    " as bits: half precision, pair and fp8 values are computed on the GPU only");
      }
      if (hasPreludeType(to)) {
        call("obsidian_make_" + smallName(to), n.args[0]);
      } else {
        call("obsidian_bits", n.args[0]);
      }
      return;
    }
    std::string call, after;
    if (to == ScalarType::F32) {
      call = from == ScalarType::I32 ? "__int_as_float(" : "__uint_as_float(";
    } else if (from == ScalarType::F32) {
      call = to == ScalarType::I32 ? "__float_as_int(" : "__float_as_uint(";
    } else if (to == ScalarType::F64) {
      call = "__longlong_as_double((long long)";
    } else if (from == ScalarType::F64) {
      call = "((uint64_t)__double_as_longlong(";
      after = ")";
    } else {
      call = "((" + std::string(cudaTypeName(to)) + ")";
    }
    out_ += call;
    if (call.back() == ')') {
      operand(n.args[0], kUnary, kUnary);  // after a cast
    } else {
      print(n.args[0]);  // a call's whole argument
    }
    out_ += after + ")";
  }

  void unary(const ExpNode& n) {
    const ScalarType t = n.type;
    if (isPair(t)) {
      pairOperation(n);
      return;
    }
    if (isSmallFloat(t)) {
      smallOperation(n);
      return;
    }
    switch (n.unOp) {
      case UnOp::Neg:
      case UnOp::Not:
      case UnOp::BitNot: {
        out_ += unOpName(n.unOp);
        // "- -x" must not print as "--x": an operand that starts with a sign gets parentheses.
        const size_t at = out_.size();
        operand(n.args[0], kUnary, kUnary);
        const char c = out_.size() > at ? out_[at] : '\0';
        if (c == '-' || c == '!' || c == '~') {
          out_.insert(at, 1, '(');
          out_ += ")";
        }
        return;
      }
      case UnOp::Abs:
        call("abs", n.args[0]);
        return;
      OBSIDIAN_BIT_UNOPS: {
        // CUDA's are int (__popc, __clz, __ffs) or unsigned (__brev) of 32 bits, or take long
        // long (the ll forms): cast to the word, so that arithmetic on the result is the word's.
        const bool wide = t == ScalarType::U64;
        out_ += std::string("(") + (wide ? "uint64_t" : "uint32_t") + ")";
        call(std::string("__") + unOpName(n.unOp) + (wide ? "ll" : ""), n.args[0]);
        return;
      }
      OBSIDIAN_FLOAT_MATH_UNOPS:
        call(mathName(unOpName(n.unOp), t), n.args[0]);
        return;
    }
  }

  void binary(const ExpNode& n) {
    const ScalarType t = n.args[0]->type;
    if (isPair(t)) {
      pairOperation(n);
      return;
    }
    if (isSmallFloat(t)) {
      smallOperation(n);
      return;
    }
    switch (n.binOp) {
      case BinOp::Min:
      case BinOp::Max: {
        if (isFloat(t)) {
          call(mathName(n.binOp == BinOp::Min ? "fmin" : "fmax", t), n.args[0], n.args[1]);
          return;
        }
        if (promoted(t)) {
          // CUDA's min/max have no overloads for narrow types: compare them as int's width.
          const std::string wide = isSigned(t) ? "(int)" : "(unsigned int)";
          out_ += std::string(binOpName(n.binOp)) + "(" + wide;
          operand(n.args[0], kUnary, kUnary);
          out_ += ", " + wide;
          operand(n.args[1], kUnary, kUnary);
          out_ += ")";
          return;
        }
        call(binOpName(n.binOp), n.args[0], n.args[1]);
        return;
      }
      case BinOp::Pow: call(mathName("pow", t), n.args[0], n.args[1]); return;
      case BinOp::Div:
      case BinOp::Mod:
        // On the host, a zero divisor traps and INT_MIN / -1 overflows: both are checked.
        if (host() && !isFloat(t) &&
            (!n.args[1]->isLiteral() || (isSigned(t) && n.args[1]->bits == typeMask(t)))) {
          divides_ = divides_ || !n.args[1]->isLiteral();
          out_ += std::string(n.binOp == BinOp::Div ? "obsidian_host::divide<"
                                                    : "obsidian_host::remainder<") +
                  std::string(cudaTypeName(t)) + ">(";
          print(n.args[0]);
          out_ += ", ";
          print(n.args[1]);
          out_ += ", " + zeroFlag_ + ")";
          return;
        }
        break;
      case BinOp::Shl:
      case BinOp::Shr:
        // A host shift by the width or more is undefined; PTX clamps it (as evalBinary).
        if (host() && !n.args[1]->isLiteral()) {
          call(std::string(n.binOp == BinOp::Shl ? "obsidian_host::shiftLeft<"
                                                 : "obsidian_host::shiftRight<") +
                   std::string(cudaTypeName(t)) + ">",
               n.args[0], n.args[1]);
          return;
        }
        break;
      default: break;
    }
    const int p = binPrec(n.binOp);
    if (widensLeft(n.binOp, t)) {
      out_ += "(unsigned int)";
      operand(n.args[0], kUnary, kUnary);
    } else {
      operand(n.args[0], p, p);
    }
    out_ += " ";
    out_ += binOpName(n.binOp);
    out_ += " ";
    operand(n.args[1], p + 1, p);
  }

  bool host() const { return target_ == Target::Host; }

  const std::vector<ArrayDecl>& arrays_;
  std::string& out_;
  Target target_;
  std::string zeroFlag_;  // host printing: the bool a zero divisor sets
  bool divides_ = false;  // host printing: a checked division was printed
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
    case ScalarType::F16:
    case ScalarType::BF16:
    case ScalarType::E4M3:
    case ScalarType::E5M2: {  // its bits (NaNs included)
      char buf[48];
      std::snprintf(buf, sizeof buf, "obsidian_make_%s(0x%x)", smallName(e.type).c_str(),
                    detail::smallFloatBits(*scalarInfo(e.type).small, e.real));
      return buf;
    }
    case ScalarType::F16x2:
    case ScalarType::BF16x2: {  // its word
      char buf[48];
      std::snprintf(buf, sizeof buf, "obsidian_make_%s(0x%08xu)", smallName(e.type).c_str(),
                    static_cast<unsigned>(e.bits));
      return buf;
    }
    case ScalarType::Bool: return e.bits ? "true" : "false";
    case ScalarType::U8: return "(uint8_t)" + std::to_string(e.bits);
    case ScalarType::U16: return "(uint16_t)" + std::to_string(e.bits);
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
      if (std::isnan(e.real)) {  // its exact bits: sign, payload, signalling bit
        char buf[64];
        if (single) {
          std::snprintf(buf, sizeof buf, "__int_as_float(0x%08x)",
                        std::bit_cast<uint32_t>(detail::narrowF32(e.real)));
        } else {
          std::snprintf(buf, sizeof buf, "__longlong_as_double(0x%016llxll)",
                        static_cast<unsigned long long>(std::bit_cast<uint64_t>(e.real)));
        }
        return buf;
      }
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
  std::string out;
  Printer(arrays, out).print(e);
  return out;
}

std::string printCudaExp(const ExpPtr& e, const std::vector<ArrayDecl>& arrays) {
  std::string out;
  Printer(arrays, out, Target::Device).print(e);
  return out;
}

std::string printHostExp(const ExpPtr& e, const std::vector<ArrayDecl>& arrays,
                         const std::string& zeroFlag, bool* divides) {
  OBSIDIAN_ASSERT(!zeroFlag.empty(), "host printing names its zero flag");
  std::string out;
  Printer printer(arrays, out, zeroFlag);
  printer.print(e);
  if (divides) *divides = printer.divides();
  return out;
}

std::string printHostArithmetic() {
  // Guarded: several exported headers may be included in one translation unit.
  return R"(#ifndef obsidian_host_arithmetic_1
#define obsidian_host_arithmetic_1
// Launch-time arithmetic as the GPU computes it, without the traps and undefined cases of host
// arithmetic: a zero divisor sets `zero` (the launcher then returns cudaErrorInvalidValue),
// INT_MIN / -1 is INT_MIN, shifts by the width or more are clamped, float -> integer saturates
// (NaN: 0).
namespace obsidian_host {
template <class T>
inline T divide(T x, T y, bool& zero) {
  if (y == 0) { zero = true; return 0; }
  if (std::is_signed<T>::value && y == (T)-1) return (T)(0ull - (unsigned long long)x);
  return (T)(x / y);
}
template <class T>
inline T remainder(T x, T y, bool& zero) {
  if (y == 0) { zero = true; return 0; }
  if (std::is_signed<T>::value && y == (T)-1) return 0;
  return (T)(x % y);
}
template <class T>
inline T shiftLeft(T x, T y) {
  return (unsigned long long)y >= 8 * sizeof(T) ? (T)0 : (T)((unsigned long long)x << y);
}
template <class T>
inline T shiftRight(T x, T y) {
  const unsigned long long width = 8 * sizeof(T);
  if (std::is_signed<T>::value) return (T)(x >> ((unsigned long long)y < width ? y : width - 1));
  return (unsigned long long)y >= width ? (T)0 : (T)(x >> y);
}
template <class T, class F>
inline T toInteger(F v) {
  if (v != v) return 0;
  if (v <= (F)std::numeric_limits<T>::min()) return std::numeric_limits<T>::min();
  if (v >= (F)std::numeric_limits<T>::max()) return std::numeric_limits<T>::max();
  return (T)v;
}
}  // namespace obsidian_host
#endif
)";
}

std::string printSmallFloatPrelude() {
  // Every conversion is one PTX instruction whose rounding and NaNs the simulator copies
  // (half.hpp): cvt.rn to the format (any NaN -> 0x7fff, fp8 0x7f; fp8 saturates), back to f32
  // exactly (cvt.f32.f16: any NaN -> 0x7fffffff; bf16 is a shift). obsidian_odd rounds f64 and
  // wide integers to an f32 rounded to odd, which cvt.rn then rounds as the exact value.
  return R"(#ifndef obsidian_small_floats_1
#define obsidian_small_floats_1
#if defined(__CUDACC_RTC__)
struct __align__(2) obsidian_half { unsigned short x; };
struct __align__(2) obsidian_bfloat16 { unsigned short x; };
struct obsidian_fp8_e4m3 { unsigned char x; };
struct obsidian_fp8_e5m2 { unsigned char x; };
struct __align__(4) obsidian_half2 { unsigned int x; };
struct __align__(4) obsidian_bfloat162 { unsigned int x; };
#define obsidian_small_bits(obsidian_type, obsidian_make, obsidian_storage) \
  static __device__ __forceinline__ obsidian_storage obsidian_bits(obsidian_type v) { return v.x; } \
  static __device__ __forceinline__ obsidian_type obsidian_make(obsidian_storage b) { obsidian_type v; v.x = b; return v; }
#else
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
typedef __half obsidian_half;
typedef __nv_bfloat16 obsidian_bfloat16;
typedef __nv_fp8_e4m3 obsidian_fp8_e4m3;
typedef __nv_fp8_e5m2 obsidian_fp8_e5m2;
typedef __half2 obsidian_half2;
typedef __nv_bfloat162 obsidian_bfloat162;
#define obsidian_small_bits(obsidian_type, obsidian_make, obsidian_storage) \
  static __device__ __forceinline__ obsidian_storage obsidian_bits(obsidian_type v) { obsidian_storage b; memcpy(&b, &v, sizeof b); return b; } \
  static __device__ __forceinline__ obsidian_type obsidian_make(obsidian_storage b) { obsidian_type v; memcpy(&v, &b, sizeof b); return v; }
#endif
obsidian_small_bits(obsidian_half, obsidian_make_half, unsigned short)
obsidian_small_bits(obsidian_bfloat16, obsidian_make_bfloat16, unsigned short)
obsidian_small_bits(obsidian_fp8_e4m3, obsidian_make_fp8_e4m3, unsigned char)
obsidian_small_bits(obsidian_fp8_e5m2, obsidian_make_fp8_e5m2, unsigned char)
obsidian_small_bits(obsidian_half2, obsidian_make_half2, unsigned int)
obsidian_small_bits(obsidian_bfloat162, obsidian_make_bfloat162, unsigned int)
#undef obsidian_small_bits
// Pairs: CUDA's packed intrinsics as the PTX they are, in both builds (so an exported header
// under nvcc runs the same instructions): the _rn forms of + - * (no contraction into an fma);
// neg and abs as the sign bits (neg.f16x2 leaves a NaN's bits unspecified).
#define obsidian_pair_op2(obsidian_type, obsidian_make, obsidian_name, obsidian_ptx) \
  static __device__ __forceinline__ obsidian_type obsidian_name(obsidian_type x, obsidian_type y) { \
    unsigned int r; asm(obsidian_ptx " %0, %1, %2;" : "=r"(r) : "r"(obsidian_bits(x)), "r"(obsidian_bits(y))); \
    return obsidian_make(r); }
#define obsidian_pair_ops(obsidian_type, obsidian_make, obsidian_f) \
  obsidian_pair_op2(obsidian_type, obsidian_make, obsidian_hadd2, "add.rn." obsidian_f "x2") \
  obsidian_pair_op2(obsidian_type, obsidian_make, obsidian_hsub2, "sub.rn." obsidian_f "x2") \
  obsidian_pair_op2(obsidian_type, obsidian_make, obsidian_hmul2, "mul.rn." obsidian_f "x2") \
  obsidian_pair_op2(obsidian_type, obsidian_make, obsidian_hmin2, "min." obsidian_f "x2") \
  obsidian_pair_op2(obsidian_type, obsidian_make, obsidian_hmax2, "max." obsidian_f "x2") \
  static __device__ __forceinline__ obsidian_type obsidian_hfma2(obsidian_type x, obsidian_type y, obsidian_type v) { \
    unsigned int r; \
    asm("fma.rn." obsidian_f "x2 %0, %1, %2, %3;" : "=r"(r) : "r"(obsidian_bits(x)), "r"(obsidian_bits(y)), "r"(obsidian_bits(v))); \
    return obsidian_make(r); } \
  static __device__ __forceinline__ obsidian_type obsidian_hneg2(obsidian_type x) { return obsidian_make(obsidian_bits(x) ^ 0x80008000u); } \
  static __device__ __forceinline__ obsidian_type obsidian_habs2(obsidian_type x) { return obsidian_make(obsidian_bits(x) & 0x7fff7fffu); }
obsidian_pair_ops(obsidian_half2, obsidian_make_half2, "f16")
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
obsidian_pair_ops(obsidian_bfloat162, obsidian_make_bfloat162, "bf16")
#endif
#undef obsidian_pair_ops
#undef obsidian_pair_op2
static __device__ __forceinline__ float obsidian_to_float(obsidian_half v) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(obsidian_bits(v))); return f;
}
static __device__ __forceinline__ float obsidian_to_float(obsidian_bfloat16 v) {
  return __uint_as_float((unsigned)obsidian_bits(v) << 16);
}
static __device__ __forceinline__ obsidian_half obsidian_to_half(float f) {
  unsigned short b; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(f)); return obsidian_make_half(b);
}
static __device__ __forceinline__ obsidian_bfloat16 obsidian_to_bfloat16(float f) {
  unsigned short b; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return obsidian_make_bfloat16(b);
}
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
static __device__ __forceinline__ float obsidian_to_float(obsidian_fp8_e4m3 v) {
  float f; asm("{ .reg .b32 p; .reg .b16 lo, hi; cvt.rn.f16x2.e4m3x2 p, %1; mov.b32 {lo, hi}, p; "
               "cvt.f32.f16 %0, lo; }" : "=f"(f) : "h"((unsigned short)obsidian_bits(v)));
  return f;
}
static __device__ __forceinline__ float obsidian_to_float(obsidian_fp8_e5m2 v) {
  float f; asm("{ .reg .b32 p; .reg .b16 lo, hi; cvt.rn.f16x2.e5m2x2 p, %1; mov.b32 {lo, hi}, p; "
               "cvt.f32.f16 %0, lo; }" : "=f"(f) : "h"((unsigned short)obsidian_bits(v)));
  return f;
}
static __device__ __forceinline__ obsidian_fp8_e4m3 obsidian_to_fp8_e4m3(float f) {
  unsigned short b; asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %1;" : "=h"(b) : "f"(f));
  return obsidian_make_fp8_e4m3((unsigned char)b);
}
static __device__ __forceinline__ obsidian_fp8_e5m2 obsidian_to_fp8_e5m2(float f) {
  unsigned short b; asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %1;" : "=h"(b) : "f"(f));
  return obsidian_make_fp8_e5m2((unsigned char)b);
}
#endif
static __device__ __forceinline__ obsidian_half obsidian_atomic_add(obsidian_half* x, obsidian_half v) {
  unsigned short r;
  asm volatile("atom.add.noftz.f16 %0, [%1], %2;" : "=h"(r) : "l"(x), "h"(obsidian_bits(v)) : "memory");
  return obsidian_make_half(r);
}
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
static __device__ __forceinline__ obsidian_bfloat16 obsidian_atomic_add(obsidian_bfloat16* x, obsidian_bfloat16 v) {
  unsigned short r;
  asm volatile("atom.add.noftz.bf16 %0, [%1], %2;" : "=h"(r) : "l"(x), "h"(obsidian_bits(v)) : "memory");
  return obsidian_make_bfloat16(r);
}
static __device__ __forceinline__ obsidian_bfloat162 obsidian_atomic_add(obsidian_bfloat162* x, obsidian_bfloat162 v) {
  unsigned int r;
  asm volatile("atom.add.noftz.bf16x2 %0, [%1], %2;" : "=r"(r) : "l"(x), "r"(obsidian_bits(v)) : "memory");
  return obsidian_make_bfloat162(r);
}
#endif
static __device__ __forceinline__ obsidian_half2 obsidian_atomic_add(obsidian_half2* x, obsidian_half2 v) {
  unsigned int r;
  asm volatile("atom.add.noftz.f16x2 %0, [%1], %2;" : "=r"(r) : "l"(x), "r"(obsidian_bits(v)) : "memory");
  return obsidian_make_half2(r);
}
static __device__ __forceinline__ float obsidian_odd(double x) {
  float r; asm("cvt.rz.f32.f64 %0, %1;" : "=f"(r) : "d"(x));
  return (double)r != x ? __uint_as_float(__float_as_uint(r) | 1u) : r;
}
static __device__ __forceinline__ float obsidian_odd(uint32_t x) { return obsidian_odd((double)x); }
static __device__ __forceinline__ float obsidian_odd(int32_t x) { return obsidian_odd((double)x); }
static __device__ __forceinline__ float obsidian_odd(uint64_t x) {
  float r; asm("cvt.rz.f32.u64 %0, %1;" : "=f"(r) : "l"(x));
  return (uint64_t)r != x ? __uint_as_float(__float_as_uint(r) | 1u) : r;
}
#endif
)";
}

std::string printOperand(BinOp op, bool right, const ExpPtr& e,
                         const std::vector<ArrayDecl>& arrays) {
  std::string out;
  Printer(arrays, out, Target::Device).printOperandOf(op, right, e);
  return out;
}

}  // namespace obsidian::ir
