// Warp arrays in registers (forceReg): permutations compile to __shfl_sync with no shared memory
// or barrier, warpReduceGroups, warpReduce and blockReduce are built on them, and the rules that
// keep shuffles defined (lane l writes element l; the whole warp reaches every shuffle) are
// checked.
#include <doctest/doctest.h>

#include <obsidian/sim.hpp>

#include "../../examples/reduce/reduce.hpp"
#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;
using testing::randomWords;

namespace {

EWord32 plusW(const EWord32& a, const EWord32& b) { return a + b; }

// One warp program per `m` elements: warpReduce of them.
Kernel warpSums(uint32_t m, uint32_t threads) {
  return capture("warpSums", threads, [m, threads](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<SPull<EWord32>>& warps) {
          return pConcat(fmap(
              [](const SPull<EWord32>& w) {
                return singletonPush<Warp>(
                    [w](const Program<Warp>& q) { return warpReduce(q, plusW, w); });
              },
              warps));
        },
        splitUp(threads / 32, splitUp(m, in))));
  });
}

// Each warp's 32 elements in registers, then warpReduceGroups of width `width`: every lane
// writes what it holds (its group's sum).
Kernel groupSums(uint32_t width) {
  return capture("groupSums", 64, [width](DPull<EWord32> in) {
    return pConcat(fmap(
        [width](const SPull<SPull<EWord32>>& warps) {
          return pConcat(fmap(
              [width](const SPull<EWord32>& w) {
                return exec<Warp>([=](const Program<Warp>& q) {
                  const auto lanes = warpReduceGroups(q, plusW, forceReg(q, push<Warp>(w)), width);
                  return mkPush<Warp, EWord32>(
                      32u, [lanes](const Program<Warp>& r, const Writer<EWord32>& out) {
                        r.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
                          out(t, lanes[lane], lane);
                        });
                      });
                });
              },
              warps));
        },
        splitUp(2, splitUp(32, in))));
  });
}

// Block sums of `threads` elements with blockReduce.
Kernel blockSums(uint32_t threads) {
  return capture("blockSums", threads, [threads](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return singletonPush<Block>(
              [c](const Program<Block>& p) { return blockReduce(p, plusW, c); });
        },
        splitUp(threads, in)));
  });
}

}  // namespace

TEST_CASE("warpReduce: butterfly shuffles, no shared memory and no barrier") {
  for (uint32_t m : {32u, 8u, 1u}) {
    const Kernel k = warpSums(m, 64);
    const std::string cuda = k.cuda();
    if (m > 1) CHECK(cuda.find("__shfl_sync(0xffffffffu, reg") != std::string::npos);
    CHECK(cuda.find("__syncwarp") == std::string::npos);
    CHECK(k.report().sharedBytes == 0);
    const std::vector<uint32_t> in = randomWords(m * 2 * 3, m);
    std::vector<uint32_t> out(6);
    simulate(k, {in, out});
    for (size_t w = 0; w < 6; ++w) {
      uint32_t want = 0;
      for (size_t i = 0; i < m; ++i) want += in[w * m + i];
      CHECK_MESSAGE(out[w] == want, "m " << m << ", warp " << w);
    }
  }
}

TEST_CASE("warpReduceGroups: every lane holds its group's fold") {
  for (uint32_t width : {1u, 2u, 8u, 32u}) {
    const std::vector<uint32_t> in = randomWords(32 * 2 * 3, width);
    std::vector<uint32_t> out(in.size());
    simulate(groupSums(width), {in, out});
    for (size_t i = 0; i < in.size(); ++i) {
      uint32_t want = 0;
      for (size_t j = i / width * width; j < (i / width + 1) * width; ++j) want += in[j];
      CHECK_MESSAGE(out[i] == want, "width " << width << ", lane " << i);
    }
  }
  CHECK(errorOf([] { groupSums(3); })
            .find("warpReduceGroups needs a group width that is a power of two of at most 32; "
                  "got 3") != std::string::npos);
  CHECK(errorOf([] { groupSums(64); }).find("got 64") != std::string::npos);
}

TEST_CASE("blockReduce: two barriers whatever the block size") {
  for (uint32_t threads : {32u, 64u, 256u, 1024u}) {
    const Kernel k = blockSums(threads);
    // ... and one more that ends each virtual block (its shared memory is reused by the next).
    CHECK(k.report().barriers.block == (threads == 32 ? 2 : 3));
    const std::vector<uint32_t> in = randomWords(threads * 3, threads);
    std::vector<uint32_t> out(3);
    simulate(k, {in, out});
    for (size_t b = 0; b < 3; ++b) {
      uint32_t want = 0;
      for (size_t i = 0; i < threads; ++i) want += in[b * threads + i];
      CHECK(out[b] == want);
    }
  }
  CHECK(errorOf([] { blockSums(96); }) ==
        "blockReduce needs 32, 64, 128, 256, 512 or 1024 elements (a power-of-two number of "
        "warps); got 96");
}

TEST_CASE("forceReg: the rules that keep shuffles defined") {
  auto warpKernel = [](auto body) {
    return capture("k", 32, [body](DPull<EWord32> in) {
      return pConcat(fmap(
          [body](const SPull<EWord32>& c) {
            return pConcat(fmap(
                [body](const SPull<EWord32>& w) {
                  return singletonPush<Warp>(
                      [w, body](const Program<Warp>& q) { return body(q, w); });
                },
                splitUp(32, c)));
          },
          splitUp(32, in)));
    });
  };
  CHECK(errorOf([&] {
          warpKernel([](const Program<Warp>& q, const SPull<EWord32>& w) {
            return forceReg(q, push<Warp>(halve(w).first))[0u];
          });
        }) == "forceReg needs a warp-sized array (32 elements, one per lane); got 16");
  CHECK(errorOf([&] {
          warpKernel([](const Program<Warp>& q, const SPull<EWord32>& w) {
            const SPull<EWord32> rev = ixMap([](const EWord32& i) { return 31u - i; }, w);
            auto pushRev = mkPush<Warp, EWord32>(
                32u, [rev](const Program<Warp>& p, const Writer<EWord32>& wr) {
                  p.forAll(32u, [&](const Program<Thread>& t, const EWord32& i) {
                    wr(t, rev[i], 31u - i);
                  });
                });
            return forceReg(q, pushRev)[0u];
          });
        }) ==
        "verify(kernel k): forceReg: lane l must write element l of a register array; got "
        "reg0[31u - i0] = in0[bid0 * 32u + (wid0 * 32u + (31u - i0))] (write other patterns with "
        "force)");
  CHECK(errorOf([&] {
          warpKernel([](const Program<Warp>& q, const SPull<EWord32>& w) {
            auto r = forceReg(q, push<Warp>(w));
            // Only the lower half of the lanes shuffles: undefined on the GPU.
            return forceReg(q, push<Warp>(mkPull(32u, [r](const EWord32& i) {
                              return ifThenElse(i < 16u, r[i ^ 1u], r[i]);
                            })))[0u];
          });
        }) == "no error");  // a conditional expression: the shuffle is hoisted in front of it
  CHECK(errorOf([&] {
          warpKernel([](const Program<Warp>& q, const SPull<EWord32>& w) {
            auto r = forceReg(q, push<Warp>(w));
            const SMutable<uint32_t> s = newShared<uint32_t>(q, 32);
            q.forAll(32u, [&](const Program<Thread>& t, const EWord32& i) {
              t.cond(i < 16u, [&](const Program<Thread>& u) { write(u, s, i, r[i ^ 1u]); });
            });
            return r[0u];
          });
        }) ==
        "verify(kernel k): shuffle `__shfl_sync(0xffffffffu, reg0, i1 ^ 1u)` (another "
        "lane's element of a register array) under a lane-dependent branch or loop: every "
        "lane of the warp must reach each __shfl_sync");
  CHECK(errorOf([&] {
          warpKernel([](const Program<Warp>& q, const SPull<EWord32>& w) {
            auto r = forceReg(q, push<Warp>(w));
            return force(
                q, push<Warp>(ixMap([](const EWord32& i) { return i ^ 1u; }, halve(r).first)))[0u];
          });
        }) ==
        "verify(kernel k): shuffle `__shfl_sync(0xffffffffu, reg0, i1 ^ 1u)` (another "
        "lane's element of a register array) in a parallel loop over 16 of a warp's 32 "
        "lanes: every lane of the warp must reach each __shfl_sync");
}
