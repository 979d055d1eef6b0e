/// Pull arrays: a length and an index function (the paper's MkPull). Static lengths are plain
/// uint32_t known at generation time (SPull); dynamic lengths are EWord32 (DPull).
/// @file
#pragma once

#include <concepts>
#include <functional>
#include <type_traits>

#include "obsidian/exp.hpp"

namespace obsidian {

/// The two kinds of length (the paper's ASize class).
template <class Len>
concept ASize = std::same_as<Len, uint32_t> || std::same_as<Len, EWord32>;

/// A length as an EWord32, static or dynamic (for code that needs an expression either way).
inline EWord32 sizeConv(uint32_t n) { return EWord32(n); }
/// A length as an EWord32, static or dynamic (for code that needs an expression either way).
inline EWord32 sizeConv(const EWord32& n) { return n; }

/// An integer as a static length; a negative one is an Error.
template <class T>
uint32_t toStaticLength(T n) {
  static_assert(std::is_integral_v<T>, "a static length is an integer");
  if constexpr (std::is_signed_v<T>) {
    if (n < 0) throw Error("a static array length must not be negative; got " + std::to_string(n));
  }
  return static_cast<uint32_t>(n);
}

/// A pull array (the paper's MkPull): a length and a function from index to element. Nothing is
/// read or computed until an element is used, so fmap, ixMap and the like fuse for free.
template <class Len, class T>
class Pull {
  static_assert(ASize<Len>, "a Pull length is uint32_t (static) or EWord32 (dynamic)");

 public:
  using Length = Len;  ///< uint32_t (static, SPull) or EWord32 (dynamic, DPull)
  using Element = T;   ///< the element type: an Exp, a tuple of them, or a nested array

  /// The array of n elements whose element i is ixf(i).
  Pull(Len n, std::function<T(const EWord32&)> ixf) : n_(std::move(n)), ixf_(std::move(ixf)) {}

  /// Its length.
  const Len& len() const { return n_; }
  /// Element i: the index function applied to i.
  T operator[](const EWord32& i) const { return ixf_(i); }
  /// The index function.
  const std::function<T(const EWord32&)>& indexFunction() const { return ixf_; }

 private:
  Len n_;
  std::function<T(const EWord32&)> ixf_;
};

template <class T>
using SPull = Pull<uint32_t, T>;  ///< a pull array of static length (known at generation time)
template <class T>
using DPull = Pull<EWord32, T>;  ///< a pull array of dynamic length (an EWord32)

/// Whether T is a Pull (value), for generic code.
template <class T>
struct IsPull : std::false_type {};
/// A Pull is one.
template <class Len, class T>
struct IsPull<Pull<Len, T>> : std::true_type {};
/// Whether T (ignoring const and references) is a Pull.
template <class T>
inline constexpr bool isPull = IsPull<std::remove_cvref_t<T>>::value;

/// len(a): a's length.
template <class Len, class T>
const Len& len(const Pull<Len, T>& a) {
  return a.len();
}

/// mkPull(n, f): the array whose element i is f(i). n is an integer (static) or an EWord32.
template <class N, class F>
auto mkPull(N n, F f) {
  if constexpr (std::is_integral_v<N>) {
    using T = std::invoke_result_t<F, EWord32>;
    return Pull<uint32_t, T>(toStaticLength(n), std::move(f));
  } else {
    static_assert(std::is_same_v<N, EWord32>, "mkPull: a length is an integer or an EWord32");
    using T = std::invoke_result_t<F, EWord32>;
    return Pull<EWord32, T>(n, std::move(f));
  }
}

}  // namespace obsidian
