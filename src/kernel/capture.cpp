// Kernel capture, the parts that need no template (see obsidian/capture.hpp): checking the
// kernel's name and block size, the kernel's parameters, and handing the reified IR to the
// pass pipeline.
#include "obsidian/capture.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "codegen/lower.hpp"
#include "ir/deep_stack.hpp"
#include "ir/identifiers.hpp"
#include "ir/ir_walk.hpp"
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

void addLengthParam(Context& ctx, const std::string& name) {
  ctx.kernel().params.push_back(Param{ParamKind::Length, name, ScalarType::U32, 0, false, nullptr});
}

void addArrayParam(Context& ctx, const std::vector<ArrayId>& ids, const ExpPtr& length,
                   bool output) {
  for (ArrayId id : ids) {
    const ArrayDecl& a = ctx.array(id);
    ctx.kernel().params.push_back(Param{ParamKind::Array, a.name, a.type, id, output, length});
  }
}

void addScalarParam(Context& ctx, const std::string& name, ScalarType type) {
  ctx.kernel().params.push_back(Param{ParamKind::Scalar, name, type, 0, false, nullptr});
}

void bindEffect(Context& ctx, const GridEffect& effect) {
  if (!effect.body) throw Error("capture(" + ctx.kernel().name + "): effect(f) with an empty f");
  Program<Grid> p(ctx, ctx.kernel().body);
  effect.body(p);
}

Kernel finishCapture(std::unique_ptr<Context> ctx, const CaptureOptions& options,
                     double reifyMilliseconds) {
  KernelIR& k = ctx->kernel();
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
  LowerOptions lo;
  lo.sharedMemoryLimit = options.sharedMemoryLimit;
  lo.dumpIr = options.dumpIr;
  lo.reuseSharedMemory = options.reuseSharedMemory;
  // OBSIDIAN_SHARE=0 turns sharing off for every capture, those the library makes included
  // (before/after comparisons: bench/codegen).
  const char* share = std::getenv("OBSIDIAN_SHARE");
  lo.shareSubexpressions = options.shareSubexpressions && !(share && std::string(share) == "0");
  LoweredKernel lowered =
      ir::withStackFor(ir::maxDepth(k), [&] { return lowerKernel(std::move(k), lo); });
  lowered.timings.insert(lowered.timings.begin(), PassTiming{"reify", reifyMilliseconds});
  lowered.nvrtcOptions = options.nvrtcOptions;
  return KernelAccess::make(std::move(lowered));
}

}  // namespace obsidian::detail
