// obsidian-tune --devices (devices.hpp): worker processes, one per device, and the merge.
#include "devices.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "space.hpp"

extern char** environ;

namespace tuning {

using obsidian::Error;

std::vector<int> parseDevices(const std::string& spec, int available, const std::string& whyNone) {
  std::vector<int> devices;
  const auto none = [&] {
    if (available <= 0) throw Error("--devices " + spec + ": no CUDA device (" + whyNone + ")");
  };
  if (spec == "all") {
    none();
    for (int d = 0; d < available; ++d) devices.push_back(d);
    return devices;
  }
  std::set<int> seen;
  std::stringstream in(spec);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.empty() || part.size() > 4 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      throw Error("--devices " + spec +
                  ": expected \"all\" or device numbers separated by commas (e.g. 0,1)");
    }
    const int d = std::stoi(part);
    if (!seen.insert(d).second) throw Error("--devices " + spec + ": device " + part + " twice");
    devices.push_back(d);
  }
  if (devices.empty() || spec.back() == ',') {
    throw Error("--devices " + spec +
                ": expected \"all\" or device numbers separated by commas (e.g. 0,1)");
  }
  none();
  for (int d : devices) {
    if (d >= available) {
      throw Error("--devices " + spec + ": no device " + std::to_string(d) + "; this host has " +
                  std::to_string(available) + " (numbered from 0)");
    }
  }
  return devices;
}

namespace {

struct Worker {
  int device = 0;
  std::string results, summary, log;
  pid_t pid = -1;
  int exitCode = -1;
};

std::string lastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

// What CUDA_VISIBLE_DEVICES must say for a worker to see device `ordinal` as this process
// numbers it: the ordinal-th entry of this process's own list where it has one (a scheduler's
// "2,3", or GPU UUIDs), else the ordinal.
std::string visibleDevice(int ordinal) {
  const char* inherited = std::getenv("CUDA_VISIBLE_DEVICES");
  if (inherited == nullptr || *inherited == '\0') return std::to_string(ordinal);
  std::stringstream in(inherited);
  std::string entry;
  for (int i = 0; std::getline(in, entry, ','); ++i) {
    if (i == ordinal) return entry;
  }
  throw Error("--devices: device " + std::to_string(ordinal) +
              " is not in CUDA_VISIBLE_DEVICES=" + inherited);
}

// Starts `args` seeing only `device`, its output to `log`.
pid_t spawn(const std::vector<std::string>& args, int device, const std::string& log) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error("--devices: cannot write the log " + log + ": " + std::strerror(errno));
  ::close(fd);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) env.emplace_back(*e);
  }
  env.push_back("CUDA_VISIBLE_DEVICES=" + visibleDevice(device));
  std::vector<char*> argv, envp;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw Error("--devices: cannot start " + args[0] + ": " + std::strerror(rc));
  }
  return pid;
}

double number(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

}  // namespace

SweepSummary runOnDevices(const std::string& tool, const std::string& spacePath,
                          const SweepOptions& o, const std::vector<int>& devices,
                          const std::vector<Point>& points) {
  const auto start = std::chrono::steady_clock::now();
  const size_t n = devices.size();
  // The outputs checked before any worker starts: the summary's directory must exist; the
  // results file's (where the workers' files and logs go) is made, as a sweep makes it.
  if (!o.summary.empty()) checkWritable(o.summary, "the summary file");
  {
    const std::filesystem::path parent = std::filesystem::path(o.output).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) {
      throw Error("cannot write the results file " + o.output + ": cannot make its directory " +
                  parent.string() + ": " + ec.message());
    }
  }
  // Each worker leaves a core to its timing thread and compiles on its share of the rest.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned jobs =
      o.jobs ? o.jobs
             : std::max(1u, static_cast<unsigned>((cores - std::min<size_t>(cores, n)) / n));
  std::string stem = o.output;
  if (stem.ends_with(".jsonl")) stem.resize(stem.size() - 6);
  std::vector<Worker> workers(n);
  for (size_t k = 0; k < n; ++k) {
    Worker& w = workers[k];
    w.device = devices[k];
    const std::string tag = ".device" + std::to_string(w.device);
    w.results = stem + tag + ".jsonl";
    w.summary = stem + tag + ".summary.json";
    w.log = stem + tag + ".log";
    std::vector<std::string> args = {tool,
                                     spacePath,
                                     "-o",
                                     w.results,
                                     "--summary",
                                     w.summary,
                                     "--no-progress",
                                     "--shard",
                                     std::to_string(k) + "/" + std::to_string(n),
                                     "--jobs",
                                     std::to_string(jobs),
                                     "--runs",
                                     std::to_string(o.runs),
                                     "--warmup",
                                     std::to_string(o.warmup),
                                     "--min-time-ms",
                                     std::to_string(o.minTimeMs)};
    if (o.maxPoints) {
      args.push_back("--max-points");
      args.push_back(std::to_string(o.maxPoints));
    }
    if (o.prune) {
      args.push_back("--prune");
      args.push_back("--prune-factor");
      args.push_back(std::to_string(o.pruneFactor));
    }
    std::filesystem::remove(w.summary);
    try {
      w.pid = spawn(args, w.device, w.log);
    } catch (const Error&) {
      for (size_t j = 0; j < k; ++j) {  // the workers started: stopped and reaped
        ::kill(workers[j].pid, SIGTERM);
        while (waitpid(workers[j].pid, nullptr, 0) < 0 && errno == EINTR) {
        }
      }
      throw;
    }
    std::cerr << "device " << w.device << ": shard " << k << "/" << n << " of " << points.size()
              << " points, " << jobs << " compile threads, log " << w.log << "\n";
  }
  std::string failed;
  bool forwarded = false;  // the stop signal passed on to the workers
  const auto cancelled = [&] { return o.cancelled && o.cancelled(); };
  for (Worker& w : workers) {
    int status = 0;
    pid_t got = -1;
    while ((got = waitpid(w.pid, &status, 0)) < 0 && errno == EINTR) {
      // Stopping: each worker stops after its point, as a sweep does. A terminal's Ctrl-C has
      // reached the workers too (one process group), and a worker's second SIGINT ends it at
      // once (SA_RESETHAND), so the stop is passed on as SIGTERM, whose handler is separate:
      // a worker gets it once whether or not the terminal's SIGINT reached it.
      if (cancelled() && !forwarded) {
        for (const Worker& other : workers) ::kill(other.pid, SIGTERM);
        forwarded = true;
      }
    }
    w.exitCode = got < 0               ? 255
                 : WIFEXITED(status)   ? WEXITSTATUS(status)
                 : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                       : 255;
    // 0: every point fine; 1: a point wrong or failed (in the results); 128 + a signal: stopped
    // by one, its file complete so far, when this run is stopping too; else the worker failed.
    const bool stopped = cancelled() && w.exitCode > 128;
    if (w.exitCode > 1 && !stopped) {
      failed += "\n  device " + std::to_string(w.device) + " (exit " + std::to_string(w.exitCode) +
                "): " + lastLine(w.log);
    }
  }
  if (!failed.empty()) throw Error("--devices: a worker failed (see its log):" + failed);

  // An existing output's lines are kept, unless a worker ran the point again.
  std::vector<std::string> files;
  const std::string before = stem + ".before.jsonl";
  std::error_code ec;
  const bool hadOutput = std::filesystem::file_size(o.output, ec) > 0 && !ec;
  if (hadOutput) {
    std::filesystem::copy_file(o.output, before, std::filesystem::copy_options::overwrite_existing);
    files.push_back(before);
  }
  for (const Worker& w : workers) {
    // (a worker stopped before its sweep began has no file)
    if (!cancelled() || std::filesystem::exists(w.results)) files.push_back(w.results);
  }
  const MergeReport merged = mergeResults(files, o.output, points, false);
  if (hadOutput) std::filesystem::remove(before, ec);

  // The whole run: every worker's counts and times added up, the wall time this process's.
  SweepSummary s;
  nlohmann::json perDevice = nlohmann::json::array();
  std::cout << "\nsweep of " << points.size() << " points on " << n << " devices into " << o.output
            << " (" << merged.lines << " lines merged, " << merged.missing.size()
            << " points missing)\n";
  for (const Worker& w : workers) {
    nlohmann::json j;
    std::ifstream in(w.summary);
    try {
      in >> j;
    } catch (const nlohmann::json::exception&) {
      if (cancelled()) continue;  // stopped before its sweep began
      throw Error("--devices: device " + std::to_string(w.device) + " left no readable summary " +
                  w.summary + " (see " + w.log + ")");
    }
    s.points += static_cast<size_t>(number(j, "points"));
    s.resumed += static_cast<size_t>(number(j, "resumed"));
    s.ran += static_cast<size_t>(number(j, "ran"));
    s.ok += static_cast<size_t>(number(j, "ok"));
    s.wrong += static_cast<size_t>(number(j, "wrong"));
    s.skipped += static_cast<size_t>(number(j, "skipped"));
    s.pruned += static_cast<size_t>(number(j, "pruned"));
    s.errors += static_cast<size_t>(number(j, "errors"));
    s.gpuRunSeconds += number(j, "gpuRunSeconds");
    s.deviceInitSeconds += number(j, "deviceInitSeconds");
    s.waitSeconds += number(j, "waitForKernelsSeconds");
    s.dataSeconds += number(j, "dataSeconds");
    s.checkSeconds += number(j, "checkSeconds");
    s.loadSeconds += number(j, "loadModuleSeconds");
    s.predictSeconds += number(j, "predictSeconds");
    s.kernels += static_cast<size_t>(number(j, "kernels"));
    s.nvrtcCompiles += static_cast<size_t>(number(j, "nvrtcCompiles"));
    s.jobs += static_cast<unsigned>(number(j, "compileThreads"));
    std::cout << "  device " << w.device << " (" << j.value("device", std::string("?"))
              << "): " << number(j, "ran") << " points, ok " << number(j, "ok") << ", wall "
              << number(j, "wallSeconds") << " s, GPU runs " << number(j, "gpuRunSeconds")
              << " s\n";
    perDevice.push_back({{"ordinal", w.device}, {"summary", j}});
  }
  s.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "  ok " << s.ok << ", wrong " << s.wrong << ", skipped " << s.skipped << ", pruned "
            << s.pruned << ", errors " << s.errors << "; wall " << s.wallSeconds << " s, GPU runs "
            << s.gpuRunSeconds << " s over the devices\n";
  for (const std::string& k : merged.missing) std::cout << "  missing: " << k << "\n";
  for (const std::string& k : merged.foreign) std::cout << "  not in the space: " << k << "\n";
  // A point no worker finished fails the run, as --merge does.
  s.errors += merged.missing.size() + merged.foreign.size();
  s.interrupted = cancelled();
  if (!o.summary.empty()) {
    nlohmann::json j = toJson(s);
    j["mode"] = "gpu";
    j["hardwareThreads"] = cores;
    j["devices"] = perDevice;
    writeFile(o.summary, j.dump(2) + "\n", "the summary file");
  }
  return s;
}

}  // namespace tuning
