/// Fused arrays: one level-L program that writes several push arrays at once, so that what it
/// reads is read once for all of them. A fused AXPYDOT computes each block's chunk of
/// z = w - alpha * v once, writes it, and folds z * u into the block's partial dot product in
/// the same block program; pConcat of the fused block programs is one grid loop writing both
/// outputs. (A tuple of separate Push<Grid> outputs is one grid loop per output, each reading
/// the inputs again.)
/// @file
#pragma once

#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "obsidian/push.hpp"

namespace obsidian {

/// Fused<L, Push<L, Len0, T0>, Push<L, Len1, T1>, ...>: the parts describe the arrays written
/// (a length and an element type each); one generator writes all of them through one writer
/// per part.
template <class L, class... Parts>
class Fused {
  static_assert(HierarchyLevel<L>, "Fused<L, ...> needs L to be Thread, Warp, Block or Grid");
  static_assert(sizeof...(Parts) >= 1, "a fused array writes at least one push array");
  static_assert((isPush<Parts> && ...), "the parts of a Fused<L, ...> are Push<L, Len, T> types");
  static_assert((std::is_same_v<typename Parts::Level, L> && ...),
                "the parts of a Fused<L, ...> are at its level L");

 public:
  using Level = L;                                                 ///< the program's level
  using Lengths = std::tuple<typename Parts::Length...>;           ///< each part's length
  using Writers = std::tuple<Writer<typename Parts::Element>...>;  ///< one writer per part
  using Sink = Writers;   ///< what the generator writes through (as Push::Sink)
  using Shape = Lengths;  ///< the lengths (as Push::Shape)
  /// Emits the one program, given a writer per part.
  using Generator = std::function<void(const Program<L>&, const Writers&)>;
  /// Part K's Push type.
  template <size_t K>
  using Part = std::tuple_element_t<K, std::tuple<Parts...>>;
  static constexpr size_t parts = sizeof...(Parts);  ///< the number of parts

  /// The fused array of parts of lengths `ns` that `gen` writes.
  Fused(Lengths ns, Generator gen) : ns_(std::move(ns)), gen_(std::move(gen)) {}

  const Lengths& lens() const { return ns_; }   ///< the parts' lengths
  const Lengths& shape() const { return ns_; }  ///< the parts' lengths (as Push::shape)
  /// Part K's length.
  template <size_t K>
  const auto& len() const {
    return std::get<K>(ns_);
  }
  /// Emit the one program that writes every element of every part, part k through w[k].
  void operator()(const Program<L>& p, const Writers& w) const { gen_(p, w); }

 private:
  Lengths ns_;
  Generator gen_;
};

/// Whether T is a Fused (value), for generic code.
template <class T>
struct IsFused : std::false_type {};
/// A Fused is one.
template <class L, class... Parts>
struct IsFused<Fused<L, Parts...>> : std::true_type {};
/// Whether T (ignoring const and references) is a Fused.
template <class T>
inline constexpr bool isFused = IsFused<std::remove_cvref_t<T>>::value;

namespace detail {

// A push array as a fused array of one part; a fused array as itself.
template <class L, class Len, class T>
Fused<L, Push<L, Len, T>> asFused(const Push<L, Len, T>& a) {
  return Fused<L, Push<L, Len, T>>(
      std::tuple<Len>(a.len()),
      [a](const Program<L>& p, const std::tuple<Writer<T>>& w) { a(p, std::get<0>(w)); });
}
template <class L, class... Parts>
const Fused<L, Parts...>& asFused(const Fused<L, Parts...>& a) {
  return a;
}

// The writers `first` .. `first + sizeof...(K) - 1` of a tuple of writers.
template <size_t First, class Writers, size_t... K>
auto writersSlice(const Writers& w, std::index_sequence<K...>) {
  return std::make_tuple(std::get<First + K>(w)...);
}

// a's program, then b's, in one program; the parts are a's followed by b's.
template <class L, class... A, class... B>
Fused<L, A..., B...> fuseTwo(const Fused<L, A...>& a, const Fused<L, B...>& b) {
  using R = Fused<L, A..., B...>;
  return R(std::tuple_cat(a.lens(), b.lens()),
           [a, b](const Program<L>& p, const typename R::Writers& w) {
             a(p, writersSlice<0>(w, std::index_sequence_for<A...>{}));
             b(p, writersSlice<sizeof...(A)>(w, std::index_sequence_for<B...>{}));
           });
}

template <class X>
struct FusableLevel {
  using type = void;
};
template <class L, class Len, class T>
struct FusableLevel<Push<L, Len, T>> {
  using type = L;
};
template <class L, class... Parts>
struct FusableLevel<Fused<L, Parts...>> {
  using type = L;
};

template <class A>
auto fuseAll(const A& a) {
  return asFused(a);
}
template <class A, class B, class... Rest>
auto fuseAll(const A& a, const B& b, const Rest&... rest) {
  return fuseTwo(asFused(a), fuseAll(b, rest...));
}

}  // namespace detail

/// fuse(a, b, ...): one level-L program that runs a's program, then b's, ..., writing every
/// part: a Fused<L, ...> whose parts are a's, then b's (a fused argument contributes all of its
/// parts). The arguments are Push<L> or Fused<L> arrays of one level below Grid: fuse the block
/// programs and pConcat the fused array over the grid (each part becomes an output of the
/// kernel, all written by one grid loop). Values the programs share (a forced array, a value
/// bound with share) are computed once for all parts.
template <class A, class... Rest>
auto fuse(const A& a, const Rest&... rest) {
  constexpr bool arrays = (isPush<A> || isFused<A>)&&((isPush<Rest> || isFused<Rest>)&&...);
  static_assert(arrays, "fuse: the arguments must be push arrays (Push<L>) or fused arrays");
  if constexpr (arrays) {
    using L = typename detail::FusableLevel<A>::type;
    static_assert((std::is_same_v<typename detail::FusableLevel<Rest>::type, L> && ...),
                  "fuse: every argument must be at the same level (Push<L> of one L)");
    static_assert(!std::is_same_v<L, Grid>,
                  "fuse at Grid level would still be one grid loop per part: fuse the block "
                  "programs (Push<Block>) and pConcat the fused array over the grid");
    return detail::fuseAll(a, rest...);
  }
}

}  // namespace obsidian
