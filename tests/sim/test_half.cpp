// Half precision and 8-bit floats on the simulator: every unary operation of Half and BFloat16
// on all 65,536 patterns, the binary operations and comparisons, conversions to and from every
// type, against plain C++ that computes as the printed code does (half.hpp's rounding); the
// host types' rounding against known values; the generated CUDA compiling with NVRTC.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../half_kernels.hpp"
#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::testing;
using ::testing::has;

namespace {

template <class X>
void checkUnaryOnSimulator(const char* type) {
  const std::vector<X> in = allPatterns<X>();
  for (UnOp op : smallUnaryOps()) {
    const Kernel k = smallUnaryKernel<X>(op);
    std::vector<X> out(in.size());
    simulate(k, {in, out});
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      if (out[i].bits != unaryReference(op, in[i]).bits && wrong++ == 0) first = i;
    }
    CHECK_MESSAGE(wrong == 0, type << " " << unOpName(op) << ": " << wrong << " wrong, first 0x"
                                   << std::hex << first << " -> 0x" << out[first].bits
                                   << ", want 0x" << unaryReference(op, in[first]).bits);
  }
}

template <class X>
void checkBinaryOnSimulator() {
  const size_t n = 20000;
  const std::vector<X> a = randomSmall<X>(n, 1), b = randomSmall<X>(n, 2);
  BinaryResults<X> got(n);
  simulate(smallBinaryKernel<X>(), {a, b, got.sum, got.difference, got.product, got.quotient,
                                    got.minimum, got.maximum, got.power, got.comparisons});
  const std::string wrong = differingResults(got, binaryReference(a, b));
  CHECK_MESSAGE(wrong.empty(), "differing: " << wrong);
}

}  // namespace

TEST_CASE("half: the host types round to nearest even, saturate fp8 and keep NaN bits") {
  CHECK(Half(1.0f).bits == 0x3c00);
  CHECK(Half(65504.0f).bits == 0x7bff);
  CHECK(Half(65519.0f).bits == 0x7bff);               // below the midpoint
  CHECK(Half(65520.0f).bits == 0x7c00);               // the midpoint rounds to even: infinity
  CHECK(Half(std::ldexp(1.0f, -24)).bits == 0x0001);  // the smallest subnormal
  CHECK(Half(std::ldexp(1.0f, -25)).bits == 0x0000);  // half of it: ties to even (0)
  CHECK(Half(std::ldexp(3.0f, -26)).bits == 0x0001);  // 0.75 of it rounds up
  CHECK(Half(-0.0f).bits == 0x8000);
  CHECK(Half(NAN).bits == 0x7fff);
  CHECK(BFloat16(1.0f).bits == 0x3f80);
  CHECK(BFloat16(std::bit_cast<float>(0x3f808000u)).bits == 0x3f80);  // tie: to even
  CHECK(BFloat16(std::bit_cast<float>(0x3f818000u)).bits == 0x3f82);
  CHECK(BFloat16(std::bit_cast<float>(0x7f7fffffu)).bits == 0x7f80);  // FLT_MAX: infinity
  CHECK(Fp8E4M3(448.0f).bits == 0x7e);
  CHECK(Fp8E4M3(1e9f).bits == 0x7e);  // saturates
  CHECK(Fp8E4M3(-INFINITY).bits == 0xfe);
  CHECK(Fp8E4M3(NAN).bits == 0x7f);
  CHECK(Fp8E4M3(std::ldexp(1.0f, -9)).bits == 0x01);  // the smallest subnormal
  CHECK(Fp8E5M2(57344.0f).bits == 0x7b);
  CHECK(Fp8E5M2(INFINITY).bits == 0x7b);
  CHECK(Fp8E5M2(NAN).bits == 0x7f);
  CHECK(static_cast<float>(Fp8E4M3::fromBits(0x7e)) == 448.0f);
  CHECK(std::isnan(static_cast<float>(Fp8E4M3::fromBits(0xff))));
  CHECK(static_cast<float>(Fp8E4M3::fromBits(0x78)) == 256.0f);  // exponent 15 is a number
  CHECK(std::isinf(static_cast<float>(Fp8E5M2::fromBits(0x7c))));
  // Every pattern survives the round trip through its value (NaN payloads included).
  for (const Half h : allPatterns<Half>()) CHECK(Half::fromBits(h.bits).bits == h.bits);
  for (const Half h : allPatterns<Half>()) {
    if (h.isNaN()) continue;
    REQUIRE(Half(h.toDouble()).bits == h.bits);
  }
  for (const BFloat16 h : allPatterns<BFloat16>()) {
    if (h.isNaN()) continue;
    REQUIRE(BFloat16(h.toDouble()).bits == h.bits);
  }
  for (const Fp8E4M3 h : allPatterns<Fp8E4M3>()) {
    if (h.isNaN()) continue;
    REQUIRE(Fp8E4M3(h.toDouble()).bits == h.bits);
  }
  for (const Fp8E5M2 h : allPatterns<Fp8E5M2>()) {
    if (h.isNaN() || std::isinf(h.toDouble())) continue;  // infinities saturate
    REQUIRE(Fp8E5M2(h.toDouble()).bits == h.bits);
  }
}

TEST_CASE("half: every unary operation of Half on all 65,536 patterns matches C++") {
  checkUnaryOnSimulator<Half>("f16");
}

TEST_CASE("half: every unary operation of BFloat16 on all 65,536 patterns matches C++") {
  checkUnaryOnSimulator<BFloat16>("bf16");
}

TEST_CASE("half: binary operations and comparisons match C++ (f32 arithmetic, one rounding)") {
  checkBinaryOnSimulator<Half>();
  checkBinaryOnSimulator<BFloat16>();
}

TEST_CASE("half: conversions to and from every type round as CUDA converts") {
  const std::vector<Half> h = allPatterns<Half>();
  std::vector<float> f(h.size());
  simulate(convertKernel<float, Half>("h2f"), {h, f});
  for (size_t i = 0; i < h.size(); ++i) {
    // cvt.f32.f16 gives the canonical NaN, whatever the payload.
    const uint32_t want =
        h[i].isNaN() ? 0x7fffffffu : std::bit_cast<uint32_t>(static_cast<float>(h[i]));
    REQUIRE(std::bit_cast<uint32_t>(f[i]) == want);
  }
  const std::vector<BFloat16> b = allPatterns<BFloat16>();
  simulate(convertKernel<float, BFloat16>("b2f"), {b, f});
  for (size_t i = 0; i < b.size(); ++i) {
    REQUIRE(std::bit_cast<uint32_t>(f[i]) == uint32_t{b[i].bits} << 16);  // a shift, NaNs too
  }
  // f32 -> each format: every f32 pattern whose low bits are interesting.
  std::vector<float> wide;
  for (uint32_t hi = 0; hi < 65536; hi += 3) {
    for (uint32_t lo : {0u, 1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      wide.push_back(std::bit_cast<float>(hi << 16 | lo));
    }
  }
  std::vector<Half> toHalf(wide.size());
  std::vector<BFloat16> toBf(wide.size());
  std::vector<Fp8E4M3> toE4(wide.size());
  std::vector<Fp8E5M2> toE5(wide.size());
  simulate(convertKernel<Half, float>("f2h"), {wide, toHalf});
  simulate(convertKernel<BFloat16, float>("f2b"), {wide, toBf});
  simulate(convertKernel<Fp8E4M3, float>("f2e4"), {wide, toE4});
  simulate(convertKernel<Fp8E5M2, float>("f2e5"), {wide, toE5});
  for (size_t i = 0; i < wide.size(); ++i) {
    REQUIRE(toHalf[i].bits == Half(wide[i]).bits);
    REQUIRE(toBf[i].bits == BFloat16(wide[i]).bits);
    REQUIRE(toE4[i].bits == Fp8E4M3(wide[i]).bits);
    REQUIRE(toE5[i].bits == Fp8E5M2(wide[i]).bits);
  }
  // 64-bit integers and doubles round once (not through a rounded f32): 0x80800001 << 32 is
  // above a bf16 midpoint by less than an f32 ulp.
  const std::vector<uint64_t> big = {0x8080000100000000ull, 0x8080000000000000ull, 3, 0,
                                     ~uint64_t{0}};
  std::vector<BFloat16> fromBig(big.size());
  simulate(convertKernel<BFloat16, uint64_t>("u2b"), {big, fromBig});
  CHECK(fromBig[0].bits == 0x5f01);  // up: above the midpoint
  CHECK(fromBig[1].bits == 0x5f00);  // the midpoint itself: to even
  CHECK(fromBig[2].bits == BFloat16(3.0f).bits);
  CHECK(fromBig[3].bits == 0);
  CHECK(fromBig[4].bits == 0x5f80);  // 2^64
  const std::vector<double> doubles = {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40),
                                       1.0 + std::ldexp(1.0, -11), -1e300, 1e-300, NAN};
  std::vector<Half> fromDouble(doubles.size());
  simulate(convertKernel<Half, double>("d2h"), {doubles, fromDouble});
  CHECK(fromDouble[0].bits == 0x3c01);  // above the midpoint: up
  CHECK(fromDouble[1].bits == 0x3c00);  // the midpoint: to even
  CHECK(fromDouble[2].bits == 0xfc00);  // -infinity
  CHECK(fromDouble[3].bits == 0x0000);  // +0
  CHECK(fromDouble[4].bits == 0x7fff);  // the canonical NaN
  // To integers: through f32, saturating, NaN 0 (as f32 converts).
  const std::vector<Half> some = {Half(300.5f), Half(-7.75f), Half(65504.0f), Half(NAN),
                                  Half(-INFINITY)};
  std::vector<uint8_t> u8s(some.size());
  std::vector<int32_t> i32s(some.size());
  simulate(convertKernel<uint8_t, Half>("h2u8"), {some, u8s});
  simulate(convertKernel<int32_t, Half>("h2i"), {some, i32s});
  CHECK(u8s == std::vector<uint8_t>{44, 0, 224, 0, 0});  // through u32, truncated
  CHECK(i32s == std::vector<int32_t>{300, -7, 65504, 0, INT32_MIN});
}

TEST_CASE("half: literals, parameters and wide loads") {
  // A parameter and a literal: x * s + 0.5, each operation rounded.
  const std::vector<Half> in = randomSmall<Half>(1000, 3);
  std::vector<Half> out(in.size());
  simulate(scaledKernel<Half>(), {in, Half(1.5f), out});
  for (size_t i = 0; i < in.size(); ++i) {
    const Half p(static_cast<float>(in[i]) * 1.5f);
    REQUIRE(out[i].bits == Half(static_cast<float>(p) + 0.5f).bits);
  }
  for (size_t n : {size_t{0}, size_t{8}, size_t{1000}, size_t{1001}}) {
    const std::vector<BFloat16> v = randomSmall<BFloat16>(n, 4);
    std::vector<uint32_t> h8(n / 8), h2(n / 2);
    simulate(smallVectorKernel<BFloat16, 8>(), {v, h8});
    simulate(smallVectorKernel<BFloat16, 2>(), {v, h2});
    CHECK(h8 == smallVectorReference<BFloat16, 8>(v));
    CHECK(h2 == smallVectorReference<BFloat16, 2>(v));
    const std::vector<Fp8E4M3> e = randomSmall<Fp8E4M3>(n, 5);
    std::vector<uint32_t> e16(n / 16);
    simulate(smallVectorKernel<Fp8E4M3, 16>(), {e, e16});
    CHECK(e16 == smallVectorReference<Fp8E4M3, 16>(e));
  }
}

TEST_CASE("half: registers of Half and BFloat16 move between lanes by their bits") {
  auto check = [](auto tag) {
    using X = decltype(tag);
    std::vector<X> in = randomSmall<X>(64 * 7, 9);
    for (size_t i = 0; i < in.size(); i += 5) in[i] = in[i / 2];  // equal values to match
    std::vector<X> out(in.size());
    std::vector<uint32_t> match(in.size());
    simulate(smallShuffleKernel<X>(), {in, out, match});
    const auto [want, wantMatch] = smallShuffleReference(in);
    CHECK(out == want);
    CHECK(match == wantMatch);
  };
  check(Half{});
  check(BFloat16{});
  const std::string cuda = smallShuffleKernel<Half>().cuda();
  CHECK(has(cuda,
            "obsidian_make_half((unsigned short)__shfl_sync(0xffffffffu, "
            "(unsigned)obsidian_bits("));
  CHECK(has(cuda, "__match_any_sync(0xffffffffu, (unsigned)obsidian_bits("));
}

TEST_CASE("half: atomicAdd of Half and BFloat16 in shared and global memory") {
  auto check = [](auto tag) {
    using X = decltype(tag);
    std::vector<X> values(64 * 10);
    for (size_t i = 0; i < values.size(); ++i) values[i] = X(static_cast<float>(i * 7 % 4));
    std::vector<X> bins(16, X(0.5f)), copy(values.size());
    const std::vector<X> want = smallAtomicReference(values, bins);
    simulate(smallAtomicKernel<X>(), {values, bins, copy});
    CHECK(bins == want);
    CHECK(copy == values);
  };
  check(Half{});
  check(BFloat16{});
  CHECK(has(smallAtomicKernel<Half>().cuda(), "obsidian_atomic_add(&"));
}

TEST_CASE("half: the generated CUDA is typed and compiles with NVRTC for sm_90") {
  const Kernel k = smallBinaryKernel<Half>();
  const std::string cuda = k.cuda();
  CHECK(has(cuda, "const obsidian_half* __restrict__ in0"));
  CHECK(has(cuda, "obsidian_to_half(obsidian_to_float("));
  CHECK(has(cuda, "struct __align__(2) obsidian_half"));
  // A kernel without small floats has no prelude for them.
  CHECK_FALSE(has(convertKernel<float, uint32_t>("plain").cuda(), "obsidian_half"));
  std::vector<Kernel> kernels = {k,
                                 smallBinaryKernel<BFloat16>(),
                                 convertKernel<Half, double>("d2h"),
                                 convertKernel<BFloat16, uint64_t>("u2b"),
                                 convertKernel<Fp8E4M3, int32_t>("i2e4"),
                                 convertKernel<double, Fp8E5M2>("e52d"),
                                 scaledKernel<BFloat16>(),
                                 smallVectorKernel<Half, 8>(),
                                 smallVectorKernel<Fp8E5M2, 4>(),
                                 smallShuffleKernel<BFloat16>(),
                                 smallAtomicKernel<Half>(),
                                 smallAtomicKernel<BFloat16>()};
  for (UnOp op : smallUnaryOps()) kernels.push_back(smallUnaryKernel<Half>(op));
  for (const Kernel& kernel : kernels) {
    CAPTURE(kernel.name());
    const CompileResult r = compileCuda(kernel.cuda(), kernel.name());  // throws on an error
    CHECK(r.registers > 0);
  }
}
