// The parts of the device histogram (include/obsidian/device/histogram.hpp) that need no
// template: the levels' arithmetic and checks, the shared-memory building blocks, the kernel
// cache of the device algorithms, and the zeroing of the bins.
#include "obsidian/device/histogram.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace obsidian {

namespace detail {
namespace {

void checkBins(uint32_t bins) {
  if (bins == 0) throw Error("even bins: a histogram needs at least 1 bin; got 0");
  if (bins > 65535) {
    throw Error("even bins: at most 65535 bins (a block's counters live in shared memory); got " +
                std::to_string(bins));
  }
}

std::string show(float x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

// The least k with 2^k >= x (x >= 1).
uint32_t ceilLog2(uint64_t x) {
  uint32_t k = 0;
  while (k < 64 && (uint64_t{1} << k) < x) ++k;
  return k;
}

}  // namespace

BinningScalars binningScalars(uint32_t bins, uint32_t lower, uint32_t upper, uint32_t sampleBits) {
  checkBins(bins);
  if (lower >= upper) {
    throw Error("even bins: the lower level (" + std::to_string(lower) +
                ") must be below the upper level (" + std::to_string(upper) + ")");
  }
  BinningScalars s;
  s.lower = lower;
  s.range = upper - lower;
  const uint32_t width = s.range / bins;
  if (s.range % bins == 0 && (width & (width - 1)) == 0) {
    // Bins of a power-of-two width 2^k: bin d >> k, which is also (d * 1) >> k below, exactly.
    s.powerOfTwoWidth = true;
    s.shift = ceilLog2(width);
    s.multiplier = 1;
  } else if (sampleBits < 32) {
    // Exact for every d < min(range, 2^bits): with M = bins * 2^k / range + e (0 <= e < 1),
    // d * M / 2^k = d * bins / range + d * e / 2^k, and d * e / 2^k < 1 / range keeps the floor
    // (the fraction of d * bins / range is at most 1 - 1 / range). bins < 2^16 and k <= 48
    // keep bins * 2^k and d * M below 2^64.
    const uint64_t dMax = std::min<uint64_t>(s.range, uint64_t{1} << sampleBits);
    const uint32_t k = ceilLog2(dMax * s.range);
    s.shift = k;
    s.multiplier = ((uint64_t{bins} << k) + s.range - 1) / s.range;
  } else {
    // An estimate one below at most: M = floor(bins * 2^32 / range) loses less than
    // d / 2^32 < 1; the kernel corrects it with one comparison.
    s.shift = 32;
    s.multiplier = (uint64_t{bins} << 32) / s.range;
  }
  return s;
}

BinningScalars binningScalars(uint32_t bins, float lower, float upper) {
  checkBins(bins);
  if (!std::isfinite(lower) || !std::isfinite(upper)) {
    throw Error("even bins: the levels must be finite; got " + show(lower) + " and " + show(upper));
  }
  if (!(lower < upper)) {
    throw Error("even bins: the lower level (" + show(lower) + ") must be below the upper level (" +
                show(upper) + ")");
  }
  const float width = upper - lower;
  if (!std::isfinite(width)) {
    throw Error("even bins: upper - lower overflows float (" + show(lower) + ", " + show(upper) +
                ")");
  }
  // A sample's bin is (x - lower) * scale: an infinite scale would put every sample above
  // lower in the last bin.
  const float scale = static_cast<float>(bins) / width;
  if (!std::isfinite(scale)) {
    throw Error("even bins: " + std::to_string(bins) + " bins over [" + show(lower) + ", " +
                show(upper) +
                ") are too narrow: bins / (upper - lower) overflows float; the "
                "levels must be at least bins / FLT_MAX (" +
                show(static_cast<float>(bins) / std::numeric_limits<float>::max()) + ") apart");
  }
  BinningScalars s;
  s.flower = lower;
  s.fupper = upper;
  s.scale = scale;
  return s;
}

void checkHistogramPolicy(const HistogramPolicy& p) {
  if (p.threads == 0 || p.threads % 32 != 0 || p.threads > 1024) {
    throw Error("HistogramPolicy: threads must be a multiple of 32 up to 1024; got " +
                std::to_string(p.threads));
  }
  if (p.vectors == 0 || p.vectors > 16) {
    throw Error(
        "HistogramPolicy: vectors (16-byte loads in flight per thread) must be 1..16; "
        "got " +
        std::to_string(p.vectors));
  }
  if (p.copies == 0 || p.copies > 32 || (p.copies & (p.copies - 1)) != 0) {
    throw Error("HistogramPolicy: copies must be a power of two up to 32; got " +
                std::to_string(p.copies));
  }
}

void checkHistogramBins(uint32_t bins, const HistogramPolicy& policy) {
  checkHistogramPolicy(policy);
  checkBins(bins);
  const uint64_t bytes = uint64_t{bins} * 4;
  constexpr uint64_t limit = 227 * 1024;  // sm_90's opt-in maximum per block
  if (bytes > limit) {
    throw Error("histogramEven: " + std::to_string(bins) + " bins need " + std::to_string(bytes) +
                " bytes of shared memory per block; a block has at most " + std::to_string(limit) +
                " (at most " + std::to_string(limit / 4) + " bins)");
  }
}

}  // namespace detail

namespace device::detail {
uint32_t histogramBlocks(uint64_t n, uint32_t samplesPerWord, const HistogramPolicy& p,
                         uint32_t most) {
  const uint64_t vectors = n / samplesPerWord / 4;
  const uint64_t perTile = uint64_t{p.threads} * p.vectors;
  const uint64_t tiles = (vectors + perTile - 1) / perTile;
  return static_cast<uint32_t>(std::clamp<uint64_t>(tiles, 1, std::max<uint32_t>(most, 1)));
}

void zeroCounters(uint64_t address, size_t count, const gpu::Stream* stream) {
  if (count == 0) return;
  static const Kernel zero = capture(
      "histogramZero", 256, [](EWord32 n) { return push<Grid>(replicate(n, EWord32(0u))); });
  gpu::LaunchOptions o;
  o.stream = stream;
  o.synchronize = false;  // the histogram's kernel follows on the same stream
  gpu::launch(zero,
              {KernelArg(static_cast<uint32_t>(count)),
               KernelArg::deviceArray(ScalarType::U32, address, count, true)},
              o);
}

void checkSampleCount(size_t n) {
  if (n > UINT32_MAX) {
    throw Error("histogramEven: at most 2^32 - 1 samples per call; got " + std::to_string(n));
  }
}

}  // namespace device::detail

uint32_t histogramCopies(uint32_t bins, const HistogramPolicy& policy) {
  uint32_t copies = policy.copies;
  while (copies > 1 && uint64_t{bins} * copies * 4 > policy.sharedBudget) copies /= 2;
  return copies;
}

SharedHistogram newSharedHistogram(const Program<Block>& p, uint32_t bins, uint32_t copies) {
  if (bins == 0) throw Error("newSharedHistogram: a histogram needs at least 1 bin; got 0");
  if (copies == 0 || copies > 32 || (copies & (copies - 1)) != 0) {
    throw Error("newSharedHistogram: copies must be a power of two up to 32; got " +
                std::to_string(copies));
  }
  const uint32_t counters = detail::lenMul("newSharedHistogram", bins, copies);
  SharedHistogram h{newShared<uint32_t>(p, counters), bins, copies};
  p.forAll(counters,
           [&](const Program<Thread>& t, const EWord32& i) { write(t, h.counters, i, 0u); });
  p.sync();
  return h;
}

EWord32 binTotal(const SharedHistogram& h, const EWord32& bin) {
  if (h.copies == 1) return h.counters[bin];
  EWord32 total = h.counters[bin * h.copies + (bin & (h.copies - 1))];
  for (uint32_t c = 1; c < h.copies; ++c) {
    total = total + h.counters[bin * h.copies + ((bin + c) & (h.copies - 1))];
  }
  return total;
}

void addToGlobal(const Program<Block>& p, const SharedHistogram& h,
                 const DMutable<uint32_t>& global) {
  detail::requireLength(len(global) == h.bins, "addToGlobal: the global histogram holds " +
                                                   std::to_string(h.bins) + " counters");
  p.sync();
  p.forAll(h.bins, [&](const Program<Thread>& t, const EWord32& b) {
    const EWord32 total = t.declare(binTotal(h, b));
    t.cond(total != 0u, [&](const Program<Thread>& u) { atomicAdd(u, global, b, total); });
  });
}

}  // namespace obsidian
