/// Scatters: a push array's elements written to places its elements or positions choose
/// (Accelerate's permute), instead of to their own positions.
///  - permute(n, a, dest): the push array of n elements in which element i of `a` (value v) is
///    written at dest(v, i) (or dest(i); or idx[i] for an index array). Destinations at n or
///    beyond are dropped; two elements sent to one place are a race, which the simulator
///    reports; places no element is sent to are not written.
///  - permuteInto(p, m, op, a, dest): the same writes combined into a mutable array with an
///    atomic operator (Sum, Min, Max, BitAnd, BitOr, BitXor): m[dest] = m[dest] op v, so any
///    number of elements may share a place (a histogram, a scatter-add), in the level-L
///    program p that a's generator runs in.
/// @file
#pragma once

#include <type_traits>

#include "obsidian/atomic.hpp"
#include "obsidian/operators.hpp"
#include "obsidian/push.hpp"

namespace obsidian {

namespace detail {
// dest(v, i) for a destination function of the element and its position, or of the position
// alone, or an index array's element i.
template <class T, class D>
EWord32 destinationOf(const D& dest, const T& v, const EWord32& i) {
  if constexpr (std::is_invocable_r_v<EWord32, D, const T&, const EWord32&>) {
    return dest(v, i);
  } else if constexpr (std::is_invocable_r_v<EWord32, D, const EWord32&>) {
    return dest(i);
  } else {
    static_assert(alwaysFalse<D>,
                  "permute: the destination is a function (element, position) -> EWord32, a "
                  "function position -> EWord32, or a pull array of EWord32 indices");
    return i;
  }
}
// Element indices of a pull array (their EWord32 index function), as a destination.
template <class Len>
auto destinationOf(const Pull<Len, EWord32>& idx) {
  return [idx](const EWord32& i) { return idx[i]; };
}
template <class D>
auto destinationOf(const D& dest) {
  return dest;
}
}  // namespace detail

/// permute(n, a, dest): the push array of n elements (static uint32_t or EWord32) in which
/// element i of a, of value v, is written at dest(v, i): dest is a function of (element,
/// position), of the position alone, or a pull array of EWord32 destinations (idx[i]). Writes
/// at n or beyond are dropped (a conditional each); two elements sent to one place race (the
/// simulator reports it); a place no element is sent to keeps what was there.
template <class N, class L, class Len, class T, class D>
auto permute(const N& n, const Push<L, Len, T>& a, const D& dest) {
  using OutLen = std::conditional_t<std::is_integral_v<N>, uint32_t, EWord32>;
  const OutLen len = static_cast<OutLen>(n);
  const EWord32 limit = sizeConv(len);
  const auto to = detail::destinationOf(dest);
  return Push<L, OutLen, T>(len, [limit, a, to](const Program<L>& p, const Writer<T>& w) {
    a(p, [&](const Program<Thread>& t, const T& v, const EWord32& i) {
      const EWord32 at = t.declare(detail::destinationOf<T>(to, v, i));
      t.cond(at < limit, [&](const Program<Thread>& u) { w(u, v, at); });
    });
  });
}

/// permuteInto(p, m, op, a, dest): runs a's program in p (the level-L program it belongs to)
/// with each element v, at position i, combined into m[dest] with op's atomic: m[d] = m[d] op v
/// (op: Sum, Min, Max, BitAnd, BitOr, BitXor, for the types CUDA has those atomics for). Any
/// number of elements may share a destination; destinations at len(m) or beyond are dropped.
/// m is a global DMutable (in a kernel's effect) or a block's shared SMutable.
template <class L, class MLen, KernelScalar X, class Op, class Len, class D>
void permuteInto(const Program<L>& p, const Mutable<MLen, X>& m, Op op,
                 const Push<L, Len, Exp<X>>& a, const D& dest) {
  (void)op;
  const EWord32 limit = sizeConv(len(m));
  const auto to = detail::destinationOf(dest);
  a(p, [&](const Program<Thread>& t, const Exp<X>& v, const EWord32& i) {
    const EWord32 at = t.declare(detail::destinationOf<Exp<X>>(to, v, i));
    t.cond(at < limit, [&](const Program<Thread>& u) {
      if constexpr (std::is_same_v<Op, Sum>) {
        atomicAdd(u, m, at, v);
      } else if constexpr (std::is_same_v<Op, Min>) {
        atomicMin(u, m, at, v);
      } else if constexpr (std::is_same_v<Op, Max>) {
        atomicMax(u, m, at, v);
      } else if constexpr (std::is_same_v<Op, BitAnd>) {
        atomicAnd(u, m, at, v);
      } else if constexpr (std::is_same_v<Op, BitOr>) {
        atomicOr(u, m, at, v);
      } else if constexpr (std::is_same_v<Op, BitXor>) {
        atomicXor(u, m, at, v);
      } else {
        static_assert(alwaysFalse<Op>,
                      "permuteInto: the operator is one with an atomic: Sum, Min, Max, BitAnd, "
                      "BitOr or BitXor");
      }
    });
  });
}

}  // namespace obsidian
