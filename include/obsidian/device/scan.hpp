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
    const EWord32 flag = flagOf(epoch, inclusive);
    const auto pack = [&](const EWord32& half) {
      return (cast<uint64_t>(half) << EWord64(32)) | cast<uint64_t>(flag);
    };
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
    const auto pending = [&](const EWord32& flag) {
      return flag >> 2u != epoch || (flag & 3u) == 0u;
    };
    if constexpr (kPacked) {
      const EWord64 word = t.declare(atomicLoad(t, *words_, k));
      t.seqWhile(pending(cast<uint32_t>(word)), [&](const Program<Thread>& s) {
        backOff(s);
        s.assign(word, atomicLoad(s, *words_, k));
      });
      return {cast<uint32_t>(cast<uint32_t>(word) == flagOf(epoch, true)),
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
        return {cast<uint32_t>(cast<uint32_t>(low) == flagOf(epoch, true)), fromBits64(bits)};
      }
      const EWord32 flag = t.declare(atomicLoad(t, *flags_, k));
      t.seqWhile(pending(flag), [&](const Program<Thread>& s) {
        backOff(s);
        s.assign(flag, atomicLoad(s, *flags_, k));
      });
      threadFence(t);
      const Exp<bool> inclusive = flag == flagOf(epoch, true);
      return {cast<uint32_t>(inclusive),
              ifThenElse(inclusive, (*inclusives_)[k], (*aggregates_)[k])};
    }
  }

 private:
  static EWord32 flagOf(const EWord32& epoch, bool inclusive) {
    return epoch * 4u + (inclusive ? 2u : 1u);
  }
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

/// scanGrid<X>(f, blockScan, in, shape, kind, identity): the inclusive (or exclusive, identity
/// first) f-scan of `in` as a Push<Grid>, in one launch, for any length. f must be associative.
/// blockScan(p, tile) is a block-level inclusive scan of a tile: an SPush<Block> (e.g. the
/// paper's sklansky3 or koggeStone), which is forced, or an SPull that reads a manifest result
/// (it is read twice: for the tile's aggregate and for the output); elements past the end of the
/// input read as the last one (they change no prefix that is written). The look-back is a warp
/// program: threadsPerBlock must be a multiple of 32.
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
  // ceil(n / tile) without overflow near 2^32
  const EWord32 tiles = n / tileLen + cast<uint32_t>(n % tileLen != 0u);
  detail::requireLength(tiles <= shape.maxTiles, "scanGrid has status for " +
                                                     std::to_string(shape.maxTiles) + " tiles of " +
                                                     std::to_string(tileLen) + " elements");
  return DPush<Grid, Exp<X>>(n, [=](const Program<Grid>& g, const Writer<Exp<X>>& out) {
    g.distrPar(tiles, [&](const Program<Block>& p, const EWord32&) {
      const SMutable<uint32_t> ticket = newGlobal<uint32_t>(p, 1);
      const SMutable<uint32_t> epochs = newGlobal<uint32_t>(p, 1);
      const detail::TileStatus<X> status(p, shape.maxTiles, shape.delayNs, shape.splitWide);

      // The tile: a ticket, and the epoch read before it (see above).
      auto drawn = force(
          p, mkPush<Block, EWord32>(2u, [=](const Program<Block>& q, const Writer<EWord32>& w) {
            q.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
              const EWord32 epoch = t.declare(epochs[0u]);
              threadFence(t);
              w(t, atomicInc(t, ticket, 0u, tiles - 1u), 0u);  // wraps to 0 for the next launch
              w(t, epoch, 1u);
            });
          }));
      const EWord32 tile = drawn[0u], epoch = drawn[1u];
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
      const Exp<X> aggregate = local[tileLen - 1];

      // Thread 0 publishes the tile's aggregate (tile 0: its inclusive prefix).
      p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
        t.cond(
            tile == 0u,
            [&](const Program<Thread>& u) { status.publish(u, 0u, epoch, aggregate, true); },
            [&](const Program<Thread>& u) { status.publish(u, tile, epoch, aggregate, false); });
      });

      // The first warp looks back over windows of the 32 tiles before `end`: each lane waits
      // for its tile's flag and takes its value, and an order-keeping warp scan with "an
      // inclusive prefix ends it" folds the window; a window with no inclusive prefix moves 32
      // tiles back. Then the tile's inclusive prefix is published. Out comes the exclusive
      // prefix of the tile (identity for tile 0).
      using Status = hana::tuple<EWord32, Exp<X>>;  // (1 for an inclusive prefix, value)
      const auto later = [f](const Status& a, const Status& b) {  // a comes before b
        return ifThenElse(hana::at_c<0>(b) != 0u, b,
                          Status(hana::at_c<0>(a), f(hana::at_c<1>(a), hana::at_c<1>(b))));
      };
      auto prefix =
          force(p, pConcat(fmap(
                       [=](const EWord32&) {
                         return singletonPush<Warp>([=](const Program<Warp>& q) {
                           const Exp<X> result = q.declare(Exp<X>(identity));
                           q.cond(tile != 0u, [&](const Program<Warp>& r) {
                             detail::lookBack<X>(r, f, later, result, tile, epoch, status);
                             r.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
                               status.publish(t, tile, epoch, f(result, aggregate), true);
                             });
                           });
                           return result;
                         });
                       },
                       mkPull(1u, [](const EWord32& w) { return w; }))));
      // The block of the last ticket has seen every ticket drawn: the next launch may begin a
      // new epoch.
      p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
        t.cond(tile == tiles - 1u,
               [&](const Program<Thread>& u) { write(u, epochs, 0u, epoch + 1u); });
      });
      const Exp<X> before = prefix[0u];  // identity for tile 0 (unused by inclusive scans)

      const auto store = [&](const Program<Thread>& u, const EWord32& j) {
        if (kind == ScanKind::Inclusive) {
          out(u, ifThenElse(tile == 0u, local[j], f(before, local[j])), start + j);
        } else {
          const Exp<X> prev = local[ifThenElse(j == 0u, EWord32(0u), j - 1u)];
          out(u, ifThenElse(j == 0u, before, ifThenElse(tile == 0u, prev, f(before, prev))),
              start + j);
        }
      };
      // Every tile but the last is whole: its stores need no bound (start < n, so n - start
      // does not wrap).
      p.cond(
          n - start >= tileLen, [&](const Program<Block>& q) { q.forAll(tileLen, store); },
          [&](const Program<Block>& q) {
            q.forAll(tileLen, [&](const Program<Thread>& t, const EWord32& j) {
              t.cond(start + j < n, [&](const Program<Thread>& u) { store(u, j); });
            });
          });
    });
  });
}

// ---------------------------------------------------------------- the tuned scan
/// The device scan's tiles: threads x itemsPerThread elements scanned by seqScanBlock (each
/// thread scans consecutive elements; an odd count keeps shared memory free of bank conflicts),
/// which get them by `load` (block/load_store.hpp; not Vectorized: a tile's last elements are
/// clamped reads, not a direct read of the input).
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
};

/// scanAll<X>(f, in, policy, kind, identity): the f-scan of the whole of `in` with the policy's
/// tiles (scanGrid over seqScanBlock), as a Push<Grid>.
template <class X, class Op>
DPush<Grid, Exp<X>> scanAll(Op f, const DPull<Exp<X>>& in, const ScanPolicy& policy,
                            ScanKind kind = ScanKind::Inclusive, X identity = X{}) {
  const auto scan = [policy, f](const Program<Block>& p, const SPull<Exp<X>>& tile) {
    return seqScanBlock(p, policy.itemsPerThread, f, tile, policy.load);
  };
  ScanShape shape;
  shape.tile = policy.threads * policy.itemsPerThread;
  shape.delayNs = policy.delayNs;
  shape.splitWide = policy.splitWide;
  return scanGrid<X>(f, scan, in, shape, kind, identity);
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
/// exclusive.
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
  /// The policy table: the fallback, then rows per measured architecture and element size.
  static constexpr Tuned<Policy> table[] = {
      {0,
       {},
       {256, 15, BlockLoadAlgorithm::WarpStriped, 400, 0, false},
       "(fallback)",
       "not measured: sm_90's tile (31 KB of shared memory, within 48 KB) without its register "
       "cap (the blocks an SM holds differ between architectures)"},
      {90,
       {},
       {256, 15, BlockLoadAlgorithm::WarpStriped, 400, 8, false},
       "obsidian-tune tuning/spaces/device_scan.json",
       "H100, 2026-11-24: the best geometric mean of u32/f32 x inclusive/exclusive at 2^24 and "
       "2^28 of 144 policies (225.8 us; 2^28 u32 inclusive 799.3 us, exclusive 782.4; 2^24 65.6 "
       "and 63.7). Runner-up 256 x 11 225.9 us; 128 x 19 (16 blocks per SM) 227.9; the "
       "compiler's own register choice (32 to 64 registers) 1.2x slower at worst; direct loads "
       "from 248.9 (tuning/RESULTS.md, 'The scan after issue 16')"},
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
  const ScanPolicy policy = policyFor<Scan>(t, problemOf<X, Op>(), options);
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
