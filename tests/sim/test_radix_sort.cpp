// Radix sorting on the simulator: the block layer's stable ranking and blockRadixSort inside a
// user's kernel, and the device radix sort (histogram, starts, one pass a digit with
// look-back) of every key type, ascending and descending, over bit ranges, keys alone and
// pairs, with blocks in reverse order and fewer real blocks than tiles; and its errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <obsidian/obsidian.hpp>

#include "../select_support.hpp"
#include "../support.hpp"

using namespace obsidian;
using testing::errorOf;
using testing::orderBits;
using testing::randomKeys;
using testing::sameBits;

namespace {

// The stable sort by bits begin .. end of the keys' order words.
template <class K>
std::vector<size_t> referenceOrder(const std::vector<K>& keys, const RadixOrder& o) {
  const uint32_t end = o.endBit ? o.endBit : 8 * sizeof(K);
  const uint64_t mask =
      end - o.beginBit == 64 ? ~uint64_t{0} : (uint64_t{1} << (end - o.beginBit)) - 1;
  std::vector<size_t> idx(keys.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return ((orderBits(keys[a], o.descending) >> o.beginBit) & mask) <
           ((orderBits(keys[b], o.descending) >> o.beginBit) & mask);
  });
  return idx;
}

// A small tile (64 threads x 3 keys, 6-bit digits) so that a few hundred keys span tiles.
device::Options small(SimOptions sim = {}) {
  device::Options o;
  o.policy = {{"threads", "64"}, {"items", "3"}, {"radix_bits", "6"}, {"histogram_items", "2"}};
  o.simulation = sim;
  return o;
}

// Sorts keys (and their indices as values) and checks both against the stable reference.
template <class K>
void checkSort(const std::vector<K>& keys, const RadixOrder& order, const device::Options& o,
               const std::string& what) {
  const std::vector<size_t> idx = referenceOrder(keys, order);
  std::vector<K> want(keys.size());
  std::vector<uint32_t> wantValues(keys.size());
  for (size_t i = 0; i < idx.size(); ++i) {
    want[i] = keys[idx[i]];
    wantValues[i] = static_cast<uint32_t>(idx[i]);
  }
  std::vector<K> out;
  device::radixSortKeys(keys, out, order, o);
  CHECK_MESSAGE(sameBits(out, want), what << ": keys alone");
  std::vector<uint32_t> values(keys.size());
  std::iota(values.begin(), values.end(), 0u);
  std::vector<K> pairKeys;
  std::vector<uint32_t> pairValues;
  device::radixSortPairs(keys, pairKeys, values, pairValues, order, o);
  CHECK_MESSAGE(sameBits(pairKeys, want), what << ": pairs' keys");
  CHECK_MESSAGE(pairValues == wantValues, what << ": pairs' values (stable)");
}

template <class K>
void checkType(const char* name, uint32_t seed) {
  const std::vector<K> keys = randomKeys<K>(301, seed);
  checkSort(keys, {}, small(), std::string(name) + " ascending");
  checkSort(keys, {true}, small(), std::string(name) + " descending");
  // Few distinct keys: long runs of equal digits keep their order.
  checkSort(randomKeys<K>(200, seed + 1, 3), {}, small(), std::string(name) + " three keys");
}

}  // namespace

TEST_CASE("radix sort: every key type, ascending and descending, keys alone and pairs") {
  checkType<uint8_t>("u8", 1);
  checkType<uint16_t>("u16", 2);
  checkType<uint32_t>("u32", 3);
  checkType<int32_t>("i32", 4);
  checkType<uint64_t>("u64", 5);
  checkType<float>("f32", 6);
  checkType<double>("f64", 7);
  checkType<Half>("f16", 8);
  checkType<BFloat16>("bf16", 9);
}

TEST_CASE("radix sort: floats by value, -0 before +0, infinities at the ends") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> keys = {3.5f, -0.0f,   0.0f, -inf,  1e-30f, -2.0f,
                                   inf,  -1e-30f, 0.0f, -0.0f, 7.0f,   -7.0f};
  const std::vector<float> sorted = device::radixSortKeys(keys, {}, small());
  const std::vector<float> want = {-inf, -7.0f, -2.0f,  -1e-30f, -0.0f, -0.0f,
                                   0.0f, 0.0f,  1e-30f, 3.5f,    7.0f,  inf};
  CHECK(sameBits(sorted, want));
  CHECK(std::signbit(sorted[4]));
  CHECK(!std::signbit(sorted[6]));
}

TEST_CASE("radix sort: lengths around the tile, blocks reversed and fewer real blocks") {
  for (size_t n : {0u, 1u, 2u, 191u, 192u, 193u, 577u}) {
    const std::vector<uint32_t> keys = randomKeys<uint32_t>(n, static_cast<uint32_t>(n) + 11);
    for (int mode = 0; mode < 3; ++mode) {
      SimOptions sim;
      sim.reverseBlocks = mode == 1;
      sim.blocks = mode == 2 ? 2 : 0;  // each real block draws several tiles
      checkSort(keys, {}, small(sim), "n " + std::to_string(n) + ", mode " + std::to_string(mode));
    }
  }
}

TEST_CASE("radix sort: the default policy's tiles and a bit range") {
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(5000, 21);
  checkSort(keys, {}, {}, "u32 5000, the sm_90 row's tiles");
  // Bits 4 .. 13 only (two passes of 8 and 1 bits): equal there, the input order stays.
  checkSort(keys, {false, 4, 13}, small(), "bits 4 .. 13");
  checkSort(keys, {true, 20, 32}, small(), "bits 20 .. 32 descending");
  // Some items matched with __match_any_sync instead of ballots.
  for (const char* every : {"1", "2"}) {
    device::Options o = small();
    o.policy.push_back({"match_every", every});
    checkSort(keys, {}, o, std::string("match_every ") + every);
  }
  // Counts published before the ranking.
  device::Options early = small(SimOptions{2, true, uint64_t{1} << 24, true, false});
  early.policy.push_back({"early_counts", "true"});
  checkSort(keys, {}, early, "early counts, blocks reversed, 2 real blocks");
  // No bits: the keys as they are.
  checkSort(keys, {false, 9, 9}, small(), "no bits");
  const std::vector<uint64_t> wide = randomKeys<uint64_t>(400, 22);
  checkSort(wide, {false, 30, 64}, small(), "u64 bits 30 .. 64");
}

TEST_CASE("radix sort: the errors name the rule") {
  const std::vector<uint32_t> keys = randomKeys<uint32_t>(10, 1);
  std::vector<uint32_t> out;
  CHECK(errorOf([&] {
          device::radixSortKeys(keys, out, {false, 0, 33});
        }).find("within the key's 32 bits") != std::string::npos);
  CHECK(errorOf([&] {
          device::radixSortKeys(keys, out, {false, 9, 8});
        }).find("the first not past the last") != std::string::npos);
  device::Options narrow;
  narrow.policy = {{"threads", "128"}};
  CHECK(errorOf([&] {
          device::radixSortKeys(keys, out, {}, narrow);
        }).find("8-bit digits are 256") != std::string::npos);
  device::Options bad;
  bad.policy = {{"items", "0"}};
  CHECK(errorOf([&] { device::radixSortKeys(keys, out, {}, bad); }).find("items") !=
        std::string::npos);
  const std::vector<uint32_t> fewer(9, 0);
  std::vector<uint32_t> valuesOut;
  CHECK(errorOf([&] {
          device::radixSortPairs(keys, out, fewer, valuesOut);
        }).find("as many values as keys") != std::string::npos);
}

TEST_CASE("blockRadixSort: a tile sorted in a user's kernel, with its values") {
  constexpr uint32_t threads = 64, items = 5, tile = threads * items;
  using Key = RadixKey<uint32_t>;
  // Each block sorts its tile (descending by bits 0 .. 12, 5 bits a pass) with the keys' places
  // in the tile as values; keys and places are read and written warp-striped.
  const Kernel k =
      capture("tileSort", threads,
              [](DPull<EWord32> in, DMutable<uint32_t> keysOut, DMutable<uint32_t> placesOut) {
                return effect([=](const Program<Grid>& g) {
                  g.distrPar(len(in) / tile, [&](const Program<Block>& p, const EWord32& bid) {
                    const ThreadArray<uint32_t> keys = threadArray<uint32_t>(p, items);
                    const ThreadArray<uint32_t> places = threadArray<uint32_t>(p, items);
                    const auto place = [](const EWord32& tid, uint32_t j) {
                      return (tid / 32u) * (32u * items) + j * 32u + tid % 32u;
                    };
                    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                      for (uint32_t j = 0; j < items; ++j) {
                        keys.write(t, j, Key::toBits(in[bid * tile + place(tid, j)], true));
                        places.write(t, j, place(tid, j));
                      }
                    });
                    blockRadixSort(p, keys, 0, 12, 5, std::vector<ThreadArray<uint32_t>>{places});
                    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                      for (uint32_t j = 0; j < items; ++j) {
                        write(t, keysOut, bid * tile + place(tid, j), Key::fromBits(keys[j], true));
                        write(t, placesOut, bid * tile + place(tid, j), places[j]);
                      }
                    });
                  });
                });
              });
  const std::vector<uint32_t> in = randomKeys<uint32_t>(3 * tile, 5, 1u << 14);
  std::vector<uint32_t> keys(in.size()), places(in.size());
  simulate(k, {KernelArg(in), KernelArg(keys), KernelArg(places)});
  for (uint32_t b = 0; b < 3; ++b) {
    const std::vector<uint32_t> mine(in.begin() + b * tile, in.begin() + (b + 1) * tile);
    const std::vector<size_t> idx = referenceOrder(mine, {true, 0, 12});
    bool keysOk = true, placesOk = true;
    for (uint32_t i = 0; i < tile; ++i) {
      keysOk = keysOk && keys[b * tile + i] == mine[idx[i]];
      placesOk = placesOk && places[b * tile + i] == idx[i];
    }
    CHECK_MESSAGE(keysOk, "block " << b);
    CHECK_MESSAGE(placesOk, "block " << b);
  }
  // The shape rules.
  CHECK(errorOf([] {
          capture("tileSortNarrow", 32, [](DPull<EWord32> in) {
            return effect([=](const Program<Grid>& g) {
              g.distrPar(len(in), [&](const Program<Block>& p, const EWord32&) {
                const ThreadArray<uint32_t> keys = threadArray<uint32_t>(p, 1);
                blockRadixSort(p, keys, 0, 32, 6);
              });
            });
          });
        }).find("6-bit digits are 64") != std::string::npos);
}
