/// The block layer, neighbours of a tile held in thread arrays (CUB's BlockDiscontinuity and
/// BlockAdjacentDifference): each item with the item before it (or after it) in the tile, where
/// thread tid holds the tile's consecutive items tid * n .. tid * n + n - 1 (a blocked
/// arrangement: what blockLoad's tiles give when read at tid * n + k). A thread's own items are
/// neighbours in its registers; only its first (last) item needs the previous (next) thread's
/// last (first) item, which the threads exchange through shared memory (one barrier, one
/// element per thread). The device layer's unique selection, run-length encoding and
/// reduce-by-key (device/select.hpp) find their runs with blockFlagHeads.
/// @file
#pragma once

#include <type_traits>

#include "obsidian/force.hpp"
#include "obsidian/thread_array.hpp"

namespace obsidian {

namespace detail {
// Each thread's item at index `k` in one shared array (one barrier), read as the neighbours of
// the threads beside it.
template <class X>
SPull<Exp<X>> exchangeEdge(const Program<Block>& p, const ThreadArray<X>& items, uint32_t k) {
  const uint32_t threads = p.context().threadsPerBlock();
  return force(
      p, mkPush<Block, Exp<X>>(threads, [=](const Program<Block>& q, const Writer<Exp<X>>& w) {
        q.forAll(threads,
                 [&](const Program<Thread>& t, const EWord32& tid) { w(t, items[k], tid); });
      }));
}
}  // namespace detail

/// blockAdjacentDifference<R>(p, items, op, predecessor): for every item x of the tile, op(x,
/// the item before it) (an Exp<R>): the item before thread 0's first is `predecessor` (the
/// tile's predecessor: the last item of the tile before, or any stand-in the caller overrides).
/// The result is a thread array shaped as `items`.
template <KernelScalar R, KernelScalar X, class Op>
ThreadArray<R> blockAdjacentDifference(const Program<Block>& p, const ThreadArray<X>& items, Op op,
                                       const Exp<X>& predecessor) {
  static_assert(std::is_invocable_r_v<Exp<R>, Op, const Exp<X>&, const Exp<X>&>,
                "blockAdjacentDifference: op(item, previous item) gives an Exp<R>");
  const uint32_t threads = p.context().threadsPerBlock(), n = items.len();
  const SPull<Exp<X>> lasts = detail::exchangeEdge(p, items, n - 1);
  const ThreadArray<R> out = threadArray<R>(p, n);
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    const Exp<X> before = t.declare(ifThenElse(tid == 0u, predecessor, lasts[tid - 1u]));
    out.write(t, 0, op(items[0], before));
    for (uint32_t k = 1; k < n; ++k) out.write(t, k, op(items[k], items[k - 1]));
  });
  return out;
}

/// blockFlagHeads(p, items, predecessor, hasPredecessor): 1 for every item that starts a run of
/// equal items (it differs from the item before it), else 0, as u32 flags shaped as `items`.
/// Thread 0's first item is compared with `predecessor` where hasPredecessor holds, and is a
/// head where it does not (the first tile). Items compare with `!=`: a float NaN is a run of
/// its own, and -0 and +0 are one run (CUB's equality).
template <KernelScalar X>
ThreadArray<uint32_t> blockFlagHeads(const Program<Block>& p, const ThreadArray<X>& items,
                                     const Exp<X>& predecessor, const Exp<bool>& hasPredecessor) {
  const uint32_t threads = p.context().threadsPerBlock(), n = items.len();
  const SPull<Exp<X>> lasts = detail::exchangeEdge(p, items, n - 1);
  const ThreadArray<uint32_t> flags = threadArray<uint32_t>(p, n);
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    const Exp<bool> differs = ifThenElse(tid == 0u, !hasPredecessor || items[0] != predecessor,
                                         items[0] != lasts[tid - 1u]);
    flags.write(t, 0, cast<uint32_t>(differs));
    for (uint32_t k = 1; k < n; ++k) flags.write(t, k, cast<uint32_t>(items[k] != items[k - 1]));
  });
  return flags;
}

/// blockFlagTails(p, items, successor, hasSuccessor): 1 for every item that ends a run of equal
/// items (it differs from the item after it), else 0. The last thread's last item is compared
/// with `successor` where hasSuccessor holds, and is a tail where it does not (the last tile).
template <KernelScalar X>
ThreadArray<uint32_t> blockFlagTails(const Program<Block>& p, const ThreadArray<X>& items,
                                     const Exp<X>& successor, const Exp<bool>& hasSuccessor) {
  const uint32_t threads = p.context().threadsPerBlock(), n = items.len();
  const SPull<Exp<X>> firsts = detail::exchangeEdge(p, items, 0);
  const ThreadArray<uint32_t> flags = threadArray<uint32_t>(p, n);
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    for (uint32_t k = 0; k + 1 < n; ++k) {
      flags.write(t, k, cast<uint32_t>(items[k] != items[k + 1]));
    }
    const Exp<bool> differs =
        ifThenElse(tid == threads - 1u, !hasSuccessor || items[n - 1] != successor,
                   items[n - 1] != firsts[tid + 1u]);
    flags.write(t, n - 1, cast<uint32_t>(differs));
  });
  return flags;
}

}  // namespace obsidian
