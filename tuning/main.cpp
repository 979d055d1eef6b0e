// obsidian-tune: sweeps a search space of kernel variants (see README.md in this folder).
//
//   obsidian-tune SPACE.json [-o results.jsonl] [--simulate] [--jobs N] [--runs N]
//                 [--min-time-ms T] [--max-points N] [--prune [--prune-factor F]]
//                 [--summary FILE] [--no-progress] [--tables-only] [--markdown]
//                 [--list-families] [--policies] [--shard i/N] [--merge FILE...]
//                 [--devices all|0,1,...]
#include <CLI/CLI.hpp>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <obsidian/device/catalogue.hpp>
#include <obsidian/runtime.hpp>

#include "devices.hpp"
#include "space.hpp"
#include "sweep.hpp"

namespace {
// The first SIGINT or SIGTERM (Ctrl-C, scancel) asks the sweep to stop after the point it is
// running (SweepOptions::cancelled), leaving whole lines; the handler is then the default
// again, so a second one ends the process at once.
volatile std::sig_atomic_t stopSignal = 0;
extern "C" void onStopSignal(int signal) {
  if (stopSignal == 0) stopSignal = signal;  // the exit code tells the first
}
// A signal the process was started ignoring (a shell's background job) stays ignored.
void stopOnSignals(tuning::SweepOptions& o) {
  struct sigaction action {};
  action.sa_handler = onStopSignal;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGINT, SIGTERM}) {
    struct sigaction before {};
    sigaction(signal, nullptr, &before);
    if (before.sa_handler != SIG_IGN) sigaction(signal, &action, nullptr);
  }
  o.cancelled = [] { return stopSignal != 0; };
}
// 0 when the tables reached standard output; else says so and returns 2 (a full disk, a
// closed pipe: not a silent success).
int tablesWritten() {
  std::cout.flush();
  if (std::cout) return 0;
  std::cerr << "obsidian-tune: cannot write the tables to standard output\n";
  return 2;
}
// An interrupted sweep's exit code: the shell's for the signal (130 for SIGINT).
int interruptedExit() {
  std::cerr << "obsidian-tune: interrupted (signal " << stopSignal << ")\n";
  return 128 + stopSignal;
}

// One policy table: each row's architecture, the command that measured it and the figure.
// The catalogue's policy tables (obsidian/device/catalogue.hpp): each algorithm's fields, then
// its rows with the command and the measurement behind each.
void printPolicies() {
  for (const obsidian::device::AlgorithmInfo& a : obsidian::device::catalogue()) {
    std::cout << a.name << " (" << a.header << "): " << a.summary << "\n  fields:";
    for (const obsidian::device::FieldInfo& f : a.fields) std::cout << " " << f.name;
    std::cout << "\n";
    for (const obsidian::device::RowInfo& row : a.rows) {
      std::cout << "  " << (row.sm == 0 ? std::string("fallback") : "sm_" + std::to_string(row.sm))
                << ", " << row.problem << ": " << row.policy << "\n    " << row.command << "\n    "
                << row.measured << "\n";
    }
  }
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "obsidian-tune: sweep kernel variants x threads per block x sizes, compiled in parallel, "
      "every result checked against a reference, one JSON line per point"};
  std::string spacePath;
  tuning::SweepOptions o;
  std::string shard, devices;
  std::vector<std::string> merge;
  bool list = false, policies = false, tablesOnly = false, markdown = false, noProgress = false,
       noCompile = false;
  app.add_option("space", spacePath, "the search space (JSON; see tuning/README.md)");
  app.add_option("-o,--output", o.output,
                 "results file, one JSON line per point; an existing file is resumed "
                 "(default: the space's name with .jsonl, or .sim.jsonl with --simulate)");
  app.add_flag("--simulate", o.simulate,
               "verify every point on the CPU simulator (sizes capped small); no timings");
  app.add_flag("--no-compile", noCompile,
               "with --simulate: skip NVRTC (no register counts; faster)");
  app.add_option("-j,--jobs", o.jobs,
                 "compile threads (default: every core; on the GPU, every core but one)");
  app.add_option("--runs", o.runs, "timed runs per point, at least (median reported)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--warmup", o.warmup, "untimed runs before timing")->check(CLI::Range(0, 1000));
  app.add_option("--min-time-ms", o.minTimeMs,
                 "timed GPU time per point, at least (more runs for short kernels)")
      ->check(CLI::Range(0.0, 60000.0));
  app.add_option("--max-points", o.maxPoints,
                 "run at most this many points not yet in the results file, then stop");
  app.add_flag("--prune", o.prune,
               "skip points whose occupancy predicts they cannot beat their group's best");
  app.add_option("--prune-factor", o.pruneFactor,
                 "prune a point predicted this many times slower than the best so far")
      ->check(CLI::Range(1.0, 1000.0));
  app.add_option("--summary", o.summary, "also write the sweep's summary (JSON) here");
  app.add_flag("--no-progress", noProgress, "no progress bar (default: on a terminal)");
  app.add_flag("--tables-only", tablesOnly, "print the tables of the results file; run nothing");
  app.add_flag("--markdown", markdown, "print the tables as Markdown");
  app.add_option("--shard", shard,
                 "run only shard i of N (0-based) of the space's points: contiguous slices, for a "
                 "job array across machines (see README.md)");
  app.add_option("--merge", merge,
                 "merge these shards' results files into the output (-o) in the space's order, "
                 "print the tables; exit 1 when a point of the space is missing")
      ->expected(1, -1);
  app.add_option("--devices", devices,
                 "spread the points over GPUs of this host: all, or device numbers (0,1): one "
                 "worker process per device, results merged into the output (see README.md)");
  app.add_flag("--list-families", list, "list the kernel families and their parameters");
  app.add_flag("--policies", policies,
               "print the device algorithms' policy tables, with the command and the "
               "measurement behind each row");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  o.compile = !noCompile;
  if (noProgress) o.progress = 0;

  try {
    if (policies) {
      printPolicies();
      return 0;
    }
    if (list) {
      for (const tuning::Family& f : tuning::families()) {
        if (f.testOnly) continue;
        std::cout << f.name << ": " << f.description << "\n";
        for (const tuning::ParamSpec& p : f.params) {
          std::cout << "  " << p.name << ": " << p.help;
          if (p.kind == tuning::ParamSpec::Kind::Choice) {
            std::cout << " (";
            for (size_t i = 0; i < p.choices.size(); ++i)
              std::cout << (i ? ", " : "") << p.choices[i];
            std::cout << ")";
          } else {
            std::cout << " [" << p.min << ", " << p.max << "]";
          }
          if (!p.defaultValue.is_null()) std::cout << "; default " << p.defaultValue.dump();
          std::cout << "\n";
        }
      }
      return 0;
    }
    if (spacePath.empty()) {
      std::cerr << "obsidian-tune: give a space file (see --help)\n";
      return 2;
    }
    if (o.output.empty()) {
      std::string stem = spacePath;
      if (stem.size() > 5 && stem.ends_with(".json")) stem.resize(stem.size() - 5);
      const size_t slash = stem.find_last_of('/');
      if (slash != std::string::npos) stem = stem.substr(slash + 1);
      if (!shard.empty() && merge.empty()) {
        const auto [i, n] = tuning::parseShard(shard);
        stem += ".shard" + std::to_string(i) + "of" + std::to_string(n);
      }
      o.output = stem + (o.simulate ? ".sim.jsonl" : ".jsonl");
    }
    if (tablesOnly) {
      tuning::printTables(o.output, o.simulate, markdown, true);
      return tablesWritten();
    }
    std::vector<tuning::Point> points = tuning::loadSpace(spacePath, o.simulate);
    if (!merge.empty()) {
      if (!shard.empty()) throw obsidian::Error("--merge and --shard go in separate commands");
      const tuning::MergeReport r = tuning::mergeResults(merge, o.output, points, o.simulate);
      std::cout << "merged " << merge.size() << " files into " << o.output << ": " << r.lines
                << " lines, " << r.missing.size() << " of " << points.size() << " points missing, "
                << r.foreign.size() << " not in the space\n";
      for (const std::string& k : r.missing) std::cout << "  missing: " << k << "\n";
      for (const std::string& k : r.foreign) std::cout << "  not in the space: " << k << "\n";
      tuning::printTables(o.output, o.simulate, markdown);
      if (tablesWritten() != 0) return 2;
      return r.missing.empty() && r.foreign.empty() ? 0 : 1;
    }
    if (!devices.empty()) {
      if (o.simulate) {
        throw obsidian::Error(
            "--devices spreads points over GPUs; --simulate runs them on the CPU (use --jobs)");
      }
      if (!shard.empty()) throw obsidian::Error("--devices and --shard go in separate commands");
      const std::vector<int> ordinals = tuning::parseDevices(devices, obsidian::gpu::deviceCount(),
                                                             obsidian::gpu::unavailableReason());
      stopOnSignals(o);
      const tuning::SweepSummary s = tuning::runOnDevices(
          std::filesystem::read_symlink("/proc/self/exe").string(), spacePath, o, ordinals, points);
      if (s.interrupted) return interruptedExit();
      tuning::printTables(o.output, false, markdown);
      if (tablesWritten() != 0) return 2;
      return s.wrong == 0 && s.errors == 0 ? 0 : 1;
    }
    if (!shard.empty()) {
      const auto [i, n] = tuning::parseShard(shard);
      points = tuning::shardOf(points, i, n);
    }
    stopOnSignals(o);
    const tuning::SweepSummary s = tuning::runSweep(points, o);
    if (s.interrupted) return interruptedExit();
    tuning::printTables(o.output, o.simulate, markdown);
    if (tablesWritten() != 0) return 2;
    // A wrong result or an error fails the sweep; skipped and pruned points do not.
    return s.wrong == 0 && s.errors == 0 ? 0 : 1;
  } catch (const obsidian::Error& e) {
    std::cerr << "obsidian-tune: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "obsidian-tune: internal error: " << e.what() << "\n";
    return 3;
  }
}
