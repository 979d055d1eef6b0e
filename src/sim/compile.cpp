// Compiling a lowered kernel into the simulator's flat program (see sim/program.hpp).
#include "ir/ir_walk.hpp"
#include "ir/print.hpp"
#include "sim/program.hpp"

namespace obsidian::sim {

int Compiler::slot(const std::string& name) {
  const auto it = slots_.find(name);
  if (it != slots_.end()) return it->second;
  const int s = static_cast<int>(slots_.size());
  slots_.emplace(name, s);
  return s;
}

std::unique_ptr<CExp> Compiler::exp(const ExpPtr& e) {
  if (!e) return nullptr;
  auto c = std::make_unique<CExp>();
  c->kind = e->kind;
  c->type = e->type;
  switch (e->kind) {
    case ExpKind::Literal: c->lit = ir::literalValue(*e); break;
    case ExpKind::Var: c->slot = slot(e->name); break;
    case ExpKind::ThreadIdx:
    case ExpKind::BlockIdx:
    case ExpKind::GridDim: break;
    case ExpKind::Unary:
      c->un = e->unOp;
      c->argType = e->args[0]->type;
      c->a = exp(e->args[0]);
      break;
    case ExpKind::Binary:
      c->bin = e->binOp;
      c->argType = e->args[0]->type;
      c->a = exp(e->args[0]);
      c->b = exp(e->args[1]);
      break;
    case ExpKind::Select:
    case ExpKind::Fma:
      c->a = exp(e->args[0]);
      c->b = exp(e->args[1]);
      c->c = exp(e->args[2]);
      break;
    case ExpKind::Cast:
    case ExpKind::BitCast:
      c->argType = e->args[0]->type;
      c->a = exp(e->args[0]);
      break;
    case ExpKind::Index:
      c->array = e->array;
      c->vecWidth = e->vecWidth;
      c->vecLane = e->vecLane;
      c->ownLane = e->ownLane;
      c->vote = e->vote;
      c->a = exp(e->args[0]);
      break;
  }
  return c;
}

ExpPtr Compiler::expand(const ExpPtr& e) const {
  if (shared_.empty()) return e;
  return ir::rewrite(e, [&](const ExpPtr& n) -> ExpPtr {
    if (n->kind != ExpKind::Var) return nullptr;
    auto it = shared_.find(n->name);
    return it == shared_.end() ? nullptr : it->second;
  });
}

std::string Compiler::show(const ExpPtr& e) const { return ir::printExp(expand(e), k_.arrays); }

std::vector<CStmt> Compiler::body(const Body& b) {
  std::vector<CStmt> out;
  for (const Stmt& s : b) out.push_back(stmt(s));
  return out;
}

CStmt Compiler::stmt(const Stmt& s) {
  CStmt c;
  c.id = statements_++;  // before the bodies: pre-order
  std::visit(
      [&](const auto& n) {
        using T = std::remove_cvref_t<decltype(n)>;
        if constexpr (std::is_same_v<T, Assign>) {
          c.op = Op::Assign;
          c.array = n.array;
          c.e0 = exp(n.index);
          c.e1 = exp(n.value);
          c.text = k_.arrays[n.array].name + "[" + show(n.index) + "] = " + show(n.value);
        } else if constexpr (std::is_same_v<T, StoreVector>) {
          c.op = Op::StoreVector;
          c.array = n.array;
          c.e0 = exp(n.index);
          c.text = k_.arrays[n.array].name + "[" + show(n.index) + " + k] = {";
          for (size_t l = 0; l < n.values.size(); ++l) {
            c.lanes.push_back(exp(n.values[l]));
            c.text += (l ? ", " : "") + show(n.values[l]);
          }
          c.text += "}[k] for k < " + std::to_string(n.values.size());
        } else if constexpr (std::is_same_v<T, Declare>) {
          c.op = Op::Declare;
          c.slot = slot(n.var);
          c.type = n.type;
          c.e0 = exp(n.init);
          c.text = std::string(cudaTypeName(n.type)) + " " + n.var +
                   (n.init ? " = " + show(n.init) : "");
          if (n.constant && n.init) shared_[n.var] = expand(n.init);
        } else if constexpr (std::is_same_v<T, AssignVar>) {
          c.op = Op::AssignVar;
          c.slot = slot(n.var);
          c.e0 = exp(n.value);
          c.text = n.var + " = " + show(n.value);
        } else if constexpr (std::is_same_v<T, ForAll> || std::is_same_v<T, DistrPar>) {
          throw InternalError("simulate: parallel loops are removed by virtualize");
        } else if constexpr (std::is_same_v<T, SeqFor>) {
          c.op = Op::SeqFor;
          c.made = n.made;
          c.level = n.level;
          c.slot = slot(n.var);
          c.e0 = exp(n.start);
          c.e1 = exp(n.bound);
          c.e2 = exp(n.step);
          c.body = body(n.body);
          c.text = "for (" + n.var + " = " + show(n.start) + "; " + n.var + " < " + show(n.bound) +
                   "; " + n.var + " += " + show(n.step) + ")";
        } else if constexpr (std::is_same_v<T, SeqWhile>) {
          c.op = Op::SeqWhile;
          c.level = n.level;
          c.e0 = exp(n.cond);
          c.body = body(n.body);
          c.text = "while (" + show(n.cond) + ")";
        } else if constexpr (std::is_same_v<T, Cond>) {
          c.op = Op::Cond;
          c.level = n.level;
          c.e0 = exp(n.cond);
          c.body = body(n.then);
          c.otherwise = body(n.otherwise);
          c.text = "if (" + show(n.cond) + ")";
        } else if constexpr (std::is_same_v<T, Allocate>) {
          c.op = Op::Allocate;
          c.array = n.array;
          c.text = "allocate " + k_.arrays[n.array].name;
        } else if constexpr (std::is_same_v<T, Sync>) {
          c.op = Op::Sync;
          c.level = n.level;
          c.text = n.level == Level::Block ? "__syncthreads()" : "__syncwarp()";
        } else if constexpr (std::is_same_v<T, Fence>) {
          c.op = Op::Fence;
          c.text = "__threadfence()";
        } else if constexpr (std::is_same_v<T, Sleep>) {
          c.op = Op::Sleep;
          c.text = "__nanosleep(" + std::to_string(n.ns) + ")";
        } else if constexpr (std::is_same_v<T, Atomic>) {
          c.op = Op::Atomic;
          c.atomic = n.op;
          c.array = n.array;
          c.slot = slot(n.result);
          c.e0 = exp(n.index);
          c.e1 = exp(n.value);
          c.e2 = exp(n.compare);
          c.text = n.result + " = atomic" + atomicOpName(n.op) + "(&" + k_.arrays[n.array].name +
                   "[" + show(n.index) + "]" + (n.compare ? ", " + show(n.compare) : "") +
                   (n.value ? ", " + show(n.value) : "") + ")";
        } else {
          static_assert(alwaysFalse<T>, "simulate: a statement type is not handled");
        }
      },
      s.node);
  return c;
}

}  // namespace obsidian::sim
