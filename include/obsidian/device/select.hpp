/// The device layer, selections and runs (CUB's DeviceSelect, DevicePartition,
/// DeviceRunLengthEncode, DeviceReduce::ReduceByKey and DeviceScan::*ByKey): each one pass over
/// its input with scanAll's tiles and decoupled look-back (device/scan.hpp). A tile's items stay
/// in their threads' registers; what each item contributes (a selection flag, a partition's
/// part, a run head) is scanned across the block and the tile's prefix comes from the
/// look-back; the outputs meet in shared memory at their places in the tile and are stored
/// coalesced (CUB's two-phase scatter).
///  - Compactions (selectIf, selectFlagged, selectUnique, partitionIf, partitionFlagged) scan u32
///    flags; partitionThreeWay scans two counts packed in a u64.
///  - Runs (reduceByKey, runLengthEncode, inclusiveScanByKey, exclusiveScanByKey) scan a pair
///    (heads so far, the value folded since the last head) packed in a u64: the segmented
///    operator needs no flags beside it, and the look-back's status carries both at once. Their
///    values are therefore at most 32 bits.
/// Language-level calls give Push<Grid> / Fused<Grid> arrays for any kernel; the descriptors
/// device::Select and device::ReduceByKey give the tuned ready calls.
/// @file
#pragma once

#include <boost/hana/append.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "obsidian/block/discontinuity.hpp"
#include "obsidian/device/scan.hpp"
#include "obsidian/fused.hpp"

namespace obsidian {

/// A selection's result: the selected elements, in order, at 0 .. count - 1 of an array as
/// long as the input (the places from count on are not written; a partition writes them all),
/// and the count (one element), both written by one grid loop (a Fused<Grid>: capture makes each
/// part an output).
template <class X>
using Selection = Fused<Grid, DPush<Grid, Exp<X>>, Push<Grid, uint32_t, EWord32>>;

/// A three-way partition's result: the first part, the second part and the unselected
/// elements, each in the input's order at the start of an array as long as the input, and the
/// two parts' sizes (two elements).
template <class X>
using ThreeWayPartition = Fused<Grid, DPush<Grid, Exp<X>>, DPush<Grid, Exp<X>>, DPush<Grid, Exp<X>>,
                                Push<Grid, uint32_t, EWord32>>;

/// Runs of equal keys reduced: the first key of each run and the run's fold, in run order at
/// the start of arrays as long as the input, and the number of runs (one element).
template <class K, class V>
using KeyedRuns =
    Fused<Grid, DPush<Grid, Exp<K>>, DPush<Grid, Exp<V>>, Push<Grid, uint32_t, EWord32>>;

/// The selections' tiles where no table row is chosen (the language-level calls' default and
/// device::Select's rows: see there for the measurements): 128 x 17, warp-striped, registers
/// for 8 blocks per SM (which a kernel applies through CaptureOptions::minBlocksPerSm).
inline constexpr ScanPolicy kSelectPolicy{128, 17, BlockLoadAlgorithm::WarpStriped, 400, 8, false};
/// The runs' tiles (reduceByKey, runLengthEncode, scanByKey; device::ReduceByKey's rows): 256 x
/// 11 read directly into registers, registers for 4 blocks per SM, the run pairs' status split
/// in two words.
inline constexpr ScanPolicy kRunsPolicy{256, 11, BlockLoadAlgorithm::Direct, 400, 4, true};

namespace detail {
// The tile of `in` that starts at `start` in the threads' registers, thread tid holding items
// tid * n .. tid * n + n - 1; elements past the end are not read (a select evaluates only its
// chosen side) and stand as X{}.
template <class X>
ThreadArray<X> loadTile(const Program<Block>& p, const ScanPolicy& policy, const DPull<Exp<X>>& in,
                        const EWord32& n, const EWord32& start) {
  const uint32_t seq = policy.itemsPerThread, tileLen = policy.threads * seq;
  const SPull<Exp<X>> elems = mkPull(tileLen, [in, n, start](const EWord32& j) {
    return ifThenElse(start + j < n, in[start + j], Exp<X>(X{}));
  });
  return loadItems<X>(p, seq, blockLoad(policy.load, p, seq, elems));
}
// For each item of a tile, flag(t, k, i) (the item's u32) where its index i is below n, else
// `past`.
template <class X, class Flag>
ThreadArray<X> itemFlags(const Program<Block>& p, uint32_t seq, const EWord32& n,
                         const EWord32& start, X past, Flag flag) {
  const ThreadArray<X> flags = threadArray<X>(p, seq);
  p.forAll(p.context().threadsPerBlock(), [&](const Program<Thread>& t, const EWord32& tid) {
    for (uint32_t k = 0; k < seq; ++k) {
      const EWord32 i = start + tid * seq + k;
      flags.write(t, k, ifThenElse(i < n, flag(t, k, i), Exp<X>(past)));
    }
  });
  return flags;
}
// The elements of the tile that are not past the end: min(n - start, tileLen).
inline EWord32 inTile(const EWord32& n, const EWord32& start, uint32_t tileLen) {
  return min(n - start, EWord32(tileLen));
}
// The tiles of a pass that writes a count: an empty input still runs one tile, which writes it.
inline EWord32 countedTiles(const char* what, const EWord32& n, const ScanShape& shape) {
  return checkedTiles(what, tilesOf(n, shape.tile) + cast<uint32_t>(n == 0u), shape);
}

// A compaction of `in` by u32 flags (1: selected) that flagsOf(p, values, start, n, tile)
// computes from the tile's values in registers (0 past the end). The selected elements go to
// 0 .. count - 1 in order and the count to the second part; a partition also writes the others
// after them, last first (CUB's DevicePartition). One pass with scanAll's tiles: the flags are
// scanned (u32 sums) for each selected element's place in its tile, the tile's prefix comes
// from the look-back, and the elements meet in shared memory at their places in the tile so
// that the stores are coalesced.
template <class X, class FlagsOf>
Selection<X> compactGrid(const char* what, const DPull<Exp<X>>& in, FlagsOf flagsOf,
                         const ScanPolicy& policy, bool partition) {
  const ScanShape shape = shapeOf(what, nullptr, policy);
  const uint32_t seq = policy.itemsPerThread, tileLen = shape.tile, threads = policy.threads;
  const EWord32 n = len(in);
  const EWord32 tiles = countedTiles(what, n, shape);
  const auto plus = [](const EWord32& a, const EWord32& b) { return a + b; };
  return Selection<X>(
      std::tuple<EWord32, uint32_t>(n, 1u),
      [=](const Program<Grid>& g, const std::tuple<Writer<Exp<X>>, Writer<EWord32>>& writers) {
        const Writer<Exp<X>>& out = std::get<0>(writers);
        const Writer<EWord32>& count = std::get<1>(writers);
        g.distrPar(tiles, [&](const Program<Block>& p, const EWord32&) {
          shapeOf(what, &p, policy);
          const TileTicket ticket = drawTile(p, tiles);
          const TileStatus<uint32_t> status(p, shape.maxTiles, shape.delayNs, false);
          const EWord32 tile = ticket.tile;
          const EWord32 start = tile * tileLen;
          const ThreadArray<X> values = loadTile<X>(p, policy, in, n, start);
          const ThreadArray<uint32_t> flags = flagsOf(p, values, start, n, tile);
          const ItemsPrefix<uint32_t> block = blockScanItems(p, plus, flags);
          const EWord32 before = tilePrefix<uint32_t>(
              p, plus, 0u, ticket, block.aggregate, status,
              [&](const Program<Thread>& t, const EWord32& inclusive) {
                t.cond(tile == tiles - 1u,
                       [&](const Program<Thread>& u) { count(u, inclusive, 0u); });
              });
          endEpoch(p, ticket, tiles);
          const EWord32 here = inTile(n, start, tileLen);
          // The tile's selected elements at their places (the flags' block scan alone: scanned
          // as tile 0); a partition's others after them, last first.
          const SPull<Exp<X>> placed = force(
              p,
              mkPush<Block, Exp<X>>(tileLen, [=](const Program<Block>& q, const Writer<Exp<X>>& w) {
                scanOwnItems<uint32_t>(
                    q, plus, 0u, flags, block, EWord32(0u), EWord32(0u),
                    [&](const Program<Thread>& t, const EWord32& tid, uint32_t k,
                        const EWord32& place, const EWord32&) {
                      if (!partition) {
                        t.cond(flags[k] != 0u,
                               [&](const Program<Thread>& u) { w(u, values[k], place); });
                        return;
                      }
                      const EWord32 j = tid * seq + k;
                      t.cond(
                          flags[k] != 0u, [&](const Program<Thread>& u) { w(u, values[k], place); },
                          [&](const Program<Thread>& u) {
                            u.cond(j < here, [&](const Program<Thread>& v) {
                              w(v, values[k], here - 1u - (j - place));
                            });
                          });
                    });
              }));
          p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
            const EWord32 keptHere = t.declare(block.aggregate);
            for (uint32_t k = 0; k < seq; ++k) {
              const EWord32 j = tid + k * threads;
              if (!partition) {
                t.cond(j < keptHere,
                       [&](const Program<Thread>& u) { out(u, placed[j], before + j); });
                continue;
              }
              // The others of tiles before this one fill the end of the output, last first.
              t.cond(
                  j < keptHere, [&](const Program<Thread>& u) { out(u, placed[j], before + j); },
                  [&](const Program<Thread>& u) {
                    u.cond(j < here, [&](const Program<Thread>& v) {
                      out(v, placed[j], n - (start - before) - here + j);
                    });
                  });
            }
          });
        });
      });
}

// Flags from a predicate of the element and its index.
template <class X, class Keep>
auto flagsBy(uint32_t seq, Keep keep) {
  return [seq, keep](const Program<Block>& p, const ThreadArray<X>& values, const EWord32& start,
                     const EWord32& n, const EWord32&) {
    return itemFlags<uint32_t>(p, seq, n, start, 0u,
                               [&](const Program<Thread>&, uint32_t k, const EWord32& i) {
                                 return cast<uint32_t>(keep(values[k], i));
                               });
  };
}
// The heads of the runs of equal elements: the tile's predecessor is in[start - 1].
template <class X>
ThreadArray<uint32_t> runHeads(const Program<Block>& p, uint32_t seq, const DPull<Exp<X>>& in,
                               const ThreadArray<X>& items, const EWord32& start, const EWord32& n,
                               const EWord32& tile) {
  const ThreadArray<uint32_t> heads =
      blockFlagHeads(p, items, ifThenElse(tile == 0u, Exp<X>(X{}), in[start - 1u]), tile != 0u);
  return itemFlags<uint32_t>(
      p, seq, n, start, 0u,
      [&](const Program<Thread>&, uint32_t k, const EWord32&) { return heads[k]; });
}
}  // namespace detail

/// selectIf<X>(in, pred, policy): the elements v of `in` with pred(v) (an Exp<bool>), in their
/// order, and how many there are, from one pass over the input (CUB's DeviceSelect::If): a
/// Selection whose first part holds them at 0 .. count - 1 (its places from count on are not
/// written) and whose second is the count.
template <KernelScalar X, class Pred>
Selection<X> selectIf(const DPull<Exp<X>>& in, Pred pred,
                      const ScanPolicy& policy = kSelectPolicy) {
  static_assert(std::is_invocable_r_v<Exp<bool>, Pred, const Exp<X>&>,
                "selectIf: pred is a function of an element (Exp<X>) to Exp<bool>");
  return detail::compactGrid<X>(
      "selectIf", in,
      detail::flagsBy<X>(policy.itemsPerThread,
                         [pred](const Exp<X>& v, const EWord32&) { return pred(v); }),
      policy, false);
}

/// selectFlagged<X>(in, flags, policy): the elements in[i] whose flags[i] is not zero (flags
/// as long as in: checked at launch), in order, and their count, as selectIf.
template <KernelScalar X, KernelScalar F>
Selection<X> selectFlagged(const DPull<Exp<X>>& in, const DPull<Exp<F>>& flags,
                           const ScanPolicy& policy = kSelectPolicy) {
  detail::requireLength(len(flags) == len(in),
                        "selectFlagged: the flags are as many as the elements");
  return detail::compactGrid<X>("selectFlagged", in,
                                detail::flagsBy<X>(policy.itemsPerThread,
                                                   [flags](const Exp<X>&, const EWord32& i) {
                                                     return flags[i] != Exp<F>(F{});
                                                   }),
                                policy, false);
}

/// selectUnique<X>(in, policy): the first element of every run of equal consecutive elements
/// (CUB's DeviceSelect::Unique; `!=` tells them apart, blockFlagHeads), in order, and how many
/// runs there are, as selectIf.
template <KernelScalar X>
Selection<X> selectUnique(const DPull<Exp<X>>& in, const ScanPolicy& policy = kSelectPolicy) {
  const uint32_t seq = policy.itemsPerThread;
  return detail::compactGrid<X>(
      "selectUnique", in,
      [in, seq](const Program<Block>& p, const ThreadArray<X>& values, const EWord32& start,
                const EWord32& n, const EWord32& tile) {
        return detail::runHeads<X>(p, seq, in, values, start, n, tile);
      },
      policy, false);
}

/// partitionIf<X>(in, pred, policy): every element of `in`, those with pred(v) first in their
/// order, then the others, last first (CUB's DevicePartition::If), and how many have pred(v).
template <KernelScalar X, class Pred>
Selection<X> partitionIf(const DPull<Exp<X>>& in, Pred pred,
                         const ScanPolicy& policy = kSelectPolicy) {
  static_assert(std::is_invocable_r_v<Exp<bool>, Pred, const Exp<X>&>,
                "partitionIf: pred is a function of an element (Exp<X>) to Exp<bool>");
  return detail::compactGrid<X>(
      "partitionIf", in,
      detail::flagsBy<X>(policy.itemsPerThread,
                         [pred](const Exp<X>& v, const EWord32&) { return pred(v); }),
      policy, true);
}

/// partitionFlagged<X>(in, flags, policy): every element of `in`, those whose flag is not zero
/// first in their order, then the others, last first, and how many are flagged.
template <KernelScalar X, KernelScalar F>
Selection<X> partitionFlagged(const DPull<Exp<X>>& in, const DPull<Exp<F>>& flags,
                              const ScanPolicy& policy = kSelectPolicy) {
  detail::requireLength(len(flags) == len(in),
                        "partitionFlagged: the flags are as many as the elements");
  return detail::compactGrid<X>("partitionFlagged", in,
                                detail::flagsBy<X>(policy.itemsPerThread,
                                                   [flags](const Exp<X>&, const EWord32& i) {
                                                     return flags[i] != Exp<F>(F{});
                                                   }),
                                policy, true);
}

namespace detail {
// The element a partition writes for a value: the value itself.
struct KeepValue {
  template <class X>
  Exp<X> operator()(const Exp<X>& v, const EWord32&) const {
    return v;
  }
};
// The three-way partition (see partitionThreeWay); without `Others`, the others are not written
// (a Fused of the two parts and the counts). output(v, i) is what it writes for the value v at
// index i (an Exp<Y>; the value itself by default): top-k writes the indices of its keys.
template <class X, bool Others, class Y = X, class First, class Second, class Out = KeepValue>
auto threeWayGrid(const char* what, const DPull<Exp<X>>& in, First first, Second second,
                  const ScanPolicy& policy, Out output = {}) {
  static_assert(std::is_invocable_r_v<Exp<bool>, First, const Exp<X>&> &&
                    std::is_invocable_r_v<Exp<bool>, Second, const Exp<X>&>,
                "partitionThreeWay: first and second are functions of an element (Exp<X>) to "
                "Exp<bool>");
  const ScanShape shape = shapeOf(what, nullptr, policy);
  const uint32_t seq = policy.itemsPerThread, tileLen = shape.tile, threads = policy.threads;
  const EWord32 n = len(in);
  const EWord32 tiles = countedTiles(what, n, shape);
  const auto plus = [](const EWord64& a, const EWord64& b) { return a + b; };
  const auto low = [](const EWord64& w) { return cast<uint32_t>(w); };
  const auto high = [](const EWord64& w) { return cast<uint32_t>(w >> EWord64(32)); };
  using Part = DPush<Grid, Exp<Y>>;
  using Counts = Push<Grid, uint32_t, EWord32>;
  using Result = std::conditional_t<Others, Fused<Grid, Part, Part, Part, Counts>,
                                    Fused<Grid, Part, Part, Counts>>;
  const auto lengths = [&] {
    if constexpr (Others) {
      return std::tuple<EWord32, EWord32, EWord32, uint32_t>(n, n, n, 2u);
    } else {
      return std::tuple<EWord32, EWord32, uint32_t>(n, n, 2u);
    }
  }();
  return Result(lengths, [=](const Program<Grid>& g, const typename Result::Writers& w) {
    const Writer<Exp<Y>>& firstOut = std::get<0>(w);
    const Writer<Exp<Y>>& secondOut = std::get<1>(w);
    const Writer<EWord32>& counts = std::get < Others ? 3 : 2 > (w);
    g.distrPar(tiles, [&](const Program<Block>& p, const EWord32&) {
      shapeOf(what, &p, policy);
      const TileTicket ticket = drawTile(p, tiles);
      const TileStatus<uint64_t> status(p, shape.maxTiles, shape.delayNs, true);
      const EWord32 tile = ticket.tile;
      const EWord32 start = tile * tileLen;
      const ThreadArray<X> values = loadTile<X>(p, policy, in, n, start);
      // Per item: 1 for the first part, 2^32 for the second.
      const ThreadArray<uint64_t> parts = itemFlags<uint64_t>(
          p, seq, n, start, 0u, [&](const Program<Thread>&, uint32_t k, const EWord32&) {
            return ifThenElse(
                first(values[k]), EWord64(uint64_t{1}),
                ifThenElse(second(values[k]), EWord64(uint64_t{1} << 32), EWord64(uint64_t{0})));
          });
      const ItemsPrefix<uint64_t> block = blockScanItems(p, plus, parts);
      const EWord64 before =
          tilePrefix<uint64_t>(p, plus, 0u, ticket, block.aggregate, status,
                               [&](const Program<Thread>& t, const EWord64& inclusive) {
                                 t.cond(tile == tiles - 1u, [&](const Program<Thread>& u) {
                                   counts(u, low(inclusive), 0u);
                                   counts(u, high(inclusive), 1u);
                                 });
                               });
      endEpoch(p, ticket, tiles);
      const EWord32 here = inTile(n, start, tileLen);
      // The tile's parts side by side in shared memory: first, second, others.
      const SPull<Exp<Y>> placed = force(
          p, mkPush<Block, Exp<Y>>(tileLen, [=](const Program<Block>& q, const Writer<Exp<Y>>& wr) {
            scanOwnItems<uint64_t>(
                q, plus, 0u, parts, block, EWord32(0u), EWord64(uint64_t{0}),
                [&](const Program<Thread>& t, const EWord32& tid, uint32_t k, const EWord64& place,
                    const EWord64&) {
                  const EWord32 j = tid * seq + k;
                  const EWord32 firsts = low(block.aggregate), seconds = high(block.aggregate);
                  const Exp<bool> isFirst = parts[k] == EWord64(uint64_t{1});
                  const Exp<bool> isSecond = parts[k] != EWord64(uint64_t{0}) && !isFirst;
                  const EWord32 slot =
                      ifThenElse(isFirst, low(place),
                                 ifThenElse(isSecond, firsts + high(place),
                                            firsts + seconds + j - low(place) - high(place)));
                  const Exp<bool> kept = Others ? Exp<bool>(true) : isFirst || isSecond;
                  t.cond(j < here && kept, [&](const Program<Thread>& u) {
                    wr(u, output(values[k], start + j), slot);
                  });
                });
          }));
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        const EWord32 firsts = t.declare(low(block.aggregate));
        const EWord32 seconds = t.declare(high(block.aggregate));
        const EWord32 firstBefore = t.declare(low(before)), secondBefore = t.declare(high(before));
        for (uint32_t k = 0; k < seq; ++k) {
          const EWord32 j = tid + k * threads;
          t.cond(
              j < firsts,
              [&](const Program<Thread>& u) { firstOut(u, placed[j], firstBefore + j); },
              [&](const Program<Thread>& u) {
                u.cond(
                    j < firsts + seconds,
                    [&](const Program<Thread>& v) {
                      secondOut(v, placed[j], secondBefore + j - firsts);
                    },
                    [&](const Program<Thread>& v) {
                      if constexpr (Others) {
                        const Writer<Exp<Y>>& othersOut = std::get<2>(w);
                        v.cond(j < here, [&](const Program<Thread>& x) {
                          othersOut(x, placed[j],
                                    start - firstBefore - secondBefore + j - firsts - seconds);
                        });
                      }
                    });
              });
        }
      });
    });
  });
}
}  // namespace detail

/// partitionThreeWay<X>(in, first, second, policy): the elements with first(v), then of the
/// rest those with second(v), then the others, each part in the input's order in an array of
/// its own (CUB's three-way DevicePartition::If), and the first two parts' sizes. The two
/// counts are scanned together, packed in a u64 (each is below 2^32), whose look-back status
/// is split in two packed words (ScanShape::splitWide).
template <KernelScalar X, class First, class Second>
ThreeWayPartition<X> partitionThreeWay(const DPull<Exp<X>>& in, First first, Second second,
                                       const ScanPolicy& policy = kSelectPolicy) {
  return detail::threeWayGrid<X, true>("partitionThreeWay", in, first, second, policy);
}

namespace detail {
// A run pair: the heads so far (high word) and the bits of the value folded since the last
// head (low word).
inline EWord64 packRun(const EWord32& heads, const EWord32& bits) {
  return (cast<uint64_t>(heads) << EWord64(32)) | cast<uint64_t>(bits);
}
inline EWord32 runHeadsOf(const EWord64& w) { return cast<uint32_t>(w >> EWord64(32)); }
template <class V>
Exp<V> runValueOf(const EWord64& w) {
  return fromBits32<V>(cast<uint32_t>(w));
}
// The segmented operator on run pairs: a before b; b's value restarts where b holds a head.
template <class V, class Op>
auto runOp(Op f) {
  return [f](const EWord64& a, const EWord64& b) {
    const EWord32 bHeads = runHeadsOf(b);
    return packRun(
        runHeadsOf(a) + bHeads,
        ifThenElse(bHeads != 0u, cast<uint32_t>(b), bits32(f(runValueOf<V>(a), runValueOf<V>(b)))));
  };
}
// The run-pair scan of a tile shared by the by-key calls: the keys and values in registers,
// the run heads, each item's pair, their block scan and the tile's exclusive prefix from the
// look-back (onInclusive(t, pair) in the thread that publishes the tile's inclusive one).
template <class K>
struct RunTile {
  ThreadArray<K> keys;
  ThreadArray<uint32_t> heads;
  ThreadArray<uint64_t> pairs;
  ItemsPrefix<uint64_t> block;
  EWord64 before;
};
// Without values (runLengthEncode), every value is 1 and none is loaded.
template <class K, class V, class Op, class OnInclusive>
RunTile<K> runTile(const Program<Block>& p, const ScanPolicy& policy, const ScanShape& shape,
                   const DPull<Exp<K>>& keys, const std::optional<DPull<Exp<V>>>& values, Op f,
                   const TileTicket& ticket, const EWord32& n, OnInclusive onInclusive) {
  static_assert(sizeof(V) <= 4,
                "the by-key calls (reduceByKey, scanByKey) take values of at most 32 bits: a run's "
                "head count and value share one 64-bit look-back word");
  const uint32_t seq = policy.itemsPerThread;
  const TileStatus<uint64_t> status(p, shape.maxTiles, shape.delayNs, shape.splitWide);
  const EWord32 tile = ticket.tile;
  const EWord32 start = tile * shape.tile;
  const ThreadArray<K> keyItems = loadTile<K>(p, policy, keys, n, start);
  const ThreadArray<uint32_t> heads = runHeads<K>(p, seq, keys, keyItems, start, n, tile);
  std::optional<ThreadArray<V>> valueItems;
  if (values) valueItems.emplace(loadTile<V>(p, policy, *values, n, start));
  const ThreadArray<uint64_t> pairs = itemFlags<uint64_t>(
      p, seq, n, start, 0u, [&](const Program<Thread>&, uint32_t k, const EWord32&) {
        return packRun(heads[k], valueItems ? bits32((*valueItems)[k]) : EWord32(1u));
      });
  const auto op = runOp<V>(f);
  const ItemsPrefix<uint64_t> block = blockScanItems(p, op, pairs);
  const EWord64 before =
      tilePrefix<uint64_t>(p, op, 0u, ticket, block.aggregate, status, onInclusive);
  return {keyItems, heads, pairs, block, before};
}
}  // namespace detail

namespace detail {
// reduceByKey and runLengthEncode (no values: ones).
template <class K, class V, class Op>
KeyedRuns<K, V> runsGrid(const char* what, const DPull<Exp<K>>& keys,
                         const std::optional<DPull<Exp<V>>>& values, Op f,
                         const ScanPolicy& policy) {
  const ScanShape shape = detail::shapeOf(what, nullptr, policy);
  const uint32_t seq = policy.itemsPerThread, tileLen = shape.tile, threads = policy.threads;
  const EWord32 n = len(keys);
  const EWord32 tiles = detail::countedTiles(what, n, shape);
  using Writers = std::tuple<Writer<Exp<K>>, Writer<Exp<V>>, Writer<EWord32>>;
  return KeyedRuns<K, V>(
      std::tuple<EWord32, EWord32, uint32_t>(n, n, 1u),
      [=](const Program<Grid>& g, const Writers& w) {
        const Writer<Exp<K>>& keysOut = std::get<0>(w);
        const Writer<Exp<V>>& foldsOut = std::get<1>(w);
        const Writer<EWord32>& runs = std::get<2>(w);
        g.distrPar(tiles, [&](const Program<Block>& p, const EWord32&) {
          detail::shapeOf(what, &p, policy);
          const detail::TileTicket ticket = detail::drawTile(p, tiles);
          const EWord32 tile = ticket.tile;
          const EWord32 start = tile * tileLen;
          const detail::RunTile<K> r =
              detail::runTile<K, V>(p, policy, shape, keys, values, f, ticket, n,
                                    [&](const Program<Thread>& t, const EWord64& inclusive) {
                                      t.cond(tile == tiles - 1u, [&](const Program<Thread>& u) {
                                        runs(u, detail::runHeadsOf(inclusive), 0u);
                                      });
                                    });
          detail::endEpoch(p, ticket, tiles);
          // At each head: its key opens run h (the heads before it), and the pair before it is
          // run h - 1's fold; both meet in shared memory at the tile's run h - runsBefore.
          const SMutable<K> stagedKeys = newShared<K>(p, tileLen);
          const SMutable<V> stagedFolds = newShared<V>(p, tileLen);
          const auto op = detail::runOp<V>(f);
          detail::scanOwnItems<uint64_t>(
              p, op, 0u, r.pairs, r.block, tile, r.before,
              [&](const Program<Thread>& t, const EWord32& tid, uint32_t k,
                  const EWord64& exclusive, const EWord64& inclusive) {
                const EWord32 i = start + tid * seq + k;
                const EWord32 local = detail::runHeadsOf(exclusive) - detail::runHeadsOf(r.before);
                t.cond(r.heads[k] != 0u, [&](const Program<Thread>& u) {
                  write(u, stagedKeys, local, r.keys[k]);
                  write(u, stagedFolds, local, detail::runValueOf<V>(exclusive));
                });
                // The last element closes the last run.
                t.cond(i == n - 1u, [&](const Program<Thread>& u) {
                  foldsOut(u, detail::runValueOf<V>(inclusive), detail::runHeadsOf(inclusive) - 1u);
                });
              });
          p.sync();
          p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
            const EWord32 runsBefore = t.declare(detail::runHeadsOf(r.before));
            const EWord32 heads = t.declare(detail::runHeadsOf(r.block.aggregate));
            for (uint32_t k = 0; k < seq; ++k) {
              const EWord32 j = tid + k * threads;
              t.cond(j < heads, [&](const Program<Thread>& u) {
                keysOut(u, stagedKeys[j], runsBefore + j);
                // The array's first head closes no run.
                u.cond(runsBefore + j != 0u, [&](const Program<Thread>& v) {
                  foldsOut(v, stagedFolds[j], runsBefore + j - 1u);
                });
              });
            }
          });
        });
      });
}
}  // namespace detail

/// reduceByKey<K, V>(keys, values, f, policy): for every run of equal consecutive keys (`!=`
/// tells them apart, as selectUnique), its first key and the f-fold of its values in order
/// (CUB's DeviceReduce::ReduceByKey; f need only be associative), and the number of runs. Values
/// are at most 32 bits (the run pair's low word); keys any scalar.
template <KernelScalar K, KernelScalar V, class Op>
KeyedRuns<K, V> reduceByKey(const DPull<Exp<K>>& keys, const DPull<Exp<V>>& values, Op f,
                            const ScanPolicy& policy = kRunsPolicy) {
  static_assert(std::is_invocable_r_v<Exp<V>, Op, const Exp<V>&, const Exp<V>&>,
                "reduceByKey: f folds two values (Exp<V>) into one");
  detail::requireLength(len(values) == len(keys),
                        "reduceByKey: the values are as many as the keys");
  return detail::runsGrid<K, V>("reduceByKey", keys, values, f, policy);
}

/// runLengthEncode<X>(in, policy): the first element of every run of equal consecutive
/// elements, the run's length, and the number of runs (CUB's DeviceRunLengthEncode::Encode): a
/// reduceByKey of ones.
template <KernelScalar X>
KeyedRuns<X, uint32_t> runLengthEncode(const DPull<Exp<X>>& in,
                                       const ScanPolicy& policy = kRunsPolicy) {
  return detail::runsGrid<X, uint32_t>(
      "runLengthEncode", in, std::nullopt, [](const EWord32& a, const EWord32& b) { return a + b; },
      policy);
}

/// scanByKey<K, V>(keys, values, f, kind, init, policy): the f-scan of the values
/// restarting at every run of equal consecutive keys (CUB's DeviceScan::InclusiveScanByKey,
/// ExclusiveScanByKey): inclusive, out[i] = the fold of the values of i's run up to i; exclusive,
/// `init` at each run's first element, elsewhere init folded with the run's values before the
/// element (CUB's: init need not be f's identity).
/// Values are at most 32 bits.
template <KernelScalar K, KernelScalar V, class Op>
DPush<Grid, Exp<V>> scanByKey(const DPull<Exp<K>>& keys, const DPull<Exp<V>>& values, Op f,
                              ScanKind kind = ScanKind::Inclusive, V init = V{},
                              const ScanPolicy& policy = kRunsPolicy) {
  static_assert(std::is_invocable_r_v<Exp<V>, Op, const Exp<V>&, const Exp<V>&>,
                "scanByKey: f folds two values (Exp<V>) into one");
  const char* what = "scanByKey";
  detail::requireLength(len(values) == len(keys), "scanByKey: the values are as many as the keys");
  const ScanShape shape = detail::shapeOf(what, nullptr, policy);
  const uint32_t seq = policy.itemsPerThread, tileLen = shape.tile;
  const EWord32 n = len(keys);
  const EWord32 tiles = detail::checkedTiles(what, detail::tilesOf(n, tileLen), shape);
  return DPush<Grid, Exp<V>>(n, [=](const Program<Grid>& g, const Writer<Exp<V>>& out) {
    g.distrPar(tiles, [&](const Program<Block>& p, const EWord32&) {
      detail::shapeOf(what, &p, policy);
      const detail::TileTicket ticket = detail::drawTile(p, tiles);
      const EWord32 tile = ticket.tile;
      const EWord32 start = tile * tileLen;
      const detail::RunTile<K> r = detail::runTile<K, V>(p, policy, shape, keys, values, f, ticket,
                                                         n, detail::IgnorePrefix{});
      detail::endEpoch(p, ticket, tiles);
      const auto op = detail::runOp<V>(f);
      const SPull<Exp<V>> local = force(
          p, mkPush<Block, Exp<V>>(tileLen, [=](const Program<Block>& q, const Writer<Exp<V>>& w) {
            detail::scanOwnItems<uint64_t>(
                q, op, 0u, r.pairs, r.block, tile, r.before,
                [&](const Program<Thread>& t, const EWord32& tid, uint32_t k,
                    const EWord64& exclusive, const EWord64& inclusive) {
                  w(t,
                    kind == ScanKind::Inclusive
                        ? detail::runValueOf<V>(inclusive)
                        : ifThenElse(r.heads[k] != 0u, Exp<V>(init),
                                     f(Exp<V>(init), detail::runValueOf<V>(exclusive))),
                    tid * seq + k);
                });
          }));
      detail::storeTile(p, n, start, tileLen, [&](const Program<Thread>& u, const EWord32& j) {
        out(u, local[j], start + j);
      });
    });
  });
}

// ---------------------------------------------------------------- descriptors and ready calls
namespace device {

namespace detail {
// The fields the selections and runs share with the scan (device::Scan's, less split_wide,
// which only the by-key calls' 64-bit pairs use).
constexpr auto selectFields() {
  using Policy = ScanPolicy;
  return hana::make_tuple(
      field("threads", &Policy::threads, 32, 1024, "threads per block (whole warps)"),
      field("items", &Policy::itemsPerThread, 1, 64,
            "elements each thread holds (odd: no bank conflicts)"),
      choiceField("load", &Policy::load, Scan::kLoads,
                  "how threads get their elements (block/load_store.hpp)"),
      field("delay", &Policy::delayNs, 0, 1000000, "the look-back's back-off in ns (0: none)"),
      field("blocks", &Policy::blocksPerSm, 0, 64,
            "blocks per SM the registers must allow (0: the compiler's choice)"));
}
// A kernel of a selection or run call, kept under the call, the element types and the
// operator (op: its key; "-" for calls without one).
template <class D, class F>
Kernel selectionKernel(const Target& t, const ScanPolicy& policy, const std::string& call,
                       const std::string& op, std::vector<std::string> types, F body) {
  types.insert(types.begin(), call);
  return kernelFor<D>(t, policy, op, types, [&] {
    CaptureOptions o;
    o.minBlocksPerSm = policy.blocksPerSm;
    return capture(call, policy.threads, body, o);
  });
}
// A ready call's output of n elements: a host vector is sized to it; a device buffer must hold
// exactly that many.
template <class B>
void fitOutput(const char* what, const char* part, B& b, size_t n) {
  if constexpr (!BufferSide<std::remove_cvref_t<B>>::gpu) {
    b.resize(n);
  } else if (b.size() != n) {
    throw Error(std::string(what) + ": the " + part + " holds " + std::to_string(b.size()) +
                " elements; it must hold " + std::to_string(n));
  }
}
// An input as long as the first.
template <class B>
void sameLength(const char* what, const char* part, const B& b, size_t n) {
  if (b.size() != n) {
    throw Error(std::string(what) + ": the " + part + " are " + std::to_string(b.size()) +
                "; the input's elements " + std::to_string(n));
  }
}
}  // namespace detail

/// A predicate on elements of X: pred(Exp<X>) -> Exp<bool>.
template <class P, class X>
concept PredicateOn = std::is_invocable_r_v < Exp<bool>,
        P,
const Exp<X>& > ;

/// The selections' and partitions' descriptor (device/algorithm.hpp): compactions by u32 flags
/// with the look-back of scanAll's tiles.
struct Select {
  using Policy = ScanPolicy;                     ///< the policy type (the scan's tiles)
  static constexpr const char* name = "select";  ///< the ready calls' family
  /// Where it is declared.
  static constexpr const char* header = "obsidian/device/select.hpp";
  /// What it computes.
  static constexpr const char* summary =
      "selectIf, selectFlagged, selectUnique, partitionIf, partitionFlagged and "
      "partitionThreeWay in one pass (decoupled look-back)";
  /// The policy's fields as data.
  static constexpr auto fields() { return detail::selectFields(); }
  /// The policy table.
  static constexpr Tuned<Policy> table[] = {
      {0,
       {},
       kSelectPolicy,
       "(fallback)",
       "not measured on other architectures: sm_90's tile, its register cap as minBlocksPerSm"},
      {90,
       {},
       kSelectPolicy,
       "obsidian-bench-select --types select-if,unique,partition-if,partition-3way --only N "
       "--set threads=T --set items=S --set blocks=B --set load=L (N = 2^24, 2^28)",
       "H100, 2026-11-27, ours/CUB at 2^24 and 2^28: 128 x 17 x 8 warp-striped: select-if "
       "0.86-1.08, unique 1.10, partition-if 1.00-1.10, three-way 1.23-1.27; 128 x 15 x 8 "
       "1.15, 1.16-1.23, 1.05-1.12, 1.19-1.21 (direct loads alike); 128 x 19 x 0 1.07-1.12, "
       "1.20-1.26, 0.99-1.08, 1.47-1.48; 256 x 15 x 6 (the first tile, 48 bytes of spills) "
       "1.17-1.20, 1.17-1.18, 1.09-1.15, 1.83-1.92; 128 x 13 x 8, 128 x 23, 64 x 15, 256 x 11 x "
       "4 direct and 384 x 17 (CUB's tile) up to 2.3 (three-way)"},
  };
  /// The problem class of a selection of X.
  template <class X>
  static constexpr ProblemClass problem() {
    return {sizeof(X), OperatorClass::Any, Values::KeysOnly, Scale::Any};
  }
  /// The kernels of the ready calls: (in) -> (out, count) for if, unique and partition;
  /// (in, flags) -> (out, count) for the flagged calls; (in) -> (first, second, others, counts)
  /// for the three-way partition.
  template <class X, class Pred>
  static Kernel ifKernel(const Target& t, const Policy& policy, Pred pred, bool partition) {
    const char* call = partition ? "partitionIf" : "selectIf";
    return detail::selectionKernel<Select>(
        t, policy, call, detail::operatorKey<Pred>(), {detail::typeKey<X>()}, [=](DPull<Exp<X>> a) {
          return partition ? obsidian::partitionIf<X>(a, pred, policy)
                           : obsidian::selectIf<X>(a, pred, policy);
        });
  }
  template <class X, class F>  ///< (see ifKernel)
  static Kernel flaggedKernel(const Target& t, const Policy& policy, bool partition) {
    const char* call = partition ? "partitionFlagged" : "selectFlagged";
    return detail::selectionKernel<Select>(
        t, policy, call, "-", {detail::typeKey<X>(), detail::typeKey<F>()},
        [=](DPull<Exp<X>> a, DPull<Exp<F>> f) {
          return partition ? obsidian::partitionFlagged<X, F>(a, f, policy)
                           : obsidian::selectFlagged<X, F>(a, f, policy);
        });
  }
  template <class X>  ///< (see ifKernel)
  static Kernel uniqueKernel(const Target& t, const Policy& policy) {
    return detail::selectionKernel<Select>(
        t, policy, "selectUnique", "-", {detail::typeKey<X>()},
        [=](DPull<Exp<X>> a) { return obsidian::selectUnique<X>(a, policy); });
  }
  template <class X, class First, class Second>  ///< (see ifKernel)
  static Kernel threeWayKernel(const Target& t, const Policy& policy, First first, Second second) {
    // Both predicates name the kernel, or neither can (a predicate with state).
    const std::string a = detail::operatorKey<First>(), b = detail::operatorKey<Second>();
    return detail::selectionKernel<Select>(
        t, policy, "partitionThreeWay", a.empty() || b.empty() ? std::string() : a + "," + b,
        {detail::typeKey<X>()}, [=](DPull<Exp<X>> in) {
          return obsidian::partitionThreeWay<X>(in, first, second, policy);
        });
  }
};

/// The by-key calls' descriptor: runs of equal keys found by blockFlagHeads and scanned as
/// (heads, value) pairs in a u64 with the look-back.
struct ReduceByKey {
  using Policy = ScanPolicy;                            ///< the policy type (the scan's tiles)
  static constexpr const char* name = "reduce_by_key";  ///< the ready calls' family
  /// Where it is declared.
  static constexpr const char* header = "obsidian/device/select.hpp";
  /// What it computes.
  static constexpr const char* summary =
      "reduceByKey, runLengthEncode, inclusiveScanByKey and exclusiveScanByKey in one pass "
      "(run pairs in a u64, decoupled look-back)";
  /// The policy's fields as data.
  static constexpr auto fields() {
    return hana::append(detail::selectFields(),
                        field("split_wide", &Policy::splitWide, 0, 1,
                              "the 64-bit run pairs' status in two packed words, no fences"));
  }
  /// The policy table.
  static constexpr Tuned<Policy> table[] = {
      {0,
       {},
       kRunsPolicy,
       "(fallback)",
       "not measured on other architectures: sm_90's tile, its register cap as minBlocksPerSm"},
      {90,
       {},
       kRunsPolicy,
       "obsidian-bench-select --types rle,reduce-by-key,scan-by-key --only N --set threads=T "
       "--set items=S --set blocks=B --set load=L (N = 2^24, 2^28)",
       "H100, 2026-11-27, ours/CUB at 2^24 and 2^28 (u32 keys in runs of 1..8, f32 values): 256 "
       "x 11 x 4 direct: rle 1.44-1.52, reduce-by-key 1.08-1.11, scan-by-key 1.16-1.23; 256 x 11 "
       "direct, no cap (77 registers) 1.72-1.84, 1.29-1.30, 1.17-1.23; 256 x 13 direct 1.56-1.65, "
       "1.18-1.19, 1.26-1.32; warp-striped loads 256 x 9 (the first tile) 1.99-2.19, 1.50-1.56, "
       "1.33-1.45; 128 x 9, 11, 13 and 256 x 7 between"},
  };
  /// The problem class of runs of K keys folded with Op.
  template <class K, class Op>
  static constexpr ProblemClass problem() {
    return {sizeof(K), operatorClassOf<Op>(), Values::Pairs, Scale::Any};
  }
  /// The kernels of the ready calls: (keys, values) -> (keys, folds, runs) for reduceByKey;
  /// (in) -> (unique, lengths, runs) for runLengthEncode; (keys, values) -> out for the scans.
  template <class K, class V, class Op>
  static Kernel reduceKernel(const Target& t, const Policy& policy, Op f) {
    return detail::selectionKernel<ReduceByKey>(
        t, policy, "reduceByKey", detail::operatorKey<Op>(),
        {detail::typeKey<K>(), detail::typeKey<V>()}, [=](DPull<Exp<K>> a, DPull<Exp<V>> b) {
          return obsidian::reduceByKey<K, V>(a, b, f, policy);
        });
  }
  template <class X>  ///< (see reduceKernel)
  static Kernel encodeKernel(const Target& t, const Policy& policy) {
    return detail::selectionKernel<ReduceByKey>(
        t, policy, "runLengthEncode", "-", {detail::typeKey<X>()},
        [=](DPull<Exp<X>> a) { return obsidian::runLengthEncode<X>(a, policy); });
  }
  template <class K, class V, class Op>  ///< (see reduceKernel)
  static Kernel scanKernel(const Target& t, const Policy& policy, Op f, ScanKind kind, V init) {
    return detail::selectionKernel<ReduceByKey>(
        t, policy, kind == ScanKind::Inclusive ? "inclusiveScanByKey" : "exclusiveScanByKey",
        detail::operatorKey<Op>(),
        {detail::typeKey<K>(), detail::typeKey<V>(), detail::valueKey(init)},
        [=](DPull<Exp<K>> a, DPull<Exp<V>> b) {
          return obsidian::scanByKey<K, V>(a, b, f, kind, init, policy);
        });
  }
};

// ----- selections
/// selectIf(in, out, count, pred, options): the elements v of `in` with pred(v), in order, at
/// out[0 .. count[0] - 1], and their count in count[0] (CUB's DeviceSelect::If), on the GPU
/// for device buffers, the simulator for host vectors. `out` holds as many elements as `in`
/// (a host vector is sized so); its places from the count on are not written.
template <Buffer In, Buffer Out, class Count, class Pred>
requires SameSide<In, Out> && CountsOf<Count, In> && PredicateOn<Pred, ElementOf<In>>
void selectIf(const In& in, Out& out, Count& count, Pred pred, const Options& options = {}) {
  using X = ElementOf<In>;
  detail::fitOutput("selectIf", "output", out, in.size());
  detail::fitOutput("selectIf", "count", count, 1);
  const Target t = targetOf<In>();
  const ScanPolicy policy = policyFor<Select>(t, Select::problem<X>(), options);
  const Kernel k = Select::ifKernel<X>(t, policy, pred, false);
  launchOn(t, k, {in, out, count}, options);
}

/// selectFlagged(in, flags, out, count, options): the elements whose flag (any scalar type) is
/// not zero, as selectIf.
template <Buffer In, Buffer Flags, Buffer Out, class Count>
requires SameSide<In, Out> && CountsOf<Count, In> &&
    (BufferSide<std::remove_cvref_t<Flags>>::gpu ==
     BufferSide<std::remove_cvref_t<In>>::gpu) void selectFlagged(const In& in, const Flags& flags,
                                                                  Out& out, Count& count,
                                                                  const Options& options = {}) {
  using X = ElementOf<In>;
  using F = ElementOf<Flags>;
  detail::sameLength("selectFlagged", "flags", flags, in.size());
  detail::fitOutput("selectFlagged", "output", out, in.size());
  detail::fitOutput("selectFlagged", "count", count, 1);
  const Target t = targetOf<In>();
  const ScanPolicy policy = policyFor<Select>(t, Select::problem<X>(), options);
  const Kernel k = Select::flaggedKernel<X, F>(t, policy, false);
  launchOn(t, k, {in, flags, out, count}, options);
}

/// selectUnique(in, out, count, options): the first element of every run of equal consecutive
/// elements, as selectIf (CUB's DeviceSelect::Unique).
template <Buffer In, Buffer Out, class Count>
requires SameSide<In, Out> && CountsOf<Count, In>
void selectUnique(const In& in, Out& out, Count& count, const Options& options = {}) {
  using X = ElementOf<In>;
  detail::fitOutput("selectUnique", "output", out, in.size());
  detail::fitOutput("selectUnique", "count", count, 1);
  const Target t = targetOf<In>();
  const ScanPolicy policy = policyFor<Select>(t, Select::problem<X>(), options);
  const Kernel k = Select::uniqueKernel<X>(t, policy);
  launchOn(t, k, {in, out, count}, options);
}

/// partitionIf(in, out, count, pred, options): every element, those with pred(v) first in
/// order, then the others last first, and how many have pred(v) (CUB's DevicePartition::If).
template <Buffer In, Buffer Out, class Count, class Pred>
requires SameSide<In, Out> && CountsOf<Count, In> && PredicateOn<Pred, ElementOf<In>>
void partitionIf(const In& in, Out& out, Count& count, Pred pred, const Options& options = {}) {
  using X = ElementOf<In>;
  detail::fitOutput("partitionIf", "output", out, in.size());
  detail::fitOutput("partitionIf", "count", count, 1);
  const Target t = targetOf<In>();
  const ScanPolicy policy = policyFor<Select>(t, Select::problem<X>(), options);
  const Kernel k = Select::ifKernel<X>(t, policy, pred, true);
  launchOn(t, k, {in, out, count}, options);
}

/// partitionFlagged(in, flags, out, count, options): every element, the flagged first in
/// order, then the others last first, and how many are flagged (CUB's DevicePartition::Flagged).
template <Buffer In, Buffer Flags, Buffer Out, class Count>
requires SameSide<In, Out> && CountsOf<Count, In> &&
    (BufferSide<std::remove_cvref_t<Flags>>::gpu ==
     BufferSide<std::remove_cvref_t<In>>::gpu) void partitionFlagged(const In& in,
                                                                     const Flags& flags, Out& out,
                                                                     Count& count,
                                                                     const Options& options = {}) {
  using X = ElementOf<In>;
  using F = ElementOf<Flags>;
  detail::sameLength("partitionFlagged", "flags", flags, in.size());
  detail::fitOutput("partitionFlagged", "output", out, in.size());
  detail::fitOutput("partitionFlagged", "count", count, 1);
  const Target t = targetOf<In>();
  const ScanPolicy policy = policyFor<Select>(t, Select::problem<X>(), options);
  const Kernel k = Select::flaggedKernel<X, F>(t, policy, true);
  launchOn(t, k, {in, flags, out, count}, options);
}

/// partitionThreeWay(in, first, second, others, counts, pickFirst, pickSecond, options): the
/// elements with pickFirst(v) in `first`, of the rest those with pickSecond(v) in `second`, the
/// others in `others`, each in order from its start, and the first two parts' sizes in
/// counts[0] and counts[1] (CUB's three-way DevicePartition::If). Each output holds as many
/// elements as `in`.
template <Buffer In, Buffer Out, class Counts, class PickFirst, class PickSecond>
requires SameSide<In, Out> && CountsOf<Counts, In> && PredicateOn<PickFirst, ElementOf<In>> &&
    PredicateOn<PickSecond, ElementOf<In>>
void partitionThreeWay(const In& in, Out& first, Out& second, Out& others, Counts& counts,
                       PickFirst pickFirst, PickSecond pickSecond, const Options& options = {}) {
  using X = ElementOf<In>;
  const char* what = "partitionThreeWay";
  detail::fitOutput(what, "first part", first, in.size());
  detail::fitOutput(what, "second part", second, in.size());
  detail::fitOutput(what, "others", others, in.size());
  detail::fitOutput(what, "counts", counts, 2);
  const Target t = targetOf<In>();
  const ScanPolicy policy = policyFor<Select>(t, Select::problem<X>(), options);
  const Kernel k = Select::threeWayKernel<X>(t, policy, pickFirst, pickSecond);
  launchOn(t, k, {in, first, second, others, counts}, options);
}

// ----- runs
/// reduceByKey(keys, values, keysOut, foldsOut, runs, f, options): for every run of equal
/// consecutive keys, its first key in keysOut and the f-fold of its values in foldsOut, in run
/// order, and the number of runs in runs[0] (CUB's DeviceReduce::ReduceByKey). Values are at
/// most 32 bits; the outputs hold as many elements as the keys.
template <Buffer KIn, Buffer VIn, Buffer KOut, Buffer VOut, class Runs, class Op = Sum>
requires SameSide<KIn, KOut> && SameSide<VIn, VOut> && CountsOf<Runs, KIn> &&
    (BufferSide<std::remove_cvref_t<KIn>>::gpu == BufferSide<std::remove_cvref_t<VIn>>::gpu) &&
    OperatorOn<Op, ElementOf<VIn>> void reduceByKey(const KIn& keys, const VIn& values,
                                                    KOut& keysOut, VOut& foldsOut, Runs& runs,
                                                    Op f = {}, const Options& options = {}) {
  using K = ElementOf<KIn>;
  using V = ElementOf<VIn>;
  static_assert(sizeof(V) <= 4, "reduceByKey: values of at most 32 bits (see device/select.hpp)");
  const char* what = "reduceByKey";
  detail::sameLength(what, "values", values, keys.size());
  detail::fitOutput(what, "keys' output", keysOut, keys.size());
  detail::fitOutput(what, "folds' output", foldsOut, keys.size());
  detail::fitOutput(what, "run count", runs, 1);
  const Target t = targetOf<KIn>();
  const ScanPolicy policy = policyFor<ReduceByKey>(t, ReduceByKey::problem<K, Op>(), options);
  const Kernel k = ReduceByKey::reduceKernel<K, V>(t, policy, f);
  launchOn(t, k, {keys, values, keysOut, foldsOut, runs}, options);
}

/// runLengthEncode(in, uniqueOut, lengthsOut, runs, options): the first element of every run of
/// equal consecutive elements, the run's length (u32), and the number of runs (CUB's
/// DeviceRunLengthEncode::Encode).
template <Buffer In, Buffer Out, Buffer Lengths, class Runs>
requires SameSide<In, Out> && CountsOf<Lengths, In> && CountsOf<Runs, In>
void runLengthEncode(const In& in, Out& uniqueOut, Lengths& lengthsOut, Runs& runs,
                     const Options& options = {}) {
  using X = ElementOf<In>;
  const char* what = "runLengthEncode";
  detail::fitOutput(what, "unique output", uniqueOut, in.size());
  detail::fitOutput(what, "lengths' output", lengthsOut, in.size());
  detail::fitOutput(what, "run count", runs, 1);
  const Target t = targetOf<In>();
  const ScanPolicy policy = policyFor<ReduceByKey>(t, ReduceByKey::problem<X, Sum>(), options);
  const Kernel k = ReduceByKey::encodeKernel<X>(t, policy);
  launchOn(t, k, {in, uniqueOut, lengthsOut, runs}, options);
}

namespace detail {
template <class KIn, class VIn, class Out, class Op>
void scanByKey(const char* what, const KIn& keys, const VIn& values, Out& out, Op f, ScanKind kind,
               ElementOf<VIn> init, const Options& options) {
  using K = ElementOf<KIn>;
  using V = ElementOf<VIn>;
  static_assert(sizeof(V) <= 4, "scanByKey: values of at most 32 bits (see device/select.hpp)");
  sameLength(what, "values", values, keys.size());
  fitOutput(what, "output", out, keys.size());
  const Target t = targetOf<KIn>();
  const ScanPolicy policy = policyFor<ReduceByKey>(t, ReduceByKey::problem<K, Op>(), options);
  const Kernel k = ReduceByKey::scanKernel<K, V>(t, policy, f, kind, init);
  launchOn(t, k, {keys, values, out}, options);
}
}  // namespace detail

/// inclusiveScanByKey(keys, values, out, f, options): out[i] = the f-fold of the values of i's
/// run of equal consecutive keys up to i (CUB's DeviceScan::InclusiveScanByKey). Values are at
/// most 32 bits.
template <Buffer KIn, Buffer VIn, Buffer Out, class Op = Sum>
requires SameSide<VIn, Out> &&
    (BufferSide<std::remove_cvref_t<KIn>>::gpu == BufferSide<std::remove_cvref_t<VIn>>::gpu) &&
    OperatorOn<Op, ElementOf<VIn>> void inclusiveScanByKey(const KIn& keys, const VIn& values,
                                                           Out& out, Op f = {},
                                                           const Options& options = {}) {
  detail::scanByKey("inclusiveScanByKey", keys, values, out, f, ScanKind::Inclusive,
                    ElementOf<VIn>{}, options);
}
/// exclusiveScanByKey(keys, values, out, f, init, options): `init` at each run's first element,
/// elsewhere init folded with the run's values before i (CUB's DeviceScan::ExclusiveScanByKey;
/// init need not be f's identity).
template <Buffer KIn, Buffer VIn, Buffer Out, class Op>
requires SameSide<VIn, Out> &&
    (BufferSide<std::remove_cvref_t<KIn>>::gpu == BufferSide<std::remove_cvref_t<VIn>>::gpu) &&
    OperatorOn<Op, ElementOf<VIn>> void exclusiveScanByKey(const KIn& keys, const VIn& values,
                                                           Out& out, Op f, ElementOf<VIn> init,
                                                           const Options& options = {}) {
  detail::scanByKey("exclusiveScanByKey", keys, values, out, f, ScanKind::Exclusive, init, options);
}

// ----- on host vectors
/// The elements of host vector `in` with pred(v), in order, on the simulator.
template <KernelScalar X, PredicateOn<X> Pred>
std::vector<X> selectIf(const std::vector<X>& in, Pred pred, const Options& options = {}) {
  std::vector<X> out;
  std::vector<uint32_t> count;
  selectIf(in, out, count, pred, options);
  out.resize(count[0]);
  return out;
}
/// The first element of every run of equal consecutive elements of host vector `in`, on the
/// simulator.
template <KernelScalar X>
std::vector<X> selectUnique(const std::vector<X>& in, const Options& options = {}) {
  std::vector<X> out;
  std::vector<uint32_t> count;
  selectUnique(in, out, count, options);
  out.resize(count[0]);
  return out;
}

}  // namespace device
}  // namespace obsidian
