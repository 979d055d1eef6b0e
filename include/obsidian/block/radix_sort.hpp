/// The block layer, radix ranking and sorting: a key's bits made comparable as an unsigned word
/// (RadixKey: the usual twiddles of signed and floating-point keys, and descending order), the
/// stable rank of each of a tile's keys by one radix digit (a warp multi-split with matchAny, as
/// CUB's BlockRadixRankMatch), and blockRadixSort, a whole tile sorted by every digit in turn
/// through shared memory. The device radix sort (device/radix_sort.hpp) builds on the ranking's
/// phases, publishing a tile's digit counts between them.
///
/// A tile is threads x items keys in the warp-striped arrangement: item k of lane l of warp w
/// is tile element w * 32 * items + k * 32 + l (each item a coalesced load of the warp), and
/// every rank keeps that order among equal digits (stable).
/// @file
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "obsidian/atomic.hpp"
#include "obsidian/block/scan.hpp"
#include "obsidian/half.hpp"
#include "obsidian/thread_array.hpp"
#include "obsidian/vote.hpp"

namespace obsidian {

/// The key types a radix sort orders: unsigned words, i32, and floating point (f16, bf16, f32,
/// f64), by their value (-0 before +0; NaNs with the sign bit clear after +inf, with it set
/// before -inf, as CUB).
template <class K>
concept RadixSortable =
    std::is_same_v<K, uint8_t> || std::is_same_v<K, uint16_t> || std::is_same_v<K, uint32_t> ||
    std::is_same_v<K, int32_t> || std::is_same_v<K, uint64_t> || std::is_same_v<K, float> ||
    std::is_same_v<K, double> || std::is_same_v<K, Half> || std::is_same_v<K, BFloat16>;

/// A key's order as an unsigned word: toBits(k) < toBits(j) exactly when k sorts before j
/// (ascending; descending inverts every bit), and fromBits is its inverse. Keys of at most 32
/// bits are widened to a u32 word (their bits in the low `bits`); 64-bit keys are a u64 word.
template <RadixSortable K>
struct RadixKey {
  /// The word the sort works on.
  using Bits = std::conditional_t<sizeof(K) == 8, uint64_t, uint32_t>;
  /// The key's bits (the passes' range is within 0 .. bits).
  static constexpr uint32_t bits = 8 * sizeof(K);
  /// All of the key's bits set: the last key in the order (what pads a tile).
  static constexpr Bits all = bits == 64 ? ~Bits{0} : static_cast<Bits>((uint64_t{1} << bits) - 1);
  /// The key's top bit (the sign of signed and floating-point keys).
  static constexpr Bits sign = Bits{1} << (bits - 1);

  /// The key's bits in sorting order.
  static Exp<Bits> toBits(const Exp<K>& k, bool descending) {
    const Exp<Bits> raw = raw_(k);
    Exp<Bits> b = raw;
    if constexpr (std::is_same_v<K, int32_t>) {
      b = raw ^ Exp<Bits>(sign);
    } else if constexpr (FloatScalar<K>) {
      // Negative: every bit flipped (larger magnitudes first); else the sign bit set.
      b = raw ^ ifThenElse((raw & Exp<Bits>(sign)) != Exp<Bits>(Bits{0}), Exp<Bits>(all),
                           Exp<Bits>(sign));
    }
    return descending ? b ^ Exp<Bits>(all) : b;
  }
  /// The key whose bits in sorting order are b.
  static Exp<K> fromBits(const Exp<Bits>& b, bool descending) {
    const Exp<Bits> a = descending ? b ^ Exp<Bits>(all) : b;
    Exp<Bits> raw = a;
    if constexpr (std::is_same_v<K, int32_t>) {
      raw = a ^ Exp<Bits>(sign);
    } else if constexpr (FloatScalar<K>) {
      raw = a ^ ifThenElse((a & Exp<Bits>(sign)) != Exp<Bits>(Bits{0}), Exp<Bits>(sign),
                           Exp<Bits>(all));
    }
    return fromRaw_(raw);
  }

 private:
  static Exp<Bits> raw_(const Exp<K>& k) {
    if constexpr (sizeof(K) == 8) {
      if constexpr (std::is_same_v<K, uint64_t>) {
        return k;
      } else {
        return bitcast<uint64_t>(k);
      }
    } else {
      return bits32(k);
    }
  }
  static Exp<K> fromRaw_(const Exp<Bits>& b) {
    if constexpr (sizeof(K) == 8) {
      if constexpr (std::is_same_v<K, uint64_t>) {
        return b;
      } else {
        return bitcast<K>(b);
      }
    } else {
      return fromBits32<K>(b);
    }
  }
};

/// Which digit of a key a ranking pass reads: (bits >> shift) & mask, with at most `radixBits`
/// bits (2^radixBits digits, known when the kernel is generated); shift and mask may be kernel
/// parameters (one kernel serves every pass of a sort).
struct RadixDigit {
  uint32_t radixBits = 8;  ///< the digit's most bits: 2^radixBits digits
  EWord32 shift{0u};       ///< the digit's lowest bit
  EWord32 mask{255u};      ///< the digit's bits (at most 2^radixBits - 1)
  /// The number of digits.
  uint32_t digits() const { return uint32_t{1} << radixBits; }
  /// The digit of word b.
  template <class Bits>
  EWord32 operator()(const Exp<Bits>& b) const {
    if constexpr (std::is_same_v<Bits, uint64_t>) {
      return cast<uint32_t>(b >> cast<uint64_t>(shift)) & mask;
    } else {
      return (b >> shift) & mask;
    }
  }
};

/// The first phase of a block's radix ranking (warpDigitCounts): each warp's count of every
/// digit and each item's rank among its warp's equal digits.
struct WarpDigitCounts {
  /// warps x digits counters, warp w's count of digit d at w * digits + d (later the start of
  /// warp w's items of digit d in the tile: digitTotals, addDigitStarts).
  SMutable<uint32_t> counts;
  /// Per thread, per item: the number of the warp's items of the same digit before it.
  ThreadArray<uint32_t> ranks;
  /// The digit the ranking reads.
  RadixDigit digit;
};

namespace detail {
void checkRadixBlock(const char* what, uint32_t threads, uint32_t radixBits);

// Shared counters zeroed by the block's threads in turn, then a barrier.
inline void zeroCounters(const Program<Block>& p, const SMutable<uint32_t>& counters) {
  const uint32_t threads = p.context().threadsPerBlock(), count = counters.len();
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    for (uint32_t j = 0; j < (count + threads - 1) / threads; ++j) {
      const EWord32 c = tid + j * threads;
      t.cond(c < count, [&](const Program<Thread>& u) { write(u, counters, c, 0u); });
    }
  });
  p.sync();
}
// Every counter that is not zero added into global[c] (an atomic each): a block's privatized
// counts after its barrier.
inline void addCounters(const Program<Block>& p, const SMutable<uint32_t>& counters,
                        const DMutable<uint32_t>& global) {
  const uint32_t threads = p.context().threadsPerBlock(), count = counters.len();
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    for (uint32_t j = 0; j < (count + threads - 1) / threads; ++j) {
      const EWord32 c = tid + j * threads;
      t.cond(c < count, [&](const Program<Thread>& u) {
        const EWord32 v = u.declare(counters[c]);
        u.cond(v != 0u, [&](const Program<Thread>& w) { atomicAdd(w, global, c, v); });
      });
    }
  });
}
}  // namespace detail

/// warpDigitCounts(p, keys, digit, matchEvery): phase one of a block's stable radix ranking of
/// a warp-striped tile (see the file's comment). Each warp takes its items in order; for each,
/// the lanes holding one digit find each other: a ballot per bit of the digit, the lane's peers
/// the AND of its bits' ballots (ALU instructions, as CUB's MatchAny), or for every
/// matchEvery-th item (0: none) one matchAny (fewer instructions, but on the shared-memory
/// pipe, which it saturates: on the H100 ballots alone are faster, bench/RESULTS.md 'Radix
/// sort'). Each lane's rank is the warp's count of the digit so far plus the peers in lanes
/// before its own, and the peers' highest lane adds their number to the count (between two
/// __syncwarps: every peer reads the count before it changes). Needs a block of whole warps with at
/// least as many threads as digits (later phases give thread d digit d). Cost: the counters in
/// shared memory (zeroed, a barrier), per item radixBits ballots or one match, one shared read and
/// write and two __syncwarps; a barrier at the end.
template <class Bits>
WarpDigitCounts warpDigitCounts(const Program<Block>& p, const ThreadArray<Bits>& keys,
                                const RadixDigit& digit, uint32_t matchEvery = 0) {
  const uint32_t threads = p.context().threadsPerBlock();
  detail::checkRadixBlock("warpDigitCounts", threads, digit.radixBits);
  const uint32_t warps = threads / 32, digits = digit.digits(), items = keys.len();
  const SMutable<uint32_t> counts = newShared<uint32_t>(p, warps * digits);
  const ThreadArray<uint32_t> ranks = threadArray<uint32_t>(p, items);
  detail::zeroCounters(p, counts);
  const ThreadArray<uint32_t> peers = threadArray<uint32_t>(p, 1);
  p.distrPar(warps, [&](const Program<Warp>& q, const EWord32& w) {
    for (uint32_t k = 0; k < items; ++k) {
      const auto digitOf = [keys, digit, k](const EWord32&) { return digit(keys[k]); };
      // The lanes whose digit is this lane's: one match instruction, or a ballot per bit.
      std::optional<Pull<uint32_t, EWord32>> matched;
      std::vector<EWord32> votes;
      if (matchEvery != 0 && (k + 1) % matchEvery == 0) {
        matched.emplace(matchAny(q, mkPull(32u, digitOf)));
      } else {
        for (uint32_t b = 0; b < digit.radixBits; ++b) {
          votes.push_back(ballot(q, mkPull(32u, [digitOf, b](const EWord32& i) {
                                   return ((digitOf(i) >> b) & 1u) != 0u;
                                 })));
        }
      }
      q.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
        const EWord32 d = t.declare(digit(keys[k]));
        if (matched) {
          peers.write(t, 0, (*matched)[lane]);
        } else {
          std::vector<EWord32> held;
          for (const EWord32& v : votes) held.push_back(t.declare(v));  // every lane votes
          EWord32 mine(0xFFFFFFFFu);
          for (uint32_t b = 0; b < held.size(); ++b) {
            mine = mine & (held[b] ^ (((d >> b) & 1u) - 1u));  // bit clear: ~ballot
          }
          peers.write(t, 0, mine);
        }
        const EWord32 before = t.declare(popc(peers[0] & ((EWord32(1u) << lane) - 1u)));
        ranks.write(t, k, counts[w * digits + d] + before);
      });
      q.sync();
      q.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
        t.cond(lane == 31u - clz(peers[0]), [&](const Program<Thread>& u) {
          // The leader has the most peers before it: its rank less those, plus all of them.
          write(u, counts, w * digits + digit(keys[k]), ranks[k] + 1u);
        });
      });
      q.sync();
    }
  });
  p.sync();
  return {counts, ranks, digit};
}

/// digitTotals(p, c): phase two: thread d (< digits) replaces warp w's count of digit d by the
/// count of the warps before w, and holds the tile's count of digit d (other threads hold 0),
/// as a thread array of one element. No barrier follows: the caller's block scan of the totals
/// (blockScanItems) begins with its own work in registers.
inline ThreadArray<uint32_t> digitTotals(const Program<Block>& p, const WarpDigitCounts& c) {
  const uint32_t threads = p.context().threadsPerBlock();
  const uint32_t warps = threads / 32, digits = c.digit.digits();
  const ThreadArray<uint32_t> total = threadArray<uint32_t>(p, 1);
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    total.write(t, 0, 0u);
    t.cond(tid < digits, [&](const Program<Thread>& u) {
      for (uint32_t w = 0; w < warps; ++w) {
        const EWord32 here = u.declare(c.counts[w * digits + tid]);
        write(u, c.counts, w * digits + tid, total[0]);
        total.write(u, 0, total[0] + here);
      }
    });
  });
  return total;
}

/// The tile's start of each digit: thread d's element is the number of the tile's keys with a
/// smaller digit (the block's exclusive sum of digitTotals; one barrier).
inline ThreadArray<uint32_t> digitStarts(const Program<Block>& p,
                                         const ThreadArray<uint32_t>& totals) {
  const auto plus = [](const EWord32& a, const EWord32& b) { return a + b; };
  const ItemsPrefix<uint32_t> scanned = blockScanItems(p, plus, totals);
  const ThreadArray<uint32_t> starts = threadArray<uint32_t>(p, 1);
  p.forAll(p.context().threadsPerBlock(), [&](const Program<Thread>& t, const EWord32& tid) {
    starts.write(t, 0, ifThenElse(tid == 0u, EWord32(0u), scanned.before[0]));
  });
  return starts;
}

/// addDigitStarts(p, c, starts): phase three: thread d adds digit d's start in the tile to its
/// warps' counters, so that counts[w * digits + d] is where warp w's first item of digit d goes;
/// a barrier follows.
inline void addDigitStarts(const Program<Block>& p, const WarpDigitCounts& c,
                           const ThreadArray<uint32_t>& starts) {
  const uint32_t threads = p.context().threadsPerBlock();
  const uint32_t warps = threads / 32, digits = c.digit.digits();
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    t.cond(tid < digits, [&](const Program<Thread>& u) {
      for (uint32_t w = 0; w < warps; ++w) {
        write(u, c.counts, w * digits + tid, c.counts[w * digits + tid] + starts[0]);
      }
    });
  });
  p.sync();
}

/// The place in the sorted tile of item k of the executing thread (tid) after addDigitStarts.
template <class Bits>
EWord32 rankInTile(const WarpDigitCounts& c, const ThreadArray<Bits>& keys, const EWord32& tid,
                   uint32_t k) {
  return c.counts[(tid / 32u) * c.digit.digits() + c.digit(keys[k])] + c.ranks[k];
}

/// What blockRadixRank gives.
struct BlockRadixRanks {
  WarpDigitCounts counts;        ///< the counters (rankInTile reads them)
  ThreadArray<uint32_t> totals;  ///< thread d: the tile's count of digit d
  ThreadArray<uint32_t> starts;  ///< thread d: the tile's keys of smaller digits
};

/// blockRadixRank(p, keys, digit): the three phases: rankInTile(r.counts, keys, tid, k) is then
/// item k's place in the tile sorted stably by the digit. Cost: as warpDigitCounts, plus a
/// block scan and one barrier.
template <class Bits>
BlockRadixRanks blockRadixRank(const Program<Block>& p, const ThreadArray<Bits>& keys,
                               const RadixDigit& digit) {
  const WarpDigitCounts c = warpDigitCounts(p, keys, digit);
  const ThreadArray<uint32_t> totals = digitTotals(p, c);
  const ThreadArray<uint32_t> starts = digitStarts(p, totals);
  addDigitStarts(p, c, starts);
  return {c, totals, starts};
}

/// blockRadixSort<K>(p, keys, values, beginBit, endBit, radixBits, descending): a warp-striped
/// tile of keys in thread arrays (RadixKey<K>::Bits words, e.g. from RadixKey<K>::toBits), and
/// optionally values (the same number per thread; pass an empty vector of thread arrays for
/// none), sorted stably by bits beginBit .. endBit of the keys, radixBits at a time: after it,
/// the thread arrays hold the sorted tile in the same arrangement (item k of lane l of warp w is
/// sorted element w * 32 * items + k * 32 + l). Each pass ranks (blockRadixRank), scatters the
/// keys and values to shared memory at their ranks and reads them back. Cost per pass: the
/// ranking, threads x items words of shared memory per array, two barriers.
template <class Bits, class V = uint32_t>
void blockRadixSort(const Program<Block>& p, const ThreadArray<Bits>& keys, uint32_t beginBit,
                    uint32_t endBit, uint32_t radixBits,
                    const std::vector<ThreadArray<V>>& values = {}) {
  const uint32_t threads = p.context().threadsPerBlock();
  detail::checkRadixBlock("blockRadixSort", threads, radixBits);
  constexpr uint32_t width = 8 * sizeof(Bits);
  if (beginBit > endBit || endBit > width) {
    throw Error("blockRadixSort: the bit range " + std::to_string(beginBit) + " .. " +
                std::to_string(endBit) + " must lie within the key's " + std::to_string(width) +
                " bits, begin <= end");
  }
  for (const ThreadArray<V>& v : values) {
    if (v.len() != keys.len()) {
      throw Error("blockRadixSort: each thread holds " + std::to_string(keys.len()) + " keys and " +
                  std::to_string(v.len()) + " values; they pair one to one");
    }
  }
  const uint32_t items = keys.len(), tile = threads * items;
  const SMutable<Bits> sortedKeys = newShared<Bits>(p, tile);
  std::vector<SMutable<V>> sortedValues;
  for (size_t j = 0; j < values.size(); ++j) sortedValues.push_back(newShared<V>(p, tile));
  for (uint32_t shift = beginBit; shift < endBit; shift += radixBits) {
    const uint32_t bitsHere = std::min(radixBits, endBit - shift);
    RadixDigit digit{radixBits, EWord32(shift), EWord32((uint32_t{1} << bitsHere) - 1u)};
    const BlockRadixRanks r = blockRadixRank(p, keys, digit);
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      for (uint32_t k = 0; k < items; ++k) {
        const EWord32 place = t.declare(rankInTile(r.counts, keys, tid, k));
        write(t, sortedKeys, place, keys[k]);
        for (size_t j = 0; j < values.size(); ++j) write(t, sortedValues[j], place, values[j][k]);
      }
    });
    p.sync();
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      const EWord32 base = (tid / 32u) * (32u * items) + tid % 32u;
      for (uint32_t k = 0; k < items; ++k) {
        keys.write(t, k, sortedKeys[base + k * 32u]);
        for (size_t j = 0; j < values.size(); ++j) {
          values[j].write(t, k, sortedValues[j][base + k * 32u]);
        }
      }
    });
    p.sync();
  }
}

}  // namespace obsidian
