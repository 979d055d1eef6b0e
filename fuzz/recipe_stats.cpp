// Statistics: how often each kind of step, grid shape, input, output and matrix form occurs
// in the generated recipes (obsidian-fuzz --stats, and the summary's counts).
#include <functional>
#include <string>

#include "recipe_internal.hpp"
#include "scalar_ops.hpp"

namespace fuzz {

namespace {

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
        what += std::string(n.push ? " push2" : " pull") + (n.padding == 0 ? " Auto" : " None");
      }
      ++counts[what + " at " + levelName(l)];
      if (n.op == TileOp::Nest) walk(n.kids, l == Level::Block ? Level::Warp : Level::Thread);
    }
  };
  walk(mr.body, Level::Block);
}

}  // namespace

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
  bool collective = false, floats = false, bits = false, items = false, small = false,
       pairs = false, sorts = false, adjacent = false, merges = false;
  Level level = Level::Block;  // where the steps walked now run
  std::function<void(const std::vector<Node>&)> walk = [&](const std::vector<Node>& ops) {
    for (const Node& n : ops) {
      if (isCollective(n.op)) collective = true;
      const std::string op = std::string(" ") + collectiveName(n.fn);
      const std::string kind = n.exclusive ? " exclusive" : " inclusive";
      switch (n.op) {
        case Op::BlockReduce:
          ++counts["BlockReduce"];
          ++counts["BlockReduce " + std::string(reduceAlgs[n.alg % 8])];
          ++counts["BlockReduce/WarpReduce" + op];
          break;
        case Op::BlockScan:
          ++counts["BlockScan"];
          ++counts["BlockScan " + std::string(scanAlgs[n.alg % 5]) + kind];
          ++counts["BlockScan/WarpScan" + op];
          break;
        case Op::BlockLoadStore:
          ++counts["BlockLoadStore"];
          ++counts["BlockLoadStore load " + std::string(loadAlgs[n.loadAlg % 4])];
          ++counts["BlockLoadStore store " + std::string(loadAlgs[n.storeAlg % 4])];
          break;
        case Op::BlockHistogram:
          ++counts["BlockHistogram"];
          ++counts["BlockHistogram copies " + std::to_string(1u << n.log2Copies)];
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
          ++counts["NarrowMap u" + std::to_string(n.width)];
          ++counts["NarrowMap operator " + std::to_string(n.fn)];
          break;
        case Op::NarrowForce:
          ++counts["NarrowForce u" + std::to_string(n.width) +
                   (n.zipped ? " zipped with u32" : "")];
          break;
        case Op::FloatBits: {
          static const char* const kinds[] = {"moves",   "arithmetic", "neg/fabs", "comparisons",
                                              "min/max", "f32<->f64",  "f32->u32", "f64 bits"};
          floats = true;
          ++counts[std::string("FloatBits ") + kinds[n.fn % kFloatBitsOps]];
          const bool nan =
              (n.constant & 0x7f800000u) == 0x7f800000u && (n.constant & 0x7fffffu) != 0;
          if (nan) {
            ++counts[std::string("FloatBits literal: ") +
                     ((n.constant & 0x400000u) ? "quiet NaN" : "signalling NaN")];
          }
          break;
        }
        case Op::FloatScan: {
          static const char* const kinds[] = {"add", "min", "max", "mul", "f64 add", "force"};
          floats = true;
          ++counts[std::string("FloatScan ") + kinds[std::min(n.fn, kFloatScanOps)] + " at " +
                   levelName(level)];
          break;
        }
        case Op::BitsMap: {
          static const char* const kinds[] = {"popc u32", "clz u32",  "ffs u32",
                                              "brev u32", "popc u64", "clz u64",
                                              "ffs u64",  "brev u64", "all four u64"};
          bits = true;
          ++counts["BitsMap"];
          ++counts[std::string("BitsMap ") + kinds[n.fn % kBitsOps] + " at " + levelName(level)];
          break;
        }
        case Op::WarpVote: {
          static const char* const kinds[] = {"ballot", "voteAny/voteAll", "matchAny",
                                              "ballot read by odd lanes"};
          bits = true;
          ++counts["WarpVote"];
          ++counts[std::string("WarpVote ") + kinds[n.fn % kWarpVotes]];
          break;
        }
        case Op::ThreadItems: {
          static const char* const kinds[] = {"xor, +", "sum, ^", "first, * 3 +", "hash, ^ >> 3"};
          items = true;
          ++counts["ThreadItems"];
          ++counts["ThreadItems at " + levelName(level) +
                   (n.fn / 4 == 0 ? ", newShared + sync + pull" : ", force(mkPush)")];
          if (n.scan == 0) ++counts[std::string("ThreadItems value, result: ") + kinds[n.fn % 4]];
          // Loops of a whole block (at the smaller thread count) or warp, or of fewer threads.
          const uint32_t most = level == Level::Warp ? 32 : std::min(r.threads, r.altThreads);
          ++counts[std::string("ThreadItems loops of ") +
                   (n.size == most ? "all the threads (the smaller count; a warp's 32)"
                                   : "fewer threads")];
          if (level == Level::Block && r.threads == r.altThreads && n.size == r.threads) {
            ++counts["ThreadItems at Block, one thread count, all its threads"];
          }
          if (n.scan != 0) {
            static const char* const ops[] = {"+", "max", "^", "last not a multiple of 4"};
            static_assert(std::size(ops) == kItemsScanOps);
            ++counts["ThreadItems blockScanItems"];
            ++counts[std::string("ThreadItems blockScanItems ") +
                     ops[(n.scan - 1) % kItemsScanOps] + (n.aggregate ? ", + aggregate" : "")];
            if (n.size < std::min(r.threads, r.altThreads)) {
              ++counts["ThreadItems blockScanItems, threads past the loop's (zeros)"];
            }
          }
          break;
        }
        case Op::SmallFloatMap: {
          static const char* const kinds[] = {"moves",
                                              "arithmetic",
                                              "min/max",
                                              "comparisons",
                                              "sqrt/neg/rsqrt/fabs/floor/ceil",
                                              "through f32",
                                              "to integers",
                                              "from integers and f64",
                                              "to fp8 and back",
                                              "fp8 of f32 and u32, to f32",
                                              "the other format, from f64"};
          static_assert(std::size(kinds) == kSmallFloatOps);
          small = true;
          const std::string format = smallName(n.format);
          ++counts["SmallFloatMap"];
          ++counts["SmallFloatMap " + format + " at " + levelName(level)];
          ++counts["SmallFloatMap " + std::string(kinds[n.fn % kSmallFloatOps])];
          const uint32_t k = n.constant & 0xffffu, m = n.format == 0 ? 10 : 7;
          const uint32_t inf = (n.format == 0 ? 0x1fu : 0xffu) << m;
          if ((k & inf) == inf && (k & ((1u << m) - 1)) != 0) {
            ++counts[std::string("SmallFloatMap literal: ") +
                     ((k & (1u << (m - 1))) != 0 ? "quiet NaN" : "signalling NaN")];
          }
          break;
        }
        case Op::SmallFloatForce: {
          static const char* const forms[] = {"values", "e4m3", "e5m2", "zipped with u32"};
          static_assert(std::size(forms) == kSmallFloatForces);
          small = true;
          ++counts["SmallFloatForce " + std::string(smallName(n.format)) + " " +
                   forms[n.fn % kSmallFloatForces] + " at " + levelName(level)];
          break;
        }
        case Op::PairMap: {
          static const char* const kinds[] = {"+ -",     "*",       "fma",
                                              "min/max", "neg/abs", "pack2 lanes +"};
          static_assert(std::size(kinds) == kPairOps);
          pairs = true;
          ++counts[std::string("PairMap ") + (n.format == 0 ? "Half2 " : "BFloat162 ") +
                   kinds[n.fn % kPairOps] + " at " + levelName(level)];
          break;
        }
        case Op::BlockRadixSort: {
          static const char* const vals[] = {"keys alone", "with places", "with places, words"};
          static_assert(std::size(vals) == kMostSortValues + 1);
          sorts = true;
          const uint32_t passes =
              n.radixBits == 0 ? 0 : (n.endBit - n.beginBit + n.radixBits - 1) / n.radixBits;
          ++counts["BlockRadixSort"];
          ++counts["BlockRadixSort " + std::string(sortKeyName(n.format)) +
                   (n.descending ? " descending" : " ascending")];
          ++counts[std::string("BlockRadixSort ") + vals[n.values % (kMostSortValues + 1)] +
                   (n.fn == 0 ? ", newShared + sync + pull" : ", force(mkPush)")];
          ++counts["BlockRadixSort " + std::to_string(n.radixBits) + "-bit digits"];
          const char* const many = passes == 0   ? "none (an empty bit range)"
                                   : passes == 1 ? "one"
                                                 : "several";
          ++counts[std::string("BlockRadixSort passes: ") + many];
          if (n.beginBit == 0 && n.endBit == 32) ++counts["BlockRadixSort all 32 bits"];
          // A tile (threads x items at a thread count) that the chunk does not fill: padding.
          if (n.size < std::max(r.threads, r.altThreads) * n.items) {
            ++counts["BlockRadixSort padded tile (at a thread count)"];
          }
          if (n.size % 32 != 0) {
            ++counts["BlockRadixSort chunk not a multiple of 32 (part of a warp)"];
          }
          if (n.size == std::min(r.threads, r.altThreads) * n.items ||
              n.size == std::max(r.threads, r.altThreads) * n.items) {
            ++counts["BlockRadixSort chunk of a whole tile (at a thread count)"];
          }
          break;
        }
        case Op::BlockDiscontinuity: {
          static const char* const edges[] = {"none", "the array's word beside the chunk",
                                              "a stand-in", "a stand-in, a computed flag"};
          static_assert(std::size(edges) == kAdjacentEdges);
          adjacent = true;
          const std::string name = std::string("BlockDiscontinuity ") + adjacentName(n.adjacent);
          ++counts["BlockDiscontinuity"];
          ++counts[name];
          // The difference has no flag: its edge 0 is the stand-in.
          const char* const edge =
              n.adjacent == 2 && n.edge == 0 ? edges[2] : edges[n.edge % kAdjacentEdges];
          const char* const bits = n.shift == 0    ? "the words"
                                   : n.shift >= 28 ? "1 to 4 bits (runs)"
                                                   : "5 to 31 bits";
          ++counts[name + ", edge: " + edge];
          ++counts[std::string("BlockDiscontinuity ") +
                   (n.fn == 0 ? "newShared + sync + pull" : "force(mkPush)")];
          ++counts[std::string("BlockDiscontinuity items: ") + bits];
          ++counts["BlockDiscontinuity " + std::to_string(n.items) + " items a thread"];
          // A tile (threads x items at a thread count) that the chunk does not fill: padding.
          if (n.size < std::max(r.threads, r.altThreads) * n.items) {
            ++counts["BlockDiscontinuity padded tile (at a thread count)"];
          }
          if (n.size == std::min(r.threads, r.altThreads) * n.items ||
              n.size == std::max(r.threads, r.altThreads) * n.items) {
            ++counts["BlockDiscontinuity chunk of a whole tile (at a thread count)"];
          }
          if (r.threads % 32 != 0 || r.altThreads % 32 != 0) {
            ++counts["BlockDiscontinuity in blocks of part of a warp"];
          }
          break;
        }
        case Op::BlockMergeSort: {
          static const char* const orders[] = {"ascending", "descending", "masked ascending",
                                               "masked descending"};
          static_assert(std::size(orders) == kMergeOrders);
          static const char* const valids[] = {"every element", "the chunk's size",
                                               "a count read in the kernel"};
          static_assert(std::size(valids) == kMergeValids);
          merges = true;
          ++counts["BlockMergeSort"];
          ++counts[std::string("BlockMergeSort ") + orders[n.order % kMergeOrders]];
          ++counts[std::string("BlockMergeSort valid: ") + valids[n.valid % kMergeValids]];
          ++counts[std::string("BlockMergeSort ") + (n.values > 0 ? "with places" : "keys alone") +
                   (n.fn == 0 ? ", newShared + sync + pull" : ", force(mkPush)")];
          ++counts["BlockMergeSort " + std::to_string(n.items) + " items a thread"];
          // A tile (threads x items at a thread count) that the chunk does not fill: padding.
          if (n.size < std::max(r.threads, r.altThreads) * n.items) {
            ++counts["BlockMergeSort padded tile (at a thread count)"];
          }
          if (n.size == std::min(r.threads, r.altThreads) * n.items ||
              n.size == std::max(r.threads, r.altThreads) * n.items) {
            ++counts["BlockMergeSort chunk of a whole tile (at a thread count)"];
          }
          // Merge rounds whose runs do not pair up evenly.
          if (!pow2(r.threads) || !pow2(r.altThreads)) {
            ++counts["BlockMergeSort in blocks of a thread count not a power of two"];
          }
          if (r.threads % 32 != 0 || r.altThreads % 32 != 0) {
            ++counts["BlockMergeSort in blocks of part of a warp"];
          }
          break;
        }
        case Op::Nest:
        case Op::SeqNest:
          // The bit steps' nests of one WarpVote over pieces of 32 (recipe_generate.cpp's
          // bitsStep), apart from the main stream's nests.
          if (n.size == 32 && n.kids.size() == 1 && n.kids[0].op == Op::WarpVote) {
            ++counts[std::string("WarpVote in a ") + names[static_cast<size_t>(n.op)] +
                     " of its own"];
          } else {
            ++counts[names[static_cast<size_t>(n.op)]];
          }
          break;
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
  if (bits) ++counts["programs with bit intrinsics or warp votes"];
  if (items) ++counts["programs with thread arrays"];
  if (small) ++counts["programs with half precision and fp8"];
  if (pairs) ++counts["programs with packed pairs"];
  if (sorts) ++counts["programs with block radix sorts"];
  if (adjacent) ++counts["programs with block discontinuities"];
  if (merges) ++counts["programs with block merge sorts"];
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
  if (r.store != StoreForm::None) {
    static const char* const forms[] = {"none",
                                        "grid (concP, tail)",
                                        "blocks",
                                        "whole (unvectors of pConcat)",
                                        "threads (tConcat)",
                                        "warps (pConcat)",
                                        "shared (fallback)"};
    static_assert(std::size(forms) == kStoreForms);
    const std::string type = storeTypeName(r.storeType), w = std::to_string(r.storeWidth);
    ++counts["programs with vector stores"];
    ++counts["vector store: " + std::string(forms[static_cast<size_t>(r.store)])];
    ++counts["vector store: unvectors<" + w + "> of " + type];
    if (r.storeRotate != 0) ++counts["vector store: lanes rotated"];
    if (r.staticInput) ++counts["vector store: static input length"];
  }
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

}  // namespace fuzz
