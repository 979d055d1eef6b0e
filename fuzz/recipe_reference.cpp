// The oracle: what a 1-D recipe's kernel must compute, in plain C++ over std::vector with no
// IR involved (the input's words, every array argument before and after the kernel), and the
// rejection (InvalidRecipe) of a recipe that breaks a rule, which is how shrinking stays within
// well-formed recipes. Matrix recipes: recipe_matrix_reference.cpp.
#include <algorithm>
#include <functional>

#include "recipe_internal.hpp"
#include "scalar_ops.hpp"

namespace fuzz {

namespace {

Words chunkOf(const Words& x, size_t start, size_t n) {
  return Words(x.begin() + static_cast<long>(start), x.begin() + static_cast<long>(start + n));
}

uint32_t fold(uint32_t op, const Words& c) {
  uint32_t acc = c[0];
  for (size_t i = 1; i < c.size(); ++i) acc = binaryOp(op, acc, c[i]);
  return acc;
}

// Applies `body` to consecutive chunks of k and concatenates the results, which must all
// have one length (static lengths, as pConcat/tConcat/sConcat/binSplit need).
Words perChunk(const Words& x, uint32_t k, const std::function<Words(const Words&)>& body) {
  require(k > 0 && x.size() % k == 0, "chunk size does not divide the length");
  Words out;
  size_t m = 0;
  for (size_t s = 0; s < x.size(); s += k) {
    const Words r = body(chunkOf(x, s, k));
    require(!r.empty(), "empty chunk result");
    if (s == 0) m = r.size();
    require(r.size() == m, "chunk results differ in length");
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

Words refSteps(const Where& w, const std::vector<Node>& ops, Words x);

Words refCollective(const Node& n, const Words& x) {
  const size_t len = x.size();
  switch (n.op) {
    case Op::BlockReduce:
    case Op::WarpReduce: {
      uint32_t r = x[0];
      for (size_t i = 1; i < len; ++i) r = collectiveWord(n.fn, r, x[i]);
      Words y(x);
      for (uint32_t& v : y) v += r;
      return y;
    }
    case Op::BlockScan:
    case Op::WarpScan: {
      // Inclusive: y[i] = x[0] op ... op x[i]; exclusive: the identity, then the inclusive
      // prefixes of x[0 .. i - 1].
      Words y(len);
      uint32_t acc = x[0];
      for (size_t i = 0; i < len; ++i) {
        if (i > 0) acc = collectiveWord(n.fn, acc, x[i]);
        if (n.exclusive) {
          if (i + 1 < len) y[i + 1] = acc;
        } else {
          y[i] = acc;
        }
      }
      if (n.exclusive) y[0] = collectiveIdentity(n.fn);
      return y;
    }
    case Op::BlockLoadStore:
    case Op::WarpExchange: return x;
    case Op::BlockHistogram: {
      // Even bins over [lower, upper): x - lower (modulo 2^32) below the range upper - lower
      // counts, in bin floor((x - lower) * bins / range).
      Words y(n.bins, 0);
      const uint32_t range = n.upper - n.lower;
      for (uint32_t v : x) {
        const uint32_t dist = v - n.lower;
        if (dist < range) ++y[static_cast<size_t>(uint64_t{dist} * n.bins / range)];
      }
      return y;
    }
    default: break;
  }
  throw std::logic_error("fuzz: not a collective");
}

// A WarpVote step over the 32 lanes' words x (element l: lane l's).
Words refWarpVote(const Node& n, const Words& x) {
  using BW = BitsWorld<uint32_t>;
  // The mask of the lanes where pred holds.
  auto mask = [&x](auto pred) {
    uint32_t m = 0;
    for (uint32_t l = 0; l < 32; ++l) m |= pred(x[l]) ? 1u << l : 0u;
    return m;
  };
  const uint32_t c = n.constant;
  const uint32_t ballot = mask([c](uint32_t v) { return ((v >> (c % 32u)) & 1u) == 1u; });
  Words y(32);
  for (uint32_t l = 0; l < 32; ++l) {
    switch (n.fn % kWarpVotes) {
      case 0: y[l] = x[l] + ballot; break;
      case 1: {
        const uint32_t m = 2u + c % 60u;
        const bool any = mask([m](uint32_t v) { return v % m == 0u; }) != 0;
        const bool all = mask([m](uint32_t v) { return v % m != 0u; }) == 0xffffffffu;
        y[l] = x[l] ^ ((any ? 1u : 0u) | (all ? 2u : 0u));
        break;
      }
      case 2: {
        const uint32_t k = 1u + c % 5u, key = x[l] % k;
        const uint32_t match = mask([k, key](uint32_t v) { return v % k == key; });
        y[l] = x[l] + (BW::popc(match & ((1u << l) - 1u)) | (BW::popc(match) << 8u));
        break;
      }
      default: y[l] = l % 2u == 1u ? x[l] ^ ballot : x[l]; break;
    }
  }
  return y;
}

// ThreadItems' scan form: the items in order (thread t's t * I + k) are the block's, so each
// word of the result is the inclusive prefix of x through it, the first word x[0] itself (the
// threads past T add only zeros, the identity); plus the fold of all of x with n.aggregate.
Words refThreadItemsScan(const Node& n, const Words& x) {
  Words y(x.size());
  uint32_t acc = x[0];
  for (size_t i = 0; i < x.size(); ++i) {
    if (i > 0) acc = itemsScanWord(n.scan - 1, acc, x[i]);
    y[i] = acc;
  }
  if (n.aggregate) {
    for (uint32_t& v : y) v += acc;
  }
  return y;
}

// A ThreadItems step over x: n.size threads of x.size() / n.size items each (blocked).
Words refThreadItems(const Node& n, const Words& x) {
  if (n.scan != 0) return refThreadItemsScan(n, x);
  const uint32_t threads = n.size, count = static_cast<uint32_t>(x.size()) / threads;
  const uint32_t offset = threadItemsOffset(n.constant, threads);
  Words value(threads);
  for (uint32_t t = 0; t < threads; ++t) {
    uint32_t v = x[t * count];
    if (threadItemsFolds(n.fn)) {
      for (uint32_t k = 1; k < count; ++k) v = threadItemsFold<uint32_t>(n.fn, v, x[t * count + k]);
    }
    value[t] = v;
  }
  Words y(x.size());
  for (uint32_t t = 0; t < threads; ++t) {
    const uint32_t neighbour = value[(t + offset) % threads];
    for (uint32_t k = 0; k < count; ++k) {
      y[t * count + k] = threadItemsOut<uint32_t>(n.fn, k, x[t * count + k], neighbour);
    }
  }
  return y;
}

// A BlockRadixSort step over x: each chunk of n.size words sorted stably by the digits of
// its keys (the tile's padding, all ones and after the chunk, sorts after it and is not
// written), each word of the result combined with the place it came from.
Words refBlockRadixSort(const Node& n, const Words& x) {
  Words y(x.size());
  const uint32_t factor = sortPlaceFactor(n.constant);
  for (size_t start = 0; start < x.size(); start += n.size) {
    std::vector<uint32_t> places(n.size);
    for (uint32_t i = 0; i < n.size; ++i) places[i] = i;
    const auto digit = [&](uint32_t i) {
      return sortDigits(n.beginBit, n.endBit, sortOrderBits(n.format, n.descending, x[start + i]));
    };
    std::stable_sort(places.begin(), places.end(),
                     [&](uint32_t a, uint32_t b) { return digit(a) < digit(b); });
    for (uint32_t j = 0; j < n.size; ++j) {
      const uint32_t place = places[j], word = x[start + place];
      uint32_t v = word;
      if (n.values > 0) v ^= place * factor;
      if (n.values > 1) v += word * kSortValueFactor;
      y[start + j] = v;
    }
  }
  return y;
}

// A BlockDiscontinuity step over x: in each chunk of n.size words, each item x[i] >> shift
// against the item before it (tails: after it), the chunk's edge against the edge's word
// (kAdjacentEdges), or without one a head (tail); the result x[i] ^ flag * kAdjacentFlagFactor,
// or the difference of the items.
Words refBlockDiscontinuity(const Node& n, const Words& x) {
  Words y(x.size());
  const size_t size = n.size, chunks = x.size() / size;
  const bool tails = n.adjacent == 1;
  const auto item = [&](size_t i) { return x[i] >> n.shift; };
  for (size_t c = 0; c < chunks; ++c) {
    const size_t start = c * size;
    // The edge: whether there is one, and its item.
    const bool beside = n.edge == 1 && (tails ? c + 1 < chunks : c > 0);
    const uint32_t edge = beside ? item(tails ? start + size : start - 1) : n.constant >> n.shift;
    const bool has = beside || n.edge == 2 || (n.edge == 3 && x[start] % 2 == 1);
    for (size_t e = 0; e < size; ++e) {
      const size_t i = start + e;
      const bool atEdge = tails ? e + 1 == size : e == 0;
      const uint32_t other = atEdge ? edge : item(tails ? i + 1 : i - 1);
      if (n.adjacent == 2) {
        y[i] = item(i) - other;
      } else {
        const uint32_t flag = (atEdge && !has) || item(i) != other ? 1 : 0;
        y[i] = x[i] ^ flag * kAdjacentFlagFactor;
      }
    }
  }
  return y;
}

// A BlockMergeSort step over x: in each chunk of n.size words its first `valid` (the size, or
// x[the chunk's first] % (size + 1)) sorted stably by the comparator (mergeLess; the tile's
// padding sorts after them and is not written), each combined with the place it came from
// (with a value array); the chunk's words from valid on as they were.
Words refBlockMergeSort(const Node& n, const Words& x) {
  Words y(x);
  for (size_t start = 0; start < x.size(); start += n.size) {
    const uint32_t valid = n.valid == 2 ? x[start] % (n.size + 1) : n.size;
    std::vector<uint32_t> places(valid);
    for (uint32_t i = 0; i < valid; ++i) places[i] = i;
    std::stable_sort(places.begin(), places.end(), [&](uint32_t a, uint32_t b) {
      return mergeLess(n.order, n.constant, x[start + a], x[start + b]);
    });
    for (uint32_t j = 0; j < valid; ++j) {
      const uint32_t place = places[j];
      y[start + j] = x[start + place] ^ (n.values > 0 ? place * kMergeValueFactor : 0u);
    }
  }
  return y;
}

Words refStep(const Where& w, const Node& n, const Words& x) {
  const size_t len = x.size();
  const size_t half = len / 2;
  if (isCollective(n.op)) {
    require(collectiveFits(w, n, len), "a collective's shape rules do not hold");
    return refCollective(n, x);
  }
  switch (n.op) {
    case Op::Map: {
      Words y(len);
      for (size_t i = 0; i < len; ++i) y[i] = unaryOp(n.fn, n.constant, x[i]);
      return y;
    }
    case Op::FloatMap: {
      Words y(len);
      for (size_t i = 0; i < len; ++i) y[i] = floatOp(n.fn, n.constant, x[i]);
      return y;
    }
    case Op::AddIndex: {
      Words y(len);
      for (size_t i = 0; i < len; ++i) y[i] = x[i] + static_cast<uint32_t>(i) * n.constant;
      return y;
    }
    case Op::ZipHalves: {
      Words y(half);
      for (size_t i = 0; i < half; ++i) y[i] = binaryOp(n.fn, x[i], x[half + i]);
      return y;
    }
    case Op::ZipEvenOdds: {
      Words y(half);
      for (size_t i = 0; i < half; ++i) y[i] = binaryOp(n.fn, x[2 * i], x[2 * i + 1]);
      return y;
    }
    case Op::Rotate:
    case Op::ConcP: {
      const size_t k = n.op == Op::Rotate ? n.size : half;
      require(k <= len, "splitAt beyond the length");
      Words y(x.begin() + static_cast<long>(k), x.end());
      y.insert(y.end(), x.begin(), x.begin() + static_cast<long>(k));
      return y;
    }
    case Op::Interleave: {
      Words y(2 * half);
      for (size_t i = 0; i < half; ++i) {
        y[2 * i] = x[i];
        y[2 * i + 1] = x[half + i];
      }
      return y;
    }
    case Op::Ends: {
      Words y(n.size, x.front());
      y.push_back(x.back());
      return y;
    }
    case Op::Load: require(n.size > 0 && len % n.size == 0, "load size does not divide"); return x;
    case Op::Take:
      require(n.size <= len, "takeP beyond the length");
      return Words(x.begin(), x.begin() + n.size);
    case Op::ForceZip: {
      Words y(half);
      for (size_t i = 0; i < half; ++i) y[i] = binaryOp(n.fn, x[i], x[half + i]);
      return y;
    }
    case Op::SplitFold:
    case Op::SeqReduce:
      return perChunk(x, n.size, [&](const Words& c) { return Words{fold(n.fn, c)}; });
    case Op::CoalesceFold: {
      require(n.size > 0 && len % n.size == 0, "coalesce size does not divide the length");
      const size_t s = len / n.size;
      Words y(s);
      for (size_t i = 0; i < s; ++i) {
        Words c(n.size);
        for (size_t j = 0; j < n.size; ++j) c[j] = x[i + s * j];
        y[i] = fold(n.fn, c);
      }
      return y;
    }
    case Op::SeqScan:
      return perChunk(x, n.size, [&](const Words& c) {
        Words y(c);
        for (size_t i = 1; i < y.size(); ++i) y[i] = binaryOp(n.fn, y[i - 1], y[i]);
        return y;
      });
    case Op::BinSplit:
      require(n.log2Parts < 32 && len % (size_t{1} << n.log2Parts) == 0,
              "binSplit parts do not divide");
      return perChunk(x, static_cast<uint32_t>(len >> n.log2Parts),
                      [&](const Words& c) { return refSteps(w.at(w.level), n.kids, c); });
    case Op::Force: return x;
    case Op::Iterate: {
      Words y(x);
      for (uint32_t& s : y) {
        if (n.until) {
          while (s > n.limit) s >>= 1u;
        } else {
          for (uint32_t i = 0; i < n.limit; ++i) s = s * 3u + i;
        }
      }
      return y;
    }
    case Op::Nest:
    case Op::ThreadNest:
    case Op::SeqNest: {
      const Level inner = n.op == Op::SeqNest       ? w.level
                          : n.op == Op::ThreadNest  ? Level::Thread
                          : w.level == Level::Block ? Level::Warp
                                                    : Level::Thread;
      return perChunk(x, n.size, [&](const Words& c) { return refSteps(w.at(inner), n.kids, c); });
    }
    case Op::Histogram: {
      require(n.bins > 0, "no bins");
      Words y(n.bins, 0);
      for (uint32_t v : x) ++y[v % n.bins];
      return y;
    }
    case Op::FloatBits: {
      Words y(len);
      for (size_t i = 0; i < len; ++i)
        y[i] = floatBitsOp(n.fn, n.specials, n.constant, n.constantHigh, x[i]);
      return y;
    }
    case Op::FloatScan: {
      using FW = FloatWorld<uint32_t>;
      if (n.fn >= kFloatScanOps) {
        Words y(len);
        for (size_t i = 0; i < len; ++i) y[i] = FW::bits(floatIn(n.specials, x[i]));
        return y;
      }
      return perChunk(x, n.size, [&](const Words& c) {
        Words y(c.size());
        RefF32 acc = floatIn(n.specials, c[0]);
        y[0] = FW::bits(acc);
        for (size_t i = 1; i < c.size(); ++i) {
          acc = floatScanOp<uint32_t>(n.fn, acc, floatIn(n.specials, c[i]));
          y[i] = FW::bits(acc);
        }
        return y;
      });
    }
    case Op::BitsMap: {
      Words y(len);
      for (size_t i = 0; i < len; ++i) y[i] = bitsOp(n.fn, n.constant, x[i]);
      return y;
    }
    case Op::SmallFloatMap:
    case Op::SmallFloatForce: {
      require(n.format < 2, "a small float step of another format");
      Words y(len);
      for (size_t i = 0; i < len; ++i) {
        y[i] = n.op == Op::SmallFloatMap ? smallFloatMap(n.fn, n.format, n.constant, x[i])
               : n.format == 0           ? smallForceWord<obsidian::Half>(n.fn, x[i])
                                         : smallForceWord<obsidian::BFloat16>(n.fn, x[i]);
      }
      return y;
    }
    case Op::PairMap: {
      require(n.format < 2, "a pair step of another format");
      Words y(len);
      for (size_t i = 0; i < len; ++i) y[i] = pairMapRef(n.fn, n.format, n.constant, x[i]);
      return y;
    }
    case Op::WarpVote:
      require(collectiveFits(w, n, len), "a warp vote's shape rules do not hold");
      return refWarpVote(n, x);
    case Op::ThreadItems:
      require(collectiveFits(w, n, len), "a thread array's shape rules do not hold");
      return refThreadItems(n, x);
    case Op::BlockRadixSort:
      require(collectiveFits(w, n, len), "a block radix sort's shape rules do not hold");
      return refBlockRadixSort(n, x);
    case Op::BlockDiscontinuity:
      require(collectiveFits(w, n, len), "a block discontinuity's shape rules do not hold");
      return refBlockDiscontinuity(n, x);
    case Op::BlockMergeSort:
      require(collectiveFits(w, n, len), "a block merge sort's shape rules do not hold");
      return refBlockMergeSort(n, x);
    case Op::NarrowMap:
    case Op::NarrowForce: {
      require(n.width == 8 || n.width == 16, "a narrow step of another width");
      const uint32_t mask = n.width == 8 ? 0xffu : 0xffffu;
      Words y(len);
      for (size_t i = 0; i < len; ++i) {
        y[i] = n.op == Op::NarrowMap ? narrowMap(n.fn, n.constant, n.width, x[i])
               : n.zipped            ? (x[i] & mask) + x[i]
                                     : x[i] & mask;
      }
      return y;
    }
    default: break;
  }
  throw std::logic_error("fuzz: unknown op");
}

Words refSteps(const Where& where, const std::vector<Node>& ops, Words x) {
  Where w = where;
  for (const Node& n : ops) {
    x = refStep(w, n, x);
    w.direct = false;
    require(!x.empty(), "an empty array");
  }
  return x;
}

// acc's words before the kernel runs.
Words accBefore(const Recipe& r, size_t n) {
  std::mt19937_64 rng(r.dataSeed ^ 0xbf58476d1ce4e5b9ull);
  Words v(n);
  for (uint32_t& x : v) x = static_cast<uint32_t>(rng());
  return v;
}

// The blocks' results, one array each (Flat: the grid-level array as one).
std::vector<Words> blockResults(const Recipe& r, const Words& g) {
  // The collectives' vectorized loads read the input's words directly.
  const Where block{Level::Block, r.threads, r.altThreads,
                    untouchedInput(r) && r.elem == 32 && r.vector == 0};
  std::vector<Words> ys;
  switch (r.grid) {
    case Shape::SplitUp:
      // perChunk's rules (non-empty results of one length), each result kept.
      perChunk(g, r.chunk, [&](const Words& c) {
        ys.push_back(refSteps(block, r.body, c));
        return ys.back();
      });
      return ys;
    case Shape::Coalesce: {
      require(g.size() % r.chunk == 0, "coalesce size does not divide the input");
      const size_t s = g.size() / r.chunk;
      for (size_t i = 0; i < s; ++i) {
        Words c(r.chunk);
        for (size_t j = 0; j < r.chunk; ++j) c[j] = g[i + s * j];
        ys.push_back(refSteps(block, r.body, c));
      }
      return ys;
    }
    case Shape::Flat: return {g};
  }
  return {g};
}

Words concatenated(const std::vector<Words>& ys) {
  Words out;
  for (const Words& y : ys) out.insert(out.end(), y.begin(), y.end());
  return out;
}

// What the vector-store output holds for the words y of one block (Flat: the grid-level
// array): vector j's lane k the value of y[j * W + (k + rotation) % W], the tail's values in
// order, each as its bits (see StoreForm; pieces of Threads and Warps are whole vectors).
Words storedWords(const Recipe& r, const Words& y) {
  const size_t w = r.storeWidth, whole = y.size() / w * w;
  Words out(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    const size_t from = i < whole ? i - i % w + (i % w + r.storeRotate) % w : i;
    out[i] = storeBits(r.storeType, y[from]);
  }
  return out;
}

// Fused part f of one block's result y (see PartKind).
Words refPart(const Recipe& r, const FusedPart& f, const Words& y) {
  if (f.kind == PartKind::Map) {
    Words z(y.size());
    for (size_t i = 0; i < y.size(); ++i) z[i] = unaryOp(f.a, f.b, y[i]);
    return z;
  }
  if (r.fusedThread > 0) {
    return perChunk(y, r.fusedThread, [&](const Words& c) {
      if (f.kind == PartKind::Reduce) return Words{fold(f.a, c)};
      Words z(c);
      for (size_t i = 1; i < z.size(); ++i) z[i] = binaryOp(f.a, z[i - 1], z[i]);
      return z;
    });
  }
  const Node n = partNode(f);
  require(collectiveFits(Where{Level::Block, r.threads, r.altThreads, false}, n, y.size()),
          "a fused part's shape rules do not hold");
  if (f.kind == PartKind::Scan) return refCollective(n, y);
  uint32_t acc = y[0];
  for (size_t i = 1; i < y.size(); ++i) acc = collectiveWord(f.c, acc, y[i]);
  return Words{acc};
}

// The parts of a fused output over the blocks' results ys: ys concatenated, then each part's
// arrays concatenated.
std::vector<Words> refFused(const Recipe& r, const std::vector<Words>& ys) {
  std::vector<Words> parts{concatenated(ys)};
  for (const FusedPart& f : r.fused) {
    require(f.kind != PartKind::Map || f.a < kUnaryOps, "a map of another operator");
    Words part;
    for (const Words& y : ys) {
      if (r.fusedThread > 0) {
        require(y.size() % r.fusedThread == 0, "the threads' pieces do not divide the result");
      }
      const Words z = refPart(r, f, y);
      part.insert(part.end(), z.begin(), z.end());
    }
    parts.push_back(std::move(part));
  }
  return parts;
}
}  // namespace

size_t inputLength(const Recipe& r) {
  if (r.matrix) {
    size_t n = 0;
    for (const MatrixInput& m : r.matrix->inputs) n += size_t{m.rows} * m.pitch;
    return n;
  }
  return static_cast<size_t>(r.chunk) * r.blocks * (r.gridZip ? 2 : 1) +
         (r.gridZip && r.oddInput ? 1 : 0);
}

std::vector<uint32_t> inputFor(const Recipe& r) {
  std::mt19937_64 rng(r.dataSeed);
  std::vector<uint32_t> v(inputLength(r));
  if (r.matrix) {
    // Each matrix's elements (the ones past the cols in each row too) below 2^elem.
    size_t k = 0;
    for (const MatrixInput& m : r.matrix->inputs) {
      const uint32_t mask = m.elem >= 32 ? 0xffffffffu : (1u << m.elem) - 1;
      for (size_t i = 0; i < size_t{m.rows} * m.pitch; ++i) {
        v[k++] = static_cast<uint32_t>(rng()) & mask;
      }
    }
    return v;
  }
  const uint32_t mask = r.elem >= 32 ? 0xffffffffu : (1u << r.elem) - 1;
  for (uint32_t& x : v) x = static_cast<uint32_t>(rng()) & mask;
  return v;
}

std::vector<Words> reference(const Recipe& r, const Words& in) {
  if (r.matrix) return matrixReference(r, in);
  if (r.divisor != Divisor::None) {
    require(r.divisorValue > 0 && inputLength(r) % r.divisorValue == 0,
            "d does not divide the input's length");
    require(r.divisor != Divisor::Length || (!r.staticInput && !directLoads(r)),
            "a divided length over a static input or the input's own loads");
  }
  require(r.chunk > 0 && r.blocks > 0 && r.threads > 0 && r.altThreads > 0, "empty launch");
  require(r.realBlocks > 0, "no real blocks");
  require(r.elem == 8 || r.elem == 16 || r.elem == 32, "an input of another width");
  // vectors<W>: W a power of two of at least 2 elements and at most 16 bytes, over chunks that
  // start at multiples of W.
  require(r.vector == 0 || (pow2(r.vector) && r.vector >= 2 && r.vector * r.elem <= 128 &&
                            untouchedInput(r) && r.chunk % r.vector == 0),
          "vectors<W> that do not fit");
  require(r.result == Result::Output || r.grid != Shape::Flat, "an effect needs block programs");
  require(r.accSlots > 0, "no atomic slots");
  Words g(in);
  if (r.gridMap) {
    for (uint32_t& x : g) x = unaryOp(r.gridA, r.gridB, x);
  }
  if (r.gridZip) {
    const size_t h = g.size() / 2;
    Words z(h);
    for (size_t i = 0; i < h; ++i) z[i] = binaryOp(r.gridA, g[i], g[h + i]);
    g = z;
  }
  require(r.fused.size() <= 2, "more than two fused parts");
  require(r.fused.empty() || r.grid != Shape::Flat, "fused parts need block programs");
  require(r.fused.empty() || r.result == Result::Output || r.gridOutput,
          "an effect's fused parts need the grid-level output they stand in for");
  const std::vector<Words> ys = blockResults(r, g);
  const Words out = concatenated(ys);
  require(storeFits(r, ys.empty() ? 0 : ys.front().size()), "a vector store that does not fit");
  std::vector<Words> args;
  if (r.globalBins > 0) {
    require(r.grid != Shape::Flat, "global bins need block programs");
    Words bins(r.globalBins, 0);
    for (uint32_t v : out) ++bins[v % r.globalBins];
    args.push_back(bins);
  }
  // The grid-level output, fused with parts over its chunks where an effect stands beside it.
  std::vector<Words> grid{g};
  if (!r.fused.empty() && r.result != Result::Output) {
    std::vector<Words> chunks;
    perChunk(g, r.chunk, [&](const Words& c) {
      chunks.push_back(c);
      return c;
    });
    grid = refFused(r, chunks);
  }
  if (r.gridOutput && r.gridFirst && r.result == Result::Output) {
    args.insert(args.end(), grid.begin(), grid.end());
  }
  switch (r.result) {
    case Result::Output:
      if (r.store != StoreForm::None) {
        Words stored;
        for (const Words& y : ys) {
          const Words z = storedWords(r, y);
          stored.insert(stored.end(), z.begin(), z.end());
        }
        args.push_back(std::move(stored));
      } else if (r.fused.empty()) {
        args.push_back(out);
      } else {
        for (Words& part : refFused(r, ys)) args.push_back(std::move(part));
      }
      break;
    case Result::EffectWrite: {
      // The blocks' results one after the other, then the spare elements as they were.
      Words acc = accBefore(r, out.size() + r.accSpare);
      std::copy(out.begin(), out.end(), acc.begin());
      args.push_back(acc);
      break;
    }
    case Result::EffectAtomic: {
      // y[i] of every block into slot i % accSlots, in any order.
      const size_t m = out.size() / (g.size() / r.chunk);
      Words acc = accBefore(r, r.accSlots);
      for (size_t j = 0; j < out.size(); ++j) {
        uint32_t& slot = acc[(j % m) % r.accSlots];
        slot = accWord(r.accOp, slot, out[j]);
      }
      args.push_back(acc);
      break;
    }
  }
  if (r.gridOutput && !(r.gridFirst && r.result == Result::Output)) {
    args.insert(args.end(), grid.begin(), grid.end());
  }
  return args;
}

std::vector<Words> argumentsBefore(const Recipe& r, const std::vector<Words>& after) {
  std::vector<Words> before;
  size_t k = 0;
  if (r.globalBins > 0) before.emplace_back(after[k++].size(), 0u);
  if (r.result != Result::Output) before.push_back(accBefore(r, after[k++].size()));
  for (; k < after.size(); ++k) before.emplace_back(after[k].size(), 0xdeadbeefu);
  return before;
}

}  // namespace fuzz
