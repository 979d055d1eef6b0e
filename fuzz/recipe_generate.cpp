// Generation: a random well-typed, well-sized 1-D recipe from a seed. The main stream draws
// what the first generator drew; each later kind of step or recipe (collectives, narrow types,
// float bit patterns, bit intrinsics and warp votes, thread arrays, their block scans, half
// precision and fp8, block radix sorts, block discontinuities, block merge sorts, fused
// outputs, divisors, vector stores, matrix kernels)
// draws from a stream of its own seeded by the data seed, so the recipes that draw none of
// them stay as they were. Matrix recipes: recipe_matrix_generate.cpp.
#include <algorithm>
#include <array>

#include "recipe_internal.hpp"
#include "scalar_ops.hpp"

namespace fuzz {

namespace {

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

  // The times a block program runs in one configuration of the kernel: once per block. The
  // steps of a SeqNest's body run that many times more (a merge sort's cost counts them).
  void setBlocks(uint32_t blocks) { runs_ = blocks; }

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
          bitsStep(level, pullOnly, n, ops);
          itemsStep(level, pullOnly, n, ops);
          sortStep(level, pullOnly, n, ops);
          adjacentStep(level, pullOnly, n, ops);
          mergeStep(level, pullOnly, n, ops);
          smallStep(pullOnly, ops);
          pairStep(ops);
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
      bitsStep(level, pullOnly, n, ops);
      itemsStep(level, pullOnly, n, ops);
      sortStep(level, pullOnly, n, ops);
      adjacentStep(level, pullOnly, n, ops);
      mergeStep(level, pullOnly, n, ops);
      smallStep(pullOnly, ops);
      pairStep(ops);
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
  // From now on, a bit step (BitsMap, WarpVote) follows a step now and then, drawn from a
  // stream of its own (they keep the length too).
  void enableBits(uint64_t seed) {
    bits_.seed(seed ^ 0x9fb21c651e98df25ull);
    bitsOn_ = true;
  }
  // From now on, a thread array's step (ThreadItems) follows a step of a Block or Warp body
  // now and then, drawn from a stream of its own (it keeps the length too).
  void enableItems(uint64_t seed) {
    items_.seed(seed ^ 0x8ebc6af09c88c6e3ull);
    itemsOn_ = true;
  }
  // From now on, a small float step (SmallFloatMap, SmallFloatForce) follows a step now and
  // then, drawn from a stream of its own (they keep the length too).
  void enableSmallFloats(uint64_t seed) {
    small_.seed(seed ^ 0x2127599bf4325c37ull);
    smallOn_ = true;
  }
  // From now on, a ThreadItems of a Block body in blocks of whole warps takes the scan form
  // (blockScanItems) now and then, drawn from a stream of its own: the items stream draws what
  // it drew, and a ThreadItems that takes no scan form is the one drawn before.
  void enableItemsScans(uint64_t seed) {
    itemsScans_.seed(seed ^ 0xe7037ed1a0b428dbull);
    itemsScansOn_ = true;
  }
  // From now on, a packed pair step (PairMap) follows a step now and then, drawn from a stream
  // of its own (it keeps the length too).
  void enablePairs(uint64_t seed) {
    pairs_.seed(seed ^ 0x7c3f1e5d2b9a4867ull);
    pairsOn_ = true;
  }
  // From now on, a block radix sort (BlockRadixSort) follows a step of a Block body now and
  // then, drawn from a stream of its own (it keeps the length too, and no other stream reads
  // what it draws).
  void enableSorts(uint64_t seed) {
    sorts_.seed(seed ^ 0x4f1bbcdcbfa53e0bull);
    sortsOn_ = true;
  }
  // From now on, a block discontinuity (BlockDiscontinuity) follows a step of a Block body now
  // and then, drawn from a stream of its own (it keeps the length too, and no other stream
  // reads what it draws).
  void enableAdjacent(uint64_t seed) {
    adjacent_.seed(seed ^ 0xd1b54a32d192ed03ull);
    adjacentOn_ = true;
  }
  // From now on, a block merge sort (BlockMergeSort) follows a step of a Block body now and
  // then, drawn from a stream of its own (it keeps the length too, and no other stream reads
  // what it draws).
  void enableMerges(uint64_t seed) {
    merges_.seed(seed ^ 0x8cb92ba72f3d8dd7ull);
    mergesOn_ = true;
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
      take.size = m = n - n % 32;
      out.push_back(take);
    }
    std::vector<uint32_t> pieces;
    for (uint32_t k = 1; k <= 16; ++k) {
      if ((m / 32) % k == 0) pieces.push_back(32 * k);
    }
    Node nest;
    nest.op = Op::Nest;
    nest.size = pieces[cBelow(static_cast<uint32_t>(pieces.size()))];
    uint32_t piece = nest.size;
    const uint32_t steps = 1 + cBelow(2);
    for (uint32_t s = 0; s < steps; ++s) collective(w.at(Level::Warp), piece, nest.kids);
    if (nest.kids.empty()) return false;
    out.push_back(nest);
    nodes.insert(nodes.end(), out.begin(), out.end());
    usesWarps = true;
    n = (m / nest.size) * piece;
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
          node.alg = cBelow(8);
          node.fn = cBelow(node.alg == 0 ? kCollectiveOps : kCommutativeOps);
          break;
        case Op::BlockScan:
          node.alg = cBelow(5);
          node.exclusive = cBelow(2) == 1;
          node.fn = cBelow(kCollectiveOps);
          break;
        case Op::BlockLoadStore:
          node.loadAlg = cBelow(4);
          node.storeAlg = cBelow(3);
          break;
        case Op::BlockHistogram: {
          node.log2Copies = cBelow(6);
          node.bins = 1 + cBelow(64);
          // Levels of every kind: from 0 or a random word, over a range of any size.
          const uint32_t fromZero = cBelow(3), lowShift = cBelow(32), rangeShift = cBelow(32);
          const uint64_t lower = collectives_(), range = collectives_();
          node.lower = fromZero == 0 ? 0 : static_cast<uint32_t>(lower >> (32 + lowShift));
          const uint64_t room = uint64_t{0xffffffffu} - node.lower;
          if (room == 0) continue;
          node.upper = node.lower + 1 + static_cast<uint32_t>((range >> rangeShift) % room);
          m = node.bins;
          break;
        }
        case Op::WarpReduce: node.fn = cBelow(kCommutativeOps); break;
        case Op::WarpScan:
          node.exclusive = cBelow(2) == 1;
          node.fn = cBelow(kCollectiveOps);
          break;
        default: break;
      }
      const bool bound = node.op == Op::BlockLoadStore ||
                         (node.op == Op::BlockReduce && node.alg == 7) ||
                         (node.op == Op::BlockScan && node.alg == 4);
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
        take.size = fit;
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
    // Drawn for every step: the operator of those of a binary one (FloatMap's too).
    const uint32_t binary = below(kBinaryOps);
    if (pullOnly && !isPullStep(node.op)) return false;
    switch (node.op) {
      case Op::Map:
        node.fn = below(kUnaryOps);
        node.constant = static_cast<uint32_t>(rng_());
        return true;
      case Op::AddIndex: node.constant = below(1000); return true;
      case Op::FloatMap:
        node.fn = binary;
        node.constant = below(1024);
        return true;
      case Op::ZipHalves:
      case Op::ZipEvenOdds:
      case Op::ForceZip:
        node.fn = binary;
        n /= 2;
        return n > 0;
      case Op::Rotate: node.size = below(n + 1); return true;
      case Op::ConcP: return n >= 2;
      case Op::Interleave: n = 2 * (n / 2); return n > 0;
      case Op::Ends:
        node.size = below(5);
        n = node.size + 1;
        return true;
      case Op::Load:
        if (level == Level::Thread) return false;
        node.size = divisor(n, 1, 16);
        return node.size != 0;
      case Op::Take:
        node.size = 1 + below(n);
        n = node.size;
        return true;
      case Op::Force: return true;
      case Op::SplitFold:
      case Op::CoalesceFold:
      case Op::SeqReduce:
        node.fn = binary;
        node.size = divisor(n, 2, 16);
        if (node.size == 0) return false;
        n /= node.size;
        return true;
      case Op::SeqScan:
        node.fn = binary;
        node.size = divisor(n, 2, 64);
        return node.size != 0;
      case Op::Iterate:
        node.until = below(2) == 1;
        node.limit = node.until ? static_cast<uint32_t>(rng_() >> 40) : below(6);
        return true;
      case Op::BinSplit: {
        if (!canNest) return false;
        uint32_t k = 1 + below(3);
        while (k > 0 && n % (1u << k) != 0) --k;
        if (k == 0) return false;
        node.log2Parts = k;
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
        node.size = divisor(n, node.op == Op::SeqNest ? std::max(1u, n / 8) : 1, hi);
        if (node.size == 0) return false;
        uint32_t m = node.size;
        // A SeqNest's body runs once for each of its pieces, one after the other.
        const uint64_t runs = runs_;
        if (node.op == Op::SeqNest) runs_ *= n / node.size;
        node.kids = body(inner, m, depth + 1, false);
        runs_ = runs;
        n = (n / node.size) * m;
        usesWarps = usesWarps || inner == Level::Warp;
        return true;
      }
      case Op::Histogram:
        if (level == Level::Thread) return false;
        node.bins = 1 + below(40);
        n = node.bins;
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
    node.width = narrow_() % 2 == 0 ? 8 : 16;
    if (node.op == Op::NarrowMap) {
      node.fn = static_cast<uint32_t>(narrow_() % kNarrowOps);
      node.constant = static_cast<uint32_t>(narrow_());
    } else {
      node.zipped = narrow_() % 2 == 1;
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
    node.specials = 1 + fBelow(8);
    if (node.op == Op::FloatBits) {
      node.fn = fBelow(kFloatBitsOps);
      node.constant = floatLiteral();
      node.constantHigh = doubleLiteralHigh();
    } else {
      node.fn = fBelow(kFloatScanOps + 1);
      std::vector<uint32_t> pieces;
      for (uint32_t k = 1; k <= std::min(n, 64u); ++k) {
        if (n % k == 0) pieces.push_back(k);
      }
      node.size = pieces[fBelow(static_cast<uint32_t>(pieces.size()))];
    }
    ops.push_back(node);
  }

  // Percent of the steps that a BitsMap follows; a WarpVote follows kVotePercent of those where
  // it fits: where the array is a warp's 32 elements in a block of whole warps, or (rarely 32
  // elements as a Warp body is) 32 x k of them, the WarpVote then in a nest of its own over
  // pieces of 32 (keeping the length): a SeqNest of Warp programs in a Warp body, a Nest of Warp
  // programs in a Block body where a Warp program was made already (usesWarps: the later steps
  // choose whole warps anyway, so the other streams draw what they drew).
  static constexpr uint32_t kBitsPercent = 5;
  static constexpr uint32_t kVotePercent = 20;
  void bitsStep(Level level, bool pullOnly, uint32_t n, std::vector<Node>& ops) {
    if (!bitsOn_) return;
    // A Warp body runs in a block of whole warps (Nest and warpNest check the thread counts,
    // and no later step chooses others once usesWarps is set); checked again here all the same.
    const bool wholeWarps = !pullOnly && block_.threads % 32 == 0 && block_.altThreads % 32 == 0;
    const bool direct = wholeWarps && level == Level::Warp && n == 32;
    const bool nested = wholeWarps && !direct && n % 32 == 0 &&
                        (level == Level::Warp || (level == Level::Block && usesWarps));
    // One roll: [0, kVotePercent) a WarpVote where one fits, then kBitsPercent a BitsMap.
    const uint32_t roll = static_cast<uint32_t>(bits_() % 100);
    const uint32_t mapFrom = direct || nested ? kVotePercent : 0;
    const bool vote = (direct || nested) && roll < kVotePercent;
    if (!vote && (roll < mapFrom || roll >= mapFrom + kBitsPercent)) return;
    Node node;
    node.op = vote ? Op::WarpVote : Op::BitsMap;
    node.fn = static_cast<uint32_t>(bits_() % (vote ? kWarpVotes : kBitsOps));
    node.constant = static_cast<uint32_t>(bits_());
    if (!vote || direct) {
      if (vote) usesWarps = true;  // set already (see above): no change
      ops.push_back(node);
      return;
    }
    Node nest;
    nest.op = level == Level::Warp ? Op::SeqNest : Op::Nest;
    nest.size = 32;
    nest.kids = {node};
    ops.push_back(nest);
  }

  // Percent of the steps of Block bodies that a ThreadItems follows where one fits (Warp
  // bodies are rarer: a higher percent there): loops of T threads with I = n / T items each
  // (1 to 8), T from 2 to both thread counts (a Warp's: 32 lanes); T is the smaller thread count
  // (32 lanes) where that fits, else any that does (half the time the most that keep two items
  // each). A later collective or the last draw of the thread counts may give fewer threads
  // than T: generateSteps then drops the step (dropUnfitItems), so the streams draw what they
  // drew.
  static constexpr uint32_t kItemsPercent = 2;
  static constexpr uint32_t kWarpItemsPercent = 10;
  void itemsStep(Level level, bool pullOnly, uint32_t n, std::vector<Node>& ops) {
    if (!itemsOn_ || pullOnly || level == Level::Thread) return;
    if (items_() % 100 >= (level == Level::Warp ? kWarpItemsPercent : kItemsPercent)) return;
    const bool wholeWarps = block_.threads % 32 == 0 && block_.altThreads % 32 == 0;
    if (level == Level::Warp && !wholeWarps) return;
    const uint32_t most = level == Level::Warp ? 32u : std::min(block_.threads, block_.altThreads);
    std::vector<uint32_t> fit;
    // Two threads or more (one alone would be its own neighbour).
    const uint32_t fewest = std::max(2u, (n + kMostThreadItems - 1) / kMostThreadItems);
    for (uint32_t t = fewest; t <= std::min(n, most); ++t) {
      if (n % t == 0) fit.push_back(t);
    }
    if (fit.empty()) return;
    Node node;
    node.op = Op::ThreadItems;
    // Else half the time the most threads that keep two items or more each.
    const bool whole = n % most == 0 && n / most <= kMostThreadItems;
    uint32_t most2 = 0;
    for (uint32_t t : fit) most2 = n / t >= 2 ? t : most2;
    const uint32_t pick = static_cast<uint32_t>(items_() % 4);
    node.size = whole && pick != 0            ? most
                : most2 != 0 && pick % 2 == 0 ? most2
                                              : fit[static_cast<uint32_t>(items_() % fit.size())];
    node.fn = static_cast<uint32_t>(items_() % kThreadItemsFns);
    node.constant = static_cast<uint32_t>(items_());
    if (level == Level::Block) itemsScanForm(node);
    ops.push_back(node);
  }

  // Percent of the ThreadItems of Block bodies in blocks of whole warps that take the scan
  // form: its operator and whether the aggregate is added. Later thread counts of part of a
  // warp undo it (plainItems).
  static constexpr uint64_t kItemsScanPercent = 50;
  void itemsScanForm(Node& node) {
    if (!itemsScansOn_ || block_.threads % 32 != 0 || block_.altThreads % 32 != 0) return;
    if (itemsScans_() % 100 >= kItemsScanPercent) return;
    node.scan = 1 + static_cast<uint32_t>(itemsScans_() % kItemsScanOps);
    node.aggregate = itemsScans_() % 2 == 1;
  }

  // Percent of the steps of Block bodies that a BlockRadixSort follows where one fits: blocks
  // of whole warps at both thread counts, chunks (1 to kMostSortChunks of the array) within
  // a tile of 8 items a thread at the smaller count. A few tries, each drawing every field
  // until one fits (sortFitsThreads) and costs at most kMostSortWork. The chunk: a third of
  // the time T x I elements of T threads in whole warps (T the smaller count half of those
  // times: the whole tile), where the length has such chunks; else any that the tile holds,
  // with the fewest items half the time. The whole word a quarter of the time. A later
  // collective or the last draw of the thread counts may give counts it does not fit:
  // generateSteps then drops it (dropUnfitSorts), so the streams draw what they drew.
  static constexpr uint64_t kSortPercent = 4;
  // Threads x items x passes x chunks (the larger thread count): each pass of each item a
  // warp's ballots and matches, unrolled in the kernel, and what the simulator runs.
  static constexpr uint32_t kMostSortWork = 2048;
  uint32_t oBelow(uint32_t k) { return static_cast<uint32_t>(sorts_() % k); }
  void sortStep(Level level, bool pullOnly, uint32_t n, std::vector<Node>& ops) {
    if (!sortsOn_ || pullOnly || level != Level::Block) return;
    if (sorts_() % 100 >= kSortPercent) return;
    const uint32_t fewest = std::min(block_.threads, block_.altThreads);
    if (block_.threads % 32 != 0 || block_.altThreads % 32 != 0 || fewest == 0) return;
    const Where w = block_.at(Level::Block);
    std::vector<uint32_t> chunks;
    for (uint32_t c = 1; c <= kMostSortChunks; ++c) {
      if (n % c == 0) chunks.push_back(c);
    }
    // Chunks of T x I elements (T whole warps), the whole tile's apart: {chunks, T, I}.
    std::vector<std::array<uint32_t, 3>> warps, tiles;
    for (uint32_t k : chunks) {
      for (uint32_t t = 32; t <= fewest; t += 32) {
        const uint32_t i = n / k / t;
        if (n / k % t == 0 && i >= 1 && i <= kMostThreadItems) {
          (t == fewest ? tiles : warps).push_back({k, t, i});
        }
      }
    }
    uint32_t log2Threads = 0;
    while ((2u << log2Threads) <= fewest) ++log2Threads;
    for (int attempt = 0; attempt < 6; ++attempt) {
      Node node;
      node.op = Op::BlockRadixSort;
      uint32_t c = chunks[oBelow(static_cast<uint32_t>(chunks.size()))];
      const uint32_t form = oBelow(6);
      if (form < 2 && (!warps.empty() || !tiles.empty())) {
        // 0: the whole tile where the length has one; 1: fewer threads where it has those.
        const bool whole = warps.empty() || (!tiles.empty() && form == 0);
        const auto& from = whole ? tiles : warps;
        const std::array<uint32_t, 3> pick = from[oBelow(static_cast<uint32_t>(from.size()))];
        c = pick[0];
        node.size = pick[1] * pick[2];
        node.items = pick[2];
      } else {
        node.size = n / c;
        const uint32_t least = (node.size + fewest - 1) / fewest;
        if (least > kMostThreadItems) continue;
        node.items = oBelow(2) == 0 ? least : least + oBelow(kMostThreadItems - least + 1);
      }
      node.radixBits = 1 + oBelow(std::min(8u, log2Threads));
      if (oBelow(4) == 0) {
        node.endBit = 32;
      } else {
        const uint32_t a = oBelow(33), b = oBelow(33);
        node.beginBit = std::min(a, b);
        node.endBit = std::max(a, b);
      }
      node.descending = oBelow(2) == 1;
      node.format = oBelow(kSortKeyTypes);
      node.values = oBelow(kMostSortValues + 1);
      node.fn = oBelow(kSortForms);
      node.constant = static_cast<uint32_t>(sorts_());
      const uint32_t passes = (node.endBit - node.beginBit + node.radixBits - 1) / node.radixBits;
      const uint32_t most = std::max(block_.threads, block_.altThreads);
      if (most * node.items * passes * c > kMostSortWork || !collectiveFits(w, node, n)) continue;
      ops.push_back(node);
      return;
    }
  }

  // Percent of the steps of Block bodies that a BlockDiscontinuity follows where one fits:
  // chunks (1 to kMostAdjacentChunks of the array) within a tile of 8 items a thread at the
  // smaller count, items the fewest that hold the chunk half the time (the whole tile where
  // the chunk has one), and threads x items x chunks at most kMostAdjacentWork at the larger
  // count. Items are x >> shift: the word itself a third of the time (runs only where earlier
  // steps repeat words), 1 to 4 bits another third (runs everywhere). A later collective or
  // the last draw of the thread counts may give counts it does not fit: generateSteps then
  // drops it (dropUnfitAdjacent), so the streams draw what they drew.
  static constexpr uint64_t kAdjacentPercent = 4;
  static constexpr uint32_t kMostAdjacentWork = 8192;
  uint32_t aBelow(uint32_t k) { return static_cast<uint32_t>(adjacent_() % k); }
  void adjacentStep(Level level, bool pullOnly, uint32_t n, std::vector<Node>& ops) {
    if (!adjacentOn_ || pullOnly || level != Level::Block) return;
    if (adjacent_() % 100 >= kAdjacentPercent) return;
    const uint32_t fewest = std::min(block_.threads, block_.altThreads);
    const uint32_t most = std::max(block_.threads, block_.altThreads);
    if (fewest == 0) return;
    const Where w = block_.at(Level::Block);
    std::vector<uint32_t> chunks;
    for (uint32_t c = 1; c <= kMostAdjacentChunks; ++c) {
      if (n % c == 0) chunks.push_back(c);
    }
    for (int attempt = 0; attempt < 4; ++attempt) {
      Node node;
      node.op = Op::BlockDiscontinuity;
      const uint32_t c = chunks[aBelow(static_cast<uint32_t>(chunks.size()))];
      node.size = n / c;
      const uint32_t least = (node.size + fewest - 1) / fewest;
      if (least > kMostThreadItems) continue;
      node.items = aBelow(2) == 0 ? least : least + aBelow(kMostThreadItems - least + 1);
      node.adjacent = aBelow(kAdjacentKinds);
      node.edge = aBelow(node.adjacent == 2 ? 2 : kAdjacentEdges);
      const uint32_t bits = aBelow(3);
      node.shift = bits == 0 ? 0 : bits == 1 ? 28 + aBelow(4) : aBelow(32);
      node.constant = static_cast<uint32_t>(adjacent_());
      node.fn = aBelow(kAdjacentForms);
      if (most * node.items * c > kMostAdjacentWork || !collectiveFits(w, node, n)) continue;
      ops.push_back(node);
      return;
    }
  }

  // Percent of the steps of Block bodies that a BlockMergeSort follows where one fits: chunks
  // (1 to kMostMergeChunks of the array) within a tile of 8 items a thread at the smaller
  // count, items the fewest that hold the chunk half the time, and at most kMostMergeWork in
  // all (mergeWork at the larger count, times the chunks and the times the body runs: once a
  // block, and once a piece of each SeqNest around it). The comparator: ascending,
  // descending, or by a masked part of the word either way (mergeMask); every element valid
  // half the time, else the chunk's size or a count read in the kernel; the places sorted
  // along half the time. A later collective or the last draw of the thread counts may give
  // counts it does not fit: generateSteps then drops it (dropUnfitMerges), so the streams
  // draw what they drew.
  static constexpr uint64_t kMergePercent = 3;
  // What the simulator runs of the sorts of one step in one configuration, about: a merge
  // round is a binary search of seqWhile steps and a merge, per thread (a sort of 1,024
  // threads of 1 item: 113,664; of 32 threads of 8 items: 4,128).
  static constexpr uint64_t kMostMergeWork = 1u << 18;
  uint32_t mBelow(uint32_t k) { return static_cast<uint32_t>(merges_() % k); }
  // A masked order's mask: 1 to 4 bits in a row (long runs of ties), a scatter of few bits,
  // the high bits from one on, or any word.
  uint32_t mergeMask() {
    const uint32_t word = static_cast<uint32_t>(merges_());
    switch (mBelow(4)) {
      case 0: {
        const uint32_t bits = 1 + mBelow(4);
        return ((1u << bits) - 1u) << mBelow(33 - bits);
      }
      case 1: return word & static_cast<uint32_t>(merges_()) & static_cast<uint32_t>(merges_());
      case 2: return 0xffffffffu << mBelow(32);
      default: return word;
    }
  }
  // A sort's work in a block of `threads` threads: each thread's items^2 compare-exchanges
  // (about) and, in each of the log2(threads) merge rounds, a search of about as many steps
  // and its items.
  static uint64_t mergeWork(uint32_t threads, uint32_t items) {
    uint32_t rounds = 0;
    while ((1u << rounds) < threads) ++rounds;
    return uint64_t{threads} * (items * items + rounds * (items + rounds));
  }
  void mergeStep(Level level, bool pullOnly, uint32_t n, std::vector<Node>& ops) {
    if (!mergesOn_ || pullOnly || level != Level::Block) return;
    if (merges_() % 100 >= kMergePercent) return;
    const uint32_t fewest = std::min(block_.threads, block_.altThreads);
    const uint32_t most = std::max(block_.threads, block_.altThreads);
    if (fewest == 0) return;
    const Where w = block_.at(Level::Block);
    std::vector<uint32_t> chunks;
    for (uint32_t c = 1; c <= kMostMergeChunks; ++c) {
      if (n % c == 0) chunks.push_back(c);
    }
    for (int attempt = 0; attempt < 4; ++attempt) {
      Node node;
      node.op = Op::BlockMergeSort;
      const uint32_t c = chunks[mBelow(static_cast<uint32_t>(chunks.size()))];
      node.size = n / c;
      const uint32_t least = (node.size + fewest - 1) / fewest;
      if (least > kMostThreadItems) continue;
      node.items = mBelow(2) == 0 ? least : least + mBelow(kMostThreadItems - least + 1);
      node.order = mBelow(kMergeOrders);
      const uint32_t mask = mergeMask();
      node.constant = node.order >= 2 ? mask : 0;
      const uint32_t valid = mBelow(4);
      node.valid = valid < 2 ? 0 : valid - 1;
      node.values = mBelow(kMostMergeValues + 1);
      node.fn = mBelow(kMergeForms);
      if (mergeWork(most, node.items) * c * runs_ > kMostMergeWork || !collectiveFits(w, node, n)) {
        continue;
      }
      ops.push_back(node);
      return;
    }
  }

  // Percent of the steps that a small float step follows (a SmallFloatForce in a third of
  // those outside binSplit).
  static constexpr uint64_t kSmallPercent = 3;
  uint32_t sBelow(uint32_t k) { return static_cast<uint32_t>(small_() % k); }
  // A literal's bits in the 16-bit format (0 Half, 1 BFloat16): quiet and signalling NaNs with
  // payloads, the canonical NaN 0x7fff, infinities, zeros, the smallest subnormal, the largest
  // finite value, values about 1, any pattern; both signs.
  uint32_t smallLiteral(uint32_t format) {
    const uint32_t m = format == 0 ? 10 : 7, top = format == 0 ? 0x1fu : 0xffu;
    const uint32_t payload = static_cast<uint32_t>(small_()), sign = sBelow(2) << 15;
    const uint32_t inf = top << m, quiet = 1u << (m - 1);
    switch (sBelow(12)) {
      case 0:
      case 1: return sign | inf | quiet | (payload & (quiet - 1));
      case 2: return sign | inf | (1 + payload % (quiet - 1));
      case 3: return 0x7fffu;
      case 4: return sign | inf;
      case 5: return sign;
      case 6: return sign | 1u;
      case 7: return sign | (inf - 1);
      case 8: return payload & 0xffffu;
      default: return sign | ((((top >> 1) - 1) << m) + payload % (2u << m));
    }
  }
  void smallStep(bool pullOnly, std::vector<Node>& ops) {
    if (!smallOn_ || small_() % 100 >= kSmallPercent) return;
    Node node;
    node.op = pullOnly || sBelow(3) != 0 ? Op::SmallFloatMap : Op::SmallFloatForce;
    node.format = sBelow(2);
    if (node.op == Op::SmallFloatMap) {
      node.fn = sBelow(kSmallFloatOps);
      node.constant = smallLiteral(node.format) | (sBelow(0x10000) << 16);
    } else {
      node.fn = sBelow(kSmallFloatForces);
    }
    ops.push_back(node);
  }
  // Percent of the steps that a pair step follows.
  static constexpr uint64_t kPairPercent = 3;
  // A pair literal: each lane a quiet or signalling NaN, an infinity, a zero, a small integer
  // or any pattern, of either sign.
  uint32_t pairLiteralLane(uint32_t format) {
    const uint32_t m = format == 0 ? 10 : 7, inf = (format == 0 ? 0x1fu : 0xffu) << m;
    const uint32_t sign = static_cast<uint32_t>(pairs_() % 2) << 15;
    const uint32_t payload = static_cast<uint32_t>(pairs_());
    switch (pairs_() % 8) {
      case 0: return sign | inf | (1 + payload % ((1u << m) - 1));
      case 1: return sign | inf;
      case 2: return sign;
      case 3:  // 1 .. 8
        return sign | ((((format == 0 ? 15u : 127u) + payload % 3) << m) | ((payload >> 8) % 4)
                                                                               << (m - 2));
      default: return payload & 0xffffu;
    }
  }
  void pairStep(std::vector<Node>& ops) {
    if (!pairsOn_ || pairs_() % 100 >= kPairPercent) return;
    Node node;
    node.op = Op::PairMap;
    node.format = static_cast<uint32_t>(pairs_() % 2);
    node.fn = static_cast<uint32_t>(pairs_() % kPairOps);
    node.constant = pairLiteralLane(node.format) | (pairLiteralLane(node.format) << 16);
    ops.push_back(node);
  }

  std::mt19937_64& rng_;
  std::mt19937_64 collectives_;
  bool collectivesOn_ = false;
  std::mt19937_64 narrow_;
  bool narrowOn_ = false;
  std::mt19937_64 floats_;
  bool floatsOn_ = false;
  std::mt19937_64 bits_;
  bool bitsOn_ = false;
  std::mt19937_64 items_;
  bool itemsOn_ = false;
  std::mt19937_64 small_;
  std::mt19937_64 pairs_;
  bool pairsOn_ = false;
  bool smallOn_ = false;
  std::mt19937_64 itemsScans_;
  bool itemsScansOn_ = false;
  std::mt19937_64 sorts_;
  bool sortsOn_ = false;
  std::mt19937_64 adjacent_;
  bool adjacentOn_ = false;
  std::mt19937_64 merges_;
  bool mergesOn_ = false;
  Where block_;
  uint64_t runs_ = 1;
};

// Drops the ThreadItems steps whose loops have more threads than `threads` (the smaller of the
// final thread counts): they keep the length, so nothing else changes.
void dropUnfitItems(std::vector<Node>& ops, uint32_t threads) {
  std::erase_if(ops,
                [threads](const Node& n) { return n.op == Op::ThreadItems && n.size > threads; });
  for (Node& n : ops) dropUnfitItems(n.kids, threads);
}

// Makes the ThreadItems steps of the scan form plain again (blockScanItems needs blocks of whole
// warps, which the last draw of the thread counts may not give): each is then the step that
// the items stream drew, so nothing else changes.
void plainItems(std::vector<Node>& ops) {
  for (Node& n : ops) {
    if (n.op == Op::ThreadItems) {
      n.scan = 0;
      n.aggregate = false;
    }
    plainItems(n.kids);
  }
}

// Drops the BlockRadixSort steps that the last thread counts do not fit (sortFitsThreads): they
// keep the length, so nothing else changes.
void dropUnfitSorts(std::vector<Node>& ops, uint32_t threads, uint32_t altThreads) {
  std::erase_if(ops, [&](const Node& n) {
    return n.op == Op::BlockRadixSort &&
           !(sortFitsThreads(n, threads) && sortFitsThreads(n, altThreads));
  });
  for (Node& n : ops) dropUnfitSorts(n.kids, threads, altThreads);
}

// Drops the BlockDiscontinuity steps that the last thread counts do not fit
// (adjacentFitsThreads): they keep the length, so nothing else changes.
void dropUnfitAdjacent(std::vector<Node>& ops, uint32_t threads, uint32_t altThreads) {
  std::erase_if(ops, [&](const Node& n) {
    return n.op == Op::BlockDiscontinuity &&
           !(adjacentFitsThreads(n, threads) && adjacentFitsThreads(n, altThreads));
  });
  for (Node& n : ops) dropUnfitAdjacent(n.kids, threads, altThreads);
}

// Drops the BlockMergeSort steps that the last thread counts do not fit (mergeFitsThreads):
// they keep the length, so nothing else changes.
void dropUnfitMerges(std::vector<Node>& ops, uint32_t threads, uint32_t altThreads) {
  std::erase_if(ops, [&](const Node& n) {
    return n.op == Op::BlockMergeSort &&
           !(mergeFitsThreads(n, threads) && mergeFitsThreads(n, altThreads));
  });
  for (Node& n : ops) dropUnfitMerges(n.kids, threads, altThreads);
}

// Percent of the recipes that are matrix kernels.
constexpr uint64_t kMatrixPercent = 10;

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

// Percent of the recipes with an output alone (no effect, fused parts or second output) whose
// output is written through unvectors<W>.
constexpr uint64_t kStorePercent = 10;

// The vector-store output (Recipe::store) of a recipe whose blocks' results (Flat: grid-level
// array) have m words, from a stream of its own seeded by the data seed and drawn after
// everything else, so the other streams draw what they drew before: an element type, a form
// that fits (uniformly among those with a width that does), a width, the pieces of Threads and
// Warps (up to 8 vectors), and the lanes' rotation.
void drawStore(Recipe& r, uint32_t m) {
  std::mt19937_64 g(r.dataSeed ^ 0x6a09e667f3bcc909ull);
  if (g() % 100 >= kStorePercent) return;
  if (r.result != Result::Output || !r.fused.empty() || r.gridOutput) return;
  auto below = [&g](size_t k) { return static_cast<uint32_t>(g() % k); };
  Recipe c = r;
  c.storeType = below(kStoreTypes);
  // The widths of each form that fit, with their pieces (Threads, Warps; else just 0).
  struct Fit {
    StoreForm form;
    uint32_t width;
    std::vector<uint32_t> pieces;
  };
  std::vector<std::vector<Fit>> forms;
  for (uint32_t f = 1; f < kStoreForms; ++f) {
    c.store = static_cast<StoreForm>(f);
    std::vector<Fit> fits;
    for (uint32_t w = 2; w <= 16; w *= 2) {
      c.storeWidth = w;
      std::vector<uint32_t> pieces;
      const bool pieced = c.store == StoreForm::Threads || c.store == StoreForm::Warps;
      for (uint32_t k = pieced ? 1 : 0; k <= (pieced ? 8u : 0u); ++k) {
        c.storePiece = w * k;
        if (storeFits(c, m)) pieces.push_back(c.storePiece);
      }
      if (!pieces.empty()) fits.push_back(Fit{c.store, w, pieces});
    }
    if (!fits.empty()) forms.push_back(fits);
  }
  if (forms.empty()) return;
  const std::vector<Fit>& fits = forms[below(forms.size())];
  const Fit& fit = fits[below(fits.size())];
  r.store = fit.form;
  r.storeType = c.storeType;
  r.storeWidth = fit.width;
  r.storePiece = fit.pieces[below(fit.pieces.size())];
  r.storeRotate = below(fit.width);
}

// The recipe but for its divisor parameter and vector store; resultLength: the length of the
// blocks' results (Flat: of the grid-level array), 0 where a vector store has no place (deep
// folds and matrix kernels).
Recipe generateSteps(std::mt19937_64& rng, uint32_t& resultLength) {
  resultLength = 0;
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
    resultLength = r.chunk;
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
    fold.fn = static_cast<uint32_t>(deep() % kBinaryOps);
    fold.size = r.chunk;
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
  gen.enableBits(r.dataSeed);
  gen.enableItems(r.dataSeed);
  gen.enablePairs(r.dataSeed);
  gen.enableSmallFloats(r.dataSeed);
  gen.enableItemsScans(r.dataSeed);
  gen.enableSorts(r.dataSeed);
  gen.enableAdjacent(r.dataSeed);
  gen.enableMerges(r.dataSeed);
  const uint32_t result = static_cast<uint32_t>(extra() % 100);
  if (result < 20) {
    r.result = result < 10 ? Result::EffectWrite : Result::EffectAtomic;
    r.accOp = static_cast<uint32_t>(extra() % kAccOps);
    r.accSlots = 1 + static_cast<uint32_t>(extra() % 64);
    r.accSpare = static_cast<uint32_t>(extra() % 4);
    r.effectFirst = extra() % 2 == 0;
  }
  uint32_t n = r.chunk;
  gen.setBlocks(r.blocks);
  r.body = gen.body(Level::Block, n, 0, false);
  r.threads = gen.threads();  // a collective may have chosen them
  r.altThreads = gen.altThreads();
  // Any thread count at all where no Warp program needs whole warps and no collective depends
  // on the thread count.
  const bool anyThreads = !gen.usesWarps && !gen.threadBound;
  if (anyThreads && gen.chance(30)) r.threads = 1 + gen.below(300);
  if (anyThreads && gen.chance(30)) r.altThreads = 1 + gen.below(300);
  // A ThreadItems drawn before the thread counts became fewer: dropped.
  dropUnfitItems(r.body, std::min(r.threads, r.altThreads));
  // A scan form drawn before the thread counts became part of a warp: the plain step again.
  if (r.threads % 32 != 0 || r.altThreads % 32 != 0) plainItems(r.body);
  // A radix sort drawn before the thread counts changed, that they do not fit: dropped.
  dropUnfitSorts(r.body, r.threads, r.altThreads);
  // A discontinuity drawn before the thread counts changed, whose chunk their tile does not
  // hold: dropped.
  dropUnfitAdjacent(r.body, r.threads, r.altThreads);
  // A merge sort drawn before the thread counts changed, whose chunk their tile does not hold:
  // dropped.
  dropUnfitMerges(r.body, r.threads, r.altThreads);
  // Fused outputs: from a stream of their own, drawn last (the parts fit the final thread
  // counts), so that the other streams draw what they drew before.
  std::mt19937_64 fused(r.dataSeed ^ 0x2545f4914f6cdd1dull);
  if (fused() % 100 < kFusedPercent) drawFused(r, n, fused);
  resultLength = n;
  return r;
}

}  // namespace

Recipe generate(std::mt19937_64& rng) {
  uint32_t m = 0;
  Recipe r = generateSteps(rng, m);
  if (!r.matrix) drawDivisor(r);
  if (m > 0) drawStore(r, m);
  return r;
}

}  // namespace fuzz
