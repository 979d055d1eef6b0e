/// The block layer, loads and stores: how a block's tile of threads x items elements moves
/// between global memory and the threads that work on consecutive elements (the blocked
/// arrangement: thread t owns elements t * items .. t * items + items - 1, which a thread-
/// sequential scan or reduction wants). Reading those straight from global memory makes each
/// load instruction of a warp span 32 x items elements; the other arrangements read coalesced
/// (each instruction covers consecutive memory) and exchange through shared memory, as CUB's
/// BLOCK_LOAD_DIRECT / _TRANSPOSE / _WARP_TRANSPOSE / _VECTORIZE do. Built on the warp layer's
/// exchanges (obsidian/warp/exchange.hpp).
/// @file
#pragma once

#include <array>
#include <string>

#include "obsidian/vector_load.hpp"
#include "obsidian/warp/exchange.hpp"

namespace obsidian {

/// How blockLoad and blockStore move a tile between global memory and the blocked arrangement
/// (CUB's BlockLoadAlgorithm).
enum class BlockLoadAlgorithm {
  Direct,       ///< no exchange: each thread reads its own elements from global memory
  Striped,      ///< coalesced reads of the whole tile into shared memory; one block barrier
  WarpStriped,  ///< each warp reads its own slice coalesced (warp-local striping); needs a
                ///< block of whole warps (a multiple of 32 threads), as CUB's WARP_TRANSPOSE
  Vectorized,   ///< as Striped, with 16-byte loads of 4 elements (see vectors<4>)
};
/// Every BlockLoadAlgorithm, for sweeps (the tuner, the benchmarks, the tests).
inline constexpr std::array<BlockLoadAlgorithm, 4> kBlockLoadAlgorithms = {
    BlockLoadAlgorithm::Direct, BlockLoadAlgorithm::Striped, BlockLoadAlgorithm::WarpStriped,
    BlockLoadAlgorithm::Vectorized};
std::string name(BlockLoadAlgorithm a);  ///< "direct", "striped", "warpStriped", "vectorized"
/// The algorithm name() calls s; an Error names the known ones.
BlockLoadAlgorithm parseBlockLoadAlgorithm(const std::string& s);

namespace detail {
void checkBlockTile(const char* what, uint32_t items, uint32_t length, uint32_t threads);
// WarpStriped's rule: a block of whole warps (a partial last warp would read and write past
// its slice of the tile).
void checkWholeWarps(const char* what, uint32_t threads);

template <class X>
SPull<Exp<X>> vectorizedLoad(const Program<Block>& p, const SPull<Exp<X>>& tile) {
  if constexpr (sizeof(X) > 4) {
    throw Error(
        "blockLoad(vectorized) needs elements of at most 4 bytes (vectors of 4 in 16 "
        "bytes); got " +
        str(static_cast<uint32_t>(sizeof(X))) + "-byte elements");
  } else {
    const auto vecs = vectors<4>(tile);
    const uint32_t count = vecs.len();
    return force(p, mkPush<Block, Exp<X>>(tile.len(), [vecs, count](const Program<Block>& q,
                                                                    const Writer<Exp<X>>& w) {
                   q.forAll(count, [&](const Program<Thread>& t, const EWord32& v) {
                     const Vector<4, X> x = vecs[v];
                     w(t, hana::at_c<0>(x), v * 4u);
                     w(t, hana::at_c<1>(x), v * 4u + 1u);
                     w(t, hana::at_c<2>(x), v * 4u + 2u);
                     w(t, hana::at_c<3>(x), v * 4u + 3u);
                   });
                 }));
  }
}
}  // namespace detail

/// blockLoad(a, p, items, tile): the tile (threads x items elements), arranged for the blocked
/// arrangement by algorithm a: the result is a pull array of the same elements that each
/// thread may read at its own items consecutive indices cheaply (shared memory for all but
/// Direct, which returns the tile itself). Vectorized needs a tile that reads a global array
/// directly, starting at a multiple of 4 elements, of scalars of at most 4 bytes (vectors<4>'s
/// rules), and items a multiple of 4; WarpStriped a block of whole warps (a multiple of 32
/// threads). The others take any element type (tuples too).
/// Cost: Direct none; the others threads x items elements of shared memory and one block
/// barrier.
template <class T>
SPull<T> blockLoad(BlockLoadAlgorithm a, const Program<Block>& p, uint32_t items,
                   const SPull<T>& tile) {
  const uint32_t threads = p.context().threadsPerBlock();
  detail::checkBlockTile("blockLoad", items, tile.len(), threads);
  switch (a) {
    case BlockLoadAlgorithm::Direct: return tile;
    case BlockLoadAlgorithm::Striped: return force(p, load<Block>(items, tile));
    case BlockLoadAlgorithm::WarpStriped:
      detail::checkWholeWarps("blockLoad(warpStriped)", threads);
      // Warp w reads its own slice (32 x items elements) striped over its lanes. The block
      // barrier of the force is still needed: the result is read at block level. (Inside a warp
      // program, warpLoadStriped needs only __syncwarp.)
      return force(
          p,
          mkPush<Block, T>(tile.len(), [tile, items](const Program<Block>& q, const Writer<T>& w) {
            q.forAll(tile.len() / items, [&](const Program<Thread>& t, const EWord32& tid) {
              const EWord32 base = (tid / 32u) * (32u * items) + tid % 32u;
              for (uint32_t k = 0; k < items; ++k) w(t, tile[base + k * 32u], base + k * 32u);
            });
          }));
    case BlockLoadAlgorithm::Vectorized: break;
  }
  if (items % 4 != 0) {
    throw Error(
        "blockLoad(vectorized) needs items per thread a multiple of 4 (16-byte "
        "vectors of 4 elements); got " +
        detail::str(items));
  }
  if constexpr (!isExp<T>) {
    throw Error("blockLoad(vectorized) needs scalar elements (an Exp), not tuples");
  } else {
    return detail::vectorizedLoad(p, tile);
  }
}

/// blockStore(a, p, items, arr): the reverse: thread t computes arr's elements
/// t * items .. t * items + items - 1 (blocked), and the result is a push array that writes them in
/// the arrangement of a: Direct writes them where they were computed (no shared memory); Striped
/// and WarpStriped go through shared memory so that each write instruction of a warp covers
/// consecutive indices (coalesced in global memory). Vectorized stores are not offered: a push
/// array writes element by element. Cost: as blockLoad.
template <class T>
SPush<Block, T> blockStore(BlockLoadAlgorithm a, const Program<Block>& p, uint32_t items,
                           const SPull<T>& arr) {
  const uint32_t threads = p.context().threadsPerBlock();
  detail::checkBlockTile("blockStore", items, arr.len(), threads);
  const auto blocked =
      tConcat<Block>(fmap([](const SPull<T>& c) { return push<Thread>(c); }, splitUp(items, arr)));
  switch (a) {
    case BlockLoadAlgorithm::Direct: return blocked;
    case BlockLoadAlgorithm::Striped: return push<Block>(force(p, blocked));
    case BlockLoadAlgorithm::WarpStriped: {
      detail::checkWholeWarps("blockStore(warpStriped)", threads);
      const uint32_t slice = 32 * items;
      return pConcat(fmap(
          [items](const SPull<T>& s) {
            return exec<Warp>(
                [items, s](const Program<Warp>& q) { return warpStoreStriped(q, items, s); });
          },
          splitUp(slice, arr)));
    }
    case BlockLoadAlgorithm::Vectorized: break;
  }
  throw Error("blockStore(vectorized): stores are written element by element; use striped");
}

}  // namespace obsidian
