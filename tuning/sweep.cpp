// The sweep (see sweep.hpp).
#include "sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iomanip>
#include <iostream>
#include <map>
#include <obsidian/cache.hpp>
#include <obsidian/report_json.hpp>
#include <obsidian/sim.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

namespace tuning {

namespace {

using obsidian::Error;
using Clock = std::chrono::steady_clock;
namespace gpu = obsidian::gpu;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string clockText(double seconds) {
  const long s = std::lround(std::max(seconds, 0.0));
  std::ostringstream o;
  o << s / 60 << ":" << std::setw(2) << std::setfill('0') << s % 60;
  return o.str();
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

// ------------------------------------------------------------------ what a point's line holds
nlohmann::json kernelSummary(const Kernel& k) {
  const nlohmann::json r = toJson(k.report());
  nlohmann::json j;
  for (const char* key : {"name", "threadsPerBlock", "sharedBytes", "gridBlocks", "barriers",
                          "registers", "spillStoreBytes", "spillLoadBytes", "stackBytes"}) {
    j[key] = r[key];
  }
  return j;
}

// ------------------------------------------------------------------ compiling ahead
std::string mode(bool simulate) { return simulate ? "simulate" : "gpu"; }

struct Built {
  Generated generated;
  std::string error;           // the kernels could not be generated (a user-level Error), or
                               // (compileFailed) could not be compiled
  bool compileFailed = false;  // NVRTC rejected generated code, or a plain kernel failed: a bug
  double captureMs = 0, compileMs = 0;
  nlohmann::json line;  // the point's line before it runs (describePoint)
};

// Where a point is built and run: the mode's name, the architecture to compile for, the device.
struct Target {
  std::string mode, arch, device;
};

nlohmann::json describePoint(const Point& p, const Built& b, const std::string& m,
                             const std::string& device);

// Makes and compiles the plain kernels p's data will launch on the GPU, when its family lists
// them (Family::plainKernels): made once per process, so mostly found made already. (Not in
// the point's compileMs, which is its own kernels'.)
void preparePlainKernels(const Point& p, const Target& target, Built& b) {
  if (!p.family->plainKernels) return;
  std::vector<PlainKernel> plain;
  try {
    plain = p.family->plainKernels(p.params);
  } catch (const Error&) {
    return;  // the point's data cannot be made: instantiate says why, when the point runs
  }
  try {
    obsidian::CompileOptions o;
    o.arch = target.arch;
    for (const PlainKernel& pk : plain) plainKernel(pk).compile(o);
  } catch (const std::exception& e) {  // the plain kernels are the tool's: a bug
    b.error = std::string("making the plain kernels failed: ") + e.what();
    b.compileFailed = true;
  }
}

// Generates the kernels of p, (when `compile`) compiles them with NVRTC for the target's
// architecture, and describes the point: all a point's host work that needs no GPU, done on
// the compile threads ahead of the runs (a kernel's report costs up to ~1 ms).
Built buildPoint(const Point& p, bool compile, const Target& target) {
  Built b;
  const auto t0 = Clock::now();
  try {
    b.generated = p.family->build(p.params);
  } catch (const Error& e) {
    b.error = e.what();
  } catch (const std::exception& e) {  // not a user-level error: a bug
    b.error = std::string("generating the kernels failed: ") + e.what();
    b.compileFailed = true;
  }
  b.captureMs = secondsSince(t0) * 1e3;
  if (compile && b.error.empty()) {
    const auto t1 = Clock::now();
    try {
      obsidian::CompileOptions o;
      o.arch = target.arch;
      for (const Kernel& k : b.generated.kernels) k.compile(o);
    } catch (const std::exception& e) {
      b.error = std::string("NVRTC rejected the generated kernel: ") + e.what();
      b.compileFailed = true;
    }
    b.compileMs = secondsSince(t1) * 1e3;
  }
  if (target.mode == mode(false) && b.error.empty()) preparePlainKernels(p, target, b);
  b.line = describePoint(p, b, target.mode, target.device);
  return b;
}

// Generates and compiles the points on `jobs` threads, in order, ahead of the runs.
class Builder {
 public:
  Builder(const std::vector<const Point*>& points, unsigned jobs, bool compile, Target target)
      : points_(points), target_(std::move(target)), compile_(compile), slots_(points.size()) {
    for (auto& s : slots_) futures_.push_back(s.get_future());
    start_ = Clock::now();
    const unsigned n = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(points.size())));
    for (unsigned t = 0; t < n; ++t) {
      workers_.emplace_back([this](std::stop_token stop) { work(stop); });
    }
  }
  ~Builder() {
    for (auto& w : workers_) w.request_stop();
  }
  // Point i built, waiting for it; nothing when `cancelled` (polled every 50 ms) says so first.
  std::optional<Built> get(size_t i, const std::function<bool()>& cancelled) {
    while (cancelled &&
           futures_[i].wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      if (cancelled()) return std::nullopt;
    }
    return futures_[i].get();
  }
  size_t kernels() const { return kernels_; }
  // From the first generation to the last compile's end.
  double wallSeconds() const { return lastDone_.load(); }
  unsigned threads() const { return static_cast<unsigned>(workers_.size()); }

 private:
  void work(std::stop_token stop) {
    for (;;) {
      const size_t i = next_++;
      if (i >= points_.size() || stop.stop_requested()) return;
      Built b;
      try {
        b = buildPoint(*points_[i], compile_, target_);
      } catch (...) {  // (describing it failed: a bug) rethrown by get() on the runs' thread
        slots_[i].set_exception(std::current_exception());
        continue;
      }
      kernels_ += b.generated.kernels.size();
      double done = secondsSince(start_), seen = lastDone_.load();
      while (done > seen && !lastDone_.compare_exchange_weak(seen, done)) {
      }
      slots_[i].set_value(std::move(b));  // last: the runs may end as soon as it is set
    }
  }

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

// ------------------------------------------------------------------ progress
class Progress {
 public:
  Progress(bool on, size_t total) : on_(on), total_(total), start_(Clock::now()) {}
  void update(size_t done, const SweepSummary& s) {
    if (!on_) return;
    const double elapsed = secondsSince(start_);
    const int width = 30;
    const int filled = total_ ? static_cast<int>(width * done / total_) : width;
    std::ostringstream line;
    line << "\r[" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << done
         << "/" << total_ << "  ok " << s.ok << " wrong " << s.wrong << " skipped " << s.skipped
         << " pruned " << s.pruned << "  " << clockText(elapsed);
    if (done > 0 && done < total_) {
      line << "  ETA " << clockText(elapsed / static_cast<double>(done) * (total_ - done));
    }
    line << "   ";
    std::cerr << line.str() << std::flush;
  }
  void finish() {
    if (on_) std::cerr << "\n";
  }
  // A message on its own line, the bar redrawn by the next update.
  void say(const std::string& text) {
    if (on_) std::cerr << "\r" << std::string(100, ' ') << "\r";
    std::cerr << text << "\n";
  }

 private:
  bool on_;
  size_t total_;
  Clock::time_point start_;
};

// ------------------------------------------------------------------ timing on the GPU
struct Timing {
  double median = 0, min = 0, max = 0;
  size_t runs = 0;
};

// `warmup` untimed runs, then batches of runs timed by CUDA events (obsidian/timing.hpp,
// batched: each run between its own pair of events, the whole batch queued before waiting),
// until at least options.runs runs and options.minTimeMs of timed GPU time.
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

// CUDA driver errors (CUresult) that mean "this point cannot run here" rather than "the GPU
// is broken": the context stays usable after them.
bool cannotLaunch(int code) {
  return code == 1 /* CUDA_ERROR_INVALID_VALUE */ || code == 2 /* CUDA_ERROR_OUT_OF_MEMORY */ ||
         code == 701 /* CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES */;
}

// ------------------------------------------------------------------ predicting
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

// What a point's simulated launches counted, summed, and their predicted time on the GPU at
// the point's full size, into its results line.
void addPrediction(const std::vector<obsidian::SimStats>& runs, double scale,
                   nlohmann::json& line) {
  obsidian::SimProfile total;
  for (const obsidian::SimStats& r : runs) total.total += r.profile.total;
  nlohmann::json counters = obsidian::toJson(total)["total"];
  line["counters"] = counters;
  line["predicted"] = obsidian::toJson(predictRuns(runs, scale));
  line["predicted"]["scale"] = scale;
}

// ------------------------------------------------------------------ pruning
// The cost model predicts every point's time from a simulated run of a slice of it (README.md,
// "Pruning"); a point predicted slower than its group's best point so far (best in measured
// time) by more than pruneFactor, both predicted the same way, is not run.
struct GroupBest {
  double ms = 0;
  double predictedUs = 0;
  std::string label;
};

double residentThreadsPerSm(const Kernel& k) {
  const gpu::DeviceInfo& info = gpu::Device::get().info();
  return static_cast<double>(gpu::occupancyBlocks(k)) / info.smCount * k.threadsPerBlock();
}

// Why a results line cannot be read ("": it can): the fields its readers need, each with its
// type. Every reader needs a line's identity and status (family, mode, key, params, status);
// `complete` (resume, merge, the tables) also the label, threads, group and size the tables and
// pruning read. A line of another tool or an edited one must say so, not reach a reader as a
// JSON type error.
std::string lineProblem(const nlohmann::json& j, bool complete) {
  if (!j.is_object()) return "a results line must be a JSON object; got " + j.dump();
  const auto missing = [&](const char* field, const char* type) {
    return std::string("no \"") + field + "\" (" + type +
           "; a results line has family, mode, key, params, status" +
           (complete ? ", label, threads, group)" : ")");
  };
  const auto wrong = [&](const std::string& field, const char* type) {
    const nlohmann::json::json_pointer at("/" + field);
    std::string path = field;
    std::replace(path.begin(), path.end(), '/', '.');
    return "\"" + path + "\" must be " + type + "; got " + j.at(at).dump();
  };
  for (const char* field : {"family", "mode", "key", "params", "status"}) {
    if (!j.contains(field)) return missing(field, field[0] == 'p' ? "an object" : "a string");
  }
  for (const char* field : {"label", "group"}) {
    if (complete && !j.contains(field)) return missing(field, "a string");
    if (j.contains(field) && !j[field].is_string()) return wrong(field, "a string");
  }
  if (complete && !j.contains("threads")) return missing("threads", "a number");
  for (const char* field : {"family", "mode", "key", "status"}) {
    if (!j[field].is_string()) return wrong(field, "a string");
  }
  if (!j["params"].is_object()) return wrong("params", "an object");
  const std::string m = j["mode"];
  if (m != "gpu" && m != "simulate") return wrong("mode", "\"gpu\" or \"simulate\"");
  const std::string st = j["status"];
  if (st != "ok" && st != "wrong" && st != "skipped" && st != "pruned" && st != "error") {
    return wrong("status", "one of ok, wrong, skipped, pruned, error");
  }
  const Family* f = nullptr;
  try {
    const std::string name = j["family"];  // see space.cpp (GCC 13)
    f = &findFamily(name);
  } catch (const Error& e) {
    return e.what();
  }
  if (j.contains("fullKey") && !j["fullKey"].is_string()) return wrong("fullKey", "a string");
  if (j.contains("fullParams") && !j["fullParams"].is_object()) {
    return wrong("fullParams", "an object");
  }
  const nlohmann::json& params = j.contains("fullParams") ? j["fullParams"] : j["params"];
  if (complete && !params.contains(f->sizeParam)) {
    return std::string("\"") + (j.contains("fullParams") ? "fullParams" : "params") +
           "\" has no \"" + f->sizeParam + "\" (" + f->name + "'s size)";
  }
  // The times the tables rank by: optional, each an object holding a number.
  for (const auto& [object, number] :
       {std::pair<std::string, std::string>{"time_ms", "median"}, {"predicted", "microseconds"}}) {
    if (!j.contains(object)) continue;
    if (!j[object].is_object()) return wrong(object, "an object");
    if (!j[object].contains(number)) {
      return "\"" + object + "\" has no \"" + number + "\" (a number)";
    }
    if (!j[object][number].is_number()) return wrong(object + "/" + number, "a number");
  }
  if (j.contains("gbps") && !j["gbps"].is_number()) return wrong("gbps", "a number");
  if (j.contains("virtualized") && !j["virtualized"].is_boolean()) {
    return wrong("virtualized", "true or false");
  }
  return "";
}

}  // namespace

std::vector<nlohmann::json> readResults(const std::string& path, const std::string& wantMode,
                                        bool mustExist, bool complete) {
  std::vector<nlohmann::json> lines;
  std::map<std::string, size_t> byKey;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw Error("cannot read the results file " + path + ": it is a directory");
  }
  std::ifstream in(path);
  if (!in) {
    if (!mustExist && !std::filesystem::exists(path, ec)) return lines;
    throw Error("cannot read the results file " + path + ": " + std::strerror(errno));
  }
  std::string text;
  for (size_t number = 1; std::getline(in, text); ++number) {
    if (text.empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error&) {
      continue;  // a line cut short by an interrupted run (README.md, "Resume and limits")
    }
    const std::string problem = lineProblem(j, complete);
    if (!problem.empty()) {
      throw Error(path + ":" + std::to_string(number) + ": " + problem +
                  " (a line obsidian-tune did not write, or an edited one: remove or fix it)");
    }
    if (!wantMode.empty() && j["mode"] != wantMode) continue;
    // A line is the point it stands for: a simulated line of an older sweep keyed the capped
    // size it ran and names the full point in fullKey (since then both are the full key), so
    // every reader (resume, merge, tables, replays) sees one key for one point.
    if (j.contains("fullKey")) j["key"] = j["fullKey"];
    // (every mode: a GPU line and a simulated one of the same point are both kept)
    const auto [it, added] = byKey.emplace(
        (wantMode.empty() ? j["mode"].get<std::string>() + " " : "") + j["key"].get<std::string>(),
        lines.size());
    if (added) {
      lines.push_back(std::move(j));
    } else {
      lines[it->second] = std::move(j);  // a point run again after an error
    }
  }
  if (in.bad()) throw Error("cannot read the results file " + path + ": " + std::strerror(errno));
  return lines;
}

void writeFile(const std::string& path, const std::string& text, const std::string& what) {
  checkWritable(path, what);
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw Error("cannot write " + what + " " + path + ": " + std::strerror(errno));
}

void checkWritable(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    throw Error("cannot write " + what + " " + path + ": the directory " + parent.string() +
                " does not exist");
  }
  if (fs::is_directory(path, ec))
    throw Error("cannot write " + what + " " + path + ": a directory");
  const bool existed = fs::exists(path, ec);
  if (!std::ofstream(path, std::ios::app)) {
    throw Error("cannot write " + what + " " + path + ": " + std::strerror(errno));
  }
  if (!existed) fs::remove(path, ec);
}

namespace {

// ------------------------------------------------------------------ resuming
// What a previous run left in the results file: the points not to run again (all but those
// that ended in an error, which may have been transient) and the best time of every group
// (for pruning).
struct Resumed {
  std::set<std::string> done;
  std::map<std::string, GroupBest> best;  // by family + group
};

Resumed resume(const std::string& path, const std::string& wantMode) {
  Resumed r;
  for (const nlohmann::json& j : readResults(path, wantMode, false)) {
    if (j["status"] == "error") continue;  // run again: an error may have been transient
    r.done.insert(j["key"].get<std::string>());
    if (j["status"] == "ok" && j.contains("time_ms")) {
      const std::string g = j["family"].get<std::string>() + " " + j["group"].get<std::string>();
      const double ms = j["time_ms"]["median"];
      if (!r.best.count(g) || ms < r.best[g].ms) {
        const double predicted =
            j.contains("predicted") ? j["predicted"]["microseconds"].get<double>() : 0.0;
        r.best[g] = {ms, predicted, j["label"].get<std::string>()};
      }
    }
  }
  return r;
}

// The results file opened for appending after whatever is there, on a line of its own; its
// directory made.
std::ofstream openResults(const std::string& path) {
  {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) {
      throw Error("cannot write the results file " + path + ": cannot make its directory " +
                  parent.string() + ": " + ec.message());
    }
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (in && in.tellg() > 0) {
      in.seekg(-1, std::ios::end);
      char last = '\n';
      in.get(last);
      if (last != '\n') std::ofstream(path, std::ios::app) << "\n";
    }
  }
  std::ofstream out(path, std::ios::app);
  if (!out) throw Error("cannot write the results file " + path + ": " + std::strerror(errno));
  return out;
}

// Appends a point's line, flushed: a sweep stopped at any moment leaves whole lines (and at
// most the one being written cut short). A failed write (a full disk) stops the sweep.
void appendLine(std::ofstream& out, const nlohmann::json& line, const std::string& path) {
  // A reason is an Error's text, which may quote a kernel's messages in any encoding: bytes
  // that are not UTF-8 are written as U+FFFD (dump would throw on them).
  out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
  if (!out) throw Error("cannot write the results file " + path + ": " + std::strerror(errno));
}

// ------------------------------------------------------------------ running one point
// How a point ended; its name is the line's "status".
enum class Status {
  Ok,           // verified (and timed, on the GPU)
  Wrong,        // a result differs from the reference, or the simulator found a hazard
  Skipped,      // cannot be generated, instantiated or launched here (a user-level Error)
  Pruned,       // predicted not to beat its group's best (SweepOptions::prune)
  Error,        // generating or compiling the kernels failed: a bug
  DeviceError,  // a CUDA error that may leave the context unusable: the sweep stops
};

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

// The line of a point before it runs: what it is and how its kernels were built.
nlohmann::json describePoint(const Point& p, const Built& b, const std::string& m,
                             const std::string& device) {
  const Family& f = *p.family;
  nlohmann::json line;
  line["family"] = f.name;
  line["mode"] = m;
  line["key"] = p.key;
  line["params"] = p.params;
  line["label"] = f.variantLabel(p.params);
  line["threads"] = p.params.at(f.threadsParam);
  line["size"] = p.params.at(f.sizeParam);
  line["sizeParam"] = f.sizeParam;
  line["group"] = groupOf(f, p.params);
  if (m == mode(true)) {  // the point a simulated one stands for (its key names it too)
    line["fullKey"] = p.key;
    line["fullParams"] = p.full;
  }
  if (f.naturalThreads) {
    const uint32_t natural = f.naturalThreads(p.params);
    line["naturalThreads"] = natural;
    line["virtualized"] = p.params.at(f.threadsParam).get<uint32_t>() < natural;
  }
  line["device"] = device;
  line["captureMs"] = b.captureMs;
  line["compileMs"] = b.compileMs;
  nlohmann::json kernels = nlohmann::json::array();
  for (const Kernel& k : b.generated.kernels) kernels.push_back(kernelSummary(k));
  line["kernels"] = kernels;
  return line;
}

// Runs points one after the other: instantiates the family's inputs, runs on the simulator
// or the GPU (checked first, then timed), and keeps the best time of every group.
class PointRunner {
 public:
  PointRunner(const SweepOptions& options, std::map<std::string, GroupBest> best, SweepSummary& s)
      : options_(options), best_(std::move(best)), s_(s) {}

  // Runs point p with its built kernels b; adds its results (times, bandwidth, resident
  // threads) to `line` and says why it is not ok in `reason`.
  Status run(const Point& p, const Built& b, nlohmann::json& line, std::string& reason) {
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

 private:
  Status simulate(const Point& p, Instance& inst, nlohmann::json& line, std::string& reason) {
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

  // The point's predicted time: its kernels built for the simulator's capped sizes and run
  // there with the counters on (no hazard detection: the GPU run checks the result).
  double predict(const Point& p, nlohmann::json& line) {
    const Family& f = *p.family;
    Point capped = p;
    capped.params = f.canonical(p.params, true);
    capped.full = p.params;
    const auto t0 = Clock::now();
    std::unique_ptr<Instance> inst =
        f.instantiate(capped.params, f.build(capped.params), simCache_);
    obsidian::SimOptions o;
    o.profile = true;
    o.detectHazards = false;
    addPrediction(inst->simulate(o), workScale(capped), line);
    s_.predictSeconds += secondsSince(t0);
    return line["predicted"]["microseconds"].get<double>();
  }

  Status onGpu(const Point& p, Instance& inst, const Built& b, const std::string& groupKey,
               nlohmann::json& line, std::string& reason) {
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
        predicted = predict(p, line);
        const auto it = best_.find(groupKey);
        if (it != best_.end() && it->second.predictedUs > 0 &&
            predicted > options_.pruneFactor * it->second.predictedUs) {
          reason = "predicted slower than the group's best (" + it->second.label + ", " +
                   fixed(it->second.ms * 1e3, 1) + " us, predicted " +
                   fixed(it->second.predictedUs, 1) + " us) by more than " +
                   fixed(options_.pruneFactor, 1) + "x: predicted " + fixed(predicted, 1) + " us";
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
                               std::to_string(b.generated.kernels[0].threadsPerBlock()) +
                               " threads"};
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

  const SweepOptions& options_;
  std::map<std::string, GroupBest> best_;
  SweepSummary& s_;
  DataCache cache_;
  DataCache simCache_;  // the capped inputs of predict()
};

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

// Runs p with its built kernels b into its complete `line`, counted in s; `reason` says why it
// is not ok.
Status runBuilt(PointRunner& runner, const Point& p, const Built& b, SweepSummary& s,
                nlohmann::json& line, std::string& reason) {
  line = b.line;
  const Status status = runner.run(p, b, line, reason);
  line["status"] = statusName(status);
  if (!reason.empty()) line["reason"] = reason;
  count(s, status);
  return status;
}

// ------------------------------------------------------------------ summarizing
// Prints the sweep's summary and writes it as JSON where options.summary says.
void summarize(const SweepSummary& s, const SweepOptions& options, const std::string& m,
               const std::string& device) {
  std::cout << "\n"
            << m << " sweep of " << s.points << " points into " << options.output << ": " << s.ran
            << " run now, " << s.resumed << " done before\n"
            << "  ok " << s.ok << ", wrong " << s.wrong << ", skipped " << s.skipped
            << " (cannot be generated or launched), pruned " << s.pruned << ", errors " << s.errors
            << "\n"
            << "  generated " << s.kernels << " kernels on " << s.jobs << " threads in "
            << fixed(s.compileWallSeconds, 2) << " s ("
            << fixed(s.compileWallSeconds > 0 ? s.kernels / s.compileWallSeconds : 0, 1)
            << " kernels/s; " << s.nvrtcCompiles << " NVRTC compiles, the rest from the cache)\n"
            << "  wall " << fixed(s.wallSeconds, 2) << " s";
  if (!options.simulate) {
    const double outside = s.wallSeconds > 0 ? 1 - s.gpuRunSeconds / s.wallSeconds : 0;
    const double steady = s.wallSeconds - s.deviceInitSeconds;
    const double outsideSteady = steady > 0 ? 1 - s.gpuRunSeconds / steady : 0;
    std::cout << ", of which timed GPU runs (warm-up included) " << fixed(s.gpuRunSeconds, 2)
              << " s (" << fixed(outside * 100, 1) << "% outside them; "
              << fixed(outsideSteady * 100, 1) << "% without the device's initialization; "
              << fixed(s.ran ? (steady - s.gpuRunSeconds) / s.ran * 1e3 : 0, 2)
              << " ms per point)\n"
              << "  outside the GPU runs: device init " << fixed(s.deviceInitSeconds, 2)
              << " s, waiting for kernels " << fixed(s.waitSeconds, 2)
              << " s, inputs and references " << fixed(s.dataSeconds, 2)
              << " s, checking the first run " << fixed(s.checkSeconds, 2) << " s, loading modules "
              << fixed(s.loadSeconds, 2) << " s, predicting (--prune) "
              << fixed(s.predictSeconds, 2) << " s, the rest "
              << fixed(s.wallSeconds - s.gpuRunSeconds - s.deviceInitSeconds - s.waitSeconds -
                           s.dataSeconds - s.checkSeconds - s.loadSeconds - s.predictSeconds,
                       2)
              << " s";
  }
  std::cout << "\n";
  if (!options.summary.empty()) {
    nlohmann::json j = toJson(s);
    j["mode"] = m;
    j["hardwareThreads"] = std::thread::hardware_concurrency();
    j["device"] = device;
    writeFile(options.summary, j.dump(2) + "\n", "the summary file");
  }
}

// Throws the user-level Error for a GPU sweep without a GPU. Asking loads and initializes the
// driver (cuInit: about as long as creating the context), counted as the device's
// initialization.
void requireGpu(bool simulate, SweepSummary& s) {
  const auto t0 = Clock::now();
  if (!simulate && !gpu::available()) {
    throw Error("no CUDA device (" + gpu::unavailableReason() +
                "); use --simulate to verify the points on the CPU simulator");
  }
  s.deviceInitSeconds += secondsSince(t0);
}

// Where points are built and run: the architecture to compile for and the device's name, read
// without the device's context, and (on the GPU) the context being created meanwhile (~0.1 s),
// so that a sweep generates and compiles its first points while it is made.
struct OpenDevice {
  std::string arch, device;
  std::future<void> context;  // valid until awaited
};
OpenDevice openDevice(bool simulate, SweepSummary& s) {
  if (simulate) return {"sm_90", "simulator", {}};
  const auto t0 = Clock::now();
  const gpu::DeviceInfo info = gpu::deviceInfo();
  s.deviceInitSeconds += secondsSince(t0);
  return {info.arch(), info.name, std::async(std::launch::async, [] { gpu::Device::get(); })};
}
// Waits for the context (the time counted as the device's initialization).
void awaitContext(OpenDevice& d, SweepSummary& s) {
  if (!d.context.valid()) return;
  const auto t0 = Clock::now();
  d.context.get();
  s.deviceInitSeconds += secondsSince(t0);
}

}  // namespace

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

// ------------------------------------------------------------------ one point at a time
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

nlohmann::json toJson(const SweepSummary& s) {
  return {{"points", s.points},
          {"resumed", s.resumed},
          {"ran", s.ran},
          {"ok", s.ok},
          {"wrong", s.wrong},
          {"skipped", s.skipped},
          {"pruned", s.pruned},
          {"errors", s.errors},
          {"wallSeconds", s.wallSeconds},
          {"gpuRunSeconds", s.gpuRunSeconds},
          {"deviceInitSeconds", s.deviceInitSeconds},
          {"waitForKernelsSeconds", s.waitSeconds},
          {"dataSeconds", s.dataSeconds},
          {"checkSeconds", s.checkSeconds},
          {"loadModuleSeconds", s.loadSeconds},
          {"predictSeconds", s.predictSeconds},
          {"kernels", s.kernels},
          {"nvrtcCompiles", s.nvrtcCompiles},
          {"compileWallSeconds", s.compileWallSeconds},
          {"compileThreads", s.jobs},
          {"interrupted", s.interrupted}};
}

MergeReport mergeResults(const std::vector<std::string>& inputs, const std::string& output,
                         const std::vector<Point>& points, bool simulate) {
  std::map<std::string, nlohmann::json> byKey;
  std::vector<std::string> order;  // first appearance, for the foreign lines
  for (const std::string& path : inputs) {
    std::error_code ec;
    if (std::filesystem::equivalent(path, output, ec)) {
      throw Error("--merge: the output " + output + " is one of the inputs");
    }
    for (nlohmann::json& j : readResults(path, mode(simulate))) {
      const std::string key = j["key"];
      const auto it = byKey.find(key);
      if (it == byKey.end()) {
        order.push_back(key);
        byKey.emplace(key, std::move(j));
      } else if (j["status"] != "error" || it->second["status"] == "error") {
        it->second = std::move(j);
      }
    }
  }
  MergeReport r;
  std::ofstream out(output, std::ios::trunc);
  if (!out) throw Error("--merge: cannot write " + output + ": " + std::strerror(errno));
  std::set<std::string> inSpace;
  for (const Point& p : points) {
    inSpace.insert(p.key);
    const auto it = byKey.find(p.key);
    if (it == byKey.end()) {
      r.missing.push_back(p.key);
      continue;
    }
    out << it->second.dump() << "\n";
    ++r.lines;
  }
  for (const std::string& key : order) {
    if (inSpace.count(key)) continue;
    r.foreign.push_back(key);
    out << byKey[key].dump() << "\n";
    ++r.lines;
  }
  out.close();
  if (!out) throw Error("--merge: cannot write " + output + ": " + std::strerror(errno));
  return r;
}

nlohmann::json generatePoint(const Point& p) {
  nlohmann::json j{{"family", p.family->name}, {"key", p.key}, {"params", p.params}};
  nlohmann::json kernels = nlohmann::json::array();
  for (const Kernel& k : p.family->build(p.params).kernels) {
    kernels.push_back({{"name", k.name()}, {"cuda", k.cuda()}, {"report", toJson(k.report())}});
  }
  j["kernels"] = kernels;
  return j;
}

namespace {

// A table printed aligned for a terminal, or as Markdown (for RESULTS.md).
class TextTable {
 public:
  TextTable(std::string title, std::vector<std::string> head)
      : title_(std::move(title)), head_(std::move(head)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(bool markdown) const {
    std::vector<size_t> w(head_.size());
    for (size_t c = 0; c < head_.size(); ++c) {
      w[c] = head_[c].size();
      for (const auto& r : rows_) w[c] = std::max(w[c], r[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
      std::cout << (markdown ? "| " : "  ");
      for (size_t c = 0; c < cells.size(); ++c) {
        std::cout << std::setw(static_cast<int>(w[c])) << (c == 0 ? std::left : std::right)
                  << cells[c] << std::right << (markdown ? " | " : "  ");
      }
      std::cout << "\n";
    };
    std::cout << "\n" << (markdown ? "#### " : "") << title_ << "\n" << (markdown ? "\n" : "");
    line(head_);
    std::vector<std::string> rule;
    for (size_t c = 0; c < w.size(); ++c) {
      rule.push_back(markdown ? std::string(w[c], '-') : std::string(w[c], '-'));
    }
    line(rule);
    for (const auto& r : rows_) line(r);
  }

 private:
  std::string title_;
  std::vector<std::string> head_;
  std::vector<std::vector<std::string>> rows_;
};

// Lines with a time: measured on the GPU, or predicted by the cost model on the simulator.
bool timedOk(const nlohmann::json& j) {
  return j["status"] == "ok" && (j.contains("time_ms") || j.contains("predicted"));
}
double medianUs(const nlohmann::json& j) {
  return j.contains("time_ms") ? j["time_ms"]["median"].get<double>() * 1e3
                               : j["predicted"]["microseconds"].get<double>();
}
std::string gbpsText(const nlohmann::json& j) {
  return j.contains("gbps") ? fixed(j["gbps"].get<double>(), 0) : "-";
}
// A simulated point stands for the point at its full size (fullParams).
const nlohmann::json& paramsOf(const nlohmann::json& j) {
  return j.contains("fullParams") ? j["fullParams"] : j["params"];
}
std::string threadsText(const nlohmann::json& j) {
  return j["threads"].dump() + (j.value("virtualized", false) ? "*" : "");
}

}  // namespace

void printTables(const std::string& resultsPath, bool simulate, bool markdown, bool requireLines) {
  const std::vector<nlohmann::json> lines = readResults(resultsPath, mode(simulate));
  if (requireLines && lines.empty()) {
    const size_t other = readResults(resultsPath, mode(!simulate)).size();
    throw Error(resultsPath + " has no " + mode(simulate) + " lines" +
                (other ? " (its " + std::to_string(other) + " " + mode(!simulate) +
                             " lines are read " + (simulate ? "without" : "with") + " --simulate)"
                       : ""));
  }
  // family -> problem (the group without the size) -> size -> lines
  std::map<std::string,
           std::map<std::string, std::map<nlohmann::json, std::vector<const nlohmann::json*>>>>
      byProblem;
  for (const nlohmann::json& j : lines) {
    const std::string familyName = j["family"].get<std::string>();  // see space.cpp (GCC 13)
    const Family& f = findFamily(familyName);
    const nlohmann::json& params = paramsOf(j);
    byProblem[f.name][groupOf(f, params, f.sizeParam)][params.at(f.sizeParam)].push_back(&j);
  }
  for (const auto& [family, problems] : byProblem) {
    const Family& f = findFamily(family);
    if (simulate) {
      TextTable t(family + ": points by status (simulator: sizes capped)",
                  {"problem", f.sizeParam, "ok", "wrong", "skipped", "error"});
      for (const auto& [problem, bySize] : problems) {
        for (const auto& [size, js] : bySize) {
          std::map<std::string, size_t> n;
          for (const nlohmann::json* j : js) ++n[(*j)["status"].get<std::string>()];
          t.add({problem, size.dump(), std::to_string(n["ok"]), std::to_string(n["wrong"]),
                 std::to_string(n["skipped"]), std::to_string(n["error"])});
        }
      }
      t.print(markdown);
    }
    for (const auto& [problem, bySize] : problems) {
      const std::string what = family + (problem.empty() ? "" : " " + problem);
      // On the simulator, the cost model's predicted times at the full sizes.
      const std::string us = simulate ? "predicted us" : "median us";
      // Best and worst point per size (the paper's Figures 6 and 10 as tables).
      TextTable bw(what + ": best and worst point per " + f.sizeParam + " (* virtualized)",
                   {f.sizeParam, "best", "threads", us, "GB/s", "worst", "threads", us, "GB/s",
                    "points ok/all"});
      // Per variant: the best time over thread counts at each size, and its thread count
      // (Figure 6's two tables in one).
      std::set<nlohmann::json> sizes;
      std::map<std::string, std::map<nlohmann::json, const nlohmann::json*>> bestOf, worstOf;
      for (const auto& [size, js] : bySize) {
        const nlohmann::json *best = nullptr, *worst = nullptr;
        size_t ok = 0;
        for (const nlohmann::json* j : js) {
          if (!timedOk(*j)) continue;
          ++ok;
          if (!best || medianUs(*j) < medianUs(*best)) best = j;
          if (!worst || medianUs(*j) > medianUs(*worst)) worst = j;
          const std::string label = (*j)["label"];
          const nlohmann::json*& b = bestOf[label][size];
          if (!b || medianUs(*j) < medianUs(*b)) b = j;
          const nlohmann::json*& w = worstOf[label][size];
          if (!w || medianUs(*j) > medianUs(*w)) w = j;
          sizes.insert(size);
        }
        if (!best) continue;
        bw.add({size.dump(), (*best)["label"], threadsText(*best), fixed(medianUs(*best), 1),
                gbpsText(*best), (*worst)["label"], threadsText(*worst), fixed(medianUs(*worst), 1),
                gbpsText(*worst), std::to_string(ok) + "/" + std::to_string(js.size())});
      }
      if (sizes.empty()) continue;
      bw.print(markdown);
      std::vector<std::string> head{"variant"};
      for (const nlohmann::json& z : sizes) head.push_back(f.sizeParam + " " + z.dump());
      TextTable fig6(
          what + ": per variant, the best " + us + " over thread counts (threads; * virtualized)",
          head);
      TextTable worstT(
          what + ": per variant, the worst " + us + " over thread counts (threads; * virtualized)",
          head);
      for (const auto& [label, cells] : bestOf) {
        std::vector<std::string> row{label}, wrow{label};
        for (const nlohmann::json& z : sizes) {
          const auto b = cells.find(z);
          row.push_back(b == cells.end() ? "-"
                                         : fixed(medianUs(*b->second), 1) + " (" +
                                               threadsText(*b->second) + ")");
          const auto w = worstOf[label].find(z);
          wrow.push_back(w == worstOf[label].end() ? "-"
                                                   : fixed(medianUs(*w->second), 1) + " (" +
                                                         threadsText(*w->second) + ")");
        }
        fig6.add(row);
        worstT.add(wrow);
      }
      fig6.print(markdown);
      worstT.print(markdown);
    }
  }
}

}  // namespace tuning
