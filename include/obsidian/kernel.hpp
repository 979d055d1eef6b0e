// Kernel capture: reify a C++ callable from input arrays to Push<Grid> results into a Kernel
// (parameters derived from the callable's types), lower it through the passes, print CUDA,
// and compile it with NVRTC on demand.
#pragma once

#include <boost/hana/for_each.hpp>
#include <chrono>
#include <functional>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "obsidian/atomic.hpp"
#include "obsidian/force.hpp"
#include "obsidian/nvrtc.hpp"

namespace obsidian {

struct CaptureOptions {
  // Lengths of the callable's SPull parameters, in parameter order (a static length is not in
  // the type, so it is given here).
  std::vector<uint32_t> staticLengths;
  // Shared memory the kernel may use, in bytes. The default is the opt-in maximum of sm_90
  // (227 KB); the runtime checks the real device's limit again at launch.
  uint32_t sharedMemoryLimit = 227 * 1024;
  // Give every shared array bytes of its own instead of reusing the bytes of dead arrays (the
  // simulator's differential tests compare the two).
  bool reuseSharedMemory = true;
  // Test-only faults, so tests can check that the simulator catches what they break.
  struct Faults {
    int dropBarrier = -1;     // remove the n-th barrier (pre-order) of the lowered kernel
    std::string shrinkArray;  // declare this shared array shorter than it was allocated:
    uint32_t shrinkTo = 0;    //   shrinkTo elements
  } faults;
  // NVRTC options this kernel is always compiled with (wherever it is compiled: Kernel::compile,
  // the GPU runtime, exportBinary), e.g. "--fmad=false" for bit-exact float results.
  std::vector<std::string> nvrtcOptions;
  // Keep the IR after every pass in Kernel::irDump(). OBSIDIAN_DUMP_IR=1 in the environment
  // keeps it too and also prints it to std::cerr.
  bool dumpIr = false;
};

struct PassTiming {
  std::string pass;
  double milliseconds = 0;
};

// Where the memory map put a shared array, and when it is live (positions are pre-order
// statement numbers of the program the memory map saw: the reified IR plus reuse barriers).
struct ArrayPlacement {
  ArrayId array = 0;
  uint32_t offset = 0;
  uint32_t bytes = 0;
  uint32_t liveFrom = 0;
  uint32_t liveTo = 0;
};

struct BarrierCounts {
  uint32_t block = 0;  // __syncthreads() in the generated code
  uint32_t warp = 0;   // __syncwarp()
};

// Everything lowering produced; see src/codegen/lower.cpp for the passes.
struct LoweredKernel {
  KernelIR reified;
  KernelIR lowered;
  std::string cuda;
  std::vector<ArrayPlacement> placements;
  BarrierCounts barriers;
  std::vector<PassTiming> timings;        // reify first, then each pass
  std::vector<std::string> nvrtcOptions;  // CaptureOptions::nvrtcOptions
  std::string irDump;                     // the IR after each pass, when dumping was asked for
};

struct LowerOptions {
  uint32_t sharedMemoryLimit = 227 * 1024;
  bool dumpIr = false;
  bool reuseSharedMemory = true;
  CaptureOptions::Faults faults;
};

// The pass pipeline (reified IR -> CUDA). Throws Error for user mistakes it finds.
LoweredKernel lowerKernel(KernelIR reified, const LowerOptions& options);

class Kernel {
 public:
  explicit Kernel(LoweredKernel lowered);

  const std::string& name() const { return data_->lowered.name; }
  // Unique in this process, shared by copies of this Kernel (the runtime keys loaded code by it).
  uint64_t id() const { return id_; }
  const std::string& cuda() const { return data_->cuda; }
  // The bounds-checked variant of cuda() (LaunchOptions::checked): every write and atomic to a
  // global array checks its index, skips the access when it is out of bounds and records the
  // first such access. Made on first use.
  const std::string& checkedCuda() const;
  uint32_t threadsPerBlock() const { return data_->lowered.threadsPerBlock; }
  uint32_t sharedBytes() const { return data_->lowered.sharedBytes; }
  const std::vector<Param>& params() const { return data_->lowered.params; }
  const KernelIR& ir() const { return data_->lowered; }
  const KernelIR& reifiedIr() const { return data_->reified; }
  const LoweredKernel& lowered() const { return *data_; }
  const std::vector<PassTiming>& timings() const { return data_->timings; }
  // The IR printed after every pass (empty unless dumping was asked for).
  const std::string& irDump() const { return data_->irDump; }

  // Compile with NVRTC through the kernel cache (KernelCache::global(): memory and disk), and
  // keep the result for these options in this Kernel object. The kernel's own nvrtcOptions
  // (CaptureOptions) come first, then options.extraOptions.
  const CompileResult& compile(const CompileOptions& options = {}) const;
  // `options` with the kernel's own NVRTC options added: what compile() passes to NVRTC.
  CompileOptions compileOptions(const CompileOptions& options = {}) const;
  bool compiled() const { return compiled_ != nullptr; }

  // Name, parameters, threads per block, shared bytes with each array's offset and live
  // range, barrier counts by level, preconditions, pass timings; registers, spills, stack and
  // compile time once compiled.
  nlohmann::json report() const;

 private:
  nlohmann::json reportJson() const;

  std::shared_ptr<const LoweredKernel> data_;
  uint64_t id_;
  mutable std::shared_ptr<CompileResult> compiled_;
  mutable std::shared_ptr<const std::string> checkedCuda_;
  mutable std::vector<std::string> compiledOptions_;
};

// ------------------------------------------------------------------ parameters of a capture
namespace detail {

struct CaptureState {
  Context& ctx;
  const CaptureOptions& options;
  size_t staticUsed = 0;
};

uint32_t nextStaticLength(CaptureState& s, size_t position);
void checkAllStaticLengthsUsed(const CaptureState& s);
void addLengthParam(Context& ctx, const std::string& name);
void addArrayParam(Context& ctx, const std::vector<ArrayId>& ids, const ExpPtr& length,
                   bool output);
void addScalarParam(Context& ctx, const std::string& name, ScalarType type);

template <class P>
struct KernelParam {
  static_assert(alwaysFalse<P>,
                "capture: a kernel parameter must be DPull<T>, SPull<T> (with its length in "
                "CaptureOptions::staticLengths), DMutable<X> or a scalar Exp<X>");
};

template <class T>
struct KernelParam<Pull<EWord32, T>> {
  static Pull<EWord32, T> make(CaptureState& s, size_t k) {
    const auto h = MemoryOps<T>::global(s.ctx, "in" + std::to_string(k), false);
    std::vector<ArrayId> ids;
    MemoryOps<T>::ids(h, ids);
    const EWord32 n = variable<uint32_t>("n" + std::to_string(k));
    addArrayParam(s.ctx, ids, n.node(), false);
    addLengthParam(s.ctx, "n" + std::to_string(k));  // after the pointers
    return Pull<EWord32, T>(n, [h](const EWord32& i) { return MemoryOps<T>::read(h, i); });
  }
};

template <class T>
struct KernelParam<Pull<uint32_t, T>> {
  static Pull<uint32_t, T> make(CaptureState& s, size_t k) {
    const uint32_t n = nextStaticLength(s, k);
    const auto h = MemoryOps<T>::global(s.ctx, "in" + std::to_string(k), false);
    std::vector<ArrayId> ids;
    MemoryOps<T>::ids(h, ids);
    addArrayParam(s.ctx, ids, ir::u32(n), false);
    return Pull<uint32_t, T>(n, [h](const EWord32& i) { return MemoryOps<T>::read(h, i); });
  }
};

template <KernelScalar X>
struct KernelParam<Mutable<EWord32, X>> {
  static DMutable<X> make(CaptureState& s, size_t k) {
    const ArrayRef id = MemoryOps<Exp<X>>::global(s.ctx, "m" + std::to_string(k), true);
    const EWord32 n = variable<uint32_t>("n" + std::to_string(k));
    addArrayParam(s.ctx, {id.id}, n.node(), false);  // writable, but not a result of the kernel
    addLengthParam(s.ctx, "n" + std::to_string(k));
    return DMutable<X>(id, n);
  }
};

template <KernelScalar X>
struct KernelParam<Exp<X>> {
  static Exp<X> make(CaptureState& s, size_t k) {
    const std::string name = "s" + std::to_string(k);
    addScalarParam(s.ctx, name, scalarTypeOf<X>);
    return variable<X>(name);
  }
};

template <class F>
struct CallableArgs : CallableArgs<decltype(&F::operator())> {};
template <class R, class... A>
struct CallableArgs<R (*)(A...)> {
  using Args = std::tuple<std::remove_cvref_t<A>...>;
};
template <class R, class... A>
struct CallableArgs<R(A...)> {
  using Args = std::tuple<std::remove_cvref_t<A>...>;
};
template <class C, class R, class... A>
struct CallableArgs<R (C::*)(A...) const> {
  using Args = std::tuple<std::remove_cvref_t<A>...>;
};
template <class C, class R, class... A>
struct CallableArgs<R (C::*)(A...)> {
  using Args = std::tuple<std::remove_cvref_t<A>...>;
};

template <class R>
void bindOutput(Context& ctx, const R& result, size_t j) {
  static_assert(isPush<R>,
                "capture: a kernel's result must be a Push<Grid> array or a tuple of them");
  using L = typename R::Level;
  static_assert(!std::is_same_v<L, Warp>,
                "warp-level programs only inside blocks: pConcat the Push<Warp> arrays into a "
                "Push<Block> first");
  static_assert(std::is_same_v<L, Grid> || std::is_same_v<L, Warp>,
                "capture: a kernel's result must be Push<Grid>: pConcat block programs over the "
                "grid");
  using T = typename R::Element;
  static_assert(Storable<T>, "capture: output elements must be Exp<X> or hana::tuple of them");
  const auto h = MemoryOps<T>::global(ctx, "out" + std::to_string(j), true);
  std::vector<ArrayId> ids;
  MemoryOps<T>::ids(h, ids);
  const ExpPtr length = sizeConv(result.len()).node();
  addArrayParam(ctx, ids, length, true);
  ctx.kernel().outputs.push_back(OutputInfo{ids, length});
  Program<Grid> p(ctx, ctx.kernel().body);
  result(p, [h](const Program<Thread>& t, const typename R::Element& v, const EWord32& i) {
    MemoryOps<T>::write(t, h, i, v);
  });
}

template <class R>
void bindOutputs(Context& ctx, const R& result) {
  if constexpr (isPush<R>) {
    bindOutput(ctx, result, 0);
  } else {
    size_t j = 0;
    hana::for_each(result, [&](const auto& r) { bindOutput(ctx, r, j++); });
  }
}

Context& newCaptureContext(std::unique_ptr<Context>& holder, const std::string& name,
                           uint32_t threadsPerBlock);
Kernel finishCapture(std::unique_ptr<Context> ctx, const CaptureOptions& options,
                     double reifyMilliseconds);

}  // namespace detail

// capture(name, threadsPerBlock, f): reify f into a kernel run by `threadsPerBlock` real
// threads per block. f takes DPull/SPull/DMutable arrays and scalar Exps and returns a
// Push<Grid> (or a hana::tuple of them, one output each).
template <class F>
Kernel capture(const std::string& name, uint32_t threadsPerBlock, F f,
               const CaptureOptions& options = {}) {
  std::unique_ptr<Context> holder;
  Context& ctx = detail::newCaptureContext(holder, name, threadsPerBlock);
  const auto start = std::chrono::steady_clock::now();
  {
    detail::ContextScope scope(ctx);
    detail::CaptureState state{ctx, options};
    using Args = typename detail::CallableArgs<F>::Args;
    auto args = [&]<size_t... K>(std::index_sequence<K...>) {
      // Braces keep parameters in declaration order.
      return std::tuple<std::tuple_element_t<K, Args>...>{
          detail::KernelParam<std::tuple_element_t<K, Args>>::make(state, K)...};
    }
    (std::make_index_sequence<std::tuple_size_v<Args>>{});
    detail::checkAllStaticLengthsUsed(state);
    auto result = std::apply(f, args);
    detail::bindOutputs(ctx, result);
  }
  const std::chrono::duration<double, std::milli> reify = std::chrono::steady_clock::now() - start;
  return detail::finishCapture(std::move(holder), options, reify.count());
}

}  // namespace obsidian
