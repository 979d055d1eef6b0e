/// The block layer, scans: the inclusive prefixes of a block's tile. The paper's variants
/// (Section 5.3: Sklansky with one thread per element, sklansky2/3 with two, Kogge-Stone) and
/// the thread-sequential scan built on the warp layer (each thread scans consecutive elements in
/// registers, warp scans of the threads' totals), named by BlockScanAlgorithm. Each runs inside
/// any block program: a user's own kernel, or the device scans (obsidian/device/scan.hpp).
/// @file
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "obsidian/atomic.hpp"
#include "obsidian/block/load_store.hpp"
#include "obsidian/thread_array.hpp"
#include "obsidian/warp/scan.hpp"

namespace obsidian {

// ---------------------------------------------------------------- the paper's variants
/// fan op arr = conc a1 (fmap (op c) a2)
///   where (a1, a2) = halve arr
///         c = a1 ! (len a1 - 1)
template <class T, class Op>
SPull<T> fan(Op op, const SPull<T>& arr) {
  auto [a1, a2] = halve(arr);
  const T c = last(a1);
  return conc(a1, fmap([op, c](const T& x) { return op(c, x); }, a2));
}

/// sklansky(p, n, op, arr): 2^n elements with one thread per element (virtualized where the
/// block has fewer), each of the n steps a binSplit of fans, forced. Cost: n barriers, 2^n
/// elements of shared memory (two arrays alive at once: 2 x 2^n).
template <class T, class Op>
SPush<Block, T> sklansky(const Program<Block>& p, uint32_t n, Op op, const SPull<T>& arr) {
  if (n == 0) return push<Block>(arr);
  const auto fanOp = [op](const SPull<T>& a) { return fan(op, a); };  // (fan op)
  const SPull<T> arr1 = binSplit(n - 1, fanOp, arr);
  const SPull<T> arr2 = forcePull(p, arr1);
  return sklansky(p, n - 1, op, arr2);
}

/// phase i f arr: len/2 threads, each writing one element unchanged (ix1) and one combined with
/// the last element of the preceding 2^i-element group (ix3)
/// (paper: `mkPush l (\wf -> forAll ...)`)
template <class T, class Op>
SPush<Block, T> phase(uint32_t i, Op f, const SPull<T>& arr) {
  const uint32_t l = len(arr);
  return mkPush<Block, T>(l, [i, f, arr, l](const Program<Block>& p, const Writer<T>& wf) {
    p.forAll(l / 2, [&](const Program<Thread>& t, const EWord32& tid) {
      const EWord32 ix1 = insertZero(i, tid);
      const EWord32 ix2 = flipBit(i, ix1);
      const EWord32 ix3 = zeroBits(i, ix2) - 1u;
      wf(t, arr[ix1], ix1);
      wf(t, f(arr[ix3], arr[ix2]), ix2);
    });
  });
}

/// [phase i f | i <- [0..(l-1)]]
template <class T, class Op>
std::vector<std::function<SPush<Block, T>(const SPull<T>&)>> phases(uint32_t l, Op f) {
  std::vector<std::function<SPush<Block, T>(const SPull<T>&)>> fs;
  for (uint32_t i = 0; i < l; ++i) {
    fs.push_back([i, f](const SPull<T>& arr) { return phase(i, f, arr); });
  }
  return fs;
}

/// sklansky2 l f = compose [phase i f | i <- [0..(l-1)]]
/// Scans 2^l elements (l >= 1) with two elements per thread and no conditionals.
/// Cost: l - 1 barriers, 2^l elements of shared memory per live stage.
template <class T, class Op>
SPush<Block, T> sklansky2(const Program<Block>& p, uint32_t l, Op f, const SPull<T>& arr) {
  return compose(p, phases<T>(l, f), arr);
}

/// sklansky3 l f arr = do im <- force (load 2 arr)
///                        compose [phase i f | i <- [0..(l-1)]] im
/// sklansky2 after a coalescing strided load of two elements per thread into shared memory.
/// Cost: one barrier more than sklansky2.
template <class T, class Op>
SPush<Block, T> sklansky3(const Program<Block>& p, uint32_t l, Op f, const SPull<T>& arr) {
  const SPull<T> im = force(p, load(2, arr));
  return compose(p, phases<T>(l, f), im);
}

/// koggeStone: l steps over 2^l elements; in step k, element i becomes a[i - 2^k] op a[i] from
/// i = 2^k on (and stays a[i] below), each step forced. Cost: l barriers.
template <class T, class Op>
SPush<Block, T> koggeStone(const Program<Block>& p, uint32_t l, Op op, SPull<T> arr) {
  for (uint32_t k = 0; k < l; ++k) {
    const uint32_t d = 1u << k;
    const SPull<T> step = mkPull(len(arr), [op, arr, d](const EWord32& i) {
      return ifThenElse(i < d, arr[i], op(arr[i - d], arr[i]));
    });
    arr = forcePull(p, step);
  }
  return push<Block>(arr);
}

/// shiftRight id arr = [id, a0, ..., a(n-2)]: the inclusive scan of it is the exclusive scan.
template <class T>
SPull<T> shiftRight(const T& id, const SPull<T>& arr) {
  return mkPull(len(arr),
                [id, arr](const EWord32& i) { return ifThenElse(i == 0u, id, arr[i - 1u]); });
}

// ---------------------------------------------------------------- on the warp layer
/// seqScanBlock(p, seq, f, arr, load): the inclusive f-scan of arr (threads x seq elements) as a
/// manifest array in shared memory. Thread t owns elements t*seq .. t*seq+seq-1 and reads them
/// twice: first it folds them, the folds are scanned by warpScan per warp, each
/// warp scans the warps' totals for itself, and then each thread scans its elements again from
/// the fold of the threads before it, writing each element's final prefix (so the result is read
/// as it is: no per-element fix-up when it is used). seq odd keeps the shared-memory accesses
/// free of bank conflicts. `load` (block/load_store.hpp) says where the threads read their
/// elements: Direct, straight from arr (a warp's loads cover consecutive memory, so the cache
/// serves the second read and what each load instruction leaves); the others, from blockLoad's
/// arrangement in shared memory (coalesced reads; Vectorized only for a tile that reads a global
/// array directly, see blockLoad).
/// Cost: two barriers (three with any load but Direct), threads x seq + threads elements of
/// shared memory (and the tile again with any load but Direct).
template <class T, class Op>
SPull<T> seqScanBlock(const Program<Block>& p, uint32_t seq, Op f, const SPull<T>& arr,
                      BlockLoadAlgorithm load = BlockLoadAlgorithm::Direct) {
  const uint32_t threads = p.context().threadsPerBlock();
  if (seq == 0 || arr.len() != threads * seq || threads % 32 != 0) {
    throw Error("seqScanBlock needs threads x seq elements (threads a multiple of 32); got " +
                std::to_string(arr.len()) + " elements for " + std::to_string(threads) +
                " threads and seq " + std::to_string(seq));
  }
  const uint32_t warps = threads / 32;
  const SPull<T> source = blockLoad(load, p, seq, arr);  // Direct: arr itself
  const auto warpIndices = mkPull(warps, [](const EWord32& w) { return w; });
  // Per warp: the inclusive scan of its threads' folds (each a loop: a fold written as one
  // expression would repeat an operand that f uses twice at every step).
  const SPull<T> laneTotals =
      force(p, pConcat(fmap(
                   [source, seq, f](const EWord32& w) {
                     return exec<Warp>([source, seq, f, w](const Program<Warp>& q) {
                       const SPull<T> slice = mkPull(32u * seq, [source, seq, w](const EWord32& k) {
                         return source[w * (32u * seq) + k];
                       });
                       const SPull<T> folds = forceReg(
                           q, tConcat<Warp>(fmap([f](const SPull<T>& c) { return seqReduce(f, c); },
                                                 splitUp(seq, slice))));
                       return push<Warp>(warpScan(q, f, folds));
                     });
                   },
                   warpIndices)));
  // Per warp: the warps' totals (the last lane of each) scanned, each lane's fold of the
  // threads before it (thread 0's is a stand-in it does not use), and each lane's elements
  // scanned again from there.
  return force(
      p, pConcat(fmap(
             [=](const EWord32& w) {
               return exec<Warp>([=](const Program<Warp>& q) {
                 const SPull<T> acrossWarps =
                     warpScan(q, f, mkPull(32u, [laneTotals, warps](const EWord32& i) {
                                return laneTotals[min(i, EWord32(warps - 1)) * 32u + 31u];
                              }));
                 const SPull<T> before = forceReg(
                     q, push<Warp>(mkPull(32u, [=](const EWord32& lane) {
                       const EWord32 tid = w * 32u + lane;
                       const T inWarp = laneTotals[ifThenElse(tid == 0u, tid, tid - 1u)];
                       const T beforeWarp = acrossWarps[ifThenElse(w == 0u, w, w - 1u)];
                       return ifThenElse(w == 0u, inWarp,
                                         ifThenElse(lane == 0u, beforeWarp, f(beforeWarp, inWarp)));
                     })));
                 return mkPush<Warp, T>(
                     32u * seq, [=](const Program<Warp>& r, const Writer<T>& out) {
                       r.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
                         const EWord32 first = (w * 32u + lane) * seq;
                         const T x = source[first];
                         const T acc = MemoryOps<T>::declare(
                             t, ifThenElse(w * 32u + lane == 0u, x, f(before[lane], x)));
                         out(t, acc, lane * seq);
                         t.seqFor(seq - 1, [&](const Program<Thread>& u, const EWord32& k) {
                           MemoryOps<T>::assign(u, acc, f(acc, source[first + k + 1u]));
                           out(u, acc, lane * seq + k + 1u);
                         });
                       });
                     });
               });
             },
             warpIndices)));
}

// ---------------------------------------------------------------- over thread arrays
/// What blockScanItems gives: each thread's exclusive prefix and the block's total.
template <KernelScalar X>
struct ItemsPrefix {
  /// One element per thread: the f-fold of the items of every thread before it in the block
  /// (thread 0 has none: its element is a stand-in that must not be used).
  ThreadArray<X> before;
  /// The f-fold of every item of the block (read from shared memory by whoever evaluates it).
  Exp<X> aggregate;
};

/// blockScanItems(p, f, items): the block-wide exclusive f-scan of the threads' thread arrays
/// (threadArray), item order within a thread and then thread order (CUB's BlockScan over
/// items per thread): each thread folds its items in registers, each warp scans the folds with
/// warpScan, the warps' totals meet in shared memory (one barrier), and each thread adds the
/// totals of the warps before it. A thread then scans its own items from `before` in registers
/// (see device/scan.hpp's scanAll), so no item is staged through shared memory. f must be
/// associative; the order of the items is kept. The block's threads must be a multiple of 32, at
/// most 1024. Cost: one barrier, one element of shared memory per warp, 6 shuffles a lane (11
/// with more than one warp).
template <KernelScalar X, class Op>
ItemsPrefix<X> blockScanItems(const Program<Block>& p, Op f, const ThreadArray<X>& items) {
  const uint32_t threads = p.context().threadsPerBlock();
  if (threads % 32 != 0 || threads > 1024) {
    throw Error(
        "blockScanItems needs a block of whole warps (a multiple of 32 threads, at most "
        "1024); got " +
        detail::str(threads) + " threads");
  }
  const uint32_t warps = threads / 32;
  const ThreadArray<X> before = threadArray<X>(p, 1);
  const SMutable<X> totals = newShared<X>(p, warps);
  // Per warp: the inclusive scan of the lanes' folds; each lane keeps the one of the lane
  // before it (lane 0 its own, a stand-in), and lane 31 publishes the warp's total.
  p.distrPar(warps, [&](const Program<Warp>& q, const EWord32& w) {
    const SPull<Exp<X>> scanned =
        warpScan(q, f, mkPull(32u, [f, items](const EWord32&) { return items.fold(f); }));
    q.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
      before.write(t, 0, scanned[ifThenElse(lane == 0u, lane, lane - 1u)]);
      const Exp<X> mine = t.declare(scanned[lane]);
      t.cond(lane == 31u, [&](const Program<Thread>& u) { write(u, totals, w, mine); });
    });
  });
  p.sync();
  if (warps > 1) {
    // Per warp: the warps' totals scanned (lanes past the last warp repeat its total), and each
    // lane's prefix moved past the warps before its own.
    const SPull<Exp<X>> all = totals.pull();
    p.distrPar(warps, [&](const Program<Warp>& q, const EWord32& w) {
      const SPull<Exp<X>> across = warpScan(q, f, mkPull(32u, [all, warps](const EWord32& i) {
                                              return all[min(i, EWord32(warps - 1))];
                                            }));
      q.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
        const Exp<X> beforeWarp = t.declare(across[ifThenElse(w == 0u, w, w - 1u)]);
        const Exp<X> inWarp = before[0];
        before.write(
            t, 0,
            ifThenElse(w == 0u, inWarp, ifThenElse(lane == 0u, beforeWarp, f(beforeWarp, inWarp))));
      });
    });
  }
  Exp<X> aggregate = totals[0u];
  for (uint32_t k = 1; k < warps; ++k) aggregate = f(aggregate, totals[k]);
  return {before, aggregate};
}

// ---------------------------------------------------------------- the variants by name
/// The block scans by name (as CUB's BlockScanAlgorithm), for the device scans, the tuner and
/// the benchmarks.
enum class BlockScanAlgorithm {
  Sklansky,         ///< sklansky: one thread per element
  Sklansky2,        ///< sklansky2: two elements per thread, no conditionals
  Sklansky3,        ///< sklansky3: sklansky2 after a coalescing load
  KoggeStone,       ///< koggeStone
  ThreadSequential  ///< seqScanBlock: each thread scans consecutive elements, warp scans
};
/// Every BlockScanAlgorithm, for sweeps (the tuner, the benchmarks, the tests).
inline constexpr std::array<BlockScanAlgorithm, 5> kBlockScanAlgorithms = {
    BlockScanAlgorithm::Sklansky, BlockScanAlgorithm::Sklansky2, BlockScanAlgorithm::Sklansky3,
    BlockScanAlgorithm::KoggeStone, BlockScanAlgorithm::ThreadSequential};

/// "sklansky", "sklansky2", "sklansky3", "koggeStone", "threadSequential"; and back (an Error
/// names the known ones).
std::string name(BlockScanAlgorithm a);
/// The algorithm name() calls s; an Error names the known ones.
BlockScanAlgorithm parseBlockScanAlgorithm(const std::string& s);
/// Elements each thread scans when the block has threads enough (sklansky2/3: two; the
/// thread-sequential scan: tile / threads; the others: one).
uint32_t elementsPerThread(BlockScanAlgorithm a);

namespace detail {
uint32_t log2Tile(BlockScanAlgorithm a, uint32_t n);  // checks the tile's length for `a`
}

/// blockScan(a, p, f, tile): the inclusive f-scan of the tile by algorithm a, as the block's
/// push array. The paper's variants need a power-of-two tile (sklansky2/3 at least 2 elements);
/// threadSequential a multiple of the block's threads (a multiple of 32).
template <class T, class Op>
SPush<Block, T> blockScan(BlockScanAlgorithm a, const Program<Block>& p, Op f,
                          const SPull<T>& tile) {
  const uint32_t log = detail::log2Tile(a, tile.len());
  switch (a) {
    case BlockScanAlgorithm::Sklansky: return sklansky(p, log, f, tile);
    case BlockScanAlgorithm::Sklansky2: return sklansky2(p, log, f, tile);
    case BlockScanAlgorithm::Sklansky3: return sklansky3(p, log, f, tile);
    case BlockScanAlgorithm::KoggeStone: return koggeStone(p, log, f, tile);
    case BlockScanAlgorithm::ThreadSequential: break;
  }
  const uint32_t threads = p.context().threadsPerBlock();
  if (tile.len() % threads != 0) {
    throw Error("blockScan(threadSequential) needs a tile that is a multiple of the block's " +
                detail::str(threads) + " threads; got " + detail::str(tile.len()));
  }
  return push<Block>(seqScanBlock(p, tile.len() / threads, f, tile));
}

/// blockScanOf(a, f): block scan a with operator f as a callable (p, tile) -> the block's push
/// array: what scanGrid (device/scan.hpp) and mapScan (device/tiled.hpp) take.
template <class Op>
auto blockScanOf(BlockScanAlgorithm a, Op f) {
  return [a, f](const Program<Block>& p, const auto& tile) { return blockScan(a, p, f, tile); };
}

/// blockExclusiveScan(a, p, f, identity, tile): the exclusive scan (identity first): the
/// inclusive scan of the tile shifted right by one.
template <class T, class Op>
SPush<Block, T> blockExclusiveScan(BlockScanAlgorithm a, const Program<Block>& p, Op f,
                                   const T& identity, const SPull<T>& tile) {
  return blockScan(a, p, f, shiftRight(identity, tile));
}

}  // namespace obsidian
