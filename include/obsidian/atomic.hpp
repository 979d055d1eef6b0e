/// Mutable arrays and atomic operations on them (as Obsidian's Mutable and Atomic modules):
/// a global array passed to the kernel (DMutable) or a shared array of a block (SMutable),
/// written and updated in place by Thread programs.
/// @file
#pragma once

#include "obsidian/force.hpp"

namespace obsidian {

namespace detail {
// An array index: an EWord32, or what converts to one (a u32 literal). Anything else is one
// static_assert naming the rule (not a page of overload candidates).
template <class I>
EWord32 asIndex(const I& i) {
  static_assert(std::is_convertible_v<I, EWord32>,
                "an array index is an EWord32: widen a u8 index with w8ToW32(i), a u16 index "
                "with w16ToW32(i), other types with cast<uint32_t>(i)");
  if constexpr (std::is_convertible_v<I, EWord32>) {
    return i;
  } else {
    return EWord32(0u);
  }
}
}  // namespace detail

/// An array that Thread programs write and update in place (Obsidian's Mutable): a global array
/// parameter of the kernel (DMutable) or a shared array of a block or warp (SMutable). Reads see
/// the contents when they run, so they are ordered by the program's barriers, not by dataflow.
template <class Len, KernelScalar X>
class Mutable {
 public:
  using Length = Len;      ///< EWord32 (DMutable) or uint32_t (SMutable)
  using Element = Exp<X>;  ///< the element's expression type
  /// The array `ref` of n elements (made by capture, newShared or newGlobal).
  Mutable(ArrayRef ref, Len n) : ref_(ref), n_(std::move(n)) {}
  /// The array's id in the kernel.
  ArrayId id() const { return ref_.id; }
  /// The array and the capture that made it.
  const ArrayRef& ref() const { return ref_; }
  /// Its length.
  const Len& len() const { return n_; }
  /// Element i as it is when the read runs.
  Exp<X> operator[](const EWord32& i) const {
    return Exp<X>(ir::index(scalarTypeOf<X>, ref_.id, i.node(), ref_.origin));
  }
  /// The current contents as a pull array (read when the element is used).
  Pull<Len, Exp<X>> pull() const {
    const Mutable m = *this;
    return Pull<Len, Exp<X>>(n_, [m](const EWord32& i) { return m[i]; });
  }

 private:
  ArrayRef ref_;
  Len n_;
};

/// len(m): m's length, as len of a pull array.
template <class Len, KernelScalar X>
const Len& len(const Mutable<Len, X>& m) {
  return m.len();
}

template <KernelScalar X>
using DMutable = Mutable<EWord32, X>;  ///< a global array parameter of the kernel
template <KernelScalar X>
using SMutable = Mutable<uint32_t, X>;  ///< a shared array of a block or warp

/// Whether T is a Mutable (value), for generic code.
template <class T>
struct IsMutable : std::false_type {};
/// A Mutable is one.
template <class Len, class X>
struct IsMutable<Mutable<Len, X>> : std::true_type {};

/// newShared<X>(p, n): an uninitialised shared array of n elements for in-place updates.
template <KernelScalar X, class L>
SMutable<X> newShared(const Program<L>& p, uint32_t n) {
  static_assert(level_le<Warp, L> && level_le<L, Block>,
                "newShared: shared arrays belong to a Warp or Block program");
  if (n == 0) throw Error("newShared: a shared array needs at least one element; got 0");
  return SMutable<X>(
      MemoryOps<Exp<X>>::allocate(p.context(), p.body(), MemorySpace::Shared, L::value, n), n);
}

/// newGlobal<X>(p, n): a global array of n elements that belongs to the kernel itself: zero when
/// the kernel's module is loaded (by the runtime, an exported header's program, or each
/// simulate call) and kept from one launch to the next, so a kernel that relies on it being
/// zero must leave it zero (atomicInc with a wrap-around bound does). Blocks read it through L2;
/// one block sees another's writes once that block's threadFence and an atomic on the array
/// precede its own atomic there. Launches of one such kernel must not overlap (as CUB's
/// temporary storage, it is one per kernel, not per launch).
template <KernelScalar X, class L>
SMutable<X> newGlobal(const Program<L>& p, uint32_t n) {
  static_assert(!std::is_same_v<X, bool> && sizeof(X) >= 4,
                "newGlobal: grid state holds 4- or 8-byte elements (u32, i32, u64, f32, f64)");
  if (n == 0) throw Error("newGlobal: a grid-state array needs at least one element; got 0");
  return SMutable<X>(p.context().ref(detail::addGridState(p.context(), scalarTypeOf<X>, n)), n);
}

/// threadFence(t): __threadfence(). This thread's earlier global writes become visible to every
/// block before anything it does afterwards; with an atomic on a newGlobal array after it, they
/// are published to the blocks whose atomics on that array come later.
inline void threadFence(const Program<Thread>& t) { t.emit(Fence{}); }

/// nanosleep(t, ns): __nanosleep(ns): the thread sleeps for about ns nanoseconds (the hardware
/// takes it as a hint, up to 1 ms), leaving its issue slots and memory bandwidth to others: the
/// back-off of a loop that polls what another block will write. It changes nothing the program
/// computes (the simulator ignores it).
inline void nanosleep(const Program<Thread>& t, uint32_t ns) {
  if (ns > 1000000) {
    throw Error("nanosleep(" + std::to_string(ns) + "): at most 1000000 ns (1 ms)");
  }
  t.emit(Sleep{ns});
}

/// write(t, m, i, v): m[i] = v
template <class Len, KernelScalar X, class I>
void write(const Program<Thread>& t, const Mutable<Len, X>& m, const I& i,
           const std::type_identity_t<Exp<X>>& v) {
  t.context().checkOwn(m.ref(), "a write");
  t.emit(Assign{m.id(), detail::asIndex(i).node(), v.node()});
}

namespace detail {
template <KernelScalar X>
Exp<X> atomic(const Program<Thread>& t, AtomicOp op, const ArrayRef& a, const EWord32& i,
              const ExpPtr& value, const ExpPtr& compare) {
  t.context().checkOwn(a, "an atomic");
  Atomic s{op, a.id, i.node(), value, compare, t.context().fresh("old")};
  Exp<X> old = variable<X>(s.result);
  t.emit(std::move(s));
  return old;
}
template <class X>
inline constexpr bool isAtomicInt =
    std::is_same_v<X, uint32_t> || std::is_same_v<X, int32_t> || std::is_same_v<X, uint64_t>;
}  // namespace detail

/// @name Atomics
/// @{

/// atomicAdd(t, m, i, v), atomicSub, atomicMin, atomicMax, atomicAnd, atomicOr, atomicXor:
/// m[i] = m[i] op v as one indivisible update (atomicExch: m[i] = v). Each returns the element's
/// previous value, as CUDA's atomics do. A Half or BFloat16 sum is rounded once per addition
/// (atom.add.noftz.f16 / .bf16), so its result depends on the order of the additions unless
/// every partial sum is exact. A Half2 or BFloat162 sum adds each lane so, in one atomic
/// update of the 32-bit word (atom.add.noftz.f16x2 / .bf16x2; bf16 pairs need sm_90).
template <class Len, KernelScalar X, class I>
Exp<X> atomicAdd(const Program<Thread>& t, const Mutable<Len, X>& m, const I& i,
                 const std::type_identity_t<Exp<X>>& v) {
  static_assert(detail::isAtomicInt<X> || std::is_floating_point_v<X> || std::is_same_v<X, Half> ||
                    std::is_same_v<X, BFloat16> || PairScalar<X>,
                "atomicAdd works on uint32, int32, uint64, float, double, Half, BFloat16, "
                "Half2 and BFloat162 arrays");
  return detail::atomic<X>(t, AtomicOp::Add, m.ref(), detail::asIndex(i), v.node(), nullptr);
}
template <class Len, KernelScalar X, class I>
Exp<X> atomicSub(const Program<Thread>& t, const Mutable<Len, X>& m, const I& i,
                 const std::type_identity_t<Exp<X>>& v) {
  static_assert(std::is_same_v<X, uint32_t> || std::is_same_v<X, int32_t>,
                "atomicSub works on uint32 and int32 arrays");
  return detail::atomic<X>(t, AtomicOp::Sub, m.ref(), detail::asIndex(i), v.node(), nullptr);
}
template <class Len, KernelScalar X, class I>
Exp<X> atomicMin(const Program<Thread>& t, const Mutable<Len, X>& m, const I& i,
                 const std::type_identity_t<Exp<X>>& v) {
  static_assert(detail::isAtomicInt<X>, "atomicMin works on uint32, int32 and uint64 arrays");
  return detail::atomic<X>(t, AtomicOp::Min, m.ref(), detail::asIndex(i), v.node(), nullptr);
}
template <class Len, KernelScalar X, class I>
Exp<X> atomicMax(const Program<Thread>& t, const Mutable<Len, X>& m, const I& i,
                 const std::type_identity_t<Exp<X>>& v) {
  static_assert(detail::isAtomicInt<X>, "atomicMax works on uint32, int32 and uint64 arrays");
  return detail::atomic<X>(t, AtomicOp::Max, m.ref(), detail::asIndex(i), v.node(), nullptr);
}
/// atomicInc(t, m, i, limit): m[i] = (old >= limit) ? 0 : old + 1
template <class Len, class I>
EWord32 atomicInc(const Program<Thread>& t, const Mutable<Len, uint32_t>& m, const I& i,
                  const EWord32& limit) {
  return detail::atomic<uint32_t>(t, AtomicOp::Inc, m.ref(), detail::asIndex(i), limit.node(),
                                  nullptr);
}
/// atomicDec(t, m, i, limit): m[i] = (old == 0 || old > limit) ? limit : old - 1
template <class Len, class I>
EWord32 atomicDec(const Program<Thread>& t, const Mutable<Len, uint32_t>& m, const I& i,
                  const EWord32& limit) {
  return detail::atomic<uint32_t>(t, AtomicOp::Dec, m.ref(), detail::asIndex(i), limit.node(),
                                  nullptr);
}
template <class Len, KernelScalar X, class I>
Exp<X> atomicExch(const Program<Thread>& t, const Mutable<Len, X>& m, const I& i,
                  const std::type_identity_t<Exp<X>>& v) {
  static_assert(detail::isAtomicInt<X> || std::is_same_v<X, float>,
                "atomicExch works on uint32, int32, uint64 and float arrays");
  return detail::atomic<X>(t, AtomicOp::Exch, m.ref(), detail::asIndex(i), v.node(), nullptr);
}
/// atomicCAS(t, m, i, compare, v): m[i] = (old == compare) ? v : old
template <class Len, KernelScalar X, class I>
Exp<X> atomicCAS(const Program<Thread>& t, const Mutable<Len, X>& m, const I& i,
                 const std::type_identity_t<Exp<X>>& compare,
                 const std::type_identity_t<Exp<X>>& v) {
  static_assert(detail::isAtomicInt<X>, "atomicCAS works on uint32, int32 and uint64 arrays");
  return detail::atomic<X>(t, AtomicOp::Cas, m.ref(), detail::asIndex(i), v.node(), compare.node());
}
/// atomicLoad(t, m, i): m[i], read from memory every time (a volatile load) and ordered like an
/// atomic: for polling a flag that other blocks set with atomicExch (after a threadFence).
template <class Len, KernelScalar X, class I>
Exp<X> atomicLoad(const Program<Thread>& t, const Mutable<Len, X>& m, const I& i) {
  static_assert(detail::isAtomicInt<X> || std::is_same_v<X, float>,
                "atomicLoad works on uint32, int32, uint64 and float arrays");
  return detail::atomic<X>(t, AtomicOp::Load, m.ref(), detail::asIndex(i), nullptr, nullptr);
}
#define OBSIDIAN_ATOMIC_BITS(fn, op)                                                           \
  template <class Len, KernelScalar X, class I>                                                \
  Exp<X> fn(const Program<Thread>& t, const Mutable<Len, X>& m, const I& i,                    \
            const std::type_identity_t<Exp<X>>& v) {                                           \
    static_assert(detail::isAtomicInt<X>, #fn " works on uint32, int32 and uint64 arrays");    \
    return detail::atomic<X>(t, AtomicOp::op, m.ref(), detail::asIndex(i), v.node(), nullptr); \
  }
OBSIDIAN_ATOMIC_BITS(atomicAnd, And)
OBSIDIAN_ATOMIC_BITS(atomicOr, Or)
OBSIDIAN_ATOMIC_BITS(atomicXor, Xor)
#undef OBSIDIAN_ATOMIC_BITS
/// @}

}  // namespace obsidian
