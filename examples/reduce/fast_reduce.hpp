// The reductions that race CUB (bench/reduce), written with the library like red1..red7:
//  - redVec: red7 with 16-byte loads (vectors<4>), for the paper's mapRed shape (one block per
//    chunk: a batched, segmented reduction);
//  - reduceAll: a whole array to one value in one launch: an occupancy-sized grid of blocks
//    sweeps the array with 16-byte loads, each block publishes its partial result in grid
//    state (newGlobal), and the last block to take a ticket (atomicInc) folds them.
#pragma once

#include "reduce.hpp"

namespace paper {

// The f-fold of the four lanes of a vector, as a balanced tree.
template <class X, class Op>
Exp<X> foldVector(Op f, const Vector<4, X>& v) {
  return f(f(hana::at_c<0>(v), hana::at_c<1>(v)), f(hana::at_c<2>(v), hana::at_c<3>(v)));
}

// redVec: each thread folds `seq` coalesced 16-byte vectors of the chunk, then blockReduce
// combines the threads' results (warp shuffles, one barrier). The chunk must start at a multiple of
// 4 elements of the input.
template <class X, class Op>
Exp<X> redVec(const Program<Block>& p, uint32_t seq, Op f, const SPull<Exp<X>>& arr) {
  auto perThread = fmap(
      [f](const SPull<Vector<4, X>>& c) {
        return seqReduce(f, fmap([f](const Vector<4, X>& v) { return foldVector<X>(f, v); }, c));
      },
      coalesce(seq, vectors<4>(arr)));
  return blockReduce(p, f, force(p, tConcat<Block>(perThread)));
}

// One partial result per `chunk` elements (a multiple of 4 * threads), with redVec.
template <class X, class Op>
Kernel segmentedReduceKernel(Op f, uint32_t chunk = 4096, uint32_t threads = 256) {
  if (chunk % (4 * threads) != 0) {
    throw Error("segmentedReduceKernel: the chunk (" + std::to_string(chunk) +
                ") must be a multiple of 4 x threads (" + std::to_string(4 * threads) + ")");
  }
  const uint32_t seq = chunk / 4 / threads;
  return capture("redVec", threads, [f, chunk, seq](DPull<Exp<X>> in) {
    return mapRed<Exp<X>>(
        chunk,
        [f, seq](const Program<Block>& p, const SPull<Exp<X>>& c) {
          return redVec<X>(p, seq, f, c);
        },
        in);
  });
}

// The first n elements of a static-length array, as a dynamic-length one.
template <class T>
DPull<T> takeActive(const SPull<T>& arr, const EWord32& n) {
  return DPull<T>(n, [arr](const EWord32& i) { return arr[i]; });
}

// How reduceAll spreads its work.
struct ReduceAllShape {
  uint32_t blocks = 1;  // the most blocks: what the device holds at once (gpu::occupancyBlocks)
  uint32_t unroll = 4;  // 16-byte vectors in flight per thread
  // Fewer blocks for short inputs, so that each thread folds at least this many vectors (fewer
  // partial results to publish and fold); 0 always runs `blocks`.
  uint32_t minVectorsPerThread = 4;
  // Tiles of unroll x threads consecutive vectors, dealt to the blocks in turn (each block
  // reads contiguous memory), instead of a grid-strided sweep (each round of the grid spans
  // it all).
  bool tiles = true;
};

// The f-fold of every element of `in` (identity for none) as a one-element Push<Grid>, in one
// launch. Up to shape.blocks blocks each fold a share of 16-byte vectors (see ReduceAllShape); the
// last len % 4 elements are folded by the first threads. f must be associative and commutative,
// with identity `identity`.
template <class X, class Op>
Push<Grid, uint32_t, Exp<X>> reduceAll(Op f, X identity, const DPull<Exp<X>>& in,
                                       ReduceAllShape shape) {
  if (shape.blocks == 0) throw Error("reduceAll needs at least one block; got 0");
  return Push<Grid, uint32_t, Exp<X>>(1, [=](const Program<Grid>& g, const Writer<Exp<X>>& out) {
    const uint32_t threads = g.context().threadsPerBlock();
    const auto vecs = vectors<4>(in);
    // Blocks that run: all of them, or fewer for a short input (at least one).
    const EWord32 active =
        shape.minVectorsPerThread == 0
            ? EWord32(shape.blocks)
            : min(EWord32(shape.blocks), len(vecs) / (threads * shape.minVectorsPerThread) + 1u);
    g.distrPar(active, [&](const Program<Block>& p, const EWord32& bid) {
      const EWord32 tailStart = len(vecs) * 4u;
      const EWord32 tail = len(in) - tailStart;
      const auto foldIn = [f](const Exp<X>& acc, const Vector<4, X>& v) {
        return f(acc, foldVector<X>(f, v));
      };
      const auto vector = [f, vecs](const EWord32& j) { return foldVector<X>(f, vecs[j]); };
      // This thread's share of 16-byte vectors, folded; then one of the len % 4 tail elements.
      const auto share = [=](const Program<Thread>& t, const EWord32& tid,
                             const Writer<Exp<X>>& w) {
        const EWord32 gid = bid * threads + tid;
        const auto withTail = [&](const Program<Thread>& u, const Exp<X>& acc, const EWord32&) {
          w(u, ifThenElse(gid < tail, f(acc, in[tailStart + gid]), acc), tid);
        };
        if (!shape.tiles) {  // vectors gid, gid + active * threads, ...
          seqFoldStrided(foldIn, Exp<X>(identity), vecs, gid, active * threads, shape.unroll)(
              t, withTail);
          return;
        }
        // Tiles of unroll x threads vectors, tile k to block k % active: a block reads
        // contiguous memory (kinder to DRAM pages), `unroll` coalesced vectors per thread.
        const uint32_t tile = threads * shape.unroll;
        const EWord32 fullTiles = len(vecs) / tile;
        const auto inTile = [=](const EWord32& k) {
          Exp<X> acc = vector(k * tile + tid);
          for (uint32_t u = 1; u < shape.unroll; ++u)
            acc = f(acc, vector(k * tile + u * threads + tid));
          return acc;
        };
        seqFoldStrided(f, Exp<X>(identity), mkPull(fullTiles, inTile), bid, active)(
            t, [&](const Program<Thread>& u, const Exp<X>& acc, const EWord32& i) {
              // The last, partial tile belongs to block fullTiles % active.
              Exp<X> rest = acc;
              for (uint32_t r = 0; r < shape.unroll; ++r) {
                const EWord32 j = fullTiles * tile + r * threads + tid;
                rest = f(rest, ifThenElse(j < len(vecs) && bid == fullTiles % active, vector(j),
                                          Exp<X>(identity)));
              }
              withTail(u, rest, i);
            });
      };
      auto perThread = force(
          p, mkPush<Block, Exp<X>>(threads, [=](const Program<Block>& q, const Writer<Exp<X>>& w) {
            q.forAll(threads,
                     [&](const Program<Thread>& t, const EWord32& tid) { share(t, tid, w); });
          }));
      const Exp<X> blockResult = blockReduce(p, f, perThread);

      // Publish the block's result, then take a ticket: the last block sees every result.
      const SMutable<X> results = newGlobal<X>(p, shape.blocks);
      const SMutable<uint32_t> ticket = newGlobal<uint32_t>(p, 1);
      auto isLast = force(
          p, mkPush<Block, EWord32>(1u, [=](const Program<Block>& q, const Writer<EWord32>& w) {
            q.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
              write(t, results, bid, blockResult);
              threadFence(t);
              // Wraps to 0 after the last block: the ticket is ready for the next launch.
              const EWord32 old = atomicInc(t, ticket, 0u, active - 1u);
              threadFence(t);
              w(t, cast<uint32_t>(old == active - 1u), 0u);
            });
          }));
      p.cond(isLast[0u] != 0u, [&](const Program<Block>& q) {
        auto folded = force(
            q,
            mkPush<Block, Exp<X>>(threads, [=](const Program<Block>& r, const Writer<Exp<X>>& w) {
              r.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                seqFoldStrided(f, Exp<X>(identity), takeActive(results.pull(), active), tid,
                               EWord32(threads))(t, [&](const Program<Thread>& u, const Exp<X>& acc,
                                                        const EWord32&) { w(u, acc, tid); });
              });
            }));
        const Exp<X> total = blockReduce(q, f, folded);
        q.forAll(1u, [&](const Program<Thread>& t, const EWord32&) { out(t, total, 0u); });
      });
    });
  });
}

template <class X, class Op>
Kernel reduceAllKernel(Op f, X identity, ReduceAllShape shape, uint32_t threads = 256) {
  return capture("reduceAll", threads,
                 [=](DPull<Exp<X>> in) { return reduceAll<X>(f, identity, in, shape); });
}

}  // namespace paper
