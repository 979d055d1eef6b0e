// The recipe's first interpretation: obsidian calls that build the kernel. One template per
// level runs a body's steps on a static-length array inside a Program of that level; the
// level rules (no shared memory in a Thread program, pConcat steps one level down) are the
// library's, so a recipe the generator makes always compiles into a legal kernel.
#pragma once

#include <obsidian/obsidian.hpp>

#include "recipe.hpp"
#include "scalar_ops.hpp"

namespace fuzz {

using obsidian::EWord32;
using obsidian::Program;
using obsidian::SPull;

template <class L>
constexpr Level levelOf() {
  if constexpr (std::is_same_v<L, obsidian::Thread>) {
    return Level::Thread;
  } else if constexpr (std::is_same_v<L, obsidian::Warp>) {
    return Level::Warp;
  } else {
    return Level::Block;
  }
}

inline auto unaryFn(uint32_t a, uint32_t b) {
  return [a, b](const EWord32& x) { return unaryOp(a, b, x); };
}
inline auto binaryFn(uint32_t a) {
  return [a](const EWord32& x, const EWord32& y) { return binaryOp(a, x, y); };
}

// Calls f(op, identity) with collective operator `which` (collectiveWord in scalar_ops.hpp):
// obsidian's operator objects and their identities, or the affine16 lambda.
template <class F>
auto withCollective(uint32_t which, F f) {
  switch (which % kCollectiveOps) {
    case 0: return f(obsidian::Sum{}, obsidian::Sum::identity<uint32_t>());
    case 1: return f(obsidian::BitXor{}, obsidian::BitXor::identity<uint32_t>());
    case 2: return f(obsidian::Max{}, obsidian::Max::identity<uint32_t>());
    case 3: return f(obsidian::Min{}, obsidian::Min::identity<uint32_t>());
    case 4: return f(obsidian::BitAnd{}, obsidian::BitAnd::identity<uint32_t>());
    case 5: return f(obsidian::BitOr{}, obsidian::BitOr::identity<uint32_t>());
    default: return f([](const EWord32& a, const EWord32& b) { return affine16(a, b); }, 0x10000u);
  }
}

// The collectives' steps (Op::BlockReduce and after); L is the level the generator drew them at.
template <class L>
SPull<EWord32> collectiveStep(const Program<L>& p, const Node& n, const SPull<EWord32>& x) {
  using namespace obsidian;
  if constexpr (std::is_same_v<L, Block>) {
    switch (n.op) {
      case Op::BlockReduce:
        return withCollective(n.fn, [&](auto f, uint32_t) {
          const EWord32 r = blockReduce(kBlockReduceAlgorithms.at(n.alg), p, f, x);
          return fmap([r](const EWord32& v) { return v + r; }, x);
        });
      case Op::BlockScan:
        return withCollective(n.fn, [&](auto f, uint32_t identity) {
          const BlockScanAlgorithm a = kBlockScanAlgorithms.at(n.alg);
          return force(p, n.exclusive ? blockExclusiveScan(a, p, f, EWord32(identity), x)
                                      : blockScan(a, p, f, x));
        });
      case Op::BlockLoadStore: {
        const uint32_t items = x.len() / p.context().threadsPerBlock();
        return force(p, blockStore(kBlockLoadAlgorithms.at(n.storeAlg), p, items,
                                   blockLoad(kBlockLoadAlgorithms.at(n.loadAlg), p, items, x)));
      }
      case Op::BlockHistogram: {
        const SharedHistogram h = newSharedHistogram(p, n.bins, 1u << n.log2Copies);
        blockHistogram(p, h, evenBinning<uint32_t>(n.bins, n.lower, n.upper), x);
        p.sync();
        return mkPull(n.bins, [h](const EWord32& b) { return binTotal(h, b); });
      }
      default: break;
    }
  } else if constexpr (std::is_same_v<L, Warp>) {
    switch (n.op) {
      case Op::WarpReduce:
        return withCollective(n.fn, [&](auto f, uint32_t) {
          const EWord32 r = warpReduce(p, f, x);
          return fmap([r](const EWord32& v) { return v + r; }, x);
        });
      case Op::WarpScan:
        return withCollective(n.fn, [&](auto f, uint32_t identity) {
          return forcePull(
              p, n.exclusive ? warpExclusiveScan(p, f, EWord32(identity), x) : warpScan(p, f, x));
        });
      case Op::WarpExchange: {
        const uint32_t items = x.len() / 32;
        return force(p, warpStoreStriped(p, items, warpLoadStriped(p, items, x)));
      }
      default: break;
    }
  }
  throw std::logic_error("fuzz: collective not available at level " + levelName(levelOf<L>()));
}

// A step that needs no program (BinSplit's kids are all of this kind).
SPull<EWord32> pullStep(const Node& n, const SPull<EWord32>& x);
inline SPull<EWord32> pullSteps(const std::vector<Node>& ops, SPull<EWord32> x) {
  for (const Node& n : ops) x = pullStep(n, x);
  return x;
}

template <class L>
SPull<EWord32> steps(const Program<L>& p, const std::vector<Node>& ops, SPull<EWord32> x);

// A WarpVote step over the warp's 32 elements x (see Op::WarpVote).
SPull<EWord32> warpVoteStep(const Program<obsidian::Warp>& q, const Node& n,
                            const SPull<EWord32>& x);

// ThreadItems' scan form (n.scan > 0, see Op::ThreadItems) in Block program p: blockScanItems
// folds every thread of the block, so all of them keep items (those from n.size on zeros, the
// operator's identity: their index clamped, so no read falls outside x); the first n.size
// threads then scan their own items from their exclusive prefix, thread 0 from its first item
// (its prefix is a stand-in).
inline SPull<EWord32> threadItemsScanStep(const Program<obsidian::Block>& p, const Node& n,
                                          const SPull<EWord32>& x) {
  using namespace obsidian;
  const uint32_t threads = n.size, count = x.len() / threads, which = n.scan - 1;
  const bool aggregate = n.aggregate;
  const ThreadArray<uint32_t> items = threadArray<uint32_t>(p, count);
  p.forAll(p.context().threadsPerBlock(), [&](const Program<Thread>& t, const EWord32& tid) {
    for (uint32_t k = 0; k < count; ++k) {
      items.write(
          t, k,
          ifThenElse(tid < threads, x[min(tid, EWord32(threads - 1)) * count + k], EWord32(0u)));
    }
  });
  const auto f = [which](const EWord32& a, const EWord32& b) { return itemsScanOp(which, a, b); };
  const ItemsPrefix<uint32_t> s = blockScanItems(p, f, items);
  // Thread tid's prefixes, each a variable of its own, handed to put(k, prefix).
  const auto prefixes = [=](const Program<Thread>& t, const EWord32& tid, const auto& put) {
    const EWord32 total = aggregate ? t.declare(s.aggregate) : EWord32(0u);
    EWord32 acc = t.declare(ifThenElse(tid == 0u, items[0], f(s.before[0], items[0])));
    for (uint32_t k = 0; k < count; ++k) {
      if (k > 0) acc = t.declare(f(acc, items[k]));
      put(k, aggregate ? acc + total : acc);
    }
  };
  if (n.fn / 4 == 0) {
    const SMutable<uint32_t> y = newShared<uint32_t>(p, x.len());
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      prefixes(t, tid, [&](uint32_t k, const EWord32& v) { write(t, y, tid * count + k, v); });
    });
    p.sync();
    return y.pull();
  }
  return force(
      p, mkPush<Block, EWord32>(x.len(), [prefixes, threads, count](const Program<Block>& q,
                                                                    const Writer<EWord32>& w) {
        q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
          prefixes(t, tid, [&](uint32_t k, const EWord32& v) { w(t, v, tid * count + k); });
        });
      }));
}

// A ThreadItems step (see Op::ThreadItems) in Block or Warp program p: n.size threads keep
// their items of x in a thread array across the barrier.
template <class L>
SPull<EWord32> threadItemsStep(const Program<L>& p, const Node& n, const SPull<EWord32>& x) {
  using namespace obsidian;
  if constexpr (std::is_same_v<L, Block>) {
    if (n.scan != 0) return threadItemsScanStep(p, n, x);
  }
  const uint32_t threads = n.size, count = x.len() / threads, which = n.fn;
  const uint32_t offset = threadItemsOffset(n.constant, threads);
  const ThreadArray<uint32_t> items = threadArray<uint32_t>(p, count);
  const SMutable<uint32_t> s = newShared<uint32_t>(p, threads);
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    for (uint32_t k = 0; k < count; ++k) items.write(t, k, x[tid * count + k]);
    EWord32 v = items[0];
    if (threadItemsFolds(which)) {
      for (uint32_t k = 1; k < count; ++k) v = threadItemsFold<EWord32>(which, v, items[k]);
    }
    write(t, s, tid, v);
  });
  p.sync();
  // Element tid * count + k of the result, in thread tid.
  const auto out = [which, items, s, offset, threads](const EWord32& tid, uint32_t k) {
    return threadItemsOut<EWord32>(which, k, items[k], s[(tid + offset) % threads]);
  };
  if (which / 4 == 0) {
    const SMutable<uint32_t> y = newShared<uint32_t>(p, x.len());
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      for (uint32_t k = 0; k < count; ++k) write(t, y, tid * count + k, out(tid, k));
    });
    p.sync();
    return y.pull();
  }
  return force(p, mkPush<L, EWord32>(x.len(), [out, threads, count](const Program<L>& q,
                                                                    const Writer<EWord32>& w) {
                 q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                   for (uint32_t k = 0; k < count; ++k) w(t, out(tid, k), tid * count + k);
                 });
               }));
}

// BlockRadixSort's result for item k of a thread that holds the sorted keys and vals (see
// Op::BlockRadixSort).
template <class K>
EWord32 sortedWord(const obsidian::ThreadArray<uint32_t>& keys,
                   const std::vector<obsidian::ThreadArray<uint32_t>>& vals, uint32_t k,
                   bool descending, uint32_t factor) {
  EWord32 v = bits32(obsidian::RadixKey<K>::fromBits(keys[k], descending));
  if (vals.size() > 0) v = v ^ (vals[0][k] * factor);
  if (vals.size() > 1) v = v + vals[1][k];
  return v;
}

// A BlockRadixSort step (see Op::BlockRadixSort) with keys of type K in Block program p:
// each chunk in turn a warp-striped tile of every thread of the block (blockRadixSort's tile;
// past the chunk all ones, which sort last, their reads clamped into it), sorted with its
// values; the result written back in the same arrangement, chunk by chunk into a newShared
// (fn 0) or by one push array after every chunk (fn 1). Printer::blockRadixSort prints these
// very calls.
template <class K>
SPull<EWord32> blockRadixSortStep(const Program<obsidian::Block>& p, const Node& n,
                                  const SPull<EWord32>& x) {
  using namespace obsidian;
  using Key = RadixKey<K>;
  const uint32_t size = n.size, items = n.items, chunks = x.len() / size, values = n.values;
  const uint32_t threads = p.context().threadsPerBlock(), factor = sortPlaceFactor(n.constant);
  const bool descending = n.descending;
  // Tile element of item k of thread tid.
  const auto place = [items](const EWord32& tid, uint32_t k) {
    return (tid / 32u) * (32u * items) + k * 32u + tid % 32u;
  };
  std::vector<ThreadArray<uint32_t>> keys;
  std::vector<std::vector<ThreadArray<uint32_t>>> vals;
  std::optional<SMutable<uint32_t>> y;
  if (n.fn == 0) y = newShared<uint32_t>(p, x.len());
  for (uint32_t c = 0; c < chunks; ++c) {
    keys.push_back(threadArray<uint32_t>(p, items));
    vals.emplace_back();
    for (uint32_t v = 0; v < values; ++v) vals.back().push_back(threadArray<uint32_t>(p, items));
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      for (uint32_t k = 0; k < items; ++k) {
        const EWord32 e = t.declare(place(tid, k));
        const EWord32 word = t.declare(x[c * size + min(e, EWord32(size - 1))]);
        keys[c].write(t, k,
                      ifThenElse(e < size, Key::toBits(fromBits32<K>(word), descending),
                                 EWord32(0xffffffffu)));
        if (values > 0) vals[c][0].write(t, k, e);
        if (values > 1) vals[c][1].write(t, k, word * kSortValueFactor);
      }
    });
    blockRadixSort(p, keys[c], n.beginBit, n.endBit, n.radixBits, vals[c]);
    if (!y) continue;
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      for (uint32_t k = 0; k < items; ++k) {
        const EWord32 e = t.declare(place(tid, k));
        t.cond(e < size, [&](const Program<Thread>& u) {
          write(u, *y, c * size + e, sortedWord<K>(keys[c], vals[c], k, descending, factor));
        });
      }
    });
  }
  if (y) {
    p.sync();
    return y->pull();
  }
  return force(p, mkPush<Block, EWord32>(x.len(), [keys, vals, place, threads, chunks, size, items,
                                                   descending, factor](const Program<Block>& q,
                                                                       const Writer<EWord32>& w) {
                 for (uint32_t c = 0; c < chunks; ++c) {
                   q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                     for (uint32_t k = 0; k < items; ++k) {
                       const EWord32 e = t.declare(place(tid, k));
                       t.cond(e < size, [&](const Program<Thread>& u) {
                         w(u, sortedWord<K>(keys[c], vals[c], k, descending, factor), c * size + e);
                       });
                     }
                   });
                 }
               }));
}

// A BlockDiscontinuity step (see Op::BlockDiscontinuity) in Block program p: each chunk in turn
// a blocked tile of every thread of the block (tails: the chunk at its end, so that the
// chunk's last word is the tile's at every thread count; past the chunk its reads clamped
// into it), flagged or differenced against its edge; the result written back in the same
// arrangement, chunk by chunk into a newShared (fn 0) or by one push array after every
// chunk (fn 1). Printer::blockDiscontinuity prints these very calls.
inline SPull<EWord32> blockDiscontinuityStep(const Program<obsidian::Block>& p, const Node& n,
                                             const SPull<EWord32>& x) {
  using namespace obsidian;
  const uint32_t size = n.size, items = n.items, chunks = x.len() / size, shift = n.shift;
  const uint32_t threads = p.context().threadsPerBlock(), kind = n.adjacent;
  const uint32_t offset = kind == 1 ? threads * items - size : 0;
  // Chunk element of item k of thread tid (past the chunk, or wrapped below it: >= size).
  const auto place = [items, offset](const EWord32& tid, uint32_t k) {
    return offset == 0 ? tid * items + k : tid * items + k - offset;
  };
  // Chunk c's result for item k (element e < size) of a thread whose results are out.
  const auto result = [x, size, kind](const ThreadArray<uint32_t>& out, uint32_t c, uint32_t k,
                                      const EWord32& e) {
    return kind == 2 ? out[k] : x[c * size + e] ^ (out[k] * kAdjacentFlagFactor);
  };
  std::vector<ThreadArray<uint32_t>> outs;
  std::optional<SMutable<uint32_t>> y;
  if (n.fn == 0) y = newShared<uint32_t>(p, x.len());
  for (uint32_t c = 0; c < chunks; ++c) {
    const ThreadArray<uint32_t> words = threadArray<uint32_t>(p, items);
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      for (uint32_t k = 0; k < items; ++k) {
        const EWord32 e = t.declare(place(tid, k));
        words.write(t, k, x[c * size + min(e, EWord32(size - 1))] >> shift);
      }
    });
    // The edge (see kAdjacentEdges): the word beside the chunk, or the stand-in.
    const bool beside = n.edge == 1 && (kind == 1 ? c + 1 < chunks : c > 0);
    const EWord32 edge = beside ? x[kind == 1 ? (c + 1) * size : c * size - 1] >> shift
                                : EWord32(n.constant >> shift);
    const EBool has = n.edge == 3 ? (x[c * size] & 1u) == 1u : EBool(beside || n.edge == 2);
    if (kind == 2) {
      outs.push_back(blockAdjacentDifference<uint32_t>(
          p, words, [](const EWord32& a, const EWord32& b) { return a - b; }, edge));
    } else {
      outs.push_back(kind == 0 ? blockFlagHeads(p, words, edge, has)
                               : blockFlagTails(p, words, edge, has));
    }
    if (!y) continue;
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      for (uint32_t k = 0; k < items; ++k) {
        const EWord32 e = t.declare(place(tid, k));
        t.cond(e < size, [&](const Program<Thread>& u) {
          write(u, *y, c * size + e, result(outs[c], c, k, e));
        });
      }
    });
  }
  if (y) {
    p.sync();
    return y->pull();
  }
  return force(
      p, mkPush<Block, EWord32>(x.len(), [outs, place, result, threads, chunks, size, items](
                                             const Program<Block>& q, const Writer<EWord32>& w) {
        for (uint32_t c = 0; c < chunks; ++c) {
          q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
            for (uint32_t k = 0; k < items; ++k) {
              const EWord32 e = t.declare(place(tid, k));
              t.cond(e < size, [&](const Program<Thread>& u) {
                w(u, result(outs[c], c, k, e), c * size + e);
              });
            }
          });
        }
      }));
}

// Calls f with BlockMergeSort's comparator (Node::order, the mask Node::constant; see
// kMergeOrders): the library's Ascending and Descending, or a lambda on a masked part of the
// word (mergeOrderText prints the same).
template <class F>
auto withMergeOrder(uint32_t order, uint32_t mask, F f) {
  switch (order % kMergeOrders) {
    case 0: return f(obsidian::Ascending{});
    case 1: return f(obsidian::Descending{});
    case 2:
      return f([mask](const EWord32& a, const EWord32& b) { return (a & mask) < (b & mask); });
    default:
      return f([mask](const EWord32& a, const EWord32& b) { return (b & mask) < (a & mask); });
  }
}

// A BlockMergeSort step (see Op::BlockMergeSort) in Block program p with comparator less:
// each chunk in turn a blocked tile of every thread of the block (past the chunk the padding
// key mergePadKey, its reads clamped into it), sorted with its places (values 1) and valid
// count; the result written back in the same arrangement, chunk by chunk into a newShared
// (fn 0) or by one push array after every chunk (fn 1). Printer::blockMergeSort prints these
// very calls.
template <class Less>
SPull<EWord32> blockMergeSortStep(const Program<obsidian::Block>& p, const Node& n,
                                  const SPull<EWord32>& x, Less less) {
  using namespace obsidian;
  const uint32_t size = n.size, items = n.items, chunks = x.len() / size, values = n.values;
  const uint32_t threads = p.context().threadsPerBlock(), valid = n.valid;
  const uint32_t pad = mergePadKey(n.order, valid);
  // Chunk c's valid count (valid 2: read in the kernel).
  const auto validOf = [x, size, valid](uint32_t c) {
    return valid == 2 ? x[c * size] % (size + 1) : EWord32(size);
  };
  // Chunk c's result for item k (element e < size) of a thread that holds the sorted keys and
  // vals: from the valid count on, the chunk's word as it was.
  const auto result = [x, size, valid, validOf](const ThreadArray<uint32_t>& keys,
                                                const std::vector<ThreadArray<uint32_t>>& vals,
                                                uint32_t c, uint32_t k, const EWord32& e) {
    EWord32 v = keys[k];
    if (vals.size() > 0) v = v ^ (vals[0][k] * kMergeValueFactor);
    return valid == 2 ? ifThenElse(e < validOf(c), v, x[c * size + e]) : v;
  };
  std::vector<ThreadArray<uint32_t>> keys;
  std::vector<std::vector<ThreadArray<uint32_t>>> vals;
  std::optional<SMutable<uint32_t>> y;
  if (n.fn == 0) y = newShared<uint32_t>(p, x.len());
  for (uint32_t c = 0; c < chunks; ++c) {
    keys.push_back(threadArray<uint32_t>(p, items));
    vals.emplace_back();
    for (uint32_t v = 0; v < values; ++v) vals.back().push_back(threadArray<uint32_t>(p, items));
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      for (uint32_t k = 0; k < items; ++k) {
        const EWord32 e = t.declare(tid * items + k);
        keys[c].write(t, k,
                      ifThenElse(e < size, x[c * size + min(e, EWord32(size - 1))], EWord32(pad)));
        if (values > 0) vals[c][0].write(t, k, e);
      }
    });
    if (valid == 0) {
      blockMergeSort(p, keys[c], less, vals[c]);
    } else {
      blockMergeSort(p, keys[c], less, vals[c], validOf(c));
    }
    if (!y) continue;
    p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      for (uint32_t k = 0; k < items; ++k) {
        const EWord32 e = t.declare(tid * items + k);
        t.cond(e < size, [&](const Program<Thread>& u) {
          write(u, *y, c * size + e, result(keys[c], vals[c], c, k, e));
        });
      }
    });
  }
  if (y) {
    p.sync();
    return y->pull();
  }
  return force(
      p, mkPush<Block, EWord32>(x.len(), [keys, vals, result, threads, chunks, size, items](
                                             const Program<Block>& q, const Writer<EWord32>& w) {
        for (uint32_t c = 0; c < chunks; ++c) {
          q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
            for (uint32_t k = 0; k < items; ++k) {
              const EWord32 e = t.declare(tid * items + k);
              t.cond(e < size, [&](const Program<Thread>& u) {
                w(u, result(keys[c], vals[c], c, k, e), c * size + e);
              });
            }
          });
        }
      }));
}

// NarrowForce with the narrow type X (see Op::NarrowForce).
template <class X, class L>
SPull<EWord32> narrowForce(const Program<L>& p, bool zipped, const SPull<EWord32>& x) {
  using namespace obsidian;
  const auto narrow = fmap([](const EWord32& w) { return toNarrow<X>(w); }, x);
  if (!zipped) return fmap([](const Exp<X>& v) { return widen(v); }, forcePull(p, narrow));
  auto [lo, hi] = unzip(forcePull(p, zip(narrow, x)));
  return zipWith([](const Exp<X>& v, const EWord32& w) { return widen(v) + w; }, lo, hi);
}

// SmallFloatForce with the format S (see Op::SmallFloatForce): the values forced as S, e4m3,
// e5m2, or S beside the words (a tuple of a 2-byte and a 4-byte array).
template <class S, class L>
SPull<EWord32> smallFloatForce(const Program<L>& p, uint32_t form, const SPull<EWord32>& x) {
  using namespace obsidian;
  const auto values = fmap([](const EWord32& w) { return smallIn<S>(w); }, x);
  const auto bitsOf = [](const auto& v) { return bits32(v); };
  switch (form % kSmallFloatForces) {
    case 1:
      return fmap(bitsOf,
                  forcePull(p, fmap([](const Exp<S>& v) { return cast<Fp8E4M3>(v); }, values)));
    case 2:
      return fmap(bitsOf,
                  forcePull(p, fmap([](const Exp<S>& v) { return cast<Fp8E5M2>(v); }, values)));
    case 3: {
      auto [lo, hi] = unzip(forcePull(p, zip(values, x)));
      return zipWith([](const Exp<S>& v, const EWord32& w) { return bits32(v) + w; }, lo, hi);
    }
    default: return fmap(bitsOf, forcePull(p, values));
  }
}

template <class L>
SPull<EWord32> step(const Program<L>& p, const Node& n, const SPull<EWord32>& x) {
  using namespace obsidian;
  switch (n.op) {
    case Op::Force: return forcePull(p, x);
    case Op::SeqReduce: {
      const uint32_t a = n.fn;
      return force(
          p, tConcat<L>(fmap([a](const SPull<EWord32>& c) { return seqReduce(binaryFn(a), c); },
                             splitUp(n.size, x))));
    }
    case Op::SeqScan: {
      const uint32_t a = n.fn;
      return force(p,
                   tConcat<L>(fmap([a](const SPull<EWord32>& c) { return seqScan(binaryFn(a), c); },
                                   splitUp(n.size, x))));
    }
    case Op::ConcP: {
      auto [lo, hi] = halve(x);
      return force(p, concP(push<L>(hi), push<L>(lo)));
    }
    case Op::Iterate: {
      const uint32_t limit = n.limit;
      if (!n.until) {
        return force(p, tConcat<L>(fmap(
                            [limit](const EWord32& v) {
                              return seqIterate(
                                  EWord32(limit),
                                  [](const EWord32& i, const EWord32& s) { return s * 3u + i; }, v);
                            },
                            x)));
      }
      return force(p, tConcat<L>(fmap(
                          [limit](const EWord32& v) {
                            return seqUntil([](const EWord32& s) { return s >> 1u; },
                                            [limit](const EWord32& s) { return s > limit; }, v);
                          },
                          x)));
    }
    case Op::Nest:
      if constexpr (std::is_same_v<L, Block> || std::is_same_v<L, Warp>) {
        using Down = std::conditional_t<std::is_same_v<L, Block>, Warp, Thread>;
        const std::vector<Node> kids = n.kids;
        return force(p, pConcat(fmap(
                            [kids](const SPull<EWord32>& c) {
                              return exec<Down>([kids, c](const Program<Down>& q) {
                                return push<Down>(steps<Down>(q, kids, c));
                              });
                            },
                            splitUp(n.size, x))));
      }
      break;
    case Op::ThreadNest:
      if constexpr (!std::is_same_v<L, Thread>) {
        const std::vector<Node> kids = n.kids;
        return force(p, tConcat<L>(fmap(
                            [kids](const SPull<EWord32>& c) {
                              return exec<Thread>([kids, c](const Program<Thread>& q) {
                                return push<Thread>(steps<Thread>(q, kids, c));
                              });
                            },
                            splitUp(n.size, x))));
      }
      break;
    case Op::SeqNest: {
      const std::vector<Node> kids = n.kids;
      return force(p, sConcat(fmap(
                          [kids](const SPull<EWord32>& c) {
                            return exec<L>([kids, c](const Program<L>& q) {
                              return push<L>(steps<L>(q, kids, c));
                            });
                          },
                          splitUp(n.size, x))));
    }
    case Op::Load:
      if constexpr (!std::is_same_v<L, Thread>) return force(p, load<L>(n.size, x));
      break;
    case Op::Take: return force(p, takeP(n.size, push<L>(x)));
    case Op::NarrowForce:
      return n.width == 8 ? narrowForce<uint8_t>(p, n.zipped, x)
                          : narrowForce<uint16_t>(p, n.zipped, x);
    case Op::SmallFloatForce:
      return n.format == 0 ? smallFloatForce<obsidian::Half>(p, n.fn, x)
                           : smallFloatForce<obsidian::BFloat16>(p, n.fn, x);
    case Op::ForceZip: {
      auto [lo, hi] = halve(x);
      auto [lo2, hi2] = unzip(forcePull(p, zip(lo, hi)));
      return zipWith(binaryFn(n.fn), lo2, hi2);
    }
    case Op::FloatScan: {
      const uint32_t t = n.specials, a = n.fn;
      const SPull<EFloat> floats = fmap([t](const EWord32& w) { return floatIn(t, w); }, x);
      const auto bitsOf = [](const EFloat& f) { return bitcast<uint32_t>(f); };
      if (a >= kFloatScanOps) return fmap(bitsOf, forcePull(p, floats));
      return fmap(bitsOf, force(p, tConcat<L>(fmap(
                                       [a](const SPull<EFloat>& c) {
                                         return seqScan(
                                             [a](const EFloat& u, const EFloat& v) {
                                               return floatScanOp<EWord32>(a, u, v);
                                             },
                                             c);
                                       },
                                       splitUp(n.size, floats)))));
    }
    case Op::WarpVote:
      if constexpr (std::is_same_v<L, Warp>) return warpVoteStep(p, n, x);
      break;
    case Op::ThreadItems:
      if constexpr (!std::is_same_v<L, Thread>) return threadItemsStep<L>(p, n, x);
      break;
    case Op::BlockRadixSort:
      if constexpr (std::is_same_v<L, Block>) {
        return withSortKey(n.format, [&](auto key) {
          return blockRadixSortStep<typename decltype(key)::type>(p, n, x);
        });
      }
      break;
    case Op::BlockDiscontinuity:
      if constexpr (std::is_same_v<L, Block>) return blockDiscontinuityStep(p, n, x);
      break;
    case Op::BlockMergeSort:
      if constexpr (std::is_same_v<L, Block>) {
        return withMergeOrder(n.order, n.constant,
                              [&](auto less) { return blockMergeSortStep(p, n, x, less); });
      }
      break;
    case Op::Histogram:
      if constexpr (!std::is_same_v<L, Thread>) {
        const uint32_t bins = n.bins;
        const SMutable<uint32_t> h = newShared<uint32_t>(p, bins);
        p.forAll(bins, [&](const Program<Thread>& t, const EWord32& i) { write(t, h, i, 0u); });
        p.sync();
        p.forAll(x.len(), [&](const Program<Thread>& t, const EWord32& i) {
          atomicAdd(t, h, x[i] % bins, 1u);
        });
        p.sync();
        return h.pull();
      }
      break;
    default:
      if (isCollective(n.op)) return collectiveStep<L>(p, n, x);
      return pullStep(n, x);
  }
  throw std::logic_error("fuzz: step not available at level " + levelName(levelOf<L>()));
}

template <class L>
SPull<EWord32> steps(const Program<L>& p, const std::vector<Node>& ops, SPull<EWord32> x) {
  for (const Node& n : ops) x = step<L>(p, n, x);
  return x;
}

// The kernel of recipe r with `threads` real threads per block; `plain` turns off the
// optimizing passes that must not change results (shared-memory reuse, subexpression sharing).
// dropBarrier >= 0 plants a fault (testing::withFaults, Faults::dropBarrier): the fuzzer's own test
// that a missing barrier is caught.
obsidian::Kernel buildKernel(const Recipe& r, uint32_t threads, bool plain, int dropBarrier = -1);

}  // namespace fuzz
