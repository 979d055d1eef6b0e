// Pruning (see sweep_prune.hpp): a point's predicted time, and whether it can beat its group.
#include "sweep_prune.hpp"

#include <memory>
#include <obsidian/sim.hpp>

#include "sweep_common.hpp"
#include "sweep_measure.hpp"

namespace tuning::detail {

double predict(const Point& p, DataCache& simCache, SweepSummary& s, nlohmann::json& line) {
  const Family& f = *p.family;
  Point capped = p;
  capped.params = f.canonical(p.params, true);
  capped.full = p.params;
  const auto t0 = Clock::now();
  std::unique_ptr<Instance> inst =
      f.instantiate(capped.params, generate(f, capped.params, true), simCache);
  obsidian::SimOptions o;
  o.profile = true;
  o.detectHazards = false;
  addPrediction(inst->simulate(o), workScale(capped), line);
  s.predictSeconds += secondsSince(t0);
  return line["predicted"]["microseconds"].get<double>();
}

std::string pruneReason(const GroupBests& best, const std::string& groupKey, double predicted,
                        double factor) {
  const auto it = best.find(groupKey);
  if (it != best.end() && it->second.predictedUs > 0 &&
      predicted > factor * it->second.predictedUs) {
    return "predicted slower than the group's best (" + it->second.label + ", " +
           fixed(it->second.ms * 1e3, 1) + " us, predicted " + fixed(it->second.predictedUs, 1) +
           " us) by more than " + fixed(factor, 1) + "x: predicted " + fixed(predicted, 1) + " us";
  }
  return "";
}

}  // namespace tuning::detail
