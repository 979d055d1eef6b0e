// Kernel: the result of a capture (lowered IR, CUDA, report) and its NVRTC compilation.
#include "obsidian/kernel.hpp"

#include <atomic>

#include "codegen/emit_cuda.hpp"
#include "ir/deep_stack.hpp"
#include "ir/ir_walk.hpp"
#include "ir/print.hpp"
#include "kernel/kernel_access.hpp"
#include "kernel/traffic.hpp"
#include "obsidian/cache.hpp"

namespace obsidian {

namespace {
std::atomic<uint64_t> nextKernelId{1};
}

Kernel::Kernel(std::shared_ptr<const LoweredKernel> lowered)
    : data_(std::move(lowered)), id_(nextKernelId++) {}

const std::string& Kernel::name() const { return data_->lowered.name; }
const std::string& Kernel::cuda() const { return data_->cuda; }
uint32_t Kernel::threadsPerBlock() const { return data_->lowered.threadsPerBlock; }
uint32_t Kernel::sharedBytes() const { return data_->lowered.sharedBytes; }
const std::vector<Param>& Kernel::params() const { return data_->lowered.params; }
const KernelIR& Kernel::ir() const { return data_->lowered; }
const KernelIR& Kernel::reifiedIr() const { return data_->reified; }
const std::vector<PassTiming>& Kernel::timings() const { return data_->timings; }
const std::vector<std::string>& Kernel::nvrtcOptions() const { return data_->nvrtcOptions; }
const std::string& Kernel::irDump() const { return data_->irDump; }
const std::vector<PostconditionCheck>& Kernel::postconditions() const {
  return data_->postconditions;
}

const std::string& Kernel::checkedCuda() const {
  if (!checkedCuda_) {
    checkedCuda_ = std::make_shared<const std::string>(ir::withStackFor(
        ir::maxDepth(data_->lowered), [this] { return emitCuda(data_->lowered, Checks::Always); }));
  }
  return *checkedCuda_;
}

CompileOptions Kernel::compileOptions(const CompileOptions& options) const {
  CompileOptions all = options;
  all.extraOptions = data_->nvrtcOptions;
  all.extraOptions.insert(all.extraOptions.end(), options.extraOptions.begin(),
                          options.extraOptions.end());
  return all;
}

const CompileResult& Kernel::compile(const CompileOptions& requested) const {
  const CompileOptions options = compileOptions(requested);
  std::vector<std::string> key{options.arch};
  key.insert(key.end(), options.extraOptions.begin(), options.extraOptions.end());
  if (!compiled_ || compiledOptions_ != key) {
    compiled_ =
        std::make_shared<CompileResult>(KernelCache::global().get(data_->cuda, name(), options));
    compiledOptions_ = key;
  }
  return *compiled_;
}

KernelReport Kernel::report() const {
  return ir::withStackFor(ir::maxDepth(data_->lowered), [this] { return makeReport(); });
}

KernelReport Kernel::makeReport() const {
  const KernelIR& k = data_->lowered;
  auto show = [&](const ExpPtr& e) { return e ? ir::printExp(e, k.arrays) : std::string(); };
  auto typeName = [](ScalarType t) { return std::string(cudaTypeName(t)); };
  KernelReport r;
  r.name = k.name;
  r.threadsPerBlock = k.threadsPerBlock;
  r.sharedBytes = k.sharedBytes;
  r.gridBlocks = show(k.gridBlocks);
  for (const Param& p : k.params) {
    ReportParam q{p.name, typeName(p.type), "", ""};
    switch (p.kind) {
      case ParamKind::Array:
        q.kind = p.output ? "output" : (k.arrays[p.array].writable ? "mutable" : "input");
        q.length = show(p.length);
        break;
      case ParamKind::Length: q.kind = "length"; break;
      case ParamKind::Scalar: q.kind = "scalar"; break;
    }
    r.params.push_back(std::move(q));
  }
  for (const Precondition& p : k.preconditions) {
    r.preconditions.push_back(ReportPrecondition{show(p.holds), p.message});
  }
  for (const PostconditionCheck& c : data_->postconditions) {
    r.postconditions.push_back(ReportPostcondition{c.outputName, c.condition, c.index, c.message});
  }
  for (const ArrayPlacement& p : data_->placements) {
    const ArrayDecl& a = k.arrays[p.array];
    r.sharedArrays.push_back(ReportSharedArray{a.name, typeName(a.type),
                                               std::string(levelName(a.level)), a.length, p.bytes,
                                               p.offset, p.liveFrom, p.liveTo});
  }
  for (const ArrayDecl& a : k.arrays) {
    if (a.space == MemorySpace::Local) {
      r.localArrays.push_back(ReportLocalArray{a.name, typeName(a.type), a.length});
    }
  }
  r.traffic = globalTraffic(k);
  r.gridPasses = gridPasses(data_->reified);
  r.barriers = data_->barriers;
  r.nvrtcOptions = data_->nvrtcOptions;
  r.timings = data_->timings;
  if (compiled_) {
    r.compiled = ReportCompiled{compiledOptions_.front(),   compiled_->registers,
                                compiled_->spillStoreBytes, compiled_->spillLoadBytes,
                                compiled_->stackBytes,      compiled_->seconds * 1000.0};
  }
  return r;
}

namespace detail {

Kernel KernelAccess::make(LoweredKernel lowered) {
  return Kernel(std::make_shared<const LoweredKernel>(std::move(lowered)));
}

}  // namespace detail

namespace testing {

Kernel withFaults(const Kernel& k, const Faults& faults) {
  const LoweredKernel& original = detail::KernelAccess::lowered(k);
  LowerOptions options = original.options;
  options.faults = faults;
  LoweredKernel lowered = ir::withStackFor(ir::maxDepth(original.reified),
                                           [&] { return lowerKernel(original.reified, options); });
  lowered.timings.insert(lowered.timings.begin(), original.timings.front());  // reify
  lowered.nvrtcOptions = original.nvrtcOptions;
  return detail::KernelAccess::make(std::move(lowered));
}

}  // namespace testing
}  // namespace obsidian
