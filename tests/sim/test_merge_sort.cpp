// Merge sorting on the simulator: mergePath between two sorted runs, blockMergeSort and
// warpMergeSort inside a user's kernel (with and without values, a partial tile, a comparator
// on part of the key, descending, blocks of 96 threads), and the device merge sort (tiles,
// then merge passes partitioned by merge path) of every key type, keys alone and pairs, for
// lengths around a tile and one to four merge passes, several tile shapes, stateless and
// stateful comparators, hazard detection on with blocks reversed and fewer real blocks; and
// its errors and catalogue entry.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <obsidian/obsidian.hpp>
#include <random>

#include "../select_support.hpp"
#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;
using testing::sameBits;

namespace {

// n keys: integers over the whole range (or in 0 .. distinct, i32 centred on zero); floats in
// eighths (or `distinct` of them around zero), with zeros of either sign (equal, told apart by
// their bits: a stability check). No NaNs, so < is a strict weak order.
template <class K>
std::vector<K> sortKeys(size_t n, uint32_t seed, uint64_t distinct = 0) {
  std::mt19937_64 rng(seed);
  std::vector<K> v(n);
  for (K& k : v) {
    const uint64_t r = rng();
    const uint64_t d = distinct ? r % distinct : r;
    if constexpr (std::is_floating_point_v<K>) {
      const int64_t s = distinct ? static_cast<int64_t>(d) - static_cast<int64_t>(distinct / 2)
                                 : static_cast<int64_t>(r % 2000001) - 1000000;
      k = static_cast<K>(s) / K(8);
      if (s == 0 && (r >> 40) % 2 == 1) k = -K(0);
    } else if constexpr (std::is_same_v<K, int32_t>) {
      k = distinct
              ? static_cast<int32_t>(static_cast<int64_t>(d) - static_cast<int64_t>(distinct / 2))
              : static_cast<int32_t>(r);
    } else {
      k = static_cast<K>(d);
    }
  }
  return v;
}

// The stable order of keys by the host's comparator, as indices.
template <class K, class HostLess>
std::vector<uint32_t> stableOrder(const std::vector<K>& keys, HostLess less) {
  std::vector<uint32_t> idx(keys.size());
  std::iota(idx.begin(), idx.end(), 0u);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](uint32_t a, uint32_t b) { return less(keys[a], keys[b]); });
  return idx;
}

// A small tile (threads x items) so that a few hundred keys span several tiles; hazard
// detection on (SimOptions' default, set here so that no change of default turns it off).
device::Options small(uint32_t threads = 32, uint32_t items = 3, SimOptions sim = {}) {
  device::Options o;
  o.policy = {{"threads", std::to_string(threads)}, {"items", std::to_string(items)}};
  sim.detectHazards = true;
  o.simulation = sim;
  return o;
}

// Sorts keys alone and keys with their indices as values by `less` on the simulator and checks
// both, bit for bit, against std::stable_sort by `hostLess` (the same order on the host).
template <class K, class Less, class HostLess>
void checkSort(const std::vector<K>& keys, Less less, HostLess hostLess, const device::Options& o,
               const std::string& what) {
  const std::vector<uint32_t> idx = stableOrder(keys, hostLess);
  std::vector<K> want(keys.size());
  for (size_t i = 0; i < idx.size(); ++i) want[i] = keys[idx[i]];
  std::vector<K> out(3);  // resized by the call
  device::mergeSortKeys(keys, out, less, o);
  CHECK_MESSAGE(sameBits(out, want), what << ": keys alone");
  std::vector<uint32_t> values(keys.size());
  std::iota(values.begin(), values.end(), 0u);
  std::vector<K> pairKeys;
  std::vector<uint32_t> pairValues;
  device::mergeSortPairs(keys, pairKeys, values, pairValues, less, o);
  CHECK_MESSAGE(sameBits(pairKeys, want), what << ": pairs' keys");
  CHECK_MESSAGE(pairValues == idx, what << ": pairs' values (stable)");
}

template <class K>
void checkType(const char* name, uint32_t seed) {
  const auto up = [](K a, K b) { return a < b; };
  const auto down = [](K a, K b) { return b < a; };
  // 301 keys: four tiles of 96, two merge passes.
  const std::vector<K> keys = sortKeys<K>(301, seed);
  checkSort(keys, Ascending{}, up, small(), std::string(name) + " ascending");
  checkSort(keys, Descending{}, down, small(), std::string(name) + " descending");
  // Few distinct keys: long runs of equal keys keep their order across tiles and passes.
  const std::vector<K> few = sortKeys<K>(250, seed + 1, 5);
  checkSort(few, Ascending{}, up, small(), std::string(name) + " five keys");
  checkSort(few, Descending{}, down, small(), std::string(name) + " five keys descending");
}

// The number of a's among the first d elements of the stable merge of sorted a and b (ties
// from a first), on the host.
uint32_t hostMergePath(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, uint32_t d) {
  size_t i = 0, j = 0;
  for (uint32_t k = 0; k < d; ++k) {
    if (j < b.size() && (i == a.size() || b[j] < a[i])) {
      ++j;
    } else {
      ++i;
    }
  }
  return static_cast<uint32_t>(i);
}

// A kernel whose blocks (threads x items) each sort the first `valid` keys of their tile by
// less with blockMergeSort, the keys' places in the tile moving with them (withPlaces) or no
// values; loaded blocked straight from global memory (thread tid's items tid * items ..), the
// sorted valid ones stored back the same way.
template <class K, class Less>
Kernel blockSortKernel(const std::string& name, uint32_t threads, uint32_t items, Less less,
                       bool withPlaces) {
  const uint32_t tile = threads * items;
  return capture(name, threads,
                 [=](DPull<Exp<K>> in, DMutable<K> out, DMutable<uint32_t> places, EWord32 valid) {
                   return effect([=](const Program<Grid>& g) {
                     g.distrPar(len(in) / tile, [&](const Program<Block>& p, const EWord32& bid) {
                       const ThreadArray<K> keys = threadArray<K>(p, items);
                       std::vector<ThreadArray<uint32_t>> where;
                       if (withPlaces) where.push_back(threadArray<uint32_t>(p, items));
                       p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                         for (uint32_t k = 0; k < items; ++k) {
                           keys.write(t, k, in[bid * tile + tid * items + k]);
                           if (withPlaces) where[0].write(t, k, tid * items + k);
                         }
                       });
                       if (withPlaces) {
                         blockMergeSort(p, keys, less, where, valid);
                       } else {
                         blockMergeSort(p, keys, less, {}, valid);
                       }
                       p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                         for (uint32_t k = 0; k < items; ++k) {
                           const EWord32 j = tid * items + k;
                           t.cond(j < valid, [&](const Program<Thread>& u) {
                             write(u, out, bid * tile + j, keys[k]);
                             if (withPlaces) write(u, places, bid * tile + j, where[0][k]);
                           });
                         }
                       });
                     });
                   });
                 });
}

// Runs a tile-sorting kernel (blockSortKernel, warpSortKernel) on `in` (whole tiles of `tile`)
// and checks each tile's first `valid` keys (and places, withPlaces) against the stable sort
// of those keys by hostLess; the rest of each tile of `out` must stay unwritten (77).
template <class K, class HostLess>
void checkTiles(const Kernel& k, const std::vector<K>& in, uint32_t tile, uint32_t valid,
                bool withPlaces, HostLess hostLess, const std::string& what) {
  std::vector<K> out(in.size(), K(77));
  std::vector<uint32_t> places(in.size(), 77u);
  simulate(k, {KernelArg(in), KernelArg(out), KernelArg(places), KernelArg(valid)});
  const uint32_t mine = std::min(valid, tile);
  for (size_t b = 0; b < in.size() / tile; ++b) {
    const std::vector<K> part(in.begin() + b * tile, in.begin() + b * tile + mine);
    const std::vector<uint32_t> idx = stableOrder(part, hostLess);
    std::vector<K> want(mine);
    for (uint32_t i = 0; i < mine; ++i) want[i] = part[idx[i]];
    const std::vector<K> got(out.begin() + b * tile, out.begin() + b * tile + mine);
    CHECK_MESSAGE(sameBits(got, want), what << ", tile " << b << ": keys");
    if (withPlaces) {
      const std::vector<uint32_t> gotPlaces(places.begin() + b * tile,
                                            places.begin() + b * tile + mine);
      CHECK_MESSAGE(gotPlaces == idx, what << ", tile " << b << ": places (stable)");
    }
    bool untouched = true;
    for (uint32_t i = mine; i < tile; ++i) untouched = untouched && out[b * tile + i] == K(77);
    CHECK_MESSAGE(untouched, what << ", tile " << b << ": nothing stored past valid");
  }
}

// A kernel whose blocks of `warps` warps each sort, warp by warp with warpMergeSort, a tile of
// 32 x items keys (the warp's first `valid`, places moving with them), loaded blocked from
// global memory and stored back the same way.
template <class Less>
Kernel warpSortKernel(const std::string& name, uint32_t warps, uint32_t items, Less less) {
  const uint32_t tile = 32 * items;
  return capture(
      name, 32 * warps,
      [=](DPull<EWord32> in, DMutable<uint32_t> out, DMutable<uint32_t> places, EWord32 valid) {
        return effect([=](const Program<Grid>& g) {
          g.distrPar(len(in) / (tile * warps), [&](const Program<Block>& p, const EWord32& bid) {
            p.distrPar(warps, [&](const Program<Warp>& w, const EWord32& wid) {
              const EWord32 start = (bid * warps + wid) * tile;
              const ThreadArray<uint32_t> keys = threadArray<uint32_t>(w, items);
              const ThreadArray<uint32_t> where = threadArray<uint32_t>(w, items);
              w.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
                for (uint32_t k = 0; k < items; ++k) {
                  keys.write(t, k, in[start + lane * items + k]);
                  where.write(t, k, lane * items + k);
                }
              });
              warpMergeSort(w, keys, less, std::vector<ThreadArray<uint32_t>>{where}, valid);
              w.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
                for (uint32_t k = 0; k < items; ++k) {
                  const EWord32 j = lane * items + k;
                  t.cond(j < valid, [&](const Program<Thread>& u) {
                    write(u, out, start + j, keys[k]);
                    write(u, places, start + j, where[k]);
                  });
                }
              });
            });
          });
        });
      });
}

// Compares by the low 8 bits only: keys equal there keep their order (a stability check).
const auto low8 = [](const EWord32& a, const EWord32& b) { return (a & 0xFFu) < (b & 0xFFu); };
const auto hostLow8 = [](uint32_t a, uint32_t b) { return (a & 0xFFu) < (b & 0xFFu); };

}  // namespace

TEST_CASE("mergePath: where the diagonals of a stable merge cross, ties from the first run") {
  // out[d] = how many of a (sorted, aLen of them) come first among the first d of the merge of
  // a and b (= in[aLen ..]), for every d from 0 to aLen + bLen.
  const Kernel k =
      capture("mergePathTest", 64, [](DPull<EWord32> in, DMutable<uint32_t> out, EWord32 aLen) {
        return effect([=](const Program<Grid>& g) {
          g.distrPar(1u, [&](const Program<Block>& p, const EWord32&) {
            p.forAll(64u, [&](const Program<Thread>& t, const EWord32& d) {
              t.cond(d < len(out), [&](const Program<Thread>& u) {
                const EWord32 split = mergePath<uint32_t>(
                    u, [&](const EWord32& i) { return in[i]; }, aLen,
                    [&](const EWord32& i) { return in[aLen + i]; }, len(in) - aLen, d, Ascending{});
                write(u, out, d, split);
              });
            });
          });
        });
      });
  for (const auto& [aLen, bLen] :
       {std::pair<uint32_t, uint32_t>{20, 23}, {1, 40}, {37, 0}, {0, 12}, {31, 32}}) {
    CAPTURE(aLen);
    CAPTURE(bLen);
    // Few distinct keys: many ties between the runs.
    std::vector<uint32_t> a = testing::randomWords(aLen, aLen + 1, 6);
    std::vector<uint32_t> b = testing::randomWords(bLen, bLen + 2, 6);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::vector<uint32_t> in = a;
    in.insert(in.end(), b.begin(), b.end());
    std::vector<uint32_t> out(aLen + bLen + 1);
    simulate(k, {KernelArg(in), KernelArg(out), KernelArg(aLen)});
    bool ok = true;
    for (uint32_t d = 0; d <= aLen + bLen; ++d) ok = ok && out[d] == hostMergePath(a, b, d);
    CHECK(ok);
  }
}

TEST_CASE("blockMergeSort: a tile sorted in a user's kernel, with and without values") {
  constexpr uint32_t threads = 64, items = 5, tile = threads * items;
  const auto up = [](uint32_t a, uint32_t b) { return a < b; };
  const std::vector<uint32_t> in = testing::randomWords(3 * tile, 7, 1000);
  const Kernel withValues =
      blockSortKernel<uint32_t>("blockSortPairs", threads, items, Ascending{}, true);
  const Kernel keysOnly =
      blockSortKernel<uint32_t>("blockSortKeys", threads, items, Ascending{}, false);
  // The whole tile, more than it (clamped), a partial tile, one key and none.
  for (uint32_t valid : {tile, UINT32_MAX, tile - 1, 201u, 1u, 0u}) {
    CAPTURE(valid);
    checkTiles(withValues, in, tile, valid, true, up, "pairs, valid " + std::to_string(valid));
    checkTiles(keysOnly, in, tile, valid, false, up, "keys, valid " + std::to_string(valid));
  }
  // Float keys with zeros of either sign: equal ones keep their order, told apart by bits.
  const std::vector<float> floats = sortKeys<float>(2 * tile, 8, 9);
  checkTiles(
      blockSortKernel<float>("blockSortFloats", threads, items, Ascending{}, true), floats, tile,
      tile - 30, true, [](float a, float b) { return a < b; }, "f32, valid tile - 30");
}

TEST_CASE("blockMergeSort: a user's comparator, descending, blocks of 96, 40 and 1 threads") {
  const std::vector<uint32_t> in = testing::randomWords(2 * 96 * 7, 9);
  // By the low 8 bits only: keys equal there keep their order (places check it).
  checkTiles(blockSortKernel<uint32_t>("blockSortLow8", 64, 7, low8, true), in, 64 * 7, 400, true,
             hostLow8, "low 8 bits, 64 x 7");
  // Largest first.
  checkTiles(
      blockSortKernel<uint32_t>("blockSortDown", 64, 7, Descending{}, true), in, 64 * 7, 64 * 7,
      true, [](uint32_t a, uint32_t b) { return b < a; }, "descending, 64 x 7");
  // 96 threads: runs of 1, 2, 4 .. 64 threads' items, the last pair of a round short or alone.
  for (uint32_t valid : {96u * 7, 500u, 97u}) {
    checkTiles(blockSortKernel<uint32_t>("blockSort96", 96, 7, low8, true), in, 96 * 7, valid, true,
               hostLow8, "96 x 7, valid " + std::to_string(valid));
  }
  // One item a thread (no register sort: the merges do everything).
  const std::vector<uint32_t> few = testing::randomWords(2 * 96, 10, 10);
  checkTiles(
      blockSortKernel<uint32_t>("blockSort96x1", 96, 1, Ascending{}, true), few, 96, 90, true,
      [](uint32_t a, uint32_t b) { return a < b; }, "96 x 1");
  // Blocks of part of a warp, and of a single thread (its items sorted in registers only).
  checkTiles(blockSortKernel<uint32_t>("blockSort40", 40, 3, low8, true), in, 40 * 3, 100, true,
             hostLow8, "40 x 3");
  checkTiles(
      blockSortKernel<uint32_t>("blockSort1", 1, 9, Descending{}, true), in, 9, 7, true,
      [](uint32_t a, uint32_t b) { return b < a; }, "1 x 9");
  // The values must pair one to one with the keys.
  CHECK(errorOf([] {
          capture("blockSortMismatch", 32, [](DPull<EWord32> in) {
            return effect([=](const Program<Grid>& g) {
              g.distrPar(len(in), [&](const Program<Block>& p, const EWord32&) {
                const ThreadArray<uint32_t> keys = threadArray<uint32_t>(p, 5);
                const ThreadArray<uint32_t> values = threadArray<uint32_t>(p, 4);
                blockMergeSort(p, keys, Ascending{}, std::vector<ThreadArray<uint32_t>>{values});
              });
            });
          });
        }) == "blockMergeSort: each thread holds 5 keys and 4 values; they pair one to one");
}

TEST_CASE("warpMergeSort: every warp of a block sorts its own tile") {
  constexpr uint32_t items = 3, tile = 32 * items;
  const std::vector<uint32_t> in = testing::randomWords(2 * 3 * tile, 11);
  // Blocks of three warps, each warp's tile by the low 8 bits (stable), whole and partial.
  for (uint32_t valid : {tile, 50u, 1u}) {
    checkTiles(warpSortKernel("warpSortLow8", 3, items, low8), in, tile, valid, true, hostLow8,
               "warps by low 8 bits, valid " + std::to_string(valid));
  }
  const std::vector<uint32_t> more = testing::randomWords(2 * 2 * 32 * 5, 12);
  checkTiles(
      warpSortKernel("warpSortDown", 2, 5, Descending{}), more, 32 * 5, 32 * 5, true,
      [](uint32_t a, uint32_t b) { return b < a; }, "warps descending, 32 x 5");
  CHECK(errorOf([] {
          capture("warpSortMismatch", 32, [](DPull<EWord32> in) {
            return effect([=](const Program<Grid>& g) {
              g.distrPar(len(in), [&](const Program<Block>& p, const EWord32&) {
                p.distrPar(1u, [&](const Program<Warp>& w, const EWord32&) {
                  const ThreadArray<uint32_t> keys = threadArray<uint32_t>(w, 2);
                  const ThreadArray<float> values = threadArray<float>(w, 3);
                  warpMergeSort(w, keys, Ascending{}, std::vector<ThreadArray<float>>{values});
                });
              });
            });
          });
        }) == "warpMergeSort: each thread holds 2 keys and 3 values; they pair one to one");
}

TEST_CASE("merge sort: every key type, ascending and descending, keys alone and pairs") {
  checkType<uint32_t>("u32", 1);
  checkType<int32_t>("i32", 2);
  checkType<float>("f32", 3);
  checkType<uint64_t>("u64", 4);
  checkType<double>("f64", 5);
  checkType<uint16_t>("u16", 6);
}

TEST_CASE("merge sort: lengths around the tile, one to four merge passes") {
  // Tiles of 96: 192 keys take one pass, 193 and 384 two, 385 three, 769 and 1536 four.
  const auto up = [](uint32_t a, uint32_t b) { return a < b; };
  for (size_t n : {0u, 1u, 2u, 95u, 96u, 97u, 192u, 193u, 384u, 385u, 769u, 1536u}) {
    const std::vector<uint32_t> keys = sortKeys<uint32_t>(n, static_cast<uint32_t>(n) + 3, 50);
    checkSort(keys, Ascending{}, up, small(), "n " + std::to_string(n));
  }
  // Other tile shapes: one item a thread, even items, a non-power-of-two block, the most items.
  const std::vector<uint32_t> keys = sortKeys<uint32_t>(1001, 12, 300);
  for (const auto& [threads, items] :
       {std::pair<uint32_t, uint32_t>{32, 1}, {64, 4}, {96, 5}, {32, 32}, {64, 2}}) {
    checkSort(keys, Ascending{}, up, small(threads, items),
              "1001 keys, " + std::to_string(threads) + " x " + std::to_string(items));
  }
}

TEST_CASE("merge sort: pairs of values other than u32") {
  // u16 keys (few distinct) with u64 values and f32 values: each value moves with its key.
  const std::vector<uint16_t> keys = sortKeys<uint16_t>(450, 17, 12);
  const std::vector<uint32_t> idx = stableOrder(keys, [](uint16_t a, uint16_t b) { return a < b; });
  std::vector<uint64_t> wide(keys.size());
  std::vector<float> floats(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    wide[i] = (uint64_t{i} << 40) | (0xABCDu + i);
    floats[i] = static_cast<float>(i) - 0.25f;
  }
  std::vector<uint16_t> outKeys, outKeys2;
  std::vector<uint64_t> outWide;
  std::vector<float> outFloats;
  device::mergeSortPairs(keys, outKeys, wide, outWide, Ascending{}, small(64, 2));
  device::mergeSortPairs(keys, outKeys2, floats, outFloats, Ascending{}, small(32, 5));
  bool ok = outKeys.size() == keys.size() && outWide.size() == keys.size() && outKeys2 == outKeys &&
            outFloats.size() == keys.size();
  for (size_t i = 0; ok && i < keys.size(); ++i) {
    ok = outKeys[i] == keys[idx[i]] && outWide[i] == wide[idx[i]] && outFloats[i] == floats[idx[i]];
  }
  CHECK(ok);
}

TEST_CASE("merge sort: hazard detection on, blocks reversed and fewer real blocks") {
  // Four merge passes (17 tiles of 96) with every hazard check of the simulator: a race in
  // the tile sort, the partitions or the merges (a missing barrier, a read of shared memory
  // another thread has not written yet) fails the sort.
  const std::vector<int32_t> keys = sortKeys<int32_t>(1601, 13, 40);
  const auto down = [](int32_t a, int32_t b) { return b < a; };
  for (int mode = 0; mode < 3; ++mode) {
    SimOptions sim;
    sim.detectHazards = true;
    sim.reverseBlocks = mode == 1;
    sim.blocks = mode == 2 ? 2 : 0;  // each real block runs several tiles
    device::Options o = small(32, 3, sim);
    SimStats stats;
    o.simulated = &stats;
    checkSort(keys, Descending{}, down, o, "mode " + std::to_string(mode));
    CHECK(stats.threadSteps > 0);
    if (mode == 2) CHECK(stats.blocks == 2);
  }
}

TEST_CASE("merge sort: user comparators, stateless and with state") {
  const std::vector<uint32_t> keys = testing::randomWords(700, 14);
  // By the low 8 bits only: ties everywhere, kept in order.
  checkSort(keys, low8, hostLow8, small(), "low 8 bits");
  // Odd keys first, then even ones, each group descending.
  checkSort(
      keys,
      [](const EWord32& a, const EWord32& b) {
        const EWord32 pa = a & 1u, pb = b & 1u;
        return pb < pa || (pa == pb && b < a);
      },
      [](uint32_t a, uint32_t b) {
        const uint32_t pa = a & 1u, pb = b & 1u;
        return pb < pa || (pa == pb && b < a);
      },
      small(64, 3), "odd first, descending");
  // Floats by magnitude: x and -x tie and keep their order.
  const std::vector<float> floats = sortKeys<float>(500, 15, 41);
  checkSort(
      floats, [](const Exp<float>& a, const Exp<float>& b) { return fabs(a) < fabs(b); },
      [](float a, float b) { return std::fabs(a) < std::fabs(b); }, small(), "f32 by magnitude");
  // u64 keys packing a group (high word) and a payload: by the group only.
  const std::vector<uint64_t> packed = sortKeys<uint64_t>(400, 16);
  checkSort(
      packed,
      [](const Exp<uint64_t>& a, const Exp<uint64_t>& b) {
        return (a >> uint64_t{61}) < (b >> uint64_t{61});
      },
      [](uint64_t a, uint64_t b) { return (a >> 61) < (b >> 61); }, small(), "u64 by high bits");
  // A comparator with state: each mask gives its own order (no kernel of another mask reused).
  for (uint32_t mask : {0xFu, 0xF0u, 0xFFFFFFFFu}) {
    checkSort(
        keys, [mask](const EWord32& a, const EWord32& b) { return (a & mask) < (b & mask); },
        [mask](uint32_t a, uint32_t b) { return (a & mask) < (b & mask); }, small(),
        "mask " + std::to_string(mask));
  }
  // The convenience call: keys of a vector, returned.
  const std::vector<uint32_t> sorted = device::mergeSortKeys(keys, Descending{}, small());
  std::vector<uint32_t> want = keys;
  std::stable_sort(want.begin(), want.end(), [](uint32_t a, uint32_t b) { return b < a; });
  CHECK(sorted == want);
}

TEST_CASE("merge sort: the errors name the rule, and the catalogue lists it") {
  const std::vector<uint32_t> keys = testing::randomWords(10, 1);
  std::vector<uint32_t> out;
  device::Options partWarp;
  partWarp.policy = {{"threads", "48"}};
  CHECK(errorOf([&] { device::mergeSortKeys(keys, out, Ascending{}, partWarp); }) ==
        "mergeSortKeys needs blocks of whole warps (a multiple of 32 threads, at most 1024); got "
        "48 threads");
  for (const char* items : {"0", "33"}) {
    CAPTURE(items);
    device::Options bad;
    bad.policy = {{"items", items}};
    const std::string e = errorOf([&] { device::mergeSortKeys(keys, out, Ascending{}, bad); });
    CHECK(e.find("items") != std::string::npos);
    CHECK(e.find(items) != std::string::npos);
  }
  device::Options unknown;
  unknown.policy = {{"radix_bits", "4"}};
  CHECK(errorOf([&] {
          device::mergeSortKeys(keys, out, Ascending{}, unknown);
        }).find("no field 'radix_bits'") != std::string::npos);
  const std::vector<uint32_t> fewer(9, 0);
  std::vector<uint32_t> valuesOut;
  CHECK(errorOf([&] { device::mergeSortPairs(keys, out, fewer, valuesOut); }) ==
        "mergeSortPairs: as many values as keys; got 10 keys and 9 values");
  // Not in place: the output is another vector (keys, and values).
  std::vector<uint32_t> same = keys, values(10, 1);
  CHECK(errorOf([&] { device::mergeSortKeys(same, same); }) ==
        "mergeSortKeys: the output must be another vector than the input");
  CHECK(errorOf([&] { device::mergeSortPairs(keys, out, values, values); }) ==
        "mergeSortPairs: the output must be another vector than the input");
  // The kernels' own check of the policy.
  CHECK(errorOf([] {
          mergeSortTilesKernel<uint32_t, void>(MergeSortPolicy{64, 0, 0}, Ascending{});
        }) == "mergeSortTilesKernel: items (keys a thread sorts) must be 1..32; got 0");
  const std::vector<device::AlgorithmInfo> all = device::catalogue();
  CHECK(std::any_of(all.begin(), all.end(),
                    [](const device::AlgorithmInfo& a) { return a.name == "mergeSort"; }));
}

TEST_CASE("merge sort: a warp or a thread searches each part's merge path") {
  // 40 tiles of 32 keys: runs up to 1024 keys, so that a warp's search takes several rounds of
  // 32 probes; few distinct keys make long runs of ties across the probes.
  const auto up = [](uint32_t a, uint32_t b) { return a < b; };
  for (const uint32_t distinct : {3u, 1000u, 0u}) {
    const std::vector<uint32_t> keys = sortKeys<uint32_t>(1289, 7 + distinct, distinct);
    for (const char* parts : {"0", "4096"}) {
      device::Options o = small(32, 1);
      o.policy.push_back({"warp_parts", parts});
      checkSort(keys, Ascending{}, up, o,
                std::string("warp_parts ") + parts + ", " + std::to_string(distinct) + " keys");
    }
  }
}
