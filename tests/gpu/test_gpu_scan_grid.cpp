// GPU tests of scanGrid (label gpu): the single-pass scan with decoupled look-back matches C++
// for awkward sizes, inclusive and exclusive, launch after launch (the epochs keep old flags
// from confusing a new launch), and with an occupancy-sized grid whose blocks draw several
// tickets each.
#include <doctest/doctest.h>

#include <random>

#include "../../examples/scan/scan.hpp"

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
