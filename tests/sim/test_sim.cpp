// The simulator runs the paper's kernels on random data of awkward sizes and matches plain C++
// references; differential runs (no shared-memory reuse, other thread counts, fewer real
// blocks) agree exactly, which checks the allocator and virtualization.
#include <doctest/doctest.h>

#include <numeric>
#include <obsidian/sim.hpp>
#include <random>

#include "../../examples/increment/increment.hpp"
#include "../../examples/reduce/reduce.hpp"
#include "../kernels.hpp"

using namespace obsidian;

namespace {

std::vector<uint32_t> randomWords(size_t n, uint32_t seed, uint32_t below = 1u << 20) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) x = rng() % below + 1;  // never all zeros
  return v;
}

std::vector<uint32_t> blockSums(const std::vector<uint32_t>& in, size_t chunk) {
  std::vector<uint32_t> out(in.size() / chunk);
  for (size_t b = 0; b < out.size(); ++b) {
    out[b] = std::accumulate(in.begin() + static_cast<long>(b * chunk),
                             in.begin() + static_cast<long>((b + 1) * chunk), 0u);
  }
  return out;
}

// Runs a chunked reduction kernel on `blocks` chunks and compares with the reference.
void checkReduction(const Kernel& k, size_t chunk, size_t blocks, uint32_t seed,
                    const SimOptions& options = {}) {
  const auto in = randomWords(chunk * blocks, seed);
  std::vector<uint32_t> out(blocks, 0xdeadbeef);
  simulate(k, {in, out}, options);
  CHECK(out == blockSums(in, chunk));
}

}  // namespace

TEST_CASE("sim: increment and increment2 match the reference on odd block counts") {
  for (size_t blocks : {1u, 3u, 37u}) {
    const auto in = randomWords(256 * blocks, 7);
    std::vector<uint32_t> out(in.size());
    simulate(paper::incrementKernel(), {in, out});
    for (size_t i = 0; i < in.size(); ++i) REQUIRE(out[i] == in[i] + 1);
  }
  const auto in = randomWords(8192 * 3, 8);
  std::vector<uint32_t> out(in.size());
  simulate(paper::increment2Kernel(), {in, out});
  for (size_t i = 0; i < in.size(); ++i) REQUIRE(out[i] == in[i] + 1);
}

TEST_CASE("sim: increment over chunks that are not a power of two, virtualized threads") {
  for (uint32_t chunk : {100u, 300u, 1000u}) {
    const Kernel k = capture(
        "incOdd", 64, [chunk](DPull<EWord32> in) { return paper::increment(splitUp(chunk, in)); });
    const auto in = randomWords(chunk * 5, chunk);
    std::vector<uint32_t> out(in.size());
    simulate(k, {in, out});
    for (size_t i = 0; i < in.size(); ++i) REQUIRE(out[i] == in[i] + 1);
  }
}

TEST_CASE("sim: a grid-level push over any length (no chunking)") {
  const Kernel k = capture("addOne", 128, [](DPull<EWord32> in) {
    return push<Grid>(fmap([](const EWord32& x) { return x * 3u + 1u; }, in));
  });
  for (size_t n : {1u, 127u, 129u, 1000u, 4097u}) {
    const auto in = randomWords(n, static_cast<uint32_t>(n));
    std::vector<uint32_t> out(n);
    simulate(k, {in, out}, SimOptions{.blocks = 3});
    for (size_t i = 0; i < n; ++i) REQUIRE(out[i] == in[i] * 3 + 1);
  }
}

TEST_CASE("sim: sumUp', red3 and red5 compute block sums") {
  checkReduction(paper::sumUpKernel(), 8, 41, 1);
  checkReduction(paper::red3Kernel(512, 256), 512, 13, 2);
  checkReduction(paper::red5Kernel(4096, 512), 4096, 5, 3);
  // Fewer threads than the reduction's first stage: virtualized threads.
  checkReduction(paper::red3Kernel(2048, 64), 2048, 3, 4);
  checkReduction(paper::red5Kernel(4096, 128), 4096, 2, 5);
}

TEST_CASE("sim: red1 and red2 with other operators and element types") {
  auto maxOp = [](const EWord32& a, const EWord32& b) { return max(a, b); };
  const Kernel k1 = capture("red1max", 128, [maxOp](DPull<EWord32> in) {
    return mapRed(
        256,
        [maxOp](const Program<Block>& p, const SPull<EWord32>& c) {
          return red1(p, maxOp, c);
        },
        in);
  });
  const auto in = randomWords(256 * 9, 11);
  std::vector<uint32_t> out(9);
  simulate(k1, {in, out});
  for (size_t b = 0; b < 9; ++b) {
    CHECK(out[b] == *std::max_element(in.begin() + static_cast<long>(b * 256),
                                      in.begin() + static_cast<long>((b + 1) * 256)));
  }
  const Kernel k2 = capture("red2f", 64, [](DPull<EFloat> in) {
    return pConcat(fmap(
        [](const SPull<EFloat>& c) {
          return singletonPush<Block>([c](const Program<Block>& p) {
            return red2(
                p, [](const EFloat& a, const EFloat& b) { return a + b; }, c);
          });
        },
        splitUp(128, in)));
  });
  std::vector<float> fin(128 * 4);
  for (size_t i = 0; i < fin.size(); ++i) fin[i] = 0.25f * static_cast<float>(i % 17) + 1.0f;
  std::vector<float> fout(4);
  simulate(k2, {fin, fout});
  for (size_t b = 0; b < 4; ++b) {
    // red2 adds the halves pairwise: the same tree in float gives the same result.
    std::vector<float> level(fin.begin() + static_cast<long>(b * 128),
                             fin.begin() + static_cast<long>((b + 1) * 128));
    while (level.size() > 1) {
      std::vector<float> next(level.size() / 2);
      for (size_t i = 0; i < next.size(); ++i) next[i] = level[i] + level[i + next.size()];
      level = next;
    }
    CHECK(fout[b] == level[0]);
  }
}

TEST_CASE("sim: agnostic at Block and at Warp level") {
  for (const Kernel& k : {paper::agnosticBlockKernel(), paper::agnosticWarpKernel()}) {
    const auto in = randomWords(256 * 7, 5);
    std::vector<uint32_t> out(in.size());
    simulate(k, {in, out});
    for (size_t i = 0; i < in.size(); ++i) REQUIRE(out[i] == (in[i] + 1) * 2 + 3);
  }
}

TEST_CASE("sim: differential — shared-memory reuse, thread counts and block counts agree") {
  const auto in = randomWords(2048 * 6, 99);
  auto red = [](uint32_t threads, bool reuse) {
    CaptureOptions o;
    o.reuseSharedMemory = reuse;
    return capture(
        "red3d", threads,
        [](DPull<EWord32> x) {
          return mapRed(
              2048,
              [](const Program<Block>& p, const SPull<EWord32>& c) {
                return red3(p, 2, paper::plus, c);
              },
              x);
        },
        o);
  };
  std::vector<uint32_t> reference(6);
  const Kernel base = red(256, true);
  simulate(base, {in, reference});
  CHECK(reference == blockSums(in, 2048));
  const Kernel noReuse = red(256, false);
  CHECK(noReuse.sharedBytes() > base.sharedBytes());
  for (const auto& [threads, reuse] : std::vector<std::pair<uint32_t, bool>>{
           {256, false}, {32, true}, {64, false}, {1000, true}, {1024, true}}) {
    for (uint32_t blocks : {0u, 1u, 4u}) {
      std::vector<uint32_t> out(6);
      simulate(red(threads, reuse), {in, out}, SimOptions{.blocks = blocks});
      CHECK_MESSAGE(out == reference,
                    "threads " << threads << " reuse " << reuse << " blocks " << blocks);
    }
  }
}

TEST_CASE("sim: sequential loops, seqScan and per-thread arrays") {
  const Kernel k = capture("scan4", 64, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return tConcat<Block>(fmap(
              [](const SPull<EWord32>& part) {
                return exec<Thread>([part](const Program<Thread>& p) {
                  auto copy = forcePull(p, fmap([](const EWord32& x) { return x * 3u; }, part));
                  return seqScan([](const EWord32& a, const EWord32& b) { return a + b; }, copy);
                });
              },
              splitUp(4, c)));
        },
        splitUp(256, in)));
  });
  const auto in = randomWords(256 * 3, 21);
  std::vector<uint32_t> out(in.size());
  simulate(k, {in, out});
  for (size_t i = 0; i < in.size(); i += 4) {
    uint32_t acc = 0;
    for (size_t j = 0; j < 4; ++j) {
      acc += in[i + j] * 3;
      REQUIRE(out[i + j] == acc);
    }
  }
}

TEST_CASE("sim: seqUntil with a tuple state (Mandelbrot iterations) matches float C++") {
  const uint32_t width = 48, rows = 5;
  const Kernel k = capture("mandelRows", 32, [](EWord32 height) {
    auto iters = [](const EWord32& bid, const EWord32& tid) {
      const EFloat cx = w32ToF(tid) * 0.0625f - 2.0f, cy = w32ToF(bid) * 0.25f - 0.6f;
      using State = hana::tuple<EFloat, EFloat, EWord32>;
      auto f = [cx, cy](const State& s) {
        const EFloat x = hana::at_c<0>(s), y = hana::at_c<1>(s);
        return State(x * x - y * y + cx, 2.0f * x * y + cy, hana::at_c<2>(s) + 1u);
      };
      auto cond = [](const State& s) {
        const EFloat x = hana::at_c<0>(s), y = hana::at_c<1>(s);
        return (x * x + y * y < 4.0f) && (hana::at_c<2>(s) < 512u);
      };
      return fmap([](const State& s) { return hana::at_c<2>(s); },
                  seqUntil(f, cond, State(EFloat(0.0f), EFloat(0.0f), EWord32(1u))));
    };
    return pConcat(mkPull(height, [iters](const EWord32& bid) {
      return tConcat<Block>(
          mkPull(48u, [iters, bid](const EWord32& tid) { return iters(bid, tid); }));
    }));
  });
  std::vector<uint32_t> out(width * rows);
  simulate(k, {rows, out});
  for (uint32_t b = 0; b < rows; ++b) {
    for (uint32_t t = 0; t < width; ++t) {
      const float cx = static_cast<float>(t) * 0.0625f - 2.0f,
                  cy = static_cast<float>(b) * 0.25f - 0.6f;
      float x = 0, y = 0;
      uint32_t it = 1;
      while (x * x + y * y < 4.0f && it < 512) {
        const float nx = x * x - y * y + cx, ny = 2.0f * x * y + cy;
        x = nx;
        y = ny;
        ++it;
      }
      REQUIRE(out[b * width + t] == it);
    }
  }
}

TEST_CASE("sim: atomics on shared and global arrays (a histogram)") {
  const Kernel k = testing::histogramKernel("hist", 128, 512);
  const auto in = randomWords(512 * 5, 33);
  std::vector<uint32_t> bins(16, 0), copy(in.size());
  simulate(k, {in, bins, copy});
  std::vector<uint32_t> expected(16, 0);
  for (uint32_t x : in) ++expected[x % 16];
  CHECK(bins == expected);
  CHECK(copy == in);
}

TEST_CASE("sim: deterministic, and the step guard stops a loop that never ends") {
  const auto in = randomWords(512 * 4, 3);
  std::vector<uint32_t> a(4), b(4);
  const SimStats s1 = simulate(paper::red3Kernel(), {in, a});
  const SimStats s2 = simulate(paper::red3Kernel(), {in, b});
  CHECK(a == b);
  CHECK(s1.threadSteps == s2.threadSteps);
  CHECK(s1.blocks == 4);

  const Kernel forever = capture("forever", 32, [](DPull<EWord32> in) {
    return push<Grid>(fmap([](const EWord32& x) { return x; }, in));
  });
  const Kernel spin = capture("spin", 32, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return tConcat<Block>(fmap(
              [](const EWord32& x) {
                return seqUntil([](const EWord32& s) { return s + 0u * s; },
                                [](const EWord32& s) { return s == s; }, x);
              },
              c));
        },
        splitUp(32, in)));
  });
  std::vector<uint32_t> small = randomWords(32, 4), out(32);
  SimOptions o;
  o.maxStepsPerThread = 1000;
  CHECK_THROWS_WITH_AS(simulate(spin, {small, out}, o), doctest::Contains("does a loop never end?"),
                       Error);
  CHECK_NOTHROW(simulate(forever, {small, out}));
}

TEST_CASE("sim: launch arguments are checked before anything runs") {
  const Kernel k = paper::red3Kernel();
  std::vector<uint32_t> in(1000, 1), out(2, 7);
  CHECK_THROWS_WITH_AS(simulate(k, {in}),
                       "launch of kernel red3: expected 2 argument(s) (in0: uint32_t array, out0: "
                       "writable uint32_t array); got 1",
                       Error);
  CHECK_THROWS_WITH_AS(simulate(k, {in, out}),
                       "launch of kernel red3: splitUp(512) needs a length divisible by 512 "
                       "(n0 % 512u == 0u fails with n0 = 1000)",
                       Error);
  std::vector<uint32_t> in2(1024, 1);
  std::vector<uint32_t> tiny(1);
  CHECK_THROWS_WITH_AS(simulate(k, {in2, tiny}),
                       "launch of kernel red3: argument out0 has 1 elements; the kernel writes 2 "
                       "(n0 / 512u)",
                       Error);
  const std::vector<uint32_t> constOut(2);
  CHECK_THROWS_WITH_AS(simulate(k, {in2, constOut}),
                       doctest::Contains("argument 1 (out0) is written by the kernel"), Error);
  std::vector<float> wrongType(1024);
  CHECK_THROWS_WITH_AS(simulate(k, {wrongType, out}),
                       "launch of kernel red3: argument 0 (in0) must be an array of uint32_t; got "
                       "a writable array of 1024 float",
                       Error);
  CHECK_THROWS_WITH_AS(simulate(k, {uint32_t{5}, out}),
                       doctest::Contains("argument 0 (in0) must be an array of uint32_t; got a "
                                         "uint32_t scalar"),
                       Error);
  CHECK_THROWS_WITH_AS(
      simulate(k, {std::span<const uint32_t>(static_cast<const uint32_t*>(nullptr), 1024), out}),
      "launch of kernel red3: argument 0 (in0) is a null array", Error);
  CHECK(out == std::vector<uint32_t>{7, 7});  // nothing ran
  simulate(k, {in2, out});                    // and the next valid launch works
  CHECK(out == std::vector<uint32_t>{512, 512});
}

TEST_CASE("sim: takeP keeps the first n elements of a push array") {
  const Kernel k = capture("firstHalf", 32, [](DPull<EWord32> in) {
    return takeP(len(in) / 2u, push<Grid>(fmap([](const EWord32& x) { return x + 1u; }, in)));
  });
  const auto in = randomWords(101, 9);
  std::vector<uint32_t> out(50, 0);
  simulate(k, {in, out});
  for (size_t i = 0; i < 50; ++i) REQUIRE(out[i] == in[i] + 1);
  // Static n too.
  const SPull<EWord32> small = mkPull(8u, [](const EWord32& i) { return i; });
  CHECK(takeP(5u, push<Block>(small)).len() == 5u);
}

TEST_CASE("sim: splitUpRagged gives any length's chunks to blocks; takeP drops the rest") {
  // tests/kernels.hpp: chunks of 64, a block each, pair partners added through shared memory.
  const Kernel k = obsidian::testing::raggedPairs();
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{1000}, size_t{1001}}) {
    const auto in = randomWords(n, static_cast<uint32_t>(n) + 3);
    std::vector<uint32_t> out(n, 7);
    simulate(k, {in, out});  // a write past n would be an out-of-bounds hazard
    CHECK_MESSAGE(out == obsidian::testing::raggedPairsReference(in), "n = " << n);
  }
  // A static length, and chunks of 0.
  const SPull<EWord32> five = mkPull(5u, [](const EWord32& i) { return i; });
  CHECK(splitUpRagged(2, five).len() == 3u);
  CHECK_THROWS_WITH(splitUpRagged(0, five), "splitUpRagged: chunks of 0 elements");
}
