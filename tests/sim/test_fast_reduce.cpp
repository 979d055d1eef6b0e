// Wide loads (vectors<W>), grid state (newGlobal, threadFence) and the reductions built from
// them (include/obsidian/device/reduce.hpp, block/reduce.hpp), on the simulator: generated
// code, results against plain C++ for awkward sizes and grids, and the rules each capability
// checks.
#include <doctest/doctest.h>

#include <numeric>
#include <obsidian/sim.hpp>

#include "../../examples/reduce/reduce.hpp"
#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;
using testing::randomWords;

namespace {

uint32_t sum(const std::vector<uint32_t>& v, size_t from = 0, size_t n = SIZE_MAX) {
  uint32_t s = 0;
  for (size_t i = from; i < std::min(v.size(), from + n); ++i) s += v[i];
  return s;
}

EWord32 plusW(const EWord32& a, const EWord32& b) { return a + b; }

// Each thread of one block copies vector j of the input into out[4j .. 4j+3].
Kernel copyVectors(uint32_t threads) {
  return capture("copyVectors", threads, [](DPull<EWord32> in) {
    auto v = vectors<4>(in);
    return push<Grid>(mkPull(len(v) * 4u, [v](const EWord32& i) {
      const Vector<4, uint32_t> x = v[i / 4u];
      const EWord32 k = i % 4u;
      return ifThenElse(k == 0u, hana::at_c<0>(x),
                        ifThenElse(k == 1u, hana::at_c<1>(x),
                                   ifThenElse(k == 2u, hana::at_c<2>(x), hana::at_c<3>(x))));
    }));
  });
}

}  // namespace

TEST_CASE("vectors<4>: one 16-byte load per vector, read by lane") {
  const Kernel k =
      segmentedReduceKernel<uint32_t>(plusW, uint32_t{0}, 1024, SegmentedReducePolicy{64});
  const std::string cuda = k.cuda();
  CHECK(cuda.find("const uint32_t t0 = bid0 * 1024u / 4u + threadIdx.x;") != std::string::npos);
  CHECK(cuda.find("((const uint4*)in0)[t0].x") != std::string::npos);
  CHECK(cuda.find("].w") != std::string::npos);
  CHECK(k.ir().arrays[k.ir().params[0].array].alignment == 16);
  std::vector<uint32_t> in = randomWords(1024 * 3, 1), out(3);
  simulate(k, {in, out});
  for (size_t b = 0; b < 3; ++b) CHECK(out[b] == sum(in, b * 1024, 1024));
}

TEST_CASE("vectors<4>: the last len % 4 elements are not in it") {
  const Kernel k = copyVectors(32);
  for (size_t n : {0u, 3u, 4u, 37u, 64u}) {
    std::vector<uint32_t> in = randomWords(n, 2), out(n / 4 * 4);
    simulate(k, {in, out});
    CHECK(std::equal(out.begin(), out.end(), in.begin()));
  }
}

TEST_CASE("vectors<W>: the rules are checked when the kernel is generated") {
  CHECK(errorOf([] {
          capture("k", 32, [](DPull<EWord32> in) {
            return push<Grid>(fmap([](const Vector<4, uint32_t>& v) { return hana::at_c<0>(v); },
                                   vectors<4>(fmap([](const EWord32& x) { return x + 1u; }, in))));
          });
        }) ==
        "vectors<4> needs an array that reads a global array directly (a "
        "kernel parameter or a splitUp/splitAt/halve piece of one); element i of this "
        "one is in0[__vector_probe] + 1u");
  CHECK(errorOf([] {
          capture("k", 32, [](DPull<EWord32> in) {
            return push<Grid>(fmap([](const Vector<2, uint32_t>& v) { return hana::at_c<0>(v); },
                                   vectors<2>(splitAt(3, in).second)));
          });
        }) ==
        "vectors<2> needs the array to start at a multiple of 2 elements of "
        "in0 (so that every vector is aligned); it starts at 3u");
  CHECK(errorOf([] {
          capture("k", 32, [](DPull<EWord32> in) {
            return push<Grid>(fmap([](const Vector<4, uint32_t>& v) { return hana::at_c<0>(v); },
                                   vectors<4>(evenOdds(in).first)));
          });
        }) == "vectors<4> needs element i to be in0[base + i]; got in0[__vector_probe * 2u]");
}

TEST_CASE("vectors<4>: a launch checks the array's alignment") {
  const Kernel k = copyVectors(32);
  std::vector<uint32_t> in(65), out(64);
  std::span<const uint32_t> shifted(in.data() + 1, 64);  // 4 bytes past a 16-byte boundary
  CHECK(errorOf([&] {
          simulate(k, {shifted, out});
        }) ==
        "launch of kernel copyVectors: argument 0 (in0) must be 16-byte aligned: the kernel "
        "reads it with 16-byte vector loads (vectors<W>); got an address 4 bytes past a "
        "multiple of 16");
}

TEST_CASE("reduceAll: one launch, any length, any grid") {
  for (uint32_t blocks : {1u, 3u, 8u}) {
    // minVectorsPerThread 1: inputs under 8 x 64 vectors run fewer blocks than `blocks`.
    const Kernel k =
        reduceKernel<uint32_t>(plusW, 0u, ReducePolicy{64, 4, blocks == 8 ? 1u : 0u}, blocks);
    for (size_t n : {0u, 1u, 3u, 5u, 255u, 256u, 4099u, 70001u}) {
      const std::vector<uint32_t> in = randomWords(n, static_cast<uint32_t>(n + blocks));
      std::vector<uint32_t> out(1, 12345);
      simulate(k, {in, out});
      CHECK_MESSAGE(out[0] == sum(in), "n = " << n << ", blocks = " << blocks);
      SimOptions fewer;  // fewer real blocks than virtual ones: each loops
      fewer.blocks = 2;
      out[0] = 12345;
      simulate(k, {in, out}, fewer);
      CHECK_MESSAGE(out[0] == sum(in), "n = " << n << ", 2 real blocks of " << blocks);
    }
  }
}

TEST_CASE("reduceAll: f32, with grid state and a ticket in the CUDA") {
  const auto plusF = [](const EFloat& a, const EFloat& b) { return a + b; };
  const Kernel k = reduceKernel<float>(plusF, 0.0f, ReducePolicy{32, 2, 0}, 4);
  const std::string cuda = k.cuda();
  CHECK(cuda.find("__device__ float reduceAll_state0[4];") != std::string::npos);
  CHECK(cuda.find("__device__ uint32_t reduceAll_state1[1];") != std::string::npos);
  CHECK(cuda.find("__stcg(&reduceAll_state0[bid0], ") != std::string::npos);
  CHECK(cuda.find("__threadfence();\n      const uint32_t old0 = (uint32_t)atomicInc("
                  "&reduceAll_state1[0u], 3u);") != std::string::npos);
  CHECK(cuda.find("__ldcg(&reduceAll_state0[") != std::string::npos);
  std::vector<float> in(1001);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0.25f * static_cast<float>(i % 7);
  std::vector<float> out(1);
  simulate(k, {in, out});
  CHECK(out[0] == doctest::Approx(std::accumulate(in.begin(), in.end(), 0.0)));
}

TEST_CASE("transformReduceAll: the mapped elements of several inputs, folded as they load") {
  // sum of (a[i] - b[i]) * c[i] over u32 (wrapping), with tails of every length.
  const auto map = [](const EWord32& a, const EWord32& b, const EWord32& c) { return (a - b) * c; };
  for (uint32_t blocks : {1u, 5u}) {
    const Kernel k =
        capture("dotOfDifference", 64, [=](DPull<EWord32> a, DPull<EWord32> b, DPull<EWord32> c) {
          return transformReduceAll<uint32_t>(plusW, 0u, map, ReducePolicy{64, 2, 0}, blocks, a, b,
                                              c);
        });
    // Each input read once per element, with 16-byte loads.
    CHECK(k.cuda().find("uint4") != std::string::npos);
    for (size_t n : {0u, 1u, 3u, 7u, 256u, 1029u, 20003u}) {
      const auto a = randomWords(n, 1), b = randomWords(n, 2), c = randomWords(n, 3);
      uint32_t want = 0;
      for (size_t i = 0; i < n; ++i) want += (a[i] - b[i]) * c[i];
      std::vector<uint32_t> out(1, 12345);
      SimOptions two;
      two.blocks = 2;
      simulate(k, {a, b, c, out}, two);
      CHECK_MESSAGE(out[0] == want, "n = " << n << ", blocks = " << blocks);
    }
    // The inputs must have one length: a launch precondition.
    std::vector<uint32_t> out(1);
    CHECK(errorOf([&] {
            simulate(k, {randomWords(8, 1), randomWords(9, 2), randomWords(8, 3), out});
          }).find("transformReduceAll: the inputs have one length") != std::string::npos);
  }
  // Vectors of 2 (u64) and of 1 (u8: read one by one) on the grid-strided sweep (tiles off).
  const Kernel wide = capture("sumOfProducts64", 64, [](DPull<EWord64> a, DPull<EWord64> b) {
    return transformReduceAll<uint64_t>([](const EWord64& p, const EWord64& q) { return p + q; },
                                        uint64_t{0},
                                        [](const EWord64& p, const EWord64& q) { return p * q; },
                                        ReducePolicy{64, 2, 0, ReduceSweep::Strided}, 3, a, b);
  });
  const Kernel narrow = capture("sumOfDifferences8", 64, [](DPull<EWord8> a, DPull<EWord8> b) {
    return transformReduceAll<uint8_t>([](const EWord8& p, const EWord8& q) { return p + q; },
                                       uint8_t{0},
                                       [](const EWord8& p, const EWord8& q) { return p - q; },
                                       ReducePolicy{64, 2, 0, ReduceSweep::Strided}, 3, a, b);
  });
  for (size_t n : {0u, 1u, 5u, 777u, 5003u}) {
    std::vector<uint64_t> a(n), b(n);
    std::vector<uint8_t> c(n), d(n);
    uint64_t wantWide = 0;
    uint8_t wantNarrow = 0;
    for (size_t i = 0; i < n; ++i) {
      a[i] = (uint64_t{i} << 33) + 7 * i + 1;
      b[i] = 3 * i + 5;
      c[i] = static_cast<uint8_t>(i * 37 + 11);
      d[i] = static_cast<uint8_t>(i * 13);
      wantWide += a[i] * b[i];
      wantNarrow = static_cast<uint8_t>(wantNarrow + static_cast<uint8_t>(c[i] - d[i]));
    }
    std::vector<uint64_t> outWide(1, 99);
    std::vector<uint8_t> outNarrow(1, 99);
    simulate(wide, {a, b, outWide});
    simulate(narrow, {c, d, outNarrow});
    CHECK_MESSAGE(outWide[0] == wantWide, "u64, n = " << n);
    CHECK_MESSAGE(outNarrow[0] == wantNarrow, "u8, n = " << n);
  }
  // f32 through fmap on the result (the RMSE of examples/stencils).
  const Kernel rmse = capture("rmse", 128, [](DPull<EFloat> x, DPull<EFloat> y) {
    const EFloat count = cast<float>(len(x));
    return fmap([count](const EFloat& s) { return sqrt(s / count); },
                transformReduceAll<float>(
                    [](const EFloat& p, const EFloat& q) { return p + q; }, 0.0f,
                    [](const EFloat& p, const EFloat& q) { return (p - q) * (p - q); },
                    ReducePolicy{128, 4, 0}, 3, x, y));
  });
  std::vector<float> x(4099), y(4099);
  double sq = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = 0.5f * static_cast<float>(i % 13);
    y[i] = 0.25f * static_cast<float>(i % 5);
    sq += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
  }
  std::vector<float> out(1);
  simulate(rmse, {x, y, out});
  CHECK(out[0] == doctest::Approx(std::sqrt(sq / double(x.size()))).epsilon(1e-5));
}

TEST_CASE("grid state: a block reading another block's result without fence and ticket races") {
  // Every block writes its id; block b then reads the entry of block b - 1, ordered by nothing.
  auto kernel = [](bool order) {
    return capture(order ? "ordered" : "unordered", 32, [order](DPull<EWord32> in) {
      return pConcat(fmap(
          [order](const SPull<EWord32>& c) {
            return mkPush<Block, EWord32>(
                1u, [c, order](const Program<Block>& p, const Writer<EWord32>& w) {
                  const SMutable<uint32_t> slots = newGlobal<uint32_t>(p, 2);
                  const SMutable<uint32_t> ticket = newGlobal<uint32_t>(p, 1);
                  p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
                    write(t, slots, c[0u], c[0u] + 100u);
                    if (order) threadFence(t);
                    const EWord32 old = atomicInc(t, ticket, 0u, EWord32(1u));
                    w(t, ifThenElse(old == 1u, slots[0u], EWord32(0u)), 0u);
                  });
                });
          },
          splitUp(1, in)));
    });
  };
  std::vector<uint32_t> in = {0, 1}, out(2);
  simulate(kernel(true), {in, out});
  CHECK(out == std::vector<uint32_t>{0, 100});
  CHECK(errorOf([&] {
          simulate(kernel(false), {in, out});
        }) ==
        "simulate(kernel unordered): global-memory race on unordered_state0[0]: block 1 thread 0 "
        "reads it in `out0[bid0] = old0 == 1u ? __ldcg(&unordered_state0[0u]) : 0u` and block 0 "
        "thread 0 wrote it in `unordered_state0[in0[bid0]] = in0[bid0] + 100u` with no barrier "
        "between them");
}

TEST_CASE("seqFoldStrided: every strided element once, any unroll") {
  for (uint32_t unroll : {1u, 2u, 3u, 4u}) {
    const Kernel k = capture("strided", 8, [unroll](DPull<EWord32> in) {
      return pConcat(fmap(
          [in, unroll](const EWord32& b) {
            return mkPush<Block, EWord32>(
                8u, [in, b, unroll](const Program<Block>& p, const Writer<EWord32>& w) {
                  p.forAll(8u, [&](const Program<Thread>& t, const EWord32& tid) {
                    seqFoldStrided(plusW, EWord32(0u), in, b * 8u + tid, EWord32(16u), unroll)(
                        t, [&](const Program<Thread>& u, const EWord32& v, const EWord32&) {
                          w(u, v, tid);
                        });
                  });
                });
          },
          mkPull(2u, [](const EWord32& b) { return b; })));
    });
    for (size_t n : {0u, 1u, 15u, 16u, 17u, 100u}) {
      const std::vector<uint32_t> in = randomWords(n, 7);
      std::vector<uint32_t> out(16);
      simulate(k, {in, out});
      for (size_t g = 0; g < 16; ++g) {
        uint32_t want = 0;
        for (size_t i = g; i < n; i += 16) want += in[i];
        CHECK_MESSAGE(out[g] == want, "unroll " << unroll << ", n " << n << ", thread " << g);
      }
    }
  }
  CHECK(errorOf([] {
          seqFoldStrided(plusW, EWord32(0u), mkPull(4u, [](const EWord32& i) { return i; }),
                         EWord32(0u), EWord32(1u), 0);
        }) == "seqFoldStrided needs an unroll factor of at least 1; got 0");
}
