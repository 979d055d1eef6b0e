// The warp layer, reductions: a warp folds up to 32 values in registers with shuffles (no
// shared memory, no barrier). Built on the thread level only (register arrays and ixMap); the
// block layer (obsidian/block/reduce.hpp) builds on it.
#pragma once

#include "obsidian/library.hpp"

namespace obsidian {

// warpReduce(p, f, arr): the f-fold of arr (a power of two of at most 32 elements) by a warp,
// in registers: lane i starts with arr[i % len], then log2(len) butterfly steps combine it with
// the lane `i ^ k` apart (one shuffle each), after which every lane holds the result. No shared
// memory, no barrier. f must be associative and commutative.
// Cost: log2(len) shuffles per lane.
template <class T, class Op>
T warpReduce(const Program<Warp>& p, Op f, const SPull<T>& arr) {
  const uint32_t m = arr.len();
  if (m == 0 || m > 32 || (m & (m - 1)) != 0) {
    throw Error("warpReduce needs a power of two of at most 32 elements; got " + detail::str(m));
  }
  auto r = forceReg(p, push<Warp>(mkPull(32u, [arr, m](const EWord32& i) {
                      return m == 32 ? arr[i] : arr[i % m];
                    })));
  for (uint32_t k = m / 2; k >= 1; k /= 2) {
    r = forceReg(p, push<Warp>(zipWith(f, r, ixMap([k](const EWord32& i) { return i ^ k; }, r))));
  }
  return r[0u];
}

}  // namespace obsidian
