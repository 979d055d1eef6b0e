// Narrow elements: u16 arithmetic, and wide loads of u8 and u16 (vectors<W> up to 16 bytes) on
// the simulator against plain C++ for awkward lengths; the generated CUDA (one word load per
// vector, lanes extracted with shifts), its PTX (one ld.global per vector, of the full width),
// the exported launcher and the rules each check enforces.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>
#include <obsidian/report_json.hpp>

#include "../narrow_kernels.hpp"
#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::testing;
using ::testing::errorOf;
using ::testing::has;

namespace {

template <class X, uint32_t W>
void checkVectorHashes(uint32_t threads) {
  const Kernel k = vectorHashes<X, W>("hashes", threads);
  for (size_t n : {size_t{0}, size_t{1}, size_t{W - 1}, size_t{W}, size_t{W + 1},
                   size_t{37 * W + W / 2 + 1}, size_t{1000 * W + W - 1}}) {
    const std::vector<X> in = randomNarrow<X>(n, static_cast<uint32_t>(n + W));
    std::vector<uint32_t> out(n / W + 1, 12345);
    simulate(k, {in, out});
    const std::vector<uint32_t> want = vectorHashesReference<X, W>(in);
    CHECK_MESSAGE(out == want, "u" << 8 * sizeof(X) << " vectors<" << W << ">, n = " << n);
  }
}

}  // namespace

TEST_CASE("u16: arithmetic, shifts, min/max, comparisons and casts match C++ on the simulator") {
  const Kernel k = u16Kernel();
  for (size_t n : {size_t{0}, size_t{1}, size_t{1007}}) {
    for (const float f : {3.7f, -2.5f, 1e6f}) {
      const std::vector<uint16_t> a = randomNarrow<uint16_t>(n, 1),
                                  b = randomNarrow<uint16_t>(n, 2);
      const uint16_t s = 54321;
      U16Results got = u16Sized(n);
      simulate(k, {a, b, s, f, got.r0, got.r1, got.r2, got.r3, got.r4});
      CHECK_MESSAGE(got == u16Reference(a, b, s, f), "n = " << n << ", f = " << f);
    }
  }
}

TEST_CASE("u16: parameters, arrays and code are typed uint16_t") {
  const Kernel k = u16Kernel();
  const std::string cuda = k.cuda();
  CHECK(has(cuda, "typedef unsigned short uint16_t;"));
  CHECK(has(cuda,
            "const uint16_t* __restrict__ in0, uint32_t n0, const uint16_t* __restrict__ in1, "
            "uint32_t n1, uint16_t s2, "
            "float s3, uint16_t* __restrict__ out0_0"));
  // u16 * u16 can pass INT_MAX in int arithmetic: the product is computed unsigned.
  CHECK(has(cuda, "(uint16_t)((unsigned int)t0 * t1)"));  // t0, t1: in0[i0], in1[i0] (shared)
  // A float becomes a u16 through u32, as CUDA converts it.
  CHECK(has(cuda, "(uint16_t)(uint32_t)((float)"));
  CHECK(toJson(k.report())["params"][0]["type"] == "uint16_t");
  CHECK(k.compile().registers > 0);
  // A scalar of another type is refused with the parameter's type named.
  std::vector<uint16_t> a(4), b(4);
  U16Results out = u16Sized(4);
  CHECK(errorOf([&] {
          simulate(k, {a, b, uint32_t{5}, 1.0f, out.r0, out.r1, out.r2, out.r3, out.r4});
        }) ==
        "launch of kernel u16ops: argument 2 (s2) must be a scalar of type uint16_t; got a "
        "uint32_t scalar");
}

TEST_CASE("vectors<W> of u8 and u16: every width, lengths with a tail, against C++") {
  checkVectorHashes<uint8_t, 2>(64);
  checkVectorHashes<uint8_t, 4>(64);
  checkVectorHashes<uint8_t, 8>(32);
  checkVectorHashes<uint8_t, 16>(64);
  checkVectorHashes<uint16_t, 2>(64);
  checkVectorHashes<uint16_t, 4>(32);
  checkVectorHashes<uint16_t, 8>(64);
}

TEST_CASE("vectors<16> of u8, vectors<8> of u16: splitUp pieces, one block each, against C++") {
  const Kernel bytes = pieceCounts<uint8_t, 16>("byteCounts", 256, uint8_t{100});
  const Kernel shorts = pieceCounts<uint16_t, 8>("shortCounts", 64, uint16_t{30000});
  for (size_t pieces : {size_t{0}, size_t{1}, size_t{7}}) {
    const std::vector<uint8_t> b = randomNarrow<uint8_t>(pieces * 256, 3);
    std::vector<uint32_t> outB(pieces * 16, 12345);
    simulate(bytes, {b, outB});
    CHECK(outB == pieceCountsReference<uint8_t, 16>(b, 100));
    const std::vector<uint16_t> s = randomNarrow<uint16_t>(pieces * 64, 4);
    std::vector<uint32_t> outS(pieces * 8, 12345);
    simulate(shorts, {s, outS});
    CHECK(outS == pieceCountsReference<uint16_t, 8>(s, 30000));
  }
  // The piece's vector index is its base over W plus the vector's.
  CHECK(has(bytes.cuda(), "const uint32_t t0 = bid0 * 256u / 16u + "));
  CHECK(has(bytes.cuda(), "(uint8_t)(((const uint4*)in0)[t0].x >> 8u)"));
  CHECK(bytes.ir().arrays[bytes.ir().params[0].array].alignment == 16);
  CHECK(shorts.ir().arrays[shorts.ir().params[0].array].alignment == 16);
}

TEST_CASE("vectors<W> of u8 and u16: each vector is read as aligned 32-bit words, lanes shifted") {
  const std::string u8x16 = vectorHashesOnly<uint8_t, 16>("u8x16").cuda();
  // Lane 0 is the low byte of word x, lane 5 bits 8..15 of word y, lane 15 the top of word w.
  CHECK(has(u8x16, "(uint8_t)((const uint4*)in0)["));
  CHECK(has(u8x16, "].y >> 8u)"));
  CHECK(has(u8x16, "].w >> 24u)"));
  const std::string u16x8 = vectorHashesOnly<uint16_t, 8>("u16x8").cuda();
  CHECK(has(u16x8, "(uint16_t)((const uint4*)in0)["));
  CHECK(has(u16x8, "].w >> 16u)"));
  CHECK(has(vectorHashesOnly<uint8_t, 8>("u8x8").cuda(), "].y >> 24u)"));  // a uint2
  CHECK(has(vectorHashesOnly<uint8_t, 8>("u8x8").cuda(), "((const uint2*)in0)["));
  CHECK(has(vectorHashesOnly<uint8_t, 4>("u8x4").cuda(), "(uint8_t)(((const uint32_t*)in0)["));
  CHECK(has(vectorHashesOnly<uint8_t, 2>("u8x2").cuda(), "(uint8_t)(((const uint16_t*)in0)["));
  CHECK(has(vectorHashesOnly<uint16_t, 4>("u16x4").cuda(), "((const uint2*)in0)["));
  CHECK(has(vectorHashesOnly<uint16_t, 2>("u16x2").cuda(), "(uint16_t)(((const uint32_t*)in0)["));
}

TEST_CASE("vectors<W> of u8 and u16: NVRTC makes one load of the vector's full width") {
  // Each kernel's loads from global memory, as PTX: every one is of the vector's width.
  const std::vector<std::pair<Kernel, std::string>> kernels = {
      {vectorHashesOnly<uint8_t, 16>("u8x16"), ".v4.u32"},
      {vectorHashesOnly<uint16_t, 8>("u16x8"), ".v4.u32"},
      {vectorHashesOnly<uint8_t, 8>("u8x8"), ".v2.u32"},
      {vectorHashesOnly<uint16_t, 4>("u16x4"), ".v2.u32"},
      {vectorHashesOnly<uint8_t, 4>("u8x4"), ".u32"},
      {vectorHashesOnly<uint16_t, 2>("u16x2"), ".u32"},
      {vectorHashesOnly<uint8_t, 2>("u8x2"), ".u16"}};
  for (const auto& [k, width] : kernels) {
    INFO(k.name() << "\n" << k.cuda());
    const std::vector<std::string> loads = ::testing::linesWith(k.compile().ptx, "ld.global");
    CHECK(!loads.empty());
    for (const std::string& load : loads) {
      const bool full = has(load, "ld.global" + width) || has(load, "ld.global.nc" + width);
      CHECK_MESSAGE(full, load);
    }
  }
}

TEST_CASE("vectors<16> of u8: the exported launcher and the simulator check the alignment") {
  const Kernel k = vectorHashes<uint8_t, 16>("hashes");
  const std::string h = exportHeader({k}, ExportOptions{"app", ""});
  CHECK(has(h, "const uint8_t* in0, size_t in0Count"));
  CHECK(has(h,
            "if ((unsigned long long)in0 % 16 != 0) return cudaErrorInvalidValue;  // read with "
            "16-byte vector loads"));
  alignas(16) static uint8_t bytes[80] = {};
  std::span<const uint8_t> shifted(bytes + 3, 64);
  std::vector<uint32_t> out(5);
  CHECK(errorOf([&] {
          simulate(k, {shifted, out});
        }) ==
        "launch of kernel hashes: argument 0 (in0) must be 16-byte aligned: the kernel reads it "
        "with 16-byte vector loads (vectors<W>); got an address 3 bytes past a multiple of 16");
  // vectors<4> of u16 are 8 bytes.
  const Kernel k4 = vectorHashes<uint16_t, 4>("hashes4");
  alignas(16) static uint16_t shorts[40] = {};
  std::span<const uint16_t> byOne(shorts + 1, 32);
  std::vector<uint32_t> out4(9);
  CHECK(errorOf([&] {
          simulate(k4, {byOne, out4});
        }) ==
        "launch of kernel hashes4: argument 0 (in0) must be 8-byte aligned: the kernel reads it "
        "with 8-byte vector loads (vectors<W>); got an address 2 bytes past a multiple of 8");
  std::span<const uint16_t> byFour(shorts + 4, 32);
  simulate(k4, {byFour, out4});  // 8 bytes past a 16-byte boundary: aligned for 8-byte loads
  CHECK(out4 == vectorHashesReference<uint16_t, 4>(std::vector<uint16_t>(32, 0)));
}

TEST_CASE("vectors<16> of u8: a piece must start at a multiple of 16 elements") {
  CHECK(errorOf([] {
          capture("k", 32, [](DPull<EWord8> in) {
            return push<Grid>(fmap([](const Vector<16, uint8_t>& v) { return hana::at_c<0>(v); },
                                   vectors<16>(splitAt(8, in).second)));
          });
        }) ==
        "vectors<16> needs the array to start at a multiple of 16 elements of in0 (so that "
        "every vector is aligned); it starts at 8u");
  CHECK(errorOf([] {
          capture("k", 32, [](DPull<EWord16> in) {
            return pConcat(fmap(
                [](const SPull<EWord16>& c) {
                  return push<Block>(
                      fmap([](const Vector<8, uint16_t>& v) { return hana::at_c<7>(v); },
                           vectors<8>(c)));
                },
                splitUp(12, in)));
          });
        }) ==
        "vectors<8> needs the array to start at a multiple of 8 elements of in0 (so that every "
        "vector is aligned); it starts at bid0 * 12u");
}
