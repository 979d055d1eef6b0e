// The paper's scans (examples/scan: sklansky, sklansky2, sklansky3, Kogge-Stone) on the
// simulator: every variant, inclusive and exclusive, over chunk sizes and thread counts
// (virtualized ones included), with +, max, a non-commutative operator and tuple elements,
// and the large scan of any length, all against plain C++ scans.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <obsidian/sim.hpp>
#include <random>
#include <string>

#include "../../examples/scan/scan.hpp"

using namespace obsidian;
using paper::ScanVariant;

namespace {

// An associative operator: the kernels' (on Exp<X>), the reference's (on X), its identity.
template <class X>
struct Monoid {
  std::function<Exp<X>(const Exp<X>&, const Exp<X>&)> op;
  std::function<X(X, X)> host;
  X identity;
};

const Monoid<uint32_t> plusU32{[](const EWord32& a, const EWord32& b) { return a + b; },
                               [](uint32_t a, uint32_t b) { return a + b; }, 0u};
const Monoid<float> plusF32{[](const EFloat& a, const EFloat& b) { return a + b; },
                            [](float a, float b) { return a + b; }, 0.0f};
const Monoid<uint32_t> maxU32{[](const EWord32& a, const EWord32& b) { return max(a, b); },
                              [](uint32_t a, uint32_t b) { return std::max(a, b); }, 0u};

// Affine maps x -> a*x + b (mod 2^16) packed as a << 16 | b; affine(f, g) is f then g:
// associative, not commutative (it checks that every scan keeps its operands in order).
template <class W>
W affine(const W& f, const W& g) {
  const W af = f >> 16u, bf = f & 0xffffu, ag = g >> 16u, bg = g & 0xffffu;
  return ((af * ag) << 16u) | ((ag * bf + bg) & 0xffffu);
}
const Monoid<uint32_t> affineU32{affine<EWord32>, affine<uint32_t>, 1u << 16};

std::vector<uint32_t> randomWords(size_t n, uint32_t seed, uint32_t below = 1u << 20) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) x = rng() % below + 1;  // never zero
  return v;
}

// Non-zero integers in [-8, 8]: their float sums are exact in any order.
std::vector<float> smallIntegerFloats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  const std::vector<uint32_t> w = randomWords(n, seed, 16);
  for (size_t i = 0; i < n; ++i) {
    const int k = static_cast<int>(w[i]);
    v[i] = static_cast<float>(k <= 8 ? -k : k - 8);
  }
  return v;
}

// The scan of every chunk of `in` (the last may be short).
template <class X>
std::vector<X> reference(const std::function<X(X, X)>& op, X identity, const std::vector<X>& in,
                         size_t chunk, bool exclusive) {
  std::vector<X> out(in.size());
  for (size_t b = 0; b < in.size(); b += chunk) {
    X acc = identity;
    for (size_t i = b; i < std::min(in.size(), b + chunk); ++i) {
      if (exclusive) out[i] = acc;
      acc = op(acc, in[i]);
      if (!exclusive) out[i] = acc;
    }
  }
  return out;
}

std::string describe(ScanVariant v, uint32_t log, uint32_t threads, bool exclusive) {
  return name(v) + (exclusive ? " exclusive" : "") + ", chunk 2^" + std::to_string(log) + ", " +
         std::to_string(threads) + " threads";
}

struct Config {
  uint32_t log;
  uint32_t threads;  // 0: one thread per element (two for sklansky2/3)
};

// Every variant at every config, inclusive and exclusive, on `chunks` chunks of input.
template <class X>
void checkBlockScans(const Monoid<X>& m, const std::vector<Config>& configs,
                     const std::function<std::vector<X>(size_t)>& data, size_t chunks = 3,
                     const SimOptions& options = {}) {
  for (ScanVariant v : paper::scanVariants) {
    for (const Config& c : configs) {
      if (c.log == 0 && elementsPerThread(v) == 2) continue;
      const uint32_t threads = c.threads ? c.threads : paper::naturalThreads(v, c.log);
      const std::vector<X> in = data(chunks << c.log);
      for (bool exclusive : {false, true}) {
        const Kernel k = exclusive
                             ? tileScanKernel<X>(v, m.op, 1u << c.log, threads, true, m.identity)
                             : tileScanKernel<X>(v, m.op, 1u << c.log, threads);
        std::vector<X> out(in.size());
        simulate(k, {in, out}, options);
        CHECK_MESSAGE(out == reference(m.host, m.identity, in, size_t{1} << c.log, exclusive),
                      describe(v, c.log, threads, exclusive));
      }
    }
  }
}

// The large scan of n elements for every n in `sizes`, inclusive and exclusive.
template <class X>
void checkLargeScans(const Monoid<X>& m, ScanVariant v, uint32_t log, uint32_t threads,
                     const std::vector<size_t>& sizes,
                     const std::function<std::vector<X>(size_t)>& data) {
  const LargeScan k = largeScanKernels<X>(v, 1u << log, threads, m.op, m.identity);
  for (size_t n : sizes) {
    const std::vector<X> in = data(n);
    for (bool exclusive : {false, true}) {
      CHECK_MESSAGE(
          scanOnSimulator(k, in, exclusive) == reference(m.host, m.identity, in, n, exclusive),
          "large scan of " << n << " elements: " << describe(v, log, threads, exclusive));
    }
  }
}

const std::vector<size_t> largeSizes = {1, 2, 1000, 4096 * 3 + 5, 70000};

}  // namespace

TEST_CASE("scan: every variant, u32 +, over chunk sizes and thread counts (some virtualized)") {
  // {0, 0}: one-element chunks; {7, 16} and {10, 64}: fewer threads than the parallel loops.
  checkBlockScans<uint32_t>(plusU32, {{0, 0}, {1, 0}, {5, 0}, {7, 16}, {9, 0}, {10, 64}},
                            [](size_t n) { return randomWords(n, static_cast<uint32_t>(n)); });
}

TEST_CASE("scan: every variant, f32 + (exact: small integers), and u32 max") {
  checkBlockScans<float>(plusF32, {{4, 0}, {8, 32}},
                         [](size_t n) { return smallIntegerFloats(n, static_cast<uint32_t>(n)); });
  checkBlockScans<uint32_t>(maxU32, {{6, 0}, {8, 32}}, [](size_t n) {
    return randomWords(n, static_cast<uint32_t>(n), 1u << 30);
  });
}

TEST_CASE("scan: a non-commutative operator keeps its operands in order, every variant") {
  checkBlockScans<uint32_t>(affineU32, {{6, 0}, {8, 32}}, [](size_t n) {
    return randomWords(n, static_cast<uint32_t>(n), UINT32_MAX);
  });
}

TEST_CASE("scan: fewer real blocks than chunks (block virtualization)") {
  checkBlockScans<uint32_t>(
      plusU32, {{6, 0}, {6, 16}}, [](size_t n) { return randomWords(n, 5); }, 7,
      SimOptions{.blocks = 3});
}

TEST_CASE("scan: tuple elements (affine maps as pairs), inclusive and exclusive") {
  using Pair = hana::tuple<EWord32, EWord32>;
  // (a1, b1) then (a2, b2) = (a1 a2, a2 b1 + b2), mod 2^32
  auto compose = [](const Pair& f, const Pair& g) {
    const EWord32 a1 = hana::at_c<0>(f), b1 = hana::at_c<1>(f), a2 = hana::at_c<0>(g),
                  b2 = hana::at_c<1>(g);
    return Pair(a1 * a2, a2 * b1 + b2);
  };
  const uint32_t log = 6, chunk = 1u << log, chunks = 3;
  const std::vector<uint32_t> a = randomWords(chunk * chunks, 1, UINT32_MAX),
                              b = randomWords(chunk * chunks, 2, UINT32_MAX);
  for (ScanVariant v : paper::scanVariants) {
    for (bool exclusive : {false, true}) {
      const auto scan = [v, exclusive, compose](const Program<Block>& p, const SPull<Pair>& c) {
        return exclusive ? blockExclusiveScan(v, p, compose, Pair(1u, 0u), c)
                         : blockScan(v, p, compose, c);
      };
      const Kernel k = capture("affinePairs", paper::naturalThreads(v, log),
                               [scan](DPull<Pair> in) { return mapScan(chunk, scan, in); });
      std::vector<uint32_t> outA(a.size()), outB(a.size());
      simulate(k, {a, b, outA, outB});
      bool ok = true;
      for (size_t c = 0; c < chunks; ++c) {
        uint32_t accA = 1, accB = 0;
        for (size_t i = c * chunk; i < (c + 1) * chunk; ++i) {
          if (exclusive) ok = ok && outA[i] == accA && outB[i] == accB;
          accB = a[i] * accB + b[i];
          accA = accA * a[i];
          if (!exclusive) ok = ok && outA[i] == accA && outB[i] == accB;
        }
      }
      CHECK_MESSAGE(ok, describe(v, log, paper::naturalThreads(v, log), exclusive));
    }
  }
}

TEST_CASE("scan: large scans of any length, u32 +, every variant (three levels at 70000)") {
  for (ScanVariant v : paper::scanVariants) {
    checkLargeScans<uint32_t>(plusU32, v, 8, paper::naturalThreads(v, 8), largeSizes,
                              [](size_t n) { return randomWords(n, static_cast<uint32_t>(n)); });
  }
  const LargeScan k =
      largeScanKernels<uint32_t>(ScanVariant::Sklansky, 1u << 8, 256, plusU32.op, 0u);
  CHECK(ScanPlan<std::vector<uint32_t>>(k, 70000).levels() == 3);  // 70000, 274, 2
  CHECK(ScanPlan<std::vector<uint32_t>>(k, 256).levels() == 1);
}

TEST_CASE("scan: large scans, f32 +, u32 max, and a non-commutative operator") {
  checkLargeScans<float>(plusF32, ScanVariant::Sklansky3, 8, 128, largeSizes,
                         [](size_t n) { return smallIntegerFloats(n, static_cast<uint32_t>(n)); });
  // Virtualized threads, and a chunk of 2^10 (two levels at 70000).
  checkLargeScans<uint32_t>(maxU32, ScanVariant::KoggeStone, 10, 128, largeSizes, [](size_t n) {
    return randomWords(n, static_cast<uint32_t>(n), 1u << 30);
  });
  // The add-back (prefix before element) and exclusive block totals (last prefix before last
  // element) keep the operands in order too.
  checkLargeScans<uint32_t>(affineU32, ScanVariant::Sklansky2, 8, 32, largeSizes, [](size_t n) {
    return randomWords(n, static_cast<uint32_t>(n), UINT32_MAX);
  });
}

TEST_CASE("scan: mistakes are reported") {
  const LargeScan k =
      largeScanKernels<uint32_t>(ScanVariant::Sklansky, 1u << 4, 16, plusU32.op, 0u);
  std::vector<uint32_t> in(100, 1), sums(6), out(100);
  CHECK_THROWS_WITH_AS(simulate(k.inclusive, {in, sums, out}),
                       doctest::Contains("sums needs one element per chunk of 16 input elements"),
                       Error);
  CHECK_THROWS_WITH_AS(scanOnSimulator(k, std::vector<uint32_t>{}),
                       "a pipelined scan needs at least one element; got 0", Error);
  CHECK_THROWS_WITH_AS(capture("s2", 1,
                               [](DPull<EWord32> in) {
                                 return mapScan(1, blockScanOf(ScanVariant::Sklansky2, Sum{}), in);
                               }),
                       doctest::Contains("needs a tile of at least 2 elements; got 1"), Error);
  CHECK_THROWS_WITH_AS(capture("ks", 4,
                               [](DPull<EWord32> in) {
                                 return mapScan(12, blockScanOf(ScanVariant::KoggeStone, Sum{}),
                                                in);
                               }),
                       "blockScan(koggeStone) needs a power-of-two tile; got 12", Error);
}
