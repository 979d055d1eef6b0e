/// Thread arrays: n values of each thread of a Block or Warp program, held in that thread's
/// registers and alive across the program's barriers (CUB's "items per thread"). A Block
/// program loads a thread's items in one parallel loop, synchronizes (a block-wide exchange or
/// reduction in shared memory), and uses the same items in a later loop without staging them
/// through shared memory again.
///
/// A parallel loop that touches a thread array must give each of its instances a thread of
/// its own (at most one instance per thread: a Block loop of at most threadsPerBlock, warps of
/// at most threadsPerBlock / 32, lanes of at most 32): virtual threads that share a thread
/// would share its registers, so the kernel is rejected (verify). Indices are static (a
/// uint32_t known when the kernel is generated), so the array stays in registers. The
/// simulator reports a read of an element the thread has not written.
/// @file
#pragma once

#include <string>
#include <type_traits>

#include "obsidian/memory_ops.hpp"

namespace obsidian {

/// n values of type X per thread of the Block or Warp program that made it (threadArray).
template <KernelScalar X>
class ThreadArray {
 public:
  /// The thread array `ref` of n elements per thread (made by threadArray).
  ThreadArray(ArrayRef ref, uint32_t n) : ref_(ref), n_(n) {}
  /// Elements per thread.
  uint32_t len() const { return n_; }
  /// The array and the capture that made it.
  const ArrayRef& ref() const { return ref_; }
  /// The executing thread's element k (static: an Error when k is not below len()).
  Exp<X> operator[](uint32_t k) const {
    check(k, "a read");
    return Exp<X>(ir::index(scalarTypeOf<X>, ref_.id, ir::u32(k), ref_.origin));
  }
  /// The f-fold of the executing thread's elements, in order (element 0 first).
  template <class Op>
  Exp<X> fold(Op f) const {
    Exp<X> acc = (*this)[0];
    for (uint32_t k = 1; k < n_; ++k) acc = f(acc, (*this)[k]);
    return acc;
  }
  /// Emits: the executing thread's element k = v, in thread program t.
  void write(const Program<Thread>& t, uint32_t k, const Exp<X>& v) const {
    check(k, "a write");
    MemoryOps<Exp<X>>::write(t, ref_, EWord32(k), v);
  }

 private:
  void check(uint32_t k, const char* what) const {
    if (k >= n_) {
      throw Error(std::string("threadArray: ") + what + " of element " + std::to_string(k) +
                  " of a thread array of " + std::to_string(n_) + " elements per thread");
    }
  }

  ArrayRef ref_;
  uint32_t n_;
};

/// threadArray<X>(p, n): n values of type X for each thread of Block or Warp program p, in
/// registers, written and read by p's parallel loops (forAll, and the lanes of its warps) on
/// either side of its barriers. See the file's comment for the rule on parallel loops.
template <KernelScalar X, class L>
ThreadArray<X> threadArray(const Program<L>& p, uint32_t n) {
  static_assert(std::is_same_v<L, Block> || std::is_same_v<L, Warp>,
                "threadArray belongs to a Block or Warp program (a Thread program's own values "
                "are variables or force<Thread>; the Grid has no barriers to keep them across)");
  if (n == 0) throw Error("threadArray needs at least one element per thread; got 0");
  const ArrayRef h =
      MemoryOps<Exp<X>>::allocate(p.context(), p.body(), MemorySpace::Local, L::value, n);
  return ThreadArray<X>(h, n);
}

}  // namespace obsidian
