// Whole-array programs, the fusion space (seed 002, Section 4): the plans the planner's
// decisions can give, found by flipping each decision a plan meets (a decision may appear only
// in some plans: an epilogue exists only where a row pass does), each predicted by bytes moved
// and launches with the simulator's cost-model machine (DeviceModel), pruned of plans that save
// no traffic over another and of dominated ones; and predictBySimulation, each plan run on the
// simulator and its counters predicted by the cost model (predictTime).
#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <string>

#include "array/plan_data.hpp"
#include "obsidian/profile.hpp"

namespace obsidian::array {

std::vector<Alternative> fusionSpace(const std::vector<Output>& outputs, const PlanOptions& options,
                                     const Bindings& data, size_t limit, bool prune) {
  if (!options.fuse) {
    throw Error("array::fusionSpace: the options say no fusion (PlanOptions::fuse is false)");
  }
  const DeviceModel model;
  std::vector<Alternative> found;
  std::set<std::map<std::string, bool>> seen, planned;
  std::deque<std::map<std::string, bool>> todo{options.choices};
  seen.insert(options.choices);
  while (!todo.empty() && found.size() < limit) {
    PlanOptions o = options;
    o.choices = todo.front();
    todo.pop_front();
    const Plan plan(outputs, o);
    const PlanReport r = plan.report(data);
    Alternative a;
    a.kernels = static_cast<uint32_t>(plan.kernelCount());
    a.bytes = r.bytes;
    a.predictedMicroseconds =
        r.bytes / (model.dramGBps * 1e3) + a.kernels * model.launchMicroseconds;
    // The decisions this plan met, with the side it took: the choices that make it.
    for (const auto& [name, side] : plan.choices()) a.choices[name] = side;
    // (choices that name a decision the plan does not meet, or fewer than it meets, can give
    // a plan found before: GEMVER's unfused epilogue flipped back is the rules' plan)
    if (!planned.insert(a.choices).second) continue;
    for (const auto& [name, side] : plan.choices()) {
      std::map<std::string, bool> next = a.choices;
      next[name] = !side;
      if (seen.insert(next).second) todo.push_back(std::move(next));
    }
    found.push_back(std::move(a));
  }
  // Prune: the same traffic in the same kernels as one kept before, or beaten on both.
  // (the rules' plan, found first, is kept whatever the others)
  const Alternative rules = found.front();
  std::stable_sort(found.begin(), found.end(), [](const Alternative& x, const Alternative& y) {
    return x.predictedMicroseconds < y.predictedMicroseconds;
  });
  if (!prune) return found;
  std::vector<Alternative> kept;
  for (const Alternative& a : found) {
    const bool isRules = a.choices == rules.choices;
    const bool redundant = std::any_of(kept.begin(), kept.end(), [&](const Alternative& k) {
      return k.bytes <= a.bytes && k.kernels <= a.kernels;
    });
    if (!redundant || isRules) kept.push_back(a);
  }
  return kept;
}

void predictBySimulation(std::vector<Alternative>& space, const std::vector<Output>& outputs,
                         const PlanOptions& options, const Bindings& hostData, double scale,
                         const DeviceModel& model) {
  if (!(scale > 0)) {
    throw Error("array::predictBySimulation: the scale (the problem over the simulated slice) "
                "must be positive; got " + std::to_string(scale));
  }
  RunOptions run;
  run.simulate = true;
  run.simulation.profile = true;
  std::vector<SimStats> stats;
  run.simulated = &stats;
  for (Alternative& a : space) {
    PlanOptions o = options;
    o.choices = a.choices;
    const Plan plan(outputs, o);
    std::map<std::string, bool> met;
    for (const auto& [name, side] : plan.choices()) met[name] = side;
    if (met != a.choices) {
      throw Error("array::predictBySimulation: an alternative's choices are not the decisions "
                  "its plan meets: the space was made from other outputs or options");
    }
    plan.run(hostData, run);
    a.simulatedMicroseconds = 0;
    double slowest = -1;
    for (const SimStats& k : stats) {
      const CostEstimate e = predictTime(k.profile, model, scale);
      a.simulatedMicroseconds += e.microseconds;
      if (e.microseconds > slowest) {
        slowest = e.microseconds;
        a.simulatedBound = e.bound;
      }
    }
  }
  std::stable_sort(space.begin(), space.end(), [](const Alternative& x, const Alternative& y) {
    return x.simulatedMicroseconds < y.simulatedMicroseconds;
  });
}

}  // namespace obsidian::array
