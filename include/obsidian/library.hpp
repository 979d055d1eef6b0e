/// The array library: the whole of the paper's Figure 14 with its names, plus what the paper's
/// programs use (compose, the bit helpers of sklansky2's phase). Everything here only builds
/// pull/push arrays or emits statements through a Program; nothing runs until the kernel does.
/// @file
#pragma once

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "obsidian/force.hpp"
#include "obsidian/fused.hpp"

namespace obsidian {

namespace detail {
template <class A, class B>
using JoinLen = std::conditional_t<std::is_same_v<A, uint32_t> && std::is_same_v<B, uint32_t>,
                                   uint32_t, EWord32>;

template <class Len>
Len lenMin(const auto& a, const auto& b) {
  if constexpr (std::is_same_v<Len, uint32_t>) {
    return std::min<uint32_t>(a, b);
  } else {
    return min(sizeConv(a), sizeConv(b));
  }
}
// The length of a combined array (a concatenation, a nesting flattened), never wrapped past
// 2^32 - 1: a static length that would wrap is an Error now; a dynamic one that could is a
// launch precondition (checked by launch, simulate and exported launchers). `what` names the
// combinator for the message.
uint32_t lenMul(const char* what, uint32_t a, uint32_t b);
EWord32 lenMul(const char* what, const EWord32& a, const EWord32& b);
uint32_t lenAdd(const char* what, uint32_t a, uint32_t b);
EWord32 lenAdd(const char* what, const EWord32& a, const EWord32& b);
template <class Len>
Len lenAdd(const char* what, const auto& a, const auto& b) {
  if constexpr (std::is_same_v<Len, uint32_t>) {
    return lenAdd(what, static_cast<uint32_t>(a), static_cast<uint32_t>(b));
  } else {
    return lenAdd(what, sizeConv(a), sizeConv(b));
  }
}
template <class Len>
Len lenMul(const char* what, const Len& a, uint32_t b) {
  if constexpr (std::is_same_v<Len, uint32_t>) {
    return lenMul(what, a, b);
  } else {
    return lenMul(what, a, EWord32(b));
  }
}
inline std::string str(uint32_t n) { return std::to_string(n); }

// Static check now, or a launch precondition for a dynamic length.
void checkDivisible(const char* what, uint32_t n, uint32_t length);
void checkDivisible(const char* what, uint32_t n, const EWord32& length);
void checkAtMost(const char* what, uint32_t k, uint32_t length);
void checkAtMost(const char* what, uint32_t k, const EWord32& length);
void checkNonEmpty(const char* what, uint32_t length);
void checkNonEmpty(const char* what, const EWord32& length);
}  // namespace detail

// ---------------------------------------------------------------- mapping
/// fmap(f, arr): the array whose element i is f(arr[i]), computed where it is read.
template <class F, class Len, class T>
auto fmap(F f, const Pull<Len, T>& arr) {
  using U = std::invoke_result_t<F, T>;
  return Pull<Len, U>(arr.len(), [f, arr](const EWord32& i) { return f(arr[i]); });
}

/// fmap(f, arr) of a push array: f applied to each element as the array's program writes it.
template <class F, class L, class Len, class T>
auto fmap(F f, const Push<L, Len, T>& arr) {
  using U = std::invoke_result_t<F, T>;
  return Push<L, Len, U>(arr.len(), [f, arr](const Program<L>& p, const Writer<U>& w) {
    arr(p, [&](const Program<Thread>& t, const T& v, const EWord32& i) { w(t, f(v), i); });
  });
}

/// zipWith(f, a, b): the array whose element i is f(a[i], b[i]), as long as the shorter.
template <class F, class LA, class A, class LB, class B>
auto zipWith(F f, const Pull<LA, A>& a, const Pull<LB, B>& b) {
  using Len = detail::JoinLen<LA, LB>;
  using C = std::invoke_result_t<F, A, B>;
  return Pull<Len, C>(detail::lenMin<Len>(a.len(), b.len()),
                      [f, a, b](const EWord32& i) { return f(a[i], b[i]); });
}

/// ixMap(f, arr): the array whose element i is arr[f(i)] (a permutation when f is one; on a
/// register array, each read of another lane's element is one shuffle).
template <class F, class Len, class T>
Pull<Len, T> ixMap(F f, const Pull<Len, T>& arr) {
  return Pull<Len, T>(arr.len(), [f, arr](const EWord32& i) { return arr[f(i)]; });
}

// ---------------------------------------------------------------- splitting
/// splitAt(k, arr): the first k elements and the rest (k is at most the length).
template <class Len, class T>
std::pair<Pull<uint32_t, T>, Pull<Len, T>> splitAt(uint32_t k, const Pull<Len, T>& arr) {
  detail::checkAtMost("splitAt", k, arr.len());
  return {Pull<uint32_t, T>(k, [arr](const EWord32& i) { return arr[i]; }),
          Pull<Len, T>(arr.len() - k, [arr, k](const EWord32& i) { return arr[i + k]; })};
}

/// @{
/// halve(arr) = splitAt(len / 2): the first half is the shorter for odd lengths.
template <class T>
std::pair<SPull<T>, SPull<T>> halve(const SPull<T>& arr) {
  return splitAt(arr.len() / 2, arr);
}
template <class T>
std::pair<DPull<T>, DPull<T>> halve(const DPull<T>& arr) {
  const EWord32 h = arr.len() / 2u;
  return {DPull<T>(h, [arr](const EWord32& i) { return arr[i]; }),
          DPull<T>(arr.len() - h, [arr, h](const EWord32& i) { return arr[i + h]; })};
}
/// @}

/// (elements at even indices, elements at odd indices)
template <class Len, class T>
std::pair<Pull<Len, T>, Pull<Len, T>> evenOdds(const Pull<Len, T>& arr) {
  const Len n = arr.len();
  const Len odd = n / 2u;
  return {Pull<Len, T>(n - odd, [arr](const EWord32& i) { return arr[2u * i]; }),
          Pull<Len, T>(odd, [arr](const EWord32& i) { return arr[2u * i + 1u]; })};
}

/// splitUp(n, arr): consecutive chunks of n elements.
template <class Len, class T>
Pull<Len, SPull<T>> splitUp(uint32_t n, const Pull<Len, T>& arr) {
  detail::checkDivisible("splitUp", n, arr.len());
  return Pull<Len, SPull<T>>(arr.len() / n, [arr, n](const EWord32& i) {
    return SPull<T>(n, [arr, n, i](const EWord32& j) { return arr[i * n + j]; });
  });
}

/// splitUpRagged(n, arr): consecutive chunks of n elements, for any length: ceil(len / n)
/// chunks, element j of chunk i being arr[min(i * n + j, len - 1)]. Past the array's end the
/// last chunk repeats its last element, so a chunk's program (a block's, a warp's) may read all
/// n elements as static code wants; what it writes there is dropped by takeP(len(arr), ...) over
/// the concatenated results, and its folds must skip those elements (element j of chunk i is
/// the array's when i * n + j < len).
template <class Len, class T>
Pull<Len, SPull<T>> splitUpRagged(uint32_t n, const Pull<Len, T>& arr) {
  if (n == 0) throw Error("splitUpRagged: chunks of 0 elements");
  const Len len = arr.len();
  Len chunks = len / n;  // and one more for a ragged end (no overflow near 2^32 - 1)
  if constexpr (std::is_same_v<Len, uint32_t>) {
    chunks += len % n != 0 ? 1 : 0;
  } else {
    chunks = chunks + cast<uint32_t>(len % n != 0u);
  }
  const EWord32 last = sizeConv(len) - 1u;           // not read when there are no chunks
  return Pull<Len, SPull<T>>(chunks, [arr, n, last](const EWord32& i) {
    return SPull<T>(n, [arr, n, i, last](const EWord32& j) { return arr[min(i * n + j, last)]; });
  });
}

/// coalesce(n, arr): len/n chunks of n elements each, chunk i holding arr[i + s*j] for
/// s = len/n: consecutive chunks start at consecutive elements, so the threads that reduce
/// chunks read memory together (the paper's Figure 5, right).
template <class Len, class T>
Pull<Len, SPull<T>> coalesce(uint32_t n, const Pull<Len, T>& arr) {
  detail::checkDivisible("coalesce", n, arr.len());
  const Len s = arr.len() / n;
  return Pull<Len, SPull<T>>(s, [arr, n, s](const EWord32& i) {
    return SPull<T>(n, [arr, s, i](const EWord32& j) { return arr[i + sizeConv(s) * j]; });
  });
}

// ---------------------------------------------------------------- small arrays
/// replicate(n, a): n copies of a (n an integer, static, or an EWord32).
template <class N, class T>
auto replicate(N n, const T& a) {
  return mkPull(n, [a](const EWord32&) { return a; });
}
/// singleton(a): the one-element array of a.
template <class T>
SPull<T> singleton(const T& a) {
  return SPull<T>(1, [a](const EWord32&) { return a; });
}
/// first(arr): arr's first element (arr must not be empty).
template <class Len, class T>
T first(const Pull<Len, T>& arr) {
  detail::checkNonEmpty("first", arr.len());
  return arr[0u];
}
/// last(arr): arr's last element (arr must not be empty).
template <class Len, class T>
T last(const Pull<Len, T>& arr) {
  detail::checkNonEmpty("last", arr.len());
  return arr[sizeConv(arr.len()) - 1u];
}

/// singletonPush<L>(f): the one value that the level-L program f computes, written by one
/// instance of the level (thread 0 of a block or lane 0 of a warp).
template <class L, class F>
auto singletonPush(F f) {
  using T = std::invoke_result_t<F, const Program<L>&>;
  return Push<L, uint32_t, T>(1, [f](const Program<L>& p, const Writer<T>& w) {
    const T v = f(p);
    if constexpr (std::is_same_v<L, Thread>) {
      w(p, v, 0u);
    } else {
      p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) { w(t, v, 0u); });
    }
  });
}

/// exec<L>(f): the Push<L> array that the level-L program f returns, as a push array of its
/// own (Obsidian's execBlock/execWarp): f's statements run first, then the push it returned.
/// f may return any push-like array of level L (Push, Fused, Push2): the result is of its type.
/// f runs once more, into a scratch program, to learn the shape; it must be a pure generator.
template <class L, class F>
auto exec(F f) {
  using R = std::invoke_result_t<F, const Program<L>&>;
  static_assert(detail::PushLike<R> && std::is_same_v<typename R::Level, L>,
                "exec<L>(f): f must return a Push<L> array (or a fused or 2-D one)");
  Context* outer = detail::currentContext();
  Context scratch(outer ? outer->threadsPerBlock() : 1, outer ? outer->serial() : 0);
  if (outer) {
    scratch.kernel().name = outer->kernel().name;
    // What f may look up about the arrays it reads (vectors<W> checks that one is global), and
    // the parameters a require in f may name (its preconditions are recorded when f runs
    // again, into the kernel's program).
    scratch.kernel().arrays = outer->kernel().arrays;
    scratch.kernel().params = outer->kernel().params;
  }
  const typename R::Shape shape = [&] {
    detail::ContextScope scope(scratch);
    Body ignored;
    return typename R::Shape(f(Program<L>(scratch, ignored)).shape());
  }();
  return R(shape, [f](const Program<L>& p, const typename R::Sink& w) { f(p)(p, w); });
}

// ---------------------------------------------------------------- concatenation
/// conc(a, b): a pull array that chooses between a and b with a conditional per element.
template <class LA, class LB, class T>
auto conc(const Pull<LA, T>& a, const Pull<LB, T>& b) {
  using Len = detail::JoinLen<LA, LB>;
  const EWord32 na = sizeConv(a.len());
  return Pull<Len, T>(detail::lenAdd<Len>("conc", a.len(), b.len()), [a, b, na](const EWord32& i) {
    return MemoryOps<T>::select(i < na, a[i], b[i - na]);
  });
}

/// concP(a, b): a then b, each with its own iteration scheme; no conditionals.
template <class L, class LA, class LB, class T>
auto concP(const Push<L, LA, T>& a, const Push<L, LB, T>& b) {
  using Len = detail::JoinLen<LA, LB>;
  const EWord32 na = sizeConv(a.len());
  return Push<L, Len, T>(
      detail::lenAdd<Len>("concP", a.len(), b.len()),
      [a, b, na](const Program<L>& p, const Writer<T>& w) {
        a(p, w);
        b(p, [&](const Program<Thread>& t, const T& v, const EWord32& i) { w(t, v, i + na); });
      });
}

/// takeP(n, arr): the first n elements of a push array (the writes at n and beyond are dropped,
/// each behind a conditional). n is static (uint32_t) or dynamic (EWord32).
template <class N, class L, class Len, class T>
auto takeP(const N& n, const Push<L, Len, T>& arr) {
  using OutLen = std::conditional_t<std::is_integral_v<N>, uint32_t, EWord32>;
  const OutLen len = static_cast<OutLen>(n);
  const EWord32 limit = sizeConv(len);
  return Push<L, OutLen, T>(len, [limit, arr](const Program<L>& p, const Writer<T>& w) {
    arr(p, [&](const Program<Thread>& t, const T& v, const EWord32& i) {
      t.cond(i < limit, [&](const Program<Thread>& u) { w(u, v, i); });
    });
  });
}

// ---------------------------------------------------------------- tuples
/// zip(a, b): the array of pairs (a[i], b[i]) as hana tuples, as long as the shorter.
template <class LA, class A, class LB, class B>
auto zip(const Pull<LA, A>& a, const Pull<LB, B>& b) {
  using Len = detail::JoinLen<LA, LB>;
  return Pull<Len, hana::tuple<A, B>>(
      detail::lenMin<Len>(a.len(), b.len()),
      [a, b](const EWord32& i) { return hana::make_tuple(a[i], b[i]); });
}
/// unzip(arr): the arrays of the pairs' first and of their second components.
template <class Len, class A, class B>
std::pair<Pull<Len, A>, Pull<Len, B>> unzip(const Pull<Len, hana::tuple<A, B>>& arr) {
  return {Pull<Len, A>(arr.len(), [arr](const EWord32& i) { return hana::at_c<0>(arr[i]); }),
          Pull<Len, B>(arr.len(), [arr](const EWord32& i) { return hana::at_c<1>(arr[i]); })};
}
/// upair: [(a0,b0), (a1,b1), ...] -> [a0, b0, a1, b1, ...]
template <class Len, class A>
Pull<Len, A> upair(const Pull<Len, hana::tuple<A, A>>& arr) {
  return Pull<Len, A>(detail::lenMul("upair", arr.len(), 2u), [arr](const EWord32& i) {
    const hana::tuple<A, A> pair = arr[i / 2u];
    return MemoryOps<A>::select((i & 1u) == 0u, hana::at_c<0>(pair), hana::at_c<1>(pair));
  });
}

// ---------------------------------------------------------------- divide and conquer
/// binSplit(n, f, arr): cut arr into 2^n equal parts, apply f to each, concatenate. The part
/// an index falls in is computed, not chosen by a chain of conditionals.
template <class T, class F>
auto binSplit(uint32_t n, F f, const SPull<T>& arr) {
  if (n >= 32) throw Error("binSplit(" + detail::str(n) + ") needs fewer than 32 splits");
  const uint32_t parts = uint32_t{1} << n;
  if (arr.len() % parts != 0) {
    throw Error("binSplit(" + detail::str(n) + ") needs a length divisible by " +
                detail::str(parts) + " (2^" + detail::str(n) + " parts); got " +
                detail::str(arr.len()));
  }
  const uint32_t partLen = arr.len() / parts;
  auto part = [arr, partLen](const EWord32& p) {
    return SPull<T>(partLen, [arr, partLen, p](const EWord32& k) { return arr[p * partLen + k]; });
  };
  using R = std::invoke_result_t<F, SPull<T>>;
  static_assert(isPull<R>, "binSplit: f must map a pull array to a pull array");
  using U = typename R::Element;
  const uint32_t m = f(part(EWord32(0u))).len();
  return SPull<U>(detail::lenMul("binSplit", m, parts),
                  [f, part, m](const EWord32& i) { return f(part(i / m))[i % m]; });
}

// ---------------------------------------------------------------- nesting across levels
namespace detail {
// The writers of a concatenation's inner array b: part k's element j goes to b * m[k] + j.
template <class Writers, class Lens, size_t... K>
Writers shiftedWriters(const Writers& w, const Lens& m, const EWord32& b,
                       std::index_sequence<K...>) {
  return Writers{
      [wk = std::get<K>(w), mk = std::get<K>(m), b](const Program<Thread>& t, const auto& v,
                                                    const EWord32& j) { wk(t, v, b * mk + j); }...};
}

// The concatenation (pConcat, tConcat) of fused arrays: a fused array of level Up whose part k
// is the concatenation of the inner arrays' parts k, all written by one loop(p, n, body) over
// the inner arrays.
template <class Up, class Len, class L, class... P, class Loop>
auto concatFused(const char* what, const Pull<Len, Fused<L, P...>>& arr, Loop loop) {
  static_assert((std::is_same_v<typename P::Length, uint32_t> && ...),
                "pConcat/tConcat: the parts of the inner fused arrays need a static length "
                "(uint32_t)");
  using R = Fused<Up, Push<Up, Len, typename P::Element>...>;
  const typename Fused<L, P...>::Lengths m = arr[0u].lens();
  const typename R::Lengths lens = std::apply(
      [&](auto... mk) { return typename R::Lengths{lenMul(what, arr.len(), mk)...}; }, m);
  return R(lens, [arr, m, loop](const Program<Up>& p, const typename R::Writers& w) {
    loop(p, sizeConv(arr.len()), [&](const auto& q, const EWord32& b) {
      arr[b](q, shiftedWriters(w, m, b, std::index_sequence_for<P...>{}));
    });
  });
}
}  // namespace detail

/// tConcat<L>(arr): every inner sequential Push<Thread> runs in one thread of level L. Inner
/// fused arrays (fuse of Push<Thread>) make a fused array whose part k concatenates parts k.
template <class L, class Len, class Inner>
auto tConcat(const Pull<Len, Inner>& arr) {
  static_assert((isPush<Inner> || isFused<Inner>)&&std::is_same_v<typename Inner::Level, Thread>,
                "tConcat: the elements must be Push<Thread> arrays (or fused ones)");
  auto loop = [](const Program<L>& p, const EWord32& n, const auto& body) {
    if constexpr (std::is_same_v<L, Thread>) {
      p.seqFor(n, body);
    } else {
      p.forAll(n, body);
    }
  };
  if constexpr (isFused<Inner>) {
    return detail::concatFused<L>("tConcat", arr, loop);
  } else {
    static_assert(std::is_same_v<typename Inner::Length, uint32_t>,
                  "tConcat: the inner arrays need a static length (uint32_t)");
    using T = typename Inner::Element;
    const uint32_t m = arr[0u].len();
    return Push<L, Len, T>(detail::lenMul("tConcat", arr.len(), m),
                           [arr, m, loop](const Program<L>& p, const Writer<T>& w) {
                             loop(p, sizeConv(arr.len()),
                                  [&](const Program<Thread>& t, const EWord32& i) {
                                    arr[i](t, [&](const Program<Thread>& t2, const T& v,
                                                  const EWord32& j) { w(t2, v, i * m + j); });
                                  });
                           });
  }
}

/// pConcat(arr): the inner Push<L> arrays computed in parallel over level Step<L> (Block
/// programs over the grid, Warp programs over a block, Thread programs over a warp).
/// pConcat<Target>(arr) states the level expected, checked at compile time. Inner fused arrays
/// (fuse(...)) make a fused array: one loop writes every part.
template <class Target = void, class Len, class Inner>
auto pConcat(const Pull<Len, Inner>& arr) {
  static_assert(isPush<Inner> || isFused<Inner>,
                "pConcat: the elements must be push arrays (or fused ones)");
  using L = typename Inner::Level;
  static_assert(level_le<L, Block>,
                "pConcat steps exactly one level up: there is no level above Grid");
  if constexpr (!std::is_same_v<L, Grid>) {  // no further errors after the one above
    using Up = Step<L>;
    static_assert(std::is_same_v<Target, void> || std::is_same_v<Target, Up>,
                  "pConcat steps exactly one level up: Push<L> elements make a Push<Step<L>>");
    auto loop = [](const Program<Up>& p, const EWord32& n, const auto& body) {
      p.distrPar(n, body);
    };
    if constexpr (isFused<Inner>) {
      return detail::concatFused<Up>("pConcat", arr, loop);
    } else {
      static_assert(std::is_same_v<typename Inner::Length, uint32_t>,
                    "pConcat: the inner arrays need a static length (uint32_t)");
      using T = typename Inner::Element;
      const uint32_t m = arr[0u].len();
      return Push<Up, Len, T>(detail::lenMul("pConcat", arr.len(), m),
                              [arr, m, loop](const Program<Up>& p, const Writer<T>& w) {
                                loop(p, sizeConv(arr.len()),
                                     [&](const Program<L>& q, const EWord32& b) {
                                       arr[b](q, [&](const Program<Thread>& t, const T& v,
                                                     const EWord32& j) { w(t, v, b * m + j); });
                                     });
                              });
    }
  }
}

/// sConcat(arr): the inner Push<L> arrays one after another at the same level.
template <class Len, class Inner>
auto sConcat(const Pull<Len, Inner>& arr) {
  static_assert(isPush<Inner>, "sConcat: the elements must be push arrays");
  using L = typename Inner::Level;
  static_assert(std::is_same_v<typename Inner::Length, uint32_t>,
                "sConcat: the inner arrays need a static length (uint32_t)");
  using T = typename Inner::Element;
  const uint32_t m = arr[0u].len();
  return Push<L, Len, T>(
      detail::lenMul("sConcat", arr.len(), m), [arr, m](const Program<L>& p, const Writer<T>& w) {
        p.seqFor(sizeConv(arr.len()), [&](const Program<L>& q, const EWord32& s) {
          arr[s](q, [&](const Program<Thread>& t, const T& v, const EWord32& j) {
            w(t, v, s * m + j);
          });
        });
      });
}

// ---------------------------------------------------------------- sequential primitives
/// seqReduce(op, arr): a one-element Push<Thread> holding op-fold of arr (a for loop).
template <class Op, class Len, class T>
SPush<Thread, T> seqReduce(Op op, const Pull<Len, T>& arr) {
  detail::checkNonEmpty("seqReduce", arr.len());
  return SPush<Thread, T>(1, [op, arr](const Program<Thread>& p, const Writer<T>& w) {
    const T acc = MemoryOps<T>::declare(p, arr[0u]);
    p.seqFor(sizeConv(arr.len()) - 1u, [&](const Program<Thread>& q, const EWord32& i) {
      MemoryOps<T>::assign(q, acc, op(acc, arr[i + 1u]));
    });
    w(p, acc, 0u);
  });
}

/// seqFoldStrided(f, init, arr, first, stride, unroll): a one-element Push<Thread> holding
/// f(...f(f(init, arr[first]), arr[first + stride])...) over every index first + k * stride below
/// len(arr) (init when there is none). f combines an accumulator with an element (they may have
/// different types, e.g. a scalar and a vector). Each iteration reads `unroll` elements before
/// combining any, so that many loads are in flight per thread: what a memory-bound sweep over a
/// grid-strided share needs to reach the device's bandwidth.
template <class F, class A, class Len, class T>
SPush<Thread, A> seqFoldStrided(F f, const A& init, const Pull<Len, T>& arr, const EWord32& first,
                                const EWord32& stride, uint32_t unroll = 1) {
  if (unroll == 0) throw Error("seqFoldStrided needs an unroll factor of at least 1; got 0");
  return SPush<Thread, A>(1, [=](const Program<Thread>& p, const Writer<A>& w) {
    const EWord32 n = sizeConv(arr.len());
    // Elements of this thread: first, first + stride, ... below n (no overflow near 2^32).
    const EWord32 count =
        p.declare(ifThenElse(first < n, (n - first - 1u) / stride + 1u, EWord32(0u)));
    const EWord32 rounds = p.declare(count / unroll);
    const A acc = MemoryOps<A>::declare(p, init);
    p.seqFor(rounds, [&](const Program<Thread>& q, const EWord32& r) {
      const EWord32 base = first + r * (stride * unroll);
      A x = acc;
      for (uint32_t u = 0; u < unroll; ++u) x = f(x, arr[base + stride * u]);
      MemoryOps<A>::assign(q, acc, x);
    });
    const EWord32 done = rounds * unroll;
    for (uint32_t u = 0; u + 1 < unroll; ++u) {
      p.cond(done + u < count, [&](const Program<Thread>& q) {
        MemoryOps<A>::assign(q, acc, f(acc, arr[first + (done + u) * stride]));
      });
    }
    w(p, acc, 0u);
  });
}

/// seqScan(op, arr): the inclusive prefixes of arr, computed by one sequential loop.
template <class Op, class Len, class T>
Push<Thread, Len, T> seqScan(Op op, const Pull<Len, T>& arr) {
  detail::checkNonEmpty("seqScan", arr.len());
  return Push<Thread, Len, T>(arr.len(), [op, arr](const Program<Thread>& p, const Writer<T>& w) {
    const T acc = MemoryOps<T>::declare(p, arr[0u]);
    w(p, acc, 0u);
    p.seqFor(sizeConv(arr.len()) - 1u, [&](const Program<Thread>& q, const EWord32& i) {
      MemoryOps<T>::assign(q, acc, op(acc, arr[i + 1u]));
      w(q, acc, i + 1u);
    });
  });
}

/// seqIterate(n, f, init): state = f(i, state) for i in [0, n); one element, the final state.
template <class F, class T>
SPush<Thread, T> seqIterate(const EWord32& n, F f, const T& init) {
  return SPush<Thread, T>(1, [n, f, init](const Program<Thread>& p, const Writer<T>& w) {
    const T state = MemoryOps<T>::declare(p, init);
    p.seqFor(n, [&](const Program<Thread>& q, const EWord32& i) {
      MemoryOps<T>::assign(q, state, f(i, state));
    });
    w(p, state, 0u);
  });
}

/// seqUntil(f, cond, init): state = f(state) while cond(state) holds; one element, the final
/// state. (The loop runs while cond is true, as in Obsidian's implementation and the paper's
/// Mandelbrot, whose cond is "still inside the radius and under 512 iterations".)
template <class F, class C, class T>
SPush<Thread, T> seqUntil(F f, C cond, const T& init) {
  return SPush<Thread, T>(1, [f, cond, init](const Program<Thread>& p, const Writer<T>& w) {
    const T state = MemoryOps<T>::declare(p, init);
    p.seqWhile(cond(state),
               [&](const Program<Thread>& q) { MemoryOps<T>::assign(q, state, f(state)); });
    w(p, state, 0u);
  });
}

/// foldPull1(f, arr): f(...f(f(a0, a1), a2)..., an-1) as one expression (static length).
template <class F, class T>
T foldPull1(F f, const SPull<T>& arr) {
  if (arr.len() == 0) throw Error("foldPull1 needs a non-empty array; got length 0");
  T acc = arr[0u];
  for (uint32_t i = 1; i < arr.len(); ++i) acc = f(acc, arr[EWord32(i)]);
  return acc;
}

/// load<L>(n, arr): each of len/n instances writes n elements, strided by len/n, so that
/// consecutive threads touch consecutive elements (a coalescing first load).
template <class L = Block, class T>
SPush<L, T> load(uint32_t n, const SPull<T>& arr) {
  static_assert(std::is_same_v<L, Warp> || std::is_same_v<L, Block>,
                "load is a Warp or Block level push");
  detail::checkDivisible("load", n, arr.len());
  const uint32_t stride = arr.len() / n;
  return SPush<L, T>(arr.len(), [arr, n, stride](const Program<L>& p, const Writer<T>& w) {
    p.forAll(stride, [&](const Program<Thread>& t, const EWord32& tid) {
      t.seqFor(n, [&](const Program<Thread>& q, const EWord32& ix) {
        const EWord32 i = tid + ix * stride;
        w(q, arr[i], i);
      });
    });
  });
}

/// compose(p, fs, arr): apply fs in order, forcing between steps (paper Section 5.3).
template <class L, class T>
SPush<L, T> compose(const Program<L>& p,
                    const std::vector<std::function<SPush<L, T>(const SPull<T>&)>>& fs,
                    SPull<T> arr) {
  if (fs.empty()) throw Error("compose needs at least one function; got none");
  for (size_t k = 0; k + 1 < fs.size(); ++k) arr = force(p, fs[k](arr));
  return fs.back()(arr);
}

// ---------------------------------------------------------------- bit helpers (sklansky2)
/// insertZero(i, a): a with a 0 bit inserted at position i.
inline EWord32 insertZero(uint32_t i, const EWord32& a) {
  return ((a >> i) << (i + 1)) | (a & ((1u << i) - 1u));
}
/// flipBit(i, a): a with bit i flipped.
inline EWord32 flipBit(uint32_t i, const EWord32& a) { return a ^ (1u << i); }
/// zeroBits(i, a): a with its i lowest bits cleared.
inline EWord32 zeroBits(uint32_t i, const EWord32& a) { return a & ~((1u << i) - 1u); }

}  // namespace obsidian
