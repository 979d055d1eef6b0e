// Running one point (see sweep_point.hpp): simulated, or checked and timed on the GPU.
#include "sweep_point.hpp"

#include <memory>
#include <obsidian/runtime.hpp>
#include <obsidian/sim.hpp>
#include <vector>

#include "sweep_common.hpp"
#include "sweep_measure.hpp"

namespace tuning::detail {

using obsidian::Error;
namespace gpu = obsidian::gpu;

namespace {

void count(SweepSummary& s, Status status) {
  ++s.ran;
  switch (status) {
    case Status::Ok: ++s.ok; break;
    case Status::Wrong: ++s.wrong; break;
    case Status::Skipped: ++s.skipped; break;
    case Status::Pruned: ++s.pruned; break;
    case Status::Error:
    case Status::DeviceError: ++s.errors; break;
  }
}

}  // namespace

const char* statusName(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Wrong: return "wrong";
    case Status::Skipped: return "skipped";
    case Status::Pruned: return "pruned";
    case Status::Error:
    case Status::DeviceError: return "error";
  }
  return "error";
}

Status PointRunner::run(const Point& p, const Built& b, nlohmann::json& line, std::string& reason) {
  const Family& f = *p.family;
  if (!b.error.empty()) {
    reason = b.error;
    return b.compileFailed ? Status::Error : Status::Skipped;
  }
  std::unique_ptr<Instance> inst;
  try {
    const auto t0 = Clock::now();
    inst = f.instantiate(p.params, b.generated, cache_);
    s_.dataSeconds += secondsSince(t0);
  } catch (const Error& e) {
    reason = e.what();
    return Status::Skipped;
  }
  const std::string groupKey = f.name + " " + line["group"].get<std::string>();
  if (options_.simulate) return simulate(p, *inst, line, reason);
  return onGpu(p, *inst, b, groupKey, line, reason);
}

Status PointRunner::simulate(const Point& p, Instance& inst, nlohmann::json& line,
                             std::string& reason) {
  try {
    obsidian::SimOptions o;
    o.profile = true;
    const std::vector<obsidian::SimStats> runs = inst.simulate(o);
    reason = inst.check();
    if (reason.empty()) {
      const double scale = workScale(p);
      addPrediction(runs, scale, line);
      line["bytes"] = inst.bytesMoved() * scale;
      line["gbps"] =
          inst.bytesMoved() * scale / (line["predicted"]["microseconds"].get<double>() * 1e3);
    }
    return reason.empty() ? Status::Ok : Status::Wrong;
  } catch (const obsidian::HazardError& e) {
    reason = e.what();
    return Status::Wrong;
  } catch (const Error& e) {
    reason = e.what();
    return Status::Skipped;
  }
}

Status PointRunner::onGpu(const Point& p, Instance& inst, const Built& b,
                          const std::string& groupKey, nlohmann::json& line, std::string& reason) {
  try {
    // Every kernel's module loaded, and the first one's occupancy.
    const auto loadModules = [&] {
      const auto t0 = Clock::now();
      line["residentThreadsPerSm"] = residentThreadsPerSm(b.generated.kernels.at(0));
      for (const Kernel& k : b.generated.kernels) gpu::Device::get().function(k);
      s_.loadSeconds += secondsSince(t0);
    };
    double predicted = 0;
    if (options_.prune) {
      predicted = predict(p, simCache_, s_, line);
      reason = pruneReason(best_, groupKey, predicted, options_.pruneFactor);
      if (!reason.empty()) {
        line["residentThreadsPerSm"] = residentThreadsPerSm(b.generated.kernels.at(0));
        return Status::Pruned;
      }
    }
    // The data's memsets (poisoned outputs) run while the modules load; the wait for what is
    // left of them counts with the data, never as a run.
    auto t0 = Clock::now();
    inst.prepareGpu(cache_);
    s_.dataSeconds += secondsSince(t0);
    loadModules();
    t0 = Clock::now();
    gpu::Device::get().synchronize();
    s_.dataSeconds += secondsSince(t0);
    // The checked run is the first of the warm-up runs (a GPU run); its check is not.
    t0 = Clock::now();
    inst.launch(0, {});
    s_.gpuRunSeconds += secondsSince(t0);
    t0 = Clock::now();
    reason = inst.checkGpu();
    s_.checkSeconds += secondsSince(t0);
    if (!reason.empty()) return Status::Wrong;  // never timed: a wrong result is no win
    t0 = Clock::now();
    const Timing t = timeOnGpu(inst, options_, options_.warmup - 1);
    s_.gpuRunSeconds += secondsSince(t0);
    line["time_ms"] = {{"median", t.median}, {"min", t.min}, {"max", t.max}, {"runs", t.runs}};
    line["bytes"] = inst.bytesMoved();
    line["gbps"] = inst.bytesMoved() / (t.median * 1e-3) / 1e9;
    if (!best_.count(groupKey) || t.median < best_[groupKey].ms) {
      best_[groupKey] = {t.median, predicted,
                         line["label"].get<std::string>() + " " +
                             std::to_string(b.generated.kernels[0].threadsPerBlock()) + " threads"};
    }
    return Status::Ok;
  } catch (const obsidian::CudaError& e) {
    reason = e.what();
    // Otherwise the context may be unusable: stop here.
    return cannotLaunch(e.code()) ? Status::Skipped : Status::DeviceError;
  } catch (const Error& e) {
    reason = e.what();
    return Status::Skipped;
  }
}

Status runBuilt(PointRunner& runner, const Point& p, const Built& b, SweepSummary& s,
                nlohmann::json& line, std::string& reason) {
  line = b.line;
  const Status status = runner.run(p, b, line, reason);
  line["status"] = statusName(status);
  if (!reason.empty()) line["reason"] = reason;
  count(s, status);
  return status;
}

}  // namespace tuning::detail
