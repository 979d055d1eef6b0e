/// Operators for the collectives, as CUB's cub::Sum, cub::Min, ...: stateless function objects
/// on expressions, each with its identity. Any associative (and, for reductions, commutative)
/// callable on Exp<X> works with the collectives; these are the common ones, and being empty
/// types they let the device calls (obsidian/device/) reuse the kernels they capture.
/// @file
#pragma once

#include <limits>

#include "obsidian/exp.hpp"

namespace obsidian {

/// a + b (as cub::Sum).
struct Sum {
  /// a + b.
  template <class X>
  Exp<X> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return a + b;
  }
  /// The identity: 0.
  template <class X>
  static constexpr X identity() {
    return X{0};
  }
};
/// min(a, b) (as cub::Min).
struct Min {
  /// min(a, b).
  template <class X>
  Exp<X> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return min(a, b);
  }
  /// The identity: +infinity for floats, the type's largest value otherwise.
  template <class X>
  static constexpr X identity() {
    return std::numeric_limits<X>::has_infinity ? std::numeric_limits<X>::infinity()
                                                : std::numeric_limits<X>::max();
  }
};
/// max(a, b) (as cub::Max).
struct Max {
  /// max(a, b).
  template <class X>
  Exp<X> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return max(a, b);
  }
  /// The identity: -infinity for floats, the type's lowest value otherwise.
  template <class X>
  static constexpr X identity() {
    return std::numeric_limits<X>::has_infinity ? -std::numeric_limits<X>::infinity()
                                                : std::numeric_limits<X>::lowest();
  }
};
/// a & b, on integers (and bool).
struct BitAnd {
  /// a & b.
  template <class X>
  Exp<X> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return a & b;
  }
  /// The identity: all bits set.
  template <class X>
  static constexpr X identity() {
    return static_cast<X>(~X{0});
  }
};
/// a | b, on integers (and bool).
struct BitOr {
  /// a | b.
  template <class X>
  Exp<X> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return a | b;
  }
  /// The identity: 0.
  template <class X>
  static constexpr X identity() {
    return X{0};
  }
};
/// a ^ b, on integers (and bool).
struct BitXor {
  /// a ^ b.
  template <class X>
  Exp<X> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return a ^ b;
  }
  /// The identity: 0.
  template <class X>
  static constexpr X identity() {
    return X{0};
  }
};

}  // namespace obsidian
