// The sweep's driver, runSweep (see sweep.hpp): it resumes from the results file
// (sweep_results), starts the compile threads (sweep_build) while the device's context is made
// (sweep_target), then on its own thread runs the built points in order (sweep_point), appends
// each point's line as it ends (sweep_results), draws the progress bar (sweep_progress) and at
// the end prints the summary (sweep_summary).
#include "sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <obsidian/cache.hpp>
#include <optional>
#include <thread>

#include "sweep_build.hpp"
#include "sweep_common.hpp"
#include "sweep_point.hpp"
#include "sweep_progress.hpp"
#include "sweep_results.hpp"
#include "sweep_summary.hpp"
#include "sweep_target.hpp"

namespace tuning {

using namespace detail;

SweepSummary runSweep(const std::vector<Point>& points, const SweepOptions& options) {
  const auto wallStart = Clock::now();
  SweepSummary s;
  s.points = points.size();
  const std::string m = mode(options.simulate);

  requireGpu(options.simulate, s);
  // Before the sweep, not after it: a summary that cannot be written must not cost a sweep.
  if (!options.summary.empty()) checkWritable(options.summary, "the summary file");
  // Points already in the results file are not run again.
  Resumed resumed = resume(options.output, m);
  std::vector<const Point*> todo;
  for (const Point& p : points) {
    if (resumed.done.count(p.key)) {
      ++s.resumed;
    } else if (options.maxPoints == 0 || todo.size() < options.maxPoints) {
      todo.push_back(&p);
    }
  }
  std::ofstream out = openResults(options.output);

  const bool bar = options.progress < 0 ? isatty(STDERR_FILENO) != 0 : options.progress > 0;
  Progress progress(bar, todo.size());
  if (s.resumed) {
    std::cerr << "resuming " << options.output << ": " << s.resumed << " of " << points.size()
              << " points already done\n";
  }
  if (options.prune && options.simulate) {
    std::cerr << "--prune needs GPU timings: ignored with --simulate\n";
  }

  OpenDevice opened = openDevice(options.simulate, s);
  const std::string& device = opened.device;
  const obsidian::KernelCache::Stats before = obsidian::KernelCache::global().stats();
  // Every core compiles; on the GPU one is left to the thread that launches and times, so that
  // it is not descheduled between a run's start event and its launch.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned jobs =
      options.jobs ? options.jobs : (options.simulate ? cores : std::max(1u, cores - 1));
  Builder builder(todo, jobs, options.compile, {m, opened.arch, device});
  s.jobs = builder.threads();
  awaitContext(opened, s);
  PointRunner runner(options, std::move(resumed.best), s);
  bool aborted = false;

  const auto cancelled = [&] { return options.cancelled && options.cancelled(); };
  for (size_t i = 0; i < todo.size() && !aborted; ++i) {
    const Point& p = *todo[i];
    const auto t0 = Clock::now();
    std::optional<Built> b;
    if (!cancelled()) b = builder.get(i, options.cancelled);
    s.waitSeconds += secondsSince(t0);
    if (!b) {
      s.interrupted = true;
      break;
    }
    nlohmann::json line;
    std::string reason;
    const Status status = runBuilt(runner, p, *b, s, line, reason);
    appendLine(out, line, options.output);
    aborted = status == Status::DeviceError;
    if (status == Status::Wrong || status == Status::Error || status == Status::DeviceError) {
      progress.say(std::string(statusName(status)) + ": " + p.key + ": " + reason);
    }
    progress.update(i + 1, s);
  }
  progress.finish();
  if (aborted) std::cerr << "sweep stopped after a CUDA error (see the last line of the file)\n";
  if (s.interrupted) {
    std::cerr << "sweep interrupted after " << s.ran << " of " << todo.size()
              << " points; every line of " << options.output
              << " is whole: run the same sweep again to resume\n";
  }

  const obsidian::KernelCache::Stats after = obsidian::KernelCache::global().stats();
  s.kernels = builder.kernels();
  s.nvrtcCompiles = after.misses - before.misses;
  s.compileWallSeconds = builder.wallSeconds();
  s.wallSeconds = secondsSince(wallStart);
  summarize(s, options, m, device);
  return s;
}

}  // namespace tuning
