// Pass: liveness analysis (see liveness.hpp).
#include "memmap/liveness.hpp"

#include "ir/ir_walk.hpp"

namespace obsidian {
namespace {

// One statement list being walked, with the way back to its enclosing list.
struct Frame {
  const Body* body;
  Level level;       // level of the program this list belongs to
  bool loop;         // iterations may reuse memory: SeqFor, SeqWhile, DistrPar bodies
  bool warpProgram;  // the body of a DistrPar(Warp)
  LoopId program;    // warpProgram: that DistrPar's LoopId
  const Frame* parent;
  size_t indexInParent;       // the statement owning this list in parent->body
  std::vector<uint32_t> pos;  // pre-order position of each statement of body
  std::vector<uint32_t> end;  // last position in each statement's subtree
};

class Analysis {
 public:
  Analysis(const KernelIR& k, const SpreadPlans& plans) : k_(k), plans_(plans) {}

  Liveness run() {
    Frame top{&k_.body, Level::Grid, false, false, 0, nullptr, 0, {}, {}};
    walk(top);
    // A loop body whose only arrays dying without a barrier are warp slices needs just a
    // __syncwarp, if no block-wide array of the body could have been given their bytes.
    for (const Body* b : trailingForBlock_) result_.needsTrailingSync[b] = Level::Block;
    // Without a block array or a __syncthreads in the body, no warp slice is freed inside it,
    // so every warp only ever reuses its own slices.
    for (const Body* b : trailingForWarp_) {
      if (!trailingForBlock_.count(b)) {
        result_.needsTrailingSync[b] = warpPrivate(*b) ? Level::Warp : Level::Block;
      }
    }
    for (const Body* b : trailingCovered_) {
      if (!result_.needsTrailingSync.count(b) && !warpPrivate(*b)) {
        result_.needsTrailingSync[b] = Level::Block;
      }
    }
    result_.statements = next_;
    return result_;
  }

 private:
  static bool uses(const Stmt& s, ArrayId a) {
    std::set<ArrayId> used;
    ir::arraysUsed(s, used);
    return used.count(a) > 0;
  }

  static bool isSync(const Stmt& s, Level level) {
    const auto* sync = std::get_if<Sync>(&s.node);
    return sync && sync->level == level;
  }

  // From statement `index` of frame f (exclusive), the first barrier of `level` on the way out.
  // Returns its position, or marks the nearest loop body for a trailing barrier.
  // forWarpArray: the array is a warp slice; warpCovered: its warp program already ends each
  // virtual warp with a __syncwarp, so the same warp may reuse the slice without another.
  uint32_t freePoint(const Frame& f, size_t index, Level level, bool forWarpArray,
                     bool warpCovered = false) {
    for (size_t j = index + 1; j < f.body->size(); ++j) {
      if (isSync((*f.body)[j], level)) return f.pos[j];
    }
    const uint32_t frameEnd = f.end.empty() ? 0 : f.end.back();
    if (f.loop && f.level == level) {
      (!forWarpArray ? trailingForBlock_
       : warpCovered ? trailingCovered_
                     : trailingForWarp_)
          .insert(f.body);
      return frameEnd;
    }
    if (f.parent && f.parent->level == level) {
      return freePoint(*f.parent, f.indexInParent, level, forWarpArray, warpCovered);
    }
    // Leaving the program of this level (e.g. a Block program's list ends): nothing later in
    // this program can reuse the memory.
    return frameEnd;
  }

  void walk(Frame& f) {
    const Body& b = *f.body;
    f.pos.resize(b.size());
    f.end.resize(b.size());
    // Positions first, so that free points can look ahead.
    uint32_t p = next_;
    for (size_t i = 0; i < b.size(); ++i) {
      f.pos[i] = p;
      p += ir::subtreeSize(b[i]);
      f.end[i] = p - 1;
    }
    for (size_t i = 0; i < b.size(); ++i) {
      next_ = f.pos[i] + 1;
      const Stmt& s = b[i];
      if (const auto* alloc = std::get_if<Allocate>(&s.node)) allocation(f, i, alloc->array);
      const LoopId id = isParallelLoop(s) ? nextLoop_++ : 0;  // before the loops of its body
      Level inner = f.level;
      bool loop = false, warpProgram = false;
      if (const auto* d = std::get_if<DistrPar>(&s.node)) {
        inner = d->level;
        loop = true;
        warpProgram = d->level == Level::Warp;
      } else if (std::holds_alternative<ForAll>(s.node)) {
        inner = Level::Thread;
      } else if (std::holds_alternative<SeqFor>(s.node) ||
                 std::holds_alternative<SeqWhile>(s.node)) {
        loop = true;
      }
      for (const Body* child : ir::childBodies(s)) {
        Frame cf{child, inner, loop, warpProgram, id, &f, i, {}, {}};
        walk(cf);
      }
    }
    next_ = p;
  }

  void allocation(const Frame& f, size_t k, ArrayId a) {
    const ArrayDecl& d = k_.arrays.at(a);
    if (d.space != MemorySpace::Shared) return;
    const Body& b = *f.body;
    size_t last = k;
    for (size_t j = k + 1; j < b.size(); ++j) {
      if (uses(b[j], a)) last = j;
    }
    ArrayLiveness l;
    l.array = a;
    l.allocPos = f.pos[k];
    l.lastUsePos = f.end[last];
    if (d.level == Level::Warp) {
      const Frame* w = &f;
      while (w && !w->warpProgram) w = w->parent;
      OBSIDIAN_ASSERT(w && w->parent, "warp arrays are allocated inside warp programs");
      // Where a real warp runs several virtual warps, the next one reuses the slice: a
      // __syncwarp ends each. (Reuse by other arrays waits for a __syncthreads, below.)
      OBSIDIAN_ASSERT(w->program < plans_.size() && plans_[w->program].shape != Spread::Unplanned,
                      "planVirtualization runs before liveness");
      const bool loops = plans_[w->program].shape == Spread::Loop;
      if (loops) result_.needsTrailingSync[w->body] = Level::Warp;
      // Inside the warp program, a warp-level loop whose iterations reuse the slice needs a
      // __syncwarp at its end unless one follows the last use.
      size_t after = last;
      for (const Frame* g = &f; g != w; after = g->indexInParent, g = g->parent) {
        bool synced = false;
        for (size_t j = after + 1; j < g->body->size(); ++j) {
          synced = synced || isSync((*g->body)[j], Level::Warp);
        }
        if (synced) break;
        if (g->loop) {
          result_.needsTrailingSync[g->body] = Level::Warp;
          break;
        }
      }
      l.freePos = freePoint(*w->parent, w->indexInParent, Level::Block, true, loops);
    } else {
      l.freePos = freePoint(f, last, Level::Block, false);
    }
    result_.arrays.push_back(l);
  }

  // No block-wide shared array and no __syncthreads anywhere in b.
  bool warpPrivate(const Body& b) const {
    for (const Stmt& s : b) {
      if (const auto* a = std::get_if<Allocate>(&s.node)) {
        const ArrayDecl& d = k_.arrays.at(a->array);
        if (d.space == MemorySpace::Shared && d.level == Level::Block) return false;
      }
      if (isSync(s, Level::Block)) return false;
      for (const Body* child : ir::childBodies(s)) {
        if (!warpPrivate(*child)) return false;
      }
    }
    return true;
  }

  const KernelIR& k_;
  const SpreadPlans& plans_;
  Liveness result_;
  std::set<const Body*> trailingForBlock_, trailingForWarp_, trailingCovered_;
  uint32_t next_ = 0;
  LoopId nextLoop_ = 0;  // the LoopId of the next parallel loop walk() meets
};

}  // namespace

Liveness analyzeLiveness(const KernelIR& k, const SpreadPlans& plans) {
  return Analysis(k, plans).run();
}

}  // namespace obsidian
