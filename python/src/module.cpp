// obsidian_tune._core: the tuning families, points, sweeps and one-point runs of tuning/ for
// Python (nanobind). Values cross as JSON text, which obsidian_tune/__init__.py turns into
// dicts and lists: the lines are the ones obsidian-tune writes, byte for byte the same format.
// Runs and sweeps release the GIL; obsidian::Error becomes obsidian_tune.Error. A sweep checks
// for signals between points (Ctrl-C stops it, its results file whole, and raises
// KeyboardInterrupt).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <iostream>
#include <obsidian/obsidian.hpp>

#include "sweep.hpp"

namespace nb = nanobind;

namespace {

using nlohmann::json;

json parse(const std::string& text, const char* what) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw obsidian::Error(std::string(what) + ": not valid JSON: " + e.what());
  }
}

json specJson(const tuning::ParamSpec& p) {
  json j{{"name", p.name}, {"help", p.help}, {"default", p.defaultValue}};
  if (p.kind == tuning::ParamSpec::Kind::Choice) {
    j["kind"] = "choice";
    j["choices"] = p.choices;
  } else {
    j["kind"] = "int";
    j["min"] = p.min;
    j["max"] = p.max;
  }
  return j;
}

std::string familiesJson() {
  json all = json::array();
  for (const tuning::Family& f : tuning::families()) {
    if (f.testOnly) continue;
    json params = json::array();
    for (const tuning::ParamSpec& p : f.params) params.push_back(specJson(p));
    all.push_back({{"name", f.name},
                   {"description", f.description},
                   {"params", params},
                   {"labelParams", f.labelParams},
                   {"threadsParam", f.threadsParam},
                   {"sizeParam", f.sizeParam}});
  }
  return all.dump();
}

json pointJson(const tuning::Point& p) {
  return {{"family", p.family->name}, {"key", p.key}, {"params", p.params}, {"full", p.full}};
}

std::string pointsJson(const std::string& space, bool simulate) {
  json all = json::array();
  for (const tuning::Point& p : tuning::parseSpace(parse(space, "space"), simulate)) {
    all.push_back(pointJson(p));
  }
  return all.dump();
}

std::string pointJsonOf(const std::string& family, const std::string& params, bool simulate) {
  return pointJson(tuning::makePoint(family, parse(params, "params"), simulate)).dump();
}

std::string generateJson(const std::string& family, const std::string& params, bool simulate) {
  return tuning::generatePoint(tuning::makePoint(family, parse(params, "params"), simulate),
                               simulate)
      .dump();
}

// The options of a sweep or a session, from {"output": ..., "runs": ..., ...}; unknown keys
// are errors, so a misspelt option is not silently ignored.
tuning::SweepOptions optionsOf(const std::string& text) {
  const json j = parse(text, "options");
  tuning::SweepOptions o;
  o.progress = 0;
  for (const auto& [k, v] : j.items()) {
    try {
      if (k == "output")
        o.output = v.get<std::string>();
      else if (k == "simulate")
        o.simulate = v.get<bool>();
      else if (k == "compile")
        o.compile = v.get<bool>();
      else if (k == "jobs")
        o.jobs = v.get<unsigned>();
      else if (k == "warmup")
        o.warmup = v.get<int>();
      else if (k == "runs")
        o.runs = v.get<int>();
      else if (k == "min_time_ms")
        o.minTimeMs = v.get<double>();
      else if (k == "max_points")
        o.maxPoints = v.get<size_t>();
      else if (k == "prune")
        o.prune = v.get<bool>();
      else if (k == "prune_factor")
        o.pruneFactor = v.get<double>();
      else if (k == "progress")
        o.progress = v.get<bool>() ? 1 : 0;
      else if (k == "summary")
        o.summary = v.get<std::string>();
      else {
        throw obsidian::Error(
            "unknown option \"" + k +
            "\"; options are output, simulate, compile, jobs, warmup, runs, min_time_ms, "
            "max_points, prune, prune_factor, progress, summary");
      }
    } catch (const json::type_error&) {
      throw obsidian::Error("option \"" + k + "\" has the wrong type: " + v.dump());
    }
  }
  if (o.runs < 1) throw obsidian::Error("option \"runs\" must be at least 1");
  if (o.warmup < 0) throw obsidian::Error("option \"warmup\" must be at least 0");
  return o;
}

std::string sweepJson(const std::string& space, const std::string& options, size_t shardIndex,
                      size_t shardCount) {
  tuning::SweepOptions o = optionsOf(options);
  if (o.output.empty()) throw obsidian::Error("a sweep needs an output file (option \"output\")");
  std::vector<tuning::Point> points = tuning::parseSpace(parse(space, "space"), o.simulate);
  points = tuning::shardOf(points, shardIndex, shardCount);
  // The sweep runs without the GIL, so Python's signal handlers cannot run until it returns:
  // the sweep polls this (on this thread, between points and while it waits for the compile
  // threads), which takes the GIL to run them. An exception they raise (KeyboardInterrupt)
  // stops the sweep after its current point and is raised once it has returned.
  std::exception_ptr raised;
  o.cancelled = [&raised] {
    if (!raised) {
      nb::gil_scoped_acquire held;
      if (PyErr_CheckSignals() != 0) raised = std::make_exception_ptr(nb::python_error());
    }
    return raised != nullptr;
  };
  tuning::SweepSummary summary;
  {
    nb::gil_scoped_release released;
    summary = tuning::runSweep(points, o);
  }
  if (raised) std::rethrow_exception(raised);
  return tuning::toJson(summary).dump();
}

// What read_results and the replays need of a line: its identity, status and times.
std::string resultsJson(const std::string& path, const std::string& mode) {
  const std::vector<json> lines = tuning::readResults(path, mode, true, false);
  return json(lines).dump();
}

// A PointSession owned by Python.
class Session {
 public:
  explicit Session(tuning::SweepOptions o) : simulate_(o.simulate), session_(std::move(o)) {}
  std::string run(const std::string& family, const std::string& params) {
    const tuning::Point p = tuning::makePoint(family, parse(params, "params"), simulate_);
    nb::gil_scoped_release released;
    const CompileCounter counted(nvrtcCompiles_);
    return session_.run(p).dump();
  }
  // PointSession's summary counts runs and times but not NVRTC compiles (runSweep counts those
  // from the kernel cache around a whole sweep), so they are counted here around each run;
  // its kernels are built on the calling thread, one compile thread.
  std::string summary() const {
    tuning::SweepSummary s = session_.summary();
    s.nvrtcCompiles = nvrtcCompiles_;
    s.jobs = 1;
    return tuning::toJson(s).dump();
  }

 private:
  // The kernel cache's misses (compiles with NVRTC) during its lifetime, added to `total` also
  // when the run throws. The cache is the process's: compiles another thread makes meanwhile
  // (a second Tuner used concurrently) count too.
  struct CompileCounter {
    explicit CompileCounter(size_t& total)
        : total(total), before(obsidian::KernelCache::global().stats().misses) {}
    ~CompileCounter() { total += obsidian::KernelCache::global().stats().misses - before; }
    CompileCounter(const CompileCounter&) = delete;
    CompileCounter& operator=(const CompileCounter&) = delete;
    size_t& total;
    uint64_t before;
  };

  bool simulate_;
  tuning::PointSession session_;
  size_t nvrtcCompiles_ = 0;
};

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "obsidian's design-space exploration (tuning/) for Python; see obsidian_tune";
  nb::exception<obsidian::Error>(m, "Error");
  m.def("families_json", &familiesJson);
  m.def("points_json", &pointsJson, nb::arg("space"), nb::arg("simulate"));
  m.def("point_json", &pointJsonOf, nb::arg("family"), nb::arg("params"), nb::arg("simulate"));
  m.def("generate_json", &generateJson, nb::arg("family"), nb::arg("params"), nb::arg("simulate"));
  m.def("sweep_json", &sweepJson, nb::arg("space"), nb::arg("options"), nb::arg("shard_index"),
        nb::arg("shard_count"));
  m.def("merge", [](const std::vector<std::string>& inputs, const std::string& output,
                    const std::string& space, bool simulate) {
    const std::vector<tuning::Point> points = tuning::parseSpace(parse(space, "space"), simulate);
    const tuning::MergeReport r = tuning::mergeResults(inputs, output, points, simulate);
    return json{{"lines", r.lines}, {"missing", r.missing}, {"foreign", r.foreign}}.dump();
  });
  m.def("read_results_json", &resultsJson, nb::arg("path"), nb::arg("mode"));
  m.def(
      "print_tables",
      [](const std::string& results, bool simulate, bool markdown) {
        tuning::printTables(results, simulate, markdown, true);
        std::cout.flush();  // before Python's own output
      },
      nb::arg("results"), nb::arg("simulate"), nb::arg("markdown") = false);
  nb::class_<Session>(m, "Session")
      .def("__init__",
           [](Session* s, const std::string& options) { new (s) Session(optionsOf(options)); })
      .def("run", &Session::run, nb::arg("family"), nb::arg("params"))
      .def("summary", &Session::summary);
}
