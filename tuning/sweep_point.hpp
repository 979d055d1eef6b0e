// Running one point (sweep_point.cpp): its family's instance made (inputs and references shared
// through a DataCache), then run on the simulator (checked, its time predicted) or on the GPU
// (its first run checked against the reference, then timed; with --prune, first predicted and
// compared with its group's best), into its results line and a status.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "family.hpp"
#include "space.hpp"
#include "sweep.hpp"
#include "sweep_build.hpp"
#include "sweep_prune.hpp"

namespace tuning::detail {

// How a point ended; its name is the line's "status".
enum class Status {
  Ok,           // verified (and timed, on the GPU)
  Wrong,        // a result differs from the reference, or the simulator found a hazard
  Skipped,      // cannot be generated, instantiated or launched here (a user-level Error)
  Pruned,       // predicted not to beat its group's best (SweepOptions::prune)
  Error,        // generating or compiling the kernels failed: a bug
  DeviceError,  // a CUDA error that may leave the context unusable: the sweep stops
};

const char* statusName(Status s);

// Runs points one after the other: instantiates the family's inputs, runs on the simulator
// or the GPU (checked first, then timed), and keeps the best time of every group.
class PointRunner {
 public:
  PointRunner(const SweepOptions& options, std::map<std::string, GroupBest> best, SweepSummary& s)
      : options_(options), best_(std::move(best)), s_(s) {}

  // Runs point p with its built kernels b; adds its results (times, bandwidth, resident
  // threads) to `line` and says why it is not ok in `reason`.
  Status run(const Point& p, const Built& b, nlohmann::json& line, std::string& reason);

 private:
  Status simulate(const Point& p, Instance& inst, nlohmann::json& line, std::string& reason);
  Status onGpu(const Point& p, Instance& inst, const Built& b, const std::string& groupKey,
               nlohmann::json& line, std::string& reason);

  const SweepOptions& options_;
  std::map<std::string, GroupBest> best_;
  SweepSummary& s_;
  DataCache cache_;
  DataCache simCache_;  // the capped inputs of predict()
};

// Runs p with its built kernels b into its complete `line`, counted in s; `reason` says why it
// is not ok.
Status runBuilt(PointRunner& runner, const Point& p, const Built& b, SweepSummary& s,
                nlohmann::json& line, std::string& reason);

}  // namespace tuning::detail
