// Kernel capture, the parts that need no template (see obsidian/capture.hpp): checking the
// kernel's name and block size, the kernel's parameters, and handing the reified IR to the
// pass pipeline.
#include "obsidian/capture.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "codegen/lower.hpp"
#include "ir/deep_stack.hpp"
#include "ir/identifiers.hpp"
#include "ir/ir_walk.hpp"
#include "ir/print.hpp"
#include "kernel/kernel_access.hpp"

namespace obsidian::detail {

Context& newCaptureContext(std::unique_ptr<Context>& holder, const std::string& name,
                           uint32_t threadsPerBlock) {
  if (name.empty()) throw Error("capture: a kernel needs a name; got an empty string");
  if (!ir::isIdentifier(name)) {
    throw Error("capture: a kernel name must be a C identifier (letters, digits, _); got '" + name +
                "'");
  }
  if (const std::optional<std::string> why = ir::reservedIdentifierReason(name)) {
    throw Error("capture: kernel name '" + name + "' is " + *why + "; choose another name");
  }
  if (threadsPerBlock == 0 || threadsPerBlock > 1024) {
    throw Error("capture(" + name +
                "): threadsPerBlock must be in 1..1024 (CUDA's limit; "
                "larger blocks are virtualized); got " +
                std::to_string(threadsPerBlock));
  }
  holder = std::make_unique<Context>(threadsPerBlock);
  holder->kernel().name = name;
  rememberCaptureName(holder->serial(), name);
  return *holder;
}

uint32_t nextStaticLength(CaptureState& s, size_t position) {
  if (s.staticUsed >= s.options.staticLengths.size()) {
    throw Error("capture(" + s.ctx.kernel().name + "): parameter " + std::to_string(position) +
                " is an SPull (static length) but CaptureOptions::staticLengths has only " +
                std::to_string(s.options.staticLengths.size()) + " length(s)");
  }
  const uint32_t n = s.options.staticLengths[s.staticUsed++];
  if (n == 0) {
    throw Error("capture(" + s.ctx.kernel().name + "): parameter " + std::to_string(position) +
                " needs a static length of at least 1; got 0");
  }
  return n;
}

void checkAllStaticLengthsUsed(const CaptureState& s) {
  if (s.staticUsed != s.options.staticLengths.size()) {
    throw Error("capture(" + s.ctx.kernel().name + "): CaptureOptions::staticLengths has " +
                std::to_string(s.options.staticLengths.size()) + " length(s) but the kernel has " +
                std::to_string(s.staticUsed) + " SPull parameter(s)");
  }
}

namespace {

const std::string& givenName(const std::vector<std::string>& names, size_t k) {
  static const std::string none;
  return k < names.size() ? names[k] : none;
}

// Throws unless `name` (CaptureOptions::`list`[k]) can name a parameter or output.
void checkName(const CaptureState& s, const char* list, size_t k, const std::string& name) {
  const std::string where = "capture(" + s.ctx.kernel().name + "): CaptureOptions::" + list + "[" +
                            std::to_string(k) + "] ";
  if (!ir::isIdentifier(name)) {
    throw Error(where + "must be a C identifier (letters, digits, _); got '" + name + "'");
  }
  if (const std::optional<std::string> why = ir::parameterNameReason(name)) {
    throw Error(where + "'" + name + "' is " + *why + "; choose another name");
  }
}

// The kernel's names must be distinct where they meet: the kernel's parameters (and what
// they imply: an array's length, its count in the exported launcher) and its module-scope grid
// state, which a parameter of the same name would hide.
void checkDistinctNames(const KernelIR& k) {
  std::map<std::string, std::string> owner;
  auto claim = [&](const std::string& name, const std::string& what) {
    const auto [it, fresh] = owner.emplace(name, what);
    if (!fresh) {
      throw Error("capture(" + k.name + "): " + it->second + " and " + what + " are both named '" +
                  name +
                  "' in the generated code; give them distinct names (CaptureOptions::names, "
                  "outputNames)");
    }
  };
  for (const ArrayDecl& a : k.arrays) {
    if (a.space == MemorySpace::GridState) claim(a.name, "the kernel's grid state " + a.name);
  }
  for (const Param& p : k.params) {
    switch (p.kind) {
      case ParamKind::Array:
        claim(p.name, std::string(p.output ? "output" : "array parameter") + " " + p.name);
        claim(p.name + "Count", "the exported launcher's count of " + p.name);
        break;
      case ParamKind::Length: claim(p.name, "the length parameter " + p.name); break;
      case ParamKind::Scalar: claim(p.name, "the scalar parameter " + p.name); break;
    }
  }
}

}  // namespace

std::string paramName(const CaptureState& s, size_t k, const char* prefix) {
  const std::string& given = givenName(s.options.names, k);
  return given.empty() ? prefix + std::to_string(k) : given;
}

std::string lengthName(const CaptureState& s, size_t k) {
  const std::string& given = givenName(s.options.names, k);
  return given.empty() ? "n" + std::to_string(k) : given + "Len";
}

std::string outputName(const CaptureState& s, size_t j) {
  const std::string& given = givenName(s.options.outputNames, j);
  return given.empty() ? "out" + std::to_string(j) : given;
}

void checkNames(const CaptureState& s, size_t params) {
  const std::vector<std::string>& names = s.options.names;
  if (!names.empty() && names.size() != params) {
    throw Error("capture(" + s.ctx.kernel().name + "): CaptureOptions::names has " +
                std::to_string(names.size()) + " name(s) but the kernel has " +
                std::to_string(params) + " parameter(s)");
  }
  for (size_t k = 0; k < names.size(); ++k) {
    if (!names[k].empty()) checkName(s, "names", k, names[k]);
  }
  for (size_t j = 0; j < s.options.outputNames.size(); ++j) {
    const std::string& name = s.options.outputNames[j];
    if (name.empty()) continue;
    checkName(s, "outputNames", j, name);
    s.ctx.reserve(name);  // before the outputs' programs are built
  }
}

void checkOutputNameCount(const CaptureState& s, size_t outputs) {
  const size_t named = s.options.outputNames.size();
  if (named != 0 && named != outputs) {
    throw Error("capture(" + s.ctx.kernel().name + "): CaptureOptions::outputNames has " +
                std::to_string(named) + " name(s) but the kernel has " + std::to_string(outputs) +
                " output(s)");
  }
}

void addLengthParam(Context& ctx, const std::string& name) {
  ctx.reserve(name);
  ctx.kernel().params.push_back(Param{ParamKind::Length, name, ScalarType::U32, 0, false, nullptr});
}

void addArrayParam(Context& ctx, const std::vector<ArrayId>& ids, const ExpPtr& length,
                   bool output) {
  for (ArrayId id : ids) {
    const ArrayDecl& a = ctx.array(id);
    ctx.reserve(a.name);
    ctx.kernel().params.push_back(Param{ParamKind::Array, a.name, a.type, id, output, length});
  }
}

void addScalarParam(Context& ctx, const std::string& name, ScalarType type) {
  ctx.reserve(name);
  ctx.kernel().params.push_back(Param{ParamKind::Scalar, name, type, 0, false, nullptr});
}

void addPostcondition(Context& ctx, const EBool& holds, const std::string& index,
                      const EWord32& count, size_t outputIndex, const std::string& output,
                      const std::string& message) {
  const KernelIR& k = ctx.kernel();
  const std::string where = "ensure(" + output + ", ..., \"" + message + "\") in kernel " + k.name;
  std::set<ArrayId> arrays;
  ir::arraysIn(holds.node(), arrays);
  for (ArrayId a : arrays) {
    if (k.arrays[a].space != MemorySpace::Global) {
      throw Error(where + ": the condition reads " + k.arrays[a].name +
                  ", an array of the kernel's program; it may read only the kernel's parameters "
                  "and outputs (it is checked after the kernel)");
    }
  }
  std::set<std::string> vars;
  ir::varsIn(holds.node(), vars);
  for (const std::string& v : vars) {
    const bool param = std::any_of(k.params.begin(), k.params.end(), [&](const Param& p) {
      return p.kind != ParamKind::Array && p.name == v;
    });
    if (v != index && !param) {
      throw Error(where + ": the condition uses " + v +
                  ", a variable of the kernel's program; it may use only the element, the "
                  "index, the kernel's arrays and its scalar parameters");
    }
  }
  if (holds.node()->isLiteral() && holds.node()->bits == 0) {
    throw Error(where + ": the condition is false for every element");
  }
  ctx.kernel().postconditions.push_back(
      Postcondition{holds.node(), index, count.node(), outputIndex, output, message});
}

void bindEffect(Context& ctx, const GridEffect& effect) {
  if (!effect.body) throw Error("capture(" + ctx.kernel().name + "): effect(f) with an empty f");
  Program<Grid> p(ctx, ctx.kernel().body);
  effect.body(p);
}

namespace {

LowerOptions lowerOptions(const CaptureOptions& options) {
  LowerOptions lo;
  lo.sharedMemoryLimit = options.sharedMemoryLimit;
  lo.dumpIr = options.dumpIr;
  lo.reuseSharedMemory = options.reuseSharedMemory;
  // OBSIDIAN_SHARE=0 turns sharing off for every capture, those the library makes included
  // (before/after comparisons: bench/codegen).
  const char* share = std::getenv("OBSIDIAN_SHARE");
  lo.shareSubexpressions = options.shareSubexpressions && !(share && std::string(share) == "0");
  return lo;
}

LoweredKernel lower(KernelIR k, const CaptureOptions& options, double reifyMilliseconds) {
  const LowerOptions lo = lowerOptions(options);
  LoweredKernel lowered =
      ir::withStackFor(ir::maxDepth(k), [&] { return lowerKernel(std::move(k), lo); });
  lowered.timings.insert(lowered.timings.begin(), PassTiming{"reify", reifyMilliseconds});
  lowered.nvrtcOptions = options.nvrtcOptions;
  return lowered;
}

// Threads per block of a postcondition's check kernel: one element per thread.
constexpr uint32_t kCheckThreads = 256;

// The kernel that checks postcondition `c` of kernel `k` (see PostconditionCheck): k's
// parameters, all read-only, then the one-element result array; each thread checks one
// element and keeps the least failing index with atomicMin.
KernelIR postconditionKernel(const KernelIR& k, const Postcondition& c, size_t n) {
  Context ctx(kCheckThreads, k.capture);  // k's serial: the condition's leaves are k's
  KernelIR& check = ctx.kernel();
  check.name = k.name + "_ensure" + std::to_string(n);
  ContextScope scope(ctx);
  std::map<ArrayId, ArrayId> ids;
  for (const Param& p : k.params) {
    if (p.kind == ParamKind::Array) {
      ArrayDecl d = k.arrays[p.array];
      d.writable = false;
      ids[p.array] = ctx.addArray(std::move(d));
      check.params.push_back(
          Param{ParamKind::Array, p.name, p.type, ids[p.array], false, p.length});
    } else {
      check.params.push_back(p);
    }
    ctx.reserve(p.name);
  }
  const ArrayId first = addGlobalArray(ctx, "obsidian_first", ScalarType::U32, true);
  check.params.push_back(
      Param{ParamKind::Array, "obsidian_first", ScalarType::U32, first, false, ir::u32(1)});
  // The condition over the check kernel's arrays (addPostcondition let it read only k's
  // parameters and outputs).
  std::function<ExpPtr(const ExpPtr&)> remap = [&](const ExpPtr& e) -> ExpPtr {
    return ir::rewrite(e, [&](const ExpPtr& x) -> ExpPtr {
      if (x->kind != ExpKind::Index) return nullptr;
      const ArrayId a = ids.at(x->array);
      if (x->vecWidth > 1) {
        return ir::vectorIndex(x->type, a, remap(x->args[0]), remap(x->args[1]), x->vecWidth,
                               x->vecLane, x->origin);
      }
      return ir::index(x->type, a, remap(x->args[0]), x->origin);
    });
  };
  const ExpPtr holds = remap(c.holds);
  const EWord32 count(c.count);
  const DMutable<uint32_t> result(ctx.ref(first), EWord32(1u));
  Program<Grid> g(ctx, check.body);
  // Blocks: count / 256 rounded up, without overflow near 2^32.
  const EWord32 blocks =
      count / kCheckThreads + ifThenElse(count % kCheckThreads != 0u, EWord32(1u), EWord32(0u));
  g.distrPar(blocks, [&](const Program<Block>& b, const EWord32& bid) {
    b.forAll(kCheckThreads, [&](const Program<Thread>& t, const EWord32& tid) {
      const EWord32 i = bid * kCheckThreads + tid;
      // && guards the condition: it reads nothing past the output's end.
      const EBool fails = i < count && !EBool(ir::substitute(holds, c.index, i.node()));
      t.cond(fails, [&](const Program<Thread>& u) { atomicMin(u, result, 0u, i); });
    });
  });
  return std::move(check);
}

}  // namespace

// The most threads an SM holds (sm_70 to sm_90; some parts hold fewer, and then the CUDA
// compiler takes minBlocksPerSm as a hint).
constexpr uint32_t kMaxThreadsPerSm = 2048;

Kernel finishCapture(std::unique_ptr<Context> ctx, const CaptureOptions& options,
                     double reifyMilliseconds) {
  KernelIR& k = ctx->kernel();
  if (options.minBlocksPerSm > 0 &&
      uint64_t{options.minBlocksPerSm} * k.threadsPerBlock > kMaxThreadsPerSm) {
    throw Error("capture(" + k.name + "): minBlocksPerSm " +
                std::to_string(options.minBlocksPerSm) + " blocks of " +
                std::to_string(k.threadsPerBlock) + " threads exceed the " +
                std::to_string(kMaxThreadsPerSm) + " threads an SM holds");
  }
  k.minBlocksPerSm = options.minBlocksPerSm;
  if (k.body.empty()) {
    throw Error("capture(" + k.name +
                "): the kernel computes nothing (its result writes no "
                "element)");
  }
  if (k.outputs.empty() && std::none_of(k.params.begin(), k.params.end(), [&](const Param& p) {
        return p.kind == ParamKind::Array && k.arrays[p.array].writable;
      })) {
    throw Error("capture(" + k.name +
                "): the kernel has no output and no DMutable parameter, so its effects are "
                "invisible: an effect-only kernel acts on DMutable arrays");
  }
  checkDistinctNames(k);
  std::vector<PostconditionCheck> checks;
  for (size_t n = 0; n < k.postconditions.size(); ++n) {
    const Postcondition& c = k.postconditions[n];
    KernelIR check =
        ir::withStackFor(ir::maxDepth(k), [&] { return postconditionKernel(k, c, n); });
    const std::string condition = ir::printExp(c.holds, k.arrays);
    checks.push_back(PostconditionCheck{c.outputIndex, c.output, c.message, condition, c.index,
                                        KernelAccess::make(lower(std::move(check), options, 0))});
  }
  LoweredKernel lowered = lower(std::move(k), options, reifyMilliseconds);
  lowered.postconditions = std::move(checks);
  return KernelAccess::make(std::move(lowered));
}

}  // namespace obsidian::detail

namespace obsidian {

void require(const EBool& holds, const std::string& message) {
  Context* ctx = detail::currentContext();
  if (!ctx) {
    throw Error("require(..., \"" + message +
                "\"): only inside a capture (the callable given to capture), where it is a "
                "precondition of the kernel");
  }
  const KernelIR& k = ctx->kernel();
  const std::string where = "require(..., \"" + message + "\") in kernel " + k.name;
  std::set<ArrayId> arrays;
  ir::arraysIn(holds.node(), arrays);
  if (!arrays.empty()) {
    throw Error(where + ": the condition reads " + k.arrays[*arrays.begin()].name +
                "; a precondition is checked on the host before the launch, so it may use only "
                "scalar parameters and array lengths");
  }
  std::set<std::string> vars;
  ir::varsIn(holds.node(), vars);
  for (const std::string& v : vars) {
    if (std::none_of(k.params.begin(), k.params.end(),
                     [&](const Param& p) { return p.kind != ParamKind::Array && p.name == v; })) {
      throw Error(where + ": the condition uses " + v +
                  ", a variable of the kernel's program; a precondition may use only scalar "
                  "parameters and array lengths");
    }
  }
  if (holds.node()->isLiteral() && holds.node()->bits == 0) {
    throw Error(where + ": the condition is false for every launch");
  }
  ctx->require(holds, message);
}

}  // namespace obsidian
