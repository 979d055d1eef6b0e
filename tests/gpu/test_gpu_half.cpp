// GPU tests of half precision and 8-bit floats (label gpu): the simulator is bit-exact against
// the device. Every unary operation of Half and BFloat16 on all 65,536 patterns; conversions
// from f32 patterns, all patterns to f32, 64-bit integers and doubles; binary operations and
// comparisons on random pairs; wide loads; a Half register array moved by shuffles.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../half_kernels.hpp"

using namespace obsidian;
using namespace obsidian::testing;

namespace {

// Runs a one-input, one-output kernel on the GPU and the simulator; both must agree bitwise.
template <class In, class Out>
std::vector<Out> onBoth(const Kernel& k, const std::vector<In>& in) {
  gpu::DeviceBuffer<In> din(in);
  gpu::DeviceBuffer<Out> dout(in.size());
  gpu::launch(k, {din, dout});
  const std::vector<Out> got = dout.download();
  std::vector<Out> sim(in.size());
  simulate(k, {in, sim});
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (std::memcmp(&got[i], &sim[i], sizeof(Out)) != 0 && wrong++ == 0) first = i;
  }
  CHECK_MESSAGE(wrong == 0, k.name() << ": the simulator differs from the GPU at " << wrong
                                     << " elements, first at " << first);
  return got;
}

template <class X>
void unaryOnGpu() {
  const std::vector<X> in = allPatterns<X>();
  for (UnOp op : smallUnaryOps()) {
    CAPTURE(unOpName(op));
    const std::vector<X> got = onBoth<X, X>(smallUnaryKernel<X>(op), in);
    size_t wrong = 0;
    for (size_t i = 0; i < in.size(); ++i) wrong += got[i].bits != unaryReference(op, in[i]).bits;
    CHECK(wrong == 0);
  }
}

template <class X>
void binaryOnGpu() {
  const size_t n = size_t{1} << 20;
  const std::vector<X> a = randomSmall<X>(n, 11), b = randomSmall<X>(n, 12);
  gpu::DeviceBuffer<X> da(a), db(b), o0(n), o1(n), o2(n), o3(n), o4(n), o5(n), o6(n);
  gpu::DeviceBuffer<uint32_t> o7(n);
  gpu::launch(smallBinaryKernel<X>(), {da, db, o0, o1, o2, o3, o4, o5, o6, o7});
  BinaryResults<X> got;
  got.sum = o0.download();
  got.difference = o1.download();
  got.product = o2.download();
  got.quotient = o3.download();
  got.minimum = o4.download();
  got.maximum = o5.download();
  got.power = o6.download();
  got.comparisons = o7.download();
  const std::string wrong = differingResults(got, binaryReference(a, b));
  CHECK_MESSAGE(wrong.empty(), "differing: " << wrong);
}

}  // namespace

TEST_CASE("gpu: every unary operation of Half on all 65,536 patterns, bit for bit") {
  unaryOnGpu<Half>();
}

TEST_CASE("gpu: every unary operation of BFloat16 on all 65,536 patterns, bit for bit") {
  unaryOnGpu<BFloat16>();
}

TEST_CASE("gpu: Half and BFloat16 binary operations and comparisons match C++") {
  binaryOnGpu<Half>();
  binaryOnGpu<BFloat16>();
}

TEST_CASE("gpu: conversions between the small floats and every type, bit for bit") {
  // Every pattern to f32, and back.
  onBoth<Half, float>(convertKernel<float, Half>("h2f"), allPatterns<Half>());
  onBoth<BFloat16, float>(convertKernel<float, BFloat16>("b2f"), allPatterns<BFloat16>());
  onBoth<Fp8E4M3, float>(convertKernel<float, Fp8E4M3>("e42f"), allPatterns<Fp8E4M3>());
  onBoth<Fp8E5M2, float>(convertKernel<float, Fp8E5M2>("e52f"), allPatterns<Fp8E5M2>());
  onBoth<Fp8E4M3, Half>(convertKernel<Half, Fp8E4M3>("e42h"), allPatterns<Fp8E4M3>());
  onBoth<Half, BFloat16>(convertKernel<BFloat16, Half>("h2b"), allPatterns<Half>());
  onBoth<BFloat16, Half>(convertKernel<Half, BFloat16>("b2h"), allPatterns<BFloat16>());
  onBoth<Half, double>(convertKernel<double, Half>("h2d"), allPatterns<Half>());
  onBoth<BFloat16, int32_t>(convertKernel<int32_t, BFloat16>("b2i"), allPatterns<BFloat16>());
  onBoth<Half, uint8_t>(convertKernel<uint8_t, Half>("h2u8"), allPatterns<Half>());
  // f32 patterns (every 16-bit top with interesting low bits) to each format.
  std::vector<float> wide;
  for (uint32_t hi = 0; hi < 65536; ++hi) {
    for (uint32_t lo : {0u, 1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu, 0x1234u, 0xfff0u}) {
      wide.push_back(std::bit_cast<float>(hi << 16 | lo));
    }
  }
  const std::vector<Half> h = onBoth<float, Half>(convertKernel<Half, float>("f2h"), wide);
  const std::vector<BFloat16> b =
      onBoth<float, BFloat16>(convertKernel<BFloat16, float>("f2b"), wide);
  const std::vector<Fp8E4M3> e4 =
      onBoth<float, Fp8E4M3>(convertKernel<Fp8E4M3, float>("f2e4"), wide);
  const std::vector<Fp8E5M2> e5 =
      onBoth<float, Fp8E5M2>(convertKernel<Fp8E5M2, float>("f2e5"), wide);
  for (size_t i = 0; i < wide.size(); ++i) {  // and the host types round the same
    REQUIRE(h[i].bits == Half(wide[i]).bits);
    REQUIRE(b[i].bits == BFloat16(wide[i]).bits);
    REQUIRE(e4[i].bits == Fp8E4M3(wide[i]).bits);
    REQUIRE(e5[i].bits == Fp8E5M2(wide[i]).bits);
  }
  // Doubles, 64-bit and 32-bit integers: random bits, exponents near each format's range.
  std::mt19937_64 rng(7);
  std::vector<double> doubles(1 << 20);
  std::vector<uint64_t> u64s(1 << 20);
  std::vector<int32_t> i32s(1 << 20);
  for (size_t i = 0; i < doubles.size(); ++i) {
    const uint64_t r = rng();
    const uint64_t exponent = i % 2 ? 1023 - 140 + (r >> 56) : (r >> 52) & 0x7ff;
    doubles[i] = std::bit_cast<double>((r & 0x800fffffffffffffull) | exponent << 52);
    u64s[i] = rng() >> (rng() % 64);
    i32s[i] = static_cast<int32_t>(rng() >> (32 + rng() % 32));
  }
  onBoth<double, Half>(convertKernel<Half, double>("d2h"), doubles);
  onBoth<double, BFloat16>(convertKernel<BFloat16, double>("d2b"), doubles);
  onBoth<double, Fp8E4M3>(convertKernel<Fp8E4M3, double>("d2e4"), doubles);
  onBoth<uint64_t, BFloat16>(convertKernel<BFloat16, uint64_t>("u2b"), u64s);
  onBoth<uint64_t, Half>(convertKernel<Half, uint64_t>("u2h"), u64s);
  onBoth<int32_t, BFloat16>(convertKernel<BFloat16, int32_t>("i2b"), i32s);
  onBoth<int32_t, Fp8E5M2>(convertKernel<Fp8E5M2, int32_t>("i2e5"), i32s);
}

TEST_CASE("gpu: Half parameters and literals, and wide loads of the small floats") {
  const std::vector<Half> in = randomSmall<Half>(100000, 3);
  gpu::DeviceBuffer<Half> din(in), dout(in.size());
  gpu::launch(scaledKernel<Half>(), {din, Half(1.5f), dout});
  std::vector<Half> sim(in.size());
  simulate(scaledKernel<Half>(), {in, Half(1.5f), sim});
  CHECK(dout.download() == sim);
  for (size_t n : {size_t{1000}, (size_t{1} << 20) + 3}) {
    const std::vector<BFloat16> v = randomSmall<BFloat16>(n, 4);
    gpu::DeviceBuffer<BFloat16> dv(v);
    gpu::DeviceBuffer<uint32_t> h8(n / 8), h2(n / 2);
    gpu::launch(smallVectorKernel<BFloat16, 8>(), {dv, h8});
    gpu::launch(smallVectorKernel<BFloat16, 2>(), {dv, h2});
    CHECK(h8.download() == smallVectorReference<BFloat16, 8>(v));
    CHECK(h2.download() == smallVectorReference<BFloat16, 2>(v));
    const std::vector<Fp8E4M3> e = randomSmall<Fp8E4M3>(n, 5);
    gpu::DeviceBuffer<Fp8E4M3> de(e);
    gpu::DeviceBuffer<uint32_t> h16(n / 16);
    gpu::launch(smallVectorKernel<Fp8E4M3, 16>(), {de, h16});
    CHECK(h16.download() == smallVectorReference<Fp8E4M3, 16>(e));
  }
}

TEST_CASE("gpu: registers of Half and BFloat16 move between lanes by their bits") {
  auto check = [](auto tag) {
    using X = decltype(tag);
    std::vector<X> in = randomSmall<X>(size_t{1} << 20, 9);
    for (size_t i = 0; i < in.size(); i += 5) in[i] = in[i / 2];  // equal values to match
    gpu::DeviceBuffer<X> din(in), dout(in.size());
    gpu::DeviceBuffer<uint32_t> dmatch(in.size());
    gpu::launch(smallShuffleKernel<X>(), {din, dout, dmatch});
    const auto [want, wantMatch] = smallShuffleReference(in);
    CHECK(dout.download() == want);
    CHECK(dmatch.download() == wantMatch);
  };
  check(Half{});
  check(BFloat16{});
}

TEST_CASE("gpu: atomicAdd of Half and BFloat16 in shared and global memory") {
  auto check = [](auto tag) {
    using X = decltype(tag);
    // 50 blocks: each bin's sum stays a small integer (at most 200, exact even in bf16), so it
    // does not depend on the order the GPU adds in.
    std::vector<X> values(64 * 50);
    for (size_t i = 0; i < values.size(); ++i) values[i] = X(static_cast<float>(i * 7 % 4 == 3));
    const std::vector<X> start(16, X(0.0f));
    gpu::DeviceBuffer<X> dv(values), dbins(start), dcopy(values.size());
    gpu::launch(smallAtomicKernel<X>(), {dv, dbins, dcopy});
    CHECK(dbins.download() == smallAtomicReference(values, start));
    CHECK(dcopy.download() == values);
  };
  check(Half{});
  check(BFloat16{});
}
