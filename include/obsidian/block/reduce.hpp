/// The block layer, reductions: a block folds a tile of values. The paper's variants (Section
/// 5.2: red1..red7, each a line-for-line transcription) and the warp-shuffle reduction built on
/// the warp layer, named by BlockReduceAlgorithm as CUB names its BlockReduceAlgorithms, so the
/// tuner and benchmarks sweep them from here. Each runs inside any block program: a user's own
/// kernel, or the device layer's (obsidian/device/reduce.hpp).
/// @file
#pragma once

#include <array>
#include <string>

#include "obsidian/thread_array.hpp"
#include "obsidian/vector_load.hpp"
#include "obsidian/warp/reduce.hpp"

namespace obsidian {

namespace detail {
// `what` needs a power-of-two length (halving steps would drop the odd element otherwise).
inline void checkPowerOfTwo(const char* what, uint32_t n) {
  if (n == 0 || (n & (n - 1)) != 0) {
    throw Error(std::string(what) + " needs a power-of-two length; got " + str(n));
  }
}
}  // namespace detail

// ---------------------------------------------------------------- the paper's variants
/// red1: combine adjacent elements (evenOdds) until one is left. Cost: log2(len) barriers,
/// len / 2 elements of shared memory (the stages reuse it).
template <class T, class Op>
T red1(const Program<Block>& p, Op f, SPull<T> arr) {
  detail::checkPowerOfTwo("red1", arr.len());
  while (len(arr) > 1) {
    auto [a1, a2] = evenOdds(arr);
    arr = forcePull(p, zipWith(f, a1, a2));
  }
  return arr[0u];
}

/// red2: combine the two halves (coalesced; needs a commutative operator).
template <class T, class Op>
T red2(const Program<Block>& p, Op f, SPull<T> arr) {
  detail::checkPowerOfTwo("red2", arr.len());
  while (len(arr) > 1) {
    auto [a1, a2] = halve(arr);
    arr = forcePull(p, zipWith(f, a1, a2));
  }
  return arr[0u];
}

/// red3: as red2, but the last `cutoff` elements are folded without a force.
template <class T, class Op>
T red3(const Program<Block>& p, uint32_t cutoff, Op f, SPull<T> arr) {
  detail::checkPowerOfTwo("red3", arr.len());
  while (len(arr) > cutoff) {
    auto [a1, a2] = halve(arr);
    arr = forcePull(p, zipWith(f, a1, a2));
  }
  return foldPull1(f, arr);
}

/// red5': each thread first folds n elements strided by len / n (coalesce: consecutive threads
/// read consecutive elements), then red3; red5, red6 and red7 are n = 8, 16 and 32.
template <class T, class Op>
T red5p(const Program<Block>& p, uint32_t n, Op f, const SPull<T>& arr) {
  if (n == 0 || arr.len() % n != 0 || ((arr.len() / n) & (arr.len() / n - 1)) != 0) {
    throw Error("red5'(" + detail::str(n) + ") needs a tile of " + detail::str(n) +
                " x a power of two elements; got " + detail::str(arr.len()));
  }
  auto arr2 = force(p, tConcat<Block>(fmap([f](const SPull<T>& c) { return seqReduce(f, c); },
                                           coalesce(n, arr))));
  return red3(p, 2, f, arr2);
}

/// red4: each thread first reduces 8 consecutive elements (splitUp), then red3. Consecutive
/// threads read far-apart elements: uncoalesced (the paper's Figure 5, left).
template <class T, class Op>
T red4(const Program<Block>& p, Op f, const SPull<T>& arr) {
  if (arr.len() % 8 != 0 || ((arr.len() / 8) & (arr.len() / 8 - 1)) != 0) {
    throw Error("red4 needs a tile of 8 x a power of two elements; got " + detail::str(arr.len()));
  }
  auto arr2 = force(
      p, tConcat<Block>(fmap([f](const SPull<T>& c) { return seqReduce(f, c); }, splitUp(8, arr))));
  return red3(p, 2, f, arr2);
}
/// red5: red5' with n = 8.
template <class T, class Op>
T red5(const Program<Block>& p, Op f, const SPull<T>& arr) {
  return red5p(p, 8, f, arr);
}
/// red6: red5' with n = 16.
template <class T, class Op>
T red6(const Program<Block>& p, Op f, const SPull<T>& arr) {
  return red5p(p, 16, f, arr);
}
/// red7: red5' with n = 32.
template <class T, class Op>
T red7(const Program<Block>& p, Op f, const SPull<T>& arr) {
  return red5p(p, 32, f, arr);
}

// ---------------------------------------------------------------- on the warp layer
/// blockReduce(p, f, arr): the f-fold of arr, one element per thread of the block (a multiple of
/// 32 of at most 1024): each warp folds its 32 elements with warpReduce, the warps' results go
/// through shared memory (one barrier), and the first warp folds them. f must be associative and
/// commutative. Cost: one barrier (two with more than one warp), one element of shared memory per
/// warp.
template <class T, class Op>
T blockReduce(const Program<Block>& p, Op f, const SPull<T>& arr) {
  const uint32_t n = arr.len();
  if (n == 0 || n % 32 != 0 || n > 1024 || ((n / 32) & (n / 32 - 1)) != 0) {
    throw Error(
        "blockReduce needs 32, 64, 128, 256, 512 or 1024 elements (a power-of-two "
        "number of warps); got " +
        detail::str(n));
  }
  auto warpResults = force(p, pConcat(fmap(
                                  [f](const SPull<T>& w) {
                                    return singletonPush<Warp>([f, w](const Program<Warp>& q) {
                                      return warpReduce(q, f, w);
                                    });
                                  },
                                  splitUp(32, arr))));
  if (n == 32) return warpResults[0u];
  auto total = force(p, pConcat(fmap(
                            [f, warpResults](const EWord32&) {
                              return singletonPush<Warp>([f, warpResults](const Program<Warp>& q) {
                                return warpReduce(q, f, warpResults);
                              });
                            },
                            mkPull(1u, [](const EWord32& i) { return i; }))));
  return total[0u];
}

/// blockReduce(p, f, items): the f-fold of every item of every thread of the block, for a thread
/// array (threadArray): each thread folds its own items in registers, then the block folds one
/// value per thread as above, with no staging of the values in shared memory first (which
/// would cost a barrier). The block's threads must be a power-of-two multiple of 32 of at most
/// 1024. f must be associative and commutative (which thread's value lands in which lane is the
/// hardware's mapping). Cost: as blockReduce of one element per thread.
template <KernelScalar X, class Op>
Exp<X> blockReduce(const Program<Block>& p, Op f, const ThreadArray<X>& items) {
  const uint32_t threads = p.context().threadsPerBlock();
  if (threads % 32 != 0 || ((threads / 32) & (threads / 32 - 1)) != 0 || threads > 1024) {
    throw Error(
        "blockReduce of a thread array needs a block of 32, 64, 128, 256, 512 or 1024 threads; "
        "got " +
        detail::str(threads));
  }
  // Element i is the fold of the items of the thread that evaluates it: blockReduce has each
  // thread of the block evaluate exactly one element (lane l of warp w: thread 32 w + l).
  return blockReduce(p, f, mkPull(threads, [f, items](const EWord32&) { return items.fold(f); }));
}

/// The f-fold of the four lanes of a vector, as a balanced tree.
template <class X, class Op>
Exp<X> foldVector(Op f, const Vector<4, X>& v) {
  return f(f(hana::at_c<0>(v), hana::at_c<1>(v)), f(hana::at_c<2>(v), hana::at_c<3>(v)));
}

/// redVec(p, seq, f, arr): red7's shape with 16-byte loads: each thread folds `seq` coalesced
/// vectors of 4 elements (arr has threads x seq x 4 elements and reads a global array directly,
/// starting at a multiple of 4: see vectors<4>), then blockReduce combines the threads' results.
/// Cost: as blockReduce, plus one element of shared memory per thread.
template <class X, class Op>
Exp<X> redVec(const Program<Block>& p, uint32_t seq, Op f, const SPull<Exp<X>>& arr) {
  auto perThread = fmap(
      [f](const SPull<Vector<4, X>>& c) {
        return seqReduce(f, fmap([f](const Vector<4, X>& v) { return foldVector<X>(f, v); }, c));
      },
      coalesce(seq, vectors<4>(arr)));
  return blockReduce(p, f, force(p, tConcat<Block>(perThread)));
}

// ---------------------------------------------------------------- the variants by name
/// The block reductions by name (as CUB's BlockReduceAlgorithm), for the device reductions, the
/// tuner and the benchmarks.
enum class BlockReduceAlgorithm {
  Red1,        ///< red1
  Red2,        ///< red2
  Red3,        ///< red3 (cutoff 2)
  Red4,        ///< red4
  Red5,        ///< red5
  Red6,        ///< red6
  Red7,        ///< red7
  WarpShuffle  ///< blockReduce on the warp layer (warp shuffles)
};
/// Every BlockReduceAlgorithm, for sweeps (the tuner, the benchmarks, the tests).
inline constexpr std::array<BlockReduceAlgorithm, 8> kBlockReduceAlgorithms = {
    BlockReduceAlgorithm::Red1, BlockReduceAlgorithm::Red2,       BlockReduceAlgorithm::Red3,
    BlockReduceAlgorithm::Red4, BlockReduceAlgorithm::Red5,       BlockReduceAlgorithm::Red6,
    BlockReduceAlgorithm::Red7, BlockReduceAlgorithm::WarpShuffle};

/// "red1" .. "red7", "warpShuffle"; and back (an Error names the known ones).
std::string name(BlockReduceAlgorithm a);
/// The algorithm name() calls s; an Error names the known ones.
BlockReduceAlgorithm parseBlockReduceAlgorithm(const std::string& s);

/// blockReduce(a, p, f, tile): the f-fold of the tile by algorithm a. The paper's variants need
/// a power-of-two tile (red4..red7: tile / 8, 16 or 32 a power of two); warpShuffle has each
/// thread fold the tile's elements strided by the block size (coalesced), then blockReduce, and
/// needs a tile that is a multiple of the block's threads (a power-of-two number of warps).
template <class T, class Op>
T blockReduce(BlockReduceAlgorithm a, const Program<Block>& p, Op f, const SPull<T>& tile) {
  switch (a) {
    case BlockReduceAlgorithm::Red1: return red1(p, f, tile);
    case BlockReduceAlgorithm::Red2: return red2(p, f, tile);
    case BlockReduceAlgorithm::Red3: return red3(p, 2, f, tile);
    case BlockReduceAlgorithm::Red4: return red4(p, f, tile);
    case BlockReduceAlgorithm::Red5: return red5(p, f, tile);
    case BlockReduceAlgorithm::Red6: return red6(p, f, tile);
    case BlockReduceAlgorithm::Red7: return red7(p, f, tile);
    case BlockReduceAlgorithm::WarpShuffle: break;
  }
  const uint32_t threads = p.context().threadsPerBlock();
  if (tile.len() % threads != 0) {
    throw Error("blockReduce(warpShuffle) needs a tile that is a multiple of the block's " +
                detail::str(threads) + " threads; got " + detail::str(tile.len()));
  }
  const uint32_t perThread = tile.len() / threads;
  return blockReduce(
      p, f,
      force(p, tConcat<Block>(fmap([f](const SPull<T>& c) { return seqReduce(f, c); },
                                   coalesce(perThread, tile)))));
}

}  // namespace obsidian
