/// push, force and forcePull: converting between pull and push arrays, and making arrays
/// manifest in memory (the paper's Section 3.1 and 4.1).
/// @file
#pragma once

#include "obsidian/memory_ops.hpp"
#include "obsidian/push.hpp"

namespace obsidian {

/// push<L>(arr): one element per instance of level L (a sequential loop at Thread level, a
/// parallel loop over lanes, threads of a block, or threads of the grid above it).
template <class L, class Len, class T>
Push<L, Len, T> push(const Pull<Len, T>& arr) {
  static_assert(HierarchyLevel<L>, "push<L>: L must be Thread, Warp, Block or Grid");
  return Push<L, Len, T>(arr.len(), [arr](const Program<L>& p, const Writer<T>& w) {
    auto body = [&](const Program<Thread>& t, const EWord32& i) { w(t, arr[i], i); };
    if constexpr (std::is_same_v<L, Thread>) {
      p.seqFor(sizeConv(arr.len()), body);
    } else {
      p.forAll(sizeConv(arr.len()), body);
    }
  });
}

/// force(p, arr): write `arr` with its own iteration scheme into a fresh array of level L
/// (shared memory for Warp and Block, per-thread memory for Thread), insert the barrier of the
/// level, and return a pull array that reads it.
template <class L, class M, class Len, class T>
Pull<uint32_t, T> force(const Program<L>& p, const Push<M, Len, T>& arr) {
  static_assert(level_le<L, Block>,
                "force is not available at Grid level: blocks cannot synchronize");
  static_assert(std::is_same_v<L, M>,
                "force at level L needs a Push<L> array: the array's level must match the "
                "program's level");
  static_assert(std::is_same_v<Len, uint32_t>,
                "force needs a static length (uint32_t): shared memory is sized at generation "
                "time");
  static_assert(Storable<T>, "force: the element type must be an Exp<X> or a hana::tuple");
  using Ops = MemoryOps<T>;
  const MemorySpace space = std::is_same_v<L, Thread> ? MemorySpace::Local : MemorySpace::Shared;
  const uint32_t n = arr.len();
  if (n == 0) throw Error("force: cannot make an array of length 0 manifest");
  const typename Ops::Handle h = Ops::allocate(p.context(), p.body(), space, L::value, n);
  arr(p, [h](const Program<Thread>& t, const T& v, const EWord32& i) { Ops::write(t, h, i, v); });
  if constexpr (!std::is_same_v<L, Thread>) p.sync();
  return Pull<uint32_t, T>(n, [h](const EWord32& i) { return Ops::read(h, i); });
}

/// forceReg(p, arr): a warp's 32-element array in registers, one element per lane, with no
/// shared memory and no barrier. Lane l must write element l (push<Warp> and tConcat<Warp> of
/// one element per lane do); reading another lane's element compiles to __shfl_sync, which
/// every lane of the warp must reach together (the kernel is rejected otherwise), so
/// permutations of it (xor, rotate, broadcast) cost one shuffle each.
template <class L, class Len, class T>
Pull<uint32_t, T> forceReg(const Program<Warp>& p, const Push<L, Len, T>& arr) {
  static_assert(std::is_same_v<L, Warp>,
                "forceReg needs a Push<Warp> array (one element per lane)");
  static_assert(std::is_same_v<Len, uint32_t>, "forceReg needs a static length (32)");
  static_assert(Storable<T>, "forceReg: the element type must be an Exp<X> or a hana::tuple");
  if (arr.len() != 32) {
    throw Error("forceReg needs a warp-sized array (32 elements, one per lane); got " +
                std::to_string(arr.len()));
  }
  using Ops = MemoryOps<T>;
  const typename Ops::Handle h =
      Ops::allocate(p.context(), p.body(), MemorySpace::Register, Level::Warp, 32);
  arr(p, [h](const Program<Thread>& t, const T& v, const EWord32& i) { Ops::write(t, h, i, v); });
  return Pull<uint32_t, T>(32, [h](const EWord32& i) { return Ops::read(h, i); });
}

/// forcePull(p, arr) = force(p, push<L>(arr)).
template <class L, class Len, class T>
Pull<uint32_t, T> forcePull(const Program<L>& p, const Pull<Len, T>& arr) {
  static_assert(level_le<L, Block>,
                "force is not available at Grid level: blocks cannot synchronize");
  return force(p, push<L>(arr));
}

}  // namespace obsidian
