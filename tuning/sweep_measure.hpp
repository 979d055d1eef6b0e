// What a point's runs measure (sweep_measure.cpp): its time on the GPU (CUDA events after
// warm-up, the median of batched runs), the resident threads of its kernel, the CUDA errors
// that only mean it cannot run here, and on the simulator the cost model's predicted time.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <obsidian/sim.hpp>
#include <vector>

#include "family.hpp"
#include "sweep.hpp"

namespace tuning::detail {

// A point's time on the GPU in ms (the median, fastest and slowest of its timed runs), and the
// number of timed runs.
struct Timing {
  double median = 0, min = 0, max = 0;
  size_t runs = 0;
};

// `warmup` untimed runs, then batches of runs timed by CUDA events (obsidian/timing.hpp,
// batched: each run between its own pair of events, the whole batch queued before waiting),
// until at least options.runs runs and options.minTimeMs of timed GPU time.
Timing timeOnGpu(Instance& inst, const SweepOptions& options, int warmup);

// CUDA driver errors (CUresult) that mean "this point cannot run here" rather than "the GPU
// is broken": the context stays usable after them.
bool cannotLaunch(int code);

// The threads of kernel k resident on one SM at once (its occupancy).
double residentThreadsPerSm(const Kernel& k);

// What a point's simulated launches counted, summed, and their predicted time on the GPU at
// the point's full size, into its results line.
void addPrediction(const std::vector<obsidian::SimStats>& runs, double scale, nlohmann::json& line);

}  // namespace tuning::detail
