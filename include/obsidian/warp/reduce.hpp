/// The warp layer, reductions: a warp folds up to 32 values in registers with shuffles (no
/// shared memory, no barrier). Built on the thread level only (register arrays and ixMap); the
/// block layer (obsidian/block/reduce.hpp) builds on it.
/// @file
#pragma once

#include "obsidian/library.hpp"
#include "obsidian/thread_array.hpp"

namespace obsidian {

/// warpReduceGroups(p, f, lanes, width): `lanes` holds one value per lane of the warp (32, in
/// registers: what forceReg of a push<Warp> gives); after log2(width) butterfly steps (lane i
/// combines with lane i ^ k, k = width / 2 .. 1, one shuffle each) every lane holds the f-fold of
/// its group of `width` consecutive lanes (those with the same i / width). width is a power of
/// two of at most 32 (1: the lanes as they are). f must be associative and commutative.
/// Cost: log2(width) shuffles per lane.
template <class Lanes, class Op>
Lanes warpReduceGroups(const Program<Warp>& p, Op f, Lanes lanes, uint32_t width) {
  if (width == 0 || width > 32 || (width & (width - 1)) != 0) {
    throw Error("warpReduceGroups needs a group width that is a power of two of at most 32; got " +
                detail::str(width));
  }
  for (uint32_t k = width / 2; k >= 1; k /= 2) {
    lanes = forceReg(
        p, push<Warp>(zipWith(f, lanes, ixMap([k](const EWord32& i) { return i ^ k; }, lanes))));
  }
  return lanes;
}

/// warpReduce(p, f, arr): the f-fold of arr (a power of two of at most 32 elements) by a warp,
/// in registers: lane i starts with arr[i % len], then log2(len) butterfly steps combine it with
/// the lane `i ^ k` apart (one shuffle each), after which every lane holds the result. No shared
/// memory, no barrier. f must be associative and commutative.
/// Cost: log2(len) shuffles per lane.
template <class T, class Op>
T warpReduce(const Program<Warp>& p, Op f, const SPull<T>& arr) {
  const uint32_t m = arr.len();
  if (m == 0 || m > 32 || (m & (m - 1)) != 0) {
    throw Error("warpReduce needs a power of two of at most 32 elements; got " + detail::str(m));
  }
  auto r = forceReg(p, push<Warp>(mkPull(32u, [arr, m](const EWord32& i) {
                      return m == 32 ? arr[i] : arr[i % m];
                    })));
  return warpReduceGroups(p, f, r, m)[0u];
}

/// warpReduce(p, f, items): the f-fold of every item of every lane of the warp, for a thread
/// array (threadArray) of the warp's program or of the block around it: each lane folds its own
/// items in registers, then the butterfly above; every lane holds the result. f must be
/// associative and commutative. Cost: five shuffles per lane.
template <KernelScalar X, class Op>
Exp<X> warpReduce(const Program<Warp>& p, Op f, const ThreadArray<X>& items) {
  // Lane l evaluates element l: its own items.
  return warpReduce(p, f, mkPull(32u, [f, items](const EWord32&) { return items.fold(f); }));
}

}  // namespace obsidian
