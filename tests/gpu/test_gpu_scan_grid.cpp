// GPU tests of scanGrid (label gpu): the single-pass scan with decoupled look-back matches C++
// for awkward sizes, inclusive and exclusive, launch after launch (the epochs keep old flags
// from confusing a new launch), and with an occupancy-sized grid whose blocks draw several
// tickets each.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <random>

#include "../../examples/scan/scan.hpp"
#include "../support.hpp"

using namespace obsidian;

namespace {

EWord32 plusW(const EWord32& a, const EWord32& b) { return a + b; }

std::vector<uint32_t> scanned(const std::vector<uint32_t>& in, bool exclusive) {
  std::vector<uint32_t> out(in.size());
  uint32_t acc = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (exclusive) out[i] = acc;
    acc += in[i];
    if (!exclusive) out[i] = acc;
  }
  return out;
}

}  // namespace

TEST_CASE("gpu: scanGrid in one launch, any length, launch after launch") {
  for (ScanKind kind : {ScanKind::Inclusive, ScanKind::Exclusive}) {
    const Kernel k = scanKernel<uint32_t>(plusW, ScanPolicy{256, 15}, kind, 0u);
    const bool exclusive = kind == ScanKind::Exclusive;
    for (size_t n : {size_t{1}, size_t{1000}, (size_t{1} << 20) + 3, (size_t{1} << 24) + 7}) {
      std::mt19937 rng(static_cast<uint32_t>(n));
      std::vector<uint32_t> in(n);
      for (uint32_t& x : in) x = rng();
      const std::vector<uint32_t> want = scanned(in, exclusive);
      gpu::DeviceBuffer<uint32_t> din(in), out(n);
      for (int repeat = 0; repeat < 3; ++repeat) {
        out.zero();
        gpu::launch(k, {din, out});
        CHECK_MESSAGE(out.download() == want, "n " << n << ", launch " << repeat);
      }
      gpu::LaunchOptions fill;
      fill.fillDevice = true;
      gpu::launch(k, {din, out}, fill);
      CHECK_MESSAGE(out.download() == want, "n " << n << ", occupancy-sized grid");
    }
  }
}

TEST_CASE("gpu: scanGrid with a paper block scan (sklansky3) and f32") {
  const auto plusF = [](const EFloat& a, const EFloat& b) { return a + b; };
  const auto scan = blockScanOf(BlockScanAlgorithm::Sklansky3, plusF);
  const Kernel k = scanGridKernel<float>("scanSklansky3", plusF, scan, 2048, 1024);
  std::vector<float> in(300001);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0.25f * static_cast<float>(i % 3);  // exact
  gpu::DeviceBuffer<float> din(in), out(in.size());
  gpu::launch(k, {din, out});
  const std::vector<float> got = out.download();
  float acc = 0;
  bool ok = true;
  for (size_t i = 0; i < in.size(); ++i) ok = ok && got[i] == (acc += in[i]);
  CHECK(ok);
}

namespace {
// The scan of `in` by policy's kernel, launched twice (the second in a new epoch), against want.
template <class X, class Op>
void checkOnGpu(Op f, const ScanPolicy& policy, ScanKind kind, X identity, const std::vector<X>& in,
                const std::vector<X>& want, const char* what) {
  const Kernel k = scanKernel<X>(f, policy, kind, identity);
  gpu::DeviceBuffer<X> din(in), out(in.size());
  for (int repeat = 0; repeat < 2; ++repeat) {
    out.zero();
    gpu::launch(k, {din, out});
    CHECK_MESSAGE(out.download() == want, what << ", n " << in.size() << ", launch " << repeat);
  }
}
}  // namespace

TEST_CASE("gpu: scanGrid's packed status words (i32, f32) and wide ones (u64, f64)") {
  for (size_t n : {size_t{3}, size_t{100003}, (size_t{1} << 22) + 5}) {
    std::mt19937 rng(static_cast<uint32_t>(n) + 7);
    std::vector<int32_t> ints(n);
    for (int32_t& x : ints) x = -static_cast<int32_t>(rng() % 1000000) - 1;  // max stays < 0
    checkOnGpu<int32_t>(
        Max{}, ScanPolicy{128, 11}, ScanKind::Inclusive, INT32_MIN, ints,
        ::testing::hostScan<int32_t>(
            ints, [](int32_t a, int32_t b) { return std::max(a, b); }, true, INT32_MIN),
        "i32 max");
    std::vector<float> floats(n);
    for (float& x : floats) x = -0.25f * static_cast<float>(rng() % 8);  // sums exact in f32
    checkOnGpu<float>(Sum{}, ScanPolicy{128, 11, BlockLoadAlgorithm::WarpStriped},
                      ScanKind::Exclusive, 0.0f, floats,
                      ::testing::hostScan<float>(
                          floats, [](float a, float b) { return a + b; }, false, 0.0f),
                      "f32 exclusive sum, warp-striped");
    std::vector<uint64_t> words(n);
    for (uint64_t& x : words) x = (uint64_t{rng()} << 24) ^ rng();
    checkOnGpu<uint64_t>(Sum{}, ScanPolicy{128, 11}, ScanKind::Inclusive, uint64_t{0}, words,
                         ::testing::hostScan<uint64_t>(
                             words, [](uint64_t a, uint64_t b) { return a + b; }, true, 0),
                         "u64 sum");
    std::vector<double> doubles(n);
    for (double& x : doubles) x = 0.5 * static_cast<double>(rng() % 4096);  // exact in f64
    checkOnGpu<double>(Sum{}, ScanPolicy{96, 9, BlockLoadAlgorithm::WarpStriped},
                       ScanKind::Exclusive, 0.0, doubles,
                       ::testing::hostScan<double>(
                           doubles, [](double a, double b) { return a + b; }, false, 0.0),
                       "f64 exclusive sum, warp-striped");
  }
}

TEST_CASE("gpu: bitcasts are CUDA's reinterpretations") {
  const Kernel k = capture("bits", 128, [](DPull<EFloat> in) {
    return push<Grid>(fmap(
        [](const EFloat& x) {
          const EWord32 w = bitcast<uint32_t>(x);
          const EFloat back = bitcast<float>(w ^ 0x80000000u);  // the sign flipped
          // + 0.0 (kept: it is not an identity for -0.0) keeps the two bitcasts apart.
          const EDouble d = bitcast<double>(cast<uint64_t>(w) << EWord64(32)) + 0.0;
          return cast<uint32_t>(bitcast<uint64_t>(d) >> EWord64(32)) +
                 bitcast<uint32_t>(bitcast<int32_t>(back));
        },
        in));
  });
  std::vector<float> in(1000);
  std::mt19937 rng(5);
  for (float& x : in)
    x = std::bit_cast<float>(static_cast<uint32_t>(rng() & 0x7f7fffffu));  // finite
  gpu::DeviceBuffer<float> din(in);
  gpu::DeviceBuffer<uint32_t> out(in.size());
  gpu::launch(k, {din, out});
  std::vector<uint32_t> want(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const uint32_t w = std::bit_cast<uint32_t>(in[i]);
    want[i] = w + (w ^ 0x80000000u);
  }
  CHECK(out.download() == want);
  std::vector<uint32_t> sim(in.size());
  simulate(k, {in, sim});
  CHECK(sim == want);
}

TEST_CASE("gpu: selectIf and selectFlagged write the selection and its count in one launch") {
  const ScanPolicy policy{256, 15, BlockLoadAlgorithm::WarpStriped};
  const Kernel k = capture("selectOdd", 256, [policy](DPull<EWord32> in) {
    return selectIf<uint32_t>(
        in, [](const EWord32& v) { return (v & 1u) != 0u; }, policy);
  });
  const Kernel kf = capture("selectFlags", 256, [policy](DPull<EWord32> in, DPull<EWord32> f) {
    return selectFlagged<uint32_t>(in, f, policy);
  });
  for (size_t n : {size_t{0}, size_t{1}, size_t{3839}, size_t{3841}, (size_t{1} << 22) + 5}) {
    std::mt19937 rng(static_cast<uint32_t>(n) + 1);
    std::vector<uint32_t> in(n), flags(n), odd, flagged;
    for (size_t i = 0; i < n; ++i) {
      in[i] = rng();
      flags[i] = rng() % 5 == 0 ? rng() | 1u : 0u;
      if (in[i] & 1u) odd.push_back(in[i]);
      if (flags[i] != 0) flagged.push_back(in[i]);
    }
    gpu::DeviceBuffer<uint32_t> din(in), dflags(flags), out(n), count(1);
    for (int repeat = 0; repeat < 3; ++repeat) {
      gpu::LaunchOptions o;
      o.fillDevice = repeat == 2;  // blocks drawing several tickets
      for (bool byFlags : {false, true}) {
        const std::vector<uint32_t>& want = byFlags ? flagged : odd;
        count.zero();
        if (byFlags) {
          gpu::launch(kf, {din, dflags, out, count}, o);
        } else {
          gpu::launch(k, {din, out, count}, o);
        }
        const uint32_t got = count.download()[0];
        REQUIRE_MESSAGE(got == want.size(), "n " << n << ", launch " << repeat);
        const std::vector<uint32_t> values = out.download();
        CHECK_MESSAGE(std::equal(want.begin(), want.end(), values.begin()),
                      "n " << n << ", launch " << repeat << ", flags " << byFlags);
      }
    }
  }
}
