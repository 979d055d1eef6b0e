// A scan of any length in one launch (scanGrid: decoupled look-back over tiles), with any of
// the paper's block scans for the tiles, and the thread-sequential block scan that makes it
// fast: each thread scans `seq` consecutive elements in registers, a block-wide scan of the
// threads' totals (warp shuffles, then the warps' totals) gives each thread its prefix.
#pragma once

#include "scan.hpp"

namespace paper {

// seqScanBlock(p, seq, f, arr): the inclusive f-scan of arr (threads x seq elements): thread t
// scans elements t*seq .. t*seq+seq-1 (straight from arr: a warp's loads cover consecutive
// memory, so the cache serves what each load instruction leaves) into shared memory, the
// threads' totals are scanned by warpScan per warp and then across the warps, and the result
// is a pull array that adds each thread's prefix as it is read (no second pass over shared
// memory). seq odd keeps the shared-memory accesses free of bank conflicts.
template <class T, class Op>
SPull<T> seqScanBlock(const Program<Block>& p, uint32_t seq, Op f, const SPull<T>& arr,
                      bool stage = false) {
  const uint32_t threads = p.context().threadsPerBlock();
  if (arr.len() != threads * seq || threads % 32 != 0) {
    throw Error("seqScanBlock needs threads x seq elements (threads a multiple of 32); got " +
                std::to_string(arr.len()) + " elements for " + std::to_string(threads) +
                " threads and seq " + std::to_string(seq));
  }
  const uint32_t warps = threads / 32;
  // With `stage`, the tile goes through shared memory first, loaded coalesced (one element per
  // thread per step): twice the shared memory, but every load instruction reads one segment.
  const SPull<T> source = stage ? forcePull(p, arr) : arr;
  const SPull<T> own = force(
      p,
      tConcat<Block>(fmap([f](const SPull<T>& c) { return seqScan(f, c); }, splitUp(seq, source))));
  // Per warp: the inclusive scan of its threads' totals.
  const SPull<T> warpTotals = force(
      p, pConcat(fmap(
             [own, seq, f](const EWord32& w) {
               return exec<Warp>([own, seq, f, w](const Program<Warp>& q) {
                 return push<Warp>(warpScan(q, f, mkPull(32u, [own, seq, w](const EWord32& lane) {
                                              return own[(w * 32u + lane) * seq + (seq - 1)];
                                            })));
               });
             },
             mkPull(warps, [](const EWord32& w) { return w; }))));
  // The warps' totals (the last lane of each), scanned by the first warp.
  const SPull<T> warpPrefix =
      force(p, pConcat(fmap(
                   [warpTotals, warps, f](const EWord32&) {
                     return exec<Warp>([warpTotals, warps, f](const Program<Warp>& q) {
                       return push<Warp>(
                           warpScan(q, f, mkPull(32u, [warpTotals, warps](const EWord32& i) {
                                      return warpTotals[min(i, EWord32(warps - 1)) * 32u + 31u];
                                    })));
                     });
                   },
                   mkPull(1u, [](const EWord32& i) { return i; }))));
  return SPull<T>(arr.len(), [=](const EWord32& j) {
    const EWord32 tid = j / seq, warp = tid / 32u, lane = tid % 32u;
    const T x = own[j];
    const T inWarp = warpTotals[tid - 1u];       // read only where lane > 0
    const T beforeWarp = warpPrefix[warp - 1u];  // read only where warp > 0
    return ifThenElse(warp == 0u, ifThenElse(lane == 0u, x, f(inWarp, x)),
                      ifThenElse(lane == 0u, f(beforeWarp, x), f(f(beforeWarp, inWarp), x)));
  });
}

// The f-scan of a whole array in one launch: tiles of `tile` elements scanned by `scan`.
template <class T, class Op, class Scan>
Kernel scanAllKernel(const std::string& name, Op f, const Scan& scan, uint32_t tile,
                     uint32_t threads, ScanKind kind = ScanKind::Inclusive, T identity = T{}) {
  return capture(name, threads, [=](DPull<Exp<T>> in) {
    return scanGrid<T>(f, scan, in, ScanShape{tile}, kind, identity);
  });
}

// With the thread-sequential block scan: tiles of threads x seq elements.
template <class T, class Op>
Kernel fastScanKernel(Op f, uint32_t threads, uint32_t seq, ScanKind kind = ScanKind::Inclusive,
                      T identity = T{}, bool stage = false) {
  const auto scan = [seq, f, stage](const Program<Block>& p, const SPull<Exp<T>>& arr) {
    return seqScanBlock(p, seq, f, arr, stage);
  };
  return scanAllKernel<T>(kind == ScanKind::Inclusive ? "scanAll" : "scanAllExclusive", f, scan,
                          threads * seq, threads, kind, identity);
}

}  // namespace paper
