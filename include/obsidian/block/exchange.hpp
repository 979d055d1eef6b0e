/// The block layer, exchanges of thread arrays (CUB's BlockExchange): a tile of threads x items
/// elements held in the threads' registers in one arrangement, rearranged into another through
/// shared memory (one barrier, the tile's elements of shared memory). Blocked suits a thread's
/// sequential work (its scan, its run heads); striped and warp-striped suit coalesced global
/// accesses (consecutive threads at consecutive elements).
/// @file
#pragma once

#include <string>

#include "obsidian/force.hpp"
#include "obsidian/thread_array.hpp"

namespace obsidian {

/// Which elements of a tile of threads x items thread tid holds as its item k.
enum class Arrangement : uint8_t {
  Blocked,      ///< tid * items + k: each thread's elements are consecutive
  Striped,      ///< k * threads + tid: each item k of the block's threads is consecutive
  WarpStriped,  ///< warp w, lane l: w * 32 * items + k * 32 + l (striped within each warp)
};

/// The tile element that thread tid holds as item k in arrangement a (threads x items).
inline EWord32 tileIndex(Arrangement a, const EWord32& tid, uint32_t k, uint32_t items,
                         uint32_t threads) {
  switch (a) {
    case Arrangement::Blocked: return tid * items + k;
    case Arrangement::Striped: return tid + k * threads;
    case Arrangement::WarpStriped: break;
  }
  return (tid / 32u) * (32u * items) + k * 32u + tid % 32u;
}

/// blockExchange(p, items, from, to): the same tile with each thread holding the elements that
/// arrangement `to` gives it, where `items` holds them as `from` gives. WarpStriped needs a
/// block of whole warps. Cost: threads x items elements of shared memory, one barrier.
template <KernelScalar X>
ThreadArray<X> blockExchange(const Program<Block>& p, const ThreadArray<X>& items, Arrangement from,
                             Arrangement to) {
  const uint32_t threads = p.context().threadsPerBlock(), n = items.len();
  if ((from == Arrangement::WarpStriped || to == Arrangement::WarpStriped) && threads % 32 != 0) {
    throw Error(
        "blockExchange(warpStriped) needs a block of whole warps (a multiple of 32 "
        "threads); got " +
        std::to_string(threads));
  }
  const SPull<Exp<X>> tile = force(
      p, mkPush<Block, Exp<X>>(threads * n, [=](const Program<Block>& q, const Writer<Exp<X>>& w) {
        q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
          for (uint32_t k = 0; k < n; ++k) w(t, items[k], tileIndex(from, tid, k, n, threads));
        });
      }));
  const ThreadArray<X> out = threadArray<X>(p, n);
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    for (uint32_t k = 0; k < n; ++k) out.write(t, k, tile[tileIndex(to, tid, k, n, threads)]);
  });
  return out;
}

}  // namespace obsidian
