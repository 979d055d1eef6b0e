// The shared part of the CUB comparisons' mains (see comparison.hpp).
#include "comparison.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <obsidian/runtime.hpp>
#include <obsidian/timing.hpp>

#include "bench_data.hpp"

namespace bench {

Timing timeGpu(const std::function<void(int)>& work, int runs, int warmup) {
  gpu::TimingOptions options;
  options.runs = runs;
  options.warmup = warmup;
  const gpu::Timing t = gpu::time(work, options);
  checkCuda("timed runs");
  return Timing{t.medianMs, t.minMs, t.maxMs, t.runs()};
}

void addCommonOptions(CLI::App& app, CommonOptions& options) {
  app.add_flag("--quick", options.quick, "small sizes only");
  app.add_option("--only", options.only, "this size alone (e.g. for a profiler)");
  app.add_option("--runs", options.runs, "timed runs per measurement (median)")
      ->check(CLI::Range(20, 1000));
}

void addJsonOption(CLI::App& app, CommonOptions& options) {
  app.add_option("--json", options.jsonPath, "write the rows as JSON here");
}

bool deviceOrSkip() {
  if (!gpu::available()) {
    std::cout << "no CUDA device (" << gpu::unavailableReason() << "): nothing to measure\n";
    return false;
  }
  std::cout << "device: " << deviceName() << " (" << multiprocessors() << " SMs)\n";
  return true;
}

std::vector<size_t> tableSizes(const CommonOptions& options) {
  if (options.only) return {options.only};
  if (options.quick) return {size_t{1} << 20, 1000003};
  return {size_t{1} << 20, size_t{1} << 22, size_t{1} << 24, size_t{1} << 26,
          size_t{1} << 28, 30000001,        100000007};
}

std::vector<size_t> largeSizes(bool quick) {
  return quick ? std::vector<size_t>{size_t{1} << 20}
               : std::vector<size_t>{size_t{1} << 24, size_t{1} << 28};
}

void print(const Table& table, const Row& r, double roofline) {
  const size_t bytes = r.n * table.bytesPerElement;
  std::printf("%-*s %-4s %11zu %10.2f %10.2f %7.3f %8.0f %8.0f %6.1f%%  %s%s  [%s]\n",
              table.kindWidth, r.kind.c_str(), r.type.c_str(), r.n, r.ours.medianMs * 1e3,
              r.cub.medianMs * 1e3, r.ours.medianMs / r.cub.medianMs, gbps(bytes, r.ours.medianMs),
              gbps(bytes, r.roof.medianMs), 100 * gbps(bytes, r.ours.medianMs) / roofline,
              r.oursOk ? "ok" : "WRONG", r.cubOk ? "" : " (CUB WRONG)", r.config.c_str());
  std::fflush(stdout);
}

nlohmann::json toJson(const Table& table, const Row& r) {
  return nlohmann::json{{"kind", r.kind},
                        {"type", r.type},
                        {"n", r.n},
                        {"ours", timingJson(r.ours)},
                        {"cub", timingJson(r.cub)},
                        {table.roofKey, timingJson(r.roof)},
                        {"ours_over_cub", r.ours.medianMs / r.cub.medianMs},
                        {"ours_gbps", gbps(r.n * table.bytesPerElement, r.ours.medianMs)},
                        {"ours_ok", r.oursOk},
                        {"cub_ok", r.cubOk},
                        {"config", r.config}};
}

int finish(const CommonOptions& options, double roofline, const nlohmann::json& rows) {
  if (!options.jsonPath.empty()) {
    std::ofstream(options.jsonPath)
        << nlohmann::json{{"device", deviceName()}, {"roofline_gbps", roofline}, {"rows", rows}}
               .dump(2)
        << "\n";
  }
  bool ok = true;
  for (const nlohmann::json& r : rows) {
    ok = ok && r["ours_ok"].get<bool>() && r["cub_ok"].get<bool>();
  }
  return ok ? 0 : 1;
}

}  // namespace bench
