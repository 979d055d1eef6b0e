// Operators for the collectives, as CUB's cub::Sum, cub::Min, ...: stateless function objects
// on expressions, each with its identity. Any associative (and, for reductions, commutative)
// callable on Exp<X> works with the collectives; these are the common ones, and being empty
// types they let the device calls (obsidian/device/) reuse the kernels they capture.
#pragma once

#include <limits>

#include "obsidian/exp.hpp"

namespace obsidian {

struct Sum {
  template <class X>
  Exp<X> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return a + b;
  }
  template <class X>
  static constexpr X identity() {
    return X{0};
  }
};
struct Min {
  template <class X>
  Exp<X> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return min(a, b);
  }
  template <class X>
  static constexpr X identity() {
    return std::numeric_limits<X>::has_infinity ? std::numeric_limits<X>::infinity()
                                                : std::numeric_limits<X>::max();
  }
};
struct Max {
  template <class X>
  Exp<X> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return max(a, b);
  }
  template <class X>
  static constexpr X identity() {
    return std::numeric_limits<X>::has_infinity ? -std::numeric_limits<X>::infinity()
                                                : std::numeric_limits<X>::lowest();
  }
};
struct BitAnd {
  template <class X>
  Exp<X> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return a & b;
  }
  template <class X>
  static constexpr X identity() {
    return static_cast<X>(~X{0});
  }
};
struct BitOr {
  template <class X>
  Exp<X> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return a | b;
  }
  template <class X>
  static constexpr X identity() {
    return X{0};
  }
};
struct BitXor {
  template <class X>
  Exp<X> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return a ^ b;
  }
  template <class X>
  static constexpr X identity() {
    return X{0};
  }
};

}  // namespace obsidian
