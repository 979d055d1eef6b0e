// Pass: virtualization (see virtualize.hpp): the plan, then the apply step.
#include "codegen/virtualize.hpp"

#include "codegen/shuffles.hpp"
#include "ir/ir_walk.hpp"

namespace obsidian {
namespace {

using ir::u32;

uint32_t staticCount(const ExpPtr& e) {
  uint32_t n = 0;
  OBSIDIAN_ASSERT(ir::literalU32(e, n), "verify has checked that this count is static");
  return n;
}

// ------------------------------------------------------------------ the plan

SpreadPlan spreadOver(uint32_t n, uint32_t real) {
  const Spread shape = n == real ? Spread::Exact : n < real ? Spread::Guard : Spread::Loop;
  return SpreadPlan{shape, real, std::min(n, real)};
}

const SpreadPlan kOverGrid{Spread::Loop, 0, 0};

class Planner {
 public:
  explicit Planner(KernelIR& k) : k_(k), tpb_(k.threadsPerBlock) {}

  SpreadPlans run() {
    plan(k_.body);
    k_.gridBlocks = gridBlocks(k_.body);
    if (!k_.gridBlocks) k_.gridBlocks = u32(1);
    return std::move(plans_);
  }

 private:
  // Each loop's plan is pushed before those of the loops in its body: plans_[id] is loop id's.
  void plan(const Body& b) {
    for (const Stmt& s : b) {
      if (const auto* f = std::get_if<ForAll>(&s.node)) {
        switch (f->level) {
          case Level::Grid: plans_.push_back(kOverGrid); break;
          case Level::Block: plans_.push_back(spreadOver(staticCount(f->count), tpb_)); break;
          case Level::Warp: plans_.push_back(spreadOver(staticCount(f->count), 32)); break;
          case Level::Thread: OBSIDIAN_ASSERT(false, "no ForAll at Thread level");
        }
      } else if (const auto* d = std::get_if<DistrPar>(&s.node)) {
        OBSIDIAN_ASSERT(d->level == Level::Block || d->level == Level::Warp,
                        "DistrPar of Warp or Block programs");
        plans_.push_back(d->level == Level::Block ? kOverGrid
                                                  : spreadOver(staticCount(d->count), tpb_ / 32));
      }
      for (const Body* child : ir::childBodies(s)) plan(*child);
    }
  }

  ExpPtr gridBlocks(const Body& b) const {
    ExpPtr blocks;
    auto join = [&](const ExpPtr& e) { blocks = blocks ? ir::binary(BinOp::Max, blocks, e) : e; };
    for (const Stmt& s : b) {
      if (const auto* d = std::get_if<DistrPar>(&s.node)) {
        join(d->count);
      } else if (const auto* f = std::get_if<ForAll>(&s.node)) {
        // ceil(n / T) without the overflow of (n + T - 1) / T near 2^32
        const ExpPtr partial =
            ir::cast(ScalarType::U32,
                     ir::binary(BinOp::Ne, ir::binary(BinOp::Mod, f->count, u32(tpb_)), u32(0)));
        join(ir::binary(BinOp::Add, ir::binary(BinOp::Div, f->count, u32(tpb_)), partial));
      } else {
        for (const Body* child : ir::childBodies(s)) {
          if (ExpPtr e = gridBlocks(*child)) join(e);
        }
      }
    }
    return blocks;
  }

  KernelIR& k_;
  uint32_t tpb_;
  SpreadPlans plans_;
};

// ------------------------------------------------------------------ the apply step

class Virtualizer {
 public:
  Virtualizer(KernelIR& k, const SpreadPlans& plans)
      : k_(k), tpb_(k.threadsPerBlock), plans_(plans) {}

  void run() {
    OBSIDIAN_ASSERT(k_.gridBlocks, "planVirtualization runs before virtualize");
    offsetWarpArrays(k_.body);
    k_.body = lower(std::move(k_.body));
    OBSIDIAN_ASSERT(next_ == plans_.size(), "the plan has one SpreadPlan per parallel loop");
  }

 private:
  ExpPtr warpId() const { return ir::binary(BinOp::Div, ir::threadIdx(), u32(32)); }
  ExpPtr laneId() const { return ir::binary(BinOp::Mod, ir::threadIdx(), u32(32)); }

  bool isWarpSlice(ArrayId a) const {
    const ArrayDecl& d = k_.arrays[a];
    return d.space == MemorySpace::Shared && d.level == Level::Warp;
  }

  // The index of an access to a warp array, moved into the slice of the executing real warp.
  ExpPtr slice(ArrayId a, const ExpPtr& ix) const {
    const ArrayDecl& d = k_.arrays[a];
    if (!isWarpSlice(a)) return ix;
    return ir::binary(BinOp::Add, ir::binary(BinOp::Mul, warpId(), u32(d.length)), ix);
  }

  ExpPtr offsetExp(const ExpPtr& e) const {
    return ir::rewrite(e, [&](const ExpPtr& n) -> ExpPtr {
      // Other arrays are rebuilt by rewrite itself (which keeps a vector read's fields).
      if (n->kind != ExpKind::Index || !isWarpSlice(n->array)) return nullptr;
      return ir::index(n->type, n->array, slice(n->array, offsetExp(n->args[0])));
    });
  }

  void offsetWarpArrays(Body& b) const {
    for (Stmt& s : b) {
      ir::mapExps(s, [&](const ExpPtr& e) { return offsetExp(e); });
      if (auto* a = std::get_if<Assign>(&s.node)) a->index = slice(a->array, a->index);
      if (auto* a = std::get_if<Atomic>(&s.node)) a->index = slice(a->array, a->index);
      for (Body* child : ir::childBodies(s)) offsetWarpArrays(*child);
    }
  }

  // Register reads of the lane loop `laneVar`'s own element (materializeShuffles made every
  // other register read a shuffle of its own) become ownLane reads.
  void markOwnLanes(Body& b, const std::string& laneVar) const {
    ir::mapExpsDeep(b, [&](const ExpPtr& e) {
      return ir::rewrite(e, [&](const ExpPtr& n) -> ExpPtr {
        if (n->kind != ExpKind::Index || k_.arrays[n->array].space != MemorySpace::Register ||
            isShuffle(k_, n, laneVar)) {
          return nullptr;
        }
        return ir::ownLaneIndex(n->type, n->array, n->args[0], n->origin);
      });
    });
  }

  static Body substituted(Body b, const std::string& var, const ExpPtr& value) {
    ir::mapExpsDeep(b, [&](const ExpPtr& e) { return ir::substitute(e, var, value); });
    return b;
  }

  // The plan of the next parallel loop in pre-order (the loop being lowered: lower() takes it
  // before lowering the loop's body).
  SpreadPlan nextPlan() {
    OBSIDIAN_ASSERT(next_ < plans_.size(), "planVirtualization runs before virtualize");
    return plans_[next_++];
  }

  // The plan's n instances over its real ones, the real index being `index`.
  void spread(Body& out, Level level, const SpreadPlan& plan, const ExpPtr& count,
              const ExpPtr& index, const std::string& var, Body inner, Virtual made) const {
    switch (plan.shape) {
      case Spread::Exact:
        for (Stmt& s : substituted(std::move(inner), var, index)) out.push_back(std::move(s));
        return;
      case Spread::Guard:
        out.push_back(Cond{level,
                           ir::binary(BinOp::Lt, index, count),
                           substituted(std::move(inner), var, index),
                           {},
                           made});
        return;
      case Spread::Loop:
        out.push_back(SeqFor{level, var, index, count, u32(plan.real), std::move(inner), made});
        return;
      case Spread::Unplanned: break;
    }
    OBSIDIAN_ASSERT(false, "planVirtualization runs before virtualize");
  }

  Body lower(Body in) {
    Body out;
    for (Stmt& s : in) {
      if (auto* f = std::get_if<ForAll>(&s.node)) {
        const SpreadPlan plan = nextPlan();
        if (f->level == Level::Warp) markOwnLanes(f->body, f->var);
        Body inner = lower(std::move(f->body));
        switch (f->level) {
          case Level::Grid: {
            OBSIDIAN_ASSERT(plan.shape == Spread::Loop, "a grid's threads loop");
            const ExpPtr first = ir::binary(
                BinOp::Add, ir::binary(BinOp::Mul, ir::blockIdx(), u32(tpb_)), ir::threadIdx());
            const ExpPtr stride = ir::binary(BinOp::Mul, ir::gridDim(), u32(tpb_));
            out.push_back(SeqFor{Level::Grid, f->var, first, f->count, stride, std::move(inner),
                                 Virtual::GridThreads});
            break;
          }
          case Level::Block:
            spread(out, Level::Block, plan, f->count, ir::threadIdx(), f->var, std::move(inner),
                   Virtual::Threads);
            break;
          case Level::Warp:
            spread(out, Level::Warp, plan, f->count, laneId(), f->var, std::move(inner),
                   Virtual::Lanes);
            break;
          case Level::Thread: OBSIDIAN_ASSERT(false, "no ForAll at Thread level");
        }
      } else if (auto* d = std::get_if<DistrPar>(&s.node)) {
        const SpreadPlan plan = nextPlan();
        Body inner = lower(std::move(d->body));
        if (d->level == Level::Block) {
          OBSIDIAN_ASSERT(plan.shape == Spread::Loop, "a grid's blocks loop");
          out.push_back(SeqFor{Level::Grid, d->var, ir::blockIdx(), d->count, ir::gridDim(),
                               std::move(inner), Virtual::Blocks});
        } else {
          spread(out, Level::Block, plan, d->count, warpId(), d->var, std::move(inner),
                 Virtual::Warps);
        }
      } else {
        for (Body* child : ir::childBodies(s)) *child = lower(std::move(*child));
        out.push_back(std::move(s));
      }
    }
    return out;
  }

  KernelIR& k_;
  uint32_t tpb_;
  const SpreadPlans& plans_;
  LoopId next_ = 0;  // the LoopId of the next parallel loop lower() meets
};

bool hasParallelLoops(const Body& b) {
  for (const Stmt& s : b) {
    if (isParallelLoop(s)) return true;
    for (const Body* child : ir::childBodies(s)) {
      if (hasParallelLoops(*child)) return true;
    }
  }
  return false;
}

}  // namespace

SpreadPlans planVirtualization(KernelIR& k) { return Planner(k).run(); }

KernelIR virtualize(KernelIR k, const SpreadPlans& plans) {
  Virtualizer(k, plans).run();
  return k;
}

bool virtualized(const KernelIR& k) { return !hasParallelLoops(k.body); }

}  // namespace obsidian
