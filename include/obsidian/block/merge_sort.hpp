/// The block and warp layers, merge sorting with a user's comparator (CUB's BlockMergeSort and
/// WarpMergeSort): a tile of threads x items elements held blocked in thread arrays (thread tid
/// holds tile elements tid * items .. tid * items + items - 1) sorted stably by any strict weak
/// order less(a, b) -> Exp<bool>, for keys no radix sort orders (pairs packed in a word, a
/// comparator on part of a key, a user's order). Each thread first sorts its own items in
/// registers (an odd-even transposition network, stable: neighbours swap only when the second
/// is less), then pairs of sorted runs merge through shared memory, twice as long each round:
/// every thread finds where its items of the merged run begin by a binary search along its
/// diagonal (the merge path: Green, McColl and Bader, 2012; CUB's MergePath) and merges its
/// items sequentially. Equal elements keep their order (the first run's first). Elements from
/// `valid` on (a last, partial tile) sort after every valid one and are left unspecified.
/// The device merge sort (device/merge_sort.hpp) builds on mergePath and the tile sort.
/// @file
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "obsidian/atomic.hpp"
#include "obsidian/thread_array.hpp"

namespace obsidian {

/// A comparator on X: less(Exp<X>, Exp<X>) -> Exp<bool>, a strict weak order.
template <class Less, class X>
concept ComparatorOn = std::is_invocable_r_v < Exp<bool>,
        Less,
const Exp<X>&, const Exp<X>& > ;

/// a < b (the default comparator of the merge sorts).
struct Ascending {
  /// a < b.
  template <class X>
  Exp<bool> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return a < b;
  }
};
/// b < a: largest first.
struct Descending {
  /// b < a.
  template <class X>
  Exp<bool> operator()(const Exp<X>& a, const Exp<X>& b) const {
    return b < a;
  }
};

/// mergePath(t, a, aLen, b, bLen, diagonal, less): how many of the first `diagonal` elements of
/// the stable merge of sorted runs a[0 .. aLen) and b[0 .. bLen) come from a (ties from a
/// first), by a binary search of at most log2(min(aLen, bLen)) + 1 steps, each reading one
/// element of each run. `a` and `b` are functions from an index to the element there (a shared
/// or global array read); diagonal is at most aLen + bLen. Emits its loop into t.
template <class X, class A, class B, class Less>
EWord32 mergePath(const Program<Thread>& t, A a, const EWord32& aLen, B b, const EWord32& bLen,
                  const EWord32& diagonal, Less less) {
  const EWord32 lo = t.declare(ifThenElse(diagonal > bLen, diagonal - bLen, EWord32(0u)));
  const EWord32 hi = t.declare(ifThenElse(diagonal < aLen, diagonal, aLen));
  t.seqWhile(lo < hi, [&](const Program<Thread>& s) {
    const EWord32 mid = s.declare((lo + hi) >> 1u);
    // b's element before the diagonal's crossing less than a's: fewer of a's come first.
    s.cond(
        less(Exp<X>(b(diagonal - 1u - mid)), Exp<X>(a(mid))),
        [&](const Program<Thread>& u) { u.assign(hi, mid); },
        [&](const Program<Thread>& u) { u.assign(lo, mid + 1u); });
  });
  return lo;
}

namespace detail {
void checkMergeSortTile(const char* what, uint32_t items, const std::vector<uint32_t>& valueItems);

// The executing thread's items sorted stably in registers: `items` rounds of compare-exchanges
// of neighbours (odd pairs, then even), item k taking part only while k < valid (a thread's
// valid items are its first: the invalid ones stay after them).
template <class X, class V, class Less>
void threadSort(const Program<Thread>& t, const ThreadArray<X>& keys,
                const std::vector<ThreadArray<V>>& values, const EWord32& valid, Less less) {
  const uint32_t items = keys.len();
  for (uint32_t round = 0; round < items; ++round) {
    for (uint32_t k = round % 2; k + 1 < items; k += 2) {
      const Exp<X> x = t.declare(keys[k]), y = t.declare(keys[k + 1]);
      const EBool swap = t.declare(EWord32(k + 1) < valid && less(y, x));
      keys.write(t, k, ifThenElse(swap, y, x));
      keys.write(t, k + 1, ifThenElse(swap, x, y));
      for (const ThreadArray<V>& v : values) {
        const Exp<V> p = t.declare(v[k]), q = t.declare(v[k + 1]);
        v.write(t, k, ifThenElse(swap, q, p));
        v.write(t, k + 1, ifThenElse(swap, p, q));
      }
    }
  }
}

// The merge of sorted runs [0, aLen) and [aLen, aLen + bLen) of shared `keys` from diagonal
// `diagonal`, `items` of them into the executing thread's thread arrays (values from the
// shared `sharedValues` alike). Places past both runs take an unspecified element.
template <class X, class V, class Less>
void mergeItems(const Program<Thread>& t, const SMutable<X>& keys,
                const std::vector<SMutable<V>>& sharedValues, const EWord32& aStart,
                const EWord32& aLen, const EWord32& bLen, const EWord32& diagonal,
                const ThreadArray<X>& out, const std::vector<ThreadArray<V>>& outValues,
                Less less) {
  const auto at = [&](const EWord32& i) { return keys[i]; };
  const EWord32 bStart = t.declare(aStart + aLen);
  const EWord32 split = mergePath<X>(
      t, [&](const EWord32& i) { return at(aStart + i); }, aLen,
      [&](const EWord32& i) { return at(bStart + i); }, bLen, diagonal, less);
  const EWord32 ai = t.declare(aStart + split), bi = t.declare(bStart + diagonal - split);
  const EWord32 aEnd = t.declare(bStart), bEnd = t.declare(bStart + bLen);
  // Reads stay within what the runs hold: an exhausted run's index is clamped (not taken).
  const EWord32 last = t.declare(ifThenElse(bEnd > 0u, bEnd - 1u, EWord32(0u)));
  const auto clamped = [&](const EWord32& i) { return ifThenElse(i < last, i, last); };
  // Each run's next element stays in a register; a step reads only the one it takes the place
  // of (CUB's SerialMerge).
  const Exp<X> x = t.declare(keys[clamped(ai)]), y = t.declare(keys[clamped(bi)]);
  for (uint32_t k = 0; k < out.len(); ++k) {
    const EBool takeB = t.declare(bi < bEnd && (ai >= aEnd || less(y, x)));
    out.write(t, k, ifThenElse(takeB, y, x));
    for (size_t j = 0; j < sharedValues.size(); ++j) {
      outValues[j].write(t, k, sharedValues[j][clamped(ifThenElse(takeB, bi, ai))]);
    }
    t.assign(bi, bi + cast<uint32_t>(takeB));
    t.assign(ai, ai + cast<uint32_t>(!takeB));
    if (k + 1 < out.len()) {
      const Exp<X> next = t.declare(keys[clamped(ifThenElse(takeB, bi, ai))]);
      t.assign(x, ifThenElse(takeB, x, next));
      t.assign(y, ifThenElse(takeB, next, y));
    }
  }
}

// The sort of a tile of `threads` threads' thread arrays within program p (a Block, or a Warp
// of 32 lanes): threadSort, then merge rounds through shared memory.
template <class L, class X, class V, class Less>
void mergeSortTile(const Program<L>& p, uint32_t threads, const ThreadArray<X>& keys,
                   const std::vector<ThreadArray<V>>& values, const EWord32& valid, Less less) {
  const uint32_t items = keys.len(), tile = threads * items;
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    const EWord32 first = tid * items;
    const EWord32 mine = t.declare(ifThenElse(
        valid > first, ifThenElse(valid - first < EWord32(items), valid - first, EWord32(items)),
        EWord32(0u)));
    threadSort(t, keys, values, mine, less);
  });
  if (threads == 1) return;
  const SMutable<X> shared = newShared<X>(p, tile);
  std::vector<SMutable<V>> sharedValues;
  for (size_t j = 0; j < values.size(); ++j) sharedValues.push_back(newShared<V>(p, tile));
  const EWord32 limit = ifThenElse(valid < EWord32(tile), valid, EWord32(tile));
  for (uint32_t run = 1; run < threads; run *= 2) {
    // Runs of `run` threads' items, merged pairwise.
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      for (uint32_t k = 0; k < items; ++k) {
        write(t, shared, tid * items + k, keys[k]);
        for (size_t j = 0; j < values.size(); ++j) {
          write(t, sharedValues[j], tid * items + k, values[j][k]);
        }
      }
    });
    p.sync();
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      const uint32_t runLen = run * items;
      const EWord32 start = t.declare((tid / (2 * run)) * (2 * runLen));
      const auto clampTo = [&](const EWord32& i) { return ifThenElse(i < limit, i, limit); };
      const EWord32 aStart = t.declare(clampTo(start));
      const EWord32 aEnd = t.declare(clampTo(start + runLen));
      const EWord32 bEnd = t.declare(clampTo(start + 2 * runLen));
      const EWord32 aLen = t.declare(aEnd - aStart), bLen = t.declare(bEnd - aEnd);
      const EWord32 diagonal = (tid % (2 * run)) * items;
      const EWord32 d = t.declare(ifThenElse(diagonal < aLen + bLen, diagonal, aLen + bLen));
      mergeItems(t, shared, sharedValues, aStart, aLen, bLen, d, keys, values, less);
    });
    p.sync();
  }
}
}  // namespace detail

/// blockMergeSort(p, keys, less, values, valid): the block's tile (threadsPerBlock x items,
/// blocked: thread tid holds elements tid * items + k) sorted stably by less; each array of
/// `values` (as many items per thread) moves with its keys. Only the first `valid` elements
/// are sorted (the rest after them, unspecified); by default all. After it the thread arrays
/// hold the sorted tile, blocked. Cost: items rounds of compare-exchanges in registers, then
/// log2(threads) merge rounds, each one tile of shared memory per array written, read and two
/// barriers.
template <KernelScalar X, ComparatorOn<X> Less = Ascending, KernelScalar V = uint32_t>
void blockMergeSort(const Program<Block>& p, const ThreadArray<X>& keys, Less less = {},
                    const std::vector<ThreadArray<V>>& values = {},
                    const EWord32& valid = EWord32(UINT32_MAX)) {
  std::vector<uint32_t> lens;
  for (const ThreadArray<V>& v : values) lens.push_back(v.len());
  detail::checkMergeSortTile("blockMergeSort", keys.len(), lens);
  detail::mergeSortTile(p, p.context().threadsPerBlock(), keys, values, valid, less);
}

/// warpMergeSort(p, keys, less, values, valid): blockMergeSort within one warp (its 32 lanes'
/// items, merged through the warp's own shared memory with __syncwarp only): every warp of a
/// block sorts its own tile of 32 x items.
template <KernelScalar X, ComparatorOn<X> Less = Ascending, KernelScalar V = uint32_t>
void warpMergeSort(const Program<Warp>& p, const ThreadArray<X>& keys, Less less = {},
                   const std::vector<ThreadArray<V>>& values = {},
                   const EWord32& valid = EWord32(UINT32_MAX)) {
  std::vector<uint32_t> lens;
  for (const ThreadArray<V>& v : values) lens.push_back(v.len());
  detail::checkMergeSortTile("warpMergeSort", keys.len(), lens);
  detail::mergeSortTile(p, 32u, keys, values, valid, less);
}

}  // namespace obsidian
