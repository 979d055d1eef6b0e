/// Kernel capture: reify a C++ callable from input arrays to Push<Grid> results into a Kernel,
/// its parameters derived from the callable's types (DPull<EWord32> becomes `const uint32_t*
/// in0, uint32_t n0`). The parts that need no template live in src/kernel/capture.cpp.
/// @file
#pragma once

#include <boost/hana/for_each.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "obsidian/atomic.hpp"
#include "obsidian/force.hpp"
#include "obsidian/fused.hpp"
#include "obsidian/kernel.hpp"
#include "obsidian/matrix.hpp"

namespace obsidian {

// ------------------------------------------------------------------ parameters of a capture
namespace detail {

struct CaptureState {
  Context& ctx;
  const CaptureOptions& options;
  size_t staticUsed = 0;
};

uint32_t nextStaticLength(CaptureState& s, size_t position);
void checkAllStaticLengthsUsed(const CaptureState& s);
// The names of parameter k (CaptureOptions::names or `prefix` + k) and of its length (xLen or
// n + k), and of output j (CaptureOptions::outputNames or out + j).
std::string paramName(const CaptureState& s, size_t k, const char* prefix);
std::string lengthName(const CaptureState& s, size_t k);
std::string outputName(const CaptureState& s, size_t j);
// Checks CaptureOptions::names and outputNames against a kernel of `params` parameters and
// keeps the capture's fresh names away from them; before any parameter is made.
void checkNames(const CaptureState& s, size_t params);
// After the outputs are bound: CaptureOptions::outputNames has one name per output.
void checkOutputNameCount(const CaptureState& s, size_t outputs);
void addLengthParam(Context& ctx, const std::string& name);
void addArrayParam(Context& ctx, const std::vector<ArrayId>& ids, const ExpPtr& length,
                   bool output);
void addScalarParam(Context& ctx, const std::string& name, ScalarType type);

template <class P>
struct KernelParam {
  static_assert(alwaysFalse<P>,
                "capture: a kernel parameter must be DPull<T>, SPull<T> (with its length in "
                "CaptureOptions::staticLengths), DPull2<T> or RowAligned<W, T> (a matrix), "
                "DMutable<X> or a scalar Exp<X>");
};

// A matrix: `name` (its elements, row-major), then the scalars nameRows, nameCols and
// namePitch (elements from one row's start to the next's, at least nameCols); element (r, c)
// is name[r * pitch + c], and the array must hold rows * pitch elements. With `align` > 1 the
// pitch must be a multiple of align (RowAligned), and the reads say so: r * (pitch / align *
// align) + c.
template <class T>
DPull2<T> matrixParam(CaptureState& s, size_t k, uint32_t align) {
  const std::string name = paramName(s, k, "in");
  const auto h = MemoryOps<T>::global(s.ctx, name, false);
  std::vector<ArrayId> ids;
  MemoryOps<T>::ids(h, ids);
  const EWord32 rows = variable<uint32_t>(name + "Rows");
  const EWord32 cols = variable<uint32_t>(name + "Cols");
  const EWord32 pitch = variable<uint32_t>(name + "Pitch");
  addArrayParam(s.ctx, ids, (rows * pitch).node(), false);
  for (const EWord32& v : {rows, cols, pitch}) {
    addScalarParam(s.ctx, v.node()->name, ScalarType::U32);
  }
  s.ctx.require(cast<uint64_t>(rows) * cast<uint64_t>(pitch) <= EWord64(0xffffffffull),
                "matrix " + name + ": rows x pitch is at most 4294967295 (indices are 32-bit)");
  s.ctx.require(pitch >= cols, "matrix " + name + ": the pitch is at least the cols");
  EWord32 rowStep = pitch;
  if (align > 1) {
    s.ctx.require(pitch % align == 0u, "matrix " + name + ": the pitch is a multiple of " +
                                           std::to_string(align) + " (RowAligned<" +
                                           std::to_string(align) + ">)");
    rowStep = pitch / align * align;
  }
  return DPull2<T>(rows, cols, [h, rowStep](const EWord32& r, const EWord32& c) {
    return MemoryOps<T>::read(h, r * rowStep + c);
  });
}
template <class T>
struct KernelParam<Pull2<EWord32, EWord32, T>> {
  static DPull2<T> make(CaptureState& s, size_t k) { return matrixParam<T>(s, k, 1); }
};
// A matrix whose pitch is a multiple of W (matrix.hpp).
template <uint32_t W, class T>
struct KernelParam<RowAligned<W, T>> {
  static RowAligned<W, T> make(CaptureState& s, size_t k) {
    return RowAligned<W, T>(matrixParam<T>(s, k, W));
  }
};
template <class R, class C, class T>
struct KernelParam<Pull2<R, C, T>> {
  static_assert(alwaysFalse<R>,
                "capture: a matrix parameter is DPull2<T>: its rows, cols and pitch are scalar "
                "parameters given at launch (static sides are not parameters)");
};

template <class T>
struct KernelParam<Pull<EWord32, T>> {
  static Pull<EWord32, T> make(CaptureState& s, size_t k) {
    const auto h = MemoryOps<T>::global(s.ctx, paramName(s, k, "in"), false);
    std::vector<ArrayId> ids;
    MemoryOps<T>::ids(h, ids);
    const EWord32 n = variable<uint32_t>(lengthName(s, k));
    addArrayParam(s.ctx, ids, n.node(), false);
    addLengthParam(s.ctx, lengthName(s, k));  // after the pointers
    return Pull<EWord32, T>(n, [h](const EWord32& i) { return MemoryOps<T>::read(h, i); });
  }
};

template <class T>
struct KernelParam<Pull<uint32_t, T>> {
  static Pull<uint32_t, T> make(CaptureState& s, size_t k) {
    const uint32_t n = nextStaticLength(s, k);
    const auto h = MemoryOps<T>::global(s.ctx, paramName(s, k, "in"), false);
    std::vector<ArrayId> ids;
    MemoryOps<T>::ids(h, ids);
    addArrayParam(s.ctx, ids, ir::u32(n), false);
    return Pull<uint32_t, T>(n, [h](const EWord32& i) { return MemoryOps<T>::read(h, i); });
  }
};

template <KernelScalar X>
struct KernelParam<Mutable<EWord32, X>> {
  static DMutable<X> make(CaptureState& s, size_t k) {
    const ArrayRef id = MemoryOps<Exp<X>>::global(s.ctx, paramName(s, k, "m"), true);
    const EWord32 n = variable<uint32_t>(lengthName(s, k));
    addArrayParam(s.ctx, {id.id}, n.node(), false);  // writable, but not a result of the kernel
    addLengthParam(s.ctx, lengthName(s, k));
    return DMutable<X>(id, n);
  }
};

template <KernelScalar X>
struct KernelParam<Exp<X>> {
  static Exp<X> make(CaptureState& s, size_t k) {
    const std::string name = paramName(s, k, "s");
    addScalarParam(s.ctx, name, scalarTypeOf<X>);
    return variable<X>(name);
  }
};

// A callable whose parameter types can be read: a function, or a class with one non-template
// operator() (a lambda whose parameters are not `auto`).
template <class F>
concept HasOneCallOperator = requires {
  &F::operator();
};
template <class F>
concept ReadableParams =
    HasOneCallOperator<F> || std::is_function_v<F> || std::is_function_v<std::remove_pointer_t<F>>;

// Hidden from doxygen, which takes this base for the class itself ("recursive class relation").
/// @cond
template <class F>
struct CallableArgs : CallableArgs<decltype(&F::operator())> {};
/// @endcond
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

}  // namespace detail

/// The result of an effect-only kernel: a Grid program whose only effects are on the kernel's
/// DMutable arrays (writes and atomics), with no output array, e.g.\ a histogram that adds each
/// block's counts into global bins:
/// @code
///   capture("hist", 256, [](DPull<EWord32> in, DMutable<uint32_t> bins) {
///     return effect([=](const Program<Grid>& g) { g.distrPar(len(in) / 256u, ...); });
///   });
/// @endcode
/// Capture, launch, simulate, the report and exported launchers take no output for it. It may
/// also stand in a hana::tuple beside Push<Grid> outputs (its program runs in tuple order).
struct GridEffect {
  std::function<void(const Program<Grid>&)> body;  ///< the grid's program
};
/// effect(f): the GridEffect whose grid program is f(g), for a kernel's result.
template <class F>
GridEffect effect(F body) {
  static_assert(std::is_invocable_v<F, const Program<Grid>&>,
                "effect(f): f takes the grid's program, const Program<Grid>&");
  return GridEffect{std::function<void(const Program<Grid>&)>(std::move(body))};
}

/// An effect-only result with one block per element of `chunks` (as pConcat of exec<Block>
/// deals them): f(p, chunk) is the block's program, e.g.\ forEachBlock(splitUp(1000, in), ...).
template <class Len, class T, class F>
GridEffect forEachBlock(const Pull<Len, T>& chunks, F f) {
  static_assert(std::is_invocable_v<F, const Program<Block>&, const T&>,
                "forEachBlock(chunks, f): f takes (const Program<Block>&, a chunk)");
  return effect([chunks, f](const Program<Grid>& g) {
    g.distrPar(sizeConv(chunks.len()),
               [&](const Program<Block>& p, const EWord32& bid) { f(p, chunks[bid]); });
  });
}

// ------------------------------------------------------------------ contracts (SafeGPU)
/// require(condition, message): a precondition of the kernel being captured, over its scalar
/// parameters and array lengths (len(x) == len(y), n > 0u). Launch, simulate and the exported
/// launcher check it before anything runs (an Error, or cudaErrorInvalidValue, naming the
/// kernel and `message`); the report lists it. A condition known to be false now throws.
void require(const EBool& holds, const std::string& message);

/// ensure(result, condition, message): the output `result` (a Push<Grid> of the kernel's
/// result, or another ensure of one) with a postcondition every one of its elements must meet
/// once the kernel has run. `condition` is a function of the element, [](EFloat v) { return v >=
/// 0.0f; }, or of the whole output and an index, [](DPull<EWord32> out, EWord32 i) { return i ==
/// 0u || out[i - 1u] <= out[i]; }; it may read the kernel's inputs and scalars too. simulate
/// checks postconditions after every run, a GPU launch with LaunchOptions::checked after the
/// kernel; a violation throws Error naming the kernel, `message` and the first failing element.
template <class R, class F>
struct Ensured {
  R result;             ///< the output
  F condition;          ///< what each of its elements must meet
  std::string message;  ///< what a violation reports
};

namespace detail {
template <class R>
struct IsEnsured : std::false_type {};
template <class R, class F>
struct IsEnsured<Ensured<R, F>> : std::true_type {};
template <class R>
inline constexpr bool isOutput =
    isPush<R> || isPush2<R> || IsEnsured<std::remove_cvref_t<R>>::value;
// The element type of an output (through any ensure).
template <class R>
struct OutputElement {
  using type = typename R::Element;
};
template <class R, class F>
struct OutputElement<Ensured<R, F>> : OutputElement<R> {};
}  // namespace detail

/// ensure(result, condition, message): `result` with a postcondition, as an Ensured (see there);
/// what `result` and `condition` may be is checked at compile time.
template <class R, class F>
Ensured<R, F> ensure(R result, F condition, std::string message) {
  static_assert(detail::isOutput<R>,
                "ensure(result, condition, message): result must be a "
                "kernel output, a Push<Grid> array (or another ensure)");
  using T = typename detail::OutputElement<R>::type;
  static_assert(std::is_invocable_r_v<EBool, F, const T&> ||
                    std::is_invocable_r_v<EBool, F, const DPull<T>&, const EWord32&>,
                "ensure(result, condition, message): condition takes an output element, or the "
                "output (DPull<T>) and an index (EWord32), and returns EBool");
  return Ensured<R, F>{std::move(result), std::move(condition), std::move(message)};
}

/// ensure<K>(fused, condition, message): a fused result (a Fused<Grid>, or another ensure<J> of
/// one) whose part K has a postcondition, as ensure gives a single output one.
template <size_t K, class R, class F>
struct EnsuredPart {
  R result;             ///< the fused result
  F condition;          ///< what each element of part K must meet
  std::string message;  ///< what a violation reports
};

namespace detail {
template <class R>
struct FusedResult : std::false_type {};
template <class L, class... Parts>
struct FusedResult<Fused<L, Parts...>> : std::true_type {
  using Fused = obsidian::Fused<L, Parts...>;
};
template <size_t K, class R, class F>
struct FusedResult<EnsuredPart<K, R, F>> : FusedResult<R> {};
// A fused result: a Fused<L, ...> through any ensure<K>.
template <class R>
inline constexpr bool isFusedResult = FusedResult<std::remove_cvref_t<R>>::value;
}  // namespace detail

/// ensure<K>(fused, condition, message): part K of a fused result with a postcondition, as an
/// EnsuredPart (see there); K and `condition` are checked at compile time.
template <size_t K, class R, class F>
EnsuredPart<K, R, F> ensure(R result, F condition, std::string message) {
  static_assert(detail::isFusedResult<R>,
                "ensure<K>(result, condition, message): result must be a fused kernel result, a "
                "Fused<Grid> (pConcat of fuse) or another ensure<J> of one");
  if constexpr (detail::isFusedResult<R>) {
    using Whole = typename detail::FusedResult<R>::Fused;
    static_assert(K < Whole::parts, "ensure<K>: K must name a part of the fused result");
    if constexpr (K < Whole::parts) {
      using T = typename Whole::template Part<K>::Element;
      static_assert(std::is_invocable_r_v<EBool, F, const T&> ||
                        std::is_invocable_r_v<EBool, F, const DPull<T>&, const EWord32&>,
                    "ensure<K>(result, condition, message): condition takes an element of part "
                    "K, or the part (DPull<T>) and an index (EWord32), and returns EBool");
    }
  }
  return EnsuredPart<K, R, F>{std::move(result), std::move(condition), std::move(message)};
}

namespace detail {

// Records output `out`'s postcondition `holds` (over the variable `index`) in the capture.
void addPostcondition(Context& ctx, const EBool& holds, const std::string& index,
                      const EWord32& count, size_t outputIndex, const std::string& output,
                      const std::string& message);

template <class T>
using OutputHandle = decltype(MemoryOps<T>::global(std::declval<Context&>(), std::string(), true));

// The global arrays of output j, of `length` elements of type T, made parameters.
template <class T>
OutputHandle<T> outputArrays(const CaptureState& s, const EWord32& length, size_t j) {
  static_assert(Storable<T>, "capture: output elements must be Exp<X> or hana::tuple of them");
  const auto h = MemoryOps<T>::global(s.ctx, outputName(s, j), true);
  std::vector<ArrayId> ids;
  MemoryOps<T>::ids(h, ids);
  addArrayParam(s.ctx, ids, length.node(), true);
  s.ctx.kernel().outputs.push_back(OutputInfo{ids, length.node()});
  return h;
}
template <class T>
Writer<T> outputWriter(const OutputHandle<T>& h) {
  return [h](const Program<Thread>& t, const T& v, const EWord32& i) {
    MemoryOps<T>::write(t, h, i, v);
  };
}

// Binds output j and returns it as a pull array over the output's arrays (what a
// postcondition reads).
template <class R>
auto bindOutput(const CaptureState& s, const R& result, size_t j) {
  Context& ctx = s.ctx;
  static_assert(
      isPush<R>,
      "capture: a kernel's result must be a Push<Grid> array, a Fused<Grid> (pConcat of fuse), "
      "an effect, or a hana::tuple of them");
  using L = typename R::Level;
  static_assert(!std::is_same_v<L, Warp>,
                "warp-level programs only inside blocks: pConcat the Push<Warp> arrays into a "
                "Push<Block> first");
  static_assert(std::is_same_v<L, Grid> || std::is_same_v<L, Warp>,
                "capture: a kernel's result must be Push<Grid>: pConcat block programs over the "
                "grid");
  using T = typename R::Element;
  const auto h = outputArrays<T>(s, sizeConv(result.len()), j);
  Program<Grid> p(ctx, ctx.kernel().body);
  result(p, outputWriter<T>(h));
  return DPull<T>(sizeConv(result.len()),
                  [h](const EWord32& i) { return MemoryOps<T>::read(h, i); });
}

// A 2-D result: a dense row-major output of rows * cols elements, element (r, c) at
// r * cols + c.
template <class L, class R, class C, class T>
auto bindOutput(const CaptureState& s, const Push2<L, R, C, T>& result, size_t j) {
  static_assert(std::is_same_v<L, Grid>,
                "capture: a 2-D result must be Push2<Grid>: pConcat2 the block programs over the "
                "grid");
  return bindOutput(s, flatten(result), j);
}

// Records `condition` (of an element, or of the output and an index) as output j's
// postcondition.
template <class T, class F>
void recordPostcondition(const CaptureState& s, const DPull<T>& out, const F& condition, size_t j,
                         const std::string& message) {
  const EWord32 i = variable<uint32_t>(s.ctx.fresh("i"));
  const EBool holds = [&] {
    if constexpr (std::is_invocable_r_v<EBool, F, const T&>) {
      return EBool(condition(out[i]));
    } else {
      return EBool(condition(out, i));
    }
  }();
  addPostcondition(s.ctx, holds, i.node()->name, len(out), j, outputName(s, j), message);
}

// An output with a postcondition: bound as the output, then the condition recorded.
template <class R, class F>
auto bindOutput(const CaptureState& s, const Ensured<R, F>& e, size_t j) {
  using T = typename OutputElement<R>::type;
  const DPull<T> out = bindOutput(s, e.result, j);
  recordPostcondition(s, out, e.condition, j, e.message);
  return out;
}

// Binds the parts of a fused result as outputs first, first + 1, ..., all written by one run
// of its program (one grid loop); returns them as pull arrays (what postconditions read).
template <class L, class... Parts>
auto bindFused(const CaptureState& s, const Fused<L, Parts...>& result, size_t first) {
  static_assert(std::is_same_v<L, Grid>,
                "capture: a fused result must be Fused<Grid>: pConcat the fused block programs "
                "over the grid");
  if constexpr (std::is_same_v<L, Grid>) {
    using F = Fused<Grid, Parts...>;
    using Outputs = std::tuple<DPull<typename Parts::Element>...>;
    return [&]<size_t... K>(std::index_sequence<K...>) {
      // Braces bind the outputs in part order.
      using Handles = std::tuple<OutputHandle<typename Parts::Element>...>;
      const Handles h{outputArrays<typename Parts::Element>(s, sizeConv(std::get<K>(result.lens())),
                                                            first + K)...};
      Program<Grid> p(s.ctx, s.ctx.kernel().body);
      result(p, typename F::Writers{outputWriter<typename Parts::Element>(std::get<K>(h))...});
      return Outputs{DPull<typename Parts::Element>(
          sizeConv(std::get<K>(result.lens())), [hk = std::get<K>(h)](const EWord32& i) {
            return MemoryOps<typename Parts::Element>::read(hk, i);
          })...};
    }
    (std::index_sequence_for<Parts...>{});
  } else {
    return std::tuple<>{};  // (the static_assert above has fired)
  }
}

// A fused result with a postcondition on part K: bound as the fused result, then the condition
// recorded on output first + K.
template <size_t K, class R, class F>
auto bindFused(const CaptureState& s, const EnsuredPart<K, R, F>& e, size_t first) {
  const auto outs = bindFused(s, e.result, first);
  recordPostcondition(s, std::get<K>(outs), e.condition, first + K, e.message);
  return outs;
}

void bindEffect(Context& ctx, const GridEffect& effect);

template <class R>
void bindOutputs(const CaptureState& s, const R& result) {
  size_t j = 0;
  if constexpr (std::is_same_v<R, GridEffect>) {
    bindEffect(s.ctx, result);
  } else if constexpr (isFusedResult<R>) {
    const auto outs = bindFused(s, result, j);
    j += std::tuple_size_v<std::remove_cvref_t<decltype(outs)>>;
  } else if constexpr (isOutput<R>) {
    bindOutput(s, result, j++);
  } else {
    hana::for_each(result, [&](const auto& r) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(r)>, GridEffect>) {
        bindEffect(s.ctx, r);
      } else if constexpr (isFusedResult<decltype(r)>) {
        const auto outs = bindFused(s, r, j);
        j += std::tuple_size_v<std::remove_cvref_t<decltype(outs)>>;
      } else {
        bindOutput(s, r, j++);
      }
    });
  }
  checkOutputNameCount(s, j);
}

Context& newCaptureContext(std::unique_ptr<Context>& holder, const std::string& name,
                           uint32_t threadsPerBlock);
Kernel finishCapture(std::unique_ptr<Context> ctx, const CaptureOptions& options,
                     double reifyMilliseconds);

}  // namespace detail

/// capture(name, threadsPerBlock, f): reify f into a kernel run by `threadsPerBlock` real
/// threads per block. f takes DPull/SPull/DMutable arrays and scalar Exps and returns a
/// Push<Grid> (or a hana::tuple of them, one output each), a Fused<Grid> (pConcat of fused block
/// programs: one output per part, all written by one grid loop), or a GridEffect (effect(...))
/// for a kernel whose only effects are on its DMutable arrays.
template <class F>
Kernel capture(const std::string& name, uint32_t threadsPerBlock, F f,
               const CaptureOptions& options = {}) {
  static_assert(detail::ReadableParams<F>,
                "capture(name, threads, f): f's parameter types make the kernel's parameters, so "
                "they must be concrete (DPull<EWord32>, DMutable<uint32_t>, EWord32, ...): a "
                "generic lambda (auto parameters) or an overloaded callable cannot be captured");
  if constexpr (!detail::ReadableParams<F>) {
    throw Error("capture: f is not capturable");  // (the static_assert above has fired)
  } else {
    std::unique_ptr<Context> holder;
    Context& ctx = detail::newCaptureContext(holder, name, threadsPerBlock);
    const auto start = std::chrono::steady_clock::now();
    {
      detail::ContextScope scope(ctx);
      detail::CaptureState state{ctx, options};
      using Args = typename detail::CallableArgs<F>::Args;
      detail::checkNames(state, std::tuple_size_v<Args>);
      auto args = [&]<size_t... K>(std::index_sequence<K...>) {
        // Braces keep parameters in declaration order.
        return std::tuple<std::tuple_element_t<K, Args>...>{
            detail::KernelParam<std::tuple_element_t<K, Args>>::make(state, K)...};
      }
      (std::make_index_sequence<std::tuple_size_v<Args>>{});
      detail::checkAllStaticLengthsUsed(state);
      auto result = std::apply(f, args);
      detail::bindOutputs(state, result);
    }
    const std::chrono::duration<double, std::milli> reify =
        std::chrono::steady_clock::now() - start;
    return detail::finishCapture(std::move(holder), options, reify.count());
  }
}

}  // namespace obsidian
