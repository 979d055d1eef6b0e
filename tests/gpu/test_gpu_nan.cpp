// GPU tests of NaN bits (label gpu, issue 40): f32 and f64 NaN patterns (signalling, quiet,
// payloads, both signs) through loads, stores, selects, bit casts, scalar arguments,
// arithmetic and conversions on the device equal the simulator and the measured rules of
// tests/nan_kernels.hpp bit for bit (but for which of two f64 NaN operands an operation
// returns); NaN constants printed in the CUDA keep their bits.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../nan_kernels.hpp"

using namespace obsidian;
using namespace obsidian::testing;

TEST_CASE("gpu: f32 NaN patterns equal the simulator and the measured rules, bit for bit") {
  std::vector<uint32_t> a, b;
  allPairs(f32Patterns(), a, b);
  const std::vector<float> x = floatsOf<float>(a), y = floatsOf<float>(b);
  const uint32_t s = 0x7fa00005u;
  const Kernel k = f32NanKernel();
  gpu::DeviceBuffer<float> dx(x), dy(y);
  gpu::DeviceBuffer<uint32_t> dout(a.size() * kF32NanOps);
  gpu::launch(k, {dx, dy, std::bit_cast<float>(s), dout});
  std::vector<uint32_t> sim(a.size() * kF32NanOps);
  simulate(k, {x, y, std::bit_cast<float>(s), sim});
  const std::vector<uint32_t> got = dout.download(), want = f32NanReference(a, b, s);
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("pair " << i / kF32NanOps << " (0x" << std::hex << a[i / kF32NanOps] << ", 0x"
                 << b[i / kF32NanOps] << "), op " << std::dec << i % kF32NanOps);
    CHECK(got[i] == want[i]);
    CHECK(sim[i] == got[i]);
  }
}

TEST_CASE("gpu: f64 NaN patterns equal the simulator and the measured rules, bit for bit") {
  std::vector<uint64_t> a, b;
  allPairs(f64Patterns(), a, b);
  const std::vector<double> x = floatsOf<double>(a), y = floatsOf<double>(b);
  const uint64_t s = 0xfff4000000000007ull;
  const Kernel k = f64NanKernel();
  gpu::DeviceBuffer<double> dx(x), dy(y);
  gpu::DeviceBuffer<uint64_t> dout(a.size() * kF64NanOps);
  gpu::launch(k, {dx, dy, std::bit_cast<double>(s), dout});
  std::vector<uint64_t> sim(a.size() * kF64NanOps);
  simulate(k, {x, y, std::bit_cast<double>(s), sim});
  const std::vector<uint64_t> got = dout.download(), want = f64NanReference(a, b, s);
  CHECK(sim == want);  // the simulator: the first NaN operand, always
  for (size_t i = 0; i < want.size(); ++i) {
    const uint64_t x = a[i / kF64NanOps], y = b[i / kF64NanOps];
    const uint32_t op = i % kF64NanOps;
    INFO("pair " << i / kF64NanOps << " (0x" << std::hex << x << ", 0x" << y << "), op " << std::dec
                 << op);
    // Of two NaN operands of + - * / min max the GPU returns either, quieted: which one depends
    // on the operand order ptxas chooses (it reorders commutative ones) and was seen to differ
    // between the H100 and the H200 (fuzz/RESULTS.md, finding 6).
    const bool twoNans = nanref::nan64(x) && nanref::nan64(y) && op >= 1 && op <= 6;
    CHECK((got[i] == want[i] || (twoNans && got[i] == (y | (1ull << 51)))));
  }
}

TEST_CASE("gpu: NaN constants in the CUDA keep their bits") {
  const Kernel k = nanConstantKernel();
  gpu::DeviceBuffer<uint32_t> in(std::vector<uint32_t>{0, 1, 2, 3, 4, 5}), out(6);
  gpu::launch(k, {in, out});
  CHECK(out.download() == nanConstantReference());
}

TEST_CASE("gpu: an f64 NaN constant whose low word reads as an f32 signalling NaN keeps it") {
  for (const bool share : {true, false}) {
    CAPTURE(share);
    const Kernel k = nanLowWordKernel(share);
    std::vector<uint32_t> v(8);
    for (uint32_t i = 0; i < 8; ++i) v[i] = i;
    gpu::DeviceBuffer<uint32_t> in(v), out(8);
    gpu::launch(k, {in, out});
    CHECK(out.download() == nanLowWordReference());
  }
}

TEST_CASE("gpu: min and max of one NaN value with itself give it, as on the simulator") {
  // The CUDA compiler folds max(x, x) to x (keeping a NaN's bits); the library folds it too.
  const Kernel k = capture("selfMinMax", 32, [](DPull<EWord32> in) {
    return push<Grid>(fmap(
        [](const EWord32& w) {
          const EFloat x = bitcast<float>(w);
          return ifThenElse((w & 1u) == 0u, bitcast<uint32_t>(max(x, x)),
                            bitcast<uint32_t>(min(x, x)));
        },
        in));
  });
  const std::vector<uint32_t> words = {0xffd3b51eu, 0x7fa00001u, 0x7fc00000u,
                                       0xff800001u, 0x3f800000u, 0x80000000u};
  gpu::DeviceBuffer<uint32_t> in(words), out(words.size());
  gpu::launch(k, {in, out});
  std::vector<uint32_t> sim(words.size());
  simulate(k, {words, sim});
  CHECK(out.download() == words);
  CHECK(sim == words);
}
