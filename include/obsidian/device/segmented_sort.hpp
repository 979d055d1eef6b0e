/// The device layer, segmented sort: every segment of an array sorted stably on its own by the
/// keys' radix order (CUB's DeviceSegmentedRadixSort / DeviceSegmentedSort), keys alone or with
/// values. Segment s is [offsets[s], offsets[s + 1]); one block sorts each segment:
///  - a segment that fits the block's tile (threads x items; or a second, smaller tile of
///    threads x smallItems for short ones) is loaded into thread arrays (warp-striped:
///    coalesced), sorted by blockRadixSort and stored;
///  - a longer one is sorted in place by LSD passes of the block over global memory: per digit,
///    the segment's digit counts (shared counters), their starts (a block scan), then the
///    segment's tiles in order, each ranked by the digit (blockRadixRank) and scattered after
///    the earlier tiles' keys of its digits, alternating between the output and a second
///    buffer and ending in the output.
/// One block walks a long segment alone, so a few long segments leave the GPU idle (as CUB's
/// segmented radix sort): radixSortKeys sorts one long array faster.
/// @file
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "obsidian/block/radix_sort.hpp"
#include "obsidian/capture.hpp"
#include "obsidian/device/algorithm.hpp"
#include "obsidian/device/dispatch.hpp"
#include "obsidian/device/radix_sort.hpp"

namespace obsidian {

/// The segmented sort's tile.
struct SegmentedSortPolicy {
  uint32_t threads = 256;  ///< threads per block (whole warps, at least 2^radixBits)
  uint32_t items = 8;      ///< keys each thread holds: a segment of threads x items fits a tile
  uint32_t radixBits = 8;  ///< bits a pass sorts on
  /// Keys each thread holds for a short segment (at most threads x smallItems): a second,
  /// smaller tile (0: none).
  uint32_t smallItems = 0;
  /// Blocks each SM must be able to hold (CaptureOptions::minBlocksPerSm; 0: the compiler's).
  uint32_t blocksPerSm = 0;
  /// Field by field.
  friend bool operator==(const SegmentedSortPolicy&, const SegmentedSortPolicy&) = default;
};

namespace detail {
void checkSegmentedSortPolicy(const char* what, const SegmentedSortPolicy& p);

// A segmented sort kernel's arrays of one kind: the input, the output and the second buffer.
template <class X>
struct SegmentArrays {
  DPull<Exp<X>> in;
  DMutable<X> out, alt;
};

// A long segment [first, first + count) sorted by LSD passes of block p over global memory
// (see the file's comment): pass q reads the input (the first) or the buffer the pass before
// wrote, and writes the output when an even number of passes follow it, else the second buffer.
template <RadixSortable K, class V>
void segmentPasses(const Program<Block>& p, const SegmentArrays<K>& keysIo,
                   const std::optional<SegmentArrays<V>>& valuesIo, const EWord32& first,
                   const EWord32& count, uint32_t begin, uint32_t end,
                   const SegmentedSortPolicy& policy, bool descending) {
  using Key = RadixKey<K>;
  using Bits = typename Key::Bits;
  const uint32_t threads = policy.threads, items = policy.items, tile = threads * items;
  const uint32_t passes = radixPasses(begin, end, policy.radixBits);
  const uint32_t digits = uint32_t{1} << policy.radixBits;
  const EWord32 tiles = p.declare(count / tile + cast<uint32_t>(count % tile != 0u));
  const auto place = [items](const EWord32& tid, uint32_t k) {
    return (tid / 32u) * (32u * items) + k * 32u + tid % 32u;
  };
  if (passes == 0) {  // no bits to sort on: the segment as it is
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      t.seqFor(tiles, [&](const Program<Thread>& u, const EWord32& r) {
        for (uint32_t k = 0; k < items; ++k) {
          const EWord32 j = r * tile + tid + k * threads;
          u.cond(j < count, [&](const Program<Thread>& v) {
            write(v, keysIo.out, first + j, keysIo.in[first + j]);
            if (valuesIo) write(v, valuesIo->out, first + j, valuesIo->in[first + j]);
          });
        }
      });
    });
    return;
  }
  for (uint32_t pass = 0; pass < passes; ++pass) {
    const bool toOutput = device::detail::writesOutput(pass, passes);
    const bool fromOutput = pass > 0 && device::detail::writesOutput(pass - 1, passes);
    const auto keyAt = [&](const EWord32& i) -> Exp<K> {
      if (pass == 0) return keysIo.in[i];
      return fromOutput ? keysIo.out[i] : keysIo.alt[i];
    };
    const auto valueAt = [&](const EWord32& i) -> Exp<V> {
      if (pass == 0) return valuesIo->in[i];
      return fromOutput ? valuesIo->out[i] : valuesIo->alt[i];
    };
    const DMutable<K>& keysTo = toOutput ? keysIo.out : keysIo.alt;
    const PassDigit pd = passDigit(begin, end, policy.radixBits, pass);
    const RadixDigit digit{policy.radixBits, EWord32(pd.shift), EWord32(pd.mask)};
    // The segment's count of each digit, and thread d's running place of digit d's next key.
    const SMutable<uint32_t> counts = newShared<uint32_t>(p, digits);
    zeroCounters(p, counts);
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      t.seqFor(tiles * items, [&](const Program<Thread>& u, const EWord32& r) {
        const EWord32 j = r * threads + tid;
        u.cond(j < count, [&](const Program<Thread>& v) {
          atomicAdd(v, counts, digit(Key::toBits(keyAt(first + j), descending)), 1u);
        });
      });
    });
    p.sync();
    const ThreadArray<uint32_t> totals = threadArray<uint32_t>(p, 1);
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      totals.write(t, 0, ifThenElse(tid < digits, counts[tid], EWord32(0u)));
    });
    const ThreadArray<uint32_t> running = digitStarts(p, totals);
    const SMutable<uint32_t> offsets = newShared<uint32_t>(p, digits);
    p.seqFor(tiles, [&](const Program<Block>& q, const EWord32& r) {
      const ThreadArray<Bits> keys = threadArray<Bits>(q, items);
      std::vector<ThreadArray<V>> vals;
      if (valuesIo) vals.push_back(threadArray<V>(q, items));
      q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        for (uint32_t k = 0; k < items; ++k) {
          const EWord32 j = t.declare(r * tile + place(tid, k));
          const EWord32 i = t.declare(first + ifThenElse(j < count, j, EWord32(0u)));
          // Past the segment: the last word, ranked after every real key of its digit.
          keys.write(t, k,
                     ifThenElse(j < count, Key::toBits(keyAt(i), descending), Exp<Bits>(Key::all)));
          if (valuesIo) vals[0].write(t, k, valueAt(i));
        }
      });
      const BlockRadixRanks ranks = blockRadixRank(q, keys, digit);
      // Thread d: where digit d's keys of this tile go, less their place in the tile.
      q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        t.cond(tid < digits, [&](const Program<Thread>& u) {
          write(u, offsets, tid, running[0] - ranks.starts[0]);
          running.write(u, 0, running[0] + ranks.totals[0]);
        });
      });
      q.sync();
      q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        for (uint32_t k = 0; k < items; ++k) {
          const EWord32 j = r * tile + place(tid, k);
          t.cond(j < count, [&](const Program<Thread>& u) {
            const EWord32 to =
                u.declare(first + offsets[digit(keys[k])] + rankInTile(ranks.counts, keys, tid, k));
            write(u, keysTo, to, Key::fromBits(keys[k], descending));
            if (valuesIo) write(u, toOutput ? valuesIo->out : valuesIo->alt, to, vals[0][k]);
          });
        }
      });
      q.sync();  // the tile's shared arrays are the next tile's
    });
  }
}

// The kernel's body (see the file's comment).
template <RadixSortable K, class V>
GridEffect segmentedSort(const SegmentArrays<K>& keysIo,
                         const std::optional<SegmentArrays<V>>& valuesIo,
                         const DPull<EWord32>& offsets, uint32_t begin, uint32_t end,
                         const SegmentedSortPolicy& policy, bool descending) {
  using Key = RadixKey<K>;
  using Bits = typename Key::Bits;
  const uint32_t threads = policy.threads, items = policy.items, tile = threads * items;
  const uint32_t passes = radixPasses(begin, end, policy.radixBits);
  const EWord32 n = len(keysIo.in), segments = len(offsets) - 1u;
  return effect([=](const Program<Grid>& g) {
    g.distrPar(segments, [&](const Program<Block>& p, const EWord32& s) {
      // The segment, clamped into the array: offsets out of order or range write nothing
      // outside it.
      const EWord32 first = p.declare(ifThenElse(offsets[s] < n, offsets[s], n));
      const EWord32 last = p.declare(ifThenElse(
          offsets[s + 1u] < first, first, ifThenElse(offsets[s + 1u] < n, offsets[s + 1u], n)));
      const EWord32 count = p.declare(last - first);
      // A segment of at most threads x n keys sorted in thread arrays of n items (item k of
      // thread tid: element (tid / 32) * 32n + 32k + tid % 32 of the tile, warp-striped).
      const auto inRegisters = [&](const Program<Block>& q, uint32_t n) {
        const auto place = [n](const EWord32& tid, uint32_t k) {
          return (tid / 32u) * (32u * n) + k * 32u + tid % 32u;
        };
        const ThreadArray<Bits> keys = threadArray<Bits>(q, n);
        std::vector<ThreadArray<V>> vals;
        if (valuesIo) vals.push_back(threadArray<V>(q, n));
        q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
          for (uint32_t k = 0; k < n; ++k) {
            const EWord32 j = t.declare(place(tid, k));
            const EWord32 i = t.declare(ifThenElse(j < count, first + j, EWord32(0u)));
            keys.write(
                t, k,
                ifThenElse(j < count, Key::toBits(keysIo.in[i], descending), Exp<Bits>(Key::all)));
            if (valuesIo) vals[0].write(t, k, valuesIo->in[i]);
          }
        });
        if (passes > 0) blockRadixSort(q, keys, begin, end, policy.radixBits, vals);
        q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
          for (uint32_t k = 0; k < n; ++k) {
            const EWord32 j = t.declare(place(tid, k));
            t.cond(j < count, [&](const Program<Thread>& u) {
              write(u, keysIo.out, first + j, Key::fromBits(keys[k], descending));
              if (valuesIo) write(u, valuesIo->out, first + j, vals[0][k]);
            });
          }
        });
      };
      const auto tileOrPasses = [&](const Program<Block>& q) {
        q.cond(
            count <= tile, [&](const Program<Block>& r) { inRegisters(r, items); },
            [&](const Program<Block>& r) {
              segmentPasses<K, V>(r, keysIo, valuesIo, first, count, begin, end, policy,
                                  descending);
            });
      };
      // Short segments: a smaller tile, so that a block sorts little padding.
      if (policy.smallItems != 0 && policy.smallItems < items) {
        p.cond(
            count <= threads * policy.smallItems,
            [&](const Program<Block>& q) { inRegisters(q, policy.smallItems); }, tileOrPasses);
      } else {
        tileOrPasses(p);
      }
    });
  });
}
}  // namespace detail

/// The segmented sort kernel of K keys (and V values; void for none) over bits begin .. end.
/// Parameters: the keys in, the keys out, a second buffer of as many keys, [the values in, out
/// and a second buffer,] the offsets (u32: segments + 1).
template <RadixSortable K, class V = void>
Kernel segmentedSortKernel(const SegmentedSortPolicy& policy, uint32_t begin, uint32_t end,
                           bool descending) {
  detail::checkSegmentedSortPolicy("segmentedSortKernel", policy);
  CaptureOptions options;
  options.minBlocksPerSm = policy.blocksPerSm;
  std::string name = std::string("segmentedSort_") + detail::radixTypeName<K>();
  if constexpr (!std::is_void_v<V>) name += "_" + detail::radixTypeName<V>();
  if (descending) name += "_desc";
  const auto checks = [](const EWord32& n, const EWord32& out, const EWord32& alt,
                         const EWord32& offsets) {
    detail::requireLength(out == n && alt == n,
                          "segmented sort: the output and the second buffer hold as many keys "
                          "as the input");
    detail::requireLength(offsets >= 1u, "segmented sort: offsets hold segments + 1 entries");
  };
  if constexpr (std::is_void_v<V>) {
    return capture(
        name, policy.threads,
        [=](DPull<Exp<K>> in, DMutable<K> out, DMutable<K> alt, DPull<EWord32> offsets) {
          checks(len(in), len(out), len(alt), len(offsets));
          return detail::segmentedSort<K, uint32_t>({in, out, alt}, std::nullopt, offsets, begin,
                                                    end, policy, descending);
        },
        options);
  } else {
    return capture(
        name, policy.threads,
        [=](DPull<Exp<K>> in, DMutable<K> out, DMutable<K> alt, DPull<Exp<V>> valuesIn,
            DMutable<V> valuesOut, DMutable<V> valuesAlt, DPull<EWord32> offsets) {
          checks(len(in), len(out), len(alt), len(offsets));
          detail::requireLength(
              len(valuesIn) == len(in) && len(valuesOut) == len(in) && len(valuesAlt) == len(in),
              "segmented sort: as many values as keys, in, out and second");
          return detail::segmentedSort<K, V>(
              {in, out, alt}, detail::SegmentArrays<V>{valuesIn, valuesOut, valuesAlt}, offsets,
              begin, end, policy, descending);
        },
        options);
  }
}

namespace device {

/// The segmented sort's descriptor (device/algorithm.hpp).
struct SegmentedSort {
  using Policy = SegmentedSortPolicy;                   ///< the policy type
  static constexpr const char* name = "segmentedSort";  ///< the ready calls' name
  /// Where it is declared.
  static constexpr const char* header = "obsidian/device/segmented_sort.hpp";
  /// What it computes.
  static constexpr const char* summary =
      "every segment sorted stably by radix (a block a segment: a tile in registers, or LSD "
      "passes of the block over a long segment)";
  /// The policy's fields as data.
  static constexpr auto fields() {
    return hana::make_tuple(
        field("threads", &Policy::threads, 32, 1024,
              "threads per block (whole warps, at least 2^radix_bits)"),
        field("items", &Policy::items, 1, 32, "keys each thread holds"),
        field("radix_bits", &Policy::radixBits, 1, 8, "bits a pass sorts on"),
        field("small_items", &Policy::smallItems, 0, 32,
              "keys each thread holds in the smaller tile of short segments (0: none)"),
        field("blocks", &Policy::blocksPerSm, 0, 32,
              "blocks per SM the registers must allow (0: the compiler's)"));
  }
  /// The policy table: the fallback, then rows per measured architecture.
  static constexpr Tuned<Policy> table[] = {
      {0, {}, {512, 8, 8, 2, 0}, "(fallback)", "not measured on other architectures: sm_90's row"},
      {90,
       {},
       {512, 8, 8, 2, 0},
       "obsidian-bench-segsort --runs 20 --set threads=T --set items=I --set small_items=S "
       "(bench/results/segsort-sweep-h100.txt)",
       "H100, 2026-11-27, 2^24 u32 keys against cub::DeviceSegmentedSort, ours/CUB for segments "
       "of 128, 4096, random 1..2000, 16 of 2^20, and pairs of random 1..2000: 512 x 8 with a "
       "512 x 2 tile for short segments 0.36, 0.81, 0.65, 2.38, 0.71 (the one row at or below "
       "CUB in all but the 16 long segments); 256 x 8 with 256 x 2 0.18, 2.71, 0.40, 3.51, 0.37 "
       "(4096 takes the passes); 256 x 8 alone 0.42, 2.69, 0.45, 3.33, 0.35; 512 x 8 alone 0.85, "
       "0.82, 0.89, 2.21, 0.93; 256 x 16 with 256 x 4 0.31, 0.92, 0.68, 3.27, 0.53; 512 x 16 "
       "1.81-2.10"},
  };
  /// The problem class of a sort of K keys (pairs or not).
  template <class K>
  static constexpr ProblemClass problem(bool pairs) {
    return {sizeof(K), OperatorClass::Any, pairs ? Values::Pairs : Values::KeysOnly, Scale::Any};
  }
  /// The kernel of K keys and V values (void: none) over bits begin .. end.
  template <RadixSortable K, class V>
  static Kernel kernel(const Target& t, const Policy& p, uint32_t begin, uint32_t end,
                       bool descending) {
    std::string values = "none";
    if constexpr (!std::is_void_v<V>) values = obsidian::detail::radixTypeName<V>();
    return kernelFor<SegmentedSort>(
        t, p, "segmentedSort",
        {obsidian::detail::radixTypeName<K>(), values, std::to_string(begin), std::to_string(end),
         descending ? "desc" : "asc"},
        [&] { return segmentedSortKernel<K, V>(p, begin, end, descending); });
  }
};

/// Storage a segmented sort on the GPU keeps from one call to the next: the second buffers of
/// keys and values (see Scratch).
using SegmentedSortTemp = Scratch;

namespace detail {
// The policy and bit range of a call, checked before anything runs.
struct SegmentedCall {
  SegmentedSortPolicy policy;
  uint32_t begin = 0, end = 0;
};
template <class K>
SegmentedCall segmentedCall(const char* what, const Target& t, size_t n, size_t offsets, bool pairs,
                            const RadixOrder& order, const Options& options) {
  SegmentedCall c;
  c.policy = policyFor<SegmentedSort>(t, SegmentedSort::problem<K>(pairs), options);
  obsidian::detail::checkSegmentedSortPolicy(what, c.policy);
  std::tie(c.begin, c.end) = obsidian::detail::radixRange(what, order, RadixKey<K>::bits);
  if (offsets == 0) {
    throw Error(std::string(what) +
                ": the offsets hold segments + 1 entries (segment s is "
                "offsets[s] .. offsets[s + 1]); got none");
  }
  if (n > 0xffffffffull) {
    throw Error(std::string(what) + ": at most 2^32 - 1 keys; got " + std::to_string(n));
  }
  return c;
}
// Host offsets (the simulator's) are checked: in order and within the keys.
void checkSegmentOffsets(const char* what, const std::vector<uint32_t>& offsets, size_t n);

template <class K, class V, class KB, class VB, class OB>
void segmentedSortRun(const char* what, const KB& keysIn, KB& keysOut, const VB* valuesIn,
                      VB* valuesOut, const OB& offsets, const RadixOrder& order,
                      const Options& options, SegmentedSortTemp* temp) {
  constexpr bool pairs = !std::is_void_v<V>;
  constexpr bool gpu = BufferSide<std::remove_cvref_t<KB>>::gpu;
  const size_t n = keysIn.size();
  if constexpr (pairs) {
    if (valuesIn->size() != n) {
      throw Error(std::string(what) + ": as many values as keys; got " + std::to_string(n) +
                  " keys and " + std::to_string(valuesIn->size()) + " values");
    }
  }
  const Target t = targetOf<KB>();
  const SegmentedCall c = segmentedCall<K>(what, t, n, offsets.size(), pairs, order, options);
  const Kernel k = SegmentedSort::kernel<K, V>(t, c.policy, c.begin, c.end, order.descending);
  if constexpr (gpu) {
    if (keysOut.size() != n || (pairs && valuesOut->size() != n)) {
      throw Error(std::string(what) + ": the outputs must hold as many elements as the input (" +
                  std::to_string(n) + ")");
    }
    bool same = n > 0 && keysIn.address() == keysOut.address();
    if constexpr (pairs) same = same || (n > 0 && valuesIn->address() == valuesOut->address());
    if (same) throw Error(std::string(what) + ": the output must be another buffer than the input");
    if (n == 0 || offsets.size() == 1) return;
    SegmentedSortTemp own;
    SegmentedSortTemp& storage = temp ? *temp : own;
    const size_t keyBytes = (n * sizeof(K) + 7) / 8 * 8;
    size_t valueBytes = 0;
    if constexpr (pairs) valueBytes = n * sizeof(V);
    const uint64_t base = storage.reserve(keyBytes + valueBytes);
    std::vector<KernelArg> args{keysIn, keysOut,
                                KernelArg::deviceArray(scalarTypeOf<K>, base, n, true)};
    if constexpr (pairs) {
      args.push_back(*valuesIn);
      args.push_back(*valuesOut);
      args.push_back(KernelArg::deviceArray(scalarTypeOf<V>, base + keyBytes, n, true));
    }
    args.push_back(offsets);
    launchOn(t, k, args, options);
  } else {
    checkSegmentOffsets(what, offsets, n);
    bool sameVector = &keysIn == &keysOut;
    if constexpr (pairs) sameVector = sameVector || valuesIn == valuesOut;
    if (sameVector) {
      throw Error(std::string(what) + ": the output must be another vector than the input");
    }
    keysOut.assign(n, K{});
    if constexpr (pairs) valuesOut->assign(n, V{});
    if (n == 0 || offsets.size() == 1) return;
    std::vector<K> alt(n);
    std::vector<KernelArg> args{keysIn, keysOut, alt};
    std::vector<std::conditional_t<pairs, V, uint32_t>> altValues(pairs ? n : 0);
    if constexpr (pairs) {
      args.push_back(*valuesIn);
      args.push_back(*valuesOut);
      args.push_back(altValues);
    }
    args.push_back(offsets);
    launchOn(t, k, args, options);
  }
}
}  // namespace detail

/// segmentedSortKeys(in, out, offsets, order, options, temp): every segment s of `in`, the keys
/// offsets[s] .. offsets[s + 1] - 1, sorted stably on its own (ascending, or descending, by
/// bits order.beginBit .. order.endBit of their radix order, as radixSortKeys) into the same
/// places of `out` (CUB's DeviceSegmentedRadixSort::SortKeys); out's places outside every
/// segment are not written. offsets: u32, segments + 1 entries, in order and at most the keys'
/// count (checked on the simulator; on the GPU, offsets out of order or range leave those
/// segments' places unspecified but never write outside the output). On the GPU for device
/// buffers (temp: storage kept between calls), on the simulator for host vectors (sized to the
/// input). One launch, a block a segment.
template <Buffer In, Buffer Out, Buffer Offsets>
requires SameSide<In, Out> && CountsOf<Offsets, In> && RadixSortable<ElementOf<In>>
void segmentedSortKeys(const In& in, Out& out, const Offsets& offsets, const RadixOrder& order = {},
                       const Options& options = {}, SegmentedSortTemp* temp = nullptr) {
  using K = ElementOf<In>;
  detail::segmentedSortRun<K, void, std::remove_cvref_t<In>, std::remove_cvref_t<In>>(
      "segmentedSortKeys", in, out, nullptr, nullptr, offsets, order, options, temp);
}

/// segmentedSortPairs(keysIn, keysOut, valuesIn, valuesOut, offsets, order, options, temp): the
/// keys sorted as segmentedSortKeys, each value moved with its key.
template <Buffer KIn, Buffer KOut, Buffer VIn, Buffer VOut, Buffer Offsets>
requires SameSide<KIn, KOut> && SameSide<VIn, VOut> && CountsOf<Offsets, KIn> &&
    (BufferSide<std::remove_cvref_t<KIn>>::gpu == BufferSide<std::remove_cvref_t<VIn>>::gpu) &&
    RadixSortable<ElementOf<KIn>> void segmentedSortPairs(const KIn& keysIn, KOut& keysOut,
                                                          const VIn& valuesIn, VOut& valuesOut,
                                                          const Offsets& offsets,
                                                          const RadixOrder& order = {},
                                                          const Options& options = {},
                                                          SegmentedSortTemp* temp = nullptr) {
  using K = ElementOf<KIn>;
  using V = ElementOf<VIn>;
  detail::segmentedSortRun<K, V, std::remove_cvref_t<KIn>, std::remove_cvref_t<VIn>>(
      "segmentedSortPairs", keysIn, keysOut, &valuesIn, &valuesOut, offsets, order, options, temp);
}

}  // namespace device
}  // namespace obsidian
