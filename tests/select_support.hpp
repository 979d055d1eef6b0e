// Host references and data for the selection, run and top-k tests, shared by the simulator and
// GPU tests: the simulator's look-back modes, lengths around a tile, keys in runs, random values
// and keys, bit-for-bit comparisons, and the host's partition, unique, reduce-by-key,
// scan-by-key, order words and top k.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <obsidian/half.hpp>
#include <obsidian/sim.hpp>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "support.hpp"

namespace testing {

// The three ways each look-back case runs on the simulator: blocks in order, blocks from the
// last to the first, and two real blocks that draw every tile's ticket between them. Hazard
// detection stays on (SimOptions' default; "the simulator's modes detect hazards" in
// test_select.cpp and test_runs.cpp checks it).
inline obsidian::SimOptions simMode(int mode) {
  obsidian::SimOptions o;
  o.reverseBlocks = mode == 1;
  o.blocks = mode == 2 ? 2 : 0;  // each real block draws several tickets
  return o;
}

// Lengths around a tile of `tile` elements: empty, one, a tile less one, a tile, a tile and
// one, and several tiles (with a partial last one).
inline std::vector<size_t> lengthsAround(size_t tile) {
  return {0, 1, tile - 1, tile, tile + 1, 6 * tile + 37};
}

// n keys in runs: mostly short ones (1 to 6), now and then one up to two tiles long, and (where
// n holds four tiles) one over three whole tiles; consecutive runs differ, a key comes back in
// later runs. Outside the long run, a run starts exactly at every odd tile border (the tile's
// first element is a head) and crosses every even one (it is not).
inline std::vector<uint32_t> runKeys(size_t n, uint32_t seed, size_t tile) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v;
  v.reserve(n);
  uint32_t key = rng() % 5;
  bool spanned = false;
  size_t spanFrom = 0, spanTo = 0;
  while (v.size() < n) {
    size_t runLen = 1 + rng() % 6;
    if (!spanned && n >= 4 * tile && v.size() >= n / 4) {
      runLen = 3 * tile + tile / 2;
      spanned = true;
      spanFrom = v.size();
      spanTo = v.size() + runLen;
    } else if (rng() % 16 == 0) {
      runLen = 1 + rng() % (2 * tile);
    }
    key = (key + 1 + rng() % 4) % 5;
    for (size_t i = 0; i < runLen && v.size() < n; ++i) v.push_back(key);
  }
  for (size_t b = tile; b < n; b += tile) {
    if (b > spanFrom && b <= spanTo) continue;  // the long run's own borders stay inside it
    if (b / tile % 2 == 1) {
      if (v[b] == v[b - 1]) v[b] = (v[b - 1] + 1) % 5;  // a head
    } else if (b + 1 < spanFrom || b > spanTo) {
      v[b] = v[b - 1];  // no head
    }
  }
  return v;
}

// n values of type V from randomWords(n, seed): u32 over the whole range, i32 in -1000 .. 1000,
// f32 halves in -1000 .. 1000 (no zeros, no NaNs: max and min are exact and unambiguous).
template <class V>
std::vector<V> randomValues(size_t n, uint32_t seed) {
  const std::vector<uint32_t> r = randomWords(n, seed);
  std::vector<V> v(n);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<V, float>) {
      v[i] = static_cast<float>(static_cast<int32_t>(r[i] % 2001) - 1000) + 0.5f;
    } else if constexpr (std::is_same_v<V, int32_t>) {
      v[i] = static_cast<int32_t>(r[i] % 2001) - 1000;
    } else {
      v[i] = static_cast<V>(r[i]);
    }
  }
  return v;
}

// Whether a[at .. at + b.size()) holds b's bits (NaNs and signed zeros compare by their bits;
// an empty b's data, which may be null, never goes to memcmp).
template <class X>
bool sameBitsAt(const std::vector<X>& a, size_t at, const std::vector<X>& b) {
  return at + b.size() <= a.size() &&
         (b.empty() || std::memcmp(a.data() + at, b.data(), b.size() * sizeof(X)) == 0);
}

// Whether a and b hold the same elements, bit for bit.
template <class X>
bool sameBits(const std::vector<X>& a, const std::vector<X>& b) {
  return a.size() == b.size() && sameBitsAt(a, 0, b);
}

// Whether a[from ..] all still hold the sentinel 77 (nothing wrote them).
template <class X>
bool untouchedFrom(const std::vector<X>& a, size_t from) {
  return std::all_of(a.begin() + static_cast<std::ptrdiff_t>(from), a.end(),
                     [](X x) { return x == X{77}; });
}

// CUB's partition of `in` by `keep` (of an index): the kept elements in order, then the others
// last first; and how many were kept.
template <class X, class Keep>
std::pair<std::vector<X>, uint32_t> hostPartition(const std::vector<X>& in, Keep keep) {
  std::vector<X> kept, others;
  for (size_t i = 0; i < in.size(); ++i) (keep(i) ? kept : others).push_back(in[i]);
  const uint32_t count = static_cast<uint32_t>(kept.size());
  kept.insert(kept.end(), others.rbegin(), others.rend());
  return {kept, count};
}

// The first element of every run of elements equal by `!=` (NaN: a run of its own; -0 and
// +0: one run).
template <class X>
std::vector<X> hostUnique(const std::vector<X>& in) {
  std::vector<X> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (i == 0 || in[i] != in[i - 1]) out.push_back(in[i]);
  }
  return out;
}

// The host's reduce-by-key: each run's first key and the fold of its values in order.
template <class K, class V, class F>
std::pair<std::vector<K>, std::vector<V>> hostReduceByKey(const std::vector<K>& keys,
                                                          const std::vector<V>& values, F f) {
  std::vector<K> heads;
  std::vector<V> folds;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i == 0 || keys[i] != keys[i - 1]) {
      heads.push_back(keys[i]);
      folds.push_back(values[i]);
    } else {
      folds.back() = f(folds.back(), values[i]);
    }
  }
  return {heads, folds};
}

// The host's scan by key: inclusive, or exclusive with `init` at each run's first element and
// init folded with the run's values before the element elsewhere (CUB's ExclusiveScanByKey).
template <class K, class V, class F>
std::vector<V> hostScanByKey(const std::vector<K>& keys, const std::vector<V>& values, F f,
                             bool inclusive, V init) {
  std::vector<V> out(keys.size());
  V acc{};
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool head = i == 0 || keys[i] != keys[i - 1];
    if (inclusive) {
      acc = head ? values[i] : f(acc, values[i]);
      out[i] = acc;
    } else {
      out[i] = head ? init : f(init, acc);
      acc = head ? values[i] : f(acc, values[i]);
    }
  }
  return out;
}

// The key's order word, written independently of RadixKey: unsigned as is, i32 with its sign
// flipped, floats (f16, bf16, f32, f64) negative inverted and positive with the sign set (so
// -NaN is first, then -inf .. -0, +0 .. +inf, +NaN last); descending: all its bits inverted.
template <class K>
uint64_t orderBits(K k, bool descending = false) {
  uint64_t raw = 0;
  std::memcpy(&raw, &k, sizeof(K));
  constexpr uint32_t width = 8 * sizeof(K);
  const uint64_t all = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  const uint64_t sign = uint64_t{1} << (width - 1);
  uint64_t b = raw;
  if constexpr (std::is_same_v<K, int32_t>) {
    b = raw ^ sign;
  } else if constexpr (std::is_floating_point_v<K> || std::is_same_v<K, obsidian::Half> ||
                       std::is_same_v<K, obsidian::BFloat16>) {
    b = (raw & sign) ? (~raw & all) : (raw | sign);
  }
  return descending ? (~b & all) : b;
}

// The host's top k: the first k indices of a stable sort by order word (descending for the
// largest; ties in index order).
template <class K>
std::vector<uint32_t> referenceTopK(const std::vector<K>& keys, size_t k, bool largest) {
  std::vector<uint32_t> idx(keys.size());
  std::iota(idx.begin(), idx.end(), 0u);
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
    return largest ? orderBits(keys[a]) > orderBits(keys[b])
                   : orderBits(keys[a]) < orderBits(keys[b]);
  });
  idx.resize(k);
  return idx;
}

// The host's segmented top k: values and indices of segments x k places (each segment's
// referenceTopK; K{} and index 2^32 - 1 past a short segment's keys).
template <class K>
std::pair<std::vector<K>, std::vector<uint32_t>> referenceSegmentedTopK(
    const std::vector<K>& keys, const std::vector<uint32_t>& offsets, size_t k, bool largest) {
  const size_t segments = offsets.size() - 1;
  std::vector<K> values(segments * k, K{});
  std::vector<uint32_t> indices(segments * k, 0xffffffffu);
  for (size_t s = 0; s < segments; ++s) {
    const std::vector<K> segment(keys.begin() + offsets[s], keys.begin() + offsets[s + 1]);
    const std::vector<uint32_t> want = referenceTopK(segment, std::min(k, segment.size()), largest);
    for (size_t i = 0; i < want.size(); ++i) {
      values[s * k + i] = segment[want[i]];
      indices[s * k + i] = want[i];
    }
  }
  return {values, indices};
}

// n keys of the bytes of random 64-bit words (below `below` if not 0): any bit pattern for
// floats (NaNs too).
template <class K>
std::vector<K> randomKeys(size_t n, uint32_t seed, uint64_t below = 0) {
  std::mt19937_64 rng(seed);
  std::vector<K> v(n);
  for (K& k : v) {
    uint64_t r = rng();
    if (below) r %= below;
    if constexpr (std::is_same_v<K, obsidian::Half> || std::is_same_v<K, obsidian::BFloat16>) {
      k = K::fromBits(static_cast<uint16_t>(r));
    } else {
      std::memcpy(&k, &r, sizeof(K));
    }
  }
  return v;
}

}  // namespace testing
