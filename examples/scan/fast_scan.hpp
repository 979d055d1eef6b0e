// A scan of any length in one launch (scanGrid: decoupled look-back over tiles), with any of
// the paper's block scans for the tiles, and the thread-sequential block scan that makes it
// fast: each thread scans `seq` consecutive elements in registers, a block-wide scan of the
// threads' totals (warp shuffles, then the warps' totals) gives each thread its prefix.
#pragma once

#include "scan.hpp"

namespace paper {

// seqScanBlock(p, seq, f, arr): the inclusive f-scan of arr (threads x seq elements): thread t
// scans elements t*seq .. t*seq+seq-1 (read through shared memory, so the loads from global
// memory are coalesced), the threads' totals are scanned by warpScan per warp and then across
// the warps, and each thread adds its prefix as it writes its elements.
template <class T, class Op>
SPush<Block, T> seqScanBlock(const Program<Block>& p, uint32_t seq, Op f, const SPull<T>& arr) {
  const uint32_t threads = p.context().threadsPerBlock();
  if (arr.len() != threads * seq || threads % 32 != 0 || threads / 32 > 32) {
    throw Error(
        "seqScanBlock needs threads x seq elements (threads a multiple of 32, at most "
        "1024); got " +
        std::to_string(arr.len()) + " elements for " + std::to_string(threads) +
        " threads and seq " + std::to_string(seq));
  }
  const uint32_t warps = threads / 32;
  const SPull<T> staged = forcePull(p, arr);
  // Each thread's own elements, scanned: a per-thread (register) array.
  const auto own = [staged, seq, f](const Program<Thread>& t, const EWord32& tid) {
    return force(t, seqScan(f, mkPull(seq, [staged, seq, tid](const EWord32& k) {
                              return staged[tid * seq + k];
                            })));
  };
  // Per warp: the inclusive scan of its threads' totals, into shared memory.
  auto warpTotals =
      force(p, pConcat(fmap(
                   [own, seq, f](const EWord32& w) {
                     return exec<Warp>([own, seq, f, w](const Program<Warp>& q) {
                       auto totals = mkPush<Warp, T>(
                           32u, [own, seq, w](const Program<Warp>& r, const Writer<T>& wr) {
                             r.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
                               wr(t, own(t, w * 32u + lane)[seq - 1], lane);
                             });
                           });
                       return push<Warp>(warpScan(q, f, forceReg(q, totals)));
                     });
                   },
                   mkPull(warps, [](const EWord32& w) { return w; }))));
  // The warps' totals (the last lane of each), scanned by the first warp.
  auto warpPrefix =
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
  return SPush<Block, T>(arr.len(), [=](const Program<Block>& q, const Writer<T>& w) {
    q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      const EWord32 warp = tid / 32u, lane = tid % 32u;
      // The prefix of everything before this thread, if anything is.
      const T inWarp = warpTotals[tid - 1u];       // lane > 0
      const T beforeWarp = warpPrefix[warp - 1u];  // warp > 0
      const T both = f(beforeWarp, warpTotals[ifThenElse(lane == 0u, tid, tid - 1u)]);
      const auto scanned = own(t, tid);
      for (uint32_t k = 0; k < seq; ++k) {
        const T x = scanned[k];
        w(t,
          ifThenElse(warp == 0u, ifThenElse(lane == 0u, x, f(inWarp, x)),
                     ifThenElse(lane == 0u, f(beforeWarp, x), f(both, x))),
          tid * seq + k);
      }
    });
  });
}

// The f-scan of a whole array in one launch: tiles of `tile` elements scanned by `scan`.
template <class T, class Op>
Kernel scanAllKernel(const std::string& name, Op f, const BlockScan<Exp<T>>& scan, uint32_t tile,
                     uint32_t threads, ScanKind kind = ScanKind::Inclusive, T identity = T{}) {
  return capture(name, threads, [=](DPull<Exp<T>> in) {
    return scanGrid<T>(f, scan, in, ScanShape{tile}, kind, identity);
  });
}

// With the thread-sequential block scan: tiles of threads x seq elements.
template <class T, class Op>
Kernel fastScanKernel(Op f, uint32_t threads, uint32_t seq, ScanKind kind = ScanKind::Inclusive,
                      T identity = T{}) {
  const BlockScan<Exp<T>> scan = [seq, f](const Program<Block>& p, const SPull<Exp<T>>& arr) {
    return seqScanBlock(p, seq, f, arr);
  };
  return scanAllKernel<T>(kind == ScanKind::Inclusive ? "scanAll" : "scanAllExclusive", f, scan,
                          threads * seq, threads, kind, identity);
}

}  // namespace paper
