// Scatters (obsidian/scatter.hpp) on the simulator: permute by an index array, by a function of
// the element and by one of the position; destinations past the end dropped; two elements sent
// to one place reported as a race; permuteInto combining with atomics into global and shared
// arrays.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <obsidian/obsidian.hpp>
#include <random>

#include "../kernels.hpp"
#include "../support.hpp"

using namespace obsidian;
using ::testing::errorOf;
using ::testing::randomWords;

namespace {

std::vector<uint32_t> shuffled(size_t n, uint32_t seed) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  return v;
}

}  // namespace

TEST_CASE("permute: by an index array, out[idx[i]] = in[i]") {
  const Kernel k = obsidian::testing::permuteByIndex();
  for (size_t n : {size_t{0}, size_t{1}, size_t{77}, size_t{1000}}) {
    const std::vector<uint32_t> in = randomWords(n, 4), idx = shuffled(n, 5);
    std::vector<uint32_t> out(n, 7);
    simulate(k, {in, idx, out});
    std::vector<uint32_t> want(n);
    for (size_t i = 0; i < n; ++i) want[idx[i]] = in[i];
    CHECK_MESSAGE(out == want, "n = " << n);
  }
}

TEST_CASE("permute: by a function of the element or of the position; the end is a bound") {
  // The elements are a permutation of 0 .. n - 1 sent to their own value: out = 0, 1, 2, ...
  const Kernel byValue = capture("byValue", 64, [](DPull<EWord32> in) {
    return permute(len(in), push<Grid>(in), [](const EWord32& v, const EWord32&) { return v; });
  });
  const std::vector<uint32_t> in = shuffled(500, 6);
  std::vector<uint32_t> out(500);
  simulate(byValue, {in, out});
  std::vector<uint32_t> iota(500);
  std::iota(iota.begin(), iota.end(), 0u);
  CHECK(out == iota);
  // Shifted by 5 places: the last 5 elements fall past the end and are dropped; the first 5
  // places are not written.
  const Kernel shifted = capture("shifted", 64, [](DPull<EWord32> in) {
    return permute(len(in), push<Grid>(in), [](const EWord32& i) { return i + 5u; });
  });
  std::vector<uint32_t> out2(500, 9);
  simulate(shifted, {in, out2});
  for (size_t i = 0; i < 500; ++i) CHECK(out2[i] == (i < 5 ? 9u : in[i - 5]));
  // A static output length, inside a block: 8 elements reversed.
  const Kernel reversed = capture("reversed", 8, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return permute(8u, push<Block>(c), [](const EWord32& i) { return 7u - i; });
        },
        splitUp(8, in)));
  });
  const std::vector<uint32_t> small = randomWords(16, 8);
  std::vector<uint32_t> out3(16);
  simulate(reversed, {small, out3});
  for (size_t i = 0; i < 16; ++i) CHECK(out3[i] == small[(i / 8) * 8 + 7 - i % 8]);
}

TEST_CASE("permute: two elements sent to one place are a race the simulator reports") {
  const Kernel halves = capture("halves", 64, [](DPull<EWord32> in) {
    return permute(len(in) / 2u, push<Grid>(in), [](const EWord32& i) { return i / 2u; });
  });
  const std::vector<uint32_t> in = randomWords(256, 9);
  std::vector<uint32_t> out(128);
  const std::string e = errorOf([&] { simulate(halves, {in, out}); });
  CHECK(e.find("race") != std::string::npos);
  CHECK(e.find("out0") != std::string::npos);
}

TEST_CASE("permuteInto: a scatter-add into a global array; Max into a block's shared array") {
  const Kernel k = obsidian::testing::scatterAddCounts();
  const std::vector<uint32_t> in = randomWords(3000, 10);
  std::vector<uint32_t> bins(16, 0);
  simulate(k, {in, bins});
  std::vector<uint32_t> want(16, 0);
  for (uint32_t x : in) ++want[x % 16];
  CHECK(bins == want);
  CHECK(k.cuda().find("atomicAdd(&m1[") != std::string::npos);
  // Each block's maximum per residue mod 4 of its 64 elements, through shared memory.
  const Kernel maxima = capture("maxima", 64, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            const SMutable<uint32_t> best = newShared<uint32_t>(p, 4);
            p.forAll(4u,
                     [&](const Program<Thread>& t, const EWord32& i) { write(t, best, i, 0u); });
            p.sync();
            permuteInto(p, best, Max{}, push<Block>(c),
                        [](const EWord32& v, const EWord32&) { return v % 4u; });
            p.sync();
            return push<Block>(best.pull());
          });
        },
        splitUp(64, in)));
  });
  const std::vector<uint32_t> whole(in.begin(), in.begin() + 64 * 46);
  std::vector<uint32_t> out(4 * 46);
  simulate(maxima, {whole, out});
  for (size_t b = 0; b < 46; ++b) {
    for (uint32_t r = 0; r < 4; ++r) {
      uint32_t m = 0;
      for (size_t i = b * 64; i < b * 64 + 64; ++i) {
        if (whole[i] % 4 == r) m = std::max(m, whole[i]);
      }
      CHECK(out[b * 4 + r] == m);
    }
  }
}
