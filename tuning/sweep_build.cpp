// Building points ahead of their runs (see sweep_build.hpp), and generatePoint (sweep.hpp).
#include "sweep_build.hpp"

#include <algorithm>
#include <exception>
#include <obsidian/report_json.hpp>
#include <utility>

#include "sweep.hpp"

namespace tuning {

namespace detail {

using obsidian::Error;

namespace {

// A kernel as a point's line describes it: its name, launch shape, shared memory and registers.
nlohmann::json kernelSummary(const Kernel& k) {
  const nlohmann::json r = toJson(k.report());
  nlohmann::json j;
  for (const char* key : {"name", "threadsPerBlock", "sharedBytes", "gridBlocks", "barriers",
                          "registers", "spillStoreBytes", "spillLoadBytes", "stackBytes"}) {
    j[key] = r[key];
  }
  return j;
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

}  // namespace

Built buildPoint(const Point& p, bool compile, const Target& target) {
  Built b;
  const auto t0 = Clock::now();
  try {
    b.generated = generate(*p.family, p.params, target.mode == mode(true));
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

Builder::Builder(const std::vector<const Point*>& points, unsigned jobs, bool compile,
                 Target target)
    : points_(points), target_(std::move(target)), compile_(compile), slots_(points.size()) {
  for (auto& s : slots_) futures_.push_back(s.get_future());
  start_ = Clock::now();
  const unsigned n = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(points.size())));
  for (unsigned t = 0; t < n; ++t) {
    workers_.emplace_back([this](std::stop_token stop) { work(stop); });
  }
}

Builder::~Builder() {
  for (auto& w : workers_) w.request_stop();
}

std::optional<Built> Builder::get(size_t i, const std::function<bool()>& cancelled) {
  while (cancelled &&
         futures_[i].wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
    if (cancelled()) return std::nullopt;
  }
  return futures_[i].get();
}

void Builder::work(std::stop_token stop) {
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

}  // namespace detail

nlohmann::json generatePoint(const Point& p, bool simulate) {
  nlohmann::json j{{"family", p.family->name}, {"key", p.key}, {"params", p.params}};
  nlohmann::json kernels = nlohmann::json::array();
  for (const Kernel& k : generate(*p.family, p.params, simulate).kernels) {
    kernels.push_back({{"name", k.name()}, {"cuda", k.cuda()}, {"report", toJson(k.report())}});
  }
  j["kernels"] = kernels;
  return j;
}

}  // namespace tuning
