// scanGrid: a scan of a whole array in one launch, with decoupled look-back (Merrill and
// Garland's single-pass scan, as CUB's DeviceScan), built from grid state, fences and atomics.
// Blocks take their tile from an atomic ticket, so a block only ever waits on tiles whose
// blocks have started; each publishes its tile's aggregate, looks back over its predecessors'
// flags (an aggregate lets it step further back, an inclusive prefix ends the walk), then
// publishes its own inclusive prefix. Any block-level scan written with the library does the
// tile's own scan.
#pragma once

#include "obsidian/atomic.hpp"
#include "obsidian/library.hpp"

namespace obsidian {

enum class ScanKind : uint8_t { Inclusive, Exclusive };

struct ScanShape {
  uint32_t tile = 4096;  // elements per tile (one virtual block each)
  // Tiles the status arrays have room for (grid state: 2 flags' worth of memory per tile);
  // longer inputs are refused at launch. 2^20 tiles of 4096 cover every 32-bit length.
  uint32_t maxTiles = uint32_t{1} << 20;
};

// scanGrid<X>(f, blockScan, in, shape, kind, identity): the inclusive (or exclusive, identity
// first) f-scan of `in` as a Push<Grid>, in one launch, for any length. f must be associative.
// blockScan(p, tile) is a block-level inclusive scan of a tile (an SPush<Block>, e.g. the
// paper's sklansky3 or koggeStone); elements past the end of the input read as the last one
// (they change no prefix that is written).
//
// Status: per tile, a flag (the launch's epoch * 4 + 1 for "aggregate", + 2 for "inclusive
// prefix"; anything else is "not yet") and the two values, in grid state. The epoch, kept in
// grid state too, is read by every block before it takes its ticket and advanced by the block
// that draws the last ticket when it is done, so flags never need clearing between launches
// (they would only be confused after 2^30 launches).
template <class X, class Op, class BlockScan>
DPush<Grid, Exp<X>> scanGrid(Op f, BlockScan blockScan, const DPull<Exp<X>>& in, ScanShape shape,
                             ScanKind kind = ScanKind::Inclusive, X identity = X{}) {
  if (shape.tile == 0) throw Error("scanGrid needs a tile of at least one element; got 0");
  const EWord32 n = len(in);
  const uint32_t tileLen = shape.tile;
  // ceil(n / tile) without overflow near 2^32
  const EWord32 tiles = n / tileLen + cast<uint32_t>(n % tileLen != 0u);
  detail::requireLength(tiles <= shape.maxTiles,
                        "scanGrid has status for " + std::to_string(shape.maxTiles) +
                            " tiles of " + std::to_string(tileLen) + " elements");
  return DPush<Grid, Exp<X>>(n, [=](const Program<Grid>& g, const Writer<Exp<X>>& out) {
    g.distrPar(tiles, [&](const Program<Block>& p, const EWord32&) {
      const SMutable<uint32_t> ticket = newGlobal<uint32_t>(p, 1);
      const SMutable<uint32_t> epochs = newGlobal<uint32_t>(p, 1);
      const SMutable<uint32_t> flags = newGlobal<uint32_t>(p, shape.maxTiles);
      const SMutable<X> aggregates = newGlobal<X>(p, shape.maxTiles);
      const SMutable<X> inclusives = newGlobal<X>(p, shape.maxTiles);

      // The tile: a ticket, and the epoch read before it (see above).
      auto drawn = force(p, mkPush<Block, EWord32>(2u, [=](const Program<Block>& q,
                                                            const Writer<EWord32>& w) {
        q.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
          const EWord32 epoch = t.declare(epochs[0u]);
          threadFence(t);
          w(t, atomicInc(t, ticket, 0u, tiles - 1u), 0u);  // wraps to 0 for the next launch
          w(t, epoch, 1u);
        });
      }));
      const EWord32 tile = drawn[0u], epoch = drawn[1u];
      const EWord32 start = tile * tileLen;
      const SPull<Exp<X>> elems = mkPull(tileLen, [in, n, start](const EWord32& j) {
        return in[min(start + j, n - 1u)];
      });
      const SPull<Exp<X>> local = force(p, blockScan(p, elems));
      const Exp<X> aggregate = local[tileLen - 1];
      const EWord32 aggregateFlag = epoch * 4u + 1u, prefixFlag = epoch * 4u + 2u;

      // Thread 0 publishes, looks back, publishes again; the tile's exclusive prefix comes out.
      auto prefix = force(p, mkPush<Block, Exp<X>>(1u, [=](const Program<Block>& q,
                                                          const Writer<Exp<X>>& w) {
        q.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
          t.cond(
              tile == 0u,
              [&](const Program<Thread>& u) {
                write(u, inclusives, 0u, aggregate);
                threadFence(u);
                atomicExch(u, flags, 0u, prefixFlag);
                w(u, Exp<X>(identity), 0u);
              },
              [&](const Program<Thread>& u) {
                write(u, aggregates, tile, aggregate);
                threadFence(u);
                atomicExch(u, flags, tile, aggregateFlag);
                // Waits until tile k has published something in this launch; its flag.
                const auto await = [&](const Program<Thread>& v, const EWord32& k) {
                  const EWord32 flag = v.declare(atomicOr(v, flags, k, 0u));
                  v.seqWhile(flag >> 2u != epoch || (flag & 3u) == 0u,
                             [&](const Program<Thread>& s) {
                               s.assign(flag, atomicOr(s, flags, k, 0u));
                             });
                  threadFence(v);  // what the flag published is visible from here on
                  return flag;
                };
                const auto valueOf = [&](const EWord32& k, const EWord32& flag) {
                  return ifThenElse(flag == prefixFlag, inclusives[k], aggregates[k]);
                };
                const EWord32 k = u.declare(tile - 1u);
                const EWord32 first = await(u, k);
                const Exp<X> acc = u.declare(valueOf(k, first));
                const Exp<bool> done = u.declare(first == prefixFlag);
                u.seqWhile(!done, [&](const Program<Thread>& v) {
                  v.assign(k, k - 1u);
                  const EWord32 flag = await(v, k);
                  v.assign(acc, f(valueOf(k, flag), acc));
                  v.assign(done, flag == prefixFlag);
                });
                write(u, inclusives, tile, f(acc, aggregate));
                threadFence(u);
                atomicExch(u, flags, tile, prefixFlag);
                w(u, acc, 0u);
              });
          // The block of the last ticket has seen every ticket drawn: the next launch may
          // begin a new epoch.
          t.cond(tile == tiles - 1u,
                 [&](const Program<Thread>& u) { write(u, epochs, 0u, epoch + 1u); });
        });
      }));
      const Exp<X> before = prefix[0u];  // identity for tile 0 (unused by inclusive scans)

      p.forAll(tileLen, [&](const Program<Thread>& t, const EWord32& j) {
        const EWord32 i = start + j;
        t.cond(i < n, [&](const Program<Thread>& u) {
          if (kind == ScanKind::Inclusive) {
            out(u, ifThenElse(tile == 0u, local[j], f(before, local[j])), i);
          } else {
            const Exp<X> prev = local[ifThenElse(j == 0u, EWord32(0u), j - 1u)];
            out(u, ifThenElse(j == 0u, before, ifThenElse(tile == 0u, prev, f(before, prev))), i);
          }
        });
      });
    });
  });
}

}  // namespace obsidian
