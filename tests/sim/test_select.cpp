// Output plus a count: selectIf and selectFlagged write the selected elements and their count
// from one grid loop (scanAll's tiles and look-back) on the simulator, for every length from
// empty to several tiles, blocks in any order and fewer real blocks than tiles; and
// blockScanItems, the block scan over thread arrays beneath them and beneath scanAll.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;
using testing::randomWords;

namespace {

// Runs a selection kernel (in[, flags] -> selected, count) three ways and checks each against
// `want`; the places past the count keep what they held.
template <class X>
void checkSelection(const Kernel& k, std::vector<KernelArg> inputs, const std::vector<X>& want,
                    size_t n) {
  for (int mode = 0; mode < 3; ++mode) {
    SimOptions o;
    o.reverseBlocks = mode == 1;
    o.blocks = mode == 2 ? 2 : 0;  // each real block draws several tickets
    std::vector<X> out(n, X{77});
    std::vector<uint32_t> count(1, 0xdeadbeef);
    std::vector<KernelArg> args = inputs;
    args.push_back(KernelArg(out));
    args.push_back(KernelArg(count));
    simulate(k, args, o);
    REQUIRE_MESSAGE(count[0] == want.size(), "n " << n << ", mode " << mode);
    CHECK_MESSAGE(std::equal(want.begin(), want.end(), out.begin()),
                  "n " << n << ", mode " << mode);
    CHECK_MESSAGE(std::all_of(out.begin() + want.size(), out.end(), [](X x) { return x == X{77}; }),
                  "n " << n << ", mode " << mode);
  }
}

}  // namespace

TEST_CASE("selectIf: the selected elements in order and their count, from one grid loop") {
  const ScanPolicy policy{64, 3};  // tiles of 192
  const Kernel k = capture("selectThirds", 64, [policy](DPull<EWord32> in) {
    return selectIf<uint32_t>(
        in, [](const EWord32& v) { return v % 3u == 0u; }, policy);
  });
  CHECK(k.report().gridPasses == 1);
  for (size_t n : {0u, 1u, 2u, 191u, 192u, 193u, 1000u, 4099u}) {
    const std::vector<uint32_t> in = randomWords(n, static_cast<uint32_t>(n) + 3);
    std::vector<uint32_t> want;
    for (uint32_t v : in) {
      if (v % 3 == 0) want.push_back(v);
    }
    checkSelection<uint32_t>(k, {KernelArg(in)}, want, n);
  }
  // None and all selected.
  const std::vector<uint32_t> none(500, 1), all(500, 3);
  checkSelection<uint32_t>(k, {KernelArg(none)}, {}, 500);
  checkSelection<uint32_t>(k, {KernelArg(all)}, all, 500);
}

TEST_CASE("selectFlagged: flags of another type pick the elements; f32 values keep their bits") {
  const ScanPolicy policy{32, 5, BlockLoadAlgorithm::WarpStriped};
  const Kernel k = capture("selectByFlags", 32, [policy](DPull<EFloat> in, DPull<Exp<uint8_t>> f) {
    return selectFlagged<float>(in, f, policy);
  });
  for (size_t n : {0u, 1u, 159u, 160u, 161u, 2000u}) {
    const std::vector<uint32_t> r = randomWords(2 * n, static_cast<uint32_t>(n) + 11);
    std::vector<float> in(n);
    std::vector<uint8_t> flags(n);
    std::vector<float> want;
    for (size_t i = 0; i < n; ++i) {
      in[i] = static_cast<float>(static_cast<int32_t>(r[i])) * 1e-3f;
      flags[i] = static_cast<uint8_t>(r[n + i] % 4 == 0 ? r[n + i] >> 8 | 1 : 0);
      if (flags[i] != 0) want.push_back(in[i]);
    }
    checkSelection<float>(k, {KernelArg(in), KernelArg(flags)}, want, n);
  }
  std::vector<float> in(10, 1.0f), out(10);
  std::vector<uint8_t> flags(9, 1);
  std::vector<uint32_t> count(1);
  CHECK(errorOf([&] {
          simulate(k, {in, flags, out, count});
        }).find("selectFlagged: the flags are as many as the elements") != std::string::npos);
}

TEST_CASE("selectIf: the policy's shape rules") {
  CHECK(errorOf([] {
          capture("badItems", 64, [](DPull<EWord32> in) {
            return selectIf<uint32_t>(
                in, [](const EWord32& v) { return v != 0u; }, ScanPolicy{64, 0});
          });
        }) ==
        "selectIf needs whole warps of threads and at least one item per thread; got 64 "
        "threads and 0 items");
  CHECK(errorOf([] {
          capture("badThreads", 128, [](DPull<EWord32> in) {
            return selectIf<uint32_t>(
                in, [](const EWord32& v) { return v != 0u; }, ScanPolicy{64, 3});
          });
        }) == "selectIf: the policy's tiles are for 64 threads; the kernel's blocks have 128");
  CHECK(errorOf([] {
          capture("badScan", 128, [](DPull<EWord32> in) {
            return scanAll<uint32_t>(Sum{}, in, ScanPolicy{64, 3});
          });
        }) == "scanAll: the policy's tiles are for 64 threads; the kernel's blocks have 128");
}

TEST_CASE("blockScanItems: exclusive prefixes of thread arrays across warps, order kept") {
  // 96 threads (3 warps) x 5 items; a non-commutative operator (the last non-zero value) shows
  // that items and threads are combined in order.
  const auto lastNonZero = [](const EWord32& a, const EWord32& b) {
    return ifThenElse(b != 0u, b, a);
  };
  for (bool commutative : {true, false}) {
    const Kernel k = capture("itemsScan", 96, [=](DPull<EWord32> in) {
      return pConcat(fmap(
          [=](const SPull<EWord32>& c) {
            return exec<Block>([=](const Program<Block>& p) {
              const ThreadArray<uint32_t> items = threadArray<uint32_t>(p, 5);
              p.forAll(96u, [&](const Program<Thread>& t, const EWord32& tid) {
                for (uint32_t j = 0; j < 5; ++j) items.write(t, j, c[tid * 5u + j]);
              });
              const auto f = [=](const EWord32& a, const EWord32& b) {
                return commutative ? a + b : lastNonZero(a, b);
              };
              const ItemsPrefix<uint32_t> s = blockScanItems(p, f, items);
              // Out: per thread its exclusive prefix (thread 0: the aggregate instead).
              return mkPush<Block, EWord32>(
                  96u, [=](const Program<Block>& q, const Writer<EWord32>& w) {
                    q.forAll(96u, [&](const Program<Thread>& t, const EWord32& tid) {
                      w(t, ifThenElse(tid == 0u, s.aggregate, s.before[0]), tid);
                    });
                  });
            });
          },
          splitUp(480, in)));
    });
    std::vector<uint32_t> in = randomWords(480 * 3, 5, 1000);
    for (size_t i = 0; i < in.size(); i += 7) in[i] = 0;  // zeros for lastNonZero to skip
    std::vector<uint32_t> out(96 * 3), want(96 * 3);
    for (size_t b = 0; b < 3; ++b) {
      uint32_t acc = 0;
      for (size_t t = 0; t < 96; ++t) {
        want[b * 96 + t] = acc;
        for (size_t j = 0; j < 5; ++j) {
          const uint32_t v = in[b * 480 + t * 5 + j];
          acc = commutative ? acc + v : (v != 0 ? v : acc);
        }
      }
      want[b * 96] = acc;
    }
    simulate(k, {in, out});
    CHECK(out == want);
  }
  CHECK(errorOf([] {
          capture("itemsOdd", 48, [](DPull<EWord32> in) {
            return pConcat(fmap(
                [](const SPull<EWord32>& c) {
                  return exec<Block>([c](const Program<Block>& p) {
                    const ThreadArray<uint32_t> items = threadArray<uint32_t>(p, 1);
                    p.forAll(48u, [&](const Program<Thread>& t, const EWord32& tid) {
                      items.write(t, 0, c[tid]);
                    });
                    const auto s = blockScanItems(p, Sum{}, items);
                    return push<Block>(mkPull(1u, [s](const EWord32&) { return s.aggregate; }));
                  });
                },
                splitUp(48, in)));
          });
        }) ==
        "blockScanItems needs a block of whole warps (a multiple of 32 threads, at most "
        "1024); got 48 threads");
}
