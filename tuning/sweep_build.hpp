// Building points ahead of their runs (sweep_build.cpp): a point's kernels generated, compiled
// with NVRTC for the target's architecture (with the plain kernels its data launches) and its
// results line begun, on a pool of compile threads that works through the points in order
// while the sweep's own thread runs the points already built.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "space.hpp"
#include "sweep_common.hpp"
#include "sweep_target.hpp"

namespace tuning::detail {

// A point built: its kernels (compiled), or why they are not; the point's line before it runs.
struct Built {
  Generated generated;
  std::string error;           // the kernels could not be generated (a user-level Error), or
                               // (compileFailed) could not be compiled
  bool compileFailed = false;  // NVRTC rejected generated code, or a plain kernel failed: a bug
  double captureMs = 0, compileMs = 0;
  nlohmann::json line;  // the point's line before it runs (describePoint)
};

// Generates the kernels of p, (when `compile`) compiles them with NVRTC for the target's
// architecture, and describes the point: all a point's host work that needs no GPU, done on
// the compile threads ahead of the runs (a kernel's report costs up to ~1 ms).
Built buildPoint(const Point& p, bool compile, const Target& target);

// Generates and compiles the points on `jobs` threads, in order, ahead of the runs.
class Builder {
 public:
  Builder(const std::vector<const Point*>& points, unsigned jobs, bool compile, Target target);
  ~Builder();
  // Point i built, waiting for it; nothing when `cancelled` (polled every 50 ms) says so first.
  std::optional<Built> get(size_t i, const std::function<bool()>& cancelled);
  size_t kernels() const { return kernels_; }
  // From the first generation to the last compile's end.
  double wallSeconds() const { return lastDone_.load(); }
  unsigned threads() const { return static_cast<unsigned>(workers_.size()); }

 private:
  void work(std::stop_token stop);

  const std::vector<const Point*>& points_;
  Target target_;
  bool compile_;
  std::vector<std::promise<Built>> slots_;
  std::vector<std::future<Built>> futures_;
  std::atomic<size_t> next_{0};
  std::atomic<size_t> kernels_{0};
  std::atomic<double> lastDone_{0};
  Clock::time_point start_;
  std::vector<std::jthread> workers_;  // last: joined first
};

}  // namespace tuning::detail
