/// Push arrays: a length and a code generator (the paper's MkPush). Given a writer that emits
/// Thread-level code for one (value, index), the generator emits the level-L program that
/// produces every element with the array's own iteration scheme.
/// @file
#pragma once

#include <functional>

#include "obsidian/program.hpp"
#include "obsidian/pull.hpp"

namespace obsidian {

/// What a push array writes through: writer(t, value, index) emits the Thread-level code that
/// stores one element.
template <class T>
using Writer = std::function<void(const Program<Thread>&, const T&, const EWord32&)>;

/// A push array (the paper's MkPush): a length and a generator that emits the level-L program
/// writing every element, with the array's own iteration scheme.
template <class L, class Len, class T>
class Push {
  static_assert(HierarchyLevel<L>, "Push<L, ...> needs L to be Thread, Warp, Block or Grid");
  static_assert(ASize<Len>, "a Push length is uint32_t (static) or EWord32 (dynamic)");

 public:
  using Level = L;     ///< the level whose program writes the elements
  using Length = Len;  ///< uint32_t (static, SPush) or EWord32 (dynamic, DPush)
  using Element = T;   ///< the element type
  /// @{
  /// What a generator writes through, and the array's shape: what exec<L> and the other
  /// combinators that rebuild a push-like array (Fused, Push2) of the same kind need.
  using Sink = Writer<T>;
  using Shape = Len;
  /// @}
  /// Emits the level-L program, given the writer of one element.
  using Generator = std::function<void(const Program<L>&, const Writer<T>&)>;

  /// The array of n elements that `gen` writes.
  Push(Len n, Generator gen) : n_(std::move(n)), gen_(std::move(gen)) {}

  /// Its length.
  const Len& len() const { return n_; }
  /// Its shape: the length (as Push2's shape is its rows and cols).
  const Len& shape() const { return n_; }
  /// Emit the program that writes every element through `w`.
  void operator()(const Program<L>& p, const Writer<T>& w) const { gen_(p, w); }

 private:
  Len n_;
  Generator gen_;
};

template <class L, class T>
using SPush = Push<L, uint32_t, T>;  ///< a push array of static length
template <class L, class T>
using DPush = Push<L, EWord32, T>;  ///< a push array of dynamic length

/// Whether T is a Push (value), for generic code.
template <class T>
struct IsPush : std::false_type {};
/// A Push is one.
template <class L, class Len, class T>
struct IsPush<Push<L, Len, T>> : std::true_type {};
/// Whether T (ignoring const and references) is a Push.
template <class T>
inline constexpr bool isPush = IsPush<std::remove_cvref_t<T>>::value;

namespace detail {
// A push-like array: a level, a shape, what its generator writes through, and a constructor
// from the two (Push, Fused, Push2), so exec<L> and the like rebuild any of them alike.
template <class R>
concept PushLike = requires(const R& r) {
  typename R::Level;
  typename R::Sink;
  typename R::Shape;
  typename R::Generator;
  r.shape();
}
&&std::is_constructible_v<R, typename R::Shape, typename R::Generator>;
}  // namespace detail

/// len(a): a's length.
template <class L, class Len, class T>
const Len& len(const Push<L, Len, T>& a) {
  return a.len();
}

/// mkPush<L, T>(n, gen): gen(const Program<L>&, const Writer<T>&) emits the writes.
template <class L, class T, class N, class F>
auto mkPush(N n, F gen) {
  if constexpr (std::is_integral_v<N>) {
    return Push<L, uint32_t, T>(toStaticLength(n), std::move(gen));
  } else {
    static_assert(std::is_same_v<N, EWord32>, "mkPush: a length is an integer or an EWord32");
    return Push<L, EWord32, T>(n, std::move(gen));
  }
}

}  // namespace obsidian
