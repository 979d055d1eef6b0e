// Binding and checking launch arguments (see include/obsidian/arguments.hpp).
#include "obsidian/arguments.hpp"

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

ExpPtr substituteParams(const ExpPtr& e, const BoundArguments& b, const KernelIR& k) {
  return ir::rewrite(e, [&](const ExpPtr& n) -> ExpPtr {
    if (n->kind != ExpKind::Var) return nullptr;
    if (const auto it = b.bits.find(n->name); it != b.bits.end()) {
      return ir::literalInt(n->type, it->second);
    }
    if (const auto it = b.reals.find(n->name); it != b.reals.end()) {
      return ir::literalReal(n->type, it->second);
    }
    throw InternalError("launch of kernel " + k.name + ": " + n->name + " is not a parameter");
  });
}

std::string expected(const KernelIR& k, const Param& p) {
  const std::string t(cudaTypeName(p.type));
  if (p.kind == ParamKind::Scalar) return p.name + ": " + t + " scalar";
  const bool writes = p.output || k.arrays[p.array].writable;
  return p.name + ": " + (writes ? "writable " : "") + t + " array";
}

}  // namespace

uint64_t evaluateU32(const ExpPtr& e, const BoundArguments& b) {
  KernelIR none;
  const ExpPtr v = substituteParams(e, b, none);
  OBSIDIAN_ASSERT(v->isLiteral(), "an expression over parameters folds to a literal");
  return v->bits;
}

BoundArguments bindArguments(const KernelIR& k, const std::vector<KernelArg>& args) {
  const std::string where = "launch of kernel " + k.name + ": ";
  std::vector<size_t> userParams;  // parameters the caller passes (not lengths)
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (k.params[i].kind != ParamKind::Length) userParams.push_back(i);
  }
  if (args.size() != userParams.size()) {
    std::string list;
    for (size_t i : userParams) list += (list.empty() ? "" : ", ") + expected(k, k.params[i]);
    throw Error(where + "expected " + std::to_string(userParams.size()) + " argument(s) (" + list +
                "); got " + std::to_string(args.size()));
  }
  BoundArguments b;
  b.arrays.assign(k.params.size(), nullptr);
  b.lengths.assign(k.params.size(), 0);
  for (size_t a = 0; a < args.size(); ++a) {
    const Param& p = k.params[userParams[a]];
    const KernelArg& arg = args[a];
    const std::string which = "argument " + std::to_string(a) + " (" + p.name + ") ";
    const bool wantArray = p.kind == ParamKind::Array;
    if (wantArray != (arg.kind() == KernelArg::Kind::Array) || arg.type() != p.type) {
      throw Error(where + which + "must be " + (wantArray ? "an array of " : "a scalar of type ") +
                  std::string(cudaTypeName(p.type)) + "; got " + arg.describe());
    }
    if (!wantArray) {
      if (isFloat(p.type)) {
        b.reals[p.name] = arg.real();
      } else {
        b.bits[p.name] = arg.bits();
      }
      continue;
    }
    if (arg.data() == nullptr && arg.count() > 0) throw Error(where + which + "is a null array");
    if ((p.output || k.arrays[p.array].writable) && !arg.writable()) {
      throw Error(where + which +
                  "is written by the kernel; pass a non-const std::vector or a "
                  "std::span of non-const elements; got " +
                  arg.describe());
    }
    b.arrays[userParams[a]] = &arg;
    // A dynamic input's length parameter is the size of its (first) array.
    if (p.length && p.length->kind == ExpKind::Var) {
      const std::string& n = p.length->name;
      const auto it = b.bits.find(n);
      if (it == b.bits.end()) {
        if (arg.count() > UINT32_MAX) {
          throw Error(where + which + "has " + std::to_string(arg.count()) +
                      " elements; lengths are 32-bit");
        }
        b.bits[n] = arg.count();
      } else if (it->second != arg.count()) {
        throw Error(where + which + "has " + std::to_string(arg.count()) +
                    " elements, but the other component(s) of the same array have " +
                    std::to_string(it->second));
      }
    }
  }
  for (const Precondition& c : k.preconditions) {
    if (evaluateU32(c.holds, b) == 0) {
      std::string values;
      std::set<std::string> vars;
      ir::varsIn(c.holds, vars);
      for (const std::string& v : vars) {
        values += (values.empty() ? "" : ", ") + v + " = " +
                  (b.bits.count(v) ? std::to_string(b.bits.at(v)) : std::to_string(b.reals.at(v)));
      }
      throw Error(where + c.message + " (" + ir::printExp(c.holds, k.arrays) + " fails with " +
                  values + ")");
    }
  }
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param& p = k.params[i];
    if (p.kind != ParamKind::Array) continue;
    const uint64_t need = evaluateU32(p.length, b);
    b.lengths[i] = need;
    const KernelArg& arg = *b.arrays[i];
    if (arg.count() < need) {
      throw Error(where + "argument " + p.name + " has " + std::to_string(arg.count()) +
                  " elements; the kernel " + (p.output ? "writes " : "reads ") +
                  std::to_string(need) + " (" + ir::printExp(p.length, k.arrays) + ")");
    }
  }
  b.gridBlocks = static_cast<uint32_t>(evaluateU32(k.gridBlocks, b));
  return b;
}

}  // namespace obsidian
