// Packed pairs of 16-bit floats (Half2, BFloat162) on the simulator: every operation against an
// independent C++ reference (tests/pair_kernels.hpp) on random words (NaNs, infinities, zeros,
// subnormals and ties among them), both formats; the printed CUDA's packed instructions; pairs
// through shared memory and vector loads and stores bit for bit; atomicAdd of pairs; constant
// folding agreeing with the simulator; the host types; the generated CUDA compiling with NVRTC.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../half_kernels.hpp"
#include "../pair_kernels.hpp"
#include "../support.hpp"
#include "ir/print.hpp"

using namespace obsidian;
using namespace obsidian::testing;
using ::testing::has;

namespace {

template <class P>
void checkOpsOnSimulator(size_t n, uint32_t seed) {
  const std::vector<P> a = randomPairs<P>(n, seed), b = randomPairs<P>(n, seed + 1),
                       c = randomPairs<P>(n, seed + 2);
  PairResults<P> got(n);
  auto& o = got.out;
  simulate(pairOpsKernel<P>(),
           {a, b, c, o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], o[8], o[9], o[10]});
  const std::string wrong = differingPairs(got, pairOpsReference(a, b, c), a, b, c);
  CHECK_MESSAGE(wrong.empty(), wrong);
}

// The reference's own ties: fma(a, b, c) whose exact value is halfway between two values.
template <class P>
size_t fmaTies(const std::vector<P>& a, const std::vector<P>& b, const std::vector<P>& c) {
  size_t ties = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (int lane = 0; lane < 2; ++lane) {
      const double p = refLaneValue<P>(refLane<P>(a[i].bits(), lane)) *
                           refLaneValue<P>(refLane<P>(b[i].bits(), lane)) +
                       refLaneValue<P>(refLane<P>(c[i].bits(), lane));
      if (!std::isfinite(p) || p == 0) continue;
      const uint32_t r = refLaneRound<P>(p);
      const double up = refLaneValue<P>(r + 1), down = refLaneValue<P>(r - 1);
      const double v = refLaneValue<P>(r);
      ties += (std::fabs(p - v) * 2 == std::fabs(up - v)) ||
              (std::fabs(p - v) * 2 == std::fabs(v - down));
    }
  }
  return ties;
}

}  // namespace

TEST_CASE("pairs: the host types hold lo in the low 16 bits and compare by bits") {
  const Half2 h(Half(1.0f), Half(-2.0f));
  CHECK(h.bits() == 0xc0003c00u);
  CHECK(Half2::fromBits(0xc0003c00u) == h);
  CHECK(Half2::fromBits(0x80000000u) != Half2::fromBits(0));  // -0 differs from +0
  const BFloat162 b(BFloat16(1.0f), BFloat16(NAN));
  CHECK(b.bits() == 0x7fff3f80u);
  CHECK(b == BFloat162::fromBits(b.bits()));  // a NaN equals itself
  CHECK(sizeOf(ScalarType::F16x2) == 4);
  CHECK(cudaTypeName(scalarTypeOf<BFloat162>) == "obsidian_bfloat162");
  // A pair is neither a float nor an integer to the generic rules.
  CHECK_FALSE(isFloat(ScalarType::F16x2));
  CHECK_FALSE(isInteger(ScalarType::BF16x2));
  CHECK(laneOf(ScalarType::BF16x2) == ScalarType::BF16);
}

TEST_CASE("pairs: the reference rounds as CUDA documents (its own checks)") {
  // 1 + 2^-11 is halfway between 1 and the next half: to even (1).
  CHECK(refLaneRound<Half2>(1.0 + std::ldexp(1.0, -11)) == 0x3c00u);
  CHECK(refLaneRound<Half2>(1.0 + 3 * std::ldexp(1.0, -11)) == 0x3c02u);
  CHECK(refLaneRound<Half2>(65520.0) == 0x7c00u);               // to infinity
  CHECK(refLaneRound<Half2>(std::ldexp(1.0, -25)) == 0x0000u);  // half the smallest: to 0
  CHECK(refLaneRound<BFloat162>(1.0 + std::ldexp(1.0, -8)) == 0x3f80u);
  CHECK(refMinMax<Half2>(0x8000u, 0x0000u, true) == 0x8000u);  // min(-0, +0) = -0
  CHECK(refMinMax<Half2>(0x0000u, 0x8000u, false) == 0x0000u);
  CHECK(refMinMax<Half2>(0x7e01u, 0x3c00u, true) == 0x3c00u);   // a NaN gives the other
  CHECK(refMinMax<Half2>(0x7e01u, 0xfe00u, false) == 0x7fffu);  // two NaNs: canonical
  // The random inputs have many exact ties for fma (each rounded to even).
  const std::vector<Half2> a = randomPairs<Half2>(20000, 1), b = randomPairs<Half2>(20000, 2),
                           c = randomPairs<Half2>(20000, 3);
  CHECK(fmaTies(a, b, c) > 100);
  const std::vector<BFloat162> x = randomPairs<BFloat162>(20000, 1),
                               y = randomPairs<BFloat162>(20000, 2),
                               z = randomPairs<BFloat162>(20000, 3);
  CHECK(fmaTies(x, y, z) > 100);
}

TEST_CASE("pairs: every operation of Half2 matches the reference, lane by lane") {
  checkOpsOnSimulator<Half2>(40000, 10);
}

TEST_CASE("pairs: every operation of BFloat162 matches the reference, lane by lane") {
  checkOpsOnSimulator<BFloat162>(40000, 20);
}

TEST_CASE("pairs: constant folding computes what the simulator computes") {
  const std::vector<Half2> a = randomPairs<Half2>(64, 7), b = randomPairs<Half2>(64, 8),
                           c = randomPairs<Half2>(64, 9);
  const PairResults<Half2> want = pairOpsReference(a, b, c);
  for (size_t i = 0; i < a.size(); ++i) {
    const EHalf2 x(a[i]), y(b[i]), z(c[i]);
    const EHalf2 folded[] = {x + y,        x - y,     x * y,
                             fma(x, y, z), -x,        abs(x),
                             min(x, y),    max(x, y), pack2(highLane(x), lowLane(y))};
    for (size_t k = 0; k < std::size(folded); ++k) {
      CAPTURE(k);
      CAPTURE(i);
      REQUIRE(folded[k].node()->isLiteral());
      CHECK(folded[k].node()->bits == want.out[k][i].bits());
    }
  }
  // min(x, x) of a NaN is the canonical NaN, not x: not folded to x.
  const EHalf2 v = variable<Half2>("v");
  CHECK(min(v, v).node()->kind == ExpKind::Binary);
  // x + 0 is not x for a pair (-0 + +0 is +0): the integer rules do not apply.
  CHECK((v + EHalf2(Half2{})).node()->kind == ExpKind::Binary);
  CHECK((v * EHalf2(Half2::fromBits(1))).node()->kind == ExpKind::Binary);
}

TEST_CASE("pairs: the printed CUDA calls the packed instructions") {
  const std::string cuda = pairOpsKernel<Half2>().cuda();
  for (const char* fn :
       {"obsidian_hadd2(", "obsidian_hsub2(", "obsidian_hmul2(", "obsidian_hfma2(",
        "obsidian_hneg2(", "obsidian_habs2(", "obsidian_hmin2(", "obsidian_hmax2("}) {
    CHECK_MESSAGE(has(cuda, fn), fn);
  }
  for (const char* ptx :
       {"add.rn.\" obsidian_f \"x2", "fma.rn.\" obsidian_f \"x2", "typedef __half2 obsidian_half2",
        "typedef __nv_bfloat162 obsidian_bfloat162", "struct __align__(4) obsidian_half2"}) {
    CHECK_MESSAGE(has(cuda, ptx), ptx);
  }
  CHECK(has(cuda, "const obsidian_half2* __restrict__ in0"));
  CHECK(has(pairAtomicKernel<BFloat162>().cuda(), "obsidian_atomic_add(&"));
  CHECK(has(pairAtomicKernel<Half2>().cuda(), "atom.add.noftz.f16x2"));
}

TEST_CASE("pairs: shared memory, vectors<W> and unvectors<W> move pairs bit for bit") {
  const size_t n = 64 * 37;
  auto check = [&](auto tag, auto width) {
    using P = decltype(tag);
    constexpr uint32_t W = decltype(width)::value;
    const std::vector<P> in = randomPairs<P>(n, 5);
    std::vector<P> reversed(n), copy(n);
    simulate(pairMemoryKernel<P, W>(), {in, reversed, copy});
    for (size_t i = 0; i < n; ++i) {
      REQUIRE(reversed[i] == in[i / 64 * 64 + 63 - i % 64]);
      REQUIRE(copy[i] == in[i]);
    }
  };
  check(Half2{}, std::integral_constant<uint32_t, 2>{});
  check(Half2{}, std::integral_constant<uint32_t, 4>{});
  check(BFloat162{}, std::integral_constant<uint32_t, 2>{});
  check(BFloat162{}, std::integral_constant<uint32_t, 4>{});
  // One 16-byte store of 4 pairs (as words: CUDA has no vector type of __half2).
  const std::string cuda = pairMemoryKernel<Half2, 4>().cuda();
  CHECK(has(cuda, "((uint4*)"));
  CHECK(has(cuda, "obsidian_make_half2((unsigned int)((const uint4*)"));
}

TEST_CASE("pairs: register arrays move pairs between lanes (shuffles, matchAny)") {
  // smallShuffleKernel: out0 = max(r[l ^ 1], r[l ^ 16]) + r[l], out1 = matchAny's lanes.
  const std::vector<Half2> in = randomPairs<Half2>(64 * 9, 4);
  std::vector<Half2> out(in.size());
  std::vector<uint32_t> match(in.size());
  const Kernel k = smallShuffleKernel<Half2>();
  simulate(k, {in, out, match});
  const std::vector<Half2> want = pairShuffleReference(in);
  for (size_t i = 0; i < in.size(); ++i) {
    CAPTURE(i);
    REQUIRE(out[i] == want[i]);
    uint32_t m = 0;
    for (size_t l = 0; l < 32; ++l) m |= (in[i / 32 * 32 + l] == in[i] ? 1u : 0u) << l;
    REQUIRE(match[i] == m);
  }
  CHECK(has(k.cuda(), "obsidian_make_half2((unsigned int)__shfl_sync(0xffffffffu, "));
}

TEST_CASE("pairs: atomicAdd adds each lane, with many threads on few words") {
  auto check = [](auto tag) {
    using P = decltype(tag);
    const std::vector<P> values = integerPairs<P>(64 * 50, 3);
    std::vector<P> bins = integerPairs<P>(16, 4), copy(values.size());
    const std::vector<P> want = pairAtomicReference(values, bins);
    simulate(pairAtomicKernel<P>(), {values, bins, copy});
    CHECK(bins == want);
    CHECK(copy == values);
  };
  check(Half2{});
  check(BFloat162{});
  // permuteInto with Sum: the generic scatter, through the same atomicAdd.
  const std::vector<BFloat162> values = integerPairs<BFloat162>(1000, 7);
  std::vector<BFloat162> bins = integerPairs<BFloat162>(16, 8);
  const std::vector<BFloat162> want = pairSumReference(values, bins, values.size());
  simulate(pairScatterAddKernel<BFloat162>(), {values, bins});
  CHECK(bins == want);
}

TEST_CASE("pairs: grid state and device scans hold pairs") {
  const std::vector<Half2> in = randomPairs<Half2>(64, 12);
  std::vector<Half2> out(64);
  const Kernel k = pairGridStateKernel();
  simulate(k, {in, out});
  for (size_t i = 0; i < 64; ++i) REQUIRE(out[i] == in[63 - i]);
  CHECK(has(k.cuda(), "obsidian_make_half2(__ldcg((const unsigned int*)&"));
  CHECK(has(k.cuda(), "__stcg((unsigned int*)&"));
  // device::inclusiveScan with Max: the look-back's tile values are pairs in grid state.
  std::vector<BFloat162> values = randomPairs<BFloat162>(30001, 3);
  const std::vector<BFloat162> got = device::inclusiveScan(values, Max{});
  uint32_t acc = values[0].bits();
  size_t wrong = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) {
      acc = refPerLane<BFloat162>(acc, values[i].bits(), [](uint32_t p, uint32_t q) {
        return refMinMax<BFloat162>(p, q, false);
      });
    }
    wrong += got[i].bits() != acc;
  }
  CHECK(wrong == 0);
}

TEST_CASE("pairs: the generated CUDA compiles with NVRTC for sm_90") {
  const std::vector<Kernel> kernels = {
      pairOpsKernel<Half2>(),           pairOpsKernel<BFloat162>(), pairMemoryKernel<Half2, 4>(),
      pairMemoryKernel<BFloat162, 2>(), pairAtomicKernel<Half2>(),  pairAtomicKernel<BFloat162>()};
  for (const Kernel& kernel : kernels) {
    CAPTURE(kernel.name());
    const CompileResult r = compileCuda(kernel.cuda(), kernel.name());  // throws on an error
    CHECK(r.registers > 0);
  }
}

TEST_CASE(
    "pairs: exported launchers take CUDA's pair types, and launch-time pair values are refused") {
  const Kernel scaled = capture("scaled2", 64, [](DPull<EHalf2> in, EHalf2 s) {
    return push<Grid>(fmap([s](const EHalf2& x) { return fma(x, s, x); }, in));
  });
  const std::string h = exportHeader({scaled}, ExportOptions{"pairs", ""});
  CHECK(has(h, "typedef __half2 obsidian_half2;"));
  CHECK(has(h, "scaled2_launch(const obsidian_half2* in0, size_t in0Count, obsidian_half2 s1"));
  // A pair parameter on the simulator: passed as its word.
  const std::vector<Half2> in = randomPairs<Half2>(100, 3);
  std::vector<Half2> out(in.size());
  const Half2 s(Half(1.5f), Half(-0.25f));
  simulate(scaled, {in, s, out});
  for (size_t i = 0; i < in.size(); ++i) {
    const uint32_t x = in[i].bits(), k = s.bits();
    const uint32_t want = refFma<Half2>(x & 0xffffu, k & 0xffffu, x & 0xffffu) |
                          (refFma<Half2>(x >> 16, k >> 16, x >> 16) << 16);
    REQUIRE(out[i].bits() == want);
  }
  // An output whose length is read from a pair's bits: the launcher would compute it on the
  // host, where pairs are not computed.
  const Kernel sized = capture("sized2", 64, [](DPull<EWord32> in, EHalf2 n) {
    const EWord32 m = min(bitcast<uint32_t>(n) & 7u, len(in));
    return push<Grid>(mkPull(m, [in](const EWord32& i) { return in[i]; }));
  });
  CHECK(::testing::errorOf([&] {
          exportHeader({sized}, ExportOptions{"pairs", ""});
        }) ==
        "export: a launch-time expression reads obsidian_half2 as bits: half precision, pair and "
        "fp8 values are computed on the GPU only");
  // The library launches it (the simulator here): its length evaluated from the word.
  const std::vector<uint32_t> words = {1, 2, 3, 4, 5};
  std::vector<uint32_t> got(3);
  simulate(sized, {words, Half2::fromBits(0x00010003u), got});
  CHECK(got == std::vector<uint32_t>{1, 2, 3});
}

TEST_CASE("pairs: a launch-time expression computing on pairs is an Error naming the rule") {
  // The host printer of exported launchers: pairs compute only on the GPU.
  const ExpPtr e =
      ir::binary(BinOp::Add, ir::var(ScalarType::F16x2, "p"), ir::var(ScalarType::F16x2, "q"));
  bool divides = false;
  CHECK(::testing::errorOf([&] { ir::printHostExp(e, {}, "zero", &divides); }) ==
        "export: a launch-time expression computes with obsidian_half2: half precision pairs are "
        "computed on the GPU only");
}
