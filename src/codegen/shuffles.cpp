// Pass: materialize shuffles (see shuffles.hpp).
#include "codegen/shuffles.hpp"

#include <set>

#include "ir/ir_walk.hpp"
#include "obsidian/program.hpp"

namespace obsidian {

bool isShuffle(const KernelIR& k, const ExpPtr& e, const std::string& laneVar) {
  if (e->kind != ExpKind::Index || k.arrays[e->array].space != MemorySpace::Register) return false;
  if (e->vote != WarpVote::None) return true;  // every lane's element: a collective of its own
  const ExpPtr& ix = e->args[0];
  return laneVar.empty() || ix->kind != ExpKind::Var || ix->name != laneVar;
}

namespace {

class Materializer {
 public:
  explicit Materializer(KernelIR& k) : k_(k) {
    for (const Param& p : k.params) taken_.insert(p.name);  // user names may look like sh0
  }

  void run() { k_.body = body(std::move(k_.body)); }

 private:
  // Inside a parallel loop over a warp's lanes: its index and the variables bound inside it
  // (a shuffle whose index mentions none of them reads the same lane from every lane).
  struct LaneLoop {
    std::string var;
    std::set<std::string> bound;
    Body* hoisted = nullptr;  // declarations to put in front of the loop
  };

  std::string fresh() {
    std::string name = "sh" + std::to_string(counter_++);
    while (taken_.count(name)) name = "sh" + std::to_string(counter_++);
    return name;
  }

  bool laneDependent(const ExpPtr& ix) const {
    if (!loop_) return false;
    std::set<std::string> vars;
    ir::varsIn(ix, vars);
    for (const std::string& v : vars) {
      if (loop_->bound.count(v)) return true;
    }
    return false;
  }

  // e with its shuffles replaced by variables declared in `before` (or hoisted).
  ExpPtr take(const ExpPtr& e, Body& before) {
    return ir::rewrite(e, [&](const ExpPtr& n) -> ExpPtr {
      if (!isShuffle(k_, n, loop_ ? loop_->var : std::string())) return nullptr;
      const ExpPtr ix = take(n->args[0], before);  // a shuffle's index may read one too
      const ExpPtr read = ir::reindex(n, ix);
      const std::string v = fresh();
      Body& into = laneDependent(ix) || !loop_ ? before : *loop_->hoisted;
      into.push_back(Declare{v, n->type, read});
      if (loop_ && &into == &before) loop_->bound.insert(v);
      return ir::var(n->type, v);
    });
  }

  void bind(const Stmt& s) {
    if (!loop_) return;
    if (const auto* d = std::get_if<Declare>(&s.node)) loop_->bound.insert(d->var);
    if (const auto* a = std::get_if<Atomic>(&s.node)) loop_->bound.insert(a->result);
    if (const auto* f = std::get_if<SeqFor>(&s.node)) loop_->bound.insert(f->var);
  }

  Body body(Body in) {
    Body out;
    for (Stmt& s : in) {
      if (auto* f = std::get_if<ForAll>(&s.node); f && f->level == Level::Warp) {
        Body hoisted;
        LaneLoop loop{f->var, {f->var}, &hoisted};
        LaneLoop* outer = std::exchange(loop_, &loop);
        ir::mapExps(s, [&](const ExpPtr& e) { return take(e, out); });  // the count
        f->body = body(std::move(f->body));
        loop_ = outer;
        for (Stmt& h : hoisted) out.push_back(std::move(h));
        out.push_back(std::move(s));
        continue;
      }
      Body before;
      ir::mapExps(s, [&](const ExpPtr& e) { return take(e, before); });
      bind(s);
      for (Body* child : ir::childBodies(s)) *child = body(std::move(*child));
      for (Stmt& b : before) out.push_back(std::move(b));
      out.push_back(std::move(s));
    }
    return out;
  }

  KernelIR& k_;
  LaneLoop* loop_ = nullptr;
  uint32_t counter_ = 0;
  std::set<std::string> taken_;
};

}  // namespace

void materializeShuffles(KernelIR& k) { Materializer(k).run(); }

}  // namespace obsidian
