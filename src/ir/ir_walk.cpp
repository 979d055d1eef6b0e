// Generic traversals of the IR (see ir_walk.hpp).
#include "ir/ir_walk.hpp"

#include <algorithm>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

namespace obsidian::ir {

namespace {
// One rewrite: results by node, so a node reached along several paths (a DAG: the same ExpPtr
// used twice) is rebuilt once and stays one node, instead of once per path (exponential in the
// number of times sharing nests).
class Rewriter {
 public:
  explicit Rewriter(const std::function<ExpPtr(const ExpPtr&)>& leaf) : leaf_(leaf) {}

  ExpPtr operator()(const ExpPtr& e) {
    if (!e) return e;
    if (auto it = done_.find(e.get()); it != done_.end()) return it->second;
    ExpPtr r = leaf_(e);
    if (!r) r = rebuild(e);
    done_.emplace(e.get(), r);
    return r;
  }

 private:
  ExpPtr rebuild(const ExpPtr& e) {
    ExpPtr r = rebuildNode(e);
    // A value the user bound with share() stays bound when its operands are rewritten.
    return (r != e && e->share) ? share(r, e->name) : r;
  }

  ExpPtr rebuildNode(const ExpPtr& e) {
    auto& self = *this;
    switch (e->kind) {
      case ExpKind::Literal:
      case ExpKind::Var:
      case ExpKind::ThreadIdx:
      case ExpKind::BlockIdx:
      case ExpKind::GridDim: return e;
      case ExpKind::Unary: {
        ExpPtr a = self(e->args[0]);
        return a == e->args[0] ? e : unary(e->unOp, a);
      }
      case ExpKind::Binary: {
        ExpPtr a = self(e->args[0]), b = self(e->args[1]);
        return (a == e->args[0] && b == e->args[1]) ? e : binary(e->binOp, a, b);
      }
      case ExpKind::Select: {
        ExpPtr c = self(e->args[0]), a = self(e->args[1]), b = self(e->args[2]);
        return (c == e->args[0] && a == e->args[1] && b == e->args[2]) ? e : select(c, a, b);
      }
      case ExpKind::Fma: {
        ExpPtr a = self(e->args[0]), b = self(e->args[1]), c = self(e->args[2]);
        return (a == e->args[0] && b == e->args[1] && c == e->args[2]) ? e : fma(a, b, c);
      }
      case ExpKind::Cast: {
        ExpPtr a = self(e->args[0]);
        return a == e->args[0] ? e : cast(e->type, a);
      }
      case ExpKind::BitCast: {
        ExpPtr a = self(e->args[0]);
        return a == e->args[0] ? e : bitcast(e->type, a);
      }
      case ExpKind::Index: {
        ExpPtr i = self(e->args[0]);
        if (e->vecWidth > 1) {
          ExpPtr v = self(e->args[1]);
          return (i == e->args[0] && v == e->args[1])
                     ? e
                     : vectorIndex(e->type, e->array, i, v, e->vecWidth, e->vecLane, e->origin);
        }
        if (i == e->args[0]) return e;
        return e->vote != WarpVote::None ? reindex(e, i)
               : e->ownLane             ? ownLaneIndex(e->type, e->array, i, e->origin)
                                        : index(e->type, e->array, i, e->origin);
      }
    }
    return e;
  }

  const std::function<ExpPtr(const ExpPtr&)>& leaf_;
  std::unordered_map<const ExpNode*, ExpPtr> done_;
};
}  // namespace

ExpPtr rewrite(const ExpPtr& e, const std::function<ExpPtr(const ExpPtr&)>& leaf) {
  return Rewriter(leaf)(e);
}

ExpPtr substitute(const ExpPtr& e, const std::string& name, const ExpPtr& value) {
  return rewrite(e, [&](const ExpPtr& n) -> ExpPtr {
    return (n->kind == ExpKind::Var && n->name == name) ? value : nullptr;
  });
}

namespace {
// One place that knows which expressions each statement holds; every node type is listed.
template <class S, class F>
void eachExpRef(S& s, F&& f) {
  std::visit(
      [&](auto& n) {
        using T = std::remove_cvref_t<decltype(n)>;
        if constexpr (std::is_same_v<T, Assign>) {
          f(n.index);
          f(n.value);
        } else if constexpr (std::is_same_v<T, StoreVector>) {
          f(n.index);
          f(n.vector);
          for (auto& v : n.values) f(v);
        } else if constexpr (std::is_same_v<T, Declare>) {
          if (n.init) f(n.init);
        } else if constexpr (std::is_same_v<T, AssignVar>) {
          f(n.value);
        } else if constexpr (std::is_same_v<T, ForAll> || std::is_same_v<T, DistrPar>) {
          f(n.count);
        } else if constexpr (std::is_same_v<T, SeqFor>) {
          f(n.start);
          f(n.bound);
          f(n.step);
        } else if constexpr (std::is_same_v<T, SeqWhile> || std::is_same_v<T, Cond>) {
          f(n.cond);
        } else if constexpr (std::is_same_v<T, Atomic>) {
          f(n.index);
          if (n.value) f(n.value);
          if (n.compare) f(n.compare);
        } else {
          static_assert(std::is_same_v<T, Allocate> || std::is_same_v<T, Sync> ||
                            std::is_same_v<T, Fence> || std::is_same_v<T, Sleep>,
                        "eachExpRef: a statement type is not handled");
        }
      },
      s.node);
}
}  // namespace

void forEachExp(const Stmt& s, const std::function<void(const ExpPtr&)>& f) {
  eachExpRef(s, [&](const ExpPtr& e) { f(e); });
}

void mapExps(Stmt& s, const std::function<ExpPtr(const ExpPtr&)>& f) {
  eachExpRef(s, [&](ExpPtr& e) { e = f(e); });
}

void mapExpsDeep(Body& body, const std::function<ExpPtr(const ExpPtr&)>& f) {
  for (Stmt& s : body) {
    mapExps(s, f);
    for (Body* b : childBodies(s)) mapExpsDeep(*b, f);
  }
}

std::vector<const Body*> childBodies(const Stmt& s) {
  std::vector<Body*> m = childBodies(const_cast<Stmt&>(s));
  return {m.begin(), m.end()};
}

std::vector<Body*> childBodies(Stmt& s) {
  return std::visit(
      [](auto& n) -> std::vector<Body*> {
        using T = std::remove_cvref_t<decltype(n)>;
        if constexpr (std::is_same_v<T, Cond>) {
          return {&n.then, &n.otherwise};
        } else if constexpr (std::is_same_v<T, ForAll> || std::is_same_v<T, DistrPar> ||
                             std::is_same_v<T, SeqFor> || std::is_same_v<T, SeqWhile>) {
          return {&n.body};
        } else {
          // Every statement kind is listed: a new one fails to compile here until it says
          // whether it has bodies (seven passes recurse through this function).
          static_assert(std::is_same_v<T, Assign> || std::is_same_v<T, StoreVector> ||
                            std::is_same_v<T, Declare> ||
                            std::is_same_v<T, AssignVar> || std::is_same_v<T, Allocate> ||
                            std::is_same_v<T, Sync> || std::is_same_v<T, Atomic> ||
                            std::is_same_v<T, Fence> || std::is_same_v<T, Sleep>,
                        "childBodies: a statement type is not handled");
          return {};
        }
      },
      s.node);
}

bool anyNode(const ExpPtr& e, const std::function<bool(const ExpNode&)>& f) {
  // A worklist, not recursion: expressions may be kMaxExpDepth deep. Each node once: a node
  // shared by several parents (the share pass's DAGs) would otherwise be visited once per
  // path, exponentially many times. Only nodes with several owners can be reached twice (a
  // node's one parent is itself visited once), so only they are remembered: most walks are
  // over trees and allocate nothing (this runs on every statement of every pass).
  std::vector<const ExpPtr*> todo;
  std::unordered_set<const ExpNode*> seen;
  if (e) todo.push_back(&e);
  while (!todo.empty()) {
    const ExpPtr& n = *todo.back();
    todo.pop_back();
    if (n.use_count() > 1 && !seen.insert(n.get()).second) continue;
    if (f(*n)) return true;
    for (auto a = n->args.rbegin(); a != n->args.rend(); ++a) {
      if (*a) todo.push_back(&*a);
    }
  }
  return false;
}

void arraysIn(const ExpPtr& e, std::set<ArrayId>& out) {
  anyNode(e, [&](const ExpNode& n) {
    if (n.kind == ExpKind::Index) out.insert(n.array);
    return false;
  });
}

void arraysUsed(const Stmt& s, std::set<ArrayId>& out) {
  if (const auto* a = std::get_if<Assign>(&s.node)) out.insert(a->array);
  if (const auto* a = std::get_if<StoreVector>(&s.node)) out.insert(a->array);
  if (const auto* a = std::get_if<Atomic>(&s.node)) out.insert(a->array);
  forEachExp(s, [&](const ExpPtr& e) { arraysIn(e, out); });
  for (const Body* b : childBodies(s)) {
    for (const Stmt& c : *b) arraysUsed(c, out);
  }
}

void varsIn(const ExpPtr& e, std::set<std::string>& out) {
  anyNode(e, [&](const ExpNode& n) {
    if (n.kind == ExpKind::Var) out.insert(n.name);
    return false;
  });
}

bool mentionsThreadIdx(const ExpPtr& e) {
  return anyNode(e, [](const ExpNode& n) { return n.kind == ExpKind::ThreadIdx; });
}

uint32_t maxDepth(const Body& body) {
  uint32_t d = 0;
  for (const Stmt& s : body) {
    forEachExp(s, [&](const ExpPtr& e) { d = std::max(d, e->depth); });
    for (const Body* b : childBodies(s)) d = std::max(d, maxDepth(*b));
  }
  return d;
}

uint32_t maxDepth(const KernelIR& k) {
  uint32_t d = maxDepth(k.body);
  auto add = [&](const ExpPtr& e) {
    if (e) d = std::max(d, e->depth);
  };
  for (const Param& p : k.params) add(p.length);
  for (const Precondition& c : k.preconditions) add(c.holds);
  for (const OutputInfo& o : k.outputs) add(o.length);
  add(k.gridBlocks);
  return d;
}

uint32_t subtreeSize(const Stmt& s) {
  uint32_t n = 1;
  for (const Body* b : childBodies(s)) {
    for (const Stmt& c : *b) n += subtreeSize(c);
  }
  return n;
}

}  // namespace obsidian::ir
