// capture: parameters derived from the callable's types, outputs from its result, and the
// library features whose code only shows in a whole kernel (tuples, atomics, sequential
// loops, per-thread arrays, virtualized blocks). Every kernel also compiles with NVRTC.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>
#include <obsidian/report_json.hpp>

#include "../kernels.hpp"
#include "../support.hpp"

using namespace obsidian;

namespace {

using ::testing::count;

bool has(const Kernel& k, const std::string& what) {
  return k.cuda().find(what) != std::string::npos;
}

void compiles(const Kernel& k) {
  INFO(k.cuda());
  CHECK(k.compile().registers > 0);
}

}  // namespace

TEST_CASE("capture: parameters follow the callable's types and order") {
  const Kernel k = capture("params", 128, [](DPull<EFloat> x, EFloat a, DPull<EWord32> y) {
    auto scaled =
        zipWith([a](const EFloat& xi, const EWord32& yi) { return a * xi + w32ToF(yi); }, x, y);
    return push<Grid>(scaled);
  });
  CHECK(has(k,
            "params(const float* __restrict__ in0, uint32_t n0, float s1, const uint32_t* "
            "__restrict__ in2, uint32_t n2, "
            "float* __restrict__ out0)"));
  CHECK(has(k, "s1 * in0[i0] + (float)in2[i0]"));
  const auto params = toJson(k.report())["params"];
  REQUIRE(params.size() == 6);
  CHECK(params[2]["kind"] == "scalar");
  CHECK(params[5]["kind"] == "output");
  CHECK(params[5]["length"] == "min(n0, n2)");
  compiles(k);
}

TEST_CASE("capture: static-length inputs take their length from CaptureOptions") {
  CaptureOptions o;
  o.staticLengths = {1000};
  const Kernel k = capture(
      "staticIn", 256,
      [](SPull<EWord32> in) {
        return pConcat(
            fmap([](const SPull<EWord32>& c) { return push<Block>(c); }, splitUp(1000, in)));
      },
      o);
  CHECK(has(k, "staticIn(const uint32_t* __restrict__ in0, uint32_t* __restrict__ out0)"));
  // 1000 virtual threads on 256 real ones: a strided loop.
  CHECK(has(k, "for (uint32_t i0 = threadIdx.x; i0 < 1000u; i0 += 256u)"));
  CHECK(toJson(k.report())["params"][0]["length"] == "1000u");
  compiles(k);
}

TEST_CASE("capture: two outputs, one per Push<Grid> of a hana::tuple") {
  const Kernel k = capture("twoOut", 64, [](DPull<EWord32> in) {
    return hana::make_tuple(push<Grid>(fmap([](const EWord32& x) { return x * 2u; }, in)),
                            push<Grid>(fmap([](const EWord32& x) { return x + 7u; }, in)));
  });
  CHECK(has(k, "uint32_t* __restrict__ out0, uint32_t* __restrict__ out1)"));
  CHECK(has(k, "out0[i0] = in0[i0] * 2u;"));
  CHECK(has(k, "out1[i1] = in0[i1] + 7u;"));
  CHECK(k.ir().outputs.size() == 2);
  compiles(k);
}

TEST_CASE("capture: arrays of tuples are forced as one shared array per component") {
  const Kernel k = capture("tuples", 256, [](DPull<EWord32> a, DPull<EFloat> b) {
    return pConcat(fmap(
        [](const SPull<hana::tuple<EWord32, EFloat>>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            auto forced = forcePull(p, c);
            return push<Block>(fmap(
                [](const hana::tuple<EWord32, EFloat>& t) {
                  return w32ToF(hana::at_c<0>(t)) + hana::at_c<1>(t);
                },
                forced));
          });
        },
        splitUp(256, zip(a, b))));
  });
  const auto shared = toJson(k.report())["sharedArrays"];
  REQUIRE(shared.size() == 2);
  CHECK(shared[0]["type"] == "uint32_t");
  CHECK(shared[1]["type"] == "float");
  CHECK(k.sharedBytes() == 2 * 256 * 4);
  compiles(k);
}

TEST_CASE("capture: tuple outputs are stored struct-of-arrays") {
  const Kernel k = capture("soa", 128, [](DPull<EWord32> in) {
    return push<Grid>(fmap([](const EWord32& x) { return hana::make_tuple(x, w32ToF(x)); }, in));
  });
  CHECK(has(k, "uint32_t* __restrict__ out0_0, float* __restrict__ out0_1)"));
  compiles(k);
}

TEST_CASE("capture: seqUntil iterates a tuple state while the condition holds (Mandelbrot)") {
  const Kernel k = capture("mandel", 64, [](EWord32 width) {
    auto iters = [](const EWord32& bid, const EWord32& tid) {
      const EFloat cx = w32ToF(tid) * 0.01f - 2.0f, cy = w32ToF(bid) * 0.01f - 1.2f;
      using State = hana::tuple<EFloat, EFloat, EWord32>;
      auto f = [cx, cy](const State& s) {
        const EFloat x = hana::at_c<0>(s), y = hana::at_c<1>(s);
        return State(x * x - y * y + cx, 2.0f * x * y + cy, hana::at_c<2>(s) + 1u);
      };
      auto cond = [](const State& s) {
        const EFloat x = hana::at_c<0>(s), y = hana::at_c<1>(s);
        return (x * x + y * y < 4.0f) && (hana::at_c<2>(s) < 512u);
      };
      return fmap([](const State& s) { return w32ToW8(hana::at_c<2>(s) % 16u) * (uint8_t)16; },
                  seqUntil(f, cond, State(EFloat(0.0f), EFloat(0.0f), EWord32(1u))));
    };
    return pConcat(mkPull(width, [iters](const EWord32& bid) {
      return tConcat<Block>(
          mkPull(64u, [iters, bid](const EWord32& tid) { return iters(bid, tid); }));
    }));
  });
  CHECK(has(k, "while ("));
  // The three components are updated from temporaries, so y sees the old x.
  CHECK(count(k.cuda(), "float v") >= 4);
  CHECK(has(k, "uint8_t* __restrict__ out0"));
  compiles(k);
}

TEST_CASE("capture: global and shared atomics") {
  const Kernel k = obsidian::testing::histogramKernel("histogram", 256, 256);
  CHECK(has(k,
            "histogram(const uint32_t* __restrict__ in0, uint32_t n0, uint32_t* __restrict__ m1, "
            "uint32_t n1, uint32_t* __restrict__ out0)"));
  CHECK(count(k.cuda(), "atomicAdd(&") == 2);
  compiles(k);
}

TEST_CASE("capture: every atomic operation prints and compiles") {
  const Kernel k = capture(
      "atomics", 32,
      [](DMutable<uint32_t> u, DMutable<int32_t> s, DMutable<uint64_t> w, DMutable<float> f) {
        return pConcat(mkPull(1u, [u, s, w, f](const EWord32&) {
          return singletonPush<Block>([u, s, w, f](const Program<Block>& p) {
            p.forAll(1u, [&](const Program<Thread>& t, const EWord32& i) {
              atomicSub(t, u, i, 1u);
              atomicMin(t, s, i, -3);
              atomicMax(t, w, i, EWord64(5u));
              atomicInc(t, u, i, 10u);
              atomicDec(t, u, i, 10u);
              atomicExch(t, f, i, 1.5f);
              atomicCAS(t, u, i, 3u, 4u);
              atomicAnd(t, w, i, EWord64(1u));
              atomicOr(t, s, i, 2);
              atomicXor(t, u, i, 7u);
            });
            return EWord32(0u);
          });
        }));
      });
  for (const char* op :
       {"atomicSub(", "atomicMin(", "atomicMax((unsigned long long*)", "atomicInc(", "atomicDec(",
        "atomicExch(", "atomicCAS(", "atomicAnd(", "atomicOr(", "atomicXor("}) {
    CHECK_MESSAGE(has(k, op), op);
  }
  compiles(k);
}

TEST_CASE("capture: force at Thread level makes a per-thread array") {
  const Kernel k = capture("local", 64, [](DPull<EWord32> in) {
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
  CHECK(has(k, "uint32_t loc0[4];"));
  CHECK(k.sharedBytes() == 0);
  CHECK(toJson(k.report())["localArrays"].size() == 1);
  compiles(k);
}

TEST_CASE("capture: sConcat runs block programs one after another, with reuse barriers") {
  const Kernel k = capture("seqBlocks", 128, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<SPull<EWord32>>& parts) {
          return sConcat(fmap(
              [](const SPull<EWord32>& part) {
                return exec<Block>([part](const Program<Block>& p) {
                  auto a = forcePull(p, part);
                  return push<Block>(fmap([a](const EWord32& x) { return x + a[0u]; }, a));
                });
              },
              parts));
        },
        fmap([](const SPull<EWord32>& c) { return splitUp(128, c); }, splitUp(512, in))));
  });
  // A block-level loop over the four parts; its body ends with a barrier, so the next part's
  // writes never race with this part's reads of the same shared array.
  CHECK(has(k, "for (uint32_t s0 = 0u; s0 < 4u; ++s0)"));
  CHECK(count(k.cuda(), "__syncthreads();") == 2);
  compiles(k);
}

TEST_CASE("capture: concP and conc") {
  const Kernel k = capture("concat", 128, [](DPull<EWord32> a) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          auto [lo, hi] = halve(c);
          return concP(push<Block>(hi), push<Block>(conc(lo, lo)));
        },
        splitUp(128, a)));
  });
  CHECK(has(k, " ? "));
  CHECK(k.ir().outputs[0].length != nullptr);
  compiles(k);
}

TEST_CASE("capture: warp programs with more warps than real ones loop over the warps") {
  const Kernel k = capture("warpLoop", 64, [](DPull<EWord32> in) {
    auto warps = fmap([](const SPull<EWord32>& c) { return splitUp(32, c); }, splitUp(256, in));
    return pConcat(fmap(
        [](const SPull<SPull<EWord32>>& block) {
          return pConcat(fmap(
              [](const SPull<EWord32>& w) {
                return exec<Warp>([w](const Program<Warp>& p) {
                  auto a = forcePull(p, fmap([](const EWord32& x) { return x + 1u; }, w));
                  return push<Warp>(fmap([a](const EWord32& x) { return x + a[31u]; }, a));
                });
              },
              block));
        },
        warps));
  });
  // 8 virtual warps on 2 real ones; each real warp's slice is reused after a __syncwarp.
  CHECK(has(k, "for (uint32_t wid0 = threadIdx.x / 32u; wid0 < 8u; wid0 += 2u)"));
  CHECK(count(k.cuda(), "__syncwarp();") == 2);
  CHECK(k.sharedBytes() == 2 * 32 * 4);
  compiles(k);
}

TEST_CASE("capture: the IR can be dumped after every pass") {
  CaptureOptions o;
  o.dumpIr = true;
  const Kernel k = capture(
      "dumped", 32, [](DPull<EWord32> in) { return push<Grid>(in); }, o);
  for (const char* pass : {"=== reify", "=== verify ownership", "=== materialize shuffles",
                           "=== verify", "=== liveness", "=== memory map", "=== virtualize",
                           "=== share subexpressions", "=== emit CUDA"}) {
    CHECK_MESSAGE(k.irDump().find(pass) != std::string::npos, pass);
  }
  CHECK(k.irDump().find("forAll Grid i0 < n0") != std::string::npos);
  CHECK(k.timings().front().pass == "reify");
  CHECK(k.timings().size() == 11);
  o.shareSubexpressions = false;  // the pass is left out, and so is its timing
  const Kernel plain = capture(
      "dumpedPlain", 32, [](DPull<EWord32> in) { return push<Grid>(in); }, o);
  CHECK(plain.irDump().find("=== share subexpressions") == std::string::npos);
  CHECK(plain.timings().size() == 10);
}

TEST_CASE("capture: the report holds what the issue asks for") {
  const Kernel k = capture("reported", 256, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return singletonPush<Block>([c](const Program<Block>& p) {
            auto s = forcePull(p, zipWith([](const EWord32& a, const EWord32& b) { return a + b; },
                                          halve(c).first, halve(c).second));
            return s[0u] + s[1u];
          });
        },
        splitUp(512, in)));
  });
  nlohmann::json r = toJson(k.report());
  CHECK(r["name"] == "reported");
  CHECK(r["threadsPerBlock"] == 256);
  CHECK(r["sharedBytes"] == 1024);
  CHECK(r["sharedArrays"][0]["offset"] == 0);
  CHECK(r["sharedArrays"][0]["liveFrom"].get<uint32_t>() <
        r["sharedArrays"][0]["liveTo"].get<uint32_t>());
  CHECK(r["barriers"]["block"] == 2);
  CHECK(r["registers"].is_null());
  CHECK(r["timingsMs"].contains("memory map"));
  k.compile();
  r = toJson(k.report());
  CHECK(r["registers"].get<int>() > 0);
  CHECK(r["spillStoreBytes"] == 0);
  CHECK(r["stackBytes"] == 0);
  CHECK(r["timingsMs"].contains("compile"));
}

TEST_CASE("capture: a kernel's own NVRTC options go wherever it is compiled") {
  CaptureOptions o;
  o.nvrtcOptions = {"--fmad=false"};
  const Kernel k = capture(
      "noFma", 64,
      [](DPull<EFloat> x) {
        return push<Grid>(fmap([](const EFloat& v) { return v * v + 1.0f; }, x));
      },
      o);
  const CompileResult& r = k.compile();
  CHECK(std::find(r.options.begin(), r.options.end(), "--fmad=false") != r.options.end());
  CHECK(k.compileOptions().extraOptions == std::vector<std::string>{"--fmad=false"});
  CHECK(toJson(k.report())["nvrtcOptions"][0] == "--fmad=false");
  // Without the option, NVRTC contracts v * v + 1 into an FMA.
  const Kernel fused = capture("withFma", 64, [](DPull<EFloat> x) {
    return push<Grid>(fmap([](const EFloat& v) { return v * v + 1.0f; }, x));
  });
  CHECK(fused.compile().ptx.find("fma.rn.f32") != std::string::npos);
  CHECK(r.ptx.find("fma.rn.f32") == std::string::npos);
}

TEST_CASE("capture: a compile result stays valid while its Kernel lives (issue 40)") {
  // Compiling for another architecture (or options) keeps the earlier results: a reference
  // taken before is not freed (ASan's build runs this too).
  const Kernel k = capture("twoArchs", 64, [](DPull<EWord32> x) {
    return push<Grid>(fmap([](const EWord32& v) { return v * 3u + 1u; }, x));
  });
  CHECK_FALSE(k.compiled());
  const CompileResult& sm90 = k.compile();
  const Kernel copy = k;  // copies share the results
  const CompileResult& sm80 = copy.compile({.arch = "sm_80", .extraOptions = {}});
  CHECK(k.compiled());
  CHECK(sm90.ptx.find(".target sm_90") != std::string::npos);
  CHECK(sm80.ptx.find(".target sm_80") != std::string::npos);
  CHECK(&k.compile() == &sm90);                  // the same result again, not a new one
  CHECK(toJson(k.report())["arch"] == "sm_90");  // the latest compile's
  CHECK(toJson(copy.report())["arch"] == "sm_90");
}

TEST_CASE("capture: loop bounds and checked indices keep their grouping in the generated code") {
  const Kernel k = obsidian::testing::precedenceKernel("precedence");
  // `s < c ? a : b` would be `(s < c) ? a : b`, and `s < x & 7u` would be `(s < x) & 7u`.
  CHECK(k.cuda().find("< (") != std::string::npos);
  CHECK(k.cuda().find("% 2u == 0u ? 5u : 9u); ") != std::string::npos);
  CHECK(k.cuda().find("& 7u); ") != std::string::npos);
  // The checked guard compares the whole index: `!(x & 15u < n)` would be `!(x & (15u < n))`.
  CHECK(k.checkedCuda().find("& 15u) < ") != std::string::npos);
  compiles(k);
  // The simulator runs the IR, so it gives the intended counts: 5 or 9, plus x & 7.
  std::vector<uint32_t> in(128), bins(16, 0), out(128);
  for (uint32_t i = 0; i < 128; ++i) in[i] = i * 37u;
  simulate(k, {in, bins, out});
  for (uint32_t i = 0; i < 128; ++i) CHECK(out[i] == (in[i] % 2 == 0 ? 5u : 9u) + (in[i] & 7u));
  CHECK(bins == std::vector<uint32_t>(16, 8));
}

TEST_CASE("capture: an effect-only kernel has no output; launch, simulate and report take none") {
  // Each block of 64 counts its elements modulo 8 into the global bins.
  const auto countInto = [](const Program<Block>& p, const SPull<EWord32>& c,
                            const DMutable<uint32_t>& bins) {
    p.forAll(64u, [&](const Program<Thread>& t, const EWord32& i) {
      atomicAdd(t, bins, c[i] % 8u, 1u);
    });
  };
  const Kernel k =
      capture("countMod8", 64, [countInto](DPull<EWord32> in, DMutable<uint32_t> bins) {
        return forEachBlock(splitUp(64, in), [=](const Program<Block>& p, const SPull<EWord32>& c) {
          countInto(p, c, bins);
        });
      });
  const auto params = toJson(k.report())["params"];
  REQUIRE(params.size() == 4);  // in0, n0, m1, n1: no output
  CHECK(params[0]["kind"] == "input");
  CHECK(params[2]["kind"] == "mutable");
  CHECK(k.cuda().find("out0") == std::string::npos);
  // The atomics' old values are not read, so none is declared (nvcc warns otherwise).
  CHECK(k.cuda().find("= (uint32_t)atomicAdd") == std::string::npos);
  CHECK(k.checkedCuda().find("old") == std::string::npos);
  compiles(k);
  std::vector<uint32_t> in(64 * 5), bins(8, 0);
  for (uint32_t i = 0; i < in.size(); ++i) in[i] = i * 7u;
  simulate(k, {in, bins});
  CHECK(bins == std::vector<uint32_t>(8, 40));
  // An output too many is refused like any wrong argument count.
  std::vector<uint32_t> extra(1);
  CHECK(::testing::errorOf([&] {
          simulate(k, {in, bins, extra});
        }).find("argument") != std::string::npos);

  // An effect beside an output, in one tuple: one output, and the effect runs too.
  const Kernel both =
      capture("copyAndCount", 64, [countInto](DPull<EWord32> in, DMutable<uint32_t> bins) {
        return hana::make_tuple(
            push<Grid>(in),
            forEachBlock(splitUp(64, in), [=](const Program<Block>& p, const SPull<EWord32>& c) {
              countInto(p, c, bins);
            }));
      });
  std::vector<uint32_t> out(in.size());
  bins.assign(8, 0);
  simulate(both, {in, bins, out});
  CHECK(out == in);
  CHECK(bins == std::vector<uint32_t>(8, 40));

  // An effect on nothing a caller could see, and an effect with no statements, are refused.
  CHECK(::testing::errorOf([] {
          capture("invisible", 32, [](DPull<EWord32> in) {
            return effect([in](const Program<Grid>& g) {
              g.distrPar(len(in), [&](const Program<Block>& p, const EWord32&) {
                const SMutable<uint32_t> s = newShared<uint32_t>(p, 1);
                p.forAll(1u,
                         [&](const Program<Thread>& t, const EWord32&) { write(t, s, 0u, 1u); });
              });
            });
          });
        }) ==
        "capture(invisible): the kernel has no output and no DMutable parameter, so its effects "
        "are invisible: an effect-only kernel acts on DMutable arrays");
  CHECK(::testing::errorOf([] {
          capture("nothing", 32, [](DPull<EWord32>, DMutable<uint32_t>) {
            return effect([](const Program<Grid>&) {});
          });
        }) == "capture(nothing): the kernel computes nothing (its result writes no element)");
}

TEST_CASE("capture: minBlocksPerSm caps the registers through __launch_bounds__") {
  // The f32 exclusive look-back scan with 256 x 15 tiles: NVRTC gives it about 48 registers
  // when it chooses; 8 blocks of 256 threads leave 32 each.
  const ScanPolicy free{256, 15, BlockLoadAlgorithm::WarpStriped, 400, 0};
  ScanPolicy capped = free;
  capped.blocksPerSm = 8;
  const Kernel a = scanKernel<float>(Sum{}, free, ScanKind::Exclusive, 0.0f);
  const Kernel b = scanKernel<float>(Sum{}, capped, ScanKind::Exclusive, 0.0f);
  CHECK(has(a, "__launch_bounds__(256) scanAllExclusive("));
  CHECK(has(b, "__launch_bounds__(256, 8) scanAllExclusive("));
  CHECK(a.compile().registers > 32);
  CHECK(b.compile().registers <= 32);
  CaptureOptions tooMany;
  tooMany.minBlocksPerSm = 5;
  CHECK(::testing::errorOf([&] {
          capture(
              "crowded", 512, [](DPull<EWord32> in) { return push<Grid>(in); }, tooMany);
        }) ==
        "capture(crowded): minBlocksPerSm 5 blocks of 512 threads exceed the 2048 threads an "
        "SM holds");
}
