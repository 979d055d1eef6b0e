// The device histogram (include/obsidian/device/histogram.hpp) on the simulator: counts against
// a plain C++ reference for every sample type, odd sample counts, bins 1..4096 (powers of two
// and not), samples outside the levels and NaN; the exact integer binning checked for every
// u8 and u16 difference; the building blocks in a kernel of one's own; and the errors.
#include <doctest/doctest.h>

#include <boost/hana/for_each.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <obsidian/device/histogram.hpp>
#include <random>
#include <tuple>

#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;

namespace {

// The definition, written plainly: integer samples count in bin floor((x - lower) * bins /
// (upper - lower)) when lower <= x < upper; f32 samples when lower <= x < upper (so never NaN),
// in bin min(bins - 1, floor(max(0, (x - lower) * (bins / (upper - lower))))) in f32.
template <class S>
std::vector<uint32_t> reference(const std::vector<S>& samples, uint32_t bins,
                                HistogramLevel<S> lower, HistogramLevel<S> upper) {
  std::vector<uint32_t> counts(bins, 0);
  for (S x : samples) {
    if constexpr (std::is_same_v<S, float>) {
      if (!(lower <= x && x < upper)) continue;
      const float scale = static_cast<float>(bins) / (upper - lower);
      const float t = std::fmin(std::fmax((x - lower) * scale, 0.0f), float(bins - 1));
      ++counts[static_cast<uint32_t>(t)];
    } else {
      if (x < lower || x >= upper) continue;
      const uint64_t d = x - lower, range = upper - lower;
      ++counts[static_cast<uint32_t>(d * bins / range)];
    }
  }
  return counts;
}

template <class S>
std::vector<S> randomSamples(size_t n, uint32_t seed, double below) {
  std::mt19937_64 rng(seed);
  std::vector<S> v(n);
  for (S& x : v) {
    if constexpr (std::is_same_v<S, float>) {
      x = static_cast<float>(std::uniform_real_distribution<double>(-0.25 * below, below)(rng));
    } else {
      x = static_cast<S>(rng() % static_cast<uint64_t>(below));
    }
  }
  return v;
}

// The exact binning of u8/u16 samples, on the host (the same multiply and shift the kernel does).
template <class S>
void checkExactBinning(uint32_t bins, uint32_t lower, uint32_t upper) {
  const detail::BinningScalars s = detail::binningScalars(bins, lower, upper, 8 * sizeof(S));
  const uint64_t dMax = std::min<uint64_t>(s.range, uint64_t{1} << (8 * sizeof(S)));
  for (uint64_t d = 0; d < dMax; ++d) {
    const uint64_t want = d * bins / s.range;
    const uint64_t got = (d * s.multiplier) >> s.shift;
    if (got != want) {
      FAIL("bins " << bins << ", levels " << lower << ".." << upper << ": d " << d << " in bin "
                   << got << ", expected " << want);
    }
  }
}

}  // namespace

TEST_CASE("histogram: the binning of u8 and u16 samples is exact for every difference") {
  for (uint32_t bins : {1u, 2u, 3u, 7u, 100u, 255u, 256u, 257u, 1000u, 4096u, 65535u}) {
    for (auto [lower, upper] : {std::pair{0u, 256u},
                                {0u, 1u},
                                {3u, 250u},
                                {0u, 100000u},
                                {17u, 70000u},
                                {0u, 4294967295u}}) {
      checkExactBinning<uint8_t>(bins, lower, upper);
    }
    for (auto [lower, upper] :
         {std::pair{0u, 65536u}, {0u, 3u}, {1000u, 60001u}, {5u, 16777216u}, {0u, 4294967295u}}) {
      checkExactBinning<uint16_t>(bins, lower, upper);
    }
  }
}

TEST_CASE("histogram: u8 samples, odd counts, bins 1..4096, against C++") {
  for (uint32_t bins : {1u, 3u, 256u, 1000u, 4096u}) {
    for (size_t n : {size_t{1}, size_t{5}, size_t{17}, size_t{4099}, size_t{70001}}) {
      const auto in = randomSamples<uint8_t>(n, static_cast<uint32_t>(n + bins), 256);
      CHECK_MESSAGE(device::histogramEven<uint8_t>(in, bins, 0u, 256u) ==
                        reference<uint8_t>(in, bins, 0u, 256u),
                    "bins " << bins << ", n " << n);
      // Levels inside the samples' range: samples below and above are not counted.
      CHECK_MESSAGE(device::histogramEven<uint8_t>(in, bins, 10u, 201u) ==
                        reference<uint8_t>(in, bins, 10u, 201u),
                    "bins " << bins << ", n " << n << ", levels 10..201");
    }
  }
}

TEST_CASE("histogram: u16 samples against C++") {
  for (uint32_t bins : {1u, 64u, 777u, 4096u}) {
    for (size_t n : {size_t{1}, size_t{3}, size_t{8}, size_t{4097}, size_t{33333}}) {
      const auto in = randomSamples<uint16_t>(n, static_cast<uint32_t>(n * 7 + bins), 65536);
      CHECK_MESSAGE(device::histogramEven<uint16_t>(in, bins, 0u, 65536u) ==
                        reference<uint16_t>(in, bins, 0u, 65536u),
                    "bins " << bins << ", n " << n);
      CHECK_MESSAGE(device::histogramEven<uint16_t>(in, bins, 1000u, 50001u) ==
                        reference<uint16_t>(in, bins, 1000u, 50001u),
                    "bins " << bins << ", n " << n << ", levels 1000..50001");
    }
  }
}

TEST_CASE("histogram: u32 samples against C++, wide ranges included") {
  for (uint32_t bins : {1u, 64u, 255u, 1024u, 4096u}) {
    for (size_t n : {size_t{2}, size_t{4}, size_t{1023}, size_t{20011}}) {
      const auto in = randomSamples<uint32_t>(n, static_cast<uint32_t>(n + 3 * bins), 4294967296.0);
      for (auto [lower, upper] :
           {std::pair{0u, 4294967295u}, {123456u, 3000000001u}, {0u, 1000u}}) {
        CHECK_MESSAGE(device::histogramEven<uint32_t>(in, bins, lower, upper) ==
                          reference<uint32_t>(in, bins, lower, upper),
                      "bins " << bins << ", n " << n << ", levels " << lower << ".." << upper);
      }
    }
  }
  // Samples on every bin boundary of a range that bins do not divide.
  std::vector<uint32_t> edges;
  for (uint32_t x = 0; x < 3000; ++x) edges.push_back(x * 1431655u);
  CHECK(device::histogramEven<uint32_t>(edges, 3u, 0u, 4294967295u) ==
        reference<uint32_t>(edges, 3u, 0u, 4294967295u));
}

TEST_CASE("histogram: bins of a power-of-two width bin with one shift") {
  const HistogramPolicy policy{128, 2, 8, 32 * 1024};
  // The variant is chosen by the levels: 256 bins of u8 over [0, 256) have width 1.
  const Kernel pow2 = histogramKernelFor<uint8_t>(256, 0u, 256u, policy);
  const Kernel general = histogramKernelFor<uint8_t>(256, 0u, 200u, policy);
  CHECK(pow2.name() == "histogram_u8_256_pow2");
  CHECK(general.name() == "histogram_u8_256");
  // No 64-bit multiply in the power-of-two variant; the general one needs it.
  CHECK(pow2.cuda().find("(uint64_t)") == std::string::npos);
  CHECK(general.cuda().find("(uint64_t)") != std::string::npos);
  // Against C++: widths 1..2^26, lower levels not multiples of the width, samples outside.
  for (auto [bins, lower, width] : {std::tuple{256u, 0u, 1u},
                                    {64u, 7u, 4u},
                                    {1u, 3u, 128u},
                                    {1024u, 1000u, 1u << 20},
                                    {16u, 5u, 1u << 26}}) {
    const uint32_t upper = lower + bins * width;
    CHECK(detail::binningScalars(bins, lower, upper, 32).powerOfTwoWidth);
    const auto in = randomSamples<uint32_t>(9999, bins + width, 2.0 * upper);
    CHECK_MESSAGE(device::histogramEven<uint32_t>(in, bins, lower, upper) ==
                      reference<uint32_t>(in, bins, lower, upper),
                  "bins " << bins << ", levels " << lower << ".." << upper);
    if (upper <= 65536) {
      std::vector<uint16_t> in16(in.size());
      for (size_t i = 0; i < in.size(); ++i) in16[i] = static_cast<uint16_t>(in[i]);
      CHECK_MESSAGE(device::histogramEven<uint16_t>(in16, bins, lower, upper) ==
                        reference<uint16_t>(in16, bins, lower, upper),
                    "u16: bins " << bins << ", levels " << lower << ".." << upper);
    }
  }
  CHECK_FALSE(detail::binningScalars(256, 0u, 200u, 8).powerOfTwoWidth);
  CHECK_FALSE(detail::binningScalars(3, 0u, 18u, 8).powerOfTwoWidth);  // width 6
  CHECK(detail::binningScalars(3, 0u, 12u, 8).powerOfTwoWidth);        // width 4
  // The variant launched with scalars of another width is refused, not silently wrong.
  const Kernel k = histogramKernel<uint32_t>(16, {128, 1, 1, 1024}, true);
  std::vector<uint32_t> words(8, 1), bins(16);
  CHECK(errorOf([&] {
          simulate(k, {words, bins, 8u, 1u, 0u, 48u, uint64_t{3}, uint64_t{4}});
        }).find("histogram: bins of a power-of-two width (multiplier 1)") != std::string::npos);
  CHECK(errorOf([&] { histogramKernel<float>(16, policy, true); }) ==
        "histogramKernel: bins of a power-of-two width are for integer samples; got f32");
}

TEST_CASE("histogram: f32 samples, outside the levels and NaN not counted") {
  for (uint32_t bins : {1u, 64u, 100u, 4096u}) {
    for (size_t n : {size_t{1}, size_t{7}, size_t{4101}, size_t{30001}}) {
      auto in = randomSamples<float>(n, static_cast<uint32_t>(n + bins), 1.25);
      for (size_t i = 0; i < n; i += 97) in[i] = std::numeric_limits<float>::quiet_NaN();
      if (n > 3) {
        in[1] = 1.0f;  // the upper level: not counted
        in[2] = 0.0f;  // the lower level: counted, in bin 0
        in[3] = -std::numeric_limits<float>::infinity();
      }
      const auto want = reference<float>(in, bins, 0.0f, 1.0f);
      CHECK_MESSAGE(device::histogramEven<float>(in, bins, 0.0f, 1.0f) == want,
                    "bins " << bins << ", n " << n);
    }
  }
  const std::vector<float> nans(100, std::numeric_limits<float>::quiet_NaN());
  CHECK(device::histogramEven<float>(nans, 10u, -1.0f, 1.0f) == std::vector<uint32_t>(10, 0));
}

TEST_CASE("histogram: constant data, every policy shape, virtual blocks") {
  // All samples in one bin: every lane of a warp updates the same bin.
  const std::vector<uint8_t> same(5000, 77);
  for (uint32_t copies : {1u, 4u, 32u}) {
    const device::Options o = device::withPolicy<device::HistogramEven>({64, 2, copies, 32 * 1024});
    const std::vector<uint32_t> got = device::histogramEven<uint8_t>(same, 256u, 0u, 256u, o);
    CHECK(got[77] == 5000);
    CHECK(std::accumulate(got.begin(), got.end(), 0u) == 5000);
  }
  // More bins than the shared budget holds copies of: copies shrink.
  const HistogramPolicy tiny{32, 1, 32, 1024};
  device::Options o = device::withPolicy<device::HistogramEven>(tiny);
  o.blocks = 3;
  const auto in = randomSamples<uint32_t>(10007, 9, 5000);
  CHECK(device::histogramEven<uint32_t>(in, 2000u, 0u, 5000u, o) ==
        reference<uint32_t>(in, 2000u, 0u, 5000u));
  CHECK(histogramCopies(2000, tiny) == 1);
  CHECK(histogramCopies(256, {256, 4, 32, 32 * 1024}) == 32);
  CHECK(histogramCopies(4096, {256, 4, 32, 32 * 1024}) == 2);
}

TEST_CASE("histogram: the building blocks in a kernel of one's own") {
  // One block per 1000 samples counts them in shared memory, then adds into the global bins.
  const EvenBinning<uint8_t> binning = evenBinning<uint8_t>(10, 0u, 200u);
  const Kernel k =
      capture("myHistogram", 128, [binning](DPull<EWord8> in, DMutable<uint32_t> bins) {
        // Effect-only: the kernel's one effect is on the global bins.
        return forEachBlock(splitUp(1000, in),
                            [binning, bins](const Program<Block>& p, const SPull<EWord8>& chunk) {
                              const SharedHistogram h = newSharedHistogram(p, 10, 4);
                              blockHistogram(p, h, binning, chunk);
                              addToGlobal(p, h, bins);
                            });
      });
  const auto in = randomSamples<uint8_t>(5000, 4, 256);
  std::vector<uint32_t> bins(10, 0);
  const SimStats st = simulate(k, {in, bins});
  CHECK(bins == reference<uint8_t>(in, 10, 0u, 200u));
  // Each sample is loaded once: for the test whether it is counted and for its bin inside the
  // counting branch (the share pass makes the branch's use read the condition's variable).
  CHECK(k.report().traffic[0].loads == 1);
  CHECK(::testing::moved(st, "in0").loads == in.size());
  // f32 samples too (their test is two comparisons joined by &&).
  const EvenBinning<float> fb = evenBinning<float>(10, -1.0f, 1.0f);
  const Kernel f = capture("myHistogramF", 128, [fb](DPull<EFloat> x, DMutable<uint32_t> out) {
    return forEachBlock(splitUp(1000, x),
                        [fb, out](const Program<Block>& p, const SPull<EFloat>& chunk) {
                          const SharedHistogram h = newSharedHistogram(p, 10, 4);
                          blockHistogram(p, h, fb, chunk);
                          addToGlobal(p, h, out);
                        });
  });
  CHECK(f.report().traffic[0].loads == 1);
  std::vector<float> samples(3000);
  for (size_t i = 0; i < samples.size(); ++i) samples[i] = -1.5f + 0.001f * static_cast<float>(i);
  std::vector<uint32_t> fbins(10, 0);
  simulate(f, {samples, fbins});
  CHECK(std::accumulate(fbins.begin(), fbins.end(), 0u) == 2000);  // [-1, 1): 2000 samples
}

TEST_CASE("histogram: u16 samples in a kernel of one's own, one by one and as vectors<8>") {
  const EvenBinning<uint16_t> binning = evenBinning<uint16_t>(100, 1000u, 60000u);
  const Kernel scalar =
      capture("myHistogram16", 128, [binning](DPull<EWord16> in, DMutable<uint32_t> bins) {
        return forEachBlock(splitUp(1024, in),
                            [binning, bins](const Program<Block>& p, const SPull<EWord16>& chunk) {
                              const SharedHistogram h = newSharedHistogram(p, 100, 4);
                              blockHistogram(p, h, binning, chunk);
                              addToGlobal(p, h, bins);
                            });
      });
  // Each thread reads 8 samples with one 16-byte load.
  const Kernel wide =
      capture("myHistogram16x8", 128, [binning](DPull<EWord16> in, DMutable<uint32_t> bins) {
        return forEachBlock(splitUp(1024, in),
                            [binning, bins](const Program<Block>& p, const SPull<EWord16>& chunk) {
                              const SharedHistogram h = newSharedHistogram(p, 100, 4);
                              const auto v = vectors<8>(chunk);
                              p.forAll(len(v), [&](const Program<Thread>& t, const EWord32& i) {
                                // Declared before any is counted: the atomics between would keep
                                // the compiler from merging the lanes' loads.
                                std::vector<EWord32> lanes;
                                hana::for_each(v[i], [&](const EWord16& x) {
                                  lanes.push_back(t.declare(w16ToW32(x)));
                                });
                                for (const EWord32& x : lanes)
                                  addSample<uint16_t>(t, h, binning, x, i);
                              });
                              addToGlobal(p, h, bins);
                            });
      });
  CHECK(wide.cuda().find("(uint16_t)(((const uint4*)in0)[") != std::string::npos);
  const auto in = randomSamples<uint16_t>(5 * 1024, 5, 65536);
  for (const Kernel& k : {scalar, wide}) {
    std::vector<uint32_t> bins(100, 0);
    simulate(k, {in, bins});
    CHECK_MESSAGE(bins == reference<uint16_t>(in, 100, 1000u, 60000u), k.name());
  }
}

TEST_CASE("histogram: the kernel reads 16-byte vectors and privatizes its bins") {
  const Kernel k = histogramKernel<uint8_t>(256, {256, 4, 32, 32 * 1024});
  CHECK(k.cuda().find("((const uint4*)in0)[") != std::string::npos);
  CHECK(k.cuda().find("atomicAdd(&m1[") != std::string::npos);
  CHECK(k.sharedBytes() == 256 * 32 * 4);
  // The tile loop's count is a variable computed once, not an expression in its every test.
  CHECK(k.cuda().find("; s0 < v") != std::string::npos);
}

TEST_CASE("histogram: mistakes are errors that name the rule") {
  const std::vector<uint8_t> in(10, 1);
  CHECK(errorOf([&] { device::histogramEven<uint8_t>(in, 0u, 0u, 256u); }) ==
        "even bins: a histogram needs at least 1 bin; got 0");
  CHECK(errorOf([&] { device::histogramEven<uint8_t>(in, 16u, 5u, 5u); }) ==
        "even bins: the lower level (5) must be below the upper level (5)");
  CHECK(errorOf([&] { device::histogramEven<uint8_t>(in, 16u, 9u, 2u); }) ==
        "even bins: the lower level (9) must be below the upper level (2)");
  const std::vector<float> f(10, 1.0f);
  CHECK(errorOf([&] {
          device::histogramEven<float>(f, 16u, 0.0f, std::numeric_limits<float>::quiet_NaN());
        }).find("even bins: the levels must be finite") == 0);
  CHECK(errorOf([&] { device::histogramEven<float>(f, 16u, -3e38f, 3e38f); }) ==
        "even bins: upper - lower overflows float (-3e+38, 3e+38)");
  CHECK(errorOf([&] { device::histogramEven<float>(f, 16u, 2.5f, -1.0f); }) ==
        "even bins: the lower level (2.5) must be below the upper level (-1)");
  // Bins so narrow that bins / width overflows float would put every sample in the last bin
  // (issue 40); levels just wide enough are accepted and bin exactly.
  CHECK(errorOf([&] { device::histogramEven<float>(f, 100u, 0.0f, 1e-37f); }) ==
        "even bins: 100 bins over [0, 1e-37) are too narrow: bins / (upper - lower) overflows "
        "float; the levels must be at least bins / FLT_MAX (2.93874e-37) apart");
  {
    const float width = 1e-36f;
    std::vector<float> tiny(100);
    for (size_t i = 0; i < tiny.size(); ++i) tiny[i] = width * (static_cast<float>(i) + 0.5f) / 100;
    CHECK(device::histogramEven<float>(tiny, 100u, 0.0f, width) == std::vector<uint32_t>(100, 1));
  }
  CHECK(
      errorOf([&] { device::histogramEven<uint32_t>(std::vector<uint32_t>(4), 60000u, 0u, 9u); }) ==
      "histogramEven: 60000 bins need 240000 bytes of shared memory per block; a block has at "
      "most 232448 (at most 58112 bins)");
  CHECK(
      errorOf([&] { device::histogramEven<uint32_t>(std::vector<uint32_t>(4), 70000u, 0u, 9u); }) ==
      "even bins: at most 65535 bins (a block's counters live in shared memory); got 70000");
  device::Options o = device::withPolicy<device::HistogramEven>({100, 4, 32, 1024});
  CHECK(errorOf([&] { device::histogramEven<uint8_t>(in, 16u, 0u, 256u, o); }) ==
        "HistogramPolicy: threads must be a multiple of 32 up to 1024; got 100");
  o = device::withPolicy<device::HistogramEven>({128, 4, 3, 1024});
  CHECK(errorOf([&] { device::histogramEven<uint8_t>(in, 16u, 0u, 256u, o); }) ==
        "HistogramPolicy: copies must be a power of two up to 32; got 3");
  // A direct launch with a bins array of the wrong size is refused by the kernel's precondition.
  const Kernel k = histogramKernel<uint32_t>(16, {128, 1, 1, 1024});
  std::vector<uint32_t> words(8, 1), bins(15);
  CHECK(errorOf([&] {
          simulate(k, {words, bins, 8u, 1u, 0u, 16u, uint64_t{1} << 32, uint64_t{32}});
        }).find("histogram: the bins array holds 16 counters") != std::string::npos);
}
