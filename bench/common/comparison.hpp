// What the mains of the CUB comparisons (bench/reduce, bench/scan) share: the command-line
// options both have, the device check, the input sizes, a row of the table (ours, CUB and the
// roofline kernel at one size) printed and as JSON, and the JSON file with the exit code. Each
// main keeps only its own problem: its kernels, its runs, its roofline kernel.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu_timer.hpp"

namespace bench {

// Elements of each random input (1 GiB of u32): small sizes rotate over disjoint slices of it.
constexpr size_t kTotal = size_t{1} << 28;
// The exit code of a benchmark that had no device to measure (CTest's skip code).
constexpr int kSkipped = 77;

struct CommonOptions {
  bool quick = false;  // small sizes only
  size_t only = 0;     // this size alone
  int runs = 30;       // timed runs per measurement
  std::string jsonPath;
};

// --quick, --only and --runs, in that order. (Configurations are swept by obsidian-tune's
// device_* families, not here.)
void addCommonOptions(CLI::App& app, CommonOptions& options);
// --json, after the benchmark's own options (so --help lists it last).
void addJsonOption(CLI::App& app, CommonOptions& options);

// Says so and returns false where there is no CUDA device (the main returns kSkipped); else
// prints the device's name and SM count and returns true.
bool deviceOrSkip();

// The sizes of the main table (--quick: two small ones; --only: that one alone).
std::vector<size_t> tableSizes(const CommonOptions& options);
// The sizes of the second table (segmented reductions, the three-kernel scan).
std::vector<size_t> largeSizes(bool quick);

// One row: our kernel and CUB's on the same inputs, and the roofline kernel on as many bytes.
struct Row {
  std::string kind, type;
  size_t n = 0;
  Timing ours, cub, roof;
  bool oursOk = true, cubOk = true;
  std::string config;
};

// How a benchmark shows its rows.
struct Table {
  const char* header;      // the column heads, with a newline
  int kindWidth;           // width of the first column
  size_t bytesPerElement;  // bytes an element moves: read (4), or read and written (8)
  const char* roofKey;     // the roofline kernel's key in the JSON ("read", "copy")
};

// The row on one line of stdout (flushed: long runs show progress), against `roofline` GB/s.
void print(const Table& table, const Row& r, double roofline);
nlohmann::json toJson(const Table& table, const Row& r);

// Writes {"device", "roofline_gbps", "rows"} to options.jsonPath (if given) and returns the
// exit code: 0 when every row's results, ours and CUB's, were right.
int finish(const CommonOptions& options, double roofline, const nlohmann::json& rows);

}  // namespace bench
