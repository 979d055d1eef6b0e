/// The device layer, scans: a scan of a whole array in one launch (scanGrid: decoupled
/// look-back, Merrill and Garland's single-pass scan, as CUB's DeviceScan), built from grid
/// state, fences and atomics on the block layer's scans (block/scan.hpp) and the warp scan.
/// Blocks take their tile from an atomic ticket, so a block only ever waits on tiles whose
/// blocks have started; each publishes its tile's aggregate, looks back over its predecessors'
/// flags (an aggregate lets it step further back, an inclusive prefix ends the walk), then
/// publishes its own inclusive prefix. Any block-level scan written with the library does the
/// tile's own scan.
/// @file
#pragma once

#include <optional>

#include "obsidian/atomic.hpp"
#include "obsidian/block/scan.hpp"
#include "obsidian/capture.hpp"
#include "obsidian/device/algorithm.hpp"
#include "obsidian/device/dispatch.hpp"
#include "obsidian/operators.hpp"

namespace obsidian {

/// Which prefixes a scan writes.
enum class ScanKind : uint8_t {
  Inclusive,  ///< out[i] = in[0] f ... f in[i]
  Exclusive   ///< out[0] = identity, out[i] = in[0] f ... f in[i-1]
};

/// scanGrid's tiles and look-back: what a ScanPolicy sets of them (scanAll), or a caller of
/// scanGrid with a block scan of its own.
struct ScanShape {
  uint32_t tile = 4096;  ///< elements per tile (one virtual block each)
  /// Tiles the status arrays have room for (grid state: 8 bytes per tile for values of at most
  /// 32 bits; 16 for 64-bit values split, 20 fenced);
  /// longer inputs are refused at launch. 2^20 tiles of 4096 cover every 32-bit length.
  uint32_t maxTiles = uint32_t{1} << 20;
  /// The look-back's back-off: a lane whose predecessor has published nothing yet sleeps this
  /// long (nanosleep) before it polls again (0: it polls at once), leaving issue slots and L2
  /// bandwidth to the tiles still loading.
  uint32_t delayNs = 0;
  /// 64-bit values: their status in two packed words, with no fences (TileStatus).
  bool splitWide = false;
};

namespace detail {
// The look-back's status of every tile, in grid state: a flag (the launch's epoch * 4 + 1 for
// "aggregate", + 2 for "inclusive prefix"; anything else is "not yet") and a value.
//
// A value of at most 32 bits is packed with its flag into one 64-bit word, (value bits << 32) |
// flag, written with one atomicExch and polled with one 64-bit atomic load: a reader that sees
// the flag sees the value it was written with, so neither side needs a fence. A 64-bit value
// (u64, f64) is either split (ScanShape::splitWide): each 32-bit half packed with the flag in a
// word of its own (two adjacent words), the reader taking the value only when both words carry
// the same flag of this epoch (each word was written once with that flag, so the halves belong
// together), with no fence on either side; or fenced: a flag word and two value arrays
// (aggregates, inclusive prefixes), the value written, then a fence, then the flag's
// atomicExch, a reader polling the flag, fencing, then reading the value.
// A look-back status word's flag: the launch's epoch * 4, + 1 for "aggregate" or + 2 for
// "inclusive prefix"; anything else (another epoch, or zero: never written) is "not yet".
inline EWord32 statusFlag(const EWord32& epoch, bool inclusive) {
  return epoch * 4u + (inclusive ? 2u : 1u);
}
// A packed status word: 32 bits of value above the flag, written and read by one 64-bit access.
inline EWord64 packStatus(const EWord32& value, const EWord32& flag) {
  return (cast<uint64_t>(value) << EWord64(32)) | cast<uint64_t>(flag);
}
// Whether a word with this flag has nothing of this epoch yet.
inline Exp<bool> statusPending(const EWord32& flag, const EWord32& epoch) {
  return flag >> 2u != epoch || (flag & 3u) == 0u;
}

template <class X>
class TileStatus {
 public:
  static constexpr bool kPacked = sizeof(X) <= 4;

  TileStatus(const Program<Block>& p, uint32_t tiles, uint32_t delayNs, bool splitWide)
      : delayNs_(delayNs), split_(!kPacked && splitWide) {
    if constexpr (kPacked) {
      words_.emplace(newGlobal<uint64_t>(p, tiles));
    } else if (split_) {
      words_.emplace(newGlobal<uint64_t>(p, 2 * tiles));
    } else {
      flags_.emplace(newGlobal<uint32_t>(p, tiles));
      aggregates_.emplace(newGlobal<X>(p, tiles));
      inclusives_.emplace(newGlobal<X>(p, tiles));
    }
  }

  // Thread t publishes tile's aggregate, or (inclusive) its inclusive prefix, in this epoch.
  void publish(const Program<Thread>& t, const EWord32& tile, const EWord32& epoch,
               const Exp<X>& value, bool inclusive) const {
    const EWord32 flag = statusFlag(epoch, inclusive);
    const auto pack = [&](const EWord32& half) { return packStatus(half, flag); };
    if constexpr (kPacked) {
      atomicExch(t, *words_, tile, pack(bits32(value)));
    } else {
      if (split_) {
        const EWord64 bits = t.declare(bits64(value));
        atomicExch(t, *words_, 2u * tile, pack(cast<uint32_t>(bits)));
        atomicExch(t, *words_, 2u * tile + 1u, pack(cast<uint32_t>(bits >> EWord64(32))));
        return;
      }
      write(t, inclusive ? *inclusives_ : *aggregates_, tile, value);
      threadFence(t);
      atomicExch(t, *flags_, tile, flag);
    }
  }

  // Waits (spinning) until tile k has published something in this epoch; returns 1 for an
  // inclusive prefix (0 for an aggregate) and the value published with it.
  hana::tuple<EWord32, Exp<X>> await(const Program<Thread>& t, const EWord32& k,
                                     const EWord32& epoch) const {
    const auto pending = [&](const EWord32& flag) { return statusPending(flag, epoch); };
    if constexpr (kPacked) {
      const EWord64 word = t.declare(atomicLoad(t, *words_, k));
      t.seqWhile(pending(cast<uint32_t>(word)), [&](const Program<Thread>& s) {
        backOff(s);
        s.assign(word, atomicLoad(s, *words_, k));
      });
      return {cast<uint32_t>(cast<uint32_t>(word) == statusFlag(epoch, true)),
              fromBits32<X>(cast<uint32_t>(word >> EWord64(32)))};
    } else {
      if (split_) {
        const EWord64 low = t.declare(atomicLoad(t, *words_, 2u * k));
        const EWord64 high = t.declare(atomicLoad(t, *words_, 2u * k + 1u));
        const auto unsettled = [&] {
          return pending(cast<uint32_t>(low)) || cast<uint32_t>(low) != cast<uint32_t>(high);
        };
        t.seqWhile(unsettled(), [&](const Program<Thread>& s) {
          backOff(s);
          s.assign(low, atomicLoad(s, *words_, 2u * k));
          s.assign(high, atomicLoad(s, *words_, 2u * k + 1u));
        });
        const EWord64 bits = (high >> EWord64(32) << EWord64(32)) | (low >> EWord64(32));
        return {cast<uint32_t>(cast<uint32_t>(low) == statusFlag(epoch, true)), fromBits64(bits)};
      }
      const EWord32 flag = t.declare(atomicLoad(t, *flags_, k));
      t.seqWhile(pending(flag), [&](const Program<Thread>& s) {
        backOff(s);
        s.assign(flag, atomicLoad(s, *flags_, k));
      });
      threadFence(t);
      const Exp<bool> inclusive = flag == statusFlag(epoch, true);
      return {cast<uint32_t>(inclusive),
              ifThenElse(inclusive, (*inclusives_)[k], (*aggregates_)[k])};
    }
  }

 private:
  static EWord64 bits64(const Exp<X>& v) {
    if constexpr (std::is_same_v<X, uint64_t>) {
      return v;
    } else {
      return bitcast<uint64_t>(v);
    }
  }
  static Exp<X> fromBits64(const EWord64& w) {
    if constexpr (std::is_same_v<X, uint64_t>) {
      return w;
    } else {
      return bitcast<X>(w);
    }
  }
  void backOff(const Program<Thread>& t) const {
    if (delayNs_ > 0) nanosleep(t, delayNs_);
  }

  uint32_t delayNs_;
  bool split_;                               // 64-bit values in two packed words
  std::optional<SMutable<uint64_t>> words_;  // packed, or split
  std::optional<SMutable<uint32_t>> flags_;  // fenced wide values
  std::optional<SMutable<X>> aggregates_, inclusives_;
};

// The decoupled look-back of tile `tile` > 0 by one warp: `result` (a Warp-level variable)
// becomes the f-fold of every tile before it.
template <class X, class Op, class Later>
void lookBack(const Program<Warp>& r, Op f, Later later, const Exp<X>& result, const EWord32& tile,
              const EWord32& epoch, const TileStatus<X>& status) {
  using Status = hana::tuple<EWord32, Exp<X>>;
  const EWord32 end = r.declare(tile);  // the window is tiles end - 32 .. end - 1
  const Exp<bool> first = r.declare(Exp<bool>(true));
  const Exp<bool> done = r.declare(Exp<bool>(false));
  r.seqWhile(!done, [&](const Program<Warp>& s) {
    auto window = mkPush<Warp, Status>(32u, [&](const Program<Warp>& q, const Writer<Status>& w) {
      q.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
        // Lanes before tile 0 stand in for it: its real lane comes later and overrides them.
        const EWord32 k = t.declare(ifThenElse(end + lane >= 32u, end + lane - 32u, EWord32(0u)));
        const Status got = status.await(t, k, epoch);
        w(t, got, lane);
      });
    });
    const Status folded = warpScan(s, later, forceReg(s, window))[31u];
    s.assign(result, ifThenElse(first, hana::at_c<1>(folded), f(hana::at_c<1>(folded), result)));
    s.assign(first, Exp<bool>(false));
    s.assign(done, hana::at_c<0>(folded) != 0u);
    s.assign(end, end - 32u);
  });
}
}  // namespace detail

namespace detail {
// A tile program's ticket: which tile it scans, and the launch's epoch (see scanGrid).
struct TileTicket {
  EWord32 tile, epoch;
  SMutable<uint32_t> epochs;
};
// Thread 0 draws the tile (after reading the epoch); the block learns both through shared
// memory (one barrier).
inline TileTicket drawTile(const Program<Block>& p, const EWord32& tiles) {
  const SMutable<uint32_t> ticket = newGlobal<uint32_t>(p, 1);
  const SMutable<uint32_t> epochs = newGlobal<uint32_t>(p, 1);
  auto drawn =
      force(p, mkPush<Block, EWord32>(2u, [=](const Program<Block>& q, const Writer<EWord32>& w) {
              q.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
                const EWord32 epoch = t.declare(epochs[0u]);
                threadFence(t);
                w(t, atomicInc(t, ticket, 0u, tiles - 1u), 0u);  // wraps to 0 for the next launch
                w(t, epoch, 1u);
              });
            }));
  return {drawn[0u], drawn[1u], epochs};
}
// The block of the last ticket has seen every ticket drawn: the next launch may begin a new
// epoch.
inline void endEpoch(const Program<Block>& p, const TileTicket& ticket, const EWord32& tiles) {
  p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
    t.cond(ticket.tile == tiles - 1u,
           [&](const Program<Thread>& u) { write(u, ticket.epochs, 0u, ticket.epoch + 1u); });
  });
}
// Nothing to do with a tile's inclusive prefix.
struct IgnorePrefix {
  template <class X>
  void operator()(const Program<Thread>&, const Exp<X>&) const {}
};
// The look-back of the tile with this aggregate: thread 0 publishes the aggregate (tile 0: its
// inclusive prefix); the first warp looks back over windows of the 32 tiles before `end`: each
// lane waits for its tile's flag and takes its value, and an order-keeping warp scan with "an
// inclusive prefix ends it" folds the window; a window with no inclusive prefix moves 32 tiles
// back. Then the tile's inclusive prefix is published, and handed to inclusive(t, value) in the
// thread that publishes it. Returns the exclusive prefix of the tile (identity for tile 0),
// forced (one barrier).
template <class X, class Op, class OnInclusive = IgnorePrefix>
Exp<X> tilePrefix(const Program<Block>& p, Op f, X identity, const TileTicket& ticket,
                  const Exp<X>& aggregate, const TileStatus<X>& status,
                  OnInclusive inclusive = {}) {
  const EWord32 tile = ticket.tile, epoch = ticket.epoch;
  p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
    t.cond(
        tile == 0u,
        [&](const Program<Thread>& u) {
          status.publish(u, 0u, epoch, aggregate, true);
          inclusive(u, aggregate);
        },
        [&](const Program<Thread>& u) { status.publish(u, tile, epoch, aggregate, false); });
  });
  using Status = hana::tuple<EWord32, Exp<X>>;                // (1 for an inclusive prefix, value)
  const auto later = [f](const Status& a, const Status& b) {  // a comes before b
    return ifThenElse(hana::at_c<0>(b) != 0u, b,
                      Status(hana::at_c<0>(a), f(hana::at_c<1>(a), hana::at_c<1>(b))));
  };
  auto prefix = force(p, pConcat(fmap(
                             [=](const EWord32&) {
                               return singletonPush<Warp>([=](const Program<Warp>& q) {
                                 const Exp<X> result = q.declare(Exp<X>(identity));
                                 q.cond(tile != 0u, [&](const Program<Warp>& r) {
                                   lookBack<X>(r, f, later, result, tile, epoch, status);
                                   r.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
                                     const Exp<X> mine = t.declare(f(result, aggregate));
                                     status.publish(t, tile, epoch, mine, true);
                                     inclusive(t, mine);
                                   });
                                 });
                                 return result;
                               });
                             },
                             mkPull(1u, [](const EWord32& w) { return w; }))));
  return prefix[0u];
}
// store(u, j) for each element j of the tile that starts at `start`: every tile but the last
// is whole, so its stores need no bound (start < n, so n - start does not wrap); the last's
// stop at n.
template <class Store>
void storeTile(const Program<Block>& p, const EWord32& n, const EWord32& start, uint32_t tileLen,
               Store store) {
  p.cond(
      n - start >= tileLen, [&](const Program<Block>& q) { q.forAll(tileLen, store); },
      [&](const Program<Block>& q) {
        q.forAll(tileLen, [&](const Program<Thread>& t, const EWord32& j) {
          t.cond(start + j < n, [&](const Program<Thread>& u) { store(u, j); });
        });
      });
}
// ceil(n / tile) without overflow near 2^32.
inline EWord32 tilesOf(const EWord32& n, uint32_t tile) {
  return n / tile + cast<uint32_t>(n % tile != 0u);
}
// `tiles`, with the launch precondition that the status has room for them; `what` names the
// caller in the message.
inline EWord32 checkedTiles(const std::string& what, const EWord32& tiles, const ScanShape& shape) {
  requireLength(tiles <= shape.maxTiles, what + " has status for " +
                                             std::to_string(shape.maxTiles) + " tiles of " +
                                             std::to_string(shape.tile) + " elements");
  return tiles;
}
}  // namespace detail

/// scanGrid<X>(f, blockScan, in, shape, kind, identity): the inclusive (or exclusive, identity
/// first) f-scan of `in` as a Push<Grid>, in one launch, for any length. f must be associative.
/// blockScan(p, tile) is a block-level inclusive scan of a tile: an SPush<Block> (e.g. the
/// paper's sklansky3 or koggeStone), which is forced, or an SPull that reads a manifest result
/// (it is read twice: for the tile's aggregate and for the output); elements past the end of the
/// input read as the last one (they change no prefix that is written). The look-back is a warp
/// program: threadsPerBlock must be a multiple of 32. (scanAll is the tuned scan: its tiles are
/// held in registers, see there.)
///
/// Status: per tile, a flag and a value in grid state (detail::TileStatus: one 64-bit word for
/// values of at most 32 bits, which needs no fences). The epoch, kept in
/// grid state too, is read by every block before it takes its ticket and advanced by the block
/// that draws the last ticket when it is done, so flags never need clearing between launches
/// (they would only be confused after 2^30 launches).
template <class X, class Op, class BlockScan>
DPush<Grid, Exp<X>> scanGrid(Op f, BlockScan blockScan, const DPull<Exp<X>>& in, ScanShape shape,
                             ScanKind kind = ScanKind::Inclusive, X identity = X{}) {
  if (shape.tile == 0) throw Error("scanGrid needs a tile of at least one element; got 0");
  const EWord32 n = len(in);
  const uint32_t tileLen = shape.tile;
  const EWord32 tiles = detail::checkedTiles("scanGrid", detail::tilesOf(n, tileLen), shape);
  return DPush<Grid, Exp<X>>(n, [=](const Program<Grid>& g, const Writer<Exp<X>>& out) {
    g.distrPar(tiles, [&](const Program<Block>& p, const EWord32&) {
      const detail::TileTicket ticket = detail::drawTile(p, tiles);
      const detail::TileStatus<X> status(p, shape.maxTiles, shape.delayNs, shape.splitWide);
      const EWord32 tile = ticket.tile;
      const EWord32 start = tile * tileLen;
      const SPull<Exp<X>> elems =
          mkPull(tileLen, [in, n, start](const EWord32& j) { return in[min(start + j, n - 1u)]; });
      const SPull<Exp<X>> local = [&] {
        const auto scanned = blockScan(p, elems);
        if constexpr (isPush<decltype(scanned)>) {
          return force(p, scanned);
        } else {
          return SPull<Exp<X>>(scanned);  // already manifest (read where it is)
        }
      }();
      const Exp<X> before =
          detail::tilePrefix<X>(p, f, identity, ticket, local[tileLen - 1], status);
      detail::endEpoch(p, ticket, tiles);

      const auto store = [&](const Program<Thread>& u, const EWord32& j) {
        if (kind == ScanKind::Inclusive) {
          out(u, ifThenElse(tile == 0u, local[j], f(before, local[j])), start + j);
        } else {
          const Exp<X> prev = local[ifThenElse(j == 0u, EWord32(0u), j - 1u)];
          out(u, ifThenElse(j == 0u, before, ifThenElse(tile == 0u, prev, f(before, prev))),
              start + j);
        }
      };
      detail::storeTile(p, n, start, tileLen, store);
    });
  });
}

// ---------------------------------------------------------------- the tuned scan
/// The device scan's tiles: threads x itemsPerThread elements, each thread's consecutive
/// elements held in its registers (a thread array) from the load to the store (scanAll); `load`
/// says how they get there (block/load_store.hpp; not Vectorized: a tile's last elements are
/// clamped reads, not a direct read of the input). An odd itemsPerThread keeps the shared-memory
/// arrangements free of bank conflicts.
struct ScanPolicy {
  uint32_t threads = 256;                                ///< threads per block
  uint32_t itemsPerThread = 15;                          ///< consecutive elements each thread scans
  BlockLoadAlgorithm load = BlockLoadAlgorithm::Direct;  ///< how threads get their elements
  uint32_t delayNs = 0;  ///< the look-back's back-off (ScanShape::delayNs)
  /// Blocks each SM must be able to hold (CaptureOptions::minBlocksPerSm: the compiler keeps
  /// registers few enough; 0: it chooses). The compiler's own choice varies from 32 to 64
  /// registers between tile shapes, element types and inclusive or exclusive, and with it how
  /// many tiles an SM keeps loading at once.
  uint32_t blocksPerSm = 0;
  /// 64-bit values: the look-back's status in two packed words without fences, or a flag and a
  /// value behind fences (ScanShape::splitWide).
  bool splitWide = false;
  /// Field by field.
  friend bool operator==(const ScanPolicy&, const ScanPolicy&) = default;
};

namespace detail {
// The policy's tile and look-back as a ScanShape; `what` names the caller for its errors.
inline ScanShape shapeOf(const char* what, const Program<Block>* p, const ScanPolicy& policy) {
  if (policy.itemsPerThread == 0 || policy.threads == 0 || policy.threads % 32 != 0) {
    throw Error(std::string(what) +
                " needs whole warps of threads and at least one item per thread; got " +
                str(policy.threads) + " threads and " + str(policy.itemsPerThread) + " items");
  }
  if (p != nullptr && p->context().threadsPerBlock() != policy.threads) {
    throw Error(std::string(what) + ": the policy's tiles are for " + str(policy.threads) +
                " threads; the kernel's blocks have " + str(p->context().threadsPerBlock()));
  }
  ScanShape shape;
  shape.tile = policy.threads * policy.itemsPerThread;
  shape.delayNs = policy.delayNs;
  shape.splitWide = policy.splitWide;
  return shape;
}
// Thread tid's items of a tile in its registers: element tid * seq + k of `source` (the tile,
// as blockLoad arranged it) is item k.
template <class X>
ThreadArray<X> loadItems(const Program<Block>& p, uint32_t seq, const SPull<Exp<X>>& source) {
  const ThreadArray<X> items = threadArray<X>(p, seq);
  p.forAll(p.context().threadsPerBlock(), [&](const Program<Thread>& t, const EWord32& tid) {
    for (uint32_t k = 0; k < seq; ++k) items.write(t, k, source[tid * seq + k]);
  });
  return items;
}
// Each thread scans its own items again, in registers, from the fold of everything before
// them: each(t, tid, k, exclusive, inclusive) for item k of thread tid, where exclusive is the
// f-fold of every element before the item (identity for the array's first element) and
// inclusive that folded with the item. tileBefore is the tile's exclusive prefix (not used by
// tile 0).
template <class X, class Op, class Each>
void scanOwnItems(const Program<Block>& p, Op f, X identity, const ThreadArray<X>& items,
                  const ItemsPrefix<X>& block, const EWord32& tile, const Exp<X>& tileBefore,
                  Each each) {
  p.forAll(p.context().threadsPerBlock(), [&](const Program<Thread>& t, const EWord32& tid) {
    const Exp<bool> first = t.declare(tile == 0u && tid == 0u);
    const Exp<X> mine = block.before[0];  // thread 0's is a stand-in
    const Exp<X> base = t.declare(
        ifThenElse(tile == 0u, mine, ifThenElse(tid == 0u, tileBefore, f(tileBefore, mine))));
    Exp<X> acc = t.declare(ifThenElse(first, items[0], f(base, items[0])));
    each(t, tid, 0u, ifThenElse(first, Exp<X>(identity), base), acc);
    for (uint32_t k = 1; k < items.len(); ++k) {
      const Exp<X> next = t.declare(f(acc, items[k]));
      each(t, tid, k, acc, next);
      acc = next;
    }
  });
}
}  // namespace detail

/// scanAll<X>(f, in, policy, kind, identity): the inclusive (or exclusive, identity first)
/// f-scan of the whole of `in` in one launch, as a Push<Grid> (scanGrid's look-back; f must be
/// associative). Each tile is threads x itemsPerThread elements, and a thread's items stay in
/// its registers from load to store (CUB's items per thread): loaded (policy.load), folded and
/// scanned across the block (blockScanItems: one barrier), the tile's prefix found by the
/// look-back, each thread's items scanned again from their prefix, and the results staged in
/// shared memory for coalesced stores. Elements past the input's end read as its last one.
/// Cost: five barriers a tile, the tile's elements of shared memory twice (load and store; one
/// array where the load is Direct).
template <class X, class Op>
DPush<Grid, Exp<X>> scanAll(Op f, const DPull<Exp<X>>& in, const ScanPolicy& policy,
                            ScanKind kind = ScanKind::Inclusive, X identity = X{}) {
  const ScanShape shape = detail::shapeOf("scanAll", nullptr, policy);
  const uint32_t seq = policy.itemsPerThread, tileLen = shape.tile;
  const EWord32 n = len(in);
  const EWord32 tiles = detail::checkedTiles("scanAll", detail::tilesOf(n, tileLen), shape);
  return DPush<Grid, Exp<X>>(n, [=](const Program<Grid>& g, const Writer<Exp<X>>& out) {
    g.distrPar(tiles, [&](const Program<Block>& p, const EWord32&) {
      detail::shapeOf("scanAll", &p, policy);
      const detail::TileTicket ticket = detail::drawTile(p, tiles);
      const detail::TileStatus<X> status(p, shape.maxTiles, shape.delayNs, shape.splitWide);
      const EWord32 tile = ticket.tile;
      const EWord32 start = tile * tileLen;
      const SPull<Exp<X>> elems =
          mkPull(tileLen, [in, n, start](const EWord32& j) { return in[min(start + j, n - 1u)]; });
      const ThreadArray<X> items =
          detail::loadItems<X>(p, seq, blockLoad(policy.load, p, seq, elems));
      const ItemsPrefix<X> block = blockScanItems(p, f, items);
      const Exp<X> before = detail::tilePrefix<X>(p, f, identity, ticket, block.aggregate, status);
      detail::endEpoch(p, ticket, tiles);
      const SPull<Exp<X>> local = force(
          p, mkPush<Block, Exp<X>>(tileLen, [=](const Program<Block>& q, const Writer<Exp<X>>& w) {
            detail::scanOwnItems<X>(q, f, identity, items, block, tile, before,
                                    [&](const Program<Thread>& t, const EWord32& tid, uint32_t k,
                                        const Exp<X>& exclusive, const Exp<X>& inclusive) {
                                      w(t, kind == ScanKind::Inclusive ? inclusive : exclusive,
                                        tid * seq + k);
                                    });
          }));
      detail::storeTile(p, n, start, tileLen, [&](const Program<Thread>& u, const EWord32& j) {
        out(u, local[j], start + j);
      });
    });
  });
}

/// A kernel of scanGrid with any block scan (see scanGrid) over tiles of `tile` elements.
template <class X, class Op, class BlockScan>
Kernel scanGridKernel(const std::string& name, Op f, const BlockScan& blockScan, uint32_t tile,
                      uint32_t threads, ScanKind kind = ScanKind::Inclusive, X identity = X{}) {
  return capture(name, threads, [=](DPull<Exp<X>> in) {
    return scanGrid<X>(f, blockScan, in, ScanShape{tile}, kind, identity);
  });
}

/// The scanAll kernel with `policy` (its blocksPerSm as the capture's minBlocksPerSm).
template <class X, class Op>
Kernel scanKernel(Op f, const ScanPolicy& policy, ScanKind kind = ScanKind::Inclusive,
                  X identity = X{}) {
  CaptureOptions options;
  options.minBlocksPerSm = policy.blocksPerSm;
  return capture(
      kind == ScanKind::Inclusive ? "scanAll" : "scanAllExclusive", policy.threads,
      [=](DPull<Exp<X>> in) { return scanAll<X>(f, in, policy, kind, identity); }, options);
}

// ---------------------------------------------------------------- descriptor and ready calls
namespace device {

/// The scans' descriptor (device/algorithm.hpp): scanAll with the tuned policy, inclusive or
/// exclusive. Inputs that fill the device take the Large rows; those whose large tiles would
/// give fewer than fillTilesPerSm per SM (a few waves of tiles, where the last wave's idle SMs
/// cost most) take the Small rows.
struct Scan {
  using Policy = ScanPolicy;  ///< the policy type
  /// The arrangements a tile can be loaded in (not Vectorized: a tile's last elements are clamped
  /// reads, not a direct read of the input).
  static constexpr std::array<BlockLoadAlgorithm, 3> kLoads = {
      BlockLoadAlgorithm::Direct, BlockLoadAlgorithm::Striped, BlockLoadAlgorithm::WarpStriped};
  static constexpr const char* name = "scan";  ///< the ready call's name
  /// Where it is declared.
  static constexpr const char* header = "obsidian/device/scan.hpp";
  /// What it computes.
  static constexpr const char* summary =
      "inclusive and exclusive scans in one launch (decoupled look-back, scanAll)";
  /// The policy's fields as data.
  static constexpr auto fields() {
    return hana::make_tuple(
        field("threads", &Policy::threads, 32, 1024, "threads per block (whole warps)"),
        field("items", &Policy::itemsPerThread, 1, 64,
              "elements each thread scans (odd: no bank conflicts)"),
        choiceField("load", &Policy::load, kLoads,
                    "how threads get their elements (block/load_store.hpp)"),
        field("delay", &Policy::delayNs, 0, 1000000, "the look-back's back-off in ns (0: none)"),
        field("blocks", &Policy::blocksPerSm, 0, 64,
              "blocks per SM the registers must allow (0: the compiler's choice)"),
        field("split_wide", &Policy::splitWide, 0, 1,
              "64-bit values: the look-back's status in two packed words, no fences"));
  }
  /// Large tiles per SM below which an input is Small: 2^23 u32 (2521 tiles of 256 x 13 on
  /// 132 SMs, 19 a SM) takes the Small row, 2^24 (38 a SM) the Large one, where they tie (the
  /// sm 90 rows' measurements).
  static constexpr uint32_t fillTilesPerSm = 32;
  /// The policy table: the fallback, then rows per measured architecture, element size and
  /// scale.
  static constexpr Tuned<Policy> table[] = {
      {0,
       {},
       {256, 13, BlockLoadAlgorithm::WarpStriped, 400, 0, false},
       "(fallback)",
       "not measured: sm_90's tile (27 KB of shared memory, within 48 KB) without its register "
       "cap (the blocks an SM holds differ between architectures)"},
      {90,
       {},
       {256, 13, BlockLoadAlgorithm::WarpStriped, 400, 8, false},
       "obsidian-bench-scan --types u32,f32 --seq S --blocks B (bench/RESULTS.md, 'Scans')",
       "H100, 2026-11-27, items in registers (scanAll over blockScanItems): 256 x 13 with 8 "
       "blocks per SM no spills, 2^24 0.94-0.95 of CUB, 2^28 0.86-0.89, 3e7 0.95; 256 x 15 "
       "(the table's row before the registers) spills 20 bytes at 8 blocks: 2^28 823 us "
       "against 784; at 6 blocks 0.90 at 2^28 and 0.95-0.97 at 2^24; 256 x 11 x 8 and 256 x "
       "17 x 4 0.91-0.92 at 2^28. Before: obsidian-tune tuning/spaces/device_scan.json, "
       "2026-11-24, 144 policies of the staged scan (tuning/RESULTS.md)"},
      {90,
       {4, OperatorClass::Any, Values::Any, Scale::Small},
       {128, 15, BlockLoadAlgorithm::WarpStriped, 400, 12, false},
       "obsidian-bench-scan --types u32 --runs 50 --only N --threads T --seq S --blocks B",
       "H100, 2026-11-27, u32/f32 inclusive and exclusive at 2^20, 2^22, 2^23 and 2^24: 128 x "
       "15 with 12 blocks per SM 0.94-0.96 of CUB at every size (2^22 21.8-22.0 us, CUB "
       "22.96-23.28); 256 x 15 x 8 0.94-0.98 at 2^22 and up to 1.007 at 2^23 (a tail wave: "
       "1092 tiles for 1056 blocks at 2^22); 128 x 15 x 16 0.91-0.93 at 2^22 but 0.97-0.99 at "
       "2^20; 256 x 7, 256 x 9, 128 x 7 and 128 x 11 up to 1.16"},
      {90,
       {8},
       {256, 15, BlockLoadAlgorithm::WarpStriped, 0, 4, true},
       "obsidian-bench-scan --types u64,f64 --split-wide true --only N --threads T --seq S "
       "--blocks B --delay D (N = 2^22, 2^24, 2^28; bench/RESULTS.md, 'Scans')",
       "H100, 2026-11-26, u64 inclusive against CUB: the status split into two packed words "
       "(split_wide) 2^28 1723.6 us against 2118.0 fenced (CUB 1573.9); then 23 tile shapes: 256 "
       "x 15, 4 blocks per SM, no back-off the best at every size (2^22 36.75 us, CUB 33.76; 2^24 "
       "112.3, CUB 107.3; 2^28 1603.2, CUB 1577.7); 8 blocks per SM (the 4-byte row's) spills: "
       "1721.8; 256 x 13 and 5 blocks tie at 2^28 (1601.7) and lose below; 128 and 384 threads, "
       "items 7 to 11 and 17 from 1.02x to 1.31x CUB"},
  };
  /// The kernel of an inclusive (or exclusive, identity first) f-scan of X.
  template <class X, class Op>
  static Kernel kernel(const Target& t, const Policy& policy, Op f, ScanKind kind, X identity) {
    return kernelFor<Scan>(
        t, policy, detail::operatorKey<Op>(),
        {detail::typeKey<X>(), kind == ScanKind::Inclusive ? "inclusive" : "exclusive",
         detail::valueKey(identity)},
        [&] { return scanKernel<X>(f, policy, kind, identity); });
  }
};

/// The policy of an f-scan of n elements of X on target t: the Large row unless its tiles would
/// give fewer than Scan::fillTilesPerSm per SM, then the Small row; with the options' policy
/// settings.
template <class X, class Op = Sum>
ScanPolicy scanPolicyFor(const Target& t, size_t n, const Options& options = {}) {
  ProblemClass p = problemOf<X, Op>();
  p.scale = Scale::Large;
  const ScanPolicy large = tunedFor(Scan::table, t.sm, p).policy;
  const uint64_t tile = uint64_t{large.threads} * large.itemsPerThread;
  if ((n + tile - 1) / tile < uint64_t{Scan::fillTilesPerSm} * t.smCount) p.scale = Scale::Small;
  return policyFor<Scan>(t, p, options);
}

namespace detail {
template <class In, class Out, class Op>
void scan(const In& in, Out& out, Op f, ScanKind kind, ElementOf<In> identity,
          const Options& options) {
  using X = ElementOf<In>;
  if (out.size() != in.size()) {
    throw Error("device scan: the output holds " + std::to_string(out.size()) +
                " elements; the input " + std::to_string(in.size()));
  }
  const Target t = targetOf<In>();
  const ScanPolicy policy = scanPolicyFor<X, Op>(t, in.size(), options);
  launchOn(t, Scan::kernel<X>(t, policy, f, kind, identity), {in, out}, options);
}
}  // namespace detail

/// The inclusive scan: out[i] = in[0] f ... f in[i], in one launch with the tuned policy, on the
/// GPU (device 0) for device buffers, on the simulator for host vectors. f must be associative.
/// Launches of one scan kernel must not overlap (its look-back state is one per kernel).
template <Buffer In, Buffer Out, class Op = Sum>
requires SameSide<In, Out> && OperatorOn<Op, ElementOf<In>>
void inclusiveScan(const In& in, Out& out, Op f = {}, const Options& options = {}) {
  detail::scan(in, out, f, ScanKind::Inclusive, ElementOf<In>{}, options);
}
/// The exclusive scan: out[0] = identity (it is not folded into the others), out[i] = in[0] f
/// ... f in[i-1].
template <Buffer In, Buffer Out, class Op>
requires SameSide<In, Out> && OperatorOn<Op, ElementOf<In>>
void exclusiveScan(const In& in, Out& out, Op f, ElementOf<In> identity,
                   const Options& options = {}) {
  detail::scan(in, out, f, ScanKind::Exclusive, identity, options);
}
/// The same with Op's identity.
template <Buffer In, Buffer Out, class Op = Sum>
requires SameSide<In, Out> && OperatorOn<Op, ElementOf<In>> &&
    detail::HasIdentity<Op, ElementOf<In>>
void exclusiveScan(const In& in, Out& out, Op f = {}, const Options& options = {}) {
  exclusiveScan(in, out, f, Op::template identity<ElementOf<In>>(), options);
}

/// The inclusive scan of host array `in`, on the simulator.
template <KernelScalar X, OperatorOn<X> Op = Sum>
std::vector<X> inclusiveScan(const std::vector<X>& in, Op f = {}, const Options& options = {}) {
  std::vector<X> out(in.size());
  inclusiveScan(in, out, f, options);
  return out;
}
/// The exclusive scan of host array `in`, on the simulator.
template <KernelScalar X, OperatorOn<X> Op>
std::vector<X> exclusiveScan(const std::vector<X>& in, Op f, X identity,
                             const Options& options = {}) {
  std::vector<X> out(in.size());
  exclusiveScan(in, out, f, identity, options);
  return out;
}
/// The same with Op's identity.
template <KernelScalar X, OperatorOn<X> Op = Sum>
requires detail::HasIdentity<Op, X> std::vector<X> exclusiveScan(const std::vector<X>& in,
                                                                 Op f = {}) {
  return exclusiveScan(in, f, Op::template identity<X>());
}

}  // namespace device

/// The tuned scan policy for architecture sm and problem class p (element size: 64-bit values
/// have their own rows).
inline ScanPolicy scanPolicy(SmVersion sm = currentSm(), const ProblemClass& p = {}) {
  return tunedFor(device::Scan::table, sm, p).policy;
}
/// The tuned scan policy for an f-scan of X on architecture sm.
template <class X, class Op = Sum>
ScanPolicy scanPolicyFor(SmVersion sm = currentSm()) {
  return scanPolicy(sm, device::problemOf<X, Op>());
}

}  // namespace obsidian
