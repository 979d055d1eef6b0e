/// The device layer, radix sort: keys, or key/value pairs, sorted stably by their bits (LSD,
/// radixBits a pass), CUB's Onesweep design (Adinets and Merrill, 2022) built from the block
/// layer's radix ranking (block/radix_sort.hpp) and the scan's look-back:
///  1. one histogram kernel reads every key once and counts the digits of every pass at once
///     (shared counters per block, added into global ones);
///  2. one small kernel turns each pass's counts into the digits' starts (a block scan a pass);
///  3. per pass, one kernel: each block draws a tile (an atomic ticket), ranks its keys by the
///     pass's digit (warpDigitCounts, digitTotals), publishes its count of each digit, scans
///     them, places the keys (and values) sorted in shared memory, looks back digit by digit
///     (thread d walks the tiles before its own until one has published its inclusive count),
///     and stores each key at its digit's start plus its place in the tile.
/// The ready calls run on the GPU (device buffers) or on the simulator (host vectors).
/// @file
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "obsidian/block/radix_sort.hpp"
#include "obsidian/capture.hpp"
#include "obsidian/device/algorithm.hpp"
#include "obsidian/device/dispatch.hpp"
#include "obsidian/device/scan.hpp"

namespace obsidian {

/// The radix sort's tiles and digits.
struct RadixSortPolicy {
  uint32_t threads = 256;       ///< threads per block of the sorting passes (at least 2^radixBits)
  uint32_t items = 15;          ///< keys each thread of a sorting pass holds
  uint32_t radixBits = 8;       ///< bits per pass: 2^radixBits digits
  uint32_t histogramItems = 8;  ///< keys each thread of the histogram kernel loads in flight
  /// Blocks each SM must be able to hold in the sorting passes (CaptureOptions::minBlocksPerSm;
  /// 0: the compiler's choice).
  uint32_t blocksPerSm = 0;
  /// How a sorting pass's warps find the lanes of equal digits: ballots, and one
  /// __match_any_sync for every matchEvery-th item (0: none; warpDigitCounts).
  uint32_t matchEvery = 0;
  /// Count the tile's digits with shared atomics before ranking them, and publish the counts
  /// then (CUB's early counts): later tiles' look-backs wait less, for an atomic a key.
  bool earlyCounts = false;
  /// Field by field.
  friend bool operator==(const RadixSortPolicy&, const RadixSortPolicy&) = default;
};

/// How a radix sort orders its keys.
struct RadixOrder {
  bool descending = false;  ///< largest first (still stable: equal keys keep their order)
  uint32_t beginBit = 0;    ///< the least significant bit that is sorted on
  /// One past the most significant bit sorted on; 0 for the key's width (all its bits).
  uint32_t endBit = 0;
};

namespace detail {
void checkRadixPolicy(const char* what, const RadixSortPolicy& p);
// The order's bit range for keys of `width` bits (endBit 0: width), checked.
std::pair<uint32_t, uint32_t> radixRange(const char* what, const RadixOrder& o, uint32_t width);
// A type's short name, for kernel names.
template <class X>
std::string radixTypeName() {
  return std::string(cudaTypeName(scalarTypeOf<X>));
}
// The passes of a range: ceil((end - begin) / radixBits).
inline uint32_t radixPasses(uint32_t begin, uint32_t end, uint32_t radixBits) {
  return (end - begin + radixBits - 1) / radixBits;
}
// Pass `pass` of the range from `begin` (below `end`) in digits of radixBits: its lowest bit
// and its digit's mask (the last pass's digit may be narrower).
struct PassDigit {
  uint32_t shift, mask;
};
inline PassDigit passDigit(uint32_t begin, uint32_t end, uint32_t radixBits, uint32_t pass) {
  const uint32_t shift = begin + pass * radixBits;
  return {shift, (uint32_t{1} << std::min(radixBits, end - shift)) - 1u};
}
// The status words one pass needs for n keys: a word per tile and digit.
size_t radixStatusWords(size_t n, const RadixSortPolicy& p);

// A digit of a tile's look-back status: one packed word (packStatus, statusFlag: the scan's
// TileStatus format) of the tile's count ("aggregate") or of its count and every earlier
// tile's ("inclusive prefix"), over an array the caller keeps: each launch passes a new epoch,
// so that a word left by an earlier launch reads as not yet published.
struct DigitStatus {
  DMutable<uint64_t> words;
  EWord32 epoch;
  void publish(const Program<Thread>& t, const EWord32& word, const EWord32& value,
               bool inclusive) const {
    atomicExch(t, words, word, packStatus(value, statusFlag(epoch, inclusive)));
  }
  // The sum of the values of word tile * digits + d over the tiles before `tile` (> 0): polls
  // each until it is published in this epoch, stops at the first inclusive one.
  EWord32 lookBack(const Program<Thread>& t, const EWord32& tile, uint32_t digits,
                   const EWord32& d) const {
    const EWord32 sum = t.declare(EWord32(0u));
    const EWord32 k = t.declare(tile - 1u);
    const EBool done = t.declare(EBool(false));
    t.seqWhile(!done, [&](const Program<Thread>& s) {
      const EWord64 word = s.declare(atomicLoad(s, words, k * digits + d));
      const auto flag = [&] { return cast<uint32_t>(word); };
      s.seqWhile(statusPending(flag(), epoch), [&](const Program<Thread>& r) {
        r.assign(word, atomicLoad(r, words, k * digits + d));
      });
      s.assign(sum, sum + cast<uint32_t>(word >> EWord64(32)));
      s.assign(done, flag() == statusFlag(epoch, true));
      s.assign(k, k - 1u);
    });
    return sum;
  }
};

// The per-pass kernel's value arrays (keys only: none).
template <class V>
struct RadixValues {
  DPull<Exp<V>> in;
  DMutable<V> out;
};

// One sorting pass (see the file's comment, step 3) over keysIn into keysOut, and values.
// state holds the digits' starts of every pass (pass * digits + d) and then each pass's ticket
// (maxPasses * digits + pass); status a word per tile and digit.
template <RadixSortable K, class V>
GridEffect radixPass(const DPull<Exp<K>>& keysIn, const DMutable<K>& keysOut,
                     const std::optional<RadixValues<V>>& values, const DMutable<uint32_t>& state,
                     const DigitStatus& status, const EWord32& pass, const RadixDigit& digit,
                     uint32_t maxPasses, const RadixSortPolicy& policy, bool descending) {
  using Key = RadixKey<K>;
  using Bits = typename Key::Bits;
  const uint32_t threads = policy.threads, items = policy.items, tileLen = threads * items;
  const uint32_t digits = digit.digits();
  const EWord32 n = len(keysIn);
  const EWord32 tiles = n / tileLen + cast<uint32_t>(n % tileLen != 0u);
  return effect([=](const Program<Grid>& g) {
    g.distrPar(tiles, [&](const Program<Block>& p, const EWord32&) {
      // The tile: drawn by thread 0, kept by every thread in a register.
      const SMutable<uint32_t> drawn = newShared<uint32_t>(p, 1);
      p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
        write(t, drawn, 0u, atomicAdd(t, state, maxPasses * digits + pass, 1u));
      });
      p.sync();
      const ThreadArray<uint32_t> ticket = threadArray<uint32_t>(p, 1);
      const ThreadArray<Bits> keys = threadArray<Bits>(p, items);
      std::optional<ThreadArray<V>> vals;
      if (values) vals.emplace(threadArray<V>(p, items));
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        ticket.write(t, 0, drawn[0u]);
        const EWord32 base =
            t.declare(ticket[0] * tileLen + (tid / 32u) * (32u * items) + tid % 32u);
        for (uint32_t k = 0; k < items; ++k) {
          const EWord32 i = base + k * 32u;
          // Past the end: the last key of the order, so that the tile's real keys come first.
          keys.write(t, k,
                     ifThenElse(i < n, Key::toBits(keysIn[i], descending), Exp<Bits>(Key::all)));
          if (values) vals->write(t, k, ifThenElse(i < n, values->in[i], Exp<V>(V{})));
        }
      });
      // Each digit's count, published at once (tile 0: with the digit's start, inclusive), so
      // that later tiles' look-backs find it soon.
      const auto publish = [&](const auto& count) {
        p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
          t.cond(tid < digits, [&](const Program<Thread>& u) {
            const EWord32 c = u.declare(count(tid));
            const EWord32 word = ticket[0] * digits + tid;
            u.cond(
                ticket[0] == 0u,
                [&](const Program<Thread>& v) {
                  status.publish(v, word, state[pass * digits + tid] + c, true);
                },
                [&](const Program<Thread>& v) { status.publish(v, word, c, false); });
          });
        });
      };
      if (policy.earlyCounts) {
        // Counted with shared atomics before the (longer) ranking, as CUB's early counts.
        const SMutable<uint32_t> early = newShared<uint32_t>(p, digits);
        p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
          t.cond(tid < digits, [&](const Program<Thread>& u) { write(u, early, tid, 0u); });
        });
        p.sync();
        p.forAll(threads, [&](const Program<Thread>& t, const EWord32&) {
          for (uint32_t k = 0; k < items; ++k) atomicAdd(t, early, digit(keys[k]), 1u);
        });
        p.sync();
        publish([&](const EWord32& d) { return early[d]; });
      }
      const WarpDigitCounts counts = warpDigitCounts(p, keys, digit, policy.matchEvery);
      const ThreadArray<uint32_t> totals = digitTotals(p, counts);
      if (!policy.earlyCounts) publish([&](const EWord32&) { return totals[0]; });
      const ThreadArray<uint32_t> starts = digitStarts(p, totals);
      addDigitStarts(p, counts, starts);
      const SMutable<Bits> sortedKeys = newShared<Bits>(p, tileLen);
      std::optional<SMutable<V>> sortedValues;
      if (values) sortedValues.emplace(newShared<V>(p, tileLen));
      const SMutable<uint32_t> offsets = newShared<uint32_t>(p, digits);
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        for (uint32_t k = 0; k < items; ++k) {
          const EWord32 place = t.declare(rankInTile(counts, keys, tid, k));
          write(t, sortedKeys, place, keys[k]);
          if (values) write(t, *sortedValues, place, (*vals)[k]);
        }
        // Thread d: where digit d's keys of this tile go: the digit's start, plus every
        // earlier tile's count of it, less the tile's keys of smaller digits (their places).
        t.cond(tid < digits, [&](const Program<Thread>& u) {
          const EWord32 before = u.declare(state[pass * digits + tid]);
          u.cond(ticket[0] != 0u, [&](const Program<Thread>& v) {
            v.assign(before, status.lookBack(v, ticket[0], digits, tid));
            status.publish(v, ticket[0] * digits + tid, before + totals[0], true);
          });
          write(u, offsets, tid, before - starts[0]);
        });
      });
      p.sync();
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        const EWord32 start = t.declare(ticket[0] * tileLen);
        for (uint32_t k = 0; k < items; ++k) {
          const EWord32 j = tid + k * threads;
          t.cond(j < n - start, [&](const Program<Thread>& u) {
            const Exp<Bits> b = u.declare(sortedKeys[j]);
            const EWord32 to = u.declare(offsets[digit(b)] + j);
            write(u, keysOut, to, Key::fromBits(b, descending));
            if (values) write(u, values->out, to, (*sortedValues)[j]);
          });
        }
      });
    });
  });
}

// The histogram kernel's body: `blocks` blocks sweep the keys in chunks of threads x
// histogramItems (chunk c to block c % blocks), each key counted once per pass in shared
// counters, then added into state's first passes * digits counters.
template <RadixSortable K>
GridEffect radixHistogram(const DPull<Exp<K>>& keys, const DMutable<uint32_t>& state,
                          const EWord32& blocks, uint32_t begin, uint32_t end,
                          const RadixSortPolicy& policy, bool descending) {
  using Key = RadixKey<K>;
  const uint32_t threads = policy.threads, items = policy.histogramItems;
  const uint32_t chunk = threads * items, digits = uint32_t{1} << policy.radixBits;
  const uint32_t passes = radixPasses(begin, end, policy.radixBits);
  const EWord32 n = len(keys);
  const EWord32 chunks = n / chunk + cast<uint32_t>(n % chunk != 0u);
  return effect([=](const Program<Grid>& g) {
    g.distrPar(blocks, [&](const Program<Block>& p, const EWord32& bid) {
      const SMutable<uint32_t> counts = newShared<uint32_t>(p, passes * digits);
      zeroCounters(p, counts);
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        const EWord32 mine =
            t.declare(ifThenElse(bid < chunks, (chunks - bid + blocks - 1u) / blocks, EWord32(0u)));
        t.seqFor(mine, [&](const Program<Thread>& s, const EWord32& r) {
          const EWord32 first = s.declare((bid + r * blocks) * chunk + tid);
          std::vector<Exp<typename Key::Bits>> held;
          for (uint32_t k = 0; k < items; ++k) {
            const EWord32 i = first + k * threads;
            held.push_back(s.declare(
                ifThenElse(i < n, Key::toBits(keys[i], descending), Exp<typename Key::Bits>(0u))));
          }
          for (uint32_t k = 0; k < items; ++k) {
            s.cond(first + k * threads < n, [&](const Program<Thread>& u) {
              for (uint32_t q = 0; q < passes; ++q) {
                const PassDigit pd = passDigit(begin, end, policy.radixBits, q);
                const RadixDigit d{policy.radixBits, EWord32(pd.shift), EWord32(pd.mask)};
                atomicAdd(u, counts, q * digits + d(held[k]), 1u);
              }
            });
          }
        });
      });
      p.sync();
      addCounters(p, counts, state);
    });
  });
}
}  // namespace detail

/// The histogram kernel of a radix sort of K keys over bits begin .. end: parameters the keys,
/// the state (DMutable<u32>: passes * digits counters, zero, then the passes' tickets), and the
/// blocks of its grid (u32).
template <RadixSortable K>
Kernel radixHistogramKernel(const RadixSortPolicy& policy, uint32_t begin, uint32_t end,
                            bool descending) {
  detail::checkRadixPolicy("radixHistogramKernel", policy);
  // (named by what it computes, as the pass kernel: an exported program may hold both orders)
  const std::string name =
      std::string("radixHistogram_") + detail::radixTypeName<K>() + (descending ? "_desc" : "");
  return capture(name, policy.threads,
                 [=](DPull<Exp<K>> keys, DMutable<uint32_t> state, EWord32 blocks) {
                   return detail::radixHistogram<K>(keys, state, blocks, begin, end, policy,
                                                    descending);
                 });
}

/// The kernel that turns the histogram's counts into the digits' starts, in place: one block
/// per pass (parameter: the state).
Kernel radixStartsKernel(const RadixSortPolicy& policy, uint32_t passes);

/// The sorting pass kernel of K keys (and V values; void for none). Parameters: the keys in,
/// the keys out (as many), [the values in, the values out,] the state (starts and tickets of
/// maxPasses passes), the status (a u64 word per tile and digit), and the pass, the digit's
/// shift and mask, and the launch's epoch (u32 each).
template <RadixSortable K, class V = void>
Kernel radixPassKernel(const RadixSortPolicy& policy, uint32_t maxPasses, bool descending) {
  detail::checkRadixPolicy("radixPassKernel", policy);
  CaptureOptions options;
  options.minBlocksPerSm = policy.blocksPerSm;
  const uint32_t digits = uint32_t{1} << policy.radixBits;
  const uint32_t tileLen = policy.threads * policy.items;
  const auto checks = [=](const EWord32& n, const EWord32& outLen, const DMutable<uint32_t>& state,
                          const DMutable<uint64_t>& status, const EWord32& pass) {
    detail::requireLength(outLen == n, "radix sort: the output holds as many keys as the input");
    detail::requireLength(len(state) == maxPasses * digits + maxPasses,
                          "radix sort: the state holds " +
                              std::to_string(maxPasses * digits + maxPasses) + " counters");
    detail::requireLength(pass < maxPasses,
                          "radix sort: the pass is below " + std::to_string(maxPasses));
    detail::requireLength(n <= EWord32(UINT32_MAX - tileLen + 1u),
                          "radix sort: at most " + std::to_string(UINT32_MAX - tileLen + 1u) +
                              " keys (a tile past the last key must not wrap)");
    detail::requireLength(
        cast<uint64_t>(n / tileLen + 1u) * EWord64(uint64_t{digits}) <= cast<uint64_t>(len(status)),
        "radix sort: the status holds a word per tile and digit");
  };
  std::string name = std::string("radixPass_") + detail::radixTypeName<K>();
  if constexpr (!std::is_void_v<V>) name += "_" + detail::radixTypeName<V>();
  if (descending) name += "_desc";
  if constexpr (std::is_void_v<V>) {
    return capture(
        name, policy.threads,
        [=](DPull<Exp<K>> in, DMutable<K> out, DMutable<uint32_t> state, DMutable<uint64_t> status,
            EWord32 pass, EWord32 shift, EWord32 mask, EWord32 epoch) {
          checks(len(in), len(out), state, status, pass);
          return detail::radixPass<K, uint32_t>(in, out, std::nullopt, state, {status, epoch}, pass,
                                                {policy.radixBits, shift, mask}, maxPasses, policy,
                                                descending);
        },
        options);
  } else {
    return capture(
        name, policy.threads,
        [=](DPull<Exp<K>> in, DMutable<K> out, DPull<Exp<V>> valuesIn, DMutable<V> valuesOut,
            DMutable<uint32_t> state, DMutable<uint64_t> status, EWord32 pass, EWord32 shift,
            EWord32 mask, EWord32 epoch) {
          checks(len(in), len(out), state, status, pass);
          detail::requireLength(len(valuesIn) == len(in) && len(valuesOut) == len(in),
                                "radix sort: as many values as keys, in and out");
          return detail::radixPass<K, V>(
              in, out, detail::RadixValues<V>{valuesIn, valuesOut}, state, {status, epoch}, pass,
              {policy.radixBits, shift, mask}, maxPasses, policy, descending);
        },
        options);
  }
}

namespace device {

/// The radix sort's descriptor (device/algorithm.hpp).
struct RadixSort {
  using Policy = RadixSortPolicy;                   ///< the policy type
  static constexpr const char* name = "radixSort";  ///< the ready calls' name
  /// Where it is declared.
  static constexpr const char* header = "obsidian/device/radix_sort.hpp";
  /// What it computes.
  static constexpr const char* summary =
      "stable LSD radix sort of keys or key/value pairs (Onesweep: one histogram, one kernel a "
      "digit with decoupled look-back)";
  /// The policy's fields as data.
  static constexpr auto fields() {
    return hana::make_tuple(
        field("threads", &Policy::threads, 32, 1024,
              "threads per block of a sorting pass (whole warps, at least 2^radix_bits)"),
        field("items", &Policy::items, 1, 32, "keys each thread of a sorting pass holds"),
        field("radix_bits", &Policy::radixBits, 1, 8, "bits a pass sorts on"),
        field("histogram_items", &Policy::histogramItems, 1, 32,
              "keys each thread of the histogram loads in flight"),
        field("blocks", &Policy::blocksPerSm, 0, 32,
              "blocks per SM the sorting pass's registers must allow (0: the compiler's)"),
        field("match_every", &Policy::matchEvery, 0, 32,
              "every how many items a warp matches digits with one __match_any_sync instead of "
              "ballots (0: never)"),
        field("early_counts", &Policy::earlyCounts, 0, 1,
              "count the tile's digits with shared atomics and publish them before ranking"));
  }
  /// The policy table: the fallback, then rows per measured architecture and key size.
  static constexpr Tuned<Policy> table[] = {
      {0,
       {},
       {256, 15, 8, 8, 0, 0, false},
       "(fallback)",
       "not measured: CUB's Onesweep digits (8 bits) and a tile of 256 x 15 keys"},
      {90,
       {},
       {512, 13, 8, 8, 0, 0, true},
       "obsidian-bench-sort --types u32 --only N --set threads=T --set items=I --set "
       "match_every=M --set early_counts=E (N = 2^24, 2^28; bench/results/sort-sweep-h100.txt)",
       "H100, 2026-11-27, u32 keys against cub::DeviceRadixSort::SortKeys, 8 shapes: 512 x 13 "
       "with early counts the best ratio over both sizes (1.048 and 1.355 of CUB; 514 and 7468 "
       "us), but CUB took 491 us at 2^24 in that run against 427-432 in the others: by our time "
       "alone 512 x 15 with a match every 5 items and early counts was 1-2% faster (507 and "
       "7308 us); 256 x 15 without early counts 515 and 7409 us; 384 x 15 565 and 8118; 512 x "
       "17 646 and 9647. Before: __match_any_sync for every item "
       "1.77 and 2.08 (the shared-memory pipe 77% busy, Nsight Compute). Measured on uniform "
       "u32 keys only: f32 keys of a narrow exponent range run 1.6-1.8x CUB with this row "
       "(bench/RESULTS.md, 'Radix sort')"},
  };
  /// The histogram kernel of K keys over bits begin .. end.
  template <RadixSortable K>
  static Kernel histogram(const Target& t, const Policy& p, uint32_t begin, uint32_t end,
                          bool descending) {
    return kernelFor<RadixSort>(t, p, "histogram",
                                {obsidian::detail::radixTypeName<K>(), std::to_string(begin),
                                 std::to_string(end), descending ? "desc" : "asc"},
                                [&] { return radixHistogramKernel<K>(p, begin, end, descending); });
  }
  /// The kernel of the digits' starts of `passes` passes.
  static Kernel starts(const Target& t, const Policy& p, uint32_t passes) {
    return kernelFor<RadixSort>(t, p, "starts", {std::to_string(passes)},
                                [&] { return radixStartsKernel(p, passes); });
  }
  /// The sorting pass kernel of K keys and V values (void: none).
  template <RadixSortable K, class V>
  static Kernel pass(const Target& t, const Policy& p, uint32_t maxPasses, bool descending) {
    std::string values = "none";
    if constexpr (!std::is_void_v<V>) values = obsidian::detail::radixTypeName<V>();
    return kernelFor<RadixSort>(t, p, "pass",
                                {obsidian::detail::radixTypeName<K>(), values,
                                 std::to_string(maxPasses), descending ? "desc" : "asc"},
                                [&] { return radixPassKernel<K, V>(p, maxPasses, descending); });
  }
};

/// Storage a radix sort on the GPU keeps from one call to the next (CUB's temporary storage):
/// the alternate keys and values, the digits' counts and the look-back status. Passing the same
/// one to every call saves its allocation and zeroing; calls that share one must not overlap.
/// A call without one makes its own.
class RadixSortTemp {
 public:
  /// The bytes held now.
  size_t bytes() const { return words_ ? words_->size() * 8 : 0; }

  /// @cond INTERNAL
  // Where a call's storage is: the look-back status (`statusWords` 64-bit words), then `rest`
  // words, of which the first `state` are zero; and the first epoch of the call's passes.
  struct Reserved {
    uint32_t epoch;
    uint64_t status;
    size_t statusWords;
    uint64_t rest;
  };
  // Room for at least `status` status words (zeroed when allocated, or when the epochs of
  // `passes` more passes would run out) and `rest` words after them.
  Reserved reserve(size_t status, size_t rest, size_t state, uint32_t passes,
                   const gpu::Stream* stream);
  /// @endcond

 private:
  std::optional<gpu::DeviceBuffer<uint64_t>> words_;
  size_t status_ = 0;  // the status words at the start of words_
  uint32_t epoch_ = 1;
};

namespace detail {
// The policy and range of a sort, everything checked before anything runs.
struct RadixCall {
  RadixSortPolicy policy;
  uint32_t begin = 0, end = 0, passes = 0, maxPasses = 0;
};
RadixCall radixCall(const char* what, const Target& t, size_t n, uint32_t keyBits,
                    uint32_t keyBytes, bool pairs, const RadixOrder& order, const Options& options);
// The sort's grid state: passes * digits starts, then a ticket per pass.
inline size_t radixStateWords(const RadixCall& c) {
  return size_t{c.maxPasses} * ((size_t{1} << c.policy.radixBits) + 1);
}
// A kernel copying n elements (a sort over no bits).
template <class X>
Kernel radixCopyKernel() {
  return memoKernel("radixCopy|" + typeKey<X>(), [] {
    return capture("radixCopy_" + obsidian::detail::radixTypeName<X>(), 256,
                   [](DPull<Exp<X>> in) { return push<Grid>(in); });
  });
}

// Where a pass writes: the last pass writes the output, the others alternate before it.
inline bool writesOutput(uint32_t pass, uint32_t passes) { return (passes - 1 - pass) % 2 == 0; }

// A pair sort's value buffers (void: a sort of keys alone, none).
template <class B>
struct RadixValueBuffers {
  const B* in = nullptr;
  B* out = nullptr;
};
struct NoValues {};

// A sort's arrays on the GPU: the addresses of n keys (and values) in and out.
struct RadixArrays {
  uint64_t keysIn = 0, keysOut = 0, valuesIn = 0, valuesOut = 0;
  size_t n = 0;
};

// The GPU sort over arrays already checked (sizes agree; out is not in): V is void, or any
// type of V's size (values are moved, never read).
template <class K, class V>
void radixSortAt(const char* what, const RadixArrays& a, const RadixOrder& order,
                 const Options& options, RadixSortTemp* temp) {
  constexpr bool pairs = !std::is_void_v<V>;
  const Target t = Target::onGpu();
  const size_t n = a.n;
  const RadixCall c = radixCall(what, t, n, RadixKey<K>::bits, sizeof(K), pairs, order, options);
  if (n == 0) return;
  Options async = options;
  async.synchronize = false;
  const auto keysAt = [&](uint64_t address, bool writable) {
    return KernelArg::deviceArray(scalarTypeOf<K>, address, n, writable);
  };
  [[maybe_unused]] const auto valuesAt = [&](uint64_t address, bool writable) {
    if constexpr (pairs) return KernelArg::deviceArray(scalarTypeOf<V>, address, n, writable);
    return KernelArg(0u);
  };
  if (c.passes == 0) {  // no bits to sort on: the keys (and values) as they are
    launchOn(t, radixCopyKernel<K>(), {keysAt(a.keysIn, false), keysAt(a.keysOut, true)},
             pairs ? async : options);
    if constexpr (pairs) {
      launchOn(t, radixCopyKernel<V>(), {valuesAt(a.valuesIn, false), valuesAt(a.valuesOut, true)},
               options);
    }
    return;
  }
  // The words: status, state, alternate keys, alternate values.
  const size_t status = obsidian::detail::radixStatusWords(n, c.policy), state = radixStateWords(c);
  const size_t stateWords = (state + 1) / 2, keyWords = (n * sizeof(K) + 7) / 8;
  size_t valueWords = 0;
  if constexpr (pairs) valueWords = (n * sizeof(V) + 7) / 8;
  RadixSortTemp own;
  RadixSortTemp& storage = temp ? *temp : own;
  const RadixSortTemp::Reserved r = storage.reserve(status, stateWords + keyWords + valueWords,
                                                    stateWords, c.passes, options.stream);
  const uint32_t epoch = r.epoch;
  const uint64_t stateAt = r.rest, altKeys = stateAt + stateWords * 8;
  const uint64_t altValues = altKeys + keyWords * 8;
  const KernelArg statusArg =
      KernelArg::deviceArray(ScalarType::U64, r.status, r.statusWords, true);
  const KernelArg stateArg = KernelArg::deviceArray(ScalarType::U32, stateAt, state, true);
  const Kernel h = RadixSort::histogram<K>(t, c.policy, c.begin, c.end, order.descending);
  const uint32_t blocks = options.blocks ? options.blocks : gpu::occupancyBlocks(h);
  launchOn(t, h, {keysAt(a.keysIn, false), stateArg, blocks}, async);
  launchOn(t, RadixSort::starts(t, c.policy, c.passes), {stateArg}, async);
  const Kernel k = RadixSort::pass<K, V>(t, c.policy, c.maxPasses, order.descending);
  for (uint32_t pass = 0; pass < c.passes; ++pass) {
    const auto [shift, mask] =
        obsidian::detail::passDigit(c.begin, c.end, c.policy.radixBits, pass);
    const bool out = writesOutput(pass, c.passes);
    std::vector<KernelArg> args{
        pass == 0 ? keysAt(a.keysIn, false) : keysAt(out ? altKeys : a.keysOut, true),
        keysAt(out ? a.keysOut : altKeys, true)};
    if constexpr (pairs) {
      args.push_back(pass == 0 ? valuesAt(a.valuesIn, false)
                               : valuesAt(out ? altValues : a.valuesOut, true));
      args.push_back(valuesAt(out ? a.valuesOut : altValues, true));
    }
    for (const KernelArg& arg : {stateArg, statusArg, KernelArg(pass), KernelArg(shift),
                                 KernelArg(mask), KernelArg(epoch + pass)}) {
      args.push_back(arg);
    }
    launchOn(t, k, args, pass + 1 == c.passes ? options : async);
  }
}

template <class K, class V, class Values>
void radixSortGpu(const char* what, const gpu::DeviceBuffer<K>& keysIn,
                  gpu::DeviceBuffer<K>& keysOut, const Values& values, const RadixOrder& order,
                  const Options& options, RadixSortTemp* temp) {
  constexpr bool pairs = !std::is_void_v<V>;
  const size_t n = keysIn.size();
  bool sameBuffer = n > 0 && keysIn.address() == keysOut.address();
  RadixArrays arrays{keysIn.address(), keysOut.address(), 0, 0, n};
  if constexpr (pairs) {
    if (keysOut.size() != n || values.in->size() != n || values.out->size() != n) {
      throw Error(std::string(what) + ": the keys and values, in and out, must be as many; got " +
                  std::to_string(n) + " keys in, " + std::to_string(keysOut.size()) + " out, " +
                  std::to_string(values.in->size()) + " values in, " +
                  std::to_string(values.out->size()) + " out");
    }
    sameBuffer = sameBuffer || (n > 0 && values.in->address() == values.out->address());
    arrays.valuesIn = values.in->address();
    arrays.valuesOut = values.out->address();
  } else if (keysOut.size() != n) {
    throw Error(std::string(what) + ": the output must hold as many keys as the input; got " +
                std::to_string(n) + " in, " + std::to_string(keysOut.size()) + " out");
  }
  if (sameBuffer) {
    throw Error(std::string(what) + ": the output must be another buffer than the input");
  }
  radixSortAt<K, V>(what, arrays, order, options, temp);
}

template <class K, class V, class Values>
void radixSortSim(const char* what, const std::vector<K>& keysIn, std::vector<K>& keysOut,
                  const Values& values, const RadixOrder& order, const Options& options) {
  constexpr bool pairs = !std::is_void_v<V>;
  const Target t = Target::simulator();
  const size_t n = keysIn.size();
  if constexpr (pairs) {
    if (values.in->size() != n) {
      throw Error(std::string(what) + ": as many values as keys; got " + std::to_string(n) +
                  " keys and " + std::to_string(values.in->size()) + " values");
    }
  }
  const RadixCall c = radixCall(what, t, n, RadixKey<K>::bits, sizeof(K), pairs, order, options);
  keysOut.assign(keysIn.begin(), keysIn.end());
  if constexpr (pairs) values.out->assign(values.in->begin(), values.in->end());
  if (n == 0 || c.passes == 0) return;
  std::vector<uint32_t> state(radixStateWords(c), 0);
  std::vector<uint64_t> status(obsidian::detail::radixStatusWords(n, c.policy), 0);
  const Kernel h = RadixSort::histogram<K>(t, c.policy, c.begin, c.end, order.descending);
  launchOn(t, h, {keysIn, state, options.blocks ? options.blocks : 3u}, options);
  launchOn(t, RadixSort::starts(t, c.policy, c.passes), {state}, options);
  const Kernel k = RadixSort::pass<K, V>(t, c.policy, c.maxPasses, order.descending);
  std::vector<K> from = keysIn;
  for (uint32_t pass = 0; pass < c.passes; ++pass) {
    const auto [shift, mask] =
        obsidian::detail::passDigit(c.begin, c.end, c.policy.radixBits, pass);
    std::vector<KernelArg> args{KernelArg(from), KernelArg(keysOut)};
    std::vector<std::conditional_t<pairs, V, uint32_t>> fromValues;
    if constexpr (pairs) {
      fromValues = *values.out;  // the last pass's result (the input before the first)
      args.push_back(KernelArg(fromValues));
      args.push_back(KernelArg(*values.out));
    }
    for (const KernelArg& a : {KernelArg(state), KernelArg(status), KernelArg(pass),
                               KernelArg(shift), KernelArg(mask), KernelArg(pass + 1u)}) {
      args.push_back(a);
    }
    launchOn(t, k, args, options);
    from = keysOut;
  }
}
}  // namespace detail

/// radixSortKeys(in, out, order, options, temp): out = the keys of `in` sorted stably
/// (ascending, or descending), by bits order.beginBit .. order.endBit of their order-preserving
/// words (RadixKey): on the GPU for device buffers (temp: storage kept between calls, or null
/// for storage of the call's own), on the simulator for host vectors (temp is not used; options.
/// simulated receives the last pass's counts). `out` must be another buffer of as many keys. At
/// most 2^32 - a tile's keys. Launches: a histogram, the digits' starts, then one a pass of
/// policy.radixBits bits; on the GPU only the last waits (options.synchronize).
template <Buffer In, Buffer Out>
requires SameSide<In, Out> && RadixSortable<ElementOf<In>>
void radixSortKeys(const In& in, Out& out, const RadixOrder& order = {},
                   const Options& options = {}, RadixSortTemp* temp = nullptr) {
  using K = ElementOf<In>;
  if constexpr (BufferSide<std::remove_cvref_t<In>>::gpu) {
    detail::radixSortGpu<K, void>("radixSortKeys", in, out, detail::NoValues{}, order, options,
                                  temp);
  } else {
    detail::radixSortSim<K, void>("radixSortKeys", in, out, detail::NoValues{}, order, options);
  }
}

/// radixSortPairs(keysIn, keysOut, valuesIn, valuesOut, order, options): the keys sorted as
/// radixSortKeys, each value moved with its key (equal keys keep their values' order).
template <Buffer KIn, Buffer KOut, Buffer VIn, Buffer VOut>
requires SameSide<KIn, KOut> && SameSide<VIn, VOut> &&
    (BufferSide<std::remove_cvref_t<KIn>>::gpu == BufferSide<std::remove_cvref_t<VIn>>::gpu) &&
    RadixSortable<ElementOf<KIn>> void radixSortPairs(const KIn& keysIn, KOut& keysOut,
                                                      const VIn& valuesIn, VOut& valuesOut,
                                                      const RadixOrder& order = {},
                                                      const Options& options = {},
                                                      RadixSortTemp* temp = nullptr) {
  using K = ElementOf<KIn>;
  using V = ElementOf<VIn>;
  if constexpr (BufferSide<std::remove_cvref_t<KIn>>::gpu) {
    detail::radixSortGpu<K, V>("radixSortPairs", keysIn, keysOut,
                               detail::RadixValueBuffers<VIn>{&valuesIn, &valuesOut}, order,
                               options, temp);
  } else {
    detail::radixSortSim<K, V>("radixSortPairs", keysIn, keysOut,
                               detail::RadixValueBuffers<VIn>{&valuesIn, &valuesOut}, order,
                               options);
  }
}

/// The keys of host vector `in` sorted, on the simulator.
template <RadixSortable K>
std::vector<K> radixSortKeys(const std::vector<K>& in, const RadixOrder& order = {},
                             const Options& options = {}) {
  std::vector<K> out;
  radixSortKeys(in, out, order, options);
  return out;
}

}  // namespace device
}  // namespace obsidian
