// One point at a time (PointSession, sweep.hpp), as a script drives a search: each point built
// on the caller's thread (sweep_build), run as a sweep runs it (sweep_point), its line returned
// and appended to the results file when one is set (sweep_results).
#include <fstream>
#include <memory>

#include "sweep.hpp"
#include "sweep_build.hpp"
#include "sweep_common.hpp"
#include "sweep_point.hpp"
#include "sweep_results.hpp"
#include "sweep_target.hpp"

namespace tuning {

using namespace detail;
using obsidian::Error;

struct PointSession::State {
  SweepOptions options;
  SweepSummary summary;
  std::string arch, device;
  PointRunner runner;
  std::ofstream out;
  std::string unusable;  // why the context can no longer be used ("": it can)
  explicit State(SweepOptions o) : options(std::move(o)), runner(options, {}, summary) {
    requireGpu(options.simulate, summary);
    OpenDevice opened = openDevice(options.simulate, summary);
    awaitContext(opened, summary);
    arch = opened.arch;
    device = opened.device;
    if (!options.output.empty()) out = openResults(options.output);
  }
};

PointSession::PointSession(SweepOptions options)
    : state_(std::make_unique<State>(std::move(options))) {}
PointSession::~PointSession() = default;

nlohmann::json PointSession::run(const Point& p) {
  State& st = *state_;
  if (!st.unusable.empty()) {
    throw Error("the CUDA context is unusable after an earlier point's error: " + st.unusable);
  }
  const auto t0 = Clock::now();
  const Built b =
      buildPoint(p, st.options.compile, {mode(st.options.simulate), st.arch, st.device});
  ++st.summary.points;
  st.summary.kernels += b.generated.kernels.size();
  st.summary.compileWallSeconds += secondsSince(t0);
  nlohmann::json line;
  std::string reason;
  const Status status = runBuilt(st.runner, p, b, st.summary, line, reason);
  if (status == Status::DeviceError) st.unusable = reason;
  if (st.out.is_open()) appendLine(st.out, line, st.options.output);
  st.summary.wallSeconds += secondsSince(t0);
  return line;
}

const SweepSummary& PointSession::summary() const { return state_->summary; }

}  // namespace tuning
