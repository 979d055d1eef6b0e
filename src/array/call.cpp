// Whole-array programs, a call pass: the user's captured kernel (call) as a pass of the plan,
// its arguments in its parameters' order: each operand (an input as bound, a stored vector's
// buffer, a scalar input, or a number) and then the result's buffer. It is launched (or
// simulated) as the planner's own kernels are (run.cpp), so its grid, its launch checks and the
// simulator's hazard checks are the kernel's own.
#include <cassert>

#include "array/plan_data.hpp"

namespace obsidian::array::detail {

ArgRef storedArray(const PlanData& plan, int id) {
  const NodeInfo& n = plan.nodes[id];
  if (n.node->op == OpKind::Input) return {ArgRef::Kind::Input, n.node->name, -1, -1, -1};
  const int b = n.storage == Storage::Partials ? n.finished : n.buffer;
  assert(b >= 0 && "array::Plan: an operand read as an array is stored");
  return {ArgRef::Kind::Buffer, "", b, -1, -1};
}

void planCall(PlanData& plan, int p) {
  Pass& pass = plan.passes[p];
  const NodeInfo& n = plan.nodes[pass.stores.front()];
  pass.args.clear();
  for (int a : n.args) {
    const NodeInfo& operand = plan.nodes[a];
    if (operand.node->op == OpKind::Constant) {
      ArgRef literal{ArgRef::Kind::Literal, "", -1, -1, -1};
      literal.node = a;
      pass.args.push_back(literal);
    } else {
      pass.args.push_back(storedArray(plan, a));  // (a scalar: an input)
    }
  }
  pass.args.push_back({ArgRef::Kind::Buffer, "", n.buffer, -1, -1});
  pass.kernel.emplace(*n.node->kernel);
}

}  // namespace obsidian::array::detail
