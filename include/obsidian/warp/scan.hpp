/// The warp layer, scans: the prefixes of a warp's 32 values in registers (Kogge-Stone with
/// shuffles). The block scans (obsidian/block/scan.hpp) and the look-back of the device scan
/// (obsidian/device/scan.hpp) build on it.
/// @file
#pragma once

#include "obsidian/library.hpp"

namespace obsidian {

/// warpScan(p, f, arr): the inclusive f-scan of a warp's 32 elements in registers (Kogge-Stone
/// with shuffles: in step k, lane i combines with lane i - k when there is one), as a register
/// array. f must be associative; the order of the elements is kept.
/// Cost: 5 shuffles per lane, no shared memory, no barrier.
template <class T, class Op>
SPull<T> warpScan(const Program<Warp>& p, Op f, const SPull<T>& arr) {
  if (arr.len() != 32) {
    throw Error("warpScan needs a warp's 32 elements (one per lane); got " +
                detail::str(arr.len()));
  }
  auto r = forceReg(p, push<Warp>(arr));
  for (uint32_t k = 1; k < 32; k *= 2) {
    const auto from = ixMap([k](const EWord32& i) { return ifThenElse(i >= k, i - k, i); }, r);
    r = forceReg(p, push<Warp>(mkPull(32u, [r, from, f, k](const EWord32& i) {
                   return ifThenElse(i >= k, f(from[i], r[i]), r[i]);
                 })));
  }
  return r;
}

/// warpExclusiveScan(p, f, identity, arr): the exclusive f-scan (identity first) of a warp's 32
/// elements in registers: the inclusive scan moved up one lane (one more shuffle).
template <class T, class Op>
SPull<T> warpExclusiveScan(const Program<Warp>& p, Op f, const T& identity, const SPull<T>& arr) {
  const SPull<T> inclusive = warpScan(p, f, arr);
  const auto before =
      ixMap([](const EWord32& i) { return ifThenElse(i == 0u, i, i - 1u); }, inclusive);
  return forceReg(p, push<Warp>(mkPull(32u, [before, identity](const EWord32& i) {
                    return MemoryOps<T>::select(i == 0u, identity, before[i]);
                  })));
}

}  // namespace obsidian
