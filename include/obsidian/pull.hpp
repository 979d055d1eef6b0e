// Pull arrays: a length and an index function (the paper's MkPull). Static lengths are plain
// uint32_t known at generation time (SPull); dynamic lengths are EWord32 (DPull).
#pragma once

#include <concepts>
#include <functional>
#include <type_traits>

#include "obsidian/exp.hpp"

namespace obsidian {

// The two kinds of length (the paper's ASize class).
template <class Len>
concept ASize = std::same_as<Len, uint32_t> || std::same_as<Len, EWord32>;

inline EWord32 sizeConv(uint32_t n) { return EWord32(n); }
inline EWord32 sizeConv(const EWord32& n) { return n; }

template <class T>
uint32_t toStaticLength(T n) {
  static_assert(std::is_integral_v<T>, "a static length is an integer");
  if constexpr (std::is_signed_v<T>) {
    if (n < 0) throw Error("a static array length must not be negative; got " + std::to_string(n));
  }
  return static_cast<uint32_t>(n);
}

template <class Len, class T>
class Pull {
  static_assert(ASize<Len>, "a Pull length is uint32_t (static) or EWord32 (dynamic)");

 public:
  using Length = Len;
  using Element = T;

  Pull(Len n, std::function<T(const EWord32&)> ixf) : n_(std::move(n)), ixf_(std::move(ixf)) {}

  const Len& len() const { return n_; }
  T operator[](const EWord32& i) const { return ixf_(i); }
  const std::function<T(const EWord32&)>& indexFunction() const { return ixf_; }

 private:
  Len n_;
  std::function<T(const EWord32&)> ixf_;
};

template <class T>
using SPull = Pull<uint32_t, T>;
template <class T>
using DPull = Pull<EWord32, T>;

template <class T>
struct IsPull : std::false_type {};
template <class Len, class T>
struct IsPull<Pull<Len, T>> : std::true_type {};
template <class T>
inline constexpr bool isPull = IsPull<std::remove_cvref_t<T>>::value;

template <class Len, class T>
const Len& len(const Pull<Len, T>& a) {
  return a.len();
}

// mkPull(n, f): the array whose element i is f(i). n is an integer (static) or an EWord32.
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
