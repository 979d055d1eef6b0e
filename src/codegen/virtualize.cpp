// Pass: virtualize (see virtualize.hpp).
#include "codegen/virtualize.hpp"

#include "ir/ir_walk.hpp"

namespace obsidian {
namespace {

using ir::u32;

class Virtualizer {
 public:
  explicit Virtualizer(KernelIR& k) : k_(k), tpb_(k.threadsPerBlock) {}

  void run() {
    k_.gridBlocks = gridBlocks(k_.body);
    offsetWarpArrays(k_.body);
    k_.body = lower(std::move(k_.body));
    k_.virtualized = true;
  }

 private:
  ExpPtr warpId() const { return ir::binary(BinOp::Div, ir::threadIdx(), u32(32)); }
  ExpPtr laneId() const { return ir::binary(BinOp::Mod, ir::threadIdx(), u32(32)); }

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
    return blocks ? blocks : (&b == &k_.body ? u32(1) : nullptr);
  }

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

  static Body substituted(Body b, const std::string& var, const ExpPtr& value) {
    ir::mapExpsDeep(b, [&](const ExpPtr& e) { return ir::substitute(e, var, value); });
    return b;
  }

  // n virtual instances over `real` real ones, the real index being `index`.
  void spread(Body& out, Level level, uint32_t n, uint32_t real, const ExpPtr& index,
              const std::string& var, Body inner) const {
    if (n == real) {
      for (Stmt& s : substituted(std::move(inner), var, index)) out.push_back(std::move(s));
    } else if (n < real) {
      out.push_back(Cond{level,
                         ir::binary(BinOp::Lt, index, u32(n)),
                         substituted(std::move(inner), var, index),
                         {}});
    } else {
      out.push_back(SeqFor{level, var, index, u32(n), u32(real), std::move(inner)});
    }
  }

  static uint32_t staticCount(const ExpPtr& e) {
    uint32_t n = 0;
    OBSIDIAN_ASSERT(ir::literalU32(e, n), "verify has checked that this count is static");
    return n;
  }

  Body lower(Body in) const {
    Body out;
    for (Stmt& s : in) {
      if (auto* f = std::get_if<ForAll>(&s.node)) {
        Body inner = lower(std::move(f->body));
        switch (f->level) {
          case Level::Grid: {
            const ExpPtr first = ir::binary(
                BinOp::Add, ir::binary(BinOp::Mul, ir::blockIdx(), u32(tpb_)), ir::threadIdx());
            const ExpPtr stride = ir::binary(BinOp::Mul, ir::gridDim(), u32(tpb_));
            out.push_back(SeqFor{Level::Grid, f->var, first, f->count, stride, std::move(inner)});
            break;
          }
          case Level::Block:
            spread(out, Level::Block, staticCount(f->count), tpb_, ir::threadIdx(), f->var,
                   std::move(inner));
            break;
          case Level::Warp:
            spread(out, Level::Warp, staticCount(f->count), 32, laneId(), f->var, std::move(inner));
            break;
          case Level::Thread: OBSIDIAN_ASSERT(false, "no ForAll at Thread level");
        }
      } else if (auto* d = std::get_if<DistrPar>(&s.node)) {
        Body inner = lower(std::move(d->body));
        if (d->level == Level::Block) {
          out.push_back(SeqFor{Level::Grid, d->var, ir::blockIdx(), d->count, ir::gridDim(),
                               std::move(inner)});
        } else {
          OBSIDIAN_ASSERT(d->level == Level::Warp, "DistrPar of Warp or Block programs");
          spread(out, Level::Block, staticCount(d->count), tpb_ / 32, warpId(), d->var,
                 std::move(inner));
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
};

}  // namespace

KernelIR virtualize(KernelIR k) {
  Virtualizer(k).run();
  return k;
}

}  // namespace obsidian
