// Binding and checking launch arguments (see include/obsidian/arguments.hpp).
#include "obsidian/arguments.hpp"

#include "ir/deep_stack.hpp"
#include "ir/ir_walk.hpp"
#include "ir/print.hpp"
#include "ir/scalar_ops.hpp"

namespace obsidian {

std::string KernelArg::describe() const {
  const std::string t(cudaTypeName(type_));
  if (kind_ == Kind::Scalar) return "a " + t + " scalar";
  return std::string(writable_ ? "a writable " : "a read-only ") + (device_ ? "device " : "") +
         "array of " + std::to_string(count_) + " " + t;
}

namespace {

std::string expected(const KernelIR& k, const Param& p) {
  const std::string t(cudaTypeName(p.type));
  if (p.kind == ParamKind::Scalar) return p.name + ": " + t + " scalar";
  const bool writes = p.output || k.arrays[p.array].writable;
  return p.name + ": " + (writes ? "writable " : "") + t + " array";
}

size_t paramIndex(const KernelIR& k, const std::string& name) {
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (k.params[i].kind != ParamKind::Array && k.params[i].name == name) return i;
  }
  throw InternalError("launch of kernel " + k.name + ": " + name + " is not a parameter");
}

// Evaluates e directly (no nodes are built); parameters not yet bound read as 0. An integer
// division or remainder by zero does not throw: it reads as 0 and the first such divisor is
// kept in `zeroDivisor`, for the caller to report as the failure of what it evaluated (a
// precondition, a length, the grid). As on the GPU, && and || and selects evaluate only the
// operands that decide them, so `g != 0 && n / g > 2` never divides by zero.
struct Evaluator {
  const KernelIR& k;
  const BoundArguments& b;
  ExpPtr zeroDivisor = nullptr;

  ir::Value operator()(const ExpPtr& e) {
    switch (e->kind) {
      case ExpKind::Literal: return ir::literalValue(*e);
      case ExpKind::Var: {
        const size_t i = paramIndex(k, e->name);
        return isFloat(e->type) ? ir::realValue(b.reals[i]) : ir::intValue(b.bits[i]);
      }
      case ExpKind::Unary: return ir::evalUnary(e->unOp, e->args[0]->type, (*this)(e->args[0]));
      case ExpKind::Binary: {
        const ScalarType t = e->args[0]->type;
        const ir::Value x = (*this)(e->args[0]);
        if (e->binOp == BinOp::And && !x.u) return ir::intValue(0);
        if (e->binOp == BinOp::Or && x.u) return ir::intValue(1);
        const ir::Value y = (*this)(e->args[1]);
        if ((e->binOp == BinOp::Div || e->binOp == BinOp::Mod) && !isFloat(t) &&
            (y.u & ir::typeMask(t)) == 0) {
          if (!zeroDivisor) zeroDivisor = e->args[1];
          return ir::intValue(0);
        }
        return ir::evalBinary(e->binOp, t, x, y);
      }
      case ExpKind::Select:
        return (*this)(e->args[0]).u ? (*this)(e->args[1]) : (*this)(e->args[2]);
      case ExpKind::Cast: return ir::evalCast(e->type, e->args[0]->type, (*this)(e->args[0]));
      case ExpKind::BitCast: return ir::evalBitCast(e->type, e->args[0]->type, (*this)(e->args[0]));
      case ExpKind::Fma:
        return ir::evalFma(e->type, (*this)(e->args[0]), (*this)(e->args[1]), (*this)(e->args[2]));
      case ExpKind::ThreadIdx:
      case ExpKind::BlockIdx:
      case ExpKind::GridDim:
      case ExpKind::Index: break;
    }
    throw InternalError("launch of kernel " + k.name +
                        ": host expressions use only parameters and literals");
  }
};

// "g = 0, n0 = 12": the values of the parameters e uses.
std::string valuesIn(const KernelIR& k, const ExpPtr& e, const BoundArguments& b) {
  std::string values;
  std::set<std::string> vars;
  ir::varsIn(e, vars);
  for (const std::string& v : vars) {
    const size_t i = paramIndex(k, v);
    values += (values.empty() ? "" : ", ") + v + " = " +
              (isFloat(k.params[i].type) ? std::to_string(b.reals[i]) : std::to_string(b.bits[i]));
  }
  return values;
}

// The value of `e`, which describes `what` ("the length of out0"), or the Error for a zero
// divisor in it, naming the kernel, `what`, the divisor and the values.
uint64_t evaluate(const KernelIR& k, const ExpPtr& e, const BoundArguments& b,
                  const std::string& what, bool launching = true) {
  Evaluator eval{k, b};
  const uint64_t v = eval(e).u;
  if (eval.zeroDivisor) {
    throw Error((launching ? "launch of kernel " : "kernel ") + k.name + ": " + what + " (" +
                ir::printExp(e, k.arrays) +
                ") divides by zero: " + ir::printExp(eval.zeroDivisor, k.arrays) + " is 0 with " +
                valuesIn(k, e, b) + (launching ? "; nothing was launched" : ""));
  }
  return v;
}

// An array the kernel writes must not share bytes with any other array argument: threads read
// and write them in no fixed order, so the result would be none that the kernel describes
// (and the simulator, running threads in one order, would show one the GPU need not give).
void checkNoOverlap(const KernelIR& k, const BoundArguments& b, const std::vector<size_t>& argOf) {
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param& p = k.params[i];
    if (p.kind != ParamKind::Array || !(p.output || k.arrays[p.array].writable)) continue;
    const KernelArg& w = *b.arrays[i];
    for (size_t j = 0; j < k.params.size(); ++j) {
      const Param& q = k.params[j];
      if (j == i || q.kind != ParamKind::Array) continue;
      const KernelArg& o = *b.arrays[j];
      if (w.onDevice() != o.onDevice() || w.count() == 0 || o.count() == 0) continue;
      const uintptr_t wa = reinterpret_cast<uintptr_t>(w.data());
      const uintptr_t oa = reinterpret_cast<uintptr_t>(o.data());
      const uintptr_t wEnd = wa + w.count() * sizeOf(w.type());
      const uintptr_t oEnd = oa + o.count() * sizeOf(o.type());
      if (wa < oEnd && oa < wEnd) {
        const bool qWrites = q.output || k.arrays[q.array].writable;
        throw Error("launch of kernel " + k.name + ": argument " + std::to_string(argOf[i]) + " (" +
                    p.name + ") overlaps argument " + std::to_string(argOf[j]) + " (" + q.name +
                    "): the kernel writes " + p.name + " while it " +
                    (qWrites ? "writes " : "reads ") + q.name +
                    ", in no fixed order; pass buffers that do not overlap");
      }
    }
  }
}

}  // namespace

uint32_t maxRealBlocks(uint32_t threadsPerBlock) {
  OBSIDIAN_ASSERT(threadsPerBlock > 0, "capture checks threadsPerBlock");
  return std::min<uint32_t>(0x7fffffffu, 0xffffffffu / threadsPerBlock);
}

uint32_t realBlocks(const KernelIR& k, const BoundArguments& b, uint32_t requested,
                    const std::string& who) {
  const uint32_t most = maxRealBlocks(k.threadsPerBlock);
  if (requested == 0) return std::min(b.gridBlocks, most);
  if (requested > most) {
    throw Error(who + " of kernel " + k.name + ": " + std::to_string(requested) +
                " blocks; at most " + std::to_string(most) + " real blocks of " +
                std::to_string(k.threadsPerBlock) +
                " threads (CUDA allows 2^31 - 1, and every thread's index and the grid's "
                "stride must fit in 32 bits); virtual blocks loop over fewer real ones");
  }
  return requested;
}

uint64_t evaluateParams(const KernelIR& k, const ExpPtr& e, const BoundArguments& b) {
  return evaluate(k, e, b, "an expression over its parameters", false);
}

namespace {
BoundArguments bindOn(const KernelIR& k, const std::vector<KernelArg>& args);
}

BoundArguments bindArguments(const KernelIR& k, const std::vector<KernelArg>& args) {
  // eval recurses: host expressions deeper than a thread's stack allows get a larger one.
  uint32_t depth = k.gridBlocks ? k.gridBlocks->depth : 0;
  for (const Param& p : k.params) depth = std::max(depth, p.length ? p.length->depth : 0);
  for (const Precondition& c : k.preconditions) depth = std::max(depth, c.holds->depth);
  return ir::withStackFor(depth, [&] { return bindOn(k, args); });
}

namespace {
BoundArguments bindOn(const KernelIR& k, const std::vector<KernelArg>& args) {
  auto where = [&] { return "launch of kernel " + k.name + ": "; };
  size_t passed = 0;  // parameters the caller passes (not lengths)
  for (const Param& p : k.params) passed += p.kind != ParamKind::Length;
  if (args.size() != passed) {
    std::string list;
    for (const Param& p : k.params) {
      if (p.kind != ParamKind::Length) list += (list.empty() ? "" : ", ") + expected(k, p);
    }
    throw Error(where() + "expected " + std::to_string(passed) + " argument(s) (" + list +
                "); got " + std::to_string(args.size()));
  }
  BoundArguments b;
  const size_t n = k.params.size();
  b.arrays.assign(n, nullptr);
  b.bits.assign(n, 0);
  b.reals.assign(n, 0.0);
  b.lengths.assign(n, 0);
  std::vector<bool> lengthSet(n, false);
  std::vector<size_t> argOf(n, 0);  // parameter -> argument position, for messages
  size_t a = 0;
  for (size_t pi = 0; pi < n; ++pi) {
    const Param& p = k.params[pi];
    if (p.kind == ParamKind::Length) continue;
    const size_t argIndex = a++;
    argOf[pi] = argIndex;
    const KernelArg& arg = args[argIndex];
    auto which = [&] { return "argument " + std::to_string(argIndex) + " (" + p.name + ") "; };
    const bool wantArray = p.kind == ParamKind::Array;
    if (wantArray != (arg.kind() == KernelArg::Kind::Array) || arg.type() != p.type) {
      throw Error(where() + which() + "must be " +
                  (wantArray ? "an array of " : "a scalar of type ") +
                  std::string(cudaTypeName(p.type)) + "; got " + arg.describe());
    }
    if (!wantArray) {
      b.bits[pi] = arg.bits();
      b.reals[pi] = arg.real();
      continue;
    }
    if (arg.data() == nullptr && arg.count() > 0)
      throw Error(where() + which() + "is a null array");
    const uint32_t align = k.arrays[p.array].alignment;
    if (align > 1 && reinterpret_cast<uintptr_t>(arg.data()) % align != 0) {
      throw Error(where() + which() + "must be " + std::to_string(align) +
                  "-byte aligned: the kernel " +
                  (p.output ? "writes it with " + std::to_string(align) +
                                  "-byte vector stores (unvectors<W>)"
                            : "reads it with " + std::to_string(align) +
                                  "-byte vector loads (vectors<W>)") +
                  "; got an address " +
                  std::to_string(reinterpret_cast<uintptr_t>(arg.data()) % align) +
                  " bytes past a multiple of " + std::to_string(align));
    }
    if ((p.output || k.arrays[p.array].writable) && !arg.writable()) {
      throw Error(where() + which() +
                  "is written by the kernel; pass a non-const std::vector or a std::span of "
                  "non-const elements; got " +
                  arg.describe());
    }
    b.arrays[pi] = &arg;
    // A dynamic input's length parameter is the size of its (first) array.
    if (p.length && p.length->kind == ExpKind::Var) {
      const size_t li = paramIndex(k, p.length->name);
      if (!lengthSet[li]) {
        if (arg.count() > UINT32_MAX) {
          throw Error(where() + which() + "has " + std::to_string(arg.count()) +
                      " elements; lengths are 32-bit");
        }
        b.bits[li] = arg.count();
        lengthSet[li] = true;
      } else if (b.bits[li] != arg.count()) {
        throw Error(where() + which() + "has " + std::to_string(arg.count()) +
                    " elements, but the other component(s) of the same array have " +
                    std::to_string(b.bits[li]));
      }
    }
  }
  checkNoOverlap(k, b, argOf);
  // A precondition that divides by zero fails: the launch it guards would too.
  for (const Precondition& c : k.preconditions) {
    Evaluator eval{k, b};
    const bool holds = eval(c.holds).u != 0;
    if (!holds || eval.zeroDivisor) {
      const std::string zero =
          eval.zeroDivisor
              ? "; it divides by zero: " + ir::printExp(eval.zeroDivisor, k.arrays) + " is 0"
              : "";
      throw Error(where() + c.message + " (" + ir::printExp(c.holds, k.arrays) + " fails with " +
                  valuesIn(k, c.holds, b) + zero + ")");
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const Param& p = k.params[i];
    if (p.kind != ParamKind::Array) continue;
    const uint64_t need = evaluate(
        k, p.length, b, std::string("the length of ") + (p.output ? "output " : "") + p.name);
    b.lengths[i] = need;
    const KernelArg& arg = *b.arrays[i];
    if (arg.count() < need) {
      throw Error(where() + "argument " + p.name + " has " + std::to_string(arg.count()) +
                  " elements; the kernel " + (p.output ? "writes " : "reads ") +
                  std::to_string(need) + " (" + ir::printExp(p.length, k.arrays) + ")");
    }
  }
  b.gridBlocks = static_cast<uint32_t>(evaluate(k, k.gridBlocks, b, "the grid size"));
  return b;
}
}  // namespace

}  // namespace obsidian
