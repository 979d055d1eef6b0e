// Pruning (SweepOptions::prune; sweep_prune.cpp): the cost model predicts every point's time
// from a simulated run of a slice of it (README.md, "Pruning"); a point predicted slower than
// its group's best point so far (best in measured time) by more than pruneFactor, both
// predicted the same way, is not run.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "family.hpp"
#include "space.hpp"
#include "sweep.hpp"

namespace tuning::detail {

// The best point of a group so far: its measured and predicted time, and what it was.
struct GroupBest {
  double ms = 0;
  double predictedUs = 0;
  std::string label;
};
// The best point of every group, by family + group.
using GroupBests = std::map<std::string, GroupBest>;

// The point's predicted time: its kernels built for the simulator's capped sizes and run
// there with the counters on (no hazard detection: the GPU run checks the result); its inputs
// from `simCache`, its prediction into `line`, the time it took counted in s.predictSeconds.
double predict(const Point& p, DataCache& simCache, SweepSummary& s, nlohmann::json& line);

// Why a point of group `groupKey` predicted to take `predicted` us is not run: slower than the
// group's best by more than `factor` ("": it runs).
std::string pruneReason(const GroupBests& best, const std::string& groupKey, double predicted,
                        double factor);

}  // namespace tuning::detail
