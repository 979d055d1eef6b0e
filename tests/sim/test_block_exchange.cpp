// blockExchange: a tile held in thread arrays, rearranged between the blocked, striped and
// warp-striped arrangements, keeps every element (each of the nine pairs, on the simulator with
// its race checks), and a warp-striped exchange in a block of a partial warp is refused.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;

namespace {
// A kernel whose blocks load their tile into thread arrays as `from`, exchange it into `to` and
// store it back as `to`: the identity exactly when the exchange is right.
Kernel exchangeKernel(uint32_t threads, uint32_t n, Arrangement from, Arrangement to) {
  const uint32_t tile = threads * n;
  return capture("exchange", threads, [=](DPull<EWord32> in) {
    return pConcat(fmap(
        [=](const SPull<EWord32>& c) {
          return mkPush<Block, EWord32>(
              tile, [=](const Program<Block>& p, const Writer<EWord32>& w) {
                const ThreadArray<uint32_t> items = threadArray<uint32_t>(p, n);
                p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                  for (uint32_t k = 0; k < n; ++k) {
                    items.write(t, k, c[tileIndex(from, tid, k, n, threads)]);
                  }
                });
                const ThreadArray<uint32_t> moved = blockExchange(p, items, from, to);
                p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                  for (uint32_t k = 0; k < n; ++k)
                    w(t, moved[k], tileIndex(to, tid, k, n, threads));
                });
              });
        },
        splitUp(tile, in)));
  });
}
}  // namespace

TEST_CASE("blockExchange: every pair of arrangements keeps each element where the other puts it") {
  const Arrangement all[] = {Arrangement::Blocked, Arrangement::Striped, Arrangement::WarpStriped};
  for (const auto& [threads, n] : {std::pair{64u, 3u}, std::pair{96u, 1u}, std::pair{32u, 4u}}) {
    std::vector<uint32_t> in(threads * n * 3);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint32_t>(i * 7 + 1);
    for (Arrangement from : all) {
      for (Arrangement to : all) {
        CAPTURE(threads);
        CAPTURE(static_cast<int>(from));
        CAPTURE(static_cast<int>(to));
        std::vector<uint32_t> out(in.size(), 0);
        simulate(exchangeKernel(threads, n, from, to), {in, out});
        CHECK(out == in);
      }
    }
  }
  // The arrangements themselves (a wrong one that is still a bijection would pass above): each
  // thread's item k of 64 x 3 names its element.
  for (Arrangement a : all) {
    const Kernel k = capture("indices", 64, [a](DPull<EWord32> in) {
      return pConcat(fmap(
          [a](const SPull<EWord32>&) {
            return mkPush<Block, EWord32>(
                192u, [a](const Program<Block>& p, const Writer<EWord32>& w) {
                  p.forAll(64u, [&](const Program<Thread>& t, const EWord32& tid) {
                    for (uint32_t j = 0; j < 3; ++j)
                      w(t, tileIndex(a, tid, j, 3, 64), tid * 3u + j);
                  });
                });
          },
          splitUp(192, in)));
    });
    std::vector<uint32_t> in(192, 0), out(192, 0);
    simulate(k, {in, out});
    for (uint32_t tid = 0; tid < 64; ++tid) {
      for (uint32_t j = 0; j < 3; ++j) {
        const uint32_t want = a == Arrangement::Blocked   ? tid * 3 + j
                              : a == Arrangement::Striped ? tid + j * 64
                                                          : tid / 32 * 96 + j * 32 + tid % 32;
        CHECK(out[tid * 3 + j] == want);
      }
    }
  }
}

TEST_CASE("blockExchange: warp-striped needs whole warps") {
  CHECK(errorOf([] {
          exchangeKernel(48, 2, Arrangement::Blocked, Arrangement::WarpStriped);
        }).find("blockExchange(warpStriped) needs a block of whole warps") != std::string::npos);
}
