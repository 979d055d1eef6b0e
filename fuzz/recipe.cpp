// Generation, the reference semantics, C++ source printing and shrinking of recipes.
#include "recipe.hpp"

#include <functional>
#include <map>
#include <sstream>

#include "scalar_ops.hpp"

namespace fuzz {

namespace {

using Words = std::vector<uint32_t>;

void require(bool holds, const char* what) {
  if (!holds) throw InvalidRecipe(what);
}

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

// Where a list of steps runs: its level, the block's thread counts (both configurations'), and
// whether its input is still the kernel's input read directly (the first step of the block
// body of a splitUp grid over the untouched input: what vectorized loads need).
struct Where {
  Level level = Level::Block;
  uint32_t threads = 0, altThreads = 0;
  bool direct = false;
  Where at(Level l) const { return Where{l, threads, altThreads, false}; }
};

Words refSteps(const Where& w, const std::vector<Node>& ops, Words x);

// The collectives' rules, shared by the generator and the reference (which rejects a shrunk
// recipe that breaks one).
bool pow2(uint32_t n) { return n != 0 && (n & (n - 1)) == 0; }
bool reduceFits(uint32_t alg, uint32_t n, uint32_t threads) {
  switch (alg) {
    case 0:
    case 1:
    case 2: return pow2(n);  // red1, red2, red3
    case 3:
    case 4: return n % 8 == 0 && pow2(n / 8);  // red4, red5
    case 5: return n % 16 == 0 && pow2(n / 16);
    case 6: return n % 32 == 0 && pow2(n / 32);
    case 7:  // warpShuffle: a multiple of the block, whose warps are a power of two
      return threads % 32 == 0 && threads <= 1024 && pow2(threads / 32) && n % threads == 0;
    default: return false;
  }
}
bool scanFits(uint32_t alg, uint32_t n, uint32_t threads) {
  switch (alg) {
    case 0:
    case 3: return pow2(n);  // sklansky, koggeStone
    case 1:
    case 2: return pow2(n) && n >= 2;  // sklansky2, sklansky3: two elements per thread
    case 4:                            // threadSequential: a multiple of the block (of warps)
      return threads % 32 == 0 && threads <= 1024 && n % threads == 0;
    default: return false;
  }
}
bool loadStoreFits(uint32_t load, uint32_t store, uint32_t n, uint32_t threads, bool direct) {
  if (load > 3 || store > 2 || threads == 0 || n % threads != 0) return false;
  const uint32_t items = n / threads;
  // warpStriped: a block of whole warps (a library defect before: see test_fuzz_found.cpp).
  if ((load == 2 || store == 2) && threads % 32 != 0) return false;
  return load != 3 || (items % 4 == 0 && direct);  // vectorized: 16-byte loads of the input
}
// Whether collective step n fits an array of length len where w is.
bool collectiveFits(const Where& w, const Node& n, size_t len) {
  if (len == 0 || len > 0xffffffffu) return false;
  const uint32_t m = static_cast<uint32_t>(len);
  const bool block = w.level == Level::Block, warp = w.level == Level::Warp;
  const bool op = n.c < kCollectiveOps;
  switch (n.op) {
    case Op::BlockReduce:
      // Only red1 keeps the order of its elements: the others need a commutative operator.
      return block && (n.c < kCommutativeOps || (op && n.a == 0)) &&
             reduceFits(n.a, m, w.threads) && reduceFits(n.a, m, w.altThreads);
    case Op::BlockScan:
      return block && op && n.b <= 1 && scanFits(n.a, m, w.threads) &&
             scanFits(n.a, m, w.altThreads);
    case Op::BlockLoadStore:
      return block && loadStoreFits(n.a, n.b, m, w.threads, w.direct) &&
             loadStoreFits(n.a, n.b, m, w.altThreads, w.direct);
    case Op::BlockHistogram: return block && n.a <= 5 && n.b >= 1 && n.b <= 64 && n.c < n.d;
    case Op::WarpReduce: return warp && n.c < kCommutativeOps && pow2(m) && m <= 32;
    case Op::WarpScan: return warp && op && n.b <= 1 && m == 32;
    case Op::WarpExchange: return warp && m % 32 == 0;
    default: return false;
  }
}

Words refCollective(const Node& n, const Words& x) {
  const size_t len = x.size();
  switch (n.op) {
    case Op::BlockReduce:
    case Op::WarpReduce: {
      uint32_t r = x[0];
      for (size_t i = 1; i < len; ++i) r = collectiveWord(n.c, r, x[i]);
      Words y(x);
      for (uint32_t& v : y) v += r;
      return y;
    }
    case Op::BlockScan:
    case Op::WarpScan: {
      // Inclusive: y[i] = x[0] op ... op x[i]; exclusive (b = 1): the identity, then the
      // inclusive prefixes of x[0 .. i - 1].
      const bool exclusive = n.b == 1;
      Words y(len);
      uint32_t acc = x[0];
      for (size_t i = 0; i < len; ++i) {
        if (i > 0) acc = collectiveWord(n.c, acc, x[i]);
        if (exclusive) {
          if (i + 1 < len) y[i + 1] = acc;
        } else {
          y[i] = acc;
        }
      }
      if (exclusive) y[0] = collectiveIdentity(n.c);
      return y;
    }
    case Op::BlockLoadStore:
    case Op::WarpExchange: return x;
    case Op::BlockHistogram: {
      // Even bins over [c, d): x - c (modulo 2^32) below the range d - c counts, in bin
      // floor((x - c) * bins / range).
      Words y(n.b, 0);
      const uint32_t range = n.d - n.c;
      for (uint32_t v : x) {
        const uint32_t dist = v - n.c;
        if (dist < range) ++y[static_cast<size_t>(uint64_t{dist} * n.b / range)];
      }
      return y;
    }
    default: break;
  }
  throw std::logic_error("fuzz: not a collective");
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
      for (size_t i = 0; i < len; ++i) y[i] = unaryOp(n.a, n.b, x[i]);
      return y;
    }
    case Op::FloatMap: {
      Words y(len);
      for (size_t i = 0; i < len; ++i) y[i] = floatOp(n.a, n.b, x[i]);
      return y;
    }
    case Op::AddIndex: {
      Words y(len);
      for (size_t i = 0; i < len; ++i) y[i] = x[i] + static_cast<uint32_t>(i) * n.b;
      return y;
    }
    case Op::ZipHalves: {
      Words y(half);
      for (size_t i = 0; i < half; ++i) y[i] = binaryOp(n.a, x[i], x[half + i]);
      return y;
    }
    case Op::ZipEvenOdds: {
      Words y(half);
      for (size_t i = 0; i < half; ++i) y[i] = binaryOp(n.a, x[2 * i], x[2 * i + 1]);
      return y;
    }
    case Op::Rotate:
    case Op::ConcP: {
      const size_t k = n.op == Op::Rotate ? n.b : half;
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
      Words y(n.b, x.front());
      y.push_back(x.back());
      return y;
    }
    case Op::Load: require(n.b > 0 && len % n.b == 0, "load size does not divide"); return x;
    case Op::Take:
      require(n.b <= len, "takeP beyond the length");
      return Words(x.begin(), x.begin() + n.b);
    case Op::ForceZip: {
      Words y(half);
      for (size_t i = 0; i < half; ++i) y[i] = binaryOp(n.a, x[i], x[half + i]);
      return y;
    }
    case Op::SplitFold:
    case Op::SeqReduce:
      return perChunk(x, n.b, [&](const Words& c) { return Words{fold(n.a, c)}; });
    case Op::CoalesceFold: {
      require(n.b > 0 && len % n.b == 0, "coalesce size does not divide the length");
      const size_t s = len / n.b;
      Words y(s);
      for (size_t i = 0; i < s; ++i) {
        Words c(n.b);
        for (size_t j = 0; j < n.b; ++j) c[j] = x[i + s * j];
        y[i] = fold(n.a, c);
      }
      return y;
    }
    case Op::SeqScan:
      return perChunk(x, n.b, [&](const Words& c) {
        Words y(c);
        for (size_t i = 1; i < y.size(); ++i) y[i] = binaryOp(n.a, y[i - 1], y[i]);
        return y;
      });
    case Op::BinSplit:
      require(n.b < 32 && len % (size_t{1} << n.b) == 0, "binSplit parts do not divide");
      return perChunk(x, static_cast<uint32_t>(len >> n.b),
                      [&](const Words& c) { return refSteps(w.at(w.level), n.kids, c); });
    case Op::Force: return x;
    case Op::Iterate: {
      Words y(x);
      for (uint32_t& s : y) {
        if (n.a == 0) {
          for (uint32_t i = 0; i < n.b; ++i) s = s * 3u + i;
        } else {
          while (s > n.b) s >>= 1u;
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
      return perChunk(x, n.b, [&](const Words& c) { return refSteps(w.at(inner), n.kids, c); });
    }
    case Op::Histogram: {
      require(n.b > 0, "no bins");
      Words y(n.b, 0);
      for (uint32_t v : x) ++y[v % n.b];
      return y;
    }
    case Op::FloatBits: {
      Words y(len);
      for (size_t i = 0; i < len; ++i) y[i] = floatBitsOp(n.a, n.c, n.b, n.d, x[i]);
      return y;
    }
    case Op::FloatScan: {
      using FW = FloatWorld<uint32_t>;
      if (n.a >= kFloatScanOps) {
        Words y(len);
        for (size_t i = 0; i < len; ++i) y[i] = FW::bits(floatIn(n.c, x[i]));
        return y;
      }
      return perChunk(x, n.b, [&](const Words& c) {
        Words y(c.size());
        RefF32 acc = floatIn(n.c, c[0]);
        y[0] = FW::bits(acc);
        for (size_t i = 1; i < c.size(); ++i) {
          acc = floatScanOp<uint32_t>(n.a, acc, floatIn(n.c, c[i]));
          y[i] = FW::bits(acc);
        }
        return y;
      });
    }
    case Op::NarrowMap:
    case Op::NarrowForce: {
      require(n.c == 8 || n.c == 16, "a narrow step of another width");
      const uint32_t mask = n.c == 8 ? 0xffu : 0xffffu;
      Words y(len);
      for (size_t i = 0; i < len; ++i) {
        y[i] = n.op == Op::NarrowMap ? narrowMap(n.a, n.b, n.c, x[i])
               : n.a == 0            ? x[i] & mask
                                     : (x[i] & mask) + x[i];
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

// ------------------------------------------------------------------ generation
class Generator {
 public:
  explicit Generator(std::mt19937_64& rng) : rng_(rng) {}

  // Whether a Warp program was made: those need a whole number of warps per block.
  bool usesWarps = false;
  // Whether a collective depends on the block's thread count (then both thread counts stay).
  bool threadBound = false;

  // From now on, each step of a Block or Warp body is a collective now and then, drawn from a
  // stream of its own seeded by `seed`: a recipe that draws none is the one the generator made
  // before the collectives existed. `block` says where the block body runs (thread counts,
  // and whether it reads the input directly).
  uint32_t threads() const { return block_.threads; }
  uint32_t altThreads() const { return block_.altThreads; }

  void enableCollectives(uint64_t seed, const Where& block) {
    collectives_.seed(seed ^ 0x5851f42d4c957f2dull);
    collectivesOn_ = true;
    block_ = block;
  }

  uint32_t below(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }
  bool chance(uint32_t percent) { return below(100) < percent; }
  template <class T>
  T pick(const std::vector<T>& v) {
    return v[below(static_cast<uint32_t>(v.size()))];
  }

  // A divisor of n in [lo, hi], or 0 if there is none.
  uint32_t divisor(uint32_t n, uint32_t lo, uint32_t hi) {
    std::vector<uint32_t> ds;
    for (uint32_t d = lo; d <= std::min(n, hi); ++d) {
      if (n % d == 0) ds.push_back(d);
    }
    return ds.empty() ? 0 : pick(ds);
  }

  // Steps at `level` over an array of length n; n becomes the output length.
  std::vector<Node> body(Level level, uint32_t& n, int depth, bool pullOnly) {
    std::vector<Node> ops;
    const uint32_t count = 1 + below(depth == 0 ? 5 : 3);
    for (uint32_t s = 0; s < count; ++s) {
      if (collectivesOn_ && level != Level::Thread && !pullOnly &&
          collectives_() % 100 < kCollectivePercent) {
        Where w = block_.at(level);
        w.direct = level == Level::Block && depth == 0 && s == 0 && block_.direct;
        std::vector<Node> nodes;
        if (collective(w, n, nodes)) {
          for (Node& node : nodes) ops.push_back(std::move(node));
          narrowStep(pullOnly, ops);
          floatStep(pullOnly, n, ops);
          continue;
        }
      }
      for (int attempt = 0; attempt < 20; ++attempt) {
        uint32_t m = n;
        Node node;
        if (make(level, m, depth, pullOnly, node) && m > 0 && m <= maxLength(level)) {
          ops.push_back(std::move(node));
          n = m;
          break;
        }
      }
      narrowStep(pullOnly, ops);
      floatStep(pullOnly, n, ops);
    }
    return ops;
  }

  // From now on, a narrow step (NarrowMap, NarrowForce) follows a step now and then, drawn from
  // a stream of its own: they keep the length, so the other streams draw what they drew before.
  void enableNarrow(uint64_t seed) {
    narrow_.seed(seed ^ 0x94d049bb133111ebull);
    narrowOn_ = true;
  }
  // From now on, a float-bits step (FloatBits, FloatScan) follows a step now and then, drawn
  // from a stream of its own (they keep the length too).
  void enableFloats(uint64_t seed) {
    floats_.seed(seed ^ 0x61c8864680b583ebull);
    floatsOn_ = true;
  }

 private:
  static uint32_t maxLength(Level level) { return level == Level::Thread ? 32 : 2048; }

  // Percent of the steps of Block and Warp bodies that try to be a collective.
  static constexpr uint64_t kCollectivePercent = 20;
  uint32_t cBelow(uint32_t k) { return static_cast<uint32_t>(collectives_() % k); }

  // A Nest of warp programs over pieces of 32 x k elements, each starting with warp
  // collectives (after a Take where n is not a multiple of 32); n becomes its output's length.
  bool warpNest(const Where& w, uint32_t& n, std::vector<Node>& nodes) {
    if (n < 32 || w.threads % 32 != 0 || w.altThreads % 32 != 0) return false;
    std::vector<Node> out;
    uint32_t m = n;
    if (n % 32 != 0) {
      Node take;
      take.op = Op::Take;
      take.b = m = n - n % 32;
      out.push_back(take);
    }
    std::vector<uint32_t> pieces;
    for (uint32_t k = 1; k <= 16; ++k) {
      if ((m / 32) % k == 0) pieces.push_back(32 * k);
    }
    Node nest;
    nest.op = Op::Nest;
    nest.b = pieces[cBelow(static_cast<uint32_t>(pieces.size()))];
    uint32_t piece = nest.b;
    const uint32_t steps = 1 + cBelow(2);
    for (uint32_t s = 0; s < steps; ++s) collective(w.at(Level::Warp), piece, nest.kids);
    if (nest.kids.empty()) return false;
    out.push_back(nest);
    nodes.insert(nodes.end(), out.begin(), out.end());
    usesWarps = true;
    n = (m / nest.b) * piece;
    return true;
  }

  // A collective for an array of length n where w is (a few tries), after a Take step where n
  // does not fit it but a shorter length does, appended to nodes; n becomes its output's
  // length.
  bool collective(const Where& w, uint32_t& n, std::vector<Node>& nodes) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      Node node;
      if (w.level == Level::Block) {
        // The histogram fits any length: one in eight; warp collectives in a Nest: one in eight.
        const uint32_t k = cBelow(8);
        if (k == 7) {
          if (warpNest(w, n, nodes)) return true;
          continue;
        }
        node.op = static_cast<Op>(static_cast<uint32_t>(Op::BlockReduce) + (k < 6 ? k / 2 : 3));
      } else {
        // warpScan and the exchanges need 32 elements or more: they come first.
        const uint32_t k = cBelow(5);
        node.op =
            static_cast<Op>(static_cast<uint32_t>(Op::WarpReduce) + (k == 0 ? 0 : (k + 1) / 2));
      }
      uint32_t m = n;
      switch (node.op) {
        case Op::BlockReduce:
          node.a = cBelow(8);
          node.c = cBelow(node.a == 0 ? kCollectiveOps : kCommutativeOps);
          break;
        case Op::BlockScan:
          node.a = cBelow(5);
          node.b = cBelow(2);
          node.c = cBelow(kCollectiveOps);
          break;
        case Op::BlockLoadStore:
          node.a = cBelow(4);
          node.b = cBelow(3);
          break;
        case Op::BlockHistogram: {
          node.a = cBelow(6);
          node.b = 1 + cBelow(64);
          // Levels of every kind: from 0 or a random word, over a range of any size.
          const uint32_t fromZero = cBelow(3), lowShift = cBelow(32), rangeShift = cBelow(32);
          const uint64_t lower = collectives_(), range = collectives_();
          node.c = fromZero == 0 ? 0 : static_cast<uint32_t>(lower >> (32 + lowShift));
          const uint64_t room = uint64_t{0xffffffffu} - node.c;
          if (room == 0) continue;
          node.d = node.c + 1 + static_cast<uint32_t>((range >> rangeShift) % room);
          m = node.b;
          break;
        }
        case Op::WarpReduce: node.c = cBelow(kCommutativeOps); break;
        case Op::WarpScan:
          node.b = cBelow(2);
          node.c = cBelow(kCollectiveOps);
          break;
        default: break;
      }
      const bool bound = node.op == Op::BlockLoadStore ||
                         (node.op == Op::BlockReduce && node.a == 7) ||
                         (node.op == Op::BlockScan && node.a == 4);
      // The longest length up to n that fits (below n: takeP of the first elements). The first
      // collective that depends on the block's threads may choose both thread counts (among
      // those of a power-of-two number of warps that fit).
      uint32_t fit = n;
      for (; fit > 0; --fit) {
        Where at = w;
        at.direct = w.direct && fit == n;
        if (!bound || threadBound) {
          if (collectiveFits(at, node, fit)) break;
          continue;
        }
        // Blocks of part of a warp only where no Warp program needs whole warps (nor will).
        std::vector<uint32_t> counts, tries{32, 64, 96, 128, 192, 256, 512, 1024};
        if (!usesWarps) tries.insert(tries.end(), {8, 16, 48, 80, 100, 160});
        for (uint32_t t : tries) {
          at.threads = at.altThreads = t;
          if (collectiveFits(at, node, fit)) counts.push_back(t);
        }
        if (counts.empty()) continue;
        block_.threads = counts[cBelow(static_cast<uint32_t>(counts.size()))];
        block_.altThreads = counts[cBelow(static_cast<uint32_t>(counts.size()))];
        break;
      }
      if (fit == 0) continue;
      if (fit < n) {
        Node take;
        take.op = Op::Take;
        take.b = fit;
        nodes.push_back(take);
        if (node.op != Op::BlockHistogram) m = fit;
      }
      nodes.push_back(node);
      threadBound = threadBound || bound;
      n = m;
      return true;
    }
    return false;
  }

  bool make(Level level, uint32_t& n, int depth, bool pullOnly, Node& node) {
    const bool canNest = depth < 2;
    node.op = static_cast<Op>(below(kBasicOps));
    node.a = below(kBinaryOps);
    if (pullOnly && !isPullStep(node.op)) return false;
    switch (node.op) {
      case Op::Map:
        node.a = below(kUnaryOps);
        node.b = static_cast<uint32_t>(rng_());
        return true;
      case Op::AddIndex: node.b = below(1000); return true;
      case Op::FloatMap: node.b = below(1024); return true;
      case Op::ZipHalves:
      case Op::ZipEvenOdds:
      case Op::ForceZip: n /= 2; return n > 0;
      case Op::Rotate: node.b = below(n + 1); return true;
      case Op::ConcP: return n >= 2;
      case Op::Interleave: n = 2 * (n / 2); return n > 0;
      case Op::Ends:
        node.b = below(5);
        n = node.b + 1;
        return true;
      case Op::Load:
        if (level == Level::Thread) return false;
        node.b = divisor(n, 1, 16);
        return node.b != 0;
      case Op::Take:
        node.b = 1 + below(n);
        n = node.b;
        return true;
      case Op::Force: return true;
      case Op::SplitFold:
      case Op::CoalesceFold:
      case Op::SeqReduce:
        node.b = divisor(n, 2, 16);
        if (node.b == 0) return false;
        n /= node.b;
        return true;
      case Op::SeqScan: node.b = divisor(n, 2, 64); return node.b != 0;
      case Op::Iterate:
        node.a = below(2);
        node.b = node.a == 0 ? below(6) : static_cast<uint32_t>(rng_() >> 40);
        return true;
      case Op::BinSplit: {
        if (!canNest) return false;
        uint32_t k = 1 + below(3);
        while (k > 0 && n % (1u << k) != 0) --k;
        if (k == 0) return false;
        node.b = k;
        uint32_t m = n >> k;
        node.kids = body(level, m, depth + 1, true);
        n = m << k;
        return true;
      }
      case Op::Nest:
      case Op::ThreadNest:
      case Op::SeqNest: {
        if (!canNest) return false;
        if (node.op == Op::Nest && level == Level::Thread) return false;
        // A collective chose a block of part of a warp: no Warp programs.
        if (node.op == Op::Nest && level == Level::Block &&
            (block_.threads % 32 != 0 || block_.altThreads % 32 != 0)) {
          return false;
        }
        if (node.op == Op::ThreadNest && level == Level::Thread) return false;
        const Level inner = node.op == Op::SeqNest      ? level
                            : node.op == Op::ThreadNest ? Level::Thread
                            : level == Level::Block     ? Level::Warp
                                                        : Level::Thread;
        const uint32_t hi = inner == Level::Thread ? 16 : 512;
        node.b = divisor(n, node.op == Op::SeqNest ? std::max(1u, n / 8) : 1, hi);
        if (node.b == 0) return false;
        uint32_t m = node.b;
        node.kids = body(inner, m, depth + 1, false);
        n = (n / node.b) * m;
        usesWarps = usesWarps || inner == Level::Warp;
        return true;
      }
      case Op::Histogram:
        if (level == Level::Thread) return false;
        node.b = 1 + below(40);
        n = node.b;
        return true;
      default: return false;  // the collectives come from collective()
    }
    return false;
  }

  // Percent of the steps that a narrow step follows.
  static constexpr uint64_t kNarrowPercent = 6;
  void narrowStep(bool pullOnly, std::vector<Node>& ops) {
    if (!narrowOn_ || narrow_() % 100 >= kNarrowPercent) return;
    Node node;
    node.op = pullOnly || narrow_() % 2 == 0 ? Op::NarrowMap : Op::NarrowForce;
    node.c = narrow_() % 2 == 0 ? 8 : 16;
    if (node.op == Op::NarrowMap) {
      node.a = static_cast<uint32_t>(narrow_() % kNarrowOps);
      node.b = static_cast<uint32_t>(narrow_());
    } else {
      node.a = static_cast<uint32_t>(narrow_() % 2);
    }
    ops.push_back(node);
  }

  // Percent of the steps that a float-bits step follows.
  static constexpr uint64_t kFloatPercent = 4;
  uint32_t fBelow(uint32_t k) { return static_cast<uint32_t>(floats_() % k); }
  // An f32 literal's bits: quiet and signalling NaNs with payloads, the canonical NaN,
  // infinities, zeros, a denormal, normal numbers; both signs.
  uint32_t floatLiteral() {
    const uint32_t payload = static_cast<uint32_t>(floats_()), sign = fBelow(2) << 31;
    switch (fBelow(10)) {
      case 0:
      case 1: return sign | 0x7fc00000u | (payload & 0x3fffffu);
      case 2:
      case 3: return sign | 0x7f800000u | (1 + payload % 0x3fffffu);
      case 4: return 0x7fffffffu;
      case 5: return sign | 0x7f800000u;
      case 6: return sign;
      case 7: return sign | 1u;
      default: return sign | (0x3f000000u + payload % 0x2000000u);
    }
  }
  // The high word of an f64 literal (its low word is the f32 literal's bits).
  uint32_t doubleLiteralHigh() {
    const uint32_t payload = static_cast<uint32_t>(floats_()), sign = fBelow(2) << 31;
    switch (fBelow(8)) {
      case 0:
      case 1: return sign | 0x7ff80000u | (payload & 0x7ffffu);
      case 2:
      case 3: return sign | 0x7ff00000u | (payload & 0x7ffffu);
      case 4: return sign | 0x7ff00000u;
      case 5: return sign | (0x3fe00000u + payload % 0x400000u);
      case 6: return sign;
      default: return 0x7fffffffu;
    }
  }
  void floatStep(bool pullOnly, uint32_t n, std::vector<Node>& ops) {
    if (!floatsOn_ || floats_() % 100 >= kFloatPercent) return;
    Node node;
    node.op = pullOnly || fBelow(3) != 0 ? Op::FloatBits : Op::FloatScan;
    node.c = 1 + fBelow(8);
    if (node.op == Op::FloatBits) {
      node.a = fBelow(kFloatBitsOps);
      node.b = floatLiteral();
      node.d = doubleLiteralHigh();
    } else {
      node.a = fBelow(kFloatScanOps + 1);
      std::vector<uint32_t> pieces;
      for (uint32_t k = 1; k <= std::min(n, 64u); ++k) {
        if (n % k == 0) pieces.push_back(k);
      }
      node.b = pieces[fBelow(static_cast<uint32_t>(pieces.size()))];
    }
    ops.push_back(node);
  }

  std::mt19937_64& rng_;
  std::mt19937_64 collectives_;
  bool collectivesOn_ = false;
  std::mt19937_64 narrow_;
  bool narrowOn_ = false;
  std::mt19937_64 floats_;
  bool floatsOn_ = false;
  Where block_;
};

// ------------------------------------------------------------------ printing
class Printer {
 public:
  std::string out;
  uint32_t threads = 0;  // the block's threads (a collective's items per thread)

  void line(int indent, const std::string& s) { out += std::string(2 * indent, ' ') + s + "\n"; }
  std::string fresh(const char* prefix) { return prefix + std::to_string(counter_++); }

  static std::string u(uint32_t v) { return std::to_string(v) + "u"; }
  static std::string unaryLambda(uint32_t a, uint32_t b) {
    return "[](const EWord32& x) { return " + unaryText(a, b) + "; }";
  }
  static std::string binaryLambda(uint32_t a) {
    return "[](const EWord32& a, const EWord32& b) { return " + binaryText(a) + "; }";
  }

  // Prints the steps; returns the name of the result.
  std::string steps(int ind, Level level, const std::string& p, const std::vector<Node>& ops,
                    std::string x) {
    for (const Node& n : ops) x = step(ind, level, p, n, x);
    return x;
  }

  // Prints the end of block program p: its result y fused with r's parts, returned. Each part
  // is a local of its own, made in order (as build.cpp makes them).
  void fusedReturn(int ind, const Recipe& r, const std::string& p, std::string y) {
    if (r.fusedForce) {
      const std::string forced = fresh("a");
      line(ind, "const SPull<EWord32> " + forced + " = forcePull(" + p + ", " + y + ");");
      y = forced;
    }
    if (r.fusedThread == 0) {
      const std::vector<std::string> parts = fusedParts(ind, r, "Block", p, y);
      line(ind, "return " + fuseText(r, "push<Block>(" + y + ")", parts) + ";");
      return;
    }
    const std::string c = fresh("c");
    line(ind, "return tConcat<Block>(fmap(");
    line(ind + 1, "[](const SPull<EWord32>& " + c + ") {");
    const std::vector<std::string> parts = fusedParts(ind + 2, r, "Thread", "", c);
    line(ind + 2, "return " + fuseText(r, "push<Thread>(" + c + ")", parts) + ";");
    line(ind + 1, "},");
    line(ind + 1, "splitUp(" + u(r.fusedThread) + ", " + y + ")));");
  }

 private:
  static constexpr const char* kReduceAlgs[] = {"Red1", "Red2", "Red3", "Red4",
                                                "Red5", "Red6", "Red7", "WarpShuffle"};
  static constexpr const char* kScanAlgs[] = {"Sklansky", "Sklansky2", "Sklansky3", "KoggeStone",
                                              "ThreadSequential"};

  // Prints r's fused parts over y at level L (Block or Thread) as locals; returns their names.
  std::vector<std::string> fusedParts(int ind, const Recipe& r, const std::string& L,
                                      const std::string& p, const std::string& y) {
    std::vector<std::string> names;
    for (const FusedPart& f : r.fused) {
      std::string what;
      switch (f.kind) {
        case PartKind::Map:
          what = "push<" + L + ">(fmap(" + unaryLambda(f.a, f.b) + ", " + y + "))";
          break;
        case PartKind::Reduce:
          if (L == "Thread") {
            what = "seqReduce(" + binaryLambda(f.a) + ", " + y + ")";
          } else {
            const std::string q = fresh("q");
            what = "singletonPush<Block>([" + y + "](const Program<Block>& " + q +
                   ") { return blockReduce(BlockReduceAlgorithm::" + kReduceAlgs[f.a % 8] + ", " +
                   q + ", " + collectiveText(f.c) + ", " + y + "); })";
          }
          break;
        case PartKind::Scan:
          what = L == "Thread"
                     ? "seqScan(" + binaryLambda(f.a) + ", " + y + ")"
                     : "blockScan(BlockScanAlgorithm::" + std::string(kScanAlgs[f.a % 5]) + ", " +
                           p + ", " + collectiveText(f.c) + ", " + y + ")";
          break;
      }
      names.push_back(fresh("part"));
      line(ind, "const auto " + names.back() + " = " + what + ";");
    }
    return names;
  }
  static std::string fuseText(const Recipe& r, const std::string& first,
                              const std::vector<std::string>& parts) {
    if (parts.size() == 2 && r.fusedNested) {
      return "fuse(fuse(" + first + ", " + parts[0] + "), " + parts[1] + ")";
    }
    std::string s = "fuse(" + first;
    for (const std::string& part : parts) s += ", " + part;
    return s + ")";
  }

  std::string step(int ind, Level level, const std::string& p, const Node& n,
                   const std::string& x) {
    const std::string L = levelName(level);
    const std::string y = fresh("a");
    const std::string def = "const SPull<EWord32> " + y + " = ";
    auto halves = [&](const std::string& fn) {
      const std::string lo = fresh("lo"), hi = fresh("hi");
      line(ind, "const auto [" + lo + ", " + hi + "] = " + fn + (fn.back() == ' ' ? "" : "(") + x +
                    ");");
      return std::make_pair(lo, hi);
    };
    auto nested = [&](const std::string& inner, const char* combine) {
      const std::string c = fresh("c"), q = fresh("q");
      line(ind, def + "force(" + p + ", " + combine + "(fmap(");
      line(ind + 1, "[](const SPull<EWord32>& " + c + ") {");
      line(ind + 2,
           "return exec<" + inner + ">([" + c + "](const Program<" + inner + ">& " + q + ") {");
      const Level il = inner == "Thread" ? Level::Thread
                       : inner == "Warp" ? Level::Warp
                                         : Level::Block;
      const std::string r = steps(ind + 3, il, q, n.kids, c);
      line(ind + 3, "return push<" + inner + ">(" + r + ");");
      line(ind + 2, "});");
      line(ind + 1, "},");
      line(ind + 1, "splitUp(" + u(n.b) + ", " + x + "))));");
    };
    auto tConcatOf = [&](const std::string& fn) {
      line(ind, def + "force(" + p + ", tConcat<" + L + ">(fmap(" + fn + ", " + x + ")));");
    };
    switch (n.op) {
      case Op::Map: line(ind, def + "fmap(" + unaryLambda(n.a, n.b) + ", " + x + ");"); break;
      case Op::FloatMap:
        line(ind, def + "fmap([](const EWord32& x) { return " + floatText(n.a, n.b) + "; }, " + x +
                      ");");
        break;
      case Op::AddIndex:
        line(ind, def + "mkPull(" + x + ".len(), [" + x + "](const EWord32& i) { return " + x +
                      "[i] + i * " + u(n.b) + "; });");
        break;
      case Op::ZipHalves:
      case Op::ZipEvenOdds: {
        const auto [lo, hi] = halves(n.op == Op::ZipHalves ? "halve" : "evenOdds");
        line(ind, def + "zipWith(" + binaryLambda(n.a) + ", " + lo + ", " + hi + ");");
        break;
      }
      case Op::Rotate: {
        const auto [lo, hi] = halves(("splitAt(" + u(n.b) + ", ").c_str());
        line(ind, def + "conc(" + hi + ", " + lo + ");");
        break;
      }
      case Op::Interleave: {
        const auto [lo, hi] = halves("halve");
        line(ind, def + "upair(zip(" + lo + ", " + hi + "));");
        break;
      }
      case Op::Ends:
        line(ind, def + "conc(replicate(" + u(n.b) + ", first(" + x + ")), singleton(last(" + x +
                      ")));");
        break;
      case Op::Load:
        line(ind, def + "force(" + p + ", load<" + L + ">(" + u(n.b) + ", " + x + "));");
        break;
      case Op::Take:
        line(ind, def + "force(" + p + ", takeP(" + u(n.b) + ", push<" + L + ">(" + x + ")));");
        break;
      case Op::ForceZip: {
        const auto [lo, hi] = halves("halve");
        const std::string lo2 = fresh("lo"), hi2 = fresh("hi");
        line(ind, "const auto [" + lo2 + ", " + hi2 + "] = unzip(forcePull(" + p + ", zip(" + lo +
                      ", " + hi + ")));");
        line(ind, def + "zipWith(" + binaryLambda(n.a) + ", " + lo2 + ", " + hi2 + ");");
        break;
      }
      case Op::ConcP: {
        const auto [lo, hi] = halves("halve");
        line(ind, def + "force(" + p + ", concP(push<" + L + ">(" + hi + "), push<" + L + ">(" +
                      lo + ")));");
        break;
      }
      case Op::SplitFold:
      case Op::CoalesceFold:
        line(ind, def + "fmap([](const SPull<EWord32>& c) { return foldPull1(" + binaryLambda(n.a) +
                      ", c); }, " + (n.op == Op::SplitFold ? "splitUp(" : "coalesce(") + u(n.b) +
                      ", " + x + "));");
        break;
      case Op::BinSplit: {
        const std::string part = fresh("part");
        line(ind, def + "binSplit(" + u(n.b) + ", [](const SPull<EWord32>& " + part + ") {");
        const std::string r = steps(ind + 1, level, p, n.kids, part);
        line(ind + 1, "return " + r + ";");
        line(ind, "}, " + x + ");");
        break;
      }
      case Op::Force: line(ind, def + "forcePull(" + p + ", " + x + ");"); break;
      case Op::SeqReduce:
      case Op::SeqScan:
        line(ind, def + "force(" + p + ", tConcat<" + L + ">(fmap([](const SPull<EWord32>& c) {");
        line(ind + 1, std::string("return ") + (n.op == Op::SeqReduce ? "seqReduce(" : "seqScan(") +
                          binaryLambda(n.a) + ", c);");
        line(ind, "}, splitUp(" + u(n.b) + ", " + x + "))));");
        break;
      case Op::Iterate:
        if (n.a == 0) {
          tConcatOf("[](const EWord32& v) { return seqIterate(EWord32(" + u(n.b) +
                    "), [](const EWord32& i, const EWord32& s) { return s * 3u + i; }, v); }");
        } else {
          tConcatOf(
              "[](const EWord32& v) { return seqUntil([](const EWord32& s) { return s >> "
              "1u; }, [](const EWord32& s) { return s > " +
              u(n.b) + "; }, v); }");
        }
        break;
      case Op::Nest: nested(level == Level::Block ? "Warp" : "Thread", "pConcat"); break;
      case Op::ThreadNest: nested("Thread", ("tConcat<" + L + ">").c_str()); break;
      case Op::SeqNest: nested(L, "sConcat"); break;
      case Op::BlockReduce:
      case Op::WarpReduce: {
        const std::string r = fresh("r");
        line(ind, "const EWord32 " + r + " = " +
                      (n.op == Op::BlockReduce ? "blockReduce(BlockReduceAlgorithm::" +
                                                     std::string(kReduceAlgs[n.a % 8]) + ", "
                                               : std::string("warpReduce(")) +
                      p + ", " + collectiveText(n.c) + ", " + x + ");");
        line(ind,
             def + "fmap([" + r + "](const EWord32& v) { return v + " + r + "; }, " + x + ");");
        break;
      }
      case Op::BlockScan:
      case Op::WarpScan: {
        const std::string alg =
            n.op == Op::BlockScan ? "BlockScanAlgorithm::" + std::string(kScanAlgs[n.a % 5]) + ", "
                                  : "";
        const std::string scan = n.op == Op::BlockScan ? "block" : "warp";
        const std::string what =
            n.b == 1 ? scan + "ExclusiveScan(" + alg + p + ", " + collectiveText(n.c) +
                           ", EWord32(" + u(collectiveIdentity(n.c)) + "), " + x + ")"
                     : scan + "Scan(" + alg + p + ", " + collectiveText(n.c) + ", " + x + ")";
        line(ind, def + (n.op == Op::BlockScan ? "force(" : "forcePull(") + p + ", " + what + ");");
        break;
      }
      case Op::BlockLoadStore: {
        static const char* const algs[] = {"Direct", "Striped", "WarpStriped", "Vectorized"};
        const std::string items = fresh("items");
        line(ind, "const uint32_t " + items + " = " + x + ".len() / " + u(threads) + ";");
        line(ind, def + "force(" + p + ", blockStore(BlockLoadAlgorithm::" + algs[n.b % 4] + ", " +
                      p + ", " + items + ", blockLoad(BlockLoadAlgorithm::" + algs[n.a % 4] + ", " +
                      p + ", " + items + ", " + x + ")));");
        break;
      }
      case Op::WarpExchange: {
        const std::string items = fresh("items");
        line(ind, "const uint32_t " + items + " = " + x + ".len() / 32u;");
        line(ind, def + "force(" + p + ", warpStoreStriped(" + p + ", " + items +
                      ", warpLoadStriped(" + p + ", " + items + ", " + x + ")));");
        break;
      }
      case Op::BlockHistogram: {
        const std::string h = fresh("h");
        line(ind, "const SharedHistogram " + h + " = newSharedHistogram(" + p + ", " + u(n.b) +
                      ", " + u(1u << n.a) + ");");
        line(ind, "blockHistogram(" + p + ", " + h + ", evenBinning<uint32_t>(" + u(n.b) + ", " +
                      u(n.c) + ", " + u(n.d) + "), " + x + ");");
        line(ind, p + ".sync();");
        line(ind, def + "mkPull(" + u(n.b) + ", [" + h + "](const EWord32& b) { return binTotal(" +
                      h + ", b); });");
        break;
      }
      case Op::Histogram: {
        const std::string h = fresh("h");
        line(ind, "const SMutable<uint32_t> " + h + " = newShared<uint32_t>(" + p + ", " + u(n.b) +
                      ");");
        line(ind, p + ".forAll(" + u(n.b) + ", [&](const Program<Thread>& t, const EWord32& i) {" +
                      " write(t, " + h + ", i, 0u); });");
        line(ind, p + ".sync();");
        line(ind, p + ".forAll(" + x + ".len(), [&](const Program<Thread>& t, const EWord32& i) {" +
                      " atomicAdd(t, " + h + ", " + x + "[i] % " + u(n.b) + ", 1u); });");
        line(ind, p + ".sync();");
        line(ind, def + h + ".pull();");
        break;
      }
      case Op::NarrowMap:
        line(ind, def + "fmap(" + narrowMapText(n.a, n.b, n.c) + ", " + x + ");");
        break;
      case Op::FloatBits:
        line(ind, def + "fmap(" + floatBitsText(n.a, n.c, n.b, n.d) + ", " + x + ");");
        break;
      case Op::FloatScan: {
        const std::string floats = fresh("f");
        line(ind, "const SPull<EFloat> " + floats + " = fmap([](const EWord32& x) { return " +
                      floatInText(n.c) + "; }, " + x + ");");
        const std::string bitsOf = "[](const EFloat& f) { return bitcast<uint32_t>(f); }";
        if (n.a >= kFloatScanOps) {
          line(ind, def + "fmap(" + bitsOf + ", forcePull(" + p + ", " + floats + "));");
          break;
        }
        line(ind, def + "fmap(" + bitsOf + ", force(" + p + ", tConcat<" + L +
                      ">(fmap([](const SPull<EFloat>& c) {");
        line(ind + 1, "return seqScan(" + floatScanText(n.a) + ", c);");
        line(ind, "}, splitUp(" + u(n.b) + ", " + floats + ")))));");
        break;
      }
      case Op::NarrowForce: {
        const std::string bits = std::to_string(n.c), N = "EWord" + bits;
        const std::string narrow =
            "fmap([](const EWord32& w) { return w32ToW" + bits + "(w); }, " + x + ")";
        if (n.a == 0) {
          line(ind, def + "fmap([](const " + N + "& v) { return w" + bits +
                        "ToW32(v); }, forcePull(" + p + ", " + narrow + "));");
          break;
        }
        const std::string lo = fresh("lo"), hi = fresh("hi");
        line(ind, "const auto [" + lo + ", " + hi + "] = unzip(forcePull(" + p + ", zip(" + narrow +
                      ", " + x + ")));");
        line(ind, def + "zipWith([](const " + N + "& v, const EWord32& w) { return w" + bits +
                      "ToW32(v) + w; }, " + lo + ", " + hi + ");");
        break;
      }
    }
    return y;
  }

  int counter_ = 0;
};

void forEachNodeList(std::vector<Node>& ops, const std::function<void(std::vector<Node>&)>& f) {
  f(ops);
  for (Node& n : ops) forEachNodeList(n.kids, f);
}

size_t countNodes(const std::vector<Node>& ops) {
  size_t c = 0;
  for (const Node& n : ops) c += 1 + countNodes(n.kids);
  return c;
}

}  // namespace

bool isCollective(Op op) {
  return static_cast<uint32_t>(op) >= kBasicOps && op <= Op::WarpExchange;
}
bool isNarrow(Op op) { return op == Op::NarrowMap || op == Op::NarrowForce; }
bool isFloatBits(Op op) { return op == Op::FloatBits || op == Op::FloatScan; }

bool isPullStep(Op op) {
  switch (op) {
    case Op::Map:
    case Op::AddIndex:
    case Op::ZipHalves:
    case Op::ZipEvenOdds:
    case Op::Rotate:
    case Op::SplitFold:
    case Op::CoalesceFold:
    case Op::BinSplit:
    case Op::Interleave:
    case Op::Ends:
    case Op::FloatMap:
    case Op::NarrowMap:
    case Op::FloatBits: return true;
    default: return false;
  }
}

std::string levelName(Level l) {
  switch (l) {
    case Level::Thread: return "Thread";
    case Level::Warp: return "Warp";
    case Level::Block: return "Block";
  }
  return "?";
}

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

namespace {
// Whether a block reads the input's global array directly as vectors (vectors<W>, or a
// vectorized blockLoad): then the input must stay the parameter itself.
bool directLoads(const Recipe& r) {
  bool vectorized = r.vector != 0;
  std::vector<Node> body = r.body;
  forEachNodeList(body, [&](std::vector<Node>& ops) {
    for (const Node& n : ops) vectorized = vectorized || (n.op == Op::BlockLoadStore && n.a == 3);
  });
  return vectorized;
}

// Whether the blocks' chunks are pieces of the input itself (splitUp, no grid-level step).
bool untouchedInput(const Recipe& r) {
  return r.grid == Shape::SplitUp && !r.gridMap && !r.gridZip;
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

// A fused part's collective as the collectives' node (its shape rules are theirs).
Node partNode(const FusedPart& f) {
  Node n;
  n.op = f.kind == PartKind::Reduce ? Op::BlockReduce : Op::BlockScan;
  n.a = f.a;
  n.c = f.c;
  return n;
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

// ------------------------------------------------------------------ matrices
namespace {

// A dense row-major matrix of words: the reference's matrices.
struct Mat {
  uint32_t rows = 0, cols = 0;
  Words v;
  Mat() = default;
  Mat(uint32_t r, uint32_t c) : rows(r), cols(c), v(size_t{r} * c) {}
  uint32_t& at(uint32_t r, uint32_t c) { return v[size_t{r} * cols + c]; }
  uint32_t at(uint32_t r, uint32_t c) const { return v[size_t{r} * cols + c]; }
};

Mat refMatrixExpr(const MExpr& e, const std::vector<Mat>& ins) {
  switch (e.kind) {
    case MExprKind::Input:
      require(e.a < ins.size() && e.kids.empty(), "a matrix input the kernel does not have");
      return ins[e.a];
    case MExprKind::Map: {
      require(e.kids.size() == 1, "a matrix map of other than one matrix");
      Mat x = refMatrixExpr(e.kids[0], ins);
      for (uint32_t& v : x.v) v = unaryOp(e.a, e.b, v);
      return x;
    }
    case MExprKind::Zip: {
      require(e.kids.size() == 2, "a matrix zip of other than two matrices");
      const Mat x = refMatrixExpr(e.kids[0], ins), y = refMatrixExpr(e.kids[1], ins);
      Mat z(std::min(x.rows, y.rows), std::min(x.cols, y.cols));
      for (uint32_t r = 0; r < z.rows; ++r) {
        for (uint32_t c = 0; c < z.cols; ++c) z.at(r, c) = binaryOp(e.a, x.at(r, c), y.at(r, c));
      }
      return z;
    }
    case MExprKind::Transpose: {
      require(e.kids.size() == 1, "a matrix transpose of other than one matrix");
      const Mat x = refMatrixExpr(e.kids[0], ins);
      Mat t(x.cols, x.rows);
      for (uint32_t r = 0; r < t.rows; ++r) {
        for (uint32_t c = 0; c < t.cols; ++c) t.at(r, c) = x.at(c, r);
      }
      return t;
    }
  }
  throw std::logic_error("fuzz: unknown matrix expression");
}

Mat refTiled(Level inner, const Mat& m, uint32_t th, uint32_t tw, bool transposed, bool whole,
             const std::vector<TileNode>& body, bool& warps);

Mat refTileSteps(Level level, const std::vector<TileNode>& ops, Mat t, bool& warps) {
  for (const TileNode& n : ops) {
    require(n.kids.empty() || n.op == TileOp::Nest, "kids of a step that has none");
    switch (n.op) {
      case TileOp::Map:
        for (uint32_t& v : t.v) v = unaryOp(n.a, n.b, v);
        break;
      case TileOp::AddIndex:
        for (uint32_t r = 0; r < t.rows; ++r) {
          for (uint32_t c = 0; c < t.cols; ++c) t.at(r, c) += r * n.b + c;
        }
        break;
      case TileOp::Transpose: {
        Mat x(t.cols, t.rows);
        for (uint32_t r = 0; r < x.rows; ++r) {
          for (uint32_t c = 0; c < x.cols; ++c) x.at(r, c) = t.at(c, r);
        }
        t = std::move(x);
        break;
      }
      case TileOp::ZipRotate: {
        Mat x(t.rows, t.cols);
        for (uint32_t r = 0; r < t.rows; ++r) {
          for (uint32_t c = 0; c < t.cols; ++c) {
            x.at(r, c) = binaryOp(n.a, t.at(r, c), t.at((r + n.b) % t.rows, (c + n.c) % t.cols));
          }
        }
        t = std::move(x);
        break;
      }
      case TileOp::Force:
      case TileOp::NarrowForce:
        // The pull form is for Warp and Block programs (each thread's loads together).
        require(n.a <= 1 && n.d <= 1 && (n.a == 1 || level != Level::Thread),
                "a force2 form the level does not have");
        if (n.op == TileOp::NarrowForce) {
          require(n.c == 8 || n.c == 16, "a narrow force of another width");
          for (uint32_t& v : t.v) v &= n.c == 8 ? 0xffu : 0xffffu;
        }
        break;
      case TileOp::Nest: {
        require(level != Level::Thread && n.d <= 1, "a nest in a thread program");
        const Level inner = level == Level::Block ? Level::Warp : Level::Thread;
        warps = warps || inner == Level::Warp;
        t = refTiled(inner, t, n.b, n.c, transposes(n.kids), false, n.kids, warps);
        break;
      }
    }
  }
  return t;
}

// pConcat2 over the th x tw tiles of m (their grid transposed with `transposed`), each the
// result of body at level `inner`: m's shape (or its transpose), or with whole the whole grid
// of the results. Elements of the tiles outside m read as zero, writes outside are dropped.
Mat refTiled(Level inner, const Mat& m, uint32_t th, uint32_t tw, bool transposed, bool whole,
             const std::vector<TileNode>& body, bool& warps) {
  require(th > 0 && tw > 0 && th <= 4096 && tw <= 4096, "tiles of another size");
  const uint32_t tr = m.rows / th + (m.rows % th != 0), tc = m.cols / tw + (m.cols % tw != 0);
  const uint32_t gr = transposed ? tc : tr, gc = transposed ? tr : tc;
  std::vector<Mat> results;
  for (uint32_t i = 0; i < gr; ++i) {
    for (uint32_t j = 0; j < gc; ++j) {
      const uint32_t ti = transposed ? j : i, tj = transposed ? i : j;
      Mat tile(th, tw);
      for (uint32_t r = 0; r < th; ++r) {
        for (uint32_t c = 0; c < tw; ++c) {
          const uint64_t row = uint64_t{ti} * th + r, col = uint64_t{tj} * tw + c;
          if (row < m.rows && col < m.cols) {
            tile.at(r, c) = m.at(static_cast<uint32_t>(row), static_cast<uint32_t>(col));
          }
        }
      }
      results.push_back(refTileSteps(inner, body, std::move(tile), warps));
    }
  }
  const uint32_t ih = results[0].rows, iw = results[0].cols;
  const uint64_t outRows = whole ? uint64_t{gr} * ih : transposed ? m.cols : m.rows;
  const uint64_t outCols = whole ? uint64_t{gc} * iw : transposed ? m.rows : m.cols;
  require(uint64_t{gr} * ih >= outRows && uint64_t{gc} * iw >= outCols && outRows * outCols > 0 &&
              outRows * outCols <= (1u << 24),
          "the tiles do not cover the result");
  Mat out(static_cast<uint32_t>(outRows), static_cast<uint32_t>(outCols));
  for (uint32_t i = 0; i < gr; ++i) {
    for (uint32_t j = 0; j < gc; ++j) {
      const Mat& y = results[size_t{i} * gc + j];
      for (uint32_t r = 0; r < ih; ++r) {
        for (uint32_t c = 0; c < iw; ++c) {
          const uint64_t row = uint64_t{i} * ih + r, col = uint64_t{j} * iw + c;
          if (row < out.rows && col < out.cols) {
            out.at(static_cast<uint32_t>(row), static_cast<uint32_t>(col)) = y.at(r, c);
          }
        }
      }
    }
  }
  return out;
}

// Element (r, c) of the stencil over m: the terms' neighbours folded.
Mat refStencil(const MatrixRecipe& mr, const Mat& m) {
  require(mr.tileRows > 0 && mr.tileCols > 0 && mr.radius <= 3 && !mr.terms.empty() &&
              mr.haloPadding <= 1,
          "a stencil of another shape");
  const int64_t k = mr.radius;
  for (const StencilTerm& t : mr.terms) {
    require(t.dr >= -k && t.dr <= k && t.dc >= -k && t.dc <= k, "a neighbour past the radius");
  }
  auto at = [&](int64_t r, int64_t c) {
    if (mr.zero && (r < 0 || c < 0 || r >= m.rows || c >= m.cols)) return 0u;
    return m.at(static_cast<uint32_t>(std::clamp<int64_t>(r, 0, m.rows - 1)),
                static_cast<uint32_t>(std::clamp<int64_t>(c, 0, m.cols - 1)));
  };
  Mat out(m.rows, m.cols);
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.cols; ++c) {
      uint32_t acc = at(r + mr.terms[0].dr, c + mr.terms[0].dc);
      for (size_t j = 1; j < mr.terms.size(); ++j) {
        acc = binaryOp(mr.terms[j].op, acc, at(r + mr.terms[j].dr, c + mr.terms[j].dc));
      }
      out.at(static_cast<uint32_t>(r), static_cast<uint32_t>(c)) = acc;
    }
  }
  return out;
}

bool usesInput(const MExpr& e, uint32_t k) {
  if (e.kind == MExprKind::Input) return e.a == k;
  for (const MExpr& kid : e.kids) {
    if (usesInput(kid, k)) return true;
  }
  return false;
}

std::vector<Words> matrixReference(const Recipe& r, const Words& in) {
  const MatrixRecipe& mr = *r.matrix;
  require(!mr.inputs.empty() && mr.inputs.size() <= 2, "a matrix kernel of other inputs");
  require(r.threads > 0 && r.threads <= 1024 && r.altThreads > 0 && r.altThreads <= 1024 &&
              r.realBlocks > 0,
          "empty launch");
  std::vector<Mat> ins;
  size_t offset = 0;
  for (const MatrixInput& m : mr.inputs) {
    require(m.rows > 0 && m.cols > 0 && m.pitch >= m.cols &&
                (m.elem == 8 || m.elem == 16 || m.elem == 32) &&
                uint64_t{m.rows} * m.pitch <= (1u << 22),
            "a matrix input of another shape");
    Mat x(m.rows, m.cols);
    for (uint32_t row = 0; row < m.rows; ++row) {
      for (uint32_t c = 0; c < m.cols; ++c)
        x.at(row, c) = in.at(offset + size_t{row} * m.pitch + c);
    }
    offset += size_t{m.rows} * m.pitch;
    ins.push_back(std::move(x));
  }
  const Mat m = refMatrixExpr(mr.expr, ins);
  bool warps = false;
  Mat out;
  switch (mr.out) {
    case MatrixOut::Push: out = m; break;
    case MatrixOut::Tiles:
      out = refTiled(Level::Block, m, mr.tileRows, mr.tileCols, mr.transposeGrid, mr.whole, mr.body,
                     warps);
      break;
    case MatrixOut::Stencil:
      require(!mr.narrowHalo || (mr.expr.kind == MExprKind::Input && mr.expr.a < ins.size() &&
                                 mr.inputs[mr.expr.a].elem != 32),
              "a narrow stencil of words");
      out = refStencil(mr, m);
      break;
  }
  // Warp programs need whole warps.
  require(!warps || (r.threads % 32 == 0 && r.altThreads % 32 == 0), "warps of part of a warp");
  return {out.v};
}

// ------------------------------------------------------------------ matrices: generation
class MatrixGenerator {
 public:
  explicit MatrixGenerator(std::mt19937_64& rng) : rng_(rng) {}
  bool warps = false;  // a Warp program was made: blocks of whole warps

  uint32_t below(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }
  bool chance(uint32_t percent) { return below(100) < percent; }

  // A matrix side: small and odd mostly, powers of two and their neighbours, now and then long.
  uint32_t side() {
    switch (below(10)) {
      case 0: return 1u << below(7);
      case 1: return std::max(1u, (2u << below(6)) + below(3) - 1);
      case 2: return 1 + below(130);
      default: return 1 + below(48);
    }
  }
  // A tile side up to hi.
  uint32_t tileSide(uint32_t hi) {
    const uint32_t s = below(3) == 0 ? 1u << below(6) : 1 + below(hi);
    return std::min(s, hi);
  }

  MatrixInput input() {
    MatrixInput m;
    m.rows = side();
    m.cols = side();
    if (uint64_t{m.rows} * m.cols > 6000) m.cols = std::max(1u, 6000 / m.rows);
    m.pitch = chance(40) ? m.cols + 1 + below(9) : m.cols;
    const uint32_t width = below(100);
    m.elem = width < 15 ? 8 : width < 30 ? 16 : 32;
    return m;
  }

  MExpr expr(int depth, uint32_t inputs) {
    MExpr e;
    const uint32_t k = below(10);
    if (depth >= 3 || k < 4) {
      e.a = below(inputs);
      return e;
    }
    if (k < 6) {
      e.kind = MExprKind::Map;
      e.a = below(kUnaryOps);
      e.b = static_cast<uint32_t>(rng_());
      e.kids = {expr(depth + 1, inputs)};
    } else if (k < 8) {
      e.kind = MExprKind::Transpose;
      e.kids = {expr(depth + 1, inputs)};
    } else {
      e.kind = MExprKind::Zip;
      e.a = below(kBinaryOps);
      e.kids = {expr(depth + 1, inputs), expr(depth + 1, inputs)};
    }
    return e;
  }

  // Steps of a tile program at `level` over a rows x cols tile.
  std::vector<TileNode> tileBody(Level level, uint32_t rows, uint32_t cols, int depth) {
    std::vector<TileNode> ops;
    const uint32_t count = 1 + below(depth == 0 ? 4 : 3);
    for (uint32_t s = 0; s < count; ++s) {
      TileNode n;
      const uint32_t k = below(level == Level::Thread || depth >= 2 ? 12 : 15);
      n.op = k < 2    ? TileOp::Map
             : k < 4  ? TileOp::AddIndex
             : k < 6  ? TileOp::Transpose
             : k < 8  ? TileOp::ZipRotate
             : k < 11 ? TileOp::Force
             : k < 12 ? TileOp::NarrowForce
                      : TileOp::Nest;
      switch (n.op) {
        case TileOp::Map:
          n.a = below(kUnaryOps);
          n.b = static_cast<uint32_t>(rng_());
          break;
        case TileOp::AddIndex: n.b = below(1000); break;
        case TileOp::Transpose: std::swap(rows, cols); break;
        case TileOp::ZipRotate:
          n.a = below(kBinaryOps);
          n.b = below(rows + 2);
          n.c = below(cols + 2);
          break;
        case TileOp::Force:
        case TileOp::NarrowForce:
          n.a = level == Level::Thread ? 1 : below(2);
          n.c = below(2) == 0 ? 8 : 16;
          n.d = below(2);
          break;
        case TileOp::Nest: {
          // Warp sub-tiles of up to 256 elements, thread sub-tiles of up to 32.
          const uint32_t area = level == Level::Block ? 256 : 32;
          n.b = tileSide(std::min(rows + 2, 32u));
          n.c = tileSide(std::max(1u, std::min(cols + 2, area / n.b)));
          const Level inner = level == Level::Block ? Level::Warp : Level::Thread;
          warps = warps || inner == Level::Warp;
          n.kids = tileBody(inner, n.b, n.c, depth + 1);
          if (transposes(n.kids)) std::swap(rows, cols);
          n.d = below(2);
          break;
        }
      }
      ops.push_back(std::move(n));
    }
    return ops;
  }

  MatrixRecipe recipe() {
    MatrixRecipe mr;
    const uint32_t inputs = chance(35) ? 2 : 1;
    for (uint32_t k = 0; k < inputs; ++k) mr.inputs.push_back(input());
    mr.expr = expr(0, inputs);
    // Both inputs in the expression.
    if (inputs == 2 && !usesInput(mr.expr, 1)) {
      MExpr zip;
      zip.kind = MExprKind::Zip;
      zip.a = below(kBinaryOps);
      MExpr second;
      second.a = 1;
      zip.kids =
          chance(50) ? std::vector<MExpr>{mr.expr, second} : std::vector<MExpr>{second, mr.expr};
      mr.expr = zip;
    }
    const uint32_t out = below(100);
    if (out < 20) return mr;
    if (out < 60) {
      mr.out = MatrixOut::Tiles;
      mr.tileRows = tileSide(40);
      mr.tileCols = tileSide(std::max(1u, std::min(40u, 1024 / mr.tileRows)));
      mr.transposeGrid = chance(40);
      mr.body = tileBody(Level::Block, mr.tileRows, mr.tileCols, 0);
      // The result is m's shape (or its transpose) where the tiles' results fit it.
      const bool fits = transposes(mr.body) == mr.transposeGrid || mr.tileRows == mr.tileCols;
      mr.whole = !fits || chance(15);
      return mr;
    }
    mr.out = MatrixOut::Stencil;
    // Now and then straight over a lone input, often narrow, then read as its own type.
    if (inputs == 1 && chance(40)) {
      mr.expr = MExpr{};
      if (chance(50)) mr.inputs[0].elem = chance(50) ? 8 : 16;
    }
    mr.radius = below(3);
    mr.tileRows = tileSide(32);
    mr.tileCols = tileSide(std::max(1u, std::min(32u, 512 / mr.tileRows)));
    mr.zero = chance(50);
    const int k = static_cast<int>(mr.radius);
    const uint32_t terms = 1 + below(5);
    for (uint32_t t = 0; t < terms; ++t) {
      StencilTerm term;
      term.dr = static_cast<int>(below(2 * mr.radius + 1)) - k;
      term.dc = static_cast<int>(below(2 * mr.radius + 1)) - k;
      term.op = below(kBinaryOps);
      mr.terms.push_back(term);
    }
    mr.viaHalo = chance(35);
    mr.haloPadding = below(2);
    mr.haloPush = chance(50);
    mr.narrowHalo =
        mr.expr.kind == MExprKind::Input && mr.inputs[mr.expr.a].elem != 32 && chance(80);
    return mr;
  }

 private:
  std::mt19937_64& rng_;
};

// Percent of the recipes that are matrix kernels.
constexpr uint64_t kMatrixPercent = 10;

// A matrix recipe of the data seed, every choice from the matrix stream.
Recipe generateMatrix(uint64_t dataSeed, std::mt19937_64& rng) {
  MatrixGenerator gen(rng);
  Recipe r;
  r.dataSeed = dataSeed;
  r.matrix = gen.recipe();
  const std::vector<uint32_t> threadCounts{32, 64, 96, 128, 192, 256, 512, 1024};
  r.threads = threadCounts[gen.below(8)];
  r.altThreads = threadCounts[gen.below(8)];
  if (!gen.warps && gen.chance(30)) r.threads = 1 + gen.below(300);
  if (!gen.warps && gen.chance(30)) r.altThreads = 1 + gen.below(300);
  r.realBlocks = 1 + gen.below(4);
  return r;
}

// ------------------------------------------------------------------ matrices: printing
std::string elemType(uint32_t elem) { return "EWord" + std::to_string(elem); }
const char* paddingName(uint32_t d) { return d == 0 ? "Padding::Auto" : "Padding::None"; }

std::string matrixExprText(const MExpr& e) {
  switch (e.kind) {
    case MExprKind::Input: return "g" + std::to_string(e.a);
    case MExprKind::Map:
      return "fmap(" + Printer::unaryLambda(e.a, e.b) + ", " + matrixExprText(e.kids.at(0)) + ")";
    case MExprKind::Zip:
      return "zipWith(" + Printer::binaryLambda(e.a) + ", " + matrixExprText(e.kids.at(0)) + ", " +
             matrixExprText(e.kids.at(1)) + ")";
    case MExprKind::Transpose: return "transpose(" + matrixExprText(e.kids.at(0)) + ")";
  }
  return "?";
}

void printTileProgram(Printer& pr, int ind, Level level, const std::string& p,
                      const std::vector<TileNode>& ops, std::string x);

// pConcat2 over the tiles of tile x, the programs one level below `level` (its text, without
// a final semicolon, over several lines: the caller prints `open` before it and `close` after).
void printNest(Printer& pr, int ind, Level level, const TileNode& n, const std::string& x,
               const std::string& open, const std::string& close) {
  const Level inner = level == Level::Block ? Level::Warp : Level::Thread;
  const std::string L = levelName(inner), s = pr.fresh("s"), q = pr.fresh("q");
  const bool t = transposes(n.kids);
  pr.line(ind, open + "pConcat2(fmap(");
  pr.line(ind + 1, "[](const SPull2<EWord32>& " + s + ") {");
  pr.line(ind + 2, "return exec<" + L + ">([" + s + "](const Program<" + L + ">& " + q + ") {");
  printTileProgram(pr, ind + 3, inner, q, n.kids, s);
  pr.line(ind + 2, "});");
  pr.line(ind + 1, "},");
  const std::string ts = "tiles(" + Printer::u(n.b) + ", " + Printer::u(n.c) + ", " + x + ")";
  pr.line(ind + 1, (t ? "transpose(" + ts + ")), " + x + ".cols(), " + x + ".rows()"
                      : ts + "), " + x + ".rows(), " + x + ".cols()") +
                       ")" + close);
}

// Prints the steps of a tile program and its return (the last step's push array where it is
// a nest, else push2<L> of the tile).
void printTileProgram(Printer& pr, int ind, Level level, const std::string& p,
                      const std::vector<TileNode>& ops, std::string x) {
  const std::string L = levelName(level);
  for (size_t k = 0; k < ops.size(); ++k) {
    const TileNode& n = ops[k];
    if (n.op == TileOp::Nest && k + 1 == ops.size()) {
      printNest(pr, ind, level, n, x, "return ", ";");
      return;
    }
    const std::string y = pr.fresh("a");
    const std::string def = "const SPull2<EWord32> " + y + " = ";
    auto forced = [&](const std::string& t) {
      return "force2(" + p + ", " + (n.a == 0 ? t : "push2<" + L + ">(" + t + ")") + ", " +
             paddingName(n.d) + ")";
    };
    switch (n.op) {
      case TileOp::Map:
        pr.line(ind, def + "fmap(" + Printer::unaryLambda(n.a, n.b) + ", " + x + ");");
        break;
      case TileOp::AddIndex:
        pr.line(ind, def + "mkPull2(" + x + ".rows(), " + x + ".cols(), [" + x +
                         "](const EWord32& r, const EWord32& c) { return " + x + "(r, c) + r * " +
                         Printer::u(n.b) + " + c; });");
        break;
      case TileOp::Transpose: pr.line(ind, def + "transpose(" + x + ");"); break;
      case TileOp::ZipRotate:
        pr.line(ind, def + "zipWith(" + Printer::binaryLambda(n.a) + ", " + x + ", mkPull2(" + x +
                         ".rows(), " + x + ".cols(), [" + x +
                         "](const EWord32& r, const EWord32& c) { return " + x + "((r + " +
                         Printer::u(n.b) + ") % " + x + ".rows(), (c + " + Printer::u(n.c) +
                         ") % " + x + ".cols()); }));");
        break;
      case TileOp::Force: pr.line(ind, def + forced(x) + ";"); break;
      case TileOp::NarrowForce: {
        const std::string bits = std::to_string(n.c);
        pr.line(
            ind,
            def + "fmap([](const EWord" + bits + "& v) { return w" + bits + "ToW32(v); }, " +
                forced("fmap([](const EWord32& w) { return w32ToW" + bits + "(w); }, " + x + ")") +
                ");");
        break;
      }
      case TileOp::Nest:
        printNest(pr, ind, level, n, x, def + "force2(" + p + ", ",
                  ", " + std::string(paddingName(n.d)) + ");");
        break;
    }
    x = y;
  }
  pr.line(ind, "return push2<" + L + ">(" + x + ");");
}

// The stencil's function of a neighbourhood of X (the terms folded), as a lambda.
std::string stencilFnText(const MatrixRecipe& mr, uint32_t elem) {
  const std::string bits = std::to_string(elem);
  auto nb = [&](const StencilTerm& t) {
    const std::string read = "nb(" + std::to_string(t.dr) + ", " + std::to_string(t.dc) + ")";
    return elem == 32 ? read : "w" + bits + "ToW32(" + read + ")";
  };
  std::string s = "[](const Neighbourhood<uint" + bits +
                  "_t>& nb) { EWord32 acc = " + nb(mr.terms.at(0)) + "; ";
  for (size_t k = 1; k < mr.terms.size(); ++k) {
    s += "acc = " + Printer::binaryLambda(mr.terms[k].op) + "(acc, " + nb(mr.terms[k]) + "); ";
  }
  return s + "return acc; }";
}

std::string matrixSource(const Recipe& r, uint32_t threads, const std::string& function) {
  const MatrixRecipe& mr = *r.matrix;
  Printer pr;
  pr.threads = threads;
  std::string shapes, params;
  for (size_t k = 0; k < mr.inputs.size(); ++k) {
    const MatrixInput& m = mr.inputs[k];
    shapes += std::string(k ? ", " : "") + std::to_string(m.rows) + " x " + std::to_string(m.cols) +
              " (pitch " + std::to_string(m.pitch) + ") " +
              (m.elem == 32 ? "words" : "u" + std::to_string(m.elem));
    params +=
        std::string(k ? ", " : "") + "DPull2<" + elemType(m.elem) + "> in" + std::to_string(k);
  }
  pr.line(0, "// matrix inputs: " + shapes);
  pr.line(0, "Kernel " + function + "() {");
  pr.line(1, "return capture(\"fuzz\", " + std::to_string(threads) + ", [](" + params + ") {");
  for (size_t k = 0; k < mr.inputs.size(); ++k) {
    const std::string g = "g" + std::to_string(k), in = "in" + std::to_string(k);
    const uint32_t e = mr.inputs[k].elem;
    const std::string bits = std::to_string(e);
    pr.line(2, "const DPull2<EWord32> " + g + " = " +
                   (e == 32 ? in
                            : "fmap([](const EWord" + bits + "& x) { return w" + bits +
                                  "ToW32(x); }, " + in + ")") +
                   ";");
  }
  pr.line(2, "const DPull2<EWord32> m = " + matrixExprText(mr.expr) + ";");
  const std::string boundary = mr.zero ? "Boundary::Zero" : "Boundary::Clamp";
  switch (mr.out) {
    case MatrixOut::Push: pr.line(2, "return push2<Grid>(m);"); break;
    case MatrixOut::Tiles: {
      pr.line(2, "return pConcat2(fmap(");
      pr.line(3, "[](const SPull2<EWord32>& t) {");
      pr.line(4, "return exec<Block>([t](const Program<Block>& p) {");
      printTileProgram(pr, 5, Level::Block, "p", mr.body, "t");
      pr.line(4, "});");
      pr.line(3, "},");
      const std::string ts =
          "tiles(" + Printer::u(mr.tileRows) + ", " + Printer::u(mr.tileCols) + ", m)";
      const std::string dims = mr.whole           ? ""
                               : mr.transposeGrid ? ", m.cols(), m.rows()"
                                                  : ", m.rows(), m.cols()";
      pr.line(3, (mr.transposeGrid ? "transpose(" + ts + ")" : ts) + ")" + dims + ");");
      break;
    }
    case MatrixOut::Stencil: {
      const uint32_t elem = mr.narrowHalo ? mr.inputs.at(mr.expr.a).elem : 32;
      const std::string src = mr.narrowHalo ? "in" + std::to_string(mr.expr.a) : "m";
      const std::string X = "uint" + std::to_string(elem) + "_t", E = elemType(elem);
      pr.line(2, "const auto f = " + stencilFnText(mr, elem) + ";");
      if (!mr.viaHalo) {
        pr.line(2, "return stencil(" + src + ", " + Printer::u(mr.radius) + ", f, StencilOptions{" +
                       Printer::u(mr.tileRows) + ", " + Printer::u(mr.tileCols) + ", " + boundary +
                       "});");
        break;
      }
      // The stencil's blocks written out: the halo tile forced as the recipe says.
      const std::string halo = mr.haloPush ? "push2<Block>(halo)" : "halo";
      pr.line(2, "return pConcat2(fmap(");
      pr.line(3, "[f](const SPull2<" + E + ">& halo) {");
      pr.line(4, "return exec<Block>([f, halo](const Program<Block>& p) {");
      pr.line(5, "const SPull2<" + E + "> s = force2(p, " + halo + ", " +
                     paddingName(mr.haloPadding) + ");");
      pr.line(5, "return push2<Block>(mkPull2(" + Printer::u(mr.tileRows) + ", " +
                     Printer::u(mr.tileCols) +
                     ", [f, s](const EWord32& r, const EWord32& c) { return f(Neighbourhood<" + X +
                     ">(s, r, c, " + Printer::u(mr.radius) + ")); }));");
      pr.line(4, "});");
      pr.line(3, "},");
      pr.line(3, "haloTiles(" + Printer::u(mr.tileRows) + ", " + Printer::u(mr.tileCols) + ", " +
                     Printer::u(mr.radius) + ", " + src + ", " + boundary + ")), " + src +
                     ".rows(), " + src + ".cols());");
      break;
    }
  }
  pr.line(1, "}, CaptureOptions{.nvrtcOptions = {\"--fmad=false\"}});");
  pr.line(0, "}");
  return pr.out;
}

}  // namespace

uint32_t gridPasses(const Recipe& r) { return 1 + (r.gridOutput ? 1 : 0); }

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
      if (r.fused.empty()) {
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

namespace {
// Percent of the recipes with block programs whose result is fused with more parts.
constexpr uint64_t kFusedPercent = 12;

// Fused parts beside the block's result of n elements (or, with an effect, beside the chunks
// of the grid-level output, which the recipe then has).
void drawFused(Recipe& r, uint32_t n, std::mt19937_64& rng) {
  auto below = [&rng](uint32_t k) { return static_cast<uint32_t>(rng() % k); };
  if (r.result != Result::Output) {
    r.gridOutput = true;
    n = r.chunk;
  }
  // A third of them fused in each thread, over pieces of up to 16 elements.
  if (below(3) == 0) {
    std::vector<uint32_t> pieces;
    for (uint32_t k = 1; k <= std::min(n, 16u); ++k) {
      if (n % k == 0) pieces.push_back(k);
    }
    r.fusedThread = pieces[below(static_cast<uint32_t>(pieces.size()))];
  }
  const Where block{Level::Block, r.threads, r.altThreads, false};
  const uint32_t parts = 1 + below(2);
  for (uint32_t i = 0; i < parts; ++i) {
    FusedPart f;
    f.kind = static_cast<PartKind>(below(3));
    if (f.kind != PartKind::Map && r.fusedThread > 0) {
      f.a = below(kBinaryOps);
    } else if (f.kind != PartKind::Map) {
      // A collective's algorithm that fits n elements at both thread counts, if any.
      std::vector<uint32_t> fit;
      for (uint32_t a = 0; a < (f.kind == PartKind::Reduce ? 8u : 5u); ++a) {
        f.a = a;
        if (collectiveFits(block, partNode(f), n)) fit.push_back(a);
      }
      if (fit.empty()) {
        f.kind = PartKind::Map;
      } else {
        f.a = fit[below(static_cast<uint32_t>(fit.size()))];
        // Reductions other than red1 reorder: commutative operators only.
        f.c = below(f.kind == PartKind::Reduce && f.a != 0 ? kCommutativeOps : kCollectiveOps);
      }
    }
    if (f.kind == PartKind::Map) {
      f.a = below(kUnaryOps);
      f.b = static_cast<uint32_t>(rng());
    }
    r.fused.push_back(f);
  }
  r.fusedForce = below(2) == 0;
  r.fusedNested = parts == 2 && below(2) == 0;
  r.gridFirst = r.result == Result::Output && r.gridOutput && below(2) == 0;
}
}  // namespace

namespace {
// Percent of the recipes (not matrix ones) with a divisor parameter.
constexpr uint64_t kDivisorPercent = 15;

// The divisor parameter (Recipe::divisor), from a stream of its own seeded by the data seed and
// drawn after everything else: the other streams draw what they drew before.
void drawDivisor(Recipe& r) {
  std::mt19937_64 g(r.dataSeed ^ 0xa0761d6478bd642full);
  if (g() % 100 >= kDivisorPercent) return;
  const uint32_t k = static_cast<uint32_t>(g() % 10);
  r.divisor = k < 3   ? Divisor::Require
              : k < 5 ? Divisor::Guarded
              : k < 7 ? Divisor::GuardedSelect
                      : Divisor::Length;
  if (r.divisor == Divisor::Length && (r.staticInput || directLoads(r))) {
    r.divisor = Divisor::Require;
  }
  // A divisor of the input's length (any: 1 and the length itself too).
  const uint64_t n = inputLength(r);
  std::vector<uint32_t> ds;
  for (uint64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    ds.push_back(static_cast<uint32_t>(d));
    if (d * d != n) ds.push_back(static_cast<uint32_t>(n / d));
  }
  r.divisorValue = ds[g() % ds.size()];
}

Recipe generateSteps(std::mt19937_64& rng);

}  // namespace

Recipe generate(std::mt19937_64& rng) {
  Recipe r = generateSteps(rng);
  if (!r.matrix) drawDivisor(r);
  return r;
}

namespace {

Recipe generateSteps(std::mt19937_64& rng) {
  Generator gen(rng);
  Recipe r;
  const std::vector<uint32_t> threadCounts{32, 64, 96, 128, 192, 256, 512, 1024};
  r.threads = gen.pick(threadCounts);
  r.altThreads = gen.pick(threadCounts);
  r.dataSeed = rng();
  // Matrix kernels: from a stream of their own (seeded by the data seed), every choice of
  // theirs too, so the recipes that are not matrix ones are the previous generator's.
  std::mt19937_64 matrix(r.dataSeed ^ 0x3c79ac492ba7b653ull);
  if (matrix() % 100 < kMatrixPercent) return generateMatrix(r.dataSeed, matrix);
  const uint32_t kind = gen.below(20);
  r.grid = kind == 0 ? Shape::Flat : kind < 5 ? Shape::Coalesce : Shape::SplitUp;
  r.gridMap = gen.chance(25);
  r.gridZip = gen.chance(15);
  r.staticInput = gen.chance(25);
  r.oddInput = gen.chance(50);
  r.gridOutput = gen.chance(15);
  if (r.grid != Shape::Flat && gen.chance(15)) r.globalBins = 1 + gen.below(64);
  r.gridA = gen.below(kUnaryOps);
  r.gridB = static_cast<uint32_t>(rng());
  // Sizes of every shape: powers of two, odd numbers, products of small factors.
  r.chunk = (1 + gen.below(8)) << gen.below(9);
  if (gen.chance(20)) r.chunk = 1 + gen.below(300);
  r.chunk = std::min<uint32_t>(r.chunk, 2048);
  r.blocks = 1 + gen.below(std::max<uint32_t>(2, 16384 / (r.chunk * 4)) > 12
                               ? 12
                               : std::max<uint32_t>(2, 16384 / (r.chunk * 4)));
  r.realBlocks = 1 + gen.below(r.blocks);
  // Narrow inputs, vectors<W> of them and effect-only kernels: drawn from a stream of their
  // own (seeded by the data seed), so that the main stream draws what it drew before they
  // existed: a recipe that draws none of them is the previous generator's.
  std::mt19937_64 extra(r.dataSeed ^ 0xd6e8feb86659fd93ull);
  const uint32_t width = static_cast<uint32_t>(extra() % 100);
  r.elem = width < 12 ? 8 : width < 24 ? 16 : 32;
  if (r.grid == Shape::Flat) {
    r.chunk = 1 + gen.below(5000);
    r.blocks = 1;
    if (gen.chance(50)) r.threads = 1 + gen.below(1024);
    return r;
  }
  // Deep expressions (issue 14): now and then one thread folds a whole chunk of 4096 or 8192
  // elements in one expression, deeper than a thread's stack would hold if walked naively.
  // Drawn from the data seed, so the recipes of earlier generator versions stay the same.
  std::mt19937_64 deep(r.dataSeed);
  if (deep() % 40 == 0) {
    r.chunk = 4096u << (deep() % 2);
    r.blocks = 1 + static_cast<uint32_t>(deep() % 2);
    r.realBlocks = 1;
    r.gridZip = false;
    Node fold;
    fold.op = Op::SplitFold;
    fold.a = static_cast<uint32_t>(deep() % kBinaryOps);
    fold.b = r.chunk;
    r.body = {fold};
    r.elem = 32;
    return r;
  }
  // Each block reads its chunk of the input as vectors, where the chunks are pieces of it.
  if (untouchedInput(r) && extra() % 100 < (r.elem == 32 ? 10 : 70)) {
    std::vector<uint32_t> widths;
    for (uint32_t w = 2; w * r.elem <= 128; w *= 2) {
      if (r.chunk % w == 0) widths.push_back(w);
    }
    if (!widths.empty()) r.vector = widths[extra() % widths.size()];
  }
  gen.enableCollectives(r.dataSeed, Where{Level::Block, r.threads, r.altThreads,
                                          untouchedInput(r) && r.elem == 32 && r.vector == 0});
  gen.enableNarrow(r.dataSeed);
  gen.enableFloats(r.dataSeed);
  const uint32_t result = static_cast<uint32_t>(extra() % 100);
  if (result < 20) {
    r.result = result < 10 ? Result::EffectWrite : Result::EffectAtomic;
    r.accOp = static_cast<uint32_t>(extra() % kAccOps);
    r.accSlots = 1 + static_cast<uint32_t>(extra() % 64);
    r.accSpare = static_cast<uint32_t>(extra() % 4);
    r.effectFirst = extra() % 2 == 0;
  }
  uint32_t n = r.chunk;
  r.body = gen.body(Level::Block, n, 0, false);
  r.threads = gen.threads();  // a collective may have chosen them
  r.altThreads = gen.altThreads();
  // Any thread count at all where no Warp program needs whole warps and no collective depends
  // on the thread count.
  const bool anyThreads = !gen.usesWarps && !gen.threadBound;
  if (anyThreads && gen.chance(30)) r.threads = 1 + gen.below(300);
  if (anyThreads && gen.chance(30)) r.altThreads = 1 + gen.below(300);
  // Fused outputs: from a stream of their own, drawn last (the parts fit the final thread
  // counts), so that the other streams draw what they drew before.
  std::mt19937_64 fused(r.dataSeed ^ 0x2545f4914f6cdd1dull);
  if (fused() % 100 < kFusedPercent) drawFused(r, n, fused);
  return r;
}

}  // namespace

std::string cppSource(const Recipe& r, uint32_t threads, const std::string& function) {
  if (r.matrix) return matrixSource(r, threads, function);
  Printer pr;
  pr.threads = threads;
  const std::string bits = std::to_string(r.elem), E = "EWord" + bits;
  pr.line(0, "// input: " + std::to_string(inputLength(r)) +
                 (r.elem == 32 ? " words" : " u" + bits + " elements"));
  pr.line(0, "Kernel " + function + "() {");
  const std::string in = r.staticInput ? "SPull" : "DPull";
  const bool bins = r.globalBins > 0, effect = r.result != Result::Output;
  const std::string caps = std::string(bins ? ", bins" : "") + (effect ? ", acc" : "");
  const bool divided = r.divisor == Divisor::Length;
  pr.line(1, "return capture(\"fuzz\", " + std::to_string(threads) + ", [](" + in + "<" + E +
                 (divided ? "> input" : "> in") +
                 (r.divisor != Divisor::None ? ", EWord32 d" : "") +
                 (bins ? ", DMutable<uint32_t> bins" : "") +
                 (effect ? ", DMutable<uint32_t> acc" : "") + ") {");
  switch (r.divisor) {
    case Divisor::None: break;
    case Divisor::Require:
      pr.line(2, "require(len(in) % d == 0u, \"d divides the input's length\");");
      break;
    case Divisor::Guarded:
      pr.line(2,
              "require(d == 0u || len(in) % d == 0u, \"d is 0 or divides the input's length\");");
      break;
    case Divisor::GuardedSelect:
      pr.line(2,
              "require(ifThenElse(d != 0u, len(in) / d, EWord32(1u)) >= 1u, "
              "\"the input has d elements or more\");");
      break;
    case Divisor::Length:
      pr.line(2, "const DPull<" + E +
                     "> in((len(input) / d) * d, [input, d](const EWord32& i) { "
                     "return input[i / d * d + i % d]; });");
      break;
  }
  if (r.elem == 32) {
    pr.line(2, in + "<EWord32> g = in;");
  } else {
    pr.line(2, in + "<EWord32> g = fmap([](const " + E + "& x) { return w" + bits +
                   "ToW32(x); }, in);");
  }
  if (r.gridMap) pr.line(2, "g = fmap(" + Printer::unaryLambda(r.gridA, r.gridB) + ", g);");
  if (r.gridZip) {
    pr.line(2, "const auto [glo, ghi] = halve(g);");
    pr.line(2, "g = zipWith(" + Printer::binaryLambda(r.gridA) + ", glo, ghi);");
  }
  if (r.grid == Shape::Flat) {
    pr.line(2, r.gridOutput ? "return hana::make_tuple(push<Grid>(g), push<Grid>(g));"
                            : "return push<Grid>(g);");
    const std::string lengths =
        r.staticInput ? ".staticLengths = {" + std::to_string(inputLength(r)) + "}, " : "";
    pr.line(1, "}, CaptureOptions{" + lengths + ".nvrtcOptions = {\"--fmad=false\"}});");
    pr.line(0, "}");
    return pr.out;
  }
  // The chunks: pieces of the input itself where the blocks read vectors of it.
  const std::string chunkType = r.vector ? "SPull<" + E + ">" : "SPull<EWord32>";
  const std::string chunkName = r.vector ? "piece" : "c";
  const std::string chunks = std::string(r.grid == Shape::SplitUp ? "splitUp(" : "coalesce(") +
                             Printer::u(r.chunk) + ", " + (r.vector ? "in" : "g") + ")";
  // The block's program over its chunk; the name of its result.
  auto block = [&](int ind) {
    if (r.vector) {
      const std::string w = std::to_string(r.vector) + "u";
      pr.line(ind, "const auto vecs = vectors<" + std::to_string(r.vector) + ">(piece);");
      pr.line(ind,
              "const SPull<EWord32> c = force(p, mkPush<Block, EWord32>(piece.len(), [vecs]("
              "const Program<Block>& q, const Writer<EWord32>& w) {");
      pr.line(ind + 1, "q.forAll(len(vecs), [&](const Program<Thread>& t, const EWord32& j) {");
      pr.line(ind + 2, "std::vector<EWord32> lanes;");
      pr.line(ind + 2, "hana::for_each(vecs[j], [&](const " + E +
                           "& x) { lanes.push_back(t.declare(" +
                           (r.elem == 32 ? std::string("x") : "w" + bits + "ToW32(x)") + ")); });");
      pr.line(ind + 2,
              "for (uint32_t k = 0; k < " + w + "; ++k) w(t, lanes[k], j * " + w + " + k);");
      pr.line(ind + 1, "});");
      pr.line(ind, "}));");
    }
    const std::string res = pr.steps(ind, Level::Block, "p", r.body, "c");
    if (bins) {
      pr.line(ind, "p.forAll(" + res + ".len(), [&](const Program<Thread>& t, const EWord32& i) {");
      pr.line(ind + 1,
              "atomicAdd(t, bins, " + res + "[i] % " + Printer::u(r.globalBins) + ", 1u);");
      pr.line(ind, "});");
    }
    return res;
  };
  // Beside an effect, the grid-level output fused with parts over its chunks.
  const bool fusedGrid = effect && !r.fused.empty();
  if (fusedGrid) {
    pr.line(2, "const auto fusedOut = pConcat(fmap(");
    pr.line(3, "[](const SPull<EWord32>& gc) {");
    pr.line(4, "return exec<Block>([gc](const Program<Block>& gq) {");
    pr.fusedReturn(5, r, "gq", "gc");
    pr.line(4, "});");
    pr.line(3, "},");
    pr.line(3, "splitUp(" + Printer::u(r.chunk) + ", g)));");
  }
  // The result: the tuple's other element, before or after the block programs' part.
  const std::string gridOut = fusedGrid ? "fusedOut" : "push<Grid>(g)";
  const bool before = r.gridOutput && (effect ? !r.effectFirst : r.gridFirst);
  const std::string open = !r.gridOutput ? "return "
                           : before      ? "return hana::make_tuple(" + gridOut + ", "
                                         : "return hana::make_tuple(";
  const std::string close = !r.gridOutput ? ";" : before ? ");" : ", " + gridOut + ");";
  switch (r.result) {
    case Result::Output: {
      pr.line(2, open + "pConcat(fmap(");
      pr.line(3, "[" + (caps.empty() ? "" : caps.substr(2)) + "](const " + chunkType + "& " +
                     chunkName + ") {");
      pr.line(4, "return exec<Block>([" + chunkName + caps + "](const Program<Block>& p) {");
      const std::string res = block(5);
      if (r.fused.empty()) {
        pr.line(5, "return push<Block>(" + res + ");");
      } else {
        pr.fusedReturn(5, r, "p", res);
      }
      pr.line(4, "});");
      pr.line(3, "},");
      pr.line(3, chunks + "))" + close);
      break;
    }
    case Result::EffectWrite: {
      pr.line(2, "const auto chunks = " + chunks + ";");
      pr.line(2, open + "effect([chunks" + caps + "](const Program<Grid>& gp) {");
      pr.line(3,
              "gp.distrPar(sizeConv(len(chunks)), [&](const Program<Block>& p, const EWord32& "
              "bid) {");
      pr.line(4, "const " + chunkType + " " + chunkName + " = chunks[bid];");
      const std::string res = block(4);
      pr.line(4, "p.forAll(" + res + ".len(), [&](const Program<Thread>& t, const EWord32& i) {");
      pr.line(5, "write(t, acc, bid * " + res + ".len() + i, " + res + "[i]);");
      pr.line(4, "});");
      pr.line(3, "});");
      pr.line(2, "})" + close);
      break;
    }
    case Result::EffectAtomic: {
      pr.line(2, open + "forEachBlock(" + chunks + ", [" + caps.substr(2) +
                     "](const Program<Block>& p, const " + chunkType + "& " + chunkName + ") {");
      const std::string res = block(3);
      pr.line(3, "p.forAll(" + res + ".len(), [&](const Program<Thread>& t, const EWord32& i) {");
      pr.line(4, std::string(accName(r.accOp)) + "(t, acc, i % " + Printer::u(r.accSlots) + ", " +
                     res + "[i]);");
      pr.line(3, "});");
      pr.line(2, "})" + close);
      break;
    }
  }
  const std::string lengths =
      r.staticInput ? ".staticLengths = {" + std::to_string(inputLength(r)) + "}, " : "";
  pr.line(1, "}, CaptureOptions{" + lengths + ".nvrtcOptions = {\"--fmad=false\"}});");
  pr.line(0, "}");
  return pr.out;
}

bool isDeepFold(const Recipe& r) {
  return r.body.size() == 1 && r.body[0].op == Op::SplitFold && r.body[0].b >= 4096;
}

// ------------------------------------------------------------------ matrices: shrinking
namespace {

void forEachTileList(std::vector<TileNode>& ops,
                     const std::function<void(std::vector<TileNode>&)>& f) {
  f(ops);
  for (TileNode& n : ops) forEachTileList(n.kids, f);
}

size_t countTileNodes(const std::vector<TileNode>& ops) {
  size_t c = 0;
  for (const TileNode& n : ops) c += 1 + countTileNodes(n.kids);
  return c;
}

size_t countExprNodes(const MExpr& e) {
  size_t c = 1;
  for (const MExpr& kid : e.kids) c += countExprNodes(kid);
  return c;
}

// Calls f on the expression's nodes in preorder.
void forEachExpr(MExpr& e, const std::function<void(MExpr&)>& f) {
  f(e);
  for (MExpr& kid : e.kids) forEachExpr(kid, f);
}

// recipeSize of a matrix recipe (a transposed grid weighs more than the whole grid's result).
size_t matrixSize(const Recipe& r) {
  const MatrixRecipe& mr = *r.matrix;
  size_t size = (countTileNodes(mr.body) + countExprNodes(mr.expr) + mr.terms.size() +
                 mr.inputs.size() + (mr.out != MatrixOut::Push)) *
                    100000 +
                r.threads + r.altThreads + r.realBlocks + size_t{mr.tileRows} * mr.tileCols +
                mr.radius + 2 * mr.transposeGrid + mr.whole + mr.zero + mr.viaHalo +
                mr.haloPadding + mr.haloPush + mr.narrowHalo;
  for (const MatrixInput& m : mr.inputs) {
    size += size_t{m.rows} * m.pitch + m.cols + (m.elem != 32);
  }
  std::vector<TileNode> body = mr.body;
  forEachTileList(body, [&](std::vector<TileNode>& ops) {
    for (const TileNode& n : ops) {
      if (n.op == TileOp::Nest) size += size_t{n.b} * n.c + n.d;
      if (n.op == TileOp::ZipRotate) size += n.b + n.c;
      if (n.op == TileOp::Force) size += n.a + n.d;
      if (n.op == TileOp::NarrowForce) size += 1 + n.a + n.d;
    }
  });
  for (const StencilTerm& t : mr.terms) size += (t.dr != 0) + (t.dc != 0) + (t.op != 0);
  return size;
}

std::vector<Recipe> matrixShrinkCandidates(const Recipe& r) {
  const MatrixRecipe& mr = *r.matrix;
  std::vector<Recipe> out;
  auto with = [&](const std::function<void(MatrixRecipe&)>& change) {
    Recipe c = r;
    change(*c.matrix);
    out.push_back(std::move(c));
  };
  // The plainest output: push2<Grid> of the expression.
  if (mr.out != MatrixOut::Push) {
    with([](MatrixRecipe& m) {
      m.out = MatrixOut::Push;
      m.body.clear();
      m.terms.clear();
      m.tileRows = m.tileCols = 1;
      m.radius = 0;
      m.transposeGrid = m.whole = m.zero = m.viaHalo = m.haloPush = m.narrowHalo = false;
      m.haloPadding = 0;
    });
  }
  // The tile programs: each step removed, a nest replaced by its kids, simpler forms.
  std::vector<std::vector<TileOp>> lists;
  std::vector<TileNode> probe = mr.body;
  forEachTileList(probe, [&](std::vector<TileNode>& v) {
    std::vector<TileOp> ops;
    for (const TileNode& n : v) ops.push_back(n.op);
    lists.push_back(ops);
  });
  auto edit = [&](size_t li, const std::function<void(std::vector<TileNode>&)>& change) {
    with([&](MatrixRecipe& m) {
      size_t k = 0;
      forEachTileList(m.body, [&](std::vector<TileNode>& v) {
        if (k++ == li) change(v);
      });
    });
  };
  for (size_t li = 0; li < lists.size(); ++li) {
    for (size_t j = 0; j < lists[li].size(); ++j) {
      const auto at = static_cast<long>(j);
      edit(li, [at](std::vector<TileNode>& v) { v.erase(v.begin() + at); });
      const TileOp op = lists[li][j];
      if (op == TileOp::Nest) {
        edit(li, [at](std::vector<TileNode>& v) {
          const std::vector<TileNode> kids = v[static_cast<size_t>(at)].kids;
          v.erase(v.begin() + at);
          v.insert(v.begin() + at, kids.begin(), kids.end());
        });
        edit(li, [at](std::vector<TileNode>& v) {
          TileNode& n = v[static_cast<size_t>(at)];
          n.b = std::max(1u, n.b / 2);
          n.c = std::max(1u, n.c / 2);
        });
      }
      if (op == TileOp::NarrowForce) {
        edit(li, [at](std::vector<TileNode>& v) { v[static_cast<size_t>(at)].op = TileOp::Force; });
      }
      if (op == TileOp::Force || op == TileOp::NarrowForce || op == TileOp::Nest) {
        edit(li, [at](std::vector<TileNode>& v) { v[static_cast<size_t>(at)].d = 0; });
      }
      if (op == TileOp::Force || op == TileOp::NarrowForce) {
        edit(li, [at](std::vector<TileNode>& v) { v[static_cast<size_t>(at)].a = 0; });
      }
      if (op == TileOp::ZipRotate) {
        edit(li, [at](std::vector<TileNode>& v) {
          v[static_cast<size_t>(at)].b = 0;
          v[static_cast<size_t>(at)].c = 0;
        });
      }
    }
  }
  if (mr.whole) with([](MatrixRecipe& m) { m.whole = false; });
  if (mr.transposeGrid) {
    with([](MatrixRecipe& m) { m.transposeGrid = false; });
    with([](MatrixRecipe& m) {
      m.transposeGrid = false;
      m.whole = true;
    });
  }
  if (mr.out != MatrixOut::Push) {
    if (mr.tileRows > 1) {
      with([](MatrixRecipe& m) { m.tileRows = 1; });
      with([](MatrixRecipe& m) { m.tileRows /= 2; });
      with([](MatrixRecipe& m) { m.tileRows -= 1; });
    }
    if (mr.tileCols > 1) {
      with([](MatrixRecipe& m) { m.tileCols = 1; });
      with([](MatrixRecipe& m) { m.tileCols /= 2; });
      with([](MatrixRecipe& m) { m.tileCols -= 1; });
    }
  }
  // The stencil: fewer and nearer neighbours, a smaller radius, the plainer options.
  for (size_t k = 0; k < mr.terms.size(); ++k) {
    const auto at = static_cast<long>(k);
    if (mr.terms.size() > 1) with([at](MatrixRecipe& m) { m.terms.erase(m.terms.begin() + at); });
    const StencilTerm& t = mr.terms[k];
    if (t.dr != 0) with([k](MatrixRecipe& m) { m.terms[k].dr = 0; });
    if (t.dc != 0) with([k](MatrixRecipe& m) { m.terms[k].dc = 0; });
    if (t.op != 0) with([k](MatrixRecipe& m) { m.terms[k].op = 0; });
  }
  if (mr.radius > 0) with([](MatrixRecipe& m) { m.radius -= 1; });
  if (mr.zero) with([](MatrixRecipe& m) { m.zero = false; });
  if (mr.viaHalo) with([](MatrixRecipe& m) { m.viaHalo = false; });
  if (mr.haloPadding) with([](MatrixRecipe& m) { m.haloPadding = 0; });
  if (mr.haloPush) with([](MatrixRecipe& m) { m.haloPush = false; });
  if (mr.narrowHalo) with([](MatrixRecipe& m) { m.narrowHalo = false; });
  // The expression: a node replaced by one of its kids.
  MExpr exprProbe = mr.expr;
  std::vector<size_t> kidCounts;
  forEachExpr(exprProbe, [&](MExpr& e) { kidCounts.push_back(e.kids.size()); });
  for (size_t i = 0; i < kidCounts.size(); ++i) {
    for (size_t j = 0; j < kidCounts[i]; ++j) {
      with([i, j](MatrixRecipe& m) {
        size_t k = 0;
        forEachExpr(m.expr, [&](MExpr& e) {
          if (k++ == i) {
            const MExpr kid = e.kids[j];
            e = kid;
          }
        });
      });
    }
  }
  // The inputs: one, smaller, without a pitch, of words.
  if (mr.inputs.size() == 2) {
    with([](MatrixRecipe& m) {
      forEachExpr(m.expr, [](MExpr& e) {
        if (e.kind == MExprKind::Input) e.a = 0;
      });
      m.inputs.pop_back();
    });
  }
  for (size_t k = 0; k < mr.inputs.size(); ++k) {
    const MatrixInput& m = mr.inputs[k];
    if (m.rows > 1) {
      with([k](MatrixRecipe& x) { x.inputs[k].rows = 1; });
      with([k](MatrixRecipe& x) { x.inputs[k].rows /= 2; });
      with([k](MatrixRecipe& x) { x.inputs[k].rows -= 1; });
    }
    if (m.cols > 1) {
      with([k](MatrixRecipe& x) { x.inputs[k].cols = x.inputs[k].pitch = 1; });
      with([k](MatrixRecipe& x) { x.inputs[k].cols /= 2; });
      with([k](MatrixRecipe& x) { x.inputs[k].cols -= 1; });
    }
    if (m.pitch > m.cols) {
      with([k](MatrixRecipe& x) { x.inputs[k].pitch = x.inputs[k].cols; });
      with([k](MatrixRecipe& x) {
        x.inputs[k].pitch -= (x.inputs[k].pitch - x.inputs[k].cols + 1) / 2;
      });
    }
    if (m.elem != 32) {
      with([k](MatrixRecipe& x) {
        x.inputs[k].elem = 32;
        x.narrowHalo = false;
      });
    }
  }
  auto launch = [&](const std::function<void(Recipe&)>& change) {
    Recipe c = r;
    change(c);
    out.push_back(std::move(c));
  };
  if (r.realBlocks > 1) launch([](Recipe& c) { c.realBlocks = 1; });
  for (uint32_t t : {32u, 64u}) {
    if (r.threads > t) launch([t](Recipe& c) { c.threads = t; });
    if (r.altThreads > t) launch([t](Recipe& c) { c.altThreads = t; });
  }
  // Only smaller ones: the shrinker takes the first candidate that fails alike, and one that
  // changed nothing would be taken again and again.
  const size_t size = matrixSize(r);
  std::erase_if(out, [size](const Recipe& c) { return matrixSize(c) >= size; });
  return out;
}

void countMatrix(const Recipe& r, std::map<std::string, uint64_t>& counts) {
  const MatrixRecipe& mr = *r.matrix;
  ++counts["matrix programs"];
  if (mr.inputs.size() == 2) ++counts["matrix: two inputs"];
  for (const MatrixInput& m : mr.inputs) {
    if (m.elem != 32) ++counts["matrix: u" + std::to_string(m.elem) + " input"];
    if (m.pitch > m.cols) ++counts["matrix: pitch > cols"];
  }
  static const char* const exprs[] = {"input", "map", "zipWith", "transpose"};
  MExpr e = mr.expr;
  forEachExpr(e, [&](MExpr& x) {
    if (x.kind != MExprKind::Input) {
      ++counts[std::string("matrix: grid ") + exprs[static_cast<size_t>(x.kind)]];
    }
  });
  switch (mr.out) {
    case MatrixOut::Push: ++counts["matrix: push2<Grid>"]; break;
    case MatrixOut::Tiles:
      ++counts["matrix: tiles, pConcat2"];
      if (mr.transposeGrid) ++counts["matrix: tiles, transposed grid"];
      if (mr.whole) ++counts["matrix: tiles, whole grid"];
      break;
    case MatrixOut::Stencil:
      ++counts["matrix: stencil radius " + std::to_string(mr.radius) +
               (mr.zero ? " Zero" : " Clamp")];
      if (mr.viaHalo) {
        ++counts[std::string("matrix: stencil via haloTiles, ") + (mr.haloPush ? "push2" : "pull") +
                 (mr.haloPadding ? " None" : " Auto")];
      }
      if (mr.narrowHalo) ++counts["matrix: stencil of a narrow matrix"];
      break;
  }
  static const char* const ops[] = {"map",   "addIndex",     "transpose", "zipRotate",
                                    "force", "narrow force", "nest"};
  // The tile steps by level: walk the body with the levels of its nests.
  std::function<void(const std::vector<TileNode>&, Level)> walk = [&](const auto& list, Level l) {
    for (const TileNode& n : list) {
      std::string what = std::string("matrix tile: ") + ops[static_cast<size_t>(n.op)];
      if (n.op == TileOp::Force || n.op == TileOp::NarrowForce) {
        what += std::string(n.a == 0 ? " pull" : " push2") + (n.d == 0 ? " Auto" : " None");
      }
      ++counts[what + " at " + levelName(l)];
      if (n.op == TileOp::Nest) walk(n.kids, l == Level::Block ? Level::Warp : Level::Thread);
    }
  };
  walk(mr.body, Level::Block);
}

}  // namespace

bool transposes(const std::vector<TileNode>& ops) {
  bool t = false;
  for (const TileNode& n : ops) {
    if (n.op == TileOp::Transpose || (n.op == TileOp::Nest && transposes(n.kids))) t = !t;
  }
  return t;
}

void countSteps(const Recipe& r, std::map<std::string, uint64_t>& counts) {
  if (r.matrix) {
    countMatrix(r, counts);
    return;
  }
  if (isDeepFold(r)) ++counts["deep fold"];
  static const char* const names[] = {
      "Map",          "AddIndex",  "ZipHalves",  "ZipEvenOdds", "Rotate",   "SplitFold",
      "CoalesceFold", "BinSplit",  "Interleave", "Ends",        "FloatMap", "Force",
      "SeqReduce",    "SeqScan",   "ConcP",      "Iterate",     "Nest",     "ThreadNest",
      "SeqNest",      "Histogram", "Load",       "Take",        "ForceZip"};
  static_assert(std::size(names) == kBasicOps);
  static const char* const reduceAlgs[] = {"red1", "red2", "red3", "red4",
                                           "red5", "red6", "red7", "warpShuffle"};
  static const char* const scanAlgs[] = {"sklansky", "sklansky2", "sklansky3", "koggeStone",
                                         "threadSequential"};
  static const char* const loadAlgs[] = {"direct", "striped", "warpStriped", "vectorized"};
  bool collective = false, floats = false;
  Level level = Level::Block;  // where the steps walked now run
  std::function<void(const std::vector<Node>&)> walk = [&](const std::vector<Node>& ops) {
    for (const Node& n : ops) {
      if (isCollective(n.op)) collective = true;
      const std::string op = std::string(" ") + collectiveName(n.c);
      const std::string kind = n.b == 1 ? " exclusive" : " inclusive";
      switch (n.op) {
        case Op::BlockReduce:
          ++counts["BlockReduce"];
          ++counts["BlockReduce " + std::string(reduceAlgs[n.a % 8])];
          ++counts["BlockReduce/WarpReduce" + op];
          break;
        case Op::BlockScan:
          ++counts["BlockScan"];
          ++counts["BlockScan " + std::string(scanAlgs[n.a % 5]) + kind];
          ++counts["BlockScan/WarpScan" + op];
          break;
        case Op::BlockLoadStore:
          ++counts["BlockLoadStore"];
          ++counts["BlockLoadStore load " + std::string(loadAlgs[n.a % 4])];
          ++counts["BlockLoadStore store " + std::string(loadAlgs[n.b % 4])];
          break;
        case Op::BlockHistogram:
          ++counts["BlockHistogram"];
          ++counts["BlockHistogram copies " + std::to_string(1u << n.a)];
          break;
        case Op::WarpReduce:
          ++counts["WarpReduce"];
          ++counts["BlockReduce/WarpReduce" + op];
          break;
        case Op::WarpScan:
          ++counts["WarpScan" + kind];
          ++counts["BlockScan/WarpScan" + op];
          break;
        case Op::WarpExchange: ++counts["WarpExchange"]; break;
        case Op::NarrowMap:
          ++counts["NarrowMap u" + std::to_string(n.c)];
          ++counts["NarrowMap operator " + std::to_string(n.a)];
          break;
        case Op::NarrowForce:
          ++counts["NarrowForce u" + std::to_string(n.c) + (n.a == 0 ? "" : " zipped with u32")];
          break;
        case Op::FloatBits: {
          static const char* const kinds[] = {"moves",   "arithmetic", "neg/fabs", "comparisons",
                                              "min/max", "f32<->f64",  "f32->u32", "f64 bits"};
          floats = true;
          ++counts[std::string("FloatBits ") + kinds[n.a % kFloatBitsOps]];
          const bool nan = (n.b & 0x7f800000u) == 0x7f800000u && (n.b & 0x7fffffu) != 0;
          if (nan) {
            ++counts[std::string("FloatBits literal: ") +
                     ((n.b & 0x400000u) ? "quiet NaN" : "signalling NaN")];
          }
          break;
        }
        case Op::FloatScan: {
          static const char* const kinds[] = {"add", "min", "max", "mul", "f64 add", "force"};
          floats = true;
          ++counts[std::string("FloatScan ") + kinds[std::min(n.a, kFloatScanOps)] + " at " +
                   levelName(level)];
          break;
        }
        default: ++counts[names[static_cast<size_t>(n.op)]]; break;
      }
      const Level outer = level;
      if (n.op == Op::ThreadNest) level = Level::Thread;
      if (n.op == Op::Nest) level = level == Level::Block ? Level::Warp : Level::Thread;
      walk(n.kids);
      level = outer;
    }
  };
  walk(r.body);
  if (collective) ++counts["programs with a collective"];
  if (floats) ++counts["programs with float-bits steps"];
  static const char* const divisors[] = {"none", "require (d = 0 refused)", "guarded by ||",
                                         "guarded by a select", "length (d = 0 refused)"};
  if (r.divisor != Divisor::None) {
    ++counts[std::string("divisor: ") + divisors[static_cast<size_t>(r.divisor)]];
  }
  ++counts[r.grid == Shape::Flat       ? "grid: flat"
           : r.grid == Shape::Coalesce ? "grid: coalesce"
                                       : "grid: splitUp"];
  if (r.chunk & (r.chunk - 1)) ++counts["chunk not a power of two"];
  if (r.staticInput) ++counts["static input length"];
  if (r.gridOutput) ++counts["two outputs"];
  if (r.globalBins) ++counts["global atomics"];
  if (r.gridZip && r.oddInput) ++counts["odd input, halves differ"];
  if (r.elem != 32) ++counts["input u" + std::to_string(r.elem)];
  if (r.vector) {
    ++counts["vectors<" + std::to_string(r.vector) + "> of u" + std::to_string(r.elem)];
  }
  if (r.result == Result::EffectWrite) ++counts["effect-only: distrPar writes"];
  if (r.result == Result::EffectAtomic) {
    ++counts["effect-only: forEachBlock " + std::string(accName(r.accOp))];
  }
  if (r.result != Result::Output && r.gridOutput) ++counts["effect beside an output"];
  if (!r.fused.empty()) {
    const std::string level = r.fusedThread > 0 ? "Thread" : "Block";
    ++counts["fused: " + std::to_string(1 + r.fused.size()) + " parts at " + level + " level"];
    if (r.result != Result::Output) ++counts["fused: beside an effect"];
    if (r.result == Result::Output && r.gridOutput) ++counts["fused: beside an output"];
    if (r.gridFirst) ++counts["fused: after an output"];
    if (r.fusedForce) ++counts["fused: result forced first"];
    if (r.fusedNested) ++counts["fused: nested fuse"];
    static const char* const kinds[] = {" map", " reduce", " scan"};
    for (const FusedPart& f : r.fused) {
      std::string what = "fused part: " + level + kinds[static_cast<size_t>(f.kind)];
      if (f.kind != PartKind::Map && r.fusedThread == 0) {
        what += f.kind == PartKind::Reduce ? std::string(" ") + reduceAlgs[f.a % 8]
                                           : std::string(" ") + scanAlgs[f.a % 5];
        ++counts["fused part: Block collective " + std::string(collectiveName(f.c))];
      }
      ++counts[what];
    }
  }
}

namespace {
// The fused parts' share of recipeSize: a part weighs as a step; its variants one each.
size_t fusedSize(const Recipe& r) {
  size_t size =
      r.fused.size() * 100000 + (r.fusedThread > 0) + r.fusedForce + r.fusedNested + r.gridFirst;
  for (const FusedPart& f : r.fused) {
    size += (f.kind != PartKind::Map) + (f.a != 0) + (f.b != 0) + (f.c != 0);
  }
  return size;
}
}  // namespace

size_t recipeSize(const Recipe& r) {
  if (r.matrix) return matrixSize(r);
  // The collectives' variants (non-zero algorithm, operator, ...) count one each: shrinking
  // moves them towards the simplest.
  size_t variants = 0;
  std::vector<Node> body = r.body;
  forEachNodeList(body, [&](std::vector<Node>& ops) {
    for (const Node& n : ops) {
      if (isCollective(n.op)) variants += (n.a != 0) + (n.c != 0);
      if (isNarrow(n.op)) variants += n.a != 0;
      if (n.op == Op::FloatBits) variants += (n.a != 0) + (n.b != 0) + (n.d != 0);
      if (n.op == Op::FloatScan) variants += (n.a != 0) + (n.b > 1);
    }
  });
  return countNodes(r.body) * 100000 + inputLength(r) + r.threads + r.altThreads + r.realBlocks +
         (r.gridMap ? 1 : 0) + (r.gridZip ? 1 : 0) + variants + (r.elem != 32) + (r.vector != 0) +
         (r.result != Result::Output) + r.accSlots + r.accSpare + fusedSize(r) +
         (r.divisor != Divisor::None) + (r.divisorValue != 1);
}

std::vector<Recipe> shrinkCandidates(const Recipe& r) {
  if (r.matrix) return matrixShrinkCandidates(r);
  std::vector<Recipe> out;
  auto with = [&](auto change) {
    Recipe c = r;
    change(c);
    out.push_back(std::move(c));
  };
  // Every list of steps in the tree (the body and each node's kids), in a fixed order, with
  // which of its steps have kids.
  std::vector<std::vector<bool>> lists;
  Recipe probe = r;
  forEachNodeList(probe.body, [&](std::vector<Node>& v) {
    std::vector<bool> nested;
    for (const Node& n : v) nested.push_back(!n.kids.empty());
    lists.push_back(nested);
  });
  auto edit = [&](size_t li, const std::function<void(std::vector<Node>&)>& change) {
    with([&](Recipe& c) {
      size_t k = 0;
      forEachNodeList(c.body, [&](std::vector<Node>& v) {
        if (k++ == li) change(v);
      });
    });
  };
  for (size_t li = 0; li < lists.size(); ++li) {
    for (size_t j = 0; j < lists[li].size(); ++j) {
      const auto at = static_cast<long>(j);
      // Remove one step.
      edit(li, [at](std::vector<Node>& v) { v.erase(v.begin() + at); });
      // A collective's simplest variant: the first algorithm (red1, sklansky, a direct load;
      // the histogram: one copy), the sum (the histogram: levels from 0).
      const Node& step = [&]() -> const Node& {
        size_t k = 0;
        const Node* found = nullptr;
        forEachNodeList(probe.body, [&](std::vector<Node>& v) {
          if (k++ == li) found = &v[j];
        });
        return *found;
      }();
      if (isCollective(step.op) && step.a != 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].a = 0; });
      }
      if (isCollective(step.op) && step.c != 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].c = 0; });
      }
      // A narrow step's first operator (NarrowForce: the narrow array alone).
      if (isNarrow(step.op) && step.a != 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].a = 0; });
      }
      // A float step's moves (FloatScan: the sum), literal +0 (f64 too), pieces of 1.
      if (isFloatBits(step.op) && step.a != 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].a = 0; });
      }
      if (step.op == Op::FloatBits && (step.b != 0 || step.d != 0)) {
        edit(li, [at](std::vector<Node>& v) {
          v[static_cast<size_t>(at)].b = 0;
          v[static_cast<size_t>(at)].d = 0;
        });
      }
      if (step.op == Op::FloatScan && step.b > 1) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].b = 1; });
      }
      // Replace a nested step by its kids, spliced in (every step of a lower level is also
      // legal at the level above; the reference decides whether the lengths still fit).
      if (lists[li][j]) {
        edit(li, [at](std::vector<Node>& v) {
          const std::vector<Node> kids = v[static_cast<size_t>(at)].kids;
          v.erase(v.begin() + at);
          v.insert(v.begin() + at, kids.begin(), kids.end());
        });
      }
    }
  }
  // The divisor: none, or 1 (which divides every length the shrinking below tries).
  if (r.divisor != Divisor::None) with([](Recipe& c) { c.divisor = Divisor::None; });
  if (r.divisorValue != 1) with([](Recipe& c) { c.divisorValue = 1; });
  if (r.blocks > 1) {
    with([](Recipe& c) {
      c.blocks = 1;
      c.realBlocks = 1;
    });
    with([](Recipe& c) {
      c.blocks /= 2;
      c.realBlocks = std::min(c.realBlocks, c.blocks);
    });
    with([](Recipe& c) {
      c.blocks -= 1;
      c.realBlocks = std::min(c.realBlocks, c.blocks);
    });
  }
  if (r.realBlocks > 1) with([](Recipe& c) { c.realBlocks = 1; });
  if (r.gridMap) with([](Recipe& c) { c.gridMap = false; });
  if (r.gridZip) with([](Recipe& c) { c.gridZip = false; });
  if (r.staticInput) with([](Recipe& c) { c.staticInput = false; });
  if (r.oddInput) with([](Recipe& c) { c.oddInput = false; });
  if (r.gridOutput) with([](Recipe& c) { c.gridOutput = false; });
  if (r.globalBins) with([](Recipe& c) { c.globalBins = 0; });
  if (r.grid == Shape::Coalesce) with([](Recipe& c) { c.grid = Shape::SplitUp; });
  // The narrow input and the effect: their plainer forms.
  if (r.elem != 32) {
    with([](Recipe& c) {
      c.elem = 32;
      c.vector = 0;
    });
  }
  if (r.vector) with([](Recipe& c) { c.vector = 0; });
  if (r.result != Result::Output) with([](Recipe& c) { c.result = Result::Output; });
  if (r.result == Result::EffectAtomic && r.accOp != 0) with([](Recipe& c) { c.accOp = 0; });
  if (r.accSlots > 1) with([](Recipe& c) { c.accSlots = 1; });
  if (r.accSpare > 0) with([](Recipe& c) { c.accSpare = 0; });
  if (r.effectFirst) with([](Recipe& c) { c.effectFirst = false; });
  // The fused output: none, fewer parts, plainer parts, a plainer fuse.
  if (!r.fused.empty()) {
    with([](Recipe& c) {
      c.fused.clear();
      c.fusedThread = 0;
      c.fusedForce = c.fusedNested = false;
    });
  }
  for (size_t k = 0; k < r.fused.size(); ++k) {
    const auto at = static_cast<long>(k);
    if (r.fused.size() > 1) {
      with([at](Recipe& c) {
        c.fused.erase(c.fused.begin() + at);
        c.fusedNested = false;
      });
    }
    // The simplest part: a map of the first operator and constant 0.
    const FusedPart& f = r.fused[k];
    if (f.kind != PartKind::Map || f.a != 0 || f.b != 0) {
      with([k](Recipe& c) { c.fused[k] = FusedPart{}; });
    }
    if (f.kind != PartKind::Map && f.a != 0) with([k](Recipe& c) { c.fused[k].a = 0; });
    if (f.kind != PartKind::Map && f.c != 0) with([k](Recipe& c) { c.fused[k].c = 0; });
  }
  if (r.fusedThread > 0) with([](Recipe& c) { c.fusedThread = 0; });
  if (r.fusedForce) with([](Recipe& c) { c.fusedForce = false; });
  if (r.fusedNested) with([](Recipe& c) { c.fusedNested = false; });
  if (r.gridFirst) with([](Recipe& c) { c.gridFirst = false; });
  if (r.chunk > 1) {
    with([](Recipe& c) { c.chunk /= 2; });
    with([](Recipe& c) { c.chunk -= 1; });
  }
  for (uint32_t t : {32u, 64u}) {
    if (r.threads > t) with([t](Recipe& c) { c.threads = t; });
    if (r.altThreads > t) with([t](Recipe& c) { c.altThreads = t; });
  }
  return out;
}

}  // namespace fuzz
