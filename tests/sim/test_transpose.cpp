// The device transpose (include/obsidian/device/transpose.hpp) on the simulator: odd shapes
// (1 x 1, 1 x N, N x 1, 33 x 17, 1000 x 777) and several element types and policies against a
// plain C++ transpose; the building block in a kernel of one's own; and the shape errors.
#include <doctest/doctest.h>

#include <obsidian/device/transpose.hpp>
#include <random>

#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;

namespace {

template <class X>
std::vector<X> reference(const std::vector<X>& in, uint32_t rows, uint32_t cols) {
  std::vector<X> out(in.size());
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c) out[size_t{c} * rows + r] = in[size_t{r} * cols + c];
  return out;
}

template <class X>
std::vector<X> randomMatrix(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<X> v(n);
  for (X& x : v) {
    if constexpr (std::is_floating_point_v<X>) {
      x = static_cast<X>(static_cast<double>(rng() % 1000000) / 7.0);
    } else {
      x = static_cast<X>(rng());
    }
  }
  return v;
}

template <class X>
void checkShape(uint32_t rows, uint32_t cols, const device::Options& o = {}) {
  const std::vector<X> in = randomMatrix<X>(size_t{rows} * cols, rows * 31 + cols);
  const TransposePolicy p =
      device::transposePolicyFor<X>(device::Target::simulator(), rows, cols, o);
  CHECK_MESSAGE(device::transpose<X>(in, rows, cols, o) == reference(in, rows, cols),
                rows << " x " << cols << ", tile " << p.tile << ", threads " << p.threads);
}

}  // namespace

TEST_CASE("transpose: odd shapes against C++") {
  for (auto [rows, cols] : {std::pair{1u, 1u},
                            {1u, 37u},
                            {37u, 1u},
                            {1u, 100u},
                            {100u, 1u},
                            {33u, 17u},
                            {17u, 33u},
                            {32u, 32u},
                            {64u, 96u},
                            {95u, 65u}}) {
    checkShape<uint32_t>(rows, cols);
  }
}

TEST_CASE("transpose: 1000 x 777 u32") { checkShape<uint32_t>(1000, 777); }

TEST_CASE("transpose: element types and policies") {
  for (TransposePolicy p : {TransposePolicy{256, 32}, TransposePolicy{64, 16},
                            TransposePolicy{512, 64}, TransposePolicy{64, 8}}) {
    const device::Options o = device::withPolicy<device::Transpose>(p);
    checkShape<uint32_t>(77, 130, o);
    checkShape<float>(45, 70, o);
    checkShape<double>(33, 17, o);
    checkShape<uint8_t>(70, 45, o);
    checkShape<int32_t>(1, 200, o);
  }
}

TEST_CASE("transpose: both kernels, sector-aligned writes or not, on any shape") {
  for (bool aligned : {false, true}) {
    for (TransposePolicy p : {TransposePolicy{256, 32}, TransposePolicy{64, 8}}) {
      const Kernel ku = transposeKernel<uint32_t>(p, aligned);
      const Kernel kb = transposeKernel<uint8_t>(p, aligned);
      for (auto [rows, cols] :
           {std::pair{1u, 1u}, {7u, 9u}, {8u, 40u}, {33u, 17u}, {64u, 31u}, {101u, 3u}}) {
        const std::vector<uint32_t> in = randomMatrix<uint32_t>(size_t{rows} * cols, rows + cols);
        std::vector<uint32_t> out(in.size());
        simulate(ku, {in, rows, cols, out});
        CHECK_MESSAGE(out == reference(in, rows, cols),
                      rows << " x " << cols << ", aligned " << aligned << ", tile " << p.tile);
        const std::vector<uint8_t> bytes = randomMatrix<uint8_t>(size_t{rows} * cols, rows);
        std::vector<uint8_t> outBytes(bytes.size());
        simulate(kb, {bytes, rows, cols, outBytes});
        CHECK_MESSAGE(outBytes == reference(bytes, rows, cols),
                      "u8 " << rows << " x " << cols << ", aligned " << aligned);
      }
    }
  }
  CHECK(transposeAlignsWrites<uint32_t>(8191));
  CHECK(!transposeAlignsWrites<uint32_t>(8192));
  CHECK(!transposeAlignsWrites<double>(1000));
}

TEST_CASE(
    "transpose: the policy by shape: a smaller tile where the tuned one cannot fill the GPU") {
  const auto policy = [](uint32_t rows, uint32_t cols, uint32_t sms = 132, SmVersion sm = 90) {
    return device::transposePolicyFor<uint32_t>(device::Target{false, sm, sms}, rows, cols);
  };
  // 1000 x 777: 16 x 13 = 208 tiles of 64 for 132 SMs, fewer than 4 per SM.
  CHECK(policy(1000, 777) == TransposePolicy{256, 32});
  // 8191 x 4097: 128 x 65 tiles; 2048 x 2048: 32 x 32 = 1024 >= 4 x 132... but not on 300 SMs.
  CHECK(policy(8191, 4097) == TransposePolicy{512, 64});
  CHECK(policy(2048, 2048) == TransposePolicy{512, 64});
  CHECK(policy(2048, 2048, 300) == TransposePolicy{256, 32});
  // Exactly the threshold: 528 tiles (33 x 16 of 64) on 132 SMs fills it.
  CHECK(policy(33 * 64, 16 * 64) == TransposePolicy{512, 64});
  CHECK(policy(33 * 64 - 64, 16 * 64) == TransposePolicy{256, 32});
  // Shapes near 2^32 elements do not wrap the tile count.
  CHECK(policy(65536, 65535) == TransposePolicy{512, 64});
  // The fallback row (no rows by scale) always takes its one policy.
  CHECK(policy(3, 3, 132, 0) == device::Transpose::table[0].policy);
  CHECK(policy(8192, 8192, 132, 0) == device::Transpose::table[0].policy);
  // The call follows it: the simulator stands for the H100's rows and 132 SMs, and the result
  // is the transpose either way.
  CHECK(device::transposePolicyFor<uint32_t>(device::Target::simulator(), 1000, 777) ==
        TransposePolicy{256, 32});
  std::vector<uint32_t> in(300 * 7);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint32_t>(i * 2654435761u);
  const auto out = device::transpose<uint32_t>(in, 300, 7);
  for (uint32_t r = 0; r < 300; ++r)
    for (uint32_t c = 0; c < 7; ++c) REQUIRE(out[c * 300 + r] == in[r * 7 + c]);
}

TEST_CASE("transpose: an empty matrix is an empty transpose") {
  CHECK(device::transpose<uint32_t>(std::vector<uint32_t>{}, 0, 5).empty());
  CHECK(device::transpose<uint32_t>(std::vector<uint32_t>{}, 7, 0).empty());
}

TEST_CASE("transpose: the kernel pads its tile and reads and writes rows") {
  const Kernel k = transposeKernel<uint32_t>({256, 32});
  CHECK(k.sharedBytes() == 32 * 33 * 4);
  CHECK(k.threadsPerBlock() == 256);
  // Aligned writes: 8 more rows (a 32-byte sector of u32) above the tile.
  CHECK(transposeKernel<uint32_t>({256, 32}, true).sharedBytes() == 40 * 33 * 4);
}

TEST_CASE("transpose: the building block in a kernel of one's own") {
  // One block per 16 x 16 square matrix of a batch: each transposed in place of its block's
  // output chunk.
  const Kernel k = capture("batchedTranspose", 64, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& m) {
          return exec<Block>([m](const Program<Block>& p) {
            return transposeTile<uint32_t>(
                p, 16, 16u, 16u,
                [m](const EWord32& r, const EWord32& c) { return m[r * 16u + c]; });
          });
        },
        splitUp(256, in)));
  });
  const std::vector<uint32_t> in = randomMatrix<uint32_t>(256 * 3, 5);
  std::vector<uint32_t> out(in.size());
  simulate(k, {in, out});
  for (size_t b = 0; b < 3; ++b) {
    const std::vector<uint32_t> m(in.begin() + b * 256, in.begin() + (b + 1) * 256);
    CHECK(std::vector<uint32_t>(out.begin() + b * 256, out.begin() + (b + 1) * 256) ==
          reference(m, 16, 16));
  }
}

TEST_CASE("transpose: mistakes are errors that name the rule") {
  const std::vector<uint32_t> in(12, 1);
  CHECK(errorOf([&] { device::transpose<uint32_t>(in, 5, 3); }) ==
        "transpose: the input holds 12 elements; a 5 x 3 matrix has 15");
  CHECK(errorOf([&] { device::transpose<uint32_t>(in, 65536, 65536); }) ==
        "transpose: a 65536 x 65536 matrix has 4294967296 elements; at most 2^32 - 1");
  device::Options o = device::withPolicy<device::Transpose>({256, 12});
  CHECK(errorOf([&] { device::transpose<uint32_t>(in, 3, 4, o); }) ==
        "TransposePolicy: the tile's side must be a power of two from 8 to 128; got 12");
  o = device::withPolicy<device::Transpose>({128, 8});
  CHECK(errorOf([&] { device::transpose<uint32_t>(in, 3, 4, o); }) ==
        "TransposePolicy: threads must be a multiple of 32 up to 1024 that divides tile x tile "
        "(64); got 128");
  // A direct launch whose rows x cols is not the input's length is refused at launch.
  const Kernel k = transposeKernel<uint32_t>({256, 32});
  std::vector<uint32_t> out(12);
  CHECK(errorOf([&] {
          simulate(k, {in, 5u, 3u, out});
        }).find("transpose: the input holds rows x cols elements") != std::string::npos);
}
