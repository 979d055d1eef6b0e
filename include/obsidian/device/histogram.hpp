/// Device histogram with even bins (as cub::DeviceHistogram::HistogramEven): counts of u8, u16,
/// u32 or f32 samples in `bins` equal bins over [lower, upper). Two ways in:
///  - building blocks for a kernel of one's own: EvenBinning (which bin a sample falls in),
///    SharedHistogram (a block's privatized counters in shared memory), blockHistogram (a
///    block's samples added into them) and addToGlobal (a block's counters added into a global
///    DMutable histogram with atomics);
///  - histogramEven: the whole device-wide computation, on the GPU (device buffers, optionally on
///    a stream) or on the simulator (host arrays), its kernel captured once per (sample type,
///    bins, policy).
/// The kernel: an occupancy-sized grid; each block zeroes a histogram in shared memory, sweeps
/// its share of the input with 16-byte loads (u8 and u16 samples are read as packed 32-bit
/// words, four or two samples to a word), counts with shared atomics, then adds its counters
/// into the global bins with one atomic per non-zero bin.
/// @file
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "obsidian/capture.hpp"
#include "obsidian/device/algorithm.hpp"
#include "obsidian/device/dispatch.hpp"
#include "obsidian/device/policy.hpp"
#include "obsidian/library.hpp"
#include "obsidian/runtime.hpp"
#include "obsidian/sim.hpp"
#include "obsidian/vector_load.hpp"

namespace obsidian {

// ------------------------------------------------------------------ policy
/// How histogramEven's kernel counts: its blocks, its loads in flight and its privatized copies.
struct HistogramPolicy {
  uint32_t threads = 256;  ///< threads per block
  uint32_t vectors = 4;    ///< 16-byte vectors each thread loads before counting them (in flight)
  /// Copies of the block's histogram, interleaved (counter bin * copies + lane % copies): with
  /// 32, the lanes of a warp never hit the same counter or bank, even on constant data. A power
  /// of two up to 32; halved while bins * copies counters exceed sharedBudget.
  uint32_t copies = 32;
  uint32_t sharedBudget = 32 * 1024;  ///< bytes of shared memory the copies may take
  /// Field by field.
  friend bool operator==(const HistogramPolicy&, const HistogramPolicy&) = default;
};

namespace device {

/// histogramEven's descriptor (device/algorithm.hpp).
struct HistogramEven {
  using Policy = HistogramPolicy;                       ///< the policy type
  static constexpr const char* name = "histogramEven";  ///< the ready call's name
  /// Where it is declared.
  static constexpr const char* header = "obsidian/device/histogram.hpp";
  /// What it computes.
  static constexpr const char* summary =
      "counts of samples in even bins (privatized in shared memory)";
  /// The policy's fields as data.
  static constexpr auto fields() {
    return hana::make_tuple(
        field("threads", &Policy::threads, 32, 1024, "threads per block (whole warps)"),
        field("vectors", &Policy::vectors, 1, 16, "16-byte vectors each thread loads in flight"),
        field("copies", &Policy::copies, 1, 32,
              "interleaved copies of the block's histogram (a power of two)"),
        field("shared_budget", &Policy::sharedBudget, 1024, 227 * 1024,
              "bytes of shared memory the copies may take"));
  }
  /// The policy table: the fallback, then a row per measured architecture.
  static constexpr Tuned<Policy> table[] = {
      {0,
       {},
       {256, 4, 8, 32 * 1024},
       "(fallback)",
       "not measured: a moderate configuration for GPUs without a measured row"},
      {90,
       {},
       {512, 2, 16, 32 * 1024},
       "obsidian-tune tuning/spaces/histogram.json",
       "H100, 2026-11-23, 2^26 samples, 40 policies: 512 threads x 2 vectors x 16 copies fastest "
       "for u8 256 bins of width 1 (36.3 us; 8 copies 37.1, 32 copies 36.6) and over [0, 200) "
       "(47.3 us; 8 copies 47.6); u32 1024 bins and f32 4096 bins take 8 and 2 copies within "
       "the shared budget: 97.3 us (best 97.1) and 97.3 us (best 96.4) (tuning/RESULTS.md, "
       "'Device layer policies')"},
  };
};

}  // namespace device

// ------------------------------------------------------------------ samples and levels
/// The sample types a histogram counts. The device-wide kernel reads u8 and u16 samples as
/// packed words.
template <class S>
concept HistogramSample = std::is_same_v<S, uint8_t> || std::is_same_v<S, uint16_t> ||
    std::is_same_v<S, uint32_t> || std::is_same_v<S, float>;

/// The type of the levels lower and upper: u32 for integer samples, f32 for f32 samples.
template <HistogramSample S>
using HistogramLevel = std::conditional_t<std::is_same_v<S, float>, float, uint32_t>;

/// A sample's value inside a kernel: f32, or an integer sample widened to u32.
template <HistogramSample S>
using SampleExp = std::conditional_t<std::is_same_v<S, float>, EFloat, EWord32>;

namespace detail {
// What a kernel needs to bin samples of even bins, computed on the host from the levels (and
// checked there: Error for bins 0, lower >= upper, non-finite float levels, more than 65535
// bins). Integer samples: d = x - lower is counted when d < range, in bin floor(d * bins /
// range), computed without a division as (d * multiplier) >> shift: exact for u8 and u16
// samples (multiplier = ceil(bins * 2^shift / range) with 2^shift >= range * min(range,
// 2^bits)); for u32 samples an estimate (shift 32, multiplier rounded down) one below at most,
// which one comparison corrects. Bins of a power-of-two width 2^k (range = bins * 2^k, as 256
// bins of u8 over [0, 256)): multiplier 1 and shift k, exact, and powerOfTwoWidth, for which the
// kernel bins with one shift (EvenBinning::powerOfTwoWidth). f32 samples: counted when lower <= x <
// upper (never NaN), in bin min((x - lower) * scale, bins - 1) rounded down, scale = float(bins) /
// (upper - lower), all in f32; levels closer than bins / FLT_MAX (whose scale overflows) are an
// Error.
struct BinningScalars {
  uint32_t lower = 0, range = 0;
  uint64_t multiplier = 0, shift = 0;
  bool powerOfTwoWidth = false;
  float flower = 0, fupper = 0, scale = 0;
};
BinningScalars binningScalars(uint32_t bins, uint32_t lower, uint32_t upper, uint32_t sampleBits);
BinningScalars binningScalars(uint32_t bins, float lower, float upper);
template <class S>
BinningScalars binningFor(uint32_t bins,
                          std::conditional_t<std::is_same_v<S, float>, float, uint32_t> lower,
                          std::conditional_t<std::is_same_v<S, float>, float, uint32_t> upper) {
  if constexpr (std::is_same_v<S, float>) {
    return binningScalars(bins, lower, upper);
  } else {
    return binningScalars(bins, lower, upper, 8 * sizeof(S));
  }
}
}  // namespace detail

/// Which of `bins` even bins over [lower, upper) a sample of type S falls in, inside a kernel.
/// The levels are expressions: literals (evenBinning) or kernel parameters (histogramKernel).
template <HistogramSample S>
struct EvenBinning {
  uint32_t bins = 0;  ///< the number of bins
  /// Integer samples in bins of a power-of-two width (known when the kernel is generated; the
  /// levels' scalars then have multiplier 1): the bin is d >> shift, no 64-bit multiply.
  bool powerOfTwoWidth = false;
  /// @{
  /// Integer samples (see detail::BinningScalars).
  EWord32 lower{0u}, range{0u};
  EWord64 multiplier{0u}, shift{0u};
  /// @}
  /// @{
  /// f32 samples.
  EFloat flower{0.0f}, fupper{0.0f}, scale{0.0f};
  /// @}

  /// Whether x is counted (inside [lower, upper)), and its bin (meaningless when it is not).
  std::pair<EBool, EWord32> operator()(const SampleExp<S>& x) const {
    if constexpr (std::is_same_v<S, float>) {
      const EFloat t = max((x - flower) * scale, EFloat(0.0f));
      return {flower <= x && x < fupper,
              cast<uint32_t>(min(t, EFloat(static_cast<float>(bins - 1))))};
    } else {
      const EWord32 d = x - lower;
      if (powerOfTwoWidth) return {d < range, d >> cast<uint32_t>(shift)};
      const EWord64 d64 = cast<uint64_t>(d);
      EWord32 bin = cast<uint32_t>((d64 * multiplier) >> shift);
      if constexpr (std::is_same_v<S, uint32_t>) {  // the estimate may be one low
        const EWord64 next = cast<uint64_t>(bin + 1u) * cast<uint64_t>(range);
        bin = bin + cast<uint32_t>(next <= d64 * EWord64(uint64_t{bins}));
      }
      return {d < range, bin};  // below bins when counted: d < range
    }
  }
};

/// The binning for levels known when the kernel is generated (literals in its code).
template <HistogramSample S>
EvenBinning<S> evenBinning(uint32_t bins, HistogramLevel<S> lower, HistogramLevel<S> upper) {
  EvenBinning<S> b;
  b.bins = bins;
  const detail::BinningScalars s = detail::binningFor<S>(bins, lower, upper);
  if constexpr (std::is_same_v<S, float>) {
    b.flower = s.flower;
    b.fupper = s.fupper;
    b.scale = s.scale;
  } else {
    b.lower = s.lower;
    b.range = s.range;
    b.multiplier = s.multiplier;
    b.shift = s.shift;
    b.powerOfTwoWidth = s.powerOfTwoWidth;
  }
  return b;
}

// ------------------------------------------------------------------ building blocks
/// A block's histogram in shared memory: `copies` interleaved copies of `bins` counters
/// (counter bin * copies + c), so that threads whose lanes differ modulo `copies` never update
/// the same counter.
struct SharedHistogram {
  SMutable<uint32_t> counters;  ///< bins * copies counters, copy c of bin b at b * copies + c
  /// @{
  /// Its bins, and the copies of each.
  uint32_t bins = 0, copies = 1;
  /// @}
};

/// A zeroed SharedHistogram (a barrier follows the zeroing). Error when bins is 0, copies is not
/// a power of two up to 32, or the counters exceed the kernel's shared memory (reported by the
/// memory map when the kernel is generated).
SharedHistogram newSharedHistogram(const Program<Block>& p, uint32_t bins, uint32_t copies = 1);

/// One sample x counted into h by thread t, whose copy is `lane` % h.copies.
template <HistogramSample S>
void addSample(const Program<Thread>& t, const SharedHistogram& h, const EvenBinning<S>& binning,
               const SampleExp<S>& x, const EWord32& lane) {
  const auto [counted, bin] = binning(x);
  const EWord32 counter = h.copies == 1 ? bin : bin * h.copies + (lane & (h.copies - 1));
  t.cond(counted, [&](const Program<Thread>& u) { atomicAdd(u, h.counters, counter, 1u); });
}

/// Every sample of `samples` counted into h (element i by thread i % threads). No barrier
/// follows: counting more, then addToGlobal (which starts with one), needs none between.
template <HistogramSample S, class Len, KernelScalar X>
void blockHistogram(const Program<Block>& p, const SharedHistogram& h,
                    const EvenBinning<S>& binning, const Pull<Len, Exp<X>>& samples) {
  static_assert(std::is_same_v<Exp<X>, SampleExp<S>> ||
                    (std::is_same_v<X, S> && sizeof(S) < 4 && std::is_integral_v<S>),
                "blockHistogram: the samples are Exp<float> for f32 binning, Exp<uint32_t> (or "
                "Exp<uint8_t> for u8, Exp<uint16_t> for u16) for integer binning");
  if (binning.bins != h.bins) {
    throw Error("blockHistogram: the binning has " + std::to_string(binning.bins) +
                " bins; the shared histogram " + std::to_string(h.bins));
  }
  p.forAll(sizeConv(samples.len()), [&](const Program<Thread>& t, const EWord32& i) {
    if constexpr (!std::is_same_v<Exp<X>, SampleExp<S>>) {  // u8, u16: widened
      addSample<S>(t, h, binning, cast<uint32_t>(samples[i]), i);
    } else {
      addSample<S>(t, h, binning, samples[i], i);
    }
  });
}

/// The count of `bin`: its copies summed (each thread starts at another copy, so that threads
/// summing neighbouring bins read different banks).
EWord32 binTotal(const SharedHistogram& h, const EWord32& bin);

/// A barrier, then h's non-zero counts added into the global histogram `global` (one atomic per
/// non-zero bin). `global` must hold h.bins counters (a launch precondition).
void addToGlobal(const Program<Block>& p, const SharedHistogram& h,
                 const DMutable<uint32_t>& global);

// ------------------------------------------------------------------ the device-wide kernel
/// The copies of a policy for `bins` bins: policy.copies, halved while over its shared budget.
uint32_t histogramCopies(uint32_t bins, const HistogramPolicy& policy);

namespace detail {
void checkHistogramPolicy(const HistogramPolicy& policy);
void checkHistogramBins(uint32_t bins, const HistogramPolicy& policy);

template <HistogramSample S>
constexpr uint32_t samplesPerWord() {
  return std::is_same_v<S, float> ? 1 : 4 / sizeof(S);
}
template <HistogramSample S>
const char* sampleName() {
  if constexpr (std::is_same_v<S, uint8_t>) return "u8";
  if constexpr (std::is_same_v<S, uint16_t>) return "u16";
  if constexpr (std::is_same_v<S, uint32_t>) return "u32";
  return "f32";
}

// The samples of word w: its samplesPerWord<S>() values (low bits first).
template <HistogramSample S>
SampleExp<S> sampleOfWord(
    const Exp<std::conditional_t<std::is_same_v<S, float>, float, uint32_t>>& w, uint32_t k) {
  if constexpr (std::is_same_v<S, uint8_t>) {
    return k == 0 ? (w & 0xFFu) : k == 3 ? (w >> 24u) : ((w >> (8u * k)) & 0xFFu);
  } else if constexpr (std::is_same_v<S, uint16_t>) {
    return k == 0 ? (w & 0xFFFFu) : (w >> 16u);
  } else {
    return w;
  }
}

// The kernel body: an occupancy-sized grid of `blocks` blocks over `words` (the samples, packed
// for u8 and u16; `n` samples in all). Vectors of 4 words are dealt in tiles of threads x
// policy.vectors vectors, tile k to block k % blocks; the words after the last whole vector go
// to block 0.
template <HistogramSample S, class W>
GridEffect histogramSweep(const DPull<Exp<W>>& words, const DMutable<uint32_t>& global,
                          const EWord32& n, const EWord32& blocks, const EvenBinning<S>& binning,
                          const HistogramPolicy& policy) {
  constexpr uint32_t perWord = samplesPerWord<S>();
  // Effect-only: the kernel writes nothing but the counts it adds into `global`.
  return effect([=](const Program<Grid>& g) {
    const uint32_t threads = g.context().threadsPerBlock();
    const uint32_t unroll = policy.vectors;
    const uint32_t tile = threads * unroll;
    const uint32_t copies = histogramCopies(binning.bins, policy);
    // Whole words only in the vectors: the last, partial word of u8/u16 samples is a tail word.
    const EWord32 fullWords = n / perWord;
    const auto vecs =
        vectors<4>(DPull<Exp<W>>(fullWords, [words](const EWord32& i) { return words[i]; }));
    const EWord32 vectorCount = len(vecs);
    const EWord32 fullTiles = vectorCount / tile;
    g.distrPar(blocks, [&](const Program<Block>& p, const EWord32& bid) {
      const SharedHistogram h = newSharedHistogram(p, binning.bins, copies);
      const auto countWord = [&](const Program<Thread>& t, const Exp<W>& w, const EWord32& lane) {
        for (uint32_t k = 0; k < perWord; ++k)
          addSample<S>(t, h, binning, sampleOfWord<S>(w, k), lane);
      };
      // Counts `count` vectors (of vecs) at first, first + threads, ...: loaded into registers
      // before any is counted, so that the loads are in flight together.
      const auto countVectors = [&](const Program<Thread>& t, const EWord32& tid,
                                    const EWord32& first, const std::vector<EBool>& valid) {
        std::vector<Exp<W>> held;
        for (uint32_t u = 0; u < valid.size(); ++u) {
          const auto v = vecs[first + u * threads];
          const EBool ok = valid[u];
          const auto lane = [&](const Exp<W>& x) {
            return t.declare(ifThenElse(ok, x, Exp<W>(W{0})));
          };
          held.push_back(lane(hana::at_c<0>(v)));
          held.push_back(lane(hana::at_c<1>(v)));
          held.push_back(lane(hana::at_c<2>(v)));
          held.push_back(lane(hana::at_c<3>(v)));
        }
        for (uint32_t u = 0; u < valid.size(); ++u) {
          t.cond(valid[u], [&](const Program<Thread>& c) {
            for (uint32_t j = 0; j < 4; ++j) countWord(c, held[4 * u + j], tid);
          });
        }
      };
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        // Whole tiles: bid, bid + blocks, ... Their count is declared, so that it is computed
        // once, not in every test of the loop (measured on the H100: 2^26 u8 samples 4-5%
        // slower with the count in the loop's bound).
        const EWord32 mine = t.declare(
            ifThenElse(bid < fullTiles, (fullTiles - bid + blocks - 1u) / blocks, EWord32(0u)));
        t.seqFor(mine, [&](const Program<Thread>& s, const EWord32& k) {
          const std::vector<EBool> all(unroll, EBool(true));
          countVectors(s, tid, (bid + k * blocks) * tile + tid, all);
        });
        // The last, partial tile: block fullTiles % blocks.
        t.cond(bid == fullTiles % blocks, [&](const Program<Thread>& s) {
          std::vector<EBool> valid;
          const EWord32 first = fullTiles * tile + tid;
          for (uint32_t u = 0; u < unroll; ++u) valid.push_back(first + u * threads < vectorCount);
          countVectors(s, tid, first, valid);
        });
        // The words after the vectors (at most 4 for u8 and u16, 3 for u32 and f32): block 0;
        // samples at or past n (in the last, partial word) are not counted.
        const EWord32 tailWord = vectorCount * 4u + tid;
        t.cond(bid == 0u && tailWord < len(words), [&](const Program<Thread>& s) {
          const Exp<W> w = words[tailWord];
          for (uint32_t k = 0; k < perWord; ++k) {
            s.cond(tailWord * perWord + k < n, [&](const Program<Thread>& c) {
              addSample<S>(c, h, binning, sampleOfWord<S>(w, k), tid);
            });
          }
        });
      });
      addToGlobal(p, h, global);
    });
  });
}
}  // namespace detail

/// The histogram kernel for samples of type S into `bins` bins with `policy`. Its parameters,
/// in order (launch arguments in this order):
///   the samples as words: u32 or f32 samples themselves; u8/u16 samples packed four/two to a
///     little-endian u32 word, ceil(n * sizeof(S) / 4) words (16-byte aligned);
///   the global bins (DMutable<uint32_t>, `bins` counters: counts are added to them);
///   n (u32): the number of samples; blocks (u32): the grid (gpu::occupancyBlocks or fewer);
///   the levels: integer samples lower, range (u32), multiplier, shift (u64); f32 samples
///     lower, upper, scale (f32) (detail::binningScalars).
/// It has no output array: an effect-only kernel (GridEffect) that adds into the bins.
/// With powerOfTwoWidth (integer samples only), the kernel bins with one shift and is only for
/// levels whose bins have a power-of-two width (a launch precondition: multiplier 1).
/// histogramEven passes all of these and picks the variant (histogramKernelFor); call this to
/// read the kernel's code and report.
template <HistogramSample S>
Kernel histogramKernel(uint32_t bins, const HistogramPolicy& policy, bool powerOfTwoWidth = false) {
  detail::checkHistogramBins(bins, policy);
  if (powerOfTwoWidth && std::is_same_v<S, float>) {
    throw Error("histogramKernel: bins of a power-of-two width are for integer samples; got f32");
  }
  const std::string name = std::string("histogram_") + detail::sampleName<S>() + "_" +
                           std::to_string(bins) + (powerOfTwoWidth ? "_pow2" : "");
  const std::string key = name + "|" + device::describePolicy<device::HistogramEven>(policy);
  return device::detail::memoKernel(key, [&] {
    if constexpr (std::is_same_v<S, float>) {
      return capture(
          name, policy.threads,
          [bins, policy](DPull<EFloat> in, DMutable<uint32_t> global, EWord32 n, EWord32 blocks,
                         EFloat lower, EFloat upper, EFloat scale) {
            detail::requireLength(n == len(in), "histogram: n is the samples' count");
            detail::requireLength(len(global) == bins, "histogram: the bins array holds " +
                                                           std::to_string(bins) + " counters");
            EvenBinning<float> b;
            b.bins = bins;
            b.flower = lower;
            b.fupper = upper;
            b.scale = scale;
            return detail::histogramSweep<float, float>(in, global, n, blocks, b, policy);
          });
    } else {
      return capture(
          name, policy.threads,
          [bins, policy, powerOfTwoWidth](DPull<EWord32> in, DMutable<uint32_t> global, EWord32 n,
                                          EWord32 blocks, EWord32 lower, EWord32 range,
                                          EWord64 multiplier, EWord64 shift) {
            constexpr uint32_t perWord = detail::samplesPerWord<S>();
            detail::requireLength(len(in) == n / perWord + cast<uint32_t>(n % perWord != 0u),
                                  "histogram: the words hold the n samples");
            detail::requireLength(len(global) == bins, "histogram: the bins array holds " +
                                                           std::to_string(bins) + " counters");
            if (powerOfTwoWidth) {
              detail::requireLength(multiplier == EWord64(uint64_t{1}),
                                    "histogram: bins of a power-of-two width (multiplier 1)");
            }
            EvenBinning<S> b;
            b.bins = bins;
            b.powerOfTwoWidth = powerOfTwoWidth;
            b.lower = lower;
            b.range = range;
            b.multiplier = multiplier;
            b.shift = shift;
            return detail::histogramSweep<S, uint32_t>(in, global, n, blocks, b, policy);
          });
    }
  });
}

template <HistogramSample S>
Kernel histogramKernel(uint32_t bins);

/// The kernel histogramEven runs for these levels: the power-of-two-width variant where the
/// bins allow it.
template <HistogramSample S>
Kernel histogramKernelFor(uint32_t bins, HistogramLevel<S> lower, HistogramLevel<S> upper,
                          const HistogramPolicy& policy) {
  return histogramKernel<S>(bins, policy,
                            detail::binningFor<S>(bins, lower, upper).powerOfTwoWidth);
}

// ------------------------------------------------------------------ descriptor and ready calls
namespace device {


namespace detail {
// The grid: enough blocks for the input (a tile each at least), at most `most`.
uint32_t histogramBlocks(uint64_t n, uint32_t samplesPerWord, const HistogramPolicy& p,
                         uint32_t most);
// Zeroes `count` counters at `address` on the stream (a small kernel of its own, so that it
// queues on the stream like the histogram's kernel).
void zeroCounters(uint64_t address, size_t count, const gpu::Stream* stream);

template <HistogramSample S>
std::vector<KernelArg> histogramScalars(uint32_t bins, HistogramLevel<S> lower,
                                        HistogramLevel<S> upper, uint32_t n, uint32_t blocks) {
  std::vector<KernelArg> a{KernelArg(n), KernelArg(blocks)};
  const obsidian::detail::BinningScalars s = obsidian::detail::binningFor<S>(bins, lower, upper);
  if constexpr (std::is_same_v<S, float>) {
    a.insert(a.end(), {KernelArg(s.flower), KernelArg(s.fupper), KernelArg(s.scale)});
  } else {
    a.insert(a.end(),
             {KernelArg(s.lower), KernelArg(s.range), KernelArg(s.multiplier), KernelArg(s.shift)});
  }
  return a;
}
void checkSampleCount(size_t n);
// The policy and the checks every call makes before anything runs.
template <HistogramSample S>
HistogramPolicy histogramPolicy(const Target& t, uint32_t bins, HistogramLevel<S> lower,
                                HistogramLevel<S> upper, size_t n, const Options& options) {
  const HistogramPolicy policy = policyFor<HistogramEven>(
      t, {static_cast<uint32_t>(sizeof(S)), OperatorClass::Any, Values::Any, Scale::Any},
      options);
  obsidian::detail::checkHistogramBins(bins, policy);
  obsidian::detail::binningFor<S>(bins, lower, upper);  // the levels' checks
  checkSampleCount(n);
  return policy;
}
}  // namespace detail

/// GPU: the histogram of the n samples at device address `samples` (16-byte aligned; u8/u16
/// samples may end anywhere: the last word is read whole) into the `bins.size()` counters of
/// `bins`, zeroed first unless options.accumulate. Returns when done unless
/// options.synchronize is false.
template <HistogramSample S>
void histogramEven(uint64_t samples, size_t n, gpu::DeviceBuffer<uint32_t>& bins,
                   HistogramLevel<S> lower, HistogramLevel<S> upper, const Options& options = {}) {
  const Target t = Target::onGpu();
  const uint32_t nBins = static_cast<uint32_t>(std::min<size_t>(bins.size(), UINT32_MAX));
  const HistogramPolicy policy =
      detail::histogramPolicy<S>(t, nBins, lower, upper, n, options);
  if (samples % 16 != 0 && n > 0) {
    throw Error(
        "histogramEven: the samples must start at a 16-byte aligned address (they are "
        "read with 16-byte loads); got one " +
        std::to_string(samples % 16) + " bytes past");
  }
  if (!options.accumulate) detail::zeroCounters(bins.address(), nBins, options.stream);
  if (n == 0) return;
  const Kernel k = histogramKernelFor<S>(nBins, lower, upper, policy);
  constexpr uint32_t perWord = obsidian::detail::samplesPerWord<S>();
  const uint32_t blocks = detail::histogramBlocks(
      n, perWord, policy, options.blocks ? options.blocks : gpu::occupancyBlocks(k));
  std::vector<KernelArg> args{
      KernelArg::deviceArray(std::is_same_v<S, float> ? ScalarType::F32 : ScalarType::U32, samples,
                             (n + perWord - 1) / perWord, false),
      bins};
  for (const KernelArg& a :
       detail::histogramScalars<S>(nBins, lower, upper, static_cast<uint32_t>(n), blocks))
    args.push_back(a);
  launchOn(t, k, args, options);
}

/// GPU: the histogram of device buffer `samples` into the counters of `bins` (as above).
template <HistogramSample S>
requires KernelScalar<S>
void histogramEven(const gpu::DeviceBuffer<S>& samples, gpu::DeviceBuffer<uint32_t>& bins,
                   HistogramLevel<S> lower, HistogramLevel<S> upper, const Options& options = {}) {
  histogramEven<S>(samples.address(), samples.size(), bins, lower, upper, options);
}

/// histogramEven(samples, counts, lower, upper, options): counts[b] (+)= the number of samples
/// in bin b of counts.size() even bins over [lower, upper), zeroed first unless
/// options.accumulate: on the GPU for device buffers, on the simulator for host vectors.
template <Buffer In, class Out>
requires(HistogramSample<ElementOf<In>> &&
         (std::is_same_v<Out, gpu::DeviceBuffer<uint32_t>> ||
          std::is_same_v<Out, std::vector<uint32_t>>) &&
         BufferSide<std::remove_cvref_t<In>>::gpu == BufferSide<Out>::gpu)
void histogramEven(const In& samples, Out& counts, HistogramLevel<ElementOf<In>> lower,
                   HistogramLevel<ElementOf<In>> upper, const Options& options = {}) {
  using S = ElementOf<In>;
  if constexpr (BufferSide<Out>::gpu) {
    histogramEven<S>(samples.address(), samples.size(), counts, lower, upper, options);
  } else {
    const Target t = Target::simulator();
    const uint32_t bins = static_cast<uint32_t>(std::min<size_t>(counts.size(), UINT32_MAX));
    const HistogramPolicy policy =
        detail::histogramPolicy<S>(t, bins, lower, upper, samples.size(), options);
    if (!options.accumulate) std::fill(counts.begin(), counts.end(), 0u);
    if (samples.empty()) return;
    const Kernel k = histogramKernelFor<S>(bins, lower, upper, policy);
    constexpr uint32_t perWord = obsidian::detail::samplesPerWord<S>();
    const uint32_t n = static_cast<uint32_t>(samples.size());
    const uint32_t blocks =
        detail::histogramBlocks(n, perWord, policy, options.blocks ? options.blocks : 4);
    std::vector<KernelArg> args;
    std::vector<uint32_t> words;
    if constexpr (std::is_same_v<S, float> || std::is_same_v<S, uint32_t>) {
      args.push_back(samples);
    } else {  // packed as on the GPU (little-endian), the last word padded with zeros
      words.assign((samples.size() + perWord - 1) / perWord, 0);
      for (size_t i = 0; i < samples.size(); ++i)
        words[i / perWord] |= uint32_t{samples[i]} << (8 * sizeof(S) * (i % perWord));
      args.push_back(KernelArg(words));
    }
    args.push_back(KernelArg(counts));
    for (const KernelArg& a : detail::histogramScalars<S>(bins, lower, upper, n, blocks))
      args.push_back(a);
    launchOn(t, k, args, options);
  }
}

/// Simulator: the counts of `bins` bins of the host samples (options.accumulate does not apply:
/// the counts start at zero).
template <HistogramSample S>
std::vector<uint32_t> histogramEven(const std::vector<S>& samples, uint32_t bins,
                                    HistogramLevel<S> lower, HistogramLevel<S> upper,
                                    const Options& options = {}) {
  std::vector<uint32_t> counts(bins, 0);
  Options fresh = options;
  fresh.accumulate = false;
  histogramEven(samples, counts, lower, upper, fresh);
  return counts;
}

}  // namespace device

/// The kernel of this GPU's table row for `bins` bins of S samples.
template <HistogramSample S>
Kernel histogramKernel(uint32_t bins) {
  return histogramKernel<S>(
      bins, tunedFor(device::HistogramEven::table, currentSm(),
                     {static_cast<uint32_t>(sizeof(S)), OperatorClass::Any, Values::Any,
                      Scale::Any})
                .policy);
}

}  // namespace obsidian
