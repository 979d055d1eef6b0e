// Kernel: the result of a capture (lowered IR, CUDA, report) and its NVRTC compilation.
#include "obsidian/kernel.hpp"

#include <atomic>
#include <map>
#include <mutex>

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

namespace detail {
struct KernelMemo {
  std::mutex mutex;
  // Every result kept (references handed out stay valid), by arch and NVRTC options.
  std::map<std::vector<std::string>, std::unique_ptr<const CompileResult>> compiled;
  const std::vector<std::string>* latest = nullptr;  // a key of `compiled`: the report's
  std::unique_ptr<const std::string> checkedCuda;
};
}  // namespace detail

Kernel::Kernel(std::shared_ptr<const LoweredKernel> lowered)
    : data_(std::move(lowered)),
      id_(nextKernelId++),
      memo_(std::make_shared<detail::KernelMemo>()) {}

const std::string& Kernel::name() const { return data_->lowered.name; }
const std::string& Kernel::cuda() const { return data_->cuda; }
uint32_t Kernel::threadsPerBlock() const { return data_->lowered.threadsPerBlock; }
uint32_t Kernel::sharedBytes() const { return data_->memory.sharedBytes; }
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
  {
    std::lock_guard<std::mutex> lock(memo_->mutex);
    if (memo_->checkedCuda) return *memo_->checkedCuda;
  }
  auto emit = [this] { return emitCuda(data_->lowered, data_->memory, Checks::Always); };
  auto made =
      std::make_unique<const std::string>(ir::withStackFor(ir::maxDepth(data_->lowered), emit));
  std::lock_guard<std::mutex> lock(memo_->mutex);
  if (!memo_->checkedCuda) memo_->checkedCuda = std::move(made);  // else another thread's
  return *memo_->checkedCuda;
}

bool Kernel::compiled() const {
  std::lock_guard<std::mutex> lock(memo_->mutex);
  return memo_->latest != nullptr;
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
  {
    std::lock_guard<std::mutex> lock(memo_->mutex);
    if (auto it = memo_->compiled.find(key); it != memo_->compiled.end()) {
      memo_->latest = &it->first;
      return *it->second;
    }
  }
  // Compiled outside the lock (NVRTC takes long; the cache shares concurrent compiles).
  auto made = std::make_unique<const CompileResult>(
      KernelCache::global().get(data_->cuda, name(), options));
  std::lock_guard<std::mutex> lock(memo_->mutex);
  auto it = memo_->compiled.emplace(std::move(key), std::move(made)).first;
  memo_->latest = &it->first;
  return *it->second;
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
  r.sharedBytes = data_->memory.sharedBytes;
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
  for (const ArrayPlacement& p : data_->memory.placements) {
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
  {
    std::lock_guard<std::mutex> lock(memo_->mutex);
    if (memo_->latest) {
      const CompileResult& c = *memo_->compiled.at(*memo_->latest);
      r.compiled = ReportCompiled{memo_->latest->front(), c.registers,  c.spillStoreBytes,
                                  c.spillLoadBytes,       c.stackBytes, c.seconds * 1000.0};
    }
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
