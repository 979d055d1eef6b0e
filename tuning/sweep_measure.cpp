// What a point's runs measure (see sweep_measure.hpp): GPU timings, occupancy, predictions.
#include "sweep_measure.hpp"

#include <algorithm>
#include <obsidian/profile.hpp>
#include <obsidian/report_json.hpp>
#include <obsidian/runtime.hpp>
#include <obsidian/timing.hpp>

namespace tuning::detail {

namespace gpu = obsidian::gpu;

Timing timeOnGpu(Instance& inst, const SweepOptions& options, int warmup) {
  gpu::LaunchOptions async;
  async.synchronize = false;
  gpu::TimingOptions timing;
  timing.warmup = std::max(warmup, 0);
  timing.runs = std::max(options.runs, 1);
  timing.minTimeMs = options.minTimeMs;
  timing.batched = true;
  const gpu::Timing t =
      gpu::time([&](int run) { inst.launch(static_cast<size_t>(run), async); }, timing);
  return Timing{t.medianMs, t.minMs, t.maxMs, t.samplesMs.size()};
}

bool cannotLaunch(int code) {
  return code == 1 /* CUDA_ERROR_INVALID_VALUE */ || code == 2 /* CUDA_ERROR_OUT_OF_MEMORY */ ||
         code == 701 /* CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES */;
}

double residentThreadsPerSm(const Kernel& k) {
  const gpu::DeviceInfo& info = gpu::Device::get().info();
  return static_cast<double>(gpu::occupancyBlocks(k)) / info.smCount * k.threadsPerBlock();
}

namespace {

// The simulator's cost model (obsidian/profile.hpp) over every launch of a point: the
// predicted times add up; the bound is the longest launch's.
obsidian::CostEstimate predictRuns(const std::vector<obsidian::SimStats>& runs, double scale) {
  obsidian::CostEstimate sum;
  double longest = -1;
  for (const obsidian::SimStats& r : runs) {
    if (!r.profile.enabled) continue;  // an empty launch
    const obsidian::CostEstimate e = obsidian::predictTime(r.profile, {}, scale);
    sum.microseconds += e.microseconds;
    sum.dramUs += e.dramUs;
    sum.l2Us += e.l2Us;
    sum.l1Us += e.l1Us;
    sum.issueUs += e.issueUs;
    sum.sharedUs += e.sharedUs;
    sum.blocksUs += e.blocksUs;
    sum.latencyUs += e.latencyUs;
    if (e.microseconds > longest) {  // the longest launch's bound and latency parts
      longest = e.microseconds;
      sum.bound = e.bound;
      sum.waves = e.waves;
      sum.residentWarps = e.residentWarps;
      sum.loadRounds = e.loadRounds;
      sum.barriers = e.barriers;
      sum.instructions = e.instructions;
    }
  }
  return sum;
}

}  // namespace

void addPrediction(const std::vector<obsidian::SimStats>& runs, double scale,
                   nlohmann::json& line) {
  obsidian::SimProfile total;
  for (const obsidian::SimStats& r : runs) total.total += r.profile.total;
  nlohmann::json counters = obsidian::toJson(total)["total"];
  line["counters"] = counters;
  line["predicted"] = obsidian::toJson(predictRuns(runs, scale));
  line["predicted"]["scale"] = scale;
}

}  // namespace tuning::detail
