// Pass: verify (see verify.hpp).
#include "codegen/verify.hpp"

#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "codegen/shuffles.hpp"
#include "ir/ir_walk.hpp"
#include "ir/print.hpp"
#include "obsidian/program.hpp"

namespace obsidian {
namespace {

class Verifier {
 public:
  explicit Verifier(const KernelIR& k) : k_(k) {
    for (const Param& p : k.params) {
      if (p.kind != ParamKind::Array) scope_.push_back({p.name, false});
    }
    findVaryingVars();
  }

  void run() { body(k_.body, Level::Grid, false); }

 private:
  struct Binding {
    std::string name;
    bool assignable;  // made by Declare
  };

  // Variables whose value may differ between the threads of a block: loop indices of parallel
  // loops, variables a Thread program assigns, and anything computed from them (to a fixpoint,
  // since an assignment may come after a use inside a loop).
  void findVaryingVars() {
    size_t before;
    do {
      before = varying_.size();
      collectVarying(k_.body, false);
    } while (varying_.size() != before);
  }
  void collectVarying(const Body& b, bool inThread) {
    for (const Stmt& s : b) {
      if (const auto* f = std::get_if<ForAll>(&s.node)) {
        varying_.insert(f->var);
        collectVarying(f->body, true);
        continue;
      }
      if (const auto* d = std::get_if<Declare>(&s.node)) {
        if (inThread || (d->init && threadVarying(d->init))) varying_.insert(d->var);
      } else if (const auto* a = std::get_if<AssignVar>(&s.node)) {
        if (inThread || threadVarying(a->value)) varying_.insert(a->var);
      } else if (const auto* a = std::get_if<Atomic>(&s.node)) {
        varying_.insert(a->result);
      } else if (const auto* f = std::get_if<SeqFor>(&s.node)) {
        if (inThread || threadVarying(f->start) || threadVarying(f->bound) ||
            threadVarying(f->step)) {
          varying_.insert(f->var);
        }
      }
      for (const Body* child : ir::childBodies(s)) collectVarying(*child, inThread);
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("verify(kernel " + k_.name + "): " + what);
  }
  std::string show(const ExpPtr& e) const { return ir::printExp(e, k_.arrays); }

  const Binding* lookup(const std::string& name) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
      if (it->name == name) return &*it;
    }
    return nullptr;
  }

  void checkExp(const ExpPtr& e) const {
    if (!e) return;
    std::set<std::string> vars;
    ir::varsIn(e, vars);
    for (const std::string& v : vars) {
      if (!lookup(v)) {
        fail("variable " + v + " is used outside the program that binds it (in " + show(e) +
             "); a value from a Thread program cannot escape into its enclosing program");
      }
    }
    std::set<ArrayId> arrays;
    ir::arraysIn(e, arrays);
    for (ArrayId a : arrays) checkArray(a);
  }

  void checkArray(ArrayId a) const {
    OBSIDIAN_ASSERT(a < k_.arrays.size(), "arrays are in the table");
    const ArrayDecl& d = k_.arrays[a];
    if (d.space == MemorySpace::Global || d.space == MemorySpace::GridState) return;
    if (!allocated_.count(a)) {
      fail("array " + d.name + " is used outside the program that allocated it");
    }
    // A thread array (threadArray) lives in a thread's registers: every parallel loop between
    // its program and the access must give each instance a thread of its own.
    if (const auto t = threadArrays_.find(a); t != threadArrays_.end()) {
      for (size_t i = t->second; i < shared_.size(); ++i) {
        if (shared_[i].empty()) continue;
        fail("thread array " + d.name + " (" + std::to_string(d.length) +
             " per thread) is used in " + shared_[i] +
             ": each instance needs a thread of its own, or they would share its registers");
      }
    }
  }

  // Why a parallel loop at `level` with `count` instances gives some threads several of them
  // (virtualize makes it a loop), or "" when each instance has a thread of its own.
  std::string sharesThreads(Level level, bool lanes, uint32_t count) const {
    const uint32_t threads = k_.threadsPerBlock;
    if (lanes && count > 32) {
      return "a parallel loop over " + std::to_string(count) + " lanes of a warp of 32";
    }
    if (!lanes && level == Level::Block && count > threads) {
      return "a parallel loop over " + std::to_string(count) + " threads of a block of " +
             std::to_string(threads);
    }
    if (!lanes && level == Level::Warp && count > threads / 32) {
      return std::to_string(count) + " warp programs in a block of " +
             std::to_string(threads / 32) + " warps";
    }
    return "";
  }

  // Does e vary between the threads that must reach the same barrier? (Reads of shared
  // memory at a uniform index are uniform.)
  bool threadVarying(const ExpPtr& e) const {
    if (ir::mentionsThreadIdx(e)) return true;
    std::set<std::string> vars;
    ir::varsIn(e, vars);
    for (const std::string& v : vars) {
      if (varying_.count(v)) return true;
    }
    return false;
  }

  static uint32_t staticCount(const ExpPtr& count) {
    uint32_t n = 0;
    return ir::literalU32(count, n) ? n : UINT32_MAX;
  }

  void body(const Body& b, Level level, bool underVaryingBranch) {
    const size_t scopeMark = scope_.size();
    std::vector<ArrayId> allocatedHere;
    for (const Stmt& s : b) stmt(s, level, underVaryingBranch, allocatedHere);
    scope_.resize(scopeMark);
    for (ArrayId a : allocatedHere) allocated_.erase(a);
  }

  // Register arrays (forceReg): lane l writes element l, and every shuffle (a read of another
  // lane's element, a declaration of its own after materializeShuffles) is reached by the whole
  // warp.
  void checkRegisters(const Stmt& s, Level level, bool varying) const {
    const std::string lane = laneLoops_.empty() ? "" : laneLoops_.back().first;
    const bool wholeWarp =
        laneLoops_.empty() ? level == Level::Warp : laneLoops_.back().second == 32;
    auto where = [&] {
      return laneLoops_.empty() || laneLoops_.back().second == 32
                 ? std::string(" under a lane-dependent branch or loop")
                 : " in a parallel loop over " + std::to_string(laneLoops_.back().second) +
                       " of a warp's 32 lanes";
    };
    if (const auto* a = std::get_if<Assign>(&s.node);
        a && k_.arrays[a->array].space == MemorySpace::Register) {
      const std::string& name = k_.arrays[a->array].name;
      if (lane.empty() || a->index->kind != ExpKind::Var || a->index->name != lane) {
        fail("forceReg: lane l must write element l of a register array; got " + name + "[" +
             show(a->index) + "] = " + show(a->value) + " (write other patterns with force)");
      }
      if (varying || !wholeWarp) {
        fail("forceReg: every lane must write its element of " + name + "; the write is" + where());
      }
    }
    const auto* d = std::get_if<Declare>(&s.node);
    ir::forEachExp(s, [&](const ExpPtr& top) {
      std::vector<ExpPtr> shuffles;
      std::unordered_set<const ExpNode*> seen;  // (each shared node once: a DAG of depth d has
                                                // up to 2^d paths)
      std::function<void(const ExpPtr&)> find = [&](const ExpPtr& e) {
        if (!e || !seen.insert(e.get()).second) return;
        if (isShuffle(k_, e, lane)) shuffles.push_back(e);
        for (const ExpPtr& a : e->args) find(a);
      };
      find(top);
      for (const ExpPtr& e : shuffles) {
        OBSIDIAN_ASSERT(d && d->init == e, "materializeShuffles made every shuffle a declaration");
        if ((varying || !wholeWarp) && e->vote != WarpVote::None) {
          fail(std::string("warp vote `") + show(e) + "`" + where() +
               ": every lane of the warp must reach each " + warpVoteName(e->vote));
        }
        if (varying || !wholeWarp) {
          fail("shuffle `" + show(e) + "` (another lane's element of a register array)" + where() +
               ": every lane of the warp must reach each __shfl_sync");
        }
      }
    });
  }

  void stmt(const Stmt& s, Level level, bool varying, std::vector<ArrayId>& allocatedHere) {
    checkRegisters(s, level, varying);
    std::visit(
        [&](const auto& n) {
          using T = std::remove_cvref_t<decltype(n)>;
          if constexpr (std::is_same_v<T, Assign>) {
            checkArray(n.array);
            checkExp(n.index);
            checkExp(n.value);
          } else if constexpr (std::is_same_v<T, StoreVector>) {
            OBSIDIAN_ASSERT(level == Level::Thread, "stores are Thread-level statements");
            const ArrayDecl& a = k_.arrays.at(n.array);
            OBSIDIAN_ASSERT(a.space == MemorySpace::Global &&
                                hasVectorLoad(a.type, static_cast<uint32_t>(n.values.size())) &&
                                a.alignment >= n.values.size() * sizeOf(a.type),
                            "unvectors<W> stores vectors of a global array whose alignment the "
                            "launch checks");
            checkArray(n.array);
            checkExp(n.index);
            checkExp(n.vector);
            for (const ExpPtr& v : n.values) checkExp(v);
          } else if constexpr (std::is_same_v<T, Declare>) {
            checkExp(n.init);
            scope_.push_back({n.var, true});
          } else if constexpr (std::is_same_v<T, AssignVar>) {
            checkExp(n.value);
            const Binding* b = lookup(n.var);
            if (!b)
              fail("assignment to variable " + n.var + " outside the program that declares it");
            if (!b->assignable) {
              fail("assign: " + n.var +
                   " is a loop index or kernel parameter; only variables "
                   "made by declare can be assigned");
            }
          } else if constexpr (std::is_same_v<T, ForAll>) {
            OBSIDIAN_ASSERT(n.level == level && level != Level::Thread,
                            "ForAll of level L only in a level-L program");
            checkExp(n.count);
            if (level != Level::Grid && staticCount(n.count) == UINT32_MAX) {
              fail("a parallel loop at " + std::string(levelName(level)) +
                   " level needs a static count (threads of a block are fixed when the "
                   "kernel is generated); got " +
                   show(n.count));
            }
            scope_.push_back({n.var, false});
            if (level == Level::Warp) laneLoops_.emplace_back(n.var, staticCount(n.count));
            shared_.push_back(level == Level::Grid ? std::string()
                                                   : sharesThreads(level, level == Level::Warp,
                                                                   staticCount(n.count)));
            body(n.body, Level::Thread, varying);
            shared_.pop_back();
            if (level == Level::Warp) laneLoops_.pop_back();
            scope_.pop_back();
          } else if constexpr (std::is_same_v<T, DistrPar>) {
            OBSIDIAN_ASSERT(
                (n.level == Level::Block && level == Level::Grid) ||
                    (n.level == Level::Warp && level == Level::Block),
                "DistrPar spreads Block programs over a Grid or Warp programs over a Block");
            checkExp(n.count);
            if (n.level == Level::Warp) {
              if (staticCount(n.count) == UINT32_MAX) {
                fail("warp-level programs need a static number of warps; got " + show(n.count));
              }
              if (k_.threadsPerBlock % 32 != 0) {
                fail("warp-level programs need threadsPerBlock to be a multiple of 32; got " +
                     std::to_string(k_.threadsPerBlock));
              }
            }
            scope_.push_back({n.var, false});
            shared_.push_back(n.level == Level::Warp
                                  ? sharesThreads(Level::Warp, false, staticCount(n.count))
                                  : std::string());
            body(n.body, n.level, varying);
            shared_.pop_back();
            scope_.pop_back();
          } else if constexpr (std::is_same_v<T, SeqFor>) {
            OBSIDIAN_ASSERT(n.level == level, "SeqFor stays on its level");
            checkExp(n.start);
            checkExp(n.bound);
            checkExp(n.step);
            const bool v =
                threadVarying(n.start) || threadVarying(n.bound) || threadVarying(n.step);
            scope_.push_back({n.var, false});
            body(n.body, level, varying || v);
            scope_.pop_back();
          } else if constexpr (std::is_same_v<T, SeqWhile>) {
            OBSIDIAN_ASSERT(n.level == level, "SeqWhile stays on its level");
            checkExp(n.cond);
            body(n.body, level, varying || threadVarying(n.cond));
          } else if constexpr (std::is_same_v<T, Cond>) {
            OBSIDIAN_ASSERT(n.level == level, "Cond stays on its level");
            checkExp(n.cond);
            const bool v = varying || threadVarying(n.cond);
            body(n.then, level, v);
            body(n.otherwise, level, v);
          } else if constexpr (std::is_same_v<T, Allocate>) {
            OBSIDIAN_ASSERT(n.array < k_.arrays.size(), "allocated arrays are in the table");
            const ArrayDecl& d = k_.arrays[n.array];
            OBSIDIAN_ASSERT(d.space != MemorySpace::Global && d.space != MemorySpace::GridState,
                            "global arrays are parameters or module state, never allocated");
            OBSIDIAN_ASSERT(d.length > 0, "allocations have a static, non-zero length");
            allocated_.insert(n.array);
            allocatedHere.push_back(n.array);
            if (d.space == MemorySpace::Local && d.level != Level::Thread) {
              threadArrays_[n.array] = shared_.size();
            }
          } else if constexpr (std::is_same_v<T, Sync>) {
            OBSIDIAN_ASSERT(n.level == level && (level == Level::Block || level == Level::Warp),
                            "barriers belong to Block and Warp programs");
            if (varying) {
              fail(std::string(n.level == Level::Block ? "__syncthreads()" : "__syncwarp()") +
                   " under a thread-dependent branch or loop: every thread of the " +
                   (n.level == Level::Block ? "block" : "warp") + " must reach each barrier");
            }
          } else if constexpr (std::is_same_v<T, Fence>) {
            OBSIDIAN_ASSERT(level == Level::Thread, "fences are Thread-level statements");
          } else if constexpr (std::is_same_v<T, Sleep>) {
            OBSIDIAN_ASSERT(level == Level::Thread, "sleeps are Thread-level statements");
          } else if constexpr (std::is_same_v<T, Atomic>) {
            OBSIDIAN_ASSERT(level == Level::Thread, "atomics are Thread-level statements");
            checkArray(n.array);
            checkExp(n.index);
            checkExp(n.value);
            checkExp(n.compare);
            scope_.push_back({n.result, false});
          } else {
            static_assert(alwaysFalse<T>, "verify: a statement type is not handled");
          }
        },
        s.node);
  }

  const KernelIR& k_;
  std::vector<Binding> scope_;
  std::set<ArrayId> allocated_;
  std::set<std::string> varying_;
  std::vector<std::pair<std::string, uint32_t>> laneLoops_;  // warp loops: index, lanes
  // The enclosing parallel loops: for each, why it gives threads several instances ("": it
  // does not); and the thread arrays allocated so far, with the loops around their allocation.
  std::vector<std::string> shared_;
  std::map<ArrayId, size_t> threadArrays_;
};

}  // namespace

void verifyOwnership(const KernelIR& k) {
  auto check = [&](const ExpPtr& e) {
    const ExpNode* foreign = nullptr;
    ir::anyNode(e, [&](const ExpNode& n) {
      const bool leaf = n.kind == ExpKind::Var || n.kind == ExpKind::Index;
      if (leaf && n.origin != 0 && n.origin != k.capture) foreign = &n;
      return foreign != nullptr;
    });
    if (!foreign) return;
    throw detail::foreignValue(k.name,
                               foreign->kind == ExpKind::Var
                                   ? "variable " + foreign->name + " belongs to"
                                   : "an array it reads belongs to",
                               foreign->origin);
  };
  std::function<void(const Body&)> body = [&](const Body& b) {
    for (const Stmt& s : b) {
      ir::forEachExp(s, check);
      for (const Body* child : ir::childBodies(s)) body(*child);
    }
  };
  body(k.body);
  for (const Param& p : k.params) check(p.length);
  for (const Precondition& c : k.preconditions) check(c.holds);
}

void verify(const KernelIR& k) {
  for (const Precondition& p : k.preconditions) {
    std::set<std::string> vars;
    ir::varsIn(p.holds, vars);
    for (const std::string& v : vars) {
      bool isParam = false;
      for (const Param& q : k.params)
        isParam = isParam || (q.kind != ParamKind::Array && q.name == v);
      OBSIDIAN_ASSERT(isParam, "preconditions use only scalar parameters");
    }
  }
  Verifier(k).run();
}

}  // namespace obsidian
