// GPU tests of narrow elements (label gpu): u16 arithmetic and wide loads of u8 and u16
// (vectors<W>) on the device match plain C++ and the simulator, for lengths with a tail and
// splitUp pieces, and a misaligned array is refused before launch.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../narrow_kernels.hpp"

using namespace obsidian;
using namespace obsidian::testing;

namespace {

template <class X, uint32_t W>
void checkVectorHashesOnGpu() {
  const Kernel k = vectorHashes<X, W>("hashes", 256);
  for (size_t n : {size_t{1}, size_t{W - 1}, size_t{37 * W + W / 2 + 1}, (size_t{1} << 22) + W - 1,
                   size_t{1} << 22}) {
    const std::vector<X> in = randomNarrow<X>(n, static_cast<uint32_t>(n + W));
    gpu::DeviceBuffer<X> din(in);
    gpu::DeviceBuffer<uint32_t> out(n / W + 1);
    gpu::launch(k, {din, out});
    const std::vector<uint32_t> got = out.download();
    const std::vector<uint32_t> want = vectorHashesReference<X, W>(in);
    CHECK_MESSAGE(got == want, "u" << 8 * sizeof(X) << " vectors<" << W << ">, n = " << n);
    if (n < 5000) {  // the simulator agrees
      std::vector<uint32_t> sim(n / W + 1);
      simulate(k, {in, sim});
      CHECK(sim == got);
    }
  }
}

}  // namespace

TEST_CASE("gpu: u16 arithmetic and casts match C++ and the simulator") {
  const Kernel k = u16Kernel();
  for (size_t n : {size_t{1}, size_t{1007}, size_t{1} << 20}) {
    for (const float f : {3.7f, -2.5f, 1e6f}) {
      const std::vector<uint16_t> a = randomNarrow<uint16_t>(n, 1),
                                  b = randomNarrow<uint16_t>(n, 2);
      const uint16_t s = 54321;
      gpu::DeviceBuffer<uint16_t> da(a), db(b), o0(n), o1(n), o2(n), o3(n);
      gpu::DeviceBuffer<uint32_t> o4(n);
      gpu::launch(k, {da, db, s, f, o0, o1, o2, o3, o4});
      U16Results got;
      got.r0 = o0.download();
      got.r1 = o1.download();
      got.r2 = o2.download();
      got.r3 = o3.download();
      got.r4 = o4.download();
      CHECK_MESSAGE(got == u16Reference(a, b, s, f), "n = " << n << ", f = " << f);
      if (n < 5000) {
        U16Results sim = u16Sized(n);
        simulate(k, {a, b, s, f, sim.r0, sim.r1, sim.r2, sim.r3, sim.r4});
        CHECK(sim == got);
      }
    }
  }
}

TEST_CASE("gpu: vectors<W> of u8 and u16, every width, lengths with a tail") {
  checkVectorHashesOnGpu<uint8_t, 2>();
  checkVectorHashesOnGpu<uint8_t, 4>();
  checkVectorHashesOnGpu<uint8_t, 8>();
  checkVectorHashesOnGpu<uint8_t, 16>();
  checkVectorHashesOnGpu<uint16_t, 2>();
  checkVectorHashesOnGpu<uint16_t, 4>();
  checkVectorHashesOnGpu<uint16_t, 8>();
}

TEST_CASE("gpu: vectors<16> of u8 and vectors<8> of u16 in splitUp pieces") {
  const Kernel bytes = pieceCounts<uint8_t, 16>("byteCounts", 256, uint8_t{100});
  const Kernel shorts = pieceCounts<uint16_t, 8>("shortCounts", 64, uint16_t{30000});
  for (size_t pieces : {size_t{1}, size_t{7}, size_t{40000}}) {
    const std::vector<uint8_t> b = randomNarrow<uint8_t>(pieces * 256, 3);
    gpu::DeviceBuffer<uint8_t> db(b);
    gpu::DeviceBuffer<uint32_t> outB(pieces * 16);
    gpu::launch(bytes, {db, outB});
    CHECK(outB.download() == pieceCountsReference<uint8_t, 16>(b, 100));
    const std::vector<uint16_t> s = randomNarrow<uint16_t>(pieces * 64, 4);
    gpu::DeviceBuffer<uint16_t> ds(s);
    gpu::DeviceBuffer<uint32_t> outS(pieces * 8);
    gpu::launch(shorts, {ds, outS});
    CHECK(outS.download() == pieceCountsReference<uint16_t, 8>(s, 30000));
  }
}

TEST_CASE("gpu: an array of u8 read with 16-byte vectors must be 16-byte aligned") {
  const Kernel k = vectorHashes<uint8_t, 16>("hashes", 256);
  gpu::DeviceBuffer<uint8_t> din(80);
  din.zero();
  gpu::DeviceBuffer<uint32_t> out(5);
  const KernelArg shifted = KernelArg::deviceArray(ScalarType::U8, din.address() + 3, 64, false);
  CHECK_THROWS_WITH(gpu::launch(k, {shifted, out}),
                    "launch of kernel hashes: argument 0 (in0) must be 16-byte aligned: the "
                    "kernel reads it with 16-byte vector loads (vectors<W>); got an address 3 "
                    "bytes past a multiple of 16");
  const KernelArg aligned = KernelArg::deviceArray(ScalarType::U8, din.address() + 16, 64, false);
  gpu::launch(k, {aligned, out});  // a valid launch works after it
  CHECK(out.download() == std::vector<uint32_t>(5, 0));
}
