// The rules that every interpretation of a recipe shares: which class a step belongs to, the
// shapes that the collectives accept (the generator draws within them; the reference rejects a
// shrunk recipe that breaks one), and facts about a recipe that several interpretations ask
// (direct loads of the input, whether a vector store fits, grid passes, deep folds).
#include <algorithm>
#include <string>

#include "recipe_internal.hpp"
#include "scalar_ops.hpp"

namespace fuzz {

bool isCollective(Op op) {
  return static_cast<uint32_t>(op) >= kBasicOps && op <= Op::WarpExchange;
}
bool isNarrow(Op op) { return op == Op::NarrowMap || op == Op::NarrowForce; }
bool isFloatBits(Op op) { return op == Op::FloatBits || op == Op::FloatScan; }
bool isBits(Op op) { return op == Op::BitsMap || op == Op::WarpVote; }
bool isSmallFloatStep(Op op) { return op == Op::SmallFloatMap || op == Op::SmallFloatForce; }
bool isPairStep(Op op) { return op == Op::PairMap; }
bool isSortStep(Op op) { return op == Op::BlockRadixSort; }
bool isAdjacentStep(Op op) { return op == Op::BlockDiscontinuity; }
bool isMergeStep(Op op) { return op == Op::BlockMergeSort; }

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
    case Op::FloatBits:
    case Op::BitsMap:
    case Op::SmallFloatMap:
    case Op::PairMap: return true;
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

bool transposes(const std::vector<TileNode>& ops) {
  bool t = false;
  for (const TileNode& n : ops) {
    if (n.op == TileOp::Transpose || (n.op == TileOp::Nest && transposes(n.kids))) t = !t;
  }
  return t;
}

// ------------------------------------------------------------------ the collectives' shapes
bool pow2(uint32_t n) { return n != 0 && (n & (n - 1)) == 0; }

namespace {

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

}  // namespace

bool collectiveFits(const Where& w, const Node& n, size_t len) {
  if (len == 0 || len > 0xffffffffu) return false;
  const uint32_t m = static_cast<uint32_t>(len);
  const bool block = w.level == Level::Block, warp = w.level == Level::Warp;
  const bool op = n.fn < kCollectiveOps;
  switch (n.op) {
    case Op::BlockReduce:
      // Only red1 keeps the order of its elements: the others need a commutative operator.
      return block && (n.fn < kCommutativeOps || (op && n.alg == 0)) &&
             reduceFits(n.alg, m, w.threads) && reduceFits(n.alg, m, w.altThreads);
    case Op::BlockScan:
      return block && op && scanFits(n.alg, m, w.threads) && scanFits(n.alg, m, w.altThreads);
    case Op::BlockLoadStore:
      return block && loadStoreFits(n.loadAlg, n.storeAlg, m, w.threads, w.direct) &&
             loadStoreFits(n.loadAlg, n.storeAlg, m, w.altThreads, w.direct);
    case Op::BlockHistogram:
      return block && n.log2Copies <= 5 && n.bins >= 1 && n.bins <= 64 && n.lower < n.upper;
    case Op::WarpReduce: return warp && n.fn < kCommutativeOps && pow2(m) && m <= 32;
    case Op::WarpScan: return warp && op && m == 32;
    case Op::WarpExchange: return warp && m % 32 == 0;
    // Not a collective of the algorithm layer, but its rule is one: a vote takes one element
    // per lane of a whole warp (the library refuses warp programs in blocks of part of a warp).
    case Op::WarpVote:
      return warp && m == 32 && n.fn < kWarpVotes && w.threads % 32 == 0 && w.altThreads % 32 == 0;
    // Nor is a thread array's step: each thread of its loops keeps m / size items (1 to 8), so
    // the loops have at most one instance per thread at both thread counts (a warp's: lanes of
    // a whole warp). Its scan form is a Block's, and blockScanItems takes blocks of whole
    // warps (at most 1024 threads).
    case Op::ThreadItems: {
      const uint32_t t = n.size;
      const bool fits = block ? t <= w.threads && t <= w.altThreads
                              : warp && t <= 32 && w.threads % 32 == 0 && w.altThreads % 32 == 0;
      const bool scan = n.scan == 0 ? !n.aggregate
                                    : block && n.scan <= kItemsScanOps && w.threads % 32 == 0 &&
                                          w.altThreads % 32 == 0 && w.threads <= 1024 &&
                                          w.altThreads <= 1024;
      return fits && scan && t > 0 && m % t == 0 && m / t <= kMostThreadItems &&
             n.fn < kThreadItemsFns;
    }
    // Nor is a block radix sort, but blockRadixSort is a block collective: blocks of whole
    // warps at both thread counts (sortFitsThreads), chunks of size elements, at most
    // kMostSortChunks of them.
    case Op::BlockRadixSort:
      return block && n.size > 0 && m % n.size == 0 && m / n.size <= kMostSortChunks &&
             sortFitsThreads(n, w.threads) && sortFitsThreads(n, w.altThreads);
    // Nor are the discontinuities, block collectives of any block: chunks of size elements, at
    // most kMostAdjacentChunks of them, each within the tile at both thread counts.
    case Op::BlockDiscontinuity:
      return block && n.size > 0 && m % n.size == 0 && m / n.size <= kMostAdjacentChunks &&
             adjacentFitsThreads(n, w.threads) && adjacentFitsThreads(n, w.altThreads);
    // Nor is a merge sort, a block collective of any block too: chunks of size elements, at
    // most kMostMergeChunks of them, each within the tile at both thread counts.
    case Op::BlockMergeSort:
      return block && n.size > 0 && m % n.size == 0 && m / n.size <= kMostMergeChunks &&
             mergeFitsThreads(n, w.threads) && mergeFitsThreads(n, w.altThreads);
    default: return false;
  }
}

uint32_t sortSharedWords(const Node& n, uint32_t threads) {
  const uint32_t span = n.endBit - n.beginBit;
  const uint32_t passes = n.radixBits == 0 ? 0 : (span + n.radixBits - 1) / n.radixBits;
  const uint32_t warps = threads / 32;
  // Per pass: the warps' digit counters, and blockScanItems' words (a few per warp).
  return threads * n.items * (1 + n.values) + passes * ((warps << n.radixBits) + 2 * warps + 2);
}

bool sortFitsThreads(const Node& n, uint32_t threads) {
  // blockRadixSort's own rules (checkRadixBlock, its bit range), then the step's fields.
  const bool block = threads % 32 == 0 && threads > 0 && threads <= 1024 && n.radixBits >= 1 &&
                     n.radixBits <= 8 && threads >= (1u << n.radixBits) && n.beginBit <= n.endBit &&
                     n.endBit <= 32;
  const bool fields = n.items >= 1 && n.items <= kMostThreadItems && n.format < kSortKeyTypes &&
                      n.fn < kSortForms && n.values <= kMostSortValues;
  // The chunk within the tile; the shared memory of one sort within kSortSharedWords (with
  // no reuse, every pass's counters stay allocated).
  return block && fields && n.size <= threads * n.items &&
         sortSharedWords(n, threads) <= kSortSharedWords;
}

bool adjacentFitsThreads(const Node& n, uint32_t threads) {
  const bool fields = n.items >= 1 && n.items <= kMostThreadItems && n.adjacent < kAdjacentKinds &&
                      n.edge < (n.adjacent == 2 ? 2u : kAdjacentEdges) && n.fn < kAdjacentForms &&
                      n.shift < 32;
  return fields && threads >= 1 && threads <= 1024 && n.size <= threads * n.items;
}

bool mergeFitsThreads(const Node& n, uint32_t threads) {
  const bool fields = n.items >= 1 && n.items <= kMostThreadItems && n.order < kMergeOrders &&
                      n.valid < kMergeValids && n.fn < kMergeForms && n.values <= kMostMergeValues;
  // The chunk within the tile; the sort's shared memory (a tile of keys, one of values) within
  // kSortSharedWords.
  return fields && threads >= 1 && threads <= 1024 && n.size <= threads * n.items &&
         threads * n.items * (1 + n.values) <= kSortSharedWords;
}

Node partNode(const FusedPart& f) {
  Node n;
  n.op = f.kind == PartKind::Reduce ? Op::BlockReduce : Op::BlockScan;
  n.alg = f.a;
  n.fn = f.c;
  return n;
}

// ------------------------------------------------------------------ facts about a recipe
bool directLoads(const Recipe& r) {
  bool vectorized = r.vector != 0;
  std::vector<Node> body = r.body;
  forEachNodeList(body, [&](std::vector<Node>& ops) {
    for (const Node& n : ops) {
      vectorized = vectorized || (n.op == Op::BlockLoadStore && n.loadAlg == 3);
    }
  });
  return vectorized;
}

bool untouchedInput(const Recipe& r) {
  return r.grid == Shape::SplitUp && !r.gridMap && !r.gridZip;
}

bool storeFits(const Recipe& r, size_t m) {
  if (r.store == StoreForm::None) return true;
  const uint32_t w = r.storeWidth;
  if (r.storeType >= kStoreTypes || !storeWidthFits(r.storeType, w) || r.storeRotate >= w ||
      m == 0 || m > 0xffffffffu) {
    return false;
  }
  // The output alone: an effect, fused parts and a second output keep their words.
  if (r.matrix || r.result != Result::Output || !r.fused.empty() || r.gridOutput) return false;
  const bool pieces = r.storePiece > 0 && r.storePiece % w == 0 && m % r.storePiece == 0;
  if ((r.store == StoreForm::Grid) != (r.grid == Shape::Flat)) return false;
  switch (r.store) {
    case StoreForm::None: return true;
    // A static length makes at least one vector (the dynamic one may make none at run time).
    case StoreForm::Grid: return !r.staticInput || m >= w;
    // Every block's vectors start at a multiple of W elements of the output.
    case StoreForm::Blocks:
    case StoreForm::Whole: return m % w == 0;
    case StoreForm::Threads: return pieces;
    // Warp programs need blocks of whole warps (the library refuses the others).
    case StoreForm::Warps: return pieces && r.threads % 32 == 0 && r.altThreads % 32 == 0;
    case StoreForm::Shared: return m >= w;
  }
  return false;
}

// The Flat vector store's tail is a loop of its own (concP), but for a static length that has
// no tail (the grid-level array has blocks * chunk elements there).
uint32_t gridPasses(const Recipe& r) {
  const bool tail =
      r.store == StoreForm::Grid &&
      (!r.staticInput || (uint64_t{r.chunk} * r.blocks) % std::max(r.storeWidth, 1u) != 0);
  return 1 + (r.gridOutput ? 1 : 0) + (tail ? 1 : 0);
}

bool isDeepFold(const Recipe& r) {
  return r.body.size() == 1 && r.body[0].op == Op::SplitFold && r.body[0].size >= 4096;
}

}  // namespace fuzz
