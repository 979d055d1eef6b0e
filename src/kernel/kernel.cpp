// Kernel: the result of a capture (lowered IR, CUDA, report) and its NVRTC compilation.
#include "obsidian/kernel.hpp"

#include <atomic>
#include <iostream>

#include "codegen/emit_cuda.hpp"
#include "ir/deep_stack.hpp"
#include "ir/ir_walk.hpp"
#include "ir/print.hpp"
#include "memmap/memory_map.hpp"
#include "obsidian/cache.hpp"

namespace obsidian {

namespace {
std::atomic<uint64_t> nextKernelId{1};
}

Kernel::Kernel(LoweredKernel lowered)
    : data_(std::make_shared<const LoweredKernel>(std::move(lowered))), id_(nextKernelId++) {}

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

nlohmann::json Kernel::report() const {
  return ir::withStackFor(ir::maxDepth(data_->lowered), [this] { return reportJson(); });
}

nlohmann::json Kernel::reportJson() const {
  using nlohmann::json;
  const KernelIR& k = data_->lowered;
  auto show = [&](const ExpPtr& e) { return e ? ir::printExp(e, k.arrays) : std::string(); };
  json r;
  r["name"] = k.name;
  r["threadsPerBlock"] = k.threadsPerBlock;
  r["sharedBytes"] = k.sharedBytes;
  r["gridBlocks"] = show(k.gridBlocks);

  json params = json::array();
  for (const Param& p : k.params) {
    json j{{"name", p.name}, {"type", std::string(cudaTypeName(p.type))}};
    switch (p.kind) {
      case ParamKind::Array:
        j["kind"] = p.output ? "output" : (k.arrays[p.array].writable ? "mutable" : "input");
        j["length"] = show(p.length);
        break;
      case ParamKind::Length: j["kind"] = "length"; break;
      case ParamKind::Scalar: j["kind"] = "scalar"; break;
    }
    params.push_back(j);
  }
  r["params"] = params;

  json pre = json::array();
  for (const Precondition& p : k.preconditions) {
    pre.push_back({{"condition", show(p.holds)}, {"message", p.message}});
  }
  r["preconditions"] = pre;

  json shared = json::array();
  for (const ArrayPlacement& p : data_->placements) {
    const ArrayDecl& a = k.arrays[p.array];
    shared.push_back({{"name", a.name},
                      {"type", std::string(cudaTypeName(a.type))},
                      {"level", std::string(levelName(a.level))},
                      {"elements", a.length},
                      {"bytes", p.bytes},
                      {"offset", p.offset},
                      {"liveFrom", p.liveFrom},
                      {"liveTo", p.liveTo}});
  }
  r["sharedArrays"] = shared;
  json local = json::array();
  for (const ArrayDecl& a : k.arrays) {
    if (a.space == MemorySpace::Local) {
      local.push_back(
          {{"name", a.name}, {"type", std::string(cudaTypeName(a.type))}, {"elements", a.length}});
    }
  }
  r["localArrays"] = local;
  r["barriers"] = {{"block", data_->barriers.block}, {"warp", data_->barriers.warp}};

  json timings = json::object();
  for (const PassTiming& t : data_->timings) timings[t.pass] = t.milliseconds;
  r["nvrtcOptions"] = data_->nvrtcOptions;
  if (compiled_) {
    r["arch"] = compiledOptions_.front();
    r["registers"] = compiled_->registers;
    r["spillStoreBytes"] = compiled_->spillStoreBytes;
    r["spillLoadBytes"] = compiled_->spillLoadBytes;
    r["stackBytes"] = compiled_->stackBytes;
    timings["compile"] = compiled_->seconds * 1000.0;
  } else {
    r["registers"] = nullptr;
    r["spillStoreBytes"] = nullptr;
    r["spillLoadBytes"] = nullptr;
    r["stackBytes"] = nullptr;
  }
  r["timingsMs"] = timings;
  return r;
}

namespace detail {

Kernel finishCapture(std::unique_ptr<Context> ctx, const CaptureOptions& options,
                     double reifyMilliseconds) {
  KernelIR& k = ctx->kernel();
  if (k.body.empty()) {
    throw Error("capture(" + k.name +
                "): the kernel computes nothing (its result writes no "
                "element)");
  }
  LowerOptions lo;
  lo.sharedMemoryLimit = options.sharedMemoryLimit;
  lo.dumpIr = options.dumpIr;
  lo.reuseSharedMemory = options.reuseSharedMemory;
  lo.faults = options.faults;
  LoweredKernel lowered =
      ir::withStackFor(ir::maxDepth(k), [&] { return lowerKernel(std::move(k), lo); });
  lowered.timings.insert(lowered.timings.begin(), PassTiming{"reify", reifyMilliseconds});
  lowered.nvrtcOptions = options.nvrtcOptions;
  return Kernel(std::move(lowered));
}

}  // namespace detail
}  // namespace obsidian
