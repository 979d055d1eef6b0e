// The algorithm layer (include/obsidian/{warp,block,device}) on the simulator: each collective
// against plain C++ for odd sizes, several operators and element types, used inside a user's
// own kernel and as a ready device call; the policy tables; the shape rules' errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <obsidian/obsidian.hpp>

#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;
using testing::randomWords;

namespace {

// Small signed values, so that float sums are exact whatever the order.
std::vector<float> smallFloats(size_t n, uint32_t seed) {
  std::vector<float> v;
  for (uint32_t w : randomWords(n, seed, 17)) v.push_back(static_cast<float>(w) - 8.0f);
  return v;
}
std::vector<int32_t> signedWords(size_t n, uint32_t seed) {
  std::vector<int32_t> v;
  for (uint32_t w : randomWords(n, seed)) v.push_back(static_cast<int32_t>(w));
  return v;
}

template <class X, class F>
X fold(const std::vector<X>& v, size_t from, size_t to, X init, F f) {
  X acc = init;
  for (size_t i = from; i < to; ++i) acc = f(acc, v[i]);
  return acc;
}

const auto cMax = [](auto a, auto b) { return std::max(a, b); };
const auto cMin = [](auto a, auto b) { return std::min(a, b); };
const auto cPlus = [](auto a, auto b) { return static_cast<decltype(a)>(a + b); };

// One block per `chunk` elements, each reduced by block algorithm a inside the user's kernel,
// plus 1 (so the block result is used in the user's own expression).
template <class X, class Op>
Kernel blockReducePlusOne(BlockReduceAlgorithm a, Op f, uint32_t chunk, uint32_t threads) {
  return capture("userBlockReduce", threads, [a, f, chunk](DPull<Exp<X>> in) {
    return pConcat(fmap(
        [a, f](const SPull<Exp<X>>& c) {
          return singletonPush<Block>(
              [a, f, c](const Program<Block>& p) { return blockReduce(a, p, f, c) + X{1}; });
        },
        splitUp(chunk, in)));
  });
}

}  // namespace

TEST_CASE("collectives: every block reduction inside a user's kernel, u32 sum and i32 max") {
  const uint32_t chunk = 256, blocks = 3;
  const std::vector<uint32_t> in = randomWords(chunk * blocks, 1);
  const std::vector<int32_t> ins = signedWords(chunk * blocks, 2);
  for (BlockReduceAlgorithm a : kBlockReduceAlgorithms) {
    CAPTURE(name(a));
    std::vector<uint32_t> out(blocks);
    simulate(blockReducePlusOne<uint32_t>(a, Sum{}, chunk, 64), {in, out});
    std::vector<int32_t> outs(blocks);
    simulate(blockReducePlusOne<int32_t>(a, Max{}, chunk, 64), {ins, outs});
    for (uint32_t b = 0; b < blocks; ++b) {
      CHECK(out[b] == fold(in, b * chunk, (b + 1) * chunk, 0u, cPlus) + 1u);
      CHECK(outs[b] ==
            fold(ins, b * chunk, (b + 1) * chunk, std::numeric_limits<int32_t>::min(), cMax) + 1);
    }
  }
  CHECK(parseBlockReduceAlgorithm("warpShuffle") == BlockReduceAlgorithm::WarpShuffle);
  CHECK(errorOf([] { parseBlockReduceAlgorithm("red8"); }) ==
        "BlockReduceAlgorithm: unknown algorithm 'red8'; the algorithms are red1, red2, red3, "
        "red4, red5, red6, red7, warpShuffle");
  CHECK(errorOf([] { blockReducePlusOne<uint32_t>(BlockReduceAlgorithm::Red2, Sum{}, 96, 32); }) ==
        "red2 needs a power-of-two length; got 96");
  CHECK(errorOf([] {
          blockReducePlusOne<uint32_t>(BlockReduceAlgorithm::WarpShuffle, Sum{}, 100, 64);
        }) ==
        "blockReduce(warpShuffle) needs a tile that is a multiple of the block's 64 "
        "threads; got 100");
}

TEST_CASE("collectives: every block scan, inclusive and exclusive, with a non-commutative op") {
  // Affine maps x -> a x + b composed in order: associative, not commutative.
  using Pair = hana::tuple<EWord32, EWord32>;
  const auto compose = [](const Pair& f, const Pair& g) {
    return Pair(hana::at_c<0>(f) * hana::at_c<0>(g),
                hana::at_c<0>(g) * hana::at_c<1>(f) + hana::at_c<1>(g));
  };
  const uint32_t chunk = 128, chunks = 3;
  const std::vector<uint32_t> a = randomWords(chunk * chunks, 3),
                              b = randomWords(chunk * chunks, 4);
  for (BlockScanAlgorithm alg : kBlockScanAlgorithms) {
    for (bool exclusive : {false, true}) {
      CAPTURE(name(alg));
      CAPTURE(exclusive);
      const uint32_t threads = alg == BlockScanAlgorithm::ThreadSequential ? 32 : 64;
      const Kernel k = capture("userScan", threads, [=](DPull<Pair> in) {
        return mapScan(
            chunk,
            [=](const Program<Block>& p, const SPull<Pair>& c) {
              return exclusive ? blockExclusiveScan(alg, p, compose, Pair(1u, 0u), c)
                               : blockScan(alg, p, compose, c);
            },
            in);
      });
      std::vector<uint32_t> outA(a.size()), outB(a.size());
      simulate(k, {a, b, outA, outB});
      bool ok = true;
      for (size_t c = 0; c < chunks; ++c) {
        uint32_t accA = 1, accB = 0;
        for (size_t i = c * chunk; i < (c + 1) * chunk; ++i) {
          if (exclusive) ok = ok && outA[i] == accA && outB[i] == accB;
          accB = a[i] * accB + b[i];
          accA = accA * a[i];
          if (!exclusive) ok = ok && outA[i] == accA && outB[i] == accB;
        }
      }
      CHECK(ok);
    }
  }
  CHECK(errorOf([] {
          capture("s", 64, [](DPull<EWord32> in) {
            return mapScan(96, blockScanOf(BlockScanAlgorithm::ThreadSequential, Sum{}), in);
          });
        }) ==
        "blockScan(threadSequential) needs a tile that is a multiple of the block's 64 "
        "threads; got 96");
}

TEST_CASE("collectives: warp scans, inclusive and exclusive, inside a user's warp program") {
  const std::vector<uint32_t> in = randomWords(64, 5, 1000);
  for (bool exclusive : {false, true}) {
    const Kernel k = capture("warpScans", 64, [exclusive](DPull<EWord32> xs) {
      return pConcat(fmap(
          [exclusive](const SPull<EWord32>& block) {
            return pConcat(fmap(
                [exclusive](const SPull<EWord32>& c) {
                  return exec<Warp>([exclusive, c](const Program<Warp>& q) {
                    return push<Warp>(exclusive ? warpExclusiveScan(q, Max{}, EWord32(7u), c)
                                                : warpScan(q, Max{}, c));
                  });
                },
                splitUp(32, block)));
          },
          splitUp(64, xs)));
    });
    std::vector<uint32_t> out(64);
    simulate(k, {in, out});
    for (size_t w = 0; w < 2; ++w) {
      uint32_t acc = exclusive ? 7u : 0u;
      for (size_t i = w * 32; i < w * 32 + 32; ++i) {
        if (exclusive) {
          CHECK(out[i] == acc);
          acc = std::max(acc, in[i]);
        } else {
          acc = std::max(acc, in[i]);
          CHECK(out[i] == acc);
        }
      }
    }
  }
  CHECK(errorOf([] {
          capture("w", 32, [](DPull<EWord32> xs) {
            return pConcat(fmap(
                [](const SPull<EWord32>& block) {
                  return pConcat(fmap(
                      [](const SPull<EWord32>& c) {
                        return exec<Warp>([c](const Program<Warp>& q) {
                          return push<Warp>(warpScan(q, Sum{}, c));
                        });
                      },
                      splitUp(16, block)));
                },
                splitUp(32, xs)));
          });
        }) == "warpScan needs a warp's 32 elements (one per lane); got 16");
}

TEST_CASE("collectives: block loads and stores in every arrangement move a tile intact") {
  // Each thread reads its items consecutive elements (blocked) through blockLoad, adds its
  // thread index, and blockStore writes them back in the arrangement.
  const uint32_t threads = 64, items = 4, tile = threads * items;
  const std::vector<uint32_t> in = randomWords(tile * 3, 6);
  for (BlockLoadAlgorithm a : kBlockLoadAlgorithms) {
    CAPTURE(name(a));
    const BlockLoadAlgorithm store =
        a == BlockLoadAlgorithm::Vectorized ? BlockLoadAlgorithm::Striped : a;
    const Kernel k = capture("moveTile", threads, [=](DPull<EWord32> xs) {
      return pConcat(fmap(
          [=](const SPull<EWord32>& c) {
            return exec<Block>([=](const Program<Block>& p) {
              const SPull<EWord32> loaded = blockLoad(a, p, items, c);
              return blockStore(store, p, items, mkPull(tile, [loaded, items](const EWord32& j) {
                                  return loaded[j] + j / items;
                                }));
            });
          },
          splitUp(tile, xs)));
    });
    std::vector<uint32_t> out(in.size());
    simulate(k, {in, out});
    for (size_t i = 0; i < in.size(); ++i) {
      REQUIRE(out[i] == in[i] + static_cast<uint32_t>((i % tile) / items));
    }
  }
  CHECK(parseBlockLoadAlgorithm("warpStriped") == BlockLoadAlgorithm::WarpStriped);
  CHECK(errorOf([] {
          capture("bad", 64, [](DPull<EWord32> xs) {
            return pConcat(fmap(
                [](const SPull<EWord32>& c) {
                  return exec<Block>([c](const Program<Block>& p) {
                    return push<Block>(blockLoad(BlockLoadAlgorithm::Striped, p, 3, c));
                  });
                },
                splitUp(128, xs)));
          });
        }) == "blockLoad needs threads x items elements (64 x 3); got 128");
  CHECK(errorOf([] {
          capture("bad", 32, [](DPull<EWord32> xs) {
            return pConcat(fmap(
                [](const SPull<EWord32>& c) {
                  return exec<Block>([c](const Program<Block>& p) {
                    return push<Block>(blockLoad(BlockLoadAlgorithm::Vectorized, p, 2, c));
                  });
                },
                splitUp(64, xs)));
          });
        }) ==
        "blockLoad(vectorized) needs items per thread a multiple of 4 (16-byte vectors of 4 "
        "elements); got 2");
  CHECK(errorOf([] {
          capture("wide", 32, [](DPull<EWord64> xs) {
            return pConcat(fmap(
                [](const SPull<EWord64>& c) {
                  return exec<Block>([c](const Program<Block>& p) {
                    return push<Block>(blockLoad(BlockLoadAlgorithm::Vectorized, p, 4, c));
                  });
                },
                splitUp(128, xs)));
          });
        }) ==
        "blockLoad(vectorized) needs elements of at most 4 bytes (vectors of 4 in 16 bytes); got "
        "8-byte elements");
}

TEST_CASE("collectives: device::reduce on the simulator, any length, operator and type") {
  for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{1001}, size_t{20011}}) {
    CAPTURE(n);
    const std::vector<uint32_t> w = randomWords(n, 7);
    CHECK(device::reduce(w) == fold(w, 0, n, 0u, cPlus));
    const std::vector<int32_t> s = signedWords(n, 8);
    CHECK(device::reduce(s, Max{}) == fold(s, 0, n, std::numeric_limits<int32_t>::min(), cMax));
    const std::vector<float> f = smallFloats(n, 9);
    CHECK(device::reduce(f, Min{}) == fold(f, 0, n, std::numeric_limits<float>::infinity(), cMin));
    std::vector<uint64_t> l(n);
    for (size_t i = 0; i < n; ++i) l[i] = (uint64_t{w[i]} << 20) + i;
    CHECK(device::reduce(l) == fold(l, 0, n, uint64_t{0}, cPlus));
    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(1u << (w[i] % 7));
    CHECK(device::reduce(bytes, BitOr{}) ==
          fold(bytes, 0, n, uint8_t{0}, [](uint8_t a, uint8_t b) { return uint8_t(a | b); }));
  }
  // A user's operator with an explicit identity (a lambda with state is captured each call).
  const uint32_t mask = 0xffu;
  const std::vector<uint32_t> w = randomWords(5000, 10);
  CHECK(device::reduce(
            w, [mask](const EWord32& a, const EWord32& b) { return (a + b) & mask; }, 0u) ==
        fold(w, 0, w.size(), 0u, [](uint32_t a, uint32_t b) { return (a + b) & 0xffu; }));
}

TEST_CASE("collectives: device::segmentedReduce, segments of any length, the last one short") {
  const std::vector<uint32_t> w = randomWords(3 * 2048 + 77, 11);
  for (uint32_t segment : {1u, 1000u, 2048u}) {
    CAPTURE(segment);
    const std::vector<uint32_t> got = device::segmentedReduce(w, segment, Sum{}, 0u);
    REQUIRE(got.size() == (w.size() + segment - 1) / segment);
    for (size_t s = 0; s < got.size(); ++s) {
      CHECK(got[s] == fold(w, s * segment, std::min(w.size(), (s + 1) * segment), 0u, cPlus));
    }
  }
  const std::vector<float> f = smallFloats(4096 + 5, 12);
  const std::vector<float> mins = device::segmentedReduce(f, 4096, Min{}, 100.0f);
  REQUIRE(mins.size() == 2);
  CHECK(mins[1] == fold(f, 4096, f.size(), 100.0f, cMin));
  CHECK(errorOf([&] { device::segmentedReduce(w, 0, Sum{}, 0u); }) ==
        "segmentedReduce needs segments of at least one element; got 0");
}

TEST_CASE("collectives: device scans on the simulator, inclusive and exclusive, any length") {
  for (size_t n : {size_t{1}, size_t{1000}, size_t{30001}}) {
    CAPTURE(n);
    const std::vector<uint32_t> w = randomWords(n, 13);
    const std::vector<uint32_t> inc = device::inclusiveScan(w);
    const std::vector<uint32_t> exc = device::exclusiveScan(w);
    const std::vector<int32_t> s = signedWords(n, 14);
    const std::vector<int32_t> smax = device::inclusiveScan(s, Max{});
    uint32_t acc = 0;
    int32_t m = std::numeric_limits<int32_t>::min();
    bool ok = true;
    for (size_t i = 0; i < n; ++i) {
      ok = ok && exc[i] == acc;
      acc += w[i];
      m = std::max(m, s[i]);
      ok = ok && inc[i] == acc && smax[i] == m;
    }
    CHECK(ok);
  }
  const std::vector<float> f = smallFloats(20000, 15);
  const std::vector<float> fs = device::exclusiveScan(f, Sum{}, 0.0f);
  float acc = 0.0f;
  bool ok = true;
  for (size_t i = 0; i < f.size(); ++i) {
    ok = ok && fs[i] == acc;
    acc += f[i];
  }
  CHECK(ok);
}

TEST_CASE("collectives: device calls keep the kernel they captured") {
  const Kernel a = device::detail::memoKernel(
      device::detail::joinKey(device::detail::operatorKey<Sum>(), {"test", "1"}), [] {
        return scanKernel<uint32_t>(Sum{}, ScanPolicy{32, 3});
      });
  const Kernel b = device::detail::memoKernel(
      device::detail::joinKey(device::detail::operatorKey<Sum>(), {"test", "1"}), [] {
        return scanKernel<uint32_t>(Sum{}, ScanPolicy{32, 5});
      });
  CHECK(a.id() == b.id());  // the second make was not called
  const uint32_t state = 3;
  const auto withState = [state](const EWord32& x, const EWord32& y) { return x + y + state; };
  CHECK(device::detail::operatorKey<decltype(withState)>() == "");
  const Kernel c = device::detail::memoKernel(
      device::detail::joinKey(device::detail::operatorKey<decltype(withState)>(), {"test"}), [] {
        return scanKernel<uint32_t>(Sum{}, ScanPolicy{32, 3});
      });
  const Kernel d = device::detail::memoKernel(
      device::detail::joinKey(device::detail::operatorKey<decltype(withState)>(), {"test"}), [] {
        return scanKernel<uint32_t>(Sum{}, ScanPolicy{32, 3});
      });
  CHECK(c.id() != d.id());  // an operator with state is never taken for another
}

TEST_CASE("collectives: every policy row carries its command and measurement") {
  const std::vector<device::AlgorithmInfo> all = device::catalogue();
  CHECK(all.size() == 12);
  for (const device::AlgorithmInfo& a : all) {
    CAPTURE(a.name);
    CHECK(!a.fields.empty());
    REQUIRE(!a.rows.empty());
    CHECK(a.rows[0].sm == 0);
    CHECK(a.rows[0].problem == "any");
    for (size_t i = 0; i < a.rows.size(); ++i) {
      CAPTURE(i);
      CHECK(a.rows[i].command.size() > 0);
      CHECK(a.rows[i].measured.size() > 0);
      if (i > 0) CHECK(a.rows[i].sm >= a.rows[i - 1].sm);
      // Rows measured on a GPU name the obsidian-tune (or benchmark) command that chose them.
      if (a.rows[i].sm != 0) {
        CHECK((a.rows[i].command.starts_with("obsidian-tune") ||
               a.rows[i].command.starts_with("obsidian-bench")));
      }
    }
  }
  CHECK(tunedFor(device::Scan::table, 80).sm == 0);
  CHECK(tunedFor(device::Scan::table, 90).sm == 90);
  CHECK(tunedFor(device::Scan::table, 100).sm == 90);
  CHECK(scanPolicy(90).threads == device::Scan::table[1].policy.threads);
}

TEST_CASE("collectives: policy tables are keyed by architecture and problem class") {
  // 64-bit scans have rows of their own; 32-bit ones take the general row.
  const ProblemClass wide = device::problemOf<uint64_t, Sum>();
  const ProblemClass narrow = device::problemOf<uint32_t, Sum>();
  CHECK(tunedFor(device::Scan::table, 90, wide).problem.elementBytes == 8);
  CHECK(tunedFor(device::Scan::table, 90, narrow).problem.elementBytes == 0);
  CHECK(tunedFor(device::Scan::table, 80, wide).sm == 0);  // no sm 80 row: the fallback
  CHECK(scanPolicyFor<double>(90).splitWide);
  // Scans that give the large tiles fewer than a few waves take the small 32-bit row; 64-bit
  // scans keep theirs at every size.
  const device::Target h100 = device::Target::simulator();
  CHECK(device::scanPolicyFor<uint32_t>(h100, size_t{1} << 22).threads == 128);
  CHECK(device::scanPolicyFor<float>(h100, size_t{1} << 23).threads == 128);
  CHECK(device::scanPolicyFor<uint32_t>(h100, size_t{1} << 24) == device::Scan::table[1].policy);
  CHECK(device::scanPolicyFor<double>(h100, size_t{1} << 20) == device::Scan::table[3].policy);
  // Transpose: small matrices take the small tile.
  CHECK(device::transposePolicyFor<uint32_t>(h100, 8192, 8192) == TransposePolicy{512, 64});
  CHECK(device::transposePolicyFor<uint32_t>(h100, 1000, 777) == TransposePolicy{256, 32});
  // A table without a fallback row is refused.
  static constexpr Tuned<ReducePolicy> noFallback[] = {{90, {}, {}, "x", "y"}};
  CHECK(errorOf([] { tunedFor(noFallback, 90); }) ==
        "a policy table needs a first row for sm 0 and every problem (the fallback)");
}

TEST_CASE("collectives: a policy's fields as data: text, settings and their errors") {
  const ReducePolicy p{512, 4, 4, ReduceSweep::Tiles};
  CHECK(device::describePolicy<device::Reduce>(p) ==
        "threads 512, unroll 4, min_vectors 4, sweep tiles");
  const ReducePolicy q = device::withSettings<device::Reduce>(
      p, {{"unroll", "2"}, {"sweep", "evenShare"}, {"min_vectors", "0"}});
  CHECK(q.unroll == 2);
  CHECK(q.sweep == ReduceSweep::EvenShare);
  CHECK(q.minVectorsPerThread == 0);
  CHECK(device::withSettings<device::Reduce>(p, device::settingsOf<device::Reduce>(q)).unroll == 2);
  CHECK(errorOf([&] {
          device::withSettings<device::Reduce>(p, {{"unroll", "0"}});
        }) == "reduce policy: field 'unroll' takes 1..16; got '0'");
  CHECK(errorOf([&] {
          device::withSettings<device::Reduce>(p, {{"unroll", "4x"}});
        }) == "reduce policy: field 'unroll' takes 1..16; got '4x'");
  CHECK(errorOf([&] {
          device::withSettings<device::Reduce>(p, {{"sweep", "zigzag"}});
        }) == "reduce policy: field 'sweep' takes one of strided, tiles, evenShare; got 'zigzag'");
  CHECK(errorOf([&] {
          device::withSettings<device::Reduce>(p, {{"warps", "4"}});
        }) ==
        "reduce policy: no field 'warps'; its fields are threads, unroll, min_vectors, sweep");
  CHECK(errorOf([&] {
          device::withSettings<device::Scan>(ScanPolicy{}, {{"split_wide", "2"}});
        }) == "scan policy: field 'split_wide' takes true or false; got '2'");
  // The ready calls take settings through their options, checked before anything runs.
  device::Options o;
  o.policy = {{"threads", "16"}};
  CHECK(errorOf([&] { device::reduce(std::vector<uint32_t>(5, 1)); }) == "no error");
  CHECK(errorOf([&] { device::reduce(std::vector<uint32_t>(5, 1), Sum{}, 0u, o); }) ==
        "reduce policy: field 'threads' takes 32..1024; got '16'");
  // Every sweep of the reduction folds every element.
  for (const char* sweep : {"strided", "tiles", "evenShare"}) {
    CAPTURE(sweep);
    device::Options s;
    s.policy = {{"sweep", sweep}, {"threads", "64"}, {"unroll", "2"}, {"min_vectors", "0"}};
    for (size_t n : {1u, 7u, 1000u, 4099u, 20011u}) {
      std::vector<uint32_t> in(n);
      for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint32_t>(i * 2654435761u);
      uint32_t want = 0;
      for (uint32_t x : in) want += x;
      CHECK(device::reduce(in, Sum{}, 0u, s) == want);
    }
  }
}
