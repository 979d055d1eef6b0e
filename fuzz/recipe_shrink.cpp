// Shrinking of 1-D recipes: the size measure that every shrink step decreases, and the
// smaller recipes to try, most aggressive first (fewer and simpler steps, plainer grids, inputs,
// effects and fused outputs, fewer blocks and threads). The shrinker (fuzz.cpp) keeps a
// candidate only where the reference accepts it. Matrix recipes: recipe_matrix_shrink.cpp.
#include <algorithm>
#include <bit>
#include <functional>

#include "recipe_internal.hpp"

namespace fuzz {

namespace {

// A collective's two variants that shrinking moves towards the simplest, as Node fields
// (nullptr: the collective has no such variant): its algorithm (red1, sklansky, a direct load;
// the histogram: one copy) and its operator (the sum; the histogram: levels from 0).
uint32_t Node::*algorithmOf(Op op) {
  switch (op) {
    case Op::BlockReduce:
    case Op::BlockScan: return &Node::alg;
    case Op::BlockLoadStore: return &Node::loadAlg;
    case Op::BlockHistogram: return &Node::log2Copies;
    default: return nullptr;
  }
}
uint32_t Node::*operatorOf(Op op) {
  switch (op) {
    case Op::BlockReduce:
    case Op::BlockScan:
    case Op::WarpReduce:
    case Op::WarpScan: return &Node::fn;
    case Op::BlockHistogram: return &Node::lower;
    default: return nullptr;
  }
}

// Step n's variants that are not the simplest (see shrinkCandidates), one each.
size_t variants(const Node& n) {
  if (isCollective(n.op)) {
    uint32_t Node::*const alg = algorithmOf(n.op);
    uint32_t Node::*const op = operatorOf(n.op);
    return (alg && n.*alg != 0) + (op && n.*op != 0);
  }
  switch (n.op) {
    case Op::NarrowMap: return n.fn != 0;
    case Op::NarrowForce: return n.zipped;
    case Op::FloatBits: return (n.fn != 0) + (n.constant != 0) + (n.constantHigh != 0);
    case Op::FloatScan: return (n.fn != 0) + (n.size > 1);
    case Op::BitsMap:
    case Op::WarpVote: return (n.fn != 0) + (n.constant != 0);
    case Op::SmallFloatMap: return (n.fn != 0) + (n.constant != 0) + (n.format != 0);
    case Op::SmallFloatForce: return (n.fn != 0) + (n.format != 0);
    case Op::PairMap: return (n.fn != 0) + (n.constant != 0) + (n.format != 0);
    // The halvings of its threads too (each step below halves them); the scan form, its
    // operator and its aggregate one each.
    case Op::ThreadItems:
      return (n.fn != 0) + (n.constant != 0) + static_cast<size_t>(std::bit_width(n.size)) -
             (n.size > 0) + (n.scan != 0) + (n.scan > 1) + n.aggregate;
    // The halvings of its items too; its bits from 0, a single pass.
    case Op::BlockRadixSort:
      return (n.fn != 0) + (n.constant != 0) + (n.format != 0) + n.descending + n.values +
             static_cast<size_t>(std::bit_width(n.items)) - (n.items > 0) + (n.beginBit != 0) +
             (n.endBit - n.beginBit > n.radixBits);
    // The halvings of its items too.
    case Op::BlockDiscontinuity:
      return (n.fn != 0) + (n.constant != 0) + (n.adjacent != 0) + (n.edge != 0) + (n.shift != 0) +
             static_cast<size_t>(std::bit_width(n.items)) - (n.items > 0);
    // The halvings of its items too.
    case Op::BlockMergeSort:
      return (n.fn != 0) + (n.constant != 0) + (n.order != 0) + (n.valid != 0) + n.values +
             static_cast<size_t>(std::bit_width(n.items)) - (n.items > 0);
    default: return 0;
  }
}

// The vector store's share of recipeSize: its variants one each (its simplest: u32 vectors of
// two lanes in order, each block's own stores; pieces of one vector), the store itself more
// than all of them.
size_t storeSize(const Recipe& r) {
  if (r.store == StoreForm::None) return 0;
  return 10 + (r.storeType != 2) + (r.storeWidth != 2) + (r.storeRotate != 0) +
         (r.store != StoreForm::Blocks && r.store != StoreForm::Grid) +
         (r.storePiece > r.storeWidth);
}

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
  // The steps' variants (non-zero algorithm, operator, ...) count one each: shrinking moves
  // them towards the simplest.
  size_t stepVariants = 0;
  std::vector<Node> body = r.body;
  forEachNodeList(body, [&](std::vector<Node>& ops) {
    for (const Node& n : ops) stepVariants += variants(n);
  });
  return countNodes(r.body) * 100000 + inputLength(r) + r.threads + r.altThreads + r.realBlocks +
         (r.gridMap ? 1 : 0) + (r.gridZip ? 1 : 0) + stepVariants + (r.elem != 32) +
         (r.vector != 0) + (r.result != Result::Output) + r.accSlots + r.accSpare + fusedSize(r) +
         (r.divisor != Divisor::None) + (r.divisorValue != 1) + storeSize(r);
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
      for (uint32_t Node::*const field : {algorithmOf(step.op), operatorOf(step.op)}) {
        if (field && step.*field != 0) {
          edit(li, [at, field](std::vector<Node>& v) { v[static_cast<size_t>(at)].*field = 0; });
        }
      }
      // A narrow step's first operator (NarrowForce: the narrow array alone).
      if (step.op == Op::NarrowMap && step.fn != 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].fn = 0; });
      }
      if (step.op == Op::NarrowForce && step.zipped) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].zipped = false; });
      }
      // A float step's moves (FloatScan: the sum), literal +0 (f64 too), pieces of 1.
      if (isFloatBits(step.op) && step.fn != 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].fn = 0; });
      }
      if (step.op == Op::FloatBits && (step.constant != 0 || step.constantHigh != 0)) {
        edit(li, [at](std::vector<Node>& v) {
          v[static_cast<size_t>(at)].constant = 0;
          v[static_cast<size_t>(at)].constantHigh = 0;
        });
      }
      if (step.op == Op::FloatScan && step.size > 1) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].size = 1; });
      }
      // A bit step's first function (popc of x; WarpVote: the ballot), constant 0.
      if (isBits(step.op) && step.fn != 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].fn = 0; });
      }
      if (isBits(step.op) && step.constant != 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].constant = 0; });
      }
      // A small float step's first function (moves; SmallFloatForce: the values alone), the
      // literal +0 (and second parameter 0), Half.
      if ((isSmallFloatStep(step.op) || isPairStep(step.op)) && step.fn != 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].fn = 0; });
      }
      if ((step.op == Op::SmallFloatMap || isPairStep(step.op)) && step.constant != 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].constant = 0; });
      }
      if ((isSmallFloatStep(step.op) || isPairStep(step.op)) && step.format != 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].format = 0; });
      }
      // A thread array's first value and result (the xor, the sum), its nearest neighbour
      // (constant 0), half its threads (twice the items: the reference rejects more than 8).
      if (step.op == Op::ThreadItems && step.fn != 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].fn = 0; });
      }
      if (step.op == Op::ThreadItems && step.constant != 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].constant = 0; });
      }
      if (step.op == Op::ThreadItems && step.size % 2 == 0) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].size /= 2; });
      }
      // Its scan form: none (the plain step), the sum, no aggregate.
      if (step.op == Op::ThreadItems && step.scan != 0) {
        edit(li, [at](std::vector<Node>& v) {
          v[static_cast<size_t>(at)].scan = 0;
          v[static_cast<size_t>(at)].aggregate = false;
        });
      }
      if (step.op == Op::ThreadItems && step.scan > 1) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].scan = 1; });
      }
      if (step.op == Op::ThreadItems && step.aggregate) {
        edit(li, [at](std::vector<Node>& v) { v[static_cast<size_t>(at)].aggregate = false; });
      }
      // A block radix sort's simplest: the first form, constant 0, u32 keys, ascending, the
      // keys alone, half the items (the reference rejects a tile that no longer holds the
      // chunk), its bits from 0 (as many), a single pass.
      if (isSortStep(step.op)) {
        const auto set = [&](const std::function<void(Node&)>& change) {
          edit(li, [at, change](std::vector<Node>& v) { change(v[static_cast<size_t>(at)]); });
        };
        if (step.fn != 0) set([](Node& n) { n.fn = 0; });
        if (step.constant != 0) set([](Node& n) { n.constant = 0; });
        if (step.format != 0) set([](Node& n) { n.format = 0; });
        if (step.descending) set([](Node& n) { n.descending = false; });
        if (step.values != 0) set([](Node& n) { n.values = 0; });
        if (step.items > 1) set([](Node& n) { n.items /= 2; });
        if (step.beginBit != 0) {
          set([](Node& n) {
            n.endBit -= n.beginBit;
            n.beginBit = 0;
          });
        }
        if (step.endBit - step.beginBit > step.radixBits) {
          set([](Node& n) { n.endBit = n.beginBit + n.radixBits; });
        }
      }
      // A block discontinuity's simplest: the first form, constant 0, heads, no edge, the
      // words themselves, half the items (the reference rejects a tile that no longer holds
      // the chunk).
      if (isAdjacentStep(step.op)) {
        const auto set = [&](const std::function<void(Node&)>& change) {
          edit(li, [at, change](std::vector<Node>& v) { change(v[static_cast<size_t>(at)]); });
        };
        if (step.fn != 0) set([](Node& n) { n.fn = 0; });
        if (step.constant != 0) set([](Node& n) { n.constant = 0; });
        if (step.adjacent != 0) set([](Node& n) { n.adjacent = 0; });
        if (step.edge != 0) set([](Node& n) { n.edge = 0; });
        if (step.shift != 0) set([](Node& n) { n.shift = 0; });
        if (step.items > 1) set([](Node& n) { n.items /= 2; });
      }
      // A block merge sort's simplest: the first form, ascending (mask 0), every element
      // valid, the keys alone, half the items (the reference rejects a tile that no longer
      // holds the chunk); a masked order keeps its order with mask 0 (every key tied).
      if (isMergeStep(step.op)) {
        const auto set = [&](const std::function<void(Node&)>& change) {
          edit(li, [at, change](std::vector<Node>& v) { change(v[static_cast<size_t>(at)]); });
        };
        if (step.fn != 0) set([](Node& n) { n.fn = 0; });
        if (step.order != 0) {
          set([](Node& n) {
            n.order = 0;
            n.constant = 0;
          });
        }
        if (step.constant != 0) set([](Node& n) { n.constant = 0; });
        if (step.valid != 0) set([](Node& n) { n.valid = 0; });
        if (step.values != 0) set([](Node& n) { n.values = 0; });
        if (step.items > 1) set([](Node& n) { n.items /= 2; });
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
  // The vector store: none (the output of words), or its simplest variants (the reference
  // rejects those that do not fit: another type's widths, lengths that W does not divide).
  if (r.store != StoreForm::None) {
    with([](Recipe& c) {
      c.store = StoreForm::None;
      c.storeType = 2;
      c.storeWidth = c.storeRotate = c.storePiece = 0;
    });
    if (r.storeType != 2) with([](Recipe& c) { c.storeType = 2; });
    if (r.storeWidth != 2) {
      with([](Recipe& c) {
        c.storeWidth = 2;
        c.storeRotate %= 2;
        if (c.storePiece > 0) c.storePiece = 2;
      });
    }
    if (r.storeRotate != 0) with([](Recipe& c) { c.storeRotate = 0; });
    if (r.store != StoreForm::Blocks && r.store != StoreForm::Grid) {
      with([](Recipe& c) {
        c.store = StoreForm::Blocks;
        c.storePiece = 0;
      });
    }
    if (r.storePiece > r.storeWidth) with([](Recipe& c) { c.storePiece = c.storeWidth; });
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
