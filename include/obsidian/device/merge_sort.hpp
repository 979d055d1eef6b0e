/// The device layer, merge sort: keys, or key/value pairs, sorted stably by a user's comparator
/// (CUB's DeviceMergeSort), for any key type and order a radix sort cannot express. Three
/// kernels, from the block layer's merge sort (block/merge_sort.hpp):
///  1. each block sorts a tile of threads x items keys (blockMergeSort's rounds, loaded and
///     stored through shared memory so that global accesses are coalesced);
///  2. per merge pass (sorted runs of `width` keys merged pairwise, width = tile, 2 tile, ...):
///     a small kernel finds, for the start of every output tile, how many of its run pair's
///     first run come before it (mergePath over global memory);
///  3. and each block then merges its output tile: the two slices of the runs it needs into
///     shared memory, each thread its own diagonal and items.
/// Passes alternate between the output and a second buffer, ending in the output. The ready
/// calls run on the GPU (device buffers) or on the simulator (host vectors).
/// @file
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "obsidian/block/merge_sort.hpp"
#include "obsidian/capture.hpp"
#include "obsidian/device/algorithm.hpp"
#include "obsidian/device/dispatch.hpp"

namespace obsidian {

/// The merge sort's tiles.
struct MergeSortPolicy {
  uint32_t threads = 256;  ///< threads per block of every kernel
  uint32_t items = 17;     ///< keys each thread sorts and merges
  /// Blocks each SM must be able to hold (CaptureOptions::minBlocksPerSm; 0: the compiler's).
  uint32_t blocksPerSm = 0;
  /// Up to this many parts a pass (output tiles + 1), a warp searches each part's merge path
  /// (fewer dependent reads); beyond, a thread does (fewer scattered reads).
  uint32_t warpParts = 4096;
  /// Field by field.
  friend bool operator==(const MergeSortPolicy&, const MergeSortPolicy&) = default;
};

namespace detail {
void checkMergeSortPolicy(const char* what, const MergeSortPolicy& p);

// A merge sort kernel's value arrays (keys only: none).
template <class V>
struct MergeValues {
  DPull<Exp<V>> in;
  DMutable<V> out;
};

// The thread arrays' sorted tile stored at out[start ..] (at most `valid` of its elements),
// through shared memory: blocked to striped, so that each store of a warp is coalesced.
template <class X>
void storeTile(const Program<Block>& p, uint32_t threads, const ThreadArray<X>& items,
               const DMutable<X>& out, const EWord32& start, const EWord32& valid) {
  const uint32_t n = items.len();
  const SMutable<X> staged = newShared<X>(p, threads * n);
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    for (uint32_t k = 0; k < n; ++k) write(t, staged, tid * n + k, items[k]);
  });
  p.sync();
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    for (uint32_t k = 0; k < n; ++k) {
      const EWord32 j = tid + k * threads;
      t.cond(j < valid, [&](const Program<Thread>& u) { write(u, out, start + j, staged[j]); });
    }
  });
}

// Kernel 1: every tile sorted (see the file's comment).
template <class K, class V, class Less>
GridEffect mergeSortTiles(const DPull<Exp<K>>& in, const DMutable<K>& out,
                          const std::optional<MergeValues<V>>& values,
                          const MergeSortPolicy& policy, Less less) {
  const uint32_t threads = policy.threads, items = policy.items, tile = threads * items;
  const EWord32 n = len(in);
  const EWord32 tiles = n / tile + cast<uint32_t>(n % tile != 0u);
  return effect([=](const Program<Grid>& g) {
    g.distrPar(tiles, [&](const Program<Block>& p, const EWord32& bid) {
      const EWord32 start = bid * tile;
      const EWord32 valid = n - start;
      // Loaded striped (coalesced) into shared memory, read blocked into the thread arrays.
      const ThreadArray<K> keys = threadArray<K>(p, items);
      std::vector<ThreadArray<V>> vals;
      if (values) vals.push_back(threadArray<V>(p, items));
      const SMutable<K> stagedKeys = newShared<K>(p, tile);
      std::optional<SMutable<V>> stagedValues;
      if (values) stagedValues.emplace(newShared<V>(p, tile));
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        for (uint32_t k = 0; k < items; ++k) {
          const EWord32 j = tid + k * threads;
          // Past the end: any key (it sorts after the valid ones and is not stored).
          t.cond(
              j < valid,
              [&](const Program<Thread>& u) {
                write(u, stagedKeys, j, in[start + j]);
                if (values) write(u, *stagedValues, j, values->in[start + j]);
              },
              [&](const Program<Thread>& u) {
                write(u, stagedKeys, j, in[0u]);
                if (values) write(u, *stagedValues, j, values->in[0u]);
              });
        }
      });
      p.sync();
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        for (uint32_t k = 0; k < items; ++k) {
          keys.write(t, k, stagedKeys[tid * items + k]);
          if (values) vals[0].write(t, k, (*stagedValues)[tid * items + k]);
        }
      });
      p.sync();
      mergeSortTile(p, threads, keys, vals, valid, less);
      storeTile(p, threads, keys, out, start, valid);
      if (values) {
        p.sync();
        storeTile(p, threads, vals[0], values->out, start, valid);
      }
    });
  });
}

// The run pair of a merge pass that output place `pos` lies in: its start, and the ends of its
// first and second runs (runs of `width` keys; the last ones shorter).
struct RunPair {
  EWord32 start, aEnd, bEnd;
};
template <class L>
RunPair runPair(const Program<L>& t, const EWord32& pos, const EWord32& n, const EWord32& width) {
  const EWord32 start = t.declare(pos - pos % (width * 2u));
  const auto clampTo = [&](const EWord32& i) { return ifThenElse(i < n, i, n); };
  return {start, t.declare(clampTo(start + width)), t.declare(clampTo(start + width * 2u))};
}

// Kernel 2, a thread a part: parts[i] = how many of the first run of its pair come before
// output place min(i * tile, n) (i = 0 .. tiles), by mergePath.
template <class K, class Less>
GridEffect mergePartitionsByThread(const DPull<Exp<K>>& keys, const DMutable<uint32_t>& parts,
                                   const EWord32& width, const MergeSortPolicy& policy, Less less) {
  const uint32_t threads = policy.threads, tile = threads * policy.items;
  const EWord32 n = len(keys), entries = len(parts);
  return effect([=](const Program<Grid>& g) {
    g.distrPar((entries + threads - 1u) / threads,
               [&](const Program<Block>& p, const EWord32& bid) {
                 p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                   const EWord32 i = t.declare(bid * threads + tid);
                   t.cond(i < entries, [&](const Program<Thread>& u) {
                     const EWord32 at = u.declare(ifThenElse(i * tile < n, i * tile, n));
                     const RunPair r = runPair(u, at, n, width);
                     const EWord32 split = mergePath<K>(
                         u, [&](const EWord32& j) { return keys[r.start + j]; }, r.aEnd - r.start,
                         [&](const EWord32& j) { return keys[r.aEnd + j]; }, r.bEnd - r.aEnd,
                         at - r.start, less);
                     write(u, parts, i, split);
                   });
                 });
               });
  });
}

// Kernel 2, a warp a part: as mergePartitionsByThread, each warp searching the merge path 32
// probes at a time (a ballot finds the first probe past the split, and the range shrinks
// 32-fold): a search over runs of 2^23 keys waits on 5 rounds of reads instead of 23, but reads
// 64 scattered keys a round.
template <class K, class Less>
GridEffect mergePartitionsByWarp(const DPull<Exp<K>>& keys, const DMutable<uint32_t>& parts,
                                 const EWord32& width, const MergeSortPolicy& policy, Less less) {
  const uint32_t threads = policy.threads, tile = threads * policy.items, warps = threads / 32;
  const EWord32 n = len(keys), entries = len(parts);
  return effect([=](const Program<Grid>& g) {
    g.distrPar((entries + warps - 1u) / warps, [&](const Program<Block>& p, const EWord32& bid) {
      p.distrPar(warps, [&](const Program<Warp>& q, const EWord32& w) {
        const EWord32 i = q.declare(bid * warps + w);
        q.cond(i < entries, [&](const Program<Warp>& r) {
          const EWord32 at = r.declare(ifThenElse(i * tile < n, i * tile, n));
          const RunPair pair = runPair(r, at, n, width);
          const EWord32 diagonal = r.declare(at - pair.start);
          const EWord32 aLen = pair.aEnd - pair.start, bLen = pair.bEnd - pair.aEnd;
          // The split lies in lo .. hi: the first j there with b[diagonal - 1 - j] < a[j]
          // (as mergePath), or hi.
          const EWord32 lo = r.declare(ifThenElse(diagonal > bLen, diagonal - bLen, EWord32(0u)));
          const EWord32 hi = r.declare(ifThenElse(diagonal < aLen, diagonal, aLen));
          r.seqWhile(lo < hi, [&](const Program<Warp>& s) {
            const EWord32 step = s.declare((hi - lo + 31u) / 32u);
            const EWord32 past = s.declare(ballot(
                s, mkPull(32u, [&](const EWord32& lane) {
                  const EWord32 j = lo + lane * step;
                  const EWord32 c = ifThenElse(j < hi, j, hi - 1u);  // reads stay in the runs
                  return j >= hi || less(Exp<K>(keys[pair.aEnd + diagonal - 1u - c]),
                                         Exp<K>(keys[pair.start + c]));
                })));
            // Lane f's probe is the first past the split (f = 32: none is): the split is
            // after lane f - 1's probe and at most lane f's.
            const EWord32 f = s.declare(ifThenElse(past == 0u, EWord32(32u), ffs(past) - 1u));
            const EWord32 before = s.declare(lo + (f - 1u) * step + 1u);
            s.assign(hi, ifThenElse(f == 32u || lo + f * step > hi, hi, lo + f * step));
            s.assign(lo, ifThenElse(f == 0u, lo, before));
          });
          r.forAll(1u, [&](const Program<Thread>& t, const EWord32&) { write(t, parts, i, lo); });
        });
      });
    });
  });
}

// Kernel 3: each block merges its output tile (see the file's comment).
template <class K, class V, class Less>
GridEffect mergeTiles(const DPull<Exp<K>>& in, const DMutable<K>& out,
                      const std::optional<MergeValues<V>>& values,
                      const DPull<Exp<uint32_t>>& parts, const EWord32& width,
                      const MergeSortPolicy& policy, Less less) {
  const uint32_t threads = policy.threads, items = policy.items, tile = threads * items;
  const EWord32 n = len(in);
  const EWord32 tiles = n / tile + cast<uint32_t>(n % tile != 0u);
  return effect([=](const Program<Grid>& g) {
    g.distrPar(tiles, [&](const Program<Block>& p, const EWord32& bid) {
      const SMutable<K> sharedKeys = newShared<K>(p, tile);
      std::vector<SMutable<V>> sharedValues;
      if (values) sharedValues.push_back(newShared<V>(p, tile));
      // Every thread works out the tile's slices of the two runs (a few registers).
      const ThreadArray<uint32_t> slice = threadArray<uint32_t>(p, 4);  // a0, la, b0, lb
      const ThreadArray<uint32_t> where = threadArray<uint32_t>(p, 2);  // a's and b's start
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        const EWord32 pos0 = t.declare(bid * tile);
        const EWord32 pos1 = t.declare(ifThenElse(n - pos0 < EWord32(tile), n, pos0 + tile));
        const RunPair r = runPair(t, pos0, n, width);
        const EWord32 total = t.declare(r.bEnd - r.start);
        const EWord32 a0 = t.declare(parts[bid]);
        const EWord32 a1 =
            t.declare(ifThenElse(pos1 - r.start == total, r.aEnd - r.start, parts[bid + 1u]));
        const EWord32 b0 = t.declare(pos0 - r.start - a0), b1 = t.declare(pos1 - r.start - a1);
        slice.write(t, 0, a0);
        slice.write(t, 1, a1 - a0);
        slice.write(t, 2, b0);
        slice.write(t, 3, b1 - b0);
        where.write(t, 0, r.start + a0);
        where.write(t, 1, r.aEnd + b0);
        const EWord32 la = slice[1], lb = slice[3];
        for (uint32_t k = 0; k < items; ++k) {
          const EWord32 j = tid + k * threads;
          t.cond(
              j < la,
              [&](const Program<Thread>& u) {
                write(u, sharedKeys, j, in[where[0] + j]);
                if (values) write(u, sharedValues[0], j, values->in[where[0] + j]);
              },
              [&](const Program<Thread>& u) {
                u.cond(j < la + lb, [&](const Program<Thread>& v) {
                  write(v, sharedKeys, j, in[where[1] + j - la]);
                  if (values) write(v, sharedValues[0], j, values->in[where[1] + j - la]);
                });
              });
        }
      });
      p.sync();
      const ThreadArray<K> keys = threadArray<K>(p, items);
      std::vector<ThreadArray<V>> vals;
      if (values) vals.push_back(threadArray<V>(p, items));
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        const EWord32 total = t.declare(slice[1] + slice[3]);
        const EWord32 d = t.declare(ifThenElse(tid * items < total, tid * items, total));
        mergeItems(t, sharedKeys, sharedValues, EWord32(0u), slice[1], slice[3], d, keys, vals,
                   less);
      });
      p.sync();
      const EWord32 start = bid * tile;
      storeTile(p, threads, keys, out, start, n - start);
      if (values) {
        p.sync();
        storeTile(p, threads, vals[0], values->out, start, n - start);
      }
    });
  });
}

template <class V>
std::string mergeTypeName() {
  if constexpr (std::is_void_v<V>) {
    return "none";
  } else {
    return std::string(cudaTypeName(scalarTypeOf<V>));
  }
}
}  // namespace detail

/// The tile-sorting kernel of K keys (and V values; void for none) by less. Parameters: the
/// keys in, the keys out (as many), [the values in, the values out].
template <KernelScalar K, class V, ComparatorOn<K> Less>
Kernel mergeSortTilesKernel(const MergeSortPolicy& policy, Less less) {
  detail::checkMergeSortPolicy("mergeSortTilesKernel", policy);
  CaptureOptions options;
  options.minBlocksPerSm = policy.blocksPerSm;
  const std::string name =
      "mergeSortTiles_" + detail::mergeTypeName<K>() + "_" + detail::mergeTypeName<V>();
  if constexpr (std::is_void_v<V>) {
    return capture(
        name, policy.threads,
        [=](DPull<Exp<K>> in, DMutable<K> out) {
          detail::requireLength(len(out) == len(in), "merge sort: as many keys out as in");
          return detail::mergeSortTiles<K, uint32_t>(in, out, std::nullopt, policy, less);
        },
        options);
  } else {
    return capture(
        name, policy.threads,
        [=](DPull<Exp<K>> in, DMutable<K> out, DPull<Exp<V>> valuesIn, DMutable<V> valuesOut) {
          detail::requireLength(
              len(out) == len(in) && len(valuesIn) == len(in) && len(valuesOut) == len(in),
              "merge sort: as many keys and values, in and out");
          return detail::mergeSortTiles<K, V>(in, out, detail::MergeValues<V>{valuesIn, valuesOut},
                                              policy, less);
        },
        options);
  }
}

/// The partition kernel of a merge pass. Parameters: the keys (runs of `width` sorted), the
/// parts (u32, one per output tile and one more), the width (u32).
template <KernelScalar K, ComparatorOn<K> Less>
Kernel mergePartitionsKernel(const MergeSortPolicy& policy, Less less, bool byWarp) {
  detail::checkMergeSortPolicy("mergePartitionsKernel", policy);
  const uint32_t tile = policy.threads * policy.items;
  return capture(
      "mergePartitions_" + detail::mergeTypeName<K>() + (byWarp ? "_warp" : ""), policy.threads,
      [=](DPull<Exp<K>> keys, DMutable<uint32_t> parts, EWord32 width) {
        const EWord32 n = len(keys);
        detail::requireLength(len(parts) == n / tile + cast<uint32_t>(n % tile != 0u) + 1u,
                              "merge sort: a part per output tile and one more");
        detail::requireLength(width != 0u && width % tile == 0u, "merge sort: runs of whole tiles");
        return byWarp ? detail::mergePartitionsByWarp<K>(keys, parts, width, policy, less)
                      : detail::mergePartitionsByThread<K>(keys, parts, width, policy, less);
      });
}

/// The merging kernel of a merge pass. Parameters: the keys in (runs of `width` sorted), the
/// keys out, [the values in, the values out,] the parts of mergePartitionsKernel, the width.
template <KernelScalar K, class V, ComparatorOn<K> Less>
Kernel mergeTilesKernel(const MergeSortPolicy& policy, Less less) {
  detail::checkMergeSortPolicy("mergeTilesKernel", policy);
  CaptureOptions options;
  options.minBlocksPerSm = policy.blocksPerSm;
  const uint32_t tile = policy.threads * policy.items;
  const std::string name =
      "mergeTiles_" + detail::mergeTypeName<K>() + "_" + detail::mergeTypeName<V>();
  const auto checks = [=](const EWord32& n, const EWord32& outLen, const EWord32& partsLen,
                          const EWord32& width) {
    detail::requireLength(outLen == n, "merge sort: as many keys out as in");
    detail::requireLength(partsLen == n / tile + cast<uint32_t>(n % tile != 0u) + 1u,
                          "merge sort: a part per output tile and one more");
    detail::requireLength(width != 0u && width % tile == 0u, "merge sort: runs of whole tiles");
  };
  if constexpr (std::is_void_v<V>) {
    return capture(
        name, policy.threads,
        [=](DPull<Exp<K>> in, DMutable<K> out, DPull<Exp<uint32_t>> parts, EWord32 width) {
          checks(len(in), len(out), len(parts), width);
          return detail::mergeTiles<K, uint32_t>(in, out, std::nullopt, parts, width, policy, less);
        },
        options);
  } else {
    return capture(
        name, policy.threads,
        [=](DPull<Exp<K>> in, DMutable<K> out, DPull<Exp<V>> valuesIn, DMutable<V> valuesOut,
            DPull<Exp<uint32_t>> parts, EWord32 width) {
          checks(len(in), len(out), len(parts), width);
          detail::requireLength(len(valuesIn) == len(in) && len(valuesOut) == len(in),
                                "merge sort: as many values as keys, in and out");
          return detail::mergeTiles<K, V>(in, out, detail::MergeValues<V>{valuesIn, valuesOut},
                                          parts, width, policy, less);
        },
        options);
  }
}

namespace device {

/// The merge sort's descriptor (device/algorithm.hpp).
struct MergeSort {
  using Policy = MergeSortPolicy;                   ///< the policy type
  static constexpr const char* name = "mergeSort";  ///< the ready calls' name
  /// Where it is declared.
  static constexpr const char* header = "obsidian/device/merge_sort.hpp";
  /// What it computes.
  static constexpr const char* summary =
      "stable merge sort of keys or key/value pairs by a comparator (tiles sorted by blocks, "
      "then merge passes partitioned by merge path)";
  /// The policy's fields as data.
  static constexpr auto fields() {
    return hana::make_tuple(
        field("threads", &Policy::threads, 32, 1024, "threads per block (whole warps)"),
        field("items", &Policy::items, 1, 32, "keys each thread sorts and merges"),
        field("blocks", &Policy::blocksPerSm, 0, 32,
              "blocks per SM the registers must allow (0: the compiler's)"),
        field("warp_parts", &Policy::warpParts, 0, 1 << 24,
              "up to this many parts a pass, a warp searches each merge path (else a thread)"));
  }
  /// The policy table: the fallback, then rows per measured architecture.
  static constexpr Tuned<Policy> table[] = {
      {0, {}, {256, 17, 0, 4096}, "(fallback)", "not measured on other architectures: sm_90's row"},
      {90,
       {},
       {256, 17, 0, 4096},
       "obsidian-bench-mergesort --only 16777216 --types u32,pairs --runs 20 --set threads=T "
       "--set items=I (bench/results/mergesort-sweep-h100.txt for 256 x 21 and 512 x 11 at "
       "every size)",
       "H100, 2026-11-27, ours/CUB (cub::DeviceMergeSort::SortKeysCopy) at 2^24, u32 keys and "
       "pairs: 256 x 17 (CUB's tile, the full run) 1.491 and 1.316; in the sweep 256 x 11 1.475 "
       "and 1.253, 512 x 11 1.476 and 1.244, 256 x 21 1.423 and 1.295, 128 x 17 1.521 and "
       "1.294, 128 x 11 1.516 and 1.293, 256 x 15 1.594 and 1.283, 512 x 15 1.577 and 1.398, 256 "
       "x 7 1.598 and 1.269. No shape gains more than 5% on both; the row keeps CUB's tile, "
       "measured at every size (256 x 21 at every size: keys 1.39-1.47; 512 x 11: pairs "
       "1.18-1.32). warp_parts 4096 (obsidian-bench-mergesort --runs 30, every part searched by "
       "a warp against by a thread): u32 keys 1.24 against 1.47 at 2^20, 1.38 against 1.50 at "
       "2^22, 1.49 both at 2^24 (3856 parts), 1.58 against 1.46 at 2^26 and 1.59 against 1.44 "
       "at 2^28 (a warp's 64 scattered reads a round outweigh its 5 rounds against 23)"},
  };
  /// The problem class of a sort of K keys (pairs or not).
  template <class K>
  static constexpr ProblemClass problem(bool pairs) {
    return {sizeof(K), OperatorClass::Any, pairs ? Values::Pairs : Values::KeysOnly, Scale::Any};
  }
  /// The tile-sorting kernel of K keys and V values (void: none) by less.
  template <class K, class V, class Less>
  static Kernel tiles(const Target& t, const Policy& p, Less less) {
    return kernelFor<MergeSort>(
        t, p, obsidian::device::detail::operatorKey<Less>(),
        {"tiles", obsidian::detail::mergeTypeName<K>(), obsidian::detail::mergeTypeName<V>()},
        [&] { return mergeSortTilesKernel<K, V>(p, less); });
  }
  /// The partition kernel of a merge pass of K keys by less, a warp or a thread a part.
  template <class K, class Less>
  static Kernel partitions(const Target& t, const Policy& p, Less less, bool byWarp) {
    return kernelFor<MergeSort>(
        t, p, obsidian::device::detail::operatorKey<Less>(),
        {"partitions", obsidian::detail::mergeTypeName<K>(), byWarp ? "warp" : "thread"},
        [&] { return mergePartitionsKernel<K>(p, less, byWarp); });
  }
  /// The merging kernel of a merge pass of K keys and V values by less.
  template <class K, class V, class Less>
  static Kernel merge(const Target& t, const Policy& p, Less less) {
    return kernelFor<MergeSort>(
        t, p, obsidian::device::detail::operatorKey<Less>(),
        {"merge", obsidian::detail::mergeTypeName<K>(), obsidian::detail::mergeTypeName<V>()},
        [&] { return mergeTilesKernel<K, V>(p, less); });
  }
};

/// Storage a merge sort on the GPU keeps from one call to the next: the alternate keys and
/// values and the passes' parts (see Scratch).
using MergeSortTemp = Scratch;

namespace detail {
// The merge passes after the tile sort of n keys in tiles of `tile`: ceil(log2(tiles)).
inline uint32_t mergePasses(size_t n, uint32_t tile) {
  uint32_t passes = 0;
  for (size_t width = tile; width < n; width *= 2) ++passes;
  return passes;
}
// The policy of a sort of n keys, checked before anything runs.
template <class K>
MergeSortPolicy mergeCall(const char* what, const Target& t, size_t n, bool pairs,
                          const Options& options) {
  const MergeSortPolicy p = policyFor<MergeSort>(t, MergeSort::problem<K>(pairs), options);
  obsidian::detail::checkMergeSortPolicy(what, p);
  if (n > (size_t{1} << 31)) {
    throw Error(std::string(what) + ": at most 2^31 keys; got " + std::to_string(n));
  }
  return p;
}

// The keys and values a call sorts: pointers to the caller's buffers (values: void, none).
template <class KB, class VB>
struct MergeBuffers {
  const KB* keysIn;
  KB* keysOut;
  const VB* valuesIn = nullptr;
  VB* valuesOut = nullptr;
};

template <class K, class V, class KB, class VB, class Less>
void mergeSortGpu(const char* what, const MergeBuffers<KB, VB>& b, Less less,
                  const Options& options, MergeSortTemp* temp) {
  constexpr bool pairs = !std::is_void_v<V>;
  const Target t = Target::onGpu();
  const size_t n = b.keysIn->size();
  bool sameBuffer = n > 0 && b.keysIn->address() == b.keysOut->address();
  if (b.keysOut->size() != n) {
    throw Error(std::string(what) + ": the output must hold as many keys as the input; got " +
                std::to_string(n) + " in, " + std::to_string(b.keysOut->size()) + " out");
  }
  if constexpr (pairs) {
    if (b.valuesIn->size() != n || b.valuesOut->size() != n) {
      throw Error(std::string(what) + ": as many values as keys, in and out; got " +
                  std::to_string(n) + " keys, " + std::to_string(b.valuesIn->size()) +
                  " values in, " + std::to_string(b.valuesOut->size()) + " out");
    }
    sameBuffer = sameBuffer || (n > 0 && b.valuesIn->address() == b.valuesOut->address());
  }
  if (sameBuffer) {
    throw Error(std::string(what) + ": the output must be another buffer than the input");
  }
  const MergeSortPolicy p = mergeCall<K>(what, t, n, pairs, options);
  if (n == 0) return;
  const uint32_t tile = p.threads * p.items, passes = mergePasses(n, tile);
  const size_t tiles = (n + tile - 1) / tile;
  size_t valueBytes = 0;
  if constexpr (pairs) valueBytes = (n * sizeof(V) + 7) / 8 * 8;
  const size_t keyBytes = (n * sizeof(K) + 7) / 8 * 8;
  MergeSortTemp own;
  MergeSortTemp& storage = temp ? *temp : own;
  const uint64_t base = storage.reserve(keyBytes + valueBytes + (tiles + 1) * 4);
  const uint64_t altKeys = base, altValues = base + keyBytes, partsAt = altValues + valueBytes;
  Options async = options;
  async.synchronize = false;
  // Buffer of step s (0: the tile sort, then the passes): the output when passes - s is even.
  const auto keysAt = [&](uint32_t s) {
    return KernelArg::deviceArray(scalarTypeOf<K>,
                                  (passes - s) % 2 == 0 ? b.keysOut->address() : altKeys, n, true);
  };
  const auto valuesAt = [&](uint32_t s) {
    if constexpr (pairs) {
      return KernelArg::deviceArray(
          scalarTypeOf<V>, (passes - s) % 2 == 0 ? b.valuesOut->address() : altValues, n, true);
    } else {
      return KernelArg(0u);
    }
  };
  const KernelArg parts = KernelArg::deviceArray(ScalarType::U32, partsAt, tiles + 1, true);
  std::vector<KernelArg> first{*b.keysIn, keysAt(0)};
  if constexpr (pairs) {
    first.push_back(*b.valuesIn);
    first.push_back(valuesAt(0));
  }
  launchOn(t, MergeSort::tiles<K, V>(t, p, less), first, passes == 0 ? options : async);
  const Kernel partition =
      MergeSort::partitions<K>(t, p, less, (n + tile - 1) / tile + 1 <= p.warpParts);
  const Kernel merge = MergeSort::merge<K, V>(t, p, less);
  uint32_t width = tile;
  for (uint32_t s = 1; s <= passes; ++s, width *= 2) {
    launchOn(t, partition, {keysAt(s - 1), parts, width}, async);
    std::vector<KernelArg> args{keysAt(s - 1), keysAt(s)};
    if constexpr (pairs) {
      args.push_back(valuesAt(s - 1));
      args.push_back(valuesAt(s));
    }
    args.push_back(parts);
    args.push_back(width);
    launchOn(t, merge, args, s == passes ? options : async);
  }
}

template <class K, class V, class Less>
void mergeSortSim(const char* what, const std::vector<K>& keysIn, std::vector<K>& keysOut,
                  const std::vector<std::conditional_t<std::is_void_v<V>, uint32_t, V>>* valuesIn,
                  std::vector<std::conditional_t<std::is_void_v<V>, uint32_t, V>>* valuesOut,
                  Less less, const Options& options) {
  constexpr bool pairs = !std::is_void_v<V>;
  using VV = std::conditional_t<pairs, V, uint32_t>;
  const Target t = Target::simulator();
  const size_t n = keysIn.size();
  if constexpr (pairs) {
    if (valuesIn->size() != n) {
      throw Error(std::string(what) + ": as many values as keys; got " + std::to_string(n) +
                  " keys and " + std::to_string(valuesIn->size()) + " values");
    }
  }
  const MergeSortPolicy p = mergeCall<K>(what, t, n, pairs, options);
  bool sameVector = &keysIn == &keysOut;
  if constexpr (pairs) sameVector = sameVector || valuesIn == valuesOut;
  if (sameVector) {
    throw Error(std::string(what) + ": the output must be another vector than the input");
  }
  keysOut.assign(n, K{});
  if constexpr (pairs) valuesOut->assign(n, VV{});
  if (n == 0) return;
  const uint32_t tile = p.threads * p.items, passes = mergePasses(n, tile);
  std::vector<K> keys(n), alt(n);
  std::vector<VV> values(pairs ? n : 0), altValues(pairs ? n : 0);
  std::vector<KernelArg> first{keysIn, keys};
  if constexpr (pairs) {
    first.push_back(*valuesIn);
    first.push_back(values);
  }
  launchOn(t, MergeSort::tiles<K, V>(t, p, less), first, options);
  std::vector<uint32_t> parts((n + tile - 1) / tile + 1);
  const Kernel partition =
      MergeSort::partitions<K>(t, p, less, (n + tile - 1) / tile + 1 <= p.warpParts);
  const Kernel merge = MergeSort::merge<K, V>(t, p, less);
  uint32_t width = tile;
  for (uint32_t s = 1; s <= passes; ++s, width *= 2) {
    launchOn(t, partition, {keys, parts, width}, options);
    std::vector<KernelArg> args{keys, alt};
    if constexpr (pairs) {
      args.push_back(values);
      args.push_back(altValues);
    }
    args.push_back(parts);
    args.push_back(width);
    launchOn(t, merge, args, options);
    keys.swap(alt);
    if constexpr (pairs) values.swap(altValues);
  }
  keysOut = std::move(keys);
  if constexpr (pairs) *valuesOut = std::move(values);
}
}  // namespace detail

/// mergeSortKeys(in, out, less, options, temp): out = the keys of `in` sorted stably by the
/// comparator less (a strict weak order; Ascending by default, Descending, or any
/// less(Exp<K>, Exp<K>) -> Exp<bool>), on the GPU for device buffers (temp: storage kept
/// between calls, or null for the call's own), on the simulator for host vectors (sized to the
/// input). `out` must be another buffer of as many keys; at most 2^31 keys. Launches: a tile
/// sort, then two a merge pass (ceil(log2(tiles)) passes); on the GPU only the last waits
/// (options.synchronize). A comparator with state compiles new kernels each call.
template <Buffer In, Buffer Out, class Less = Ascending>
requires SameSide<In, Out> && ComparatorOn<Less, ElementOf<In>>
void mergeSortKeys(const In& in, Out& out, Less less = {}, const Options& options = {},
                   MergeSortTemp* temp = nullptr) {
  using K = ElementOf<In>;
  if constexpr (BufferSide<std::remove_cvref_t<In>>::gpu) {
    detail::mergeSortGpu<K, void>("mergeSortKeys",
                                  detail::MergeBuffers<In, In>{&in, &out, nullptr, nullptr}, less,
                                  options, temp);
  } else {
    detail::mergeSortSim<K, void>("mergeSortKeys", in, out, nullptr, nullptr, less, options);
  }
}

/// mergeSortPairs(keysIn, keysOut, valuesIn, valuesOut, less, options, temp): the keys sorted
/// as mergeSortKeys, each value moved with its key (equal keys keep their values' order).
template <Buffer KIn, Buffer KOut, Buffer VIn, Buffer VOut, class Less = Ascending>
requires SameSide<KIn, KOut> && SameSide<VIn, VOut> &&
    (BufferSide<std::remove_cvref_t<KIn>>::gpu == BufferSide<std::remove_cvref_t<VIn>>::gpu) &&
    ComparatorOn<Less, ElementOf<KIn>> void mergeSortPairs(const KIn& keysIn, KOut& keysOut,
                                                           const VIn& valuesIn, VOut& valuesOut,
                                                           Less less = {},
                                                           const Options& options = {},
                                                           MergeSortTemp* temp = nullptr) {
  using K = ElementOf<KIn>;
  using V = ElementOf<VIn>;
  if constexpr (BufferSide<std::remove_cvref_t<KIn>>::gpu) {
    detail::mergeSortGpu<K, V>(
        "mergeSortPairs", detail::MergeBuffers<KIn, VIn>{&keysIn, &keysOut, &valuesIn, &valuesOut},
        less, options, temp);
  } else {
    detail::mergeSortSim<K, V>("mergeSortPairs", keysIn, keysOut, &valuesIn, &valuesOut, less,
                               options);
  }
}

/// The keys of host vector `in` sorted stably by less, on the simulator.
template <KernelScalar K, ComparatorOn<K> Less = Ascending>
std::vector<K> mergeSortKeys(const std::vector<K>& in, Less less = {},
                             const Options& options = {}) {
  std::vector<K> out;
  mergeSortKeys(in, out, less, options);
  return out;
}

}  // namespace device
}  // namespace obsidian
