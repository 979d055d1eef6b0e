// Vector stores (unvectors<W>): every element type and width on the simulator against plain
// C++ for awkward lengths, bit for bit; the generated CUDA (one aligned vector store, narrow
// lanes packed into 32-bit words) and its PTX (one st.global of the full width); the alignment
// the launch and the exported launcher check; the shape rules; and the fallback to one store
// per lane where the writes do not go to a global array directly.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../support.hpp"
#include "../vector_store_kernels.hpp"

using namespace obsidian;
using namespace obsidian::testing;
using ::testing::errorOf;
using ::testing::has;

namespace {

template <class X, uint32_t W>
void checkReverseLanes(uint32_t threads) {
  const Kernel k = reverseLanes<X, W>("reverse", threads);
  for (size_t n : {size_t{0}, size_t{1}, size_t{W - 1}, size_t{W}, size_t{W + 1},
                   size_t{37 * W + W / 2 + 1}, size_t{1000 * W + W - 1}}) {
    const std::vector<X> in = randomBitPatterns<X>(n, static_cast<uint32_t>(n + W));
    std::vector<X> out = randomBitPatterns<X>(n, 7);
    simulate(k, {in, out});
    CHECK_MESSAGE(sameBits(out, reverseLanesReference<X, W>(in)),
                  cudaTypeName(scalarTypeOf<X>) << " unvectors<" << W << ">, n = " << n);
  }
}

}  // namespace

TEST_CASE("unvectors<W>: every element type and width, lengths with a tail, bit for bit") {
  checkReverseLanes<float, 4>(64);
  checkReverseLanes<float, 2>(32);
  checkReverseLanes<int32_t, 4>(64);
  checkReverseLanes<uint32_t, 2>(64);
  checkReverseLanes<uint64_t, 2>(64);
  checkReverseLanes<double, 2>(32);
  checkReverseLanes<uint8_t, 16>(64);
  checkReverseLanes<uint8_t, 8>(32);
  checkReverseLanes<uint8_t, 4>(64);
  checkReverseLanes<uint8_t, 2>(64);
  checkReverseLanes<uint16_t, 8>(64);
  checkReverseLanes<uint16_t, 2>(64);
  checkReverseLanes<Half, 8>(64);
  checkReverseLanes<Half, 2>(32);
  checkReverseLanes<BFloat16, 4>(64);
  checkReverseLanes<Fp8E4M3, 16>(64);
  checkReverseLanes<Fp8E5M2, 2>(64);
}

TEST_CASE("unvectors<W>: one aligned vector store per vector, narrow lanes packed into words") {
  const std::string f4 = reverseLanes<float, 4>("f4").cuda();
  CHECK(has(f4, "((float4*)out0)["));
  CHECK(has(f4, "] = float4{"));
  const std::string h8 = reverseLanes<Half, 8>("h8").cuda();
  // Lane 0 (in lane 7) is the low half of word x; lane 1 its high half.
  CHECK(has(h8, "((uint4*)out0)["));
  CHECK(has(h8, "] = uint4{(uint32_t)obsidian_bits("));
  CHECK(has(h8, ") << 16u, "));
  const std::string b16 = reverseLanes<uint8_t, 16>("b16").cuda();
  CHECK(has(b16, ") << 24u, "));
  CHECK(has(reverseLanes<uint8_t, 2>("b2").cuda(), "((uint16_t*)out0)["));
  CHECK(has(reverseLanes<uint8_t, 2>("b2").cuda(), "] = uint16_t{(uint16_t)((uint32_t)"));
  CHECK(has(reverseLanes<uint16_t, 2>("s2").cuda(), "((uint32_t*)out0)["));
  CHECK(has(reverseLanes<uint64_t, 2>("l2").cuda(), "((ulonglong2*)out0)["));
  // The IR printer shows the store and its lanes.
  CaptureOptions dump;
  dump.dumpIr = true;
  const Kernel f2 = capture(
      "f2", 64, [](DPull<EFloat> in) { return unvectors<2>(push<Grid>(vectors<2>(in))); }, dump);
  CHECK(has(f2.irDump(), " ..+2] = {"));
  // The output must be aligned to the vector's size; the report counts one store site for the
  // vectors and one for the tail.
  const Kernel k = reverseLanes<Half, 8>("h8");
  CHECK(k.ir().arrays[k.ir().params[1].array].alignment == 16);
  CHECK(k.ir().arrays[k.ir().params[0].array].alignment == 16);
}

TEST_CASE("unvectors<W>: NVRTC makes one store of the vector's full width") {
  const std::vector<std::pair<Kernel, std::string>> kernels = {
      {reverseLanes<float, 4>("f4"), ".v4.f32"},     {reverseLanes<Half, 8>("h8"), ".v4.u32"},
      {reverseLanes<uint8_t, 16>("b16"), ".v4.u32"}, {reverseLanes<uint16_t, 4>("s4"), ".v2.u32"},
      {reverseLanes<double, 2>("d2"), ".v2.f64"},    {reverseLanes<BFloat16, 2>("bf2"), ".u32"}};
  for (const auto& [k, width] : kernels) {
    INFO(k.name() << "\n" << k.cuda());
    const std::vector<std::string> stores = ::testing::linesWith(k.compile().ptx, "st.global");
    size_t wide = 0;
    for (const std::string& store : stores) wide += has(store, "st.global" + width) ? 1 : 0;
    CHECK(wide == 1);  // the vectors' store; the tail's are scalar
  }
}

TEST_CASE("unvectors<W>: the launch and the exported launcher check the output's alignment") {
  const Kernel k = reverseLanes<float, 4>("rev");
  const std::string h = exportHeader({k}, ExportOptions{"app", ""});
  CHECK(has(h,
            "if ((unsigned long long)out0 % 16 != 0) return cudaErrorInvalidValue;  // written "
            "with 16-byte vector stores"));
  alignas(16) static float in[16] = {};
  alignas(16) static float out[20] = {};
  std::span<float> shifted(out + 1, 16);
  CHECK(errorOf([&] {
          simulate(k, {std::span<const float>(in, 16), shifted});
        }) ==
        "launch of kernel rev: argument 1 (out0) must be 16-byte aligned: the kernel writes it "
        "with 16-byte vector stores (unvectors<W>); got an address 4 bytes past a multiple of 16");
  simulate(k, {std::span<const float>(in, 16), std::span<float>(out + 4, 16)});  // aligned
}

TEST_CASE("unvectors<W>: an output piece must start at a multiple of W elements") {
  // The tail first: the vectors start at n0 % 4, which is not known to be a multiple of 4.
  CHECK(errorOf([] {
          capture("k", 32, [](DPull<EFloat> in) {
            const auto v = vectors<4>(in);
            const EWord32 whole = len(v) * 4u;
            return concP(
                push<Grid>(mkPull(len(in) - whole,
                                  [in, whole](const EWord32& i) { return in[whole + i]; })),
                unvectors<4>(push<Grid>(v)));
          });
        }) ==
        "unvectors<4> needs its output to start at a multiple of 4 elements of out0 (so that "
        "every vector is aligned); it starts at n0 - n0 / 4u * 4u");
  // A static piece of 8 elements and then vectors of 16 bytes: a multiple of 8, not of 16.
  CHECK(errorOf([] {
          capture("k", 32, [](DPull<EWord8> in) {
            return concP(push<Grid>(mkPull(8u, [in](const EWord32& i) { return in[i]; })),
                         unvectors<16>(push<Grid>(vectors<16>(in))));
          });
        }) ==
        "unvectors<16> needs its output to start at a multiple of 16 elements of out0 (so that "
        "every vector is aligned); it starts at 8u");
  // More than 2^32 - 1 elements.
  CHECK(errorOf([] {
          unvectors<4>(push<Grid>(mkPull(0x40000000u, [](const EWord32& i) {
            const EFloat x = cast<float>(i);
            return Vector<4, float>(x, x, x, x);
          })));
        }) == "unvectors<4>: 1073741824 vectors are more than 2^32 - 1 elements");
}

TEST_CASE("unvectors<W>: forced into shared memory, the lanes are written one by one") {
  // A block's vectors, reversed, staged in shared memory, then written out: the shared writes
  // are scalar (no vector type in the CUDA) and the output is right.
  const Kernel k = capture("staged", 64, [](DPull<EFloat> in) {
    return pConcat(fmap(
        [](const SPull<EFloat>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            const SPull<EFloat> s = force(
                p, unvectors<4>(push<Block>(fmap(
                       [](const Vector<4, float>& x) { return Vector<4, float>(hana::reverse(x)); },
                       vectors<4>(c)))));
            return push<Block>(s);
          });
        },
        splitUp(256, in)));
  });
  CHECK(has(k.cuda(), "((const float4*)in0)["));  // the loads are vectors
  CHECK(!has(k.cuda(), "((float4*)"));            // the stores are not
  const std::vector<float> in = randomBitPatterns<float>(1024, 3);
  std::vector<float> out(1024);
  simulate(k, {in, out});
  CHECK(sameBits(out, reverseLanesReference<float, 4>(in)));
}
