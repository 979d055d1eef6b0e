// Pass: share subexpressions (see share.hpp).
#include "codegen/share.hpp"

#include <bit>
#include <cstring>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/identifiers.hpp"
#include "ir/ir_walk.hpp"

namespace obsidian {
namespace {

// Statements looked at after the one being shared from, to count later uses: bodies are
// short, and an unrolled one thousands of statements long must not make the pass quadratic.
constexpr size_t kWindow = 32;

bool isLeaf(const ExpNode& e) {
  switch (e.kind) {
    case ExpKind::Literal:
    case ExpKind::Var:
    case ExpKind::ThreadIdx:
    case ExpKind::BlockIdx:
    case ExpKind::GridDim: return true;
    case ExpKind::Unary:
    case ExpKind::Binary:
    case ExpKind::Select:
    case ExpKind::Cast:
    case ExpKind::BitCast:
    case ExpKind::Fma: return false;
    // A register array's own element prints as the lane's register: a leaf in the CUDA.
    case ExpKind::Index: return e.ownLane;
  }
  return true;
}

// Worth a variable even when it is one operation on leaves: a memory read, or an operation
// that costs many instructions.
bool costly(const ExpNode& e) {
  switch (e.kind) {
    case ExpKind::Index: return !e.ownLane;
    case ExpKind::Unary:
      switch (e.unOp) {
      OBSIDIAN_FLOAT_MATH_UNOPS:
        return e.unOp != UnOp::Fabs;
        case UnOp::Neg:
        case UnOp::Not:
        case UnOp::BitNot:
        case UnOp::Abs:
        OBSIDIAN_BIT_UNOPS:
          return false;
      }
      return false;
    case ExpKind::Binary: {
      if (e.binOp == BinOp::Pow) return true;
      if (e.binOp != BinOp::Div && e.binOp != BinOp::Mod) return false;
      // An integer division by a power of two is a shift or a mask.
      uint32_t d = 0;
      return isFloat(e.type) || !ir::literalU32(e.args[1], d) || !std::has_single_bit(d);
    }
    case ExpKind::Literal:
    case ExpKind::Var:
    case ExpKind::ThreadIdx:
    case ExpKind::BlockIdx:
    case ExpKind::GridDim:
    case ExpKind::Select:
    case ExpKind::Cast:
    case ExpKind::BitCast:
    case ExpKind::Fma: return false;  // one instruction
  }
  return false;
}

// The operands of e that the CUDA evaluates: a vector lane prints only its vector's index
// (args[1]; the element index args[0] is for the simulator), so nothing in the element index
// is worth a variable of its own: it would be declared and never read.
std::vector<const ExpPtr*> evaluatedOperands(const ExpNode& e) {
  if (e.kind == ExpKind::Index && e.vecWidth > 1) return {&e.args[1]};
  std::vector<const ExpPtr*> v;
  for (const ExpPtr& a : e.args) {
    if (a) v.push_back(&a);
  }
  return v;
}

// What a statement (and everything nested in it) may change.
struct Effects {
  std::set<ArrayId> written;
  std::set<std::string> assigned;  // variables given a new value (not declared ones)
  bool ordering = false;           // a barrier, fence or atomic: other threads' writes show
  bool barrier = false;            // a barrier: cheap values are computed again after it
  bool any() const { return !written.empty() || !assigned.empty() || ordering; }
};

void collectEffects(const Stmt& s, Effects& e) {
  std::visit(
      [&](const auto& n) {
        using T = std::remove_cvref_t<decltype(n)>;
        if constexpr (std::is_same_v<T, Assign> || std::is_same_v<T, StoreVector>) {
          e.written.insert(n.array);
        } else if constexpr (std::is_same_v<T, AssignVar>) {
          e.assigned.insert(n.var);
        } else if constexpr (std::is_same_v<T, Atomic>) {
          e.written.insert(n.array);
          e.ordering = true;
        } else if constexpr (std::is_same_v<T, Sync>) {
          e.ordering = true;
          e.barrier = true;
        } else if constexpr (std::is_same_v<T, Fence>) {
          e.ordering = true;
        } else if constexpr (std::is_same_v<T, Sleep>) {
          // No effect on values: what was available stays so.
        } else {
          // A declaration, a loop's own index and an allocation make new names: nothing
          // available before them mentions those.
          static_assert(std::is_same_v<T, Declare> || std::is_same_v<T, ForAll> ||
                            std::is_same_v<T, DistrPar> || std::is_same_v<T, SeqFor> ||
                            std::is_same_v<T, SeqWhile> || std::is_same_v<T, Cond> ||
                            std::is_same_v<T, Allocate>,
                        "share: a statement type is not handled");
        }
      },
      s.node);
  for (const Body* b : ir::childBodies(s)) {
    for (const Stmt& c : *b) collectEffects(c, e);
  }
}

void merge(Effects& into, const Effects& e) {
  into.written.insert(e.written.begin(), e.written.end());
  into.assigned.insert(e.assigned.begin(), e.assigned.end());
  into.ordering = into.ordering || e.ordering;
  into.barrier = into.barrier || e.barrier;
}

Effects effectsOf(const Stmt& s) {
  Effects e;
  collectEffects(s, e);
  return e;
}

// The expressions a statement evaluates once, before its own effect, whenever it runs: the
// ones a variable declared in front of it can stand for. Loop headers are left alone (a
// loop's bound and step are evaluated again at every iteration).
std::vector<ExpPtr*> evaluated(Stmt& s) {
  return std::visit(
      [](auto& n) -> std::vector<ExpPtr*> {
        using T = std::remove_cvref_t<decltype(n)>;
        if constexpr (std::is_same_v<T, Assign>) {
          return {&n.index, &n.value};
        } else if constexpr (std::is_same_v<T, StoreVector>) {
          std::vector<ExpPtr*> v{&n.index, &n.vector};
          for (ExpPtr& x : n.values) v.push_back(&x);
          return v;
        } else if constexpr (std::is_same_v<T, Declare>) {
          if (n.init) return {&n.init};
          return {};
        } else if constexpr (std::is_same_v<T, AssignVar>) {
          return {&n.value};
        } else if constexpr (std::is_same_v<T, Atomic>) {
          std::vector<ExpPtr*> v{&n.index};
          if (n.value) v.push_back(&n.value);
          if (n.compare) v.push_back(&n.compare);
          return v;
        } else if constexpr (std::is_same_v<T, Cond>) {
          return {&n.cond};
        } else {
          static_assert(std::is_same_v<T, ForAll> || std::is_same_v<T, DistrPar> ||
                            std::is_same_v<T, SeqFor> || std::is_same_v<T, SeqWhile> ||
                            std::is_same_v<T, Allocate> || std::is_same_v<T, Sync> ||
                            std::is_same_v<T, Fence> || std::is_same_v<T, Sleep>,
                        "share: a statement type is not handled");
          return {};
        }
      },
      s.node);
}

class Sharer {
 public:
  explicit Sharer(KernelIR& k) : k_(k) {
    used_.insert(k.name);
    for (const Param& p : k.params) used_.insert(p.name);
    for (const ArrayDecl& a : k.arrays) used_.insert(a.name);
    collectNames(k.body);
  }

  void run() { k_.body = body(std::move(k_.body), {}); }

 private:
  // A value (an equivalence class of structurally equal expressions).
  struct Value {
    ExpPtr rep;
    uint8_t ops = 0;             // operations in its tree, counted up to 2
    bool bindable = false;       // worth a variable when used twice
    bool heavy = false;          // reads memory or computes something costly in its tree
    bool marked = false;         // share() asked for a variable
    std::string hint;            // the name share() gave it
    std::set<ArrayId> reads;     // arrays its tree reads
    std::set<std::string> vars;  // variables its tree mentions
  };
  using Avail = std::unordered_map<uint32_t, ExpPtr>;  // value -> the variable holding it
  using Counts = std::unordered_map<uint32_t, uint32_t>;
  using Set = std::unordered_set<uint32_t>;

  void collectNames(const Body& b) {
    for (const Stmt& s : b) {
      ir::forEachExp(s, [&](const ExpPtr& e) { ir::varsIn(e, used_); });
      std::visit(
          [&](const auto& n) {
            using T = std::remove_cvref_t<decltype(n)>;
            if constexpr (std::is_same_v<T, Declare>) used_.insert(n.var);
            if constexpr (std::is_same_v<T, Atomic>) used_.insert(n.result);
            if constexpr (std::is_same_v<T, SeqFor> || std::is_same_v<T, ForAll> ||
                          std::is_same_v<T, DistrPar>) {
              used_.insert(n.var);
            }
          },
          s.node);
      for (const Body* c : ir::childBodies(s)) collectNames(*c);
    }
  }

  std::string freshName(const std::string& hint) {
    for (uint32_t i = 0;; ++i) {
      const std::string name = hint.empty() ? "t" + std::to_string(next_++)
                               : i == 0     ? hint
                                            : hint + "_" + std::to_string(i);
      if (!used_.count(name) && !ir::reservedIdentifierReason(name)) {
        used_.insert(name);
        return name;
      }
    }
  }

  // The value number of e: equal numbers for structurally equal trees.
  uint32_t number(const ExpPtr& e) {
    if (auto it = numbers_.find(e.get()); it != numbers_.end()) return it->second.second;
    std::string key;
    auto put = [&](const auto& x) { key.append(reinterpret_cast<const char*>(&x), sizeof x); };
    put(e->kind);
    put(e->type);
    uint8_t ops = 0;
    const bool leaf = isLeaf(*e);
    switch (e->kind) {
      case ExpKind::Literal:
        // Bits, not values: 0.0 and -0.0 are different literals.
        put(isFloat(e->type) ? std::bit_cast<uint64_t>(e->real) : e->bits);
        break;
      case ExpKind::Var:
        put(e->origin);
        key += e->name;
        break;
      case ExpKind::ThreadIdx:
      case ExpKind::BlockIdx:
      case ExpKind::GridDim:
      case ExpKind::Select:
      case ExpKind::Cast:
      case ExpKind::BitCast:
      case ExpKind::Fma: break;
      case ExpKind::Unary: put(e->unOp); break;
      case ExpKind::Binary: put(e->binOp); break;
      case ExpKind::Index:
        put(e->array);
        put(e->origin);
        put(e->vecWidth);
        put(e->vecLane);
        put(e->ownLane);
        put(e->vote);
        break;
    }
    std::vector<uint32_t> operands;
    for (const ExpPtr& a : e->args) {
      if (!a) continue;
      const uint32_t n = number(a);
      put(n);
      operands.push_back(n);
      ops = static_cast<uint8_t>(std::min(2, ops + values_[n].ops));
    }
    if (!leaf) ops = static_cast<uint8_t>(std::min(2, ops + 1));
    auto [it, fresh] = byKey_.emplace(std::move(key), static_cast<uint32_t>(values_.size()));
    if (fresh) {
      Value v;
      v.rep = e;
      v.ops = ops;
      v.bindable = !leaf && (ops >= 2 || costly(*e));
      v.heavy = costly(*e);
      // Bottom-up from the operands' (small) sets: a walk per value would be quadratic in
      // a deep expression.
      if (e->kind == ExpKind::Index) v.reads.insert(e->array);
      if (e->kind == ExpKind::Var) v.vars.insert(e->name);
      for (uint32_t n : operands) {
        v.heavy = v.heavy || values_[n].heavy;
        v.reads.insert(values_[n].reads.begin(), values_[n].reads.end());
        v.vars.insert(values_[n].vars.begin(), values_[n].vars.end());
      }
      values_.push_back(std::move(v));
    }
    Value& v = values_[it->second];
    if (e->share && !leaf) {
      v.marked = true;
      if (v.hint.empty()) v.hint = e->name;
    }
    numbers_.emplace(e.get(), std::pair{e, it->second});
    return it->second;
  }

  // The values e evaluates whenever it is evaluated (both sides of a select count only when
  // both evaluate them; the right of && and || never does).
  void must(const ExpPtr& e, Set& out) {
    if (isLeaf(*e)) return;
    if (!out.insert(number(e)).second) return;
    if (e->kind == ExpKind::Binary && (e->binOp == BinOp::And || e->binOp == BinOp::Or)) {
      must(e->args[0], out);
    } else if (e->kind == ExpKind::Select) {
      must(e->args[0], out);
      Set a, b;
      must(e->args[1], a);
      must(e->args[2], b);
      for (uint32_t x : a) {
        if (b.count(x)) out.insert(x);
      }
    } else {
      for (const ExpPtr* a : evaluatedOperands(*e)) must(*a, out);
    }
  }

  // Uses of each value in e that would read a variable declared before `before` ran: a value
  // `before` may have changed is not counted (its operands still are), and one used inside a
  // counted value is counted once, as it would be computed once, in the variable's definition.
  void count(const ExpPtr& e, Counts& c, const Avail& avail, const Effects& before) {
    if (isLeaf(*e)) return;
    const uint32_t n = number(e);
    if (avail.count(n)) return;
    if (!killedBy(n, before) && c[n]++ > 0) return;
    for (const ExpPtr* a : evaluatedOperands(*e)) count(*a, c, avail, before);
  }
  void countDeep(Stmt& s, Counts& c, const Avail& avail, const Effects& before) {
    for (ExpPtr* e : evaluated(s)) count(*e, c, avail, before);
    for (Body* b : ir::childBodies(s)) {
      for (Stmt& t : *b) countDeep(t, c, avail, before);
    }
  }
  // Uses in the first kWindow statements of a branch, which runs after `since`: each
  // statement's own expressions see the effects of those before it in the branch.
  void countBranch(Body& b, Counts& c, const Avail& avail, Effects since) {
    for (size_t j = 0; j < b.size() && j < kWindow; ++j) {
      Stmt& t = b[j];
      const Effects e = effectsOf(t);
      if (ir::childBodies(t).empty() || !e.any()) {
        countDeep(t, c, avail, since);
      } else {
        for (ExpPtr* x : evaluated(t)) count(*x, c, avail, since);
      }
      merge(since, e);
    }
  }

  // e with every available value read from its variable.
  ExpPtr replace(const ExpPtr& e, const Avail& avail) {
    if (avail.empty()) return e;
    return ir::rewrite(e, [&](const ExpPtr& n) -> ExpPtr {
      if (isLeaf(*n)) return n;
      auto it = avail.find(number(n));
      return it == avail.end() ? nullptr : it->second;
    });
  }

  // Arrays that another thread may write while this one runs.
  bool othersWrite(ArrayId a) const {
    const ArrayDecl& d = k_.arrays.at(a);
    switch (d.space) {
      case MemorySpace::Global: return d.writable;
      case MemorySpace::Shared:
      case MemorySpace::GridState: return true;
      case MemorySpace::Local:
      case MemorySpace::Register: return false;
    }
    return true;
  }

  bool killedBy(uint32_t n, const Effects& e) {
    if (!e.any()) return false;
    const Value& v = values_[n];
    // Held across a barrier, a value occupies a register through it, where pressure is highest;
    // index arithmetic is cheaper computed again.
    if (e.barrier && !v.heavy) return true;
    for (ArrayId a : v.reads) {
      if (e.written.count(a) || (e.ordering && othersWrite(a))) return true;
    }
    for (const std::string& x : v.vars) {
      if (e.assigned.count(x)) return true;
    }
    return false;
  }

  void kill(Avail& avail, const Effects& e) {
    if (!e.any()) return;
    std::erase_if(avail, [&](const auto& entry) { return killedBy(entry.first, e); });
  }

  // Declares, in front of in[i], the values it should share; returns them in `out`.
  void bindBefore(Body& in, const std::vector<Effects>& effects, size_t i, Avail& avail,
                  Body& out) {
    std::vector<ExpPtr*> exps = evaluated(in[i]);
    if (exps.empty()) return;
    Set mustSet;
    Counts uses;
    Effects since;  // of the statements from in[i] up to the one being counted
    for (ExpPtr* e : exps) {
      must(*e, mustSet);
      count(*e, uses, avail, since);
    }
    // A branch runs right after its condition, so what the condition computes is there for
    // the branch too (a sample tested for being counted, then binned inside: one load). Only
    // heavy values count there: index arithmetic the CUDA compiler shares by itself, and
    // binding it would only rewrite every guarded tail.
    if (auto* c = std::get_if<Cond>(&in[i].node)) {
      Counts withBranch = uses;
      countBranch(c->then, withBranch, avail, since);
      countBranch(c->otherwise, withBranch, avail, since);
      for (const auto& [n, count] : withBranch) {
        if (values_[n].heavy) uses[n] = count;
      }
    }
    // Later uses, while nothing in between has changed the value.
    for (size_t j = i + 1; j < in.size() && j <= i + kWindow; ++j) {
      merge(since, effects[j - 1]);
      Stmt& t = in[j];
      if (ir::childBodies(t).empty() || !effects[j].any()) {
        countDeep(t, uses, avail, since);
      } else {
        // A loop or branch that changes something: its own condition is evaluated first, but
        // what its body reads may come after the change.
        for (ExpPtr* x : evaluated(t)) count(*x, uses, avail, since);
      }
    }
    // Children before their parents, so a parent's definition reads its children's variables.
    Set seen;
    std::vector<std::pair<uint32_t, ExpPtr>> order;
    auto visit = [&](auto& self, const ExpPtr& e) -> void {
      if (isLeaf(*e)) return;
      const uint32_t n = number(e);
      if (avail.count(n) || !seen.insert(n).second) return;
      for (const ExpPtr* a : evaluatedOperands(*e)) self(self, *a);
      const Value& v = values_[n];
      if (mustSet.count(n) && (v.marked || (v.bindable && uses[n] >= 2))) order.push_back({n, e});
    };
    for (ExpPtr* e : exps) visit(visit, *e);
    for (const auto& [n, e] : order) {
      const std::string name = freshName(values_[n].hint);
      out.push_back(Declare{name, e->type, replace(e, avail), true});
      avail.emplace(n, ir::var(e->type, name));
    }
  }

  Body body(Body in, Avail avail) {
    Body out;
    std::vector<Effects> effects;
    for (const Stmt& s : in) effects.push_back(effectsOf(s));
    for (size_t i = 0; i < in.size(); ++i) {
      bindBefore(in, effects, i, avail, out);
      Stmt& s = in[i];
      for (ExpPtr* e : evaluated(s)) *e = replace(*e, avail);
      const Effects& e = effects[i];
      if (auto* c = std::get_if<Cond>(&s.node)) {
        c->then = body(std::move(c->then), avail);
        c->otherwise = body(std::move(c->otherwise), avail);
      } else {
        // A loop's body runs again after its own effects: it keeps only what they leave.
        Avail inside = avail;
        kill(inside, e);
        for (Body* b : ir::childBodies(s)) *b = body(std::move(*b), inside);
      }
      kill(avail, e);
      out.push_back(std::move(s));
    }
    return out;
  }

  KernelIR& k_;
  std::set<std::string> used_;
  uint32_t next_ = 0;
  // Holding the node keeps its address from being reused by a node the pass makes later.
  std::unordered_map<const ExpNode*, std::pair<ExpPtr, uint32_t>> numbers_;
  std::unordered_map<std::string, uint32_t> byKey_;
  std::vector<Value> values_;
};

}  // namespace

void shareSubexpressions(KernelIR& k) { Sharer(k).run(); }

}  // namespace obsidian
