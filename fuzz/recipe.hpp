// The fuzzer's program description: a recipe tree of combinator applications with their sizes
// (over 1-D arrays, or over matrices: MatrixRecipe), and its three interpretations: obsidian calls
// that build the kernel (build.hpp), a plain C++ reference over std::vector (the oracle, no IR
// involved), and C++ source text that rebuilds the same kernel with the library (for shrunk repros
// and regression tests). Every recipe the generator makes is well typed and well sized; shrinking
// only keeps candidates that the reference accepts.
//
// One file per job: recipe_generate.cpp, recipe_reference.cpp (the oracle), recipe_print.cpp
// (the C++ source) and recipe_shrink.cpp, each with a recipe_matrix_*.cpp counterpart for
// matrix recipes; recipe_stats.cpp (both kinds); recipe_rules.cpp (the rules they all follow).
// recipe_internal.hpp declares what these files share.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace fuzz {

// Levels of the hierarchy a block body can run at (Grid is only the recipe's outer frame).
enum class Level : uint8_t { Thread, Warp, Block };

// One step of a body: maps the current static-length array to the next one. Steps marked
// "force" make the array manifest at the body's level (registers at Thread, shared memory and
// a barrier at Warp and Block). The names after each step are its Node fields.
enum class Op : uint8_t {
  Map,           // fmap(unary(fn, constant))                                   pull
  AddIndex,      // mkPull(n, i -> x[i] + i * constant)                         pull
  ZipHalves,     // halve, zipWith(binary(fn)) over the halves                  pull
  ZipEvenOdds,   // evenOdds, zipWith(binary(fn))                               pull
  Rotate,        // splitAt(size), conc(hi, lo)                                 pull
  SplitFold,     // splitUp(size), fmap(foldPull1(binary(fn)))                  pull
  CoalesceFold,  // coalesce(size), fmap(foldPull1(binary(fn)))                 pull
  BinSplit,      // binSplit(log2Parts, kids as a pull function)                pull
  Interleave,    // halve, zip, upair: lo0 hi0 lo1 hi1 ...                      pull
  Ends,          // conc(replicate(size, first), singleton(last))               pull
  FloatMap,      // fmap(floatOp(fn, constant)): through floats and back        pull
  Force,         // forcePull                                                   force
  SeqReduce,     // tConcat(fmap(seqReduce(binary(fn)), splitUp(size)))         force
  SeqScan,       // tConcat(fmap(seqScan(binary(fn)), splitUp(size)))           force
  ConcP,         // concP(push(hi), push(lo)) of halve                          force
  Iterate,       // tConcat(fmap(seqIterate(limit))), until: seqUntil(> limit)  force
  Nest,          // pConcat(fmap(exec<one level down>(kids), splitUp(size)))    force
  ThreadNest,    // tConcat(fmap(exec<Thread>(kids), splitUp(size)))            force (Warp, Block)
  SeqNest,       // sConcat(fmap(exec<same level>(kids), splitUp(size)))        force
  Histogram,     // newShared(bins) zeroed, atomicAdd(x % bins) for every x     (Warp, Block)
  Load,          // load<L>(size): the coalescing first load                    force (Warp, Block)
  Take,          // takeP(size, push(x)): the first size elements               force
  ForceZip,      // halve, forcePull(zip(lo, hi)) (tuples), unzip,
                 // zipWith(binary(fn))                                         force
  // The algorithm layer's collectives (include/obsidian/{warp,block,device}); fn is the
  // collective operator (collectiveWord in scalar_ops.hpp). Drawn from a stream of their own
  // (see generate()), so recipes that draw none are those of the earlier generator.
  BlockReduce,     // r = blockReduce(alg, fn, x); x[i] + r                        (Block)
  BlockScan,       // force(blockScan(alg, fn, x)); exclusive: blockExclusiveScan  (Block)
  BlockLoadStore,  // force(blockStore(storeAlg, items, blockLoad(loadAlg, items, x))),
                   // items = length / the block's threads: the elements intact    (Block)
  BlockHistogram,  // SharedHistogram(bins, 2^log2Copies copies), blockHistogram
                   // over even bins of [lower, upper), the bins' totals           (Block)
  WarpReduce,      // r = warpReduce(fn, x); x[i] + r                              (Warp)
  WarpScan,        // force(warpScan(fn, x)); exclusive: warpExclusiveScan         (Warp)
  WarpExchange,    // force(warpStoreStriped(items, warpLoadStriped(items, x)))    (Warp)
  // Narrow element types of `width` bits (8: u8, 16: u16). Drawn from a stream of their own
  // too (see generate()), each appended after a step and keeping its length.
  NarrowMap,    // fmap(widen(narrowOp(fn, constant, narrow(x)))): arithmetic in
                // the narrow type                                                pull
  NarrowForce,  // widen(forcePull(narrow(x))); zipped: forcePull(zip(narrow(x),
                // x)), unzip, widen(lo) + hi (a narrow and a u32 array side
                // by side)                                                       force
  // Float bit patterns (issue 40): each word read as an f32 (floatIn in scalar_ops.hpp: where
  // (x & 7) < specials a quiet or signalling NaN, or an infinity, of x's sign and payload; +-0
  // now and then), through float operations and back to a word, bit for bit. Drawn from a
  // stream of their own too, each appended after a step and keeping its length.
  FloatBits,  // fmap(floatBitsOp(fn, specials, constant, constantHigh)): f32
              // literal constant, f64 literal (constantHigh << 32) | constant    pull
  FloatScan,  // fmap(bitcast<uint32_t>) of force(tConcat(fmap(seqScan(
              // floatScanOp(fn)), splitUp(size, the floats)))); fn =
              // kFloatScanOps: forcePull(the floats)                             force
  // Bit intrinsics and warp votes (popc, clz, ffs, brev; ballot, voteAny, voteAll, matchAny).
  // Drawn from a stream of their own too, each appended after a step and keeping its length.
  BitsMap,   // fmap(bitsOp(fn, constant)): popc, clz, ffs, brev of the word x, or of
             // the u64 word y = u64(x) | u64(x * (constant | 1)) << 32 folded
             // back to 32 bits (bitsOp in scalar_ops.hpp)                      pull
  WarpVote,  // (Warp, exactly 32 elements, whole warps) fn: 0 x[i] + ballot of
             // bit constant % 32; 1 x[i] ^ (voteAny(x % m == 0) | voteAll(x %
             // m != 0) << 1), m = 2 + constant % 60; 2 forcePull of x[i] +
             // (popc(k[i] & lanes below i) | popc(k[i]) << 8), k = matchAny(x
             // % (1 + constant % 5)); 3 force(mkPush: the ballot of 0 read by
             // the odd lanes only, in a branch: x[i] ^ b, else x[i])            (Warp)
  // Thread arrays (include/obsidian/thread_array.hpp). Drawn from a stream of their own too,
  // appended after a step and keeping its length.
  ThreadItems,  // (Block, Warp) size = T threads (T <= both thread counts; Warp: T <=
                // 32 lanes, whole warps), I = length / T items each (1..8): thread
                // t keeps x[t * I + k] in a threadArray and writes their value
                // (fn % 4: xor, sum, the first, a hash) to a newShared of T; sync;
                // y[t * I + k] = out(items[k], the value of thread (t + 1 +
                // constant % T) % T); fn / 4: 0 a newShared of y written, sync,
                // its pull; 1 force(mkPush<L> of the same loop). With scan (Block,
                // whole warps; drawn from a stream of its own): every thread of the
                // block keeps its items (from T on: zeros), blockScanItems with
                // kItemsScanOps[scan - 1], y[t * I + k] = the inclusive prefix
                // through item k of thread t (+ the block's aggregate with
                // aggregate), written by fn / 4's form                           force
  // Half precision and bfloat16 (and the fp8 formats, converted to and from): each word read
  // as a value v of the format (smallIn in scalar_ops.hpp: its high half's bits, or an f32, or
  // a u32 converted), computed with or converted, and back to a word bit for bit. Drawn from a
  // stream of their own too, each appended after a step and keeping its length.
  SmallFloatMap,    // fmap(smallFloatOp(fn, format, constant)): v against the
                    // literal of constant's low half (its high half: a second
                    // parameter) through + - * / min max, comparisons, sqrt, -,
                    // rsqrt, fabs, floor, ceil, conversions to and from f32, f64,
                    // integers, fp8 and the other format                        pull
  SmallFloatForce,  // forcePull of the values v (fn % 4: 0 v, 1 e4m3 of v, 2 e5m2
                    // of v, 3 zip(v, x) unzipped: bits(v) + x), back to their
                    // bits                                                      force
  // Packed pairs (Half2, BFloat162): each word read as a pair, computed with per lane and
  // back to a word bit for bit. Drawn from a stream of their own, appended after a step.
  PairMap,  // fmap(pairMapExp(fn, format, constant)): the pair v of x's bits (+-0s)
            // against the literal pair of constant's bits and x * 0x9e3779b1:
            // + - * fma min max neg abs pack2 lowLane highLane           pull
  // Block radix sorts (include/obsidian/block/radix_sort.hpp, issue 44): blockRadixSort inside
  // a user's kernel, where it is a block collective. Drawn from a stream of their own, appended
  // after a step of a Block body and keeping its length.
  BlockRadixSort,  // (Block, whole warps) each chunk of size elements (at most 4) in
                   // turn: a warp-striped tile of all the block's threads x items
                   // words (item k of lane l of warp w its element e = w * 32 *
                   // items + k * 32 + l; e < size: key RadixKey<K>::toBits(x[e],
                   // descending), K = kSortKeyTypes[format]; from size on all ones,
                   // which sort last); values (0 to 2): e, then x[e] * 0x9e3779b1;
                   // blockRadixSort over bits [beginBit, endBit), radixBits a pass;
                   // y[e] = (bits32(fromBits(key)) ^ value 0 * (2 * constant + 1)) +
                   // value 1, written back warp-striped (e < size). fn: 0 a
                   // newShared of y written chunk by chunk, sync, its pull; 1
                   // force(mkPush) of the same loops after all the chunks       force
  // Block discontinuities (include/obsidian/block/discontinuity.hpp): blockFlagHeads,
  // blockFlagTails and blockAdjacentDifference inside a user's kernel. Drawn from a stream of
  // their own, appended after a step of a Block body and keeping its length.
  BlockDiscontinuity,  // (Block) each chunk of size elements (at most 4) in turn: a
                       // blocked tile of all the block's threads x items words (thread
                       // tid's item k its element e = tid * items + k - offset; offset
                       // 0, tails: the tile's length - size, so the chunk ends the tile);
                       // item x[e] >> shift (e outside the chunk: x[size - 1]'s); adjacent
                       // (kAdjacentKinds): heads, tails, or the difference a - b; the
                       // chunk's edge (kAdjacentEdges) before it (tails: after it); y[e]
                       // = x[e] ^ flag * 0x9e3779b1, or the difference (e < size). fn:
                       // 0 a newShared of y written chunk by chunk, sync, its pull; 1
                       // force(mkPush) of the same loops after all the chunks       force
  // Block merge sorts (include/obsidian/block/merge_sort.hpp): blockMergeSort with a user's
  // comparator inside a user's kernel, where it is a block collective. Drawn from a stream of
  // their own, appended after a step of a Block body and keeping its length.
  BlockMergeSort,  // (Block) each chunk of size elements (at most 4) in turn: a blocked
                   // tile of all the block's threads x items words (thread tid's item
                   // k its element e = tid * items + k); key x[e] (e < size; from size
                   // on the padding key, mergePadKey: with every element valid the
                   // greatest, else the least by the order); value (values 1): e;
                   // blockMergeSort by order (kMergeOrders: a < b, b < a, or by the
                   // part a & constant, either way) with valid (kMergeValids: all,
                   // size, or x[the chunk's first] % (size + 1) read in the kernel);
                   // y[e] = key ^ value * 0x9e3779b1 (e < valid; from valid on x[e]),
                   // written back blocked (e < size). fn: 0 a newShared of y written
                   // chunk by chunk, sync, its pull; 1 force(mkPush) of the same
                   // loops after all the chunks                                 force
};
constexpr uint32_t kOps = static_cast<uint32_t>(Op::BlockMergeSort) + 1;
// The steps before the collectives: what the main stream draws from.
constexpr uint32_t kBasicOps = static_cast<uint32_t>(Op::ForceZip) + 1;
// Whether op is one of the algorithm layer's collectives.
bool isCollective(Op op);
// Whether op is one of the narrow element types' steps.
bool isNarrow(Op op);
// Whether op is one of the float bit patterns' steps (FloatBits, FloatScan).
bool isFloatBits(Op op);
// Whether op is one of the bit intrinsics' and warp votes' steps (BitsMap, WarpVote).
bool isBits(Op op);
// Whether op is one of the small floats' steps (SmallFloatMap, SmallFloatForce).
bool isSmallFloatStep(Op op);
// Whether op is one of the packed pairs' steps (PairMap).
bool isPairStep(Op op);
// Whether op is one of the radix sorts' steps (BlockRadixSort).
bool isSortStep(Op op);
// Whether op is one of the discontinuities' steps (BlockDiscontinuity).
bool isAdjacentStep(Op op);
// Whether op is one of the merge sorts' steps (BlockMergeSort).
bool isMergeStep(Op op);
// Steps that need no program (the only ones allowed inside binSplit).
bool isPullStep(Op op);

// A step and what it needs: each field has one meaning, and a step sets only the fields that
// its Op names (the others stay as they are here).
struct Node {
  Op op = Op::Force;
  // The scalar operator: an index into the table that op names (unaryOp: Map; binaryOp: the
  // zips, folds and scans of words; floatOp: FloatMap; narrowOp: NarrowMap; floatBitsOp:
  // FloatBits; floatScanOp: FloatScan; bitsOp: BitsMap; the vote (kWarpVotes): WarpVote;
  // the value, result and form (kThreadItemsFns): ThreadItems; smallFloatOp: SmallFloatMap;
  // the form: SmallFloatForce, BlockRadixSort, BlockDiscontinuity, BlockMergeSort;
  // collectiveWord: the reductions and scans).
  uint32_t fn = 0;
  uint32_t constant = 0;      // the operator's constant (AddIndex: the factor of i;
                              // BlockRadixSort: of the places, 2 * constant + 1;
                              // BlockDiscontinuity: the edge's stand-in, constant >> shift;
                              // BlockMergeSort: the mask of the masked orders, else 0)
  uint32_t constantHigh = 0;  // FloatBits: the high word of the f64 literal
  // A length: the pieces of splitUp and coalesce (the folds, scans, nests, FloatScan),
  // Rotate's split point, Ends' copies of the first element, Load's and Take's length;
  // ThreadItems: the threads of its loops; BlockRadixSort, BlockDiscontinuity,
  // BlockMergeSort: the chunks, one by one.
  uint32_t size = 0;
  uint32_t log2Parts = 0;         // BinSplit: 2^log2Parts parts
  bool until = false;             // Iterate: seqUntil (else seqIterate)
  uint32_t limit = 0;             // Iterate: seqIterate's steps, or seqUntil's bound
  uint32_t bins = 0;              // Histogram, BlockHistogram
  uint32_t alg = 0;               // BlockReduce, BlockScan: the algorithm (an index)
  uint32_t loadAlg = 0;           // BlockLoadStore: the load's algorithm (an index)
  uint32_t storeAlg = 0;          // BlockLoadStore: the store's algorithm (an index)
  bool exclusive = false;         // BlockScan, WarpScan
  uint32_t log2Copies = 0;        // BlockHistogram: 2^log2Copies copies of the bins
  uint32_t lower = 0, upper = 0;  // BlockHistogram: the levels' range [lower, upper)
  uint32_t width = 0;             // NarrowMap, NarrowForce: the narrow type's bits
  bool zipped = false;            // NarrowForce: beside the words (else the narrow array alone)
  uint32_t specials = 0;          // FloatBits, FloatScan: floatIn's threshold
  uint32_t format = 0;            // SmallFloatMap, SmallFloatForce: 0 Half, 1 BFloat16;
                                  // PairMap: 0 Half2, 1 BFloat162; BlockRadixSort: the
                                  // key type (kSortKeyTypes)
  uint32_t scan = 0;              // ThreadItems: 0 none, else 1 + blockScanItems' operator
  bool aggregate = false;         // ThreadItems with scan: the block's aggregate added
  uint32_t items = 0;             // BlockRadixSort, BlockDiscontinuity, BlockMergeSort:
                                  // the words each thread holds (1 to 8)
  uint32_t beginBit = 0;          // BlockRadixSort: the bits sorted by: [beginBit,
  uint32_t endBit = 0;            // endBit)
  uint32_t radixBits = 0;         // BlockRadixSort: a pass's digit bits (1 to 8)
  bool descending = false;        // BlockRadixSort
  uint32_t values = 0;            // BlockRadixSort: the value arrays sorted along (0 to 2);
                                  // BlockMergeSort: 0 or 1
  uint32_t adjacent = 0;          // BlockDiscontinuity: 0 blockFlagHeads, 1 blockFlagTails,
                                  // 2 blockAdjacentDifference
  uint32_t edge = 0;              // BlockDiscontinuity: the tile's predecessor (tails: its
                                  // successor), kAdjacentEdges
  uint32_t shift = 0;             // BlockDiscontinuity: the items are x >> shift (below 32)
  uint32_t order = 0;             // BlockMergeSort: the comparator (kMergeOrders)
  uint32_t valid = 0;             // BlockMergeSort: the valid count (kMergeValids)
  std::vector<Node> kids;         // the nested body of BinSplit, Nest, ThreadNest, SeqNest
};

// How the kernel's input is cut into blocks.
enum class Shape : uint8_t { SplitUp, Coalesce, Flat };

// What the kernel returns for its block programs.
enum class Result : uint8_t {
  Output,        // pConcat of the blocks' results: an output array
  EffectWrite,   // effect(distrPar over the chunks), no output: block bid writes its result y
                 // into the DMutable<uint32_t> acc at bid * len(y) + i (accSpare more elements
                 // after those stay as they were)
  EffectAtomic,  // forEachBlock(chunks), no output: every block combines y[i] into
                 // acc[i % accSlots] with atomic accOp (add, sub, min, max, and, or, xor:
                 // the order of the blocks and threads does not change the result)
};
constexpr uint32_t kAccOps = 7;

// A part fused beside the block's result y (Recipe::fused): one more output, written by the
// same program (fuse), at Block level or, with Recipe::fusedThread, in each thread over its
// piece of y (tConcat of fused Thread programs).
enum class PartKind : uint8_t {
  Map,     // push(fmap(unary(a, b), y))                                     y's length
  Reduce,  // Block: singletonPush<Block>(blockReduce(algorithm a, c, y))    one element
           // Thread: seqReduce(binary(a), piece)                             one per thread
  Scan,    // Block: blockScan(algorithm a, c, y), its push array            y's length
           // Thread: seqScan(binary(a), piece)                               y's length
};
struct FusedPart {
  PartKind kind = PartKind::Map;
  uint32_t a = 0, b = 0, c = 0;  // the operator or algorithm (a, c), the map's constant (b)
};

// ------------------------------------------------------------------ matrices
// A matrix recipe (Recipe::matrix): a kernel of one or two DPull2 inputs (obsidian/matrix.hpp)
// and one dense row-major Push2<Grid> output, built from a grid-level matrix expression and
// one way of writing it: push2<Grid>, a 2-D grid of blocks over its tiles (pConcat2 of block
// programs, which may nest warp and thread programs over sub-tiles), or a stencil.
struct MatrixInput {
  uint32_t rows = 1, cols = 1, pitch = 1;  // pitch >= cols: elements from one row to the next
  uint32_t elem = 32;                      // element bits: 32, 16 (DPull2<EWord16>) or 8
};

// The grid-level matrix of words (a DPull2<EWord32> of the inputs' dynamic shapes).
enum class MExprKind : uint8_t {
  Input,      // the input numbered `input`, widened to words
  Map,        // fmap(unary(fn, constant), kid)
  Zip,        // zipWith(binary(fn), kid 0, kid 1): the rows and cols both have
  Transpose,  // transpose(kid)
};
struct MExpr {
  MExprKind kind = MExprKind::Input;
  uint32_t input = 0;     // Input
  uint32_t fn = 0;        // Map: unaryOp's operator, Zip: binaryOp's
  uint32_t constant = 0;  // Map
  std::vector<MExpr> kids;
};

// One step of a tile program (a block's tile, or a warp's or thread's sub-tile: static shape).
enum class TileOp : uint8_t {
  Map,          // fmap(unary(fn, constant))                                         pull
  AddIndex,     // mkPull2: t(r, c) + r * constant + c                               pull
  Transpose,    // transpose(t): the cols x rows view                                pull
  ZipRotate,    // zipWith(binary(fn), t, t((r + rowShift) % rows,
                // (c + colShift) % cols))                                           pull
  Force,        // force2(p, t) (Warp and Block: each thread's loads together), or
                // with push force2(p, push2<L>(t)); padding (0: Auto, 1: None)      force
  NarrowForce,  // as Force, of t narrowed to `width` bits (8 or 16), widened again  force
  Nest,         // pConcat2 of programs one level down over tiles(tileRows, tileCols) of t,
                // each running the kids on its sub-tile (transpose(tiles) where the kids
                // transpose, so the result is t's shape or its transpose); forced
                // (padding) unless it is the last step, whose push array the program
                // then returns                                                      force
};
// A tile step and what it needs: each field has one meaning, and a step sets only the fields
// that its TileOp names.
struct TileNode {
  TileOp op = TileOp::Map;
  uint32_t fn = 0;                      // Map: unaryOp's operator, ZipRotate: binaryOp's
  uint32_t constant = 0;                // Map's constant (AddIndex: the factor of r)
  uint32_t rowShift = 0, colShift = 0;  // ZipRotate
  bool push = false;                    // Force, NarrowForce: force2 of push2<L>(t)
  uint32_t width = 0;                   // NarrowForce (drawn for Force too)
  uint32_t padding = 0;                 // Force, NarrowForce, Nest: 0 Auto, 1 None
  uint32_t tileRows = 0, tileCols = 0;  // Nest: the sub-tiles
  std::vector<TileNode> kids;
};

// How the matrix recipe writes its expression m.
enum class MatrixOut : uint8_t {
  Push,     // push2<Grid>(m)
  Tiles,    // pConcat2 over the tiles(tileRows, tileCols, m) (transposed with transposeGrid)
            // of block programs running body; the result m's shape (or its transpose), or
            // with whole the whole grid of the blocks' results
  Stencil,  // stencil(m, radius, f, {tileRows, tileCols, boundary}), f folding the terms'
            // neighbours; or with viaHalo the same blocks written out: pConcat2 over
            // haloTiles, force2 of the halo tile (padding, pull or push form)
};
struct StencilTerm {
  int dr = 0, dc = 0;  // the neighbour, each within the radius
  uint32_t op = 0;     // binary(op) of the terms before and this one (the first: unused)
};
struct MatrixRecipe {
  std::vector<MatrixInput> inputs;  // one or two
  MExpr expr;
  MatrixOut out = MatrixOut::Push;
  uint32_t tileRows = 1, tileCols = 1;
  // Tiles
  bool transposeGrid = false, whole = false;
  std::vector<TileNode> body;  // at Block level
  // Stencil
  uint32_t radius = 0;
  bool zero = false;  // Boundary::Zero (else Clamp)
  std::vector<StencilTerm> terms;
  bool viaHalo = false;
  uint32_t haloPadding = 0;  // viaHalo: 0 Auto, 1 None
  bool haloPush = false;     // viaHalo: force2 of push2<Block>(halo) instead of the pull tile
  bool narrowHalo = false;   // the stencil reads its input (expr: a narrow one) as its type
};
// Whether a list of tile steps leaves its tile transposed (cols x rows).
bool transposes(const std::vector<TileNode>& ops);

// How the kernel uses its scalar divisor parameter d (Recipe::divisor).
enum class Divisor : uint8_t {
  None,
  Require,        // require(len(in) % d == 0u): with d = 0 the precondition fails, dividing by 0
  Guarded,        // require(d == 0u || len(in) % d == 0u): d = 0 launches (|| short-circuits)
  GuardedSelect,  // require(ifThenElse(d != 0u, len(in) / d, 1u) >= 1u): d = 0 launches
  Length,  // (DPull input) the input read as DPull((len(in) / d) * d, in[i / d * d + i % d]):
           // every length divides by d; with d = 0 the launch is refused
};
constexpr uint32_t kDivisors = 5;
// Whether a launch with d = 0 must be refused.
inline bool zeroRefused(Divisor d) { return d == Divisor::Require || d == Divisor::Length; }

// How the output is written through unvectors<W> (Recipe::store): as vectors of W values of
// element type kStoreTypes[storeType], vector j's lane k the value of word j * W + (k +
// storeRotate) % W of the words written (storeValue in scalar_ops.hpp), the last len % W words'
// values after them in order. Each form but Shared writes straight to the output: one
// W * size-byte StoreVector per vector, the output aligned to that size.
enum class StoreForm : uint8_t {
  None,
  Grid,     // Flat: concP(unvectors<W>(push<Grid>(the vectors of g)), push<Grid>(the
            // tail)): the tail a loop of its own (none where a static length has none)
  Blocks,   // each block: unvectors<W>(push<Block>(the vectors of y)), written at
            // bid * len(y) (len(y) a multiple of W)
  Whole,    // unvectors<W>(pConcat(each block: push<Block>(the vectors of y))): the
            // blocks' vectors concatenated, written at 0
  Threads,  // each block: tConcat<Block> over splitUp(storePiece, y) of unvectors<W>(
            // push<Thread>(the piece's vectors)), written at bid * len(y) + t * piece
  Warps,    // each block: pConcat over splitUp(storePiece, y) of Warp programs returning
            // unvectors<W>(push<Warp>(the piece's vectors)) (blocks of whole warps)
  Shared,   // each block: push<Block>(force(p, concP(unvectors<W>(push<Block>(the
            // vectors of y)), push<Block>(y's tail)))): forced into shared memory, where
            // unvectors writes the lanes one by one (no vector store anywhere)
};
constexpr uint32_t kStoreForms = static_cast<uint32_t>(StoreForm::Shared) + 1;
// The element types of Recipe::storeType: 0 u8, 1 u16, 2 u32, 3 f32, 4 Half, 5 BFloat16,
// 6 Fp8E4M3, 7 Fp8E5M2 (their names and sizes: storeTypeName, storeTypeBytes in
// scalar_ops.hpp).
constexpr uint32_t kStoreTypes = 8;
// Whether form writes vector stores straight to the output (every form but Shared).
inline bool storesVectors(StoreForm f) { return f != StoreForm::None && f != StoreForm::Shared; }

struct Recipe {
  uint32_t threads = 128;       // real threads per block of the main configuration
  uint32_t altThreads = 64;     // another thread count, for the differential run
  uint32_t realBlocks = 1;      // blocks launched in the differential run (virtualization)
  Shape grid = Shape::SplitUp;  // Flat: push<Grid> of the grid-level pull ops, no blocks
  bool gridMap = false;         // fmap(unary(gridA, gridB)) over the whole input first
  uint32_t gridA = 0, gridB = 1;
  bool staticInput = false;  // the input is an SPull (static length) instead of a DPull
  bool gridZip = false;      // halve + zipWith(binary(gridA)) over the whole input first
  bool oddInput = false;     // with gridZip: one more input element (the halves differ)
  bool gridOutput = false;   // a second output: push<Grid> of the grid-level array
  uint32_t globalBins = 0;   // > 0: a DMutable<uint32_t> parameter of that many bins, where
                             // every block counts its result modulo globalBins (global atomics)
  uint32_t chunk = 256;      // elements per block
  uint32_t blocks = 1;       // chunks in the input (the input has blocks * chunk elements,
                             // twice that with gridZip)
  std::vector<Node> body;    // the Block program applied to every chunk
  uint64_t dataSeed = 1;     // the input's random words
  // Narrow inputs and effect-only kernels (drawn from a stream of their own: see generate()).
  uint32_t elem = 32;   // the input's element bits: 32, 16 (DPull<EWord16>) or 8 (EWord8),
                        // widened to words at grid level
  uint32_t vector = 0;  // > 0: every block reads its chunk of the input (splitUp of the
                        // untouched input) as vectors<vector>, widened into shared memory
  Result result = Result::Output;
  uint32_t accOp = 0;        // EffectAtomic: the atomic operation
  uint32_t accSlots = 1;     // EffectAtomic: acc's length
  uint32_t accSpare = 0;     // EffectWrite: elements of acc after the blocks' results
  bool effectFirst = false;  // effect with gridOutput: the effect first in the result tuple
  // Fused outputs (drawn from a stream of their own too). Not empty: the block programs return
  // fuse(push<Block>(y), the parts...) for their result y, pConcat makes it one Fused<Grid> (an
  // output per part, one grid loop). With an effect, the fused output stands in the tuple
  // instead of push<Grid> of the grid-level array (gridOutput): blocks of splitUp(chunk) of it,
  // y each block's chunk.
  std::vector<FusedPart> fused;
  uint32_t fusedThread = 0;  // > 0: the parts are Thread programs over pieces of this length
  bool fusedForce = false;   // y forced (forcePull) before the parts read it
  bool fusedNested = false;  // fuse(fuse(push(y), part 1), part 2): the same parts, nested
  bool gridFirst = false;    // output with gridOutput: push<Grid> first in the result tuple
  // A scalar parameter d (EWord32, right after the input) that divides at launch (issue 40),
  // drawn from a stream of its own too; the kernel's results do not depend on it.
  Divisor divisor = Divisor::None;
  uint32_t divisorValue = 1;  // d at the launches (a divisor of the input's length); the
                              // defect-class checks launch with d = 0 too (defects.hpp)
  // The output written through unvectors<W> (see StoreForm), drawn from a stream of its own
  // too, where the recipe has an output alone (no effect, fused parts or second output).
  StoreForm store = StoreForm::None;
  uint32_t storeType = 2;    // its element type (kStoreTypes): u32 where none is drawn
  uint32_t storeWidth = 0;   // W: a power of two, W * the type's size at most 16 bytes
  uint32_t storeRotate = 0;  // below W: the lanes' rotation
  uint32_t storePiece = 0;   // Threads, Warps: the pieces' length (a multiple of W)
  // A matrix kernel instead of all the above but the thread and block counts and the data seed
  // (drawn from a stream of its own too).
  std::optional<MatrixRecipe> matrix;
};

// A recipe that the reference rejects (a length that does not divide, an empty array, ...):
// only the shrinker sees these.
struct InvalidRecipe : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Scalar operators, shared by the obsidian and reference interpretations: W is uint32_t or
// obsidian::EWord32 and the same expression text works for both (unsigned wrap-around).
constexpr uint32_t kUnaryOps = 5;
constexpr uint32_t kBinaryOps = 5;
// The collectives' operators (associative; all but the last commutative): see scalar_ops.hpp.
constexpr uint32_t kCollectiveOps = 7;
constexpr uint32_t kCommutativeOps = 6;
// The narrow types' operators (narrowOp in scalar_ops.hpp).
constexpr uint32_t kNarrowOps = 6;
// The bit intrinsics' functions (bitsOp in scalar_ops.hpp) and WarpVote's votes.
constexpr uint32_t kBitsOps = 9;
constexpr uint32_t kWarpVotes = 4;
// ThreadItems' variants: 4 values and results (threadItemsFold in scalar_ops.hpp), 2 forms.
constexpr uint32_t kThreadItemsFns = 8;
// ThreadItems' most items per thread.
constexpr uint32_t kMostThreadItems = 8;
// ThreadItems' scan operators (itemsScanOp in scalar_ops.hpp: +, max, ^, the last value that is
// not a multiple of 4).
constexpr uint32_t kItemsScanOps = 4;
// SmallFloatMap's functions (smallFloatOp in scalar_ops.hpp) and SmallFloatForce's forms.
constexpr uint32_t kSmallFloatOps = 11;
constexpr uint32_t kSmallFloatForces = 4;
// PairMap's functions (pairMapRef in scalar_ops.hpp).
constexpr uint32_t kPairOps = 6;
// BlockRadixSort's key types (sortKeyName, sortOrderBits in scalar_ops.hpp: u32, i32, f32),
// most chunks, forms (Node::fn) and most value arrays.
constexpr uint32_t kSortKeyTypes = 3;
constexpr uint32_t kMostSortChunks = 4;
constexpr uint32_t kSortForms = 2;
constexpr uint32_t kMostSortValues = 2;
// BlockDiscontinuity's collectives (Node::adjacent), most chunks and forms (Node::fn). Its
// edges (Node::edge), the chunk's predecessor (tails: successor) p with the flag h:
// 0: h false, p the stand-in c = constant >> shift (ignored; the difference uses it);
// 1: the array's word beside the chunk >> shift, h true; where there is none, as 0;
// 2: p = c, h true; 3: p = c, h computed in the kernel: x[the chunk's first] is odd.
// The difference takes 0 and 1 only (it has no h).
constexpr uint32_t kAdjacentKinds = 3;
constexpr uint32_t kMostAdjacentChunks = 4;
constexpr uint32_t kAdjacentForms = 2;
constexpr uint32_t kAdjacentEdges = 4;
// BlockMergeSort's comparators (Node::order; mergeLess in scalar_ops.hpp): 0 a < b
// (Ascending), 1 b < a (Descending), 2 (a & m) < (b & m), 3 (b & m) < (a & m) with the mask
// m = constant (ties among words that differ elsewhere: the sort must keep their order). Its
// valid counts (Node::valid): 0 every element (blockMergeSort's default; the padding sorts
// last), 1 the chunk's size, 2 x[the chunk's first] % (size + 1), read in the kernel (the
// chunk's words from it on kept as they are). Most chunks, forms (Node::fn), value arrays.
constexpr uint32_t kMergeOrders = 4;
constexpr uint32_t kMergeValids = 3;
constexpr uint32_t kMostMergeChunks = 4;
constexpr uint32_t kMergeForms = 2;
constexpr uint32_t kMostMergeValues = 1;

// The input's elements (below 2^elem), as words.
std::vector<uint32_t> inputFor(const Recipe& r);
size_t inputLength(const Recipe& r);

// The oracle: every array argument after the input, in argument order, as it is after the
// kernel: the global bins (with globalBins), acc (with an effect), the output (without an
// effect; with a vector store each element's bits as a word), the grid-level output (with
// gridOutput; gridFirst puts it before the output), the parts of a fused output each in turn,
// computed directly over the arrays. Throws InvalidRecipe.
std::vector<std::vector<uint32_t>> reference(const Recipe& r, const std::vector<uint32_t>& in);
// The same arguments as they are before the kernel runs (`after` is reference's result): the
// bins zero, acc random words (the kernel must keep what it does not change), the outputs
// 0xdeadbeef (the kernel must overwrite them; a narrower type's output its low bits).
std::vector<std::vector<uint32_t>> argumentsBefore(const Recipe& r,
                                                   const std::vector<std::vector<uint32_t>>& after);

// A random well-typed recipe.
Recipe generate(std::mt19937_64& rng);
// A recipe of the deep-expression class: one thread folds a chunk of 4096 or more elements in
// one expression (NVRTC takes tens of seconds on those, so --gpu runs them on the simulator only).
bool isDeepFold(const Recipe& r);

// C++ source (a function returning the obsidian::Kernel) that rebuilds the recipe's kernel
// with the library's combinators.
std::string cppSource(const Recipe& r, uint32_t threads,
                      const std::string& function = "fuzzKernel");

// Smaller recipes to try while shrinking, most aggressive first.
std::vector<Recipe> shrinkCandidates(const Recipe& r);
// A size measure that every successful shrink step decreases.
size_t recipeSize(const Recipe& r);

std::string levelName(Level l);

// Loops over the grid that recipe r's kernel has (KernelReport::gridPasses): one per Push<Grid>
// output, one for a fused output's parts together, one per effect.
uint32_t gridPasses(const Recipe& r);

// How often each step kind (and grid shape) occurs in r, added to counts.
void countSteps(const Recipe& r, std::map<std::string, uint64_t>& counts);

}  // namespace fuzz
