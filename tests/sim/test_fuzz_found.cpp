// Programs the differential fuzzer (fuzz/) found, as it printed them after shrinking: each is a
// regression test once its problem is fixed. A problem not fixed yet is a should_fail case,
// which starts failing (and so must be turned into an ordinary test) when the fix lands.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>
#include <obsidian/sim.hpp>

#include "../support.hpp"

using namespace obsidian;

namespace {

// Found by obsidian-fuzz --seed 6 (program 91956 of the generator at commit cbde359; later
// generators number programs differently), shrunk: one Warp program per 295-element block (a
// tConcat of Thread programs, then a forced tuple array).
Kernel oneWarpProgram(uint32_t threads) {
  return capture("fuzz", threads, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            const SPull<EWord32> a0 = force(
                p, pConcat(fmap(
                       [](const SPull<EWord32>& c1) {
                         return exec<Warp>([c1](const Program<Warp>& q2) {
                           const SPull<EWord32> a3 =
                               force(q2, tConcat<Warp>(fmap(
                                             [](const SPull<EWord32>& c4) {
                                               return exec<Thread>([c4](const Program<Thread>&) {
                                                 return push<Thread>(conc(replicate(4u, first(c4)),
                                                                          singleton(last(c4))));
                                               });
                                             },
                                             splitUp(1u, c1))));
                           const auto [lo, hi] = halve(a3);
                           const auto [lo2, hi2] = unzip(forcePull(q2, zip(lo, hi)));
                           return push<Warp>(
                               zipWith([](const EWord32& a, const EWord32& b) { return max(a, b); },
                                       lo2, hi2));
                         });
                       },
                       splitUp(295u, c))));
            return push<Block>(a0);
          });
        },
        splitUp(295u, in)));
  });
}

std::vector<uint32_t> expected(const std::vector<uint32_t>& in) {
  // Each element becomes five copies of itself; the two halves of those 1475 words are
  // combined with max.
  std::vector<uint32_t> fives;
  for (uint32_t x : in) fives.insert(fives.end(), 5, x);
  const size_t h = fives.size() / 2;
  std::vector<uint32_t> out(h);
  for (size_t i = 0; i < h; ++i) out[i] = std::max(fives[i], fives[h + i]);
  return out;
}

}  // namespace

TEST_CASE("fuzz found: one Warp program per block, 64 threads") {
  std::vector<uint32_t> in(295);
  for (uint32_t i = 0; i < in.size(); ++i) in[i] = (i * 2654435761u) >> 7;
  std::vector<uint32_t> out(737);
  simulate(oneWarpProgram(64), {in, out});
  CHECK(out == expected(in));
}

// A Warp program's shared arrays got one slice per real warp of the block even where the block
// runs fewer virtual warps than it has real ones: here one warp program at 1024 threads asked
// for 32 slices (380 KB). Now they get a slice per warp that runs the program.
TEST_CASE("fuzz found: one Warp program per block, 1024 threads, fits in shared memory") {
  std::vector<uint32_t> in(295);
  for (uint32_t i = 0; i < in.size(); ++i) in[i] = (i * 2654435761u) >> 7;
  std::vector<uint32_t> out(737);
  const Kernel k = oneWarpProgram(1024);
  CHECK(k.report().sharedBytes == oneWarpProgram(32).report().sharedBytes);
  simulate(k, {in, out});
  CHECK(out == expected(in));
}

namespace {

// Found by obsidian-fuzz --seed 1 (program 23, the first generator with the collectives),
// shrunk: a block of 8 threads loads its 16-element tile warp-striped and stores it striped.
Kernel warpStripedRoundTrip(uint32_t threads, BlockLoadAlgorithm load, BlockLoadAlgorithm store) {
  return capture("fuzz", threads, [=](DPull<EWord32> in) {
    return pConcat(fmap(
        [=](const SPull<EWord32>& c) {
          return exec<Block>([=](const Program<Block>& p) {
            const uint32_t items1 = c.len() / threads;
            const SPull<EWord32> a0 =
                force(p, blockStore(store, p, items1, blockLoad(load, p, items1, c)));
            return push<Block>(a0);
          });
        },
        splitUp(2u * threads, in)));
  });
}

}  // namespace

// blockLoad(warpStriped) in a block that is not whole warps read past its tile (the next
// block's elements, or past the input) and wrote past the shared array it fills: the
// simulator reported "out-of-bounds read of global in0[32] (the array has 16 elements)"; on a
// GPU it would have corrupted shared memory silently. blockStore(warpStriped) failed with an
// unrelated splitUp message. Both now refuse such a block by name (as CUB's WARP_TRANSPOSE
// arrangements need whole warps too); whole warps are unchanged.
TEST_CASE("fuzz found: warp-striped block loads and stores need whole warps") {
  using testing::errorOf;
  const BlockLoadAlgorithm warp = BlockLoadAlgorithm::WarpStriped,
                           striped = BlockLoadAlgorithm::Striped;
  CHECK(errorOf([&] { warpStripedRoundTrip(8, warp, striped); }) ==
        "blockLoad(warpStriped) needs a block of whole warps (a multiple of 32 threads); got 8 "
        "threads");
  CHECK(errorOf([&] { warpStripedRoundTrip(48, striped, warp); }) ==
        "blockStore(warpStriped) needs a block of whole warps (a multiple of 32 threads); got 48 "
        "threads");
  for (uint32_t threads : {32u, 96u}) {
    CAPTURE(threads);
    std::vector<uint32_t> in(6 * threads);
    for (uint32_t i = 0; i < in.size(); ++i) in[i] = i * 2654435761u;
    std::vector<uint32_t> out(in.size());
    simulate(warpStripedRoundTrip(threads, warp, warp), {in, out});
    CHECK(out == in);
  }
}
