// The sweep: every point of a space generated and compiled in parallel (a thread pool over the
// kernel cache), then run one after the other on the GPU (timed: CUDA events after warm-up,
// median of at least `runs` runs, inputs rotated beyond the L2) or on the simulator, each
// result checked against the family's reference. One JSON line per point is appended to the
// results file as soon as the point is done, so an interrupted sweep resumes where it stopped.
//
// This is the sweep's interface; its pieces, one job each (their internal headers, namespace
// tuning::detail, are for one another): sweep.cpp drives a sweep (runSweep), sweep_session.cpp
// runs one point at a time (PointSession), sweep_build builds points ahead on the compile
// threads (and generatePoint), sweep_point runs one built point, sweep_measure times it on the
// GPU or predicts its time, sweep_prune decides --prune, sweep_target opens the device,
// sweep_progress draws the progress bar, sweep_results reads, resumes and appends results files
// (readResults, writeFile, checkWritable), sweep_merge merges them (mergeResults),
// sweep_summary prints the summary (toJson), sweep_tables prints the tables (printTables), and
// sweep_common.hpp holds their small shared helpers.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "space.hpp"

namespace tuning {

struct SweepOptions {
  std::string output;     // the JSONL results file (appended to; resumed from)
  bool simulate = false;  // the simulator instead of the GPU: no timings
  bool compile = true;    // NVRTC-compile every kernel (registers in the report)
  unsigned jobs = 0;      // compile threads; 0: every core
  int warmup = 3;         // untimed runs before timing (the checked run the first of them)
  int runs = 20;          // timed runs at least (the median is reported)
  // and at least this much timed GPU time per point: about 800 runs of a 30 us kernel (stable
  // medians), and the ~0.5 ms each point spends outside its runs (module load, the check, its
  // line) stays under 5% of the sweep
  double minTimeMs = 25;
  size_t maxPoints = 0;    // run at most this many new points (0: all), then stop
  bool prune = false;      // skip points predicted not to beat the best of their group
  double pruneFactor = 2;  //   ... by more than this factor (see README.md)
  int progress = -1;       // progress bar: 1 on, 0 off, -1 when stderr is a terminal
  std::string summary;     // also write the summary as JSON here ("" : no)
  // Polled on the sweep's own thread between points and, while it waits for the compile
  // threads, every 50 ms: true stops the sweep there (Ctrl-C: obsidian-tune's SIGINT, the
  // Python module's signal check), every line written so far complete.
  std::function<bool()> cancelled;
};

struct SweepSummary {
  size_t points = 0, resumed = 0, ran = 0;
  size_t ok = 0, wrong = 0, skipped = 0, pruned = 0, errors = 0;
  double predictSeconds = 0;  // --prune: simulating slices of points for the cost model
  double wallSeconds = 0, gpuRunSeconds = 0;  // the whole sweep; warm-up and timed runs
  // Outside the GPU runs: initializing the driver and creating the device context, waiting for
  // the compile threads, inputs and references (made on the device, or read from the disk
  // store), the check of each point's first run (a warm-up run, among the GPU runs).
  double deviceInitSeconds = 0, waitSeconds = 0, dataSeconds = 0, checkSeconds = 0;
  double loadSeconds = 0;  // loading each point's module (and its occupancy)
  size_t kernels = 0, nvrtcCompiles = 0;
  double compileWallSeconds = 0;
  unsigned jobs = 0;
  bool interrupted = false;  // SweepOptions::cancelled stopped the sweep
};

// The summary as the --summary file holds it (without the mode and the device).
nlohmann::json toJson(const SweepSummary& s);

// Runs the sweep and prints its summary; throws obsidian::Error for unusable options (a results
// or summary file that cannot be written, no GPU without --simulate) and for a results file
// whose lines cannot be resumed (readResults). The results file's directory is made; the
// summary's must exist (checked before any point runs).
SweepSummary runSweep(const std::vector<Point>& points, const SweepOptions& options);

// One point at a time, as a script drives a search (the Python module, an Optuna study): run(p)
// generates and compiles p's kernels, runs p on the GPU (checked, then timed as a sweep times)
// or on the simulator (checked; counted; its GPU time predicted) and returns the line a sweep
// writes for it, appending it to options.output when that is set. Inputs and references are
// shared between runs, as in a sweep. Throws obsidian::Error without a GPU unless simulating,
// and after a CUDA error that may have left the context unusable.
class PointSession {
 public:
  explicit PointSession(SweepOptions options);
  ~PointSession();
  PointSession(const PointSession&) = delete;
  PointSession& operator=(const PointSession&) = delete;
  nlohmann::json run(const Point& p);
  // The runs so far, counted as a sweep counts them (wall and GPU time, data, checks).
  const SweepSummary& summary() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The kernels of p as generated for the simulator or the GPU: {family, key, params, kernels:
// [{name, cuda, report}]}. Throws obsidian::Error when they cannot be generated.
nlohmann::json generatePoint(const Point& p, bool simulate = false);

// The lines of a results file, one per point (a point's last line wins), of mode `mode` ("gpu"
// or "simulate"; "": every mode). A line that is not JSON (cut short by an interrupted run) is
// skipped. A JSON line that lacks a field, or holds one with the wrong type, is an
// obsidian::Error naming the file, the line and the field: every line needs family, mode, key,
// params and status; a `complete` one (as resume, merge and the tables read them) also label,
// threads, group and the family's size parameter. A file that does not exist is an Error when
// `mustExist`, else has no lines.
std::vector<nlohmann::json> readResults(const std::string& path, const std::string& mode,
                                        bool mustExist = true, bool complete = true);

// A sharded sweep's results files merged into one (obsidian-tune --merge): `output` written anew
// with one line per point in the space's order (then lines of points not in the space), each
// point's line the last of the files in their order, an "error" line never replacing another.
// Throws obsidian::Error when an input cannot be read (readResults), `output` is one of them or
// cannot be written.
struct MergeReport {
  size_t lines = 0;
  std::vector<std::string> missing;  // keys of `points` that no file holds (an unfinished shard)
  std::vector<std::string> foreign;  // keys in the files that are not points of the space
};
MergeReport mergeResults(const std::vector<std::string>& inputs, const std::string& output,
                         const std::vector<Point>& points, bool simulate);

// The tables of a results file: per problem, the best and worst point of every size, and per
// variant the best and the worst time over thread counts at every size (with the threads);
// aligned text, or Markdown. Throws obsidian::Error when the file cannot be read (readResults)
// and, with `requireLines`, when it holds no line of the mode (a mistaken --simulate, or none).
void printTables(const std::string& resultsPath, bool simulate, bool markdown = false,
                 bool requireLines = false);

// Writes `text` to `path`, replacing it; an obsidian::Error naming `what` and the path when it
// cannot be written (its directory missing, a full disk).
void writeFile(const std::string& path, const std::string& text, const std::string& what);
// Throws the Error writeFile would, before the work whose result goes there: the directory must
// exist and the file be writable. (The file is not left behind when it did not exist.)
void checkWritable(const std::string& path, const std::string& what);

}  // namespace tuning
