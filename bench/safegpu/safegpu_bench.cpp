// The contract-overhead benchmark (issue 18, item 4; SafeGPU, seed 003, Section 6.3 and Table
// 4): SafeGPU's benchmark programs (examples/safegpu/safegpu.hpp) on the GPU, each timed in one
// run on the same random data three ways: (a) its kernels captured without contracts, (b) with
// SafeGPU's contracts and a normal launch, which checks the preconditions (require) on the host
// (a launch always does: obsidian has no launch without them), (c) with the contracts and
// LaunchOptions::checked on every launch: the bounds-checked variant of each kernel, then a
// check kernel per postcondition (ensure). A checked launch synchronizes (before, to clear its
// violation record; after, to read it and each check's result), and that waiting is part of its
// time. The ratios (b)/(a) and (c)/(a) are printed beside the SafeGPU columns of the paper's
// Table 4 ("pre" and "pre & post"), and written as JSON. Every mode's result is checked.
//
// Usage: obsidian-bench-safegpu [--quick] [--runs N] [--json FILE]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <obsidian/timing.hpp>
#include <optional>
#include <random>

#include "../../examples/safegpu/safegpu.hpp"

namespace {

using namespace obsidian;
using nlohmann::json;
namespace reference = safegpu::reference;

// ------------------------------------------------------------------ the paper's Table 4
// SafeGPU's slowdown with contract checking against none (medians of ten runs of wall time, a
// Quadro K2000M), at the problem sizes 10^6, 10^7, 10^8 (elements; matrices are square); NaN
// where the paper has a dash. "full" adds class invariants, which obsidian kernels do not have.
struct PaperRatios {
  double pre, prePost, full;
};
struct PaperRow {
  const char* program;
  PaperRatios at[3];  // 10^6, 10^7, 10^8
};
constexpr double kDash = std::numeric_limits<double>::quiet_NaN();
constexpr PaperRow kPaper[] = {
    {"vector addition", {{0.95, 0.95, 0.95}, {1.02, 1.02, 1.02}, {1.06, 1.06, 1.06}}},
    {"dot product", {{1.01, 1.01, 1.01}, {1.10, 1.10, 1.10}, {0.95, 0.98, 0.98}}},
    {"matrix-matrix multiplication",
     {{0.99, 0.99, 0.99}, {kDash, kDash, kDash}, {kDash, kDash, kDash}}},
    {"Gaussian elimination", {{1.01, 1.09, 1.09}, {kDash, kDash, kDash}, {kDash, kDash, kDash}}},
    {"quicksort", {{1.01, 1.07, 1.07}, {1.02, 1.08, 1.09}, {kDash, kDash, kDash}}},
    {"matrix transposition", {{1.01, 1.11, 1.10}, {1.02, 1.12, 1.12}, {1.01, 1.14, 1.13}}},
};

// The paper's column for `elements`: the nearest power of ten of 10^6, 10^7, 10^8 (2^26, 6.7 x
// 10^7, is put beside 10^8), or none.
std::optional<int> paperColumn(double elements) {
  const double decade = std::round(std::log10(elements));
  if (decade < 6 || decade > 8) return std::nullopt;
  return static_cast<int>(decade) - 6;
}

std::optional<PaperRatios> paperRatios(const std::string& program, double elements) {
  const std::optional<int> column = paperColumn(elements);
  if (!column) return std::nullopt;
  for (const PaperRow& row : kPaper) {
    if (program == row.program && !std::isnan(row.at[*column].pre)) return row.at[*column];
  }
  return std::nullopt;
}

// ------------------------------------------------------------------ the programs
// One program at one size: its launches with or without contracts (on a Gpu backend, whose
// options say checked or not), the check of its last result ("" when right), and what sets its
// outputs to NaN first (so that each mode's check sees what that mode wrote).
struct Case {
  std::string program = {};    // its name in the table (the paper's for its six)
  std::string paperName = {};  // its row in Table 4, or ""
  std::string shape = {};
  double elements = 0;
  std::string contracts = {};  // what contracts it has, in SafeGPU's words
  size_t launches = 1;         // kernel launches per run
  std::function<void(const safegpu::Gpu&, bool contracts)> launch = {};
  std::function<std::string()> check = {};
  std::function<void()> poison = {};
};

// Random floats in [-1, 1), never zero.
std::vector<float> randomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) {
    do x = d(rng);
    while (x == 0.0f);
  }
  return v;
}

using Buffer = std::shared_ptr<gpu::DeviceBuffer<float>>;
Buffer device(const std::vector<float>& host) {
  return std::make_shared<gpu::DeviceBuffer<float>>(host);
}
Buffer device(size_t n) { return std::make_shared<gpu::DeviceBuffer<float>>(n); }

// Sets every element of the buffers to NaN (all bits set).
std::function<void()> poison(std::vector<Buffer> outputs) {
  return [outputs] {
    for (const Buffer& b : outputs) {
      b->fill(std::bit_cast<float>(0xFFFFFFFFu));
    }
  };
}

// Both kernels of a program: [0] without contracts, [1] with.
template <class F>
auto both(F make) {
  return std::make_shared<std::array<decltype(make(false)), 2>>(
      std::array<decltype(make(false)), 2>{make(false), make(true)});
}

std::string sizeName(size_t n) {
  if (n == 1000000) return "10^6";
  if (n == 10000000) return "10^7";
  if (n == size_t{1} << 26) return "2^26";
  return std::to_string(n);
}

std::string square(uint32_t n) { return std::to_string(n) + " x " + std::to_string(n); }

Case vectorAddition(size_t n) {
  const std::vector<float> a = randomFloats(n, 1), b = randomFloats(n, 2);
  const Buffer da = device(a), db = device(b), r = device(n);
  const auto k = both([](bool c) { return safegpu::plus(c); });
  return {.program = "vector addition",
          .paperName = "vector addition",
          .shape = sizeName(n),
          .elements = double(n),
          .contracts = "pre: other.count = count",
          .launch =
              [=](const safegpu::Gpu& run, bool c) {
                run((*k)[c], {std::as_const(*da), std::as_const(*db), *r});
              },
          .check = [=] { return r->download() == reference::plus(a, b) ? "" : "differs"; },
          .poison = poison({r})};
}

Case dotProduct(size_t n) {
  const std::vector<float> a = randomFloats(n, 3), b = randomFloats(n, 4);
  const Buffer da = device(a), db = device(b), part = device(safegpu::partialCount(n)),
               r = device(1);
  const auto k = both([](bool c) { return safegpu::dot(c); });
  return {.program = "dot product",
          .paperName = "dot product",
          .shape = sizeName(n),
          .elements = double(n),
          .contracts = "pre: a.count = b.count",
          .launches = 2,
          .launch =
              [=](const safegpu::Gpu& run, bool c) {
                (*k)[c](run, {std::as_const(*da), std::as_const(*db)}, *part, *r);
              },
          .check =
              [=] {
                const float got = r->download()[0];
                return safegpu::agrees(got, reference::dot(a, b)) ? ""
                                                                  : "got " + std::to_string(got);
              },
          .poison = poison({part, r})};
}

Case compwiseDivide(size_t n) {
  const std::vector<float> a = randomFloats(n, 5);
  std::vector<float> b = randomFloats(n, 6);
  for (float& x : b) x = (x < 0 ? -1.0f : 1.0f) * (0.5f + std::fabs(x));  // away from zero
  const Buffer da = device(a), db = device(b), r = device(n);
  const auto k = both([](bool c) { return safegpu::compwiseDivide(c); });
  return {
      .program = "compwise_divide (Listing 2)",
      .shape = sizeName(n),
      .elements = double(n),
      .contracts = "pre: other.count = count; post: Result * other = Current (range)",
      .launch =
          [=](const safegpu::Gpu& run, bool c) {
            run((*k)[c], {std::as_const(*da), std::as_const(*db), *r});
          },
      .check = [=] { return r->download() == reference::compwiseDivide(a, b) ? "" : "differs"; },
      .poison = poison({r})};
}

Case sort(size_t n) {
  const std::vector<float> a = randomFloats(n, 7);
  const auto want = std::make_shared<const std::vector<float>>(reference::sorted(a));
  const Buffer da = device(a), x = device(n), y = device(n);
  const auto k = both([](bool c) { return safegpu::Sort(c); });
  const auto result = std::make_shared<const gpu::DeviceBuffer<float>*>(nullptr);
  const size_t steps = safegpu::sortMasks(n).size();
  return {.program = "sort",
          .paperName = "quicksort",
          .shape = sizeName(n),
          .elements = double(n),
          .contracts = "pre: a.count > 0; post: Result.is_sorted (range); a bitonic network",
          .launches = steps,
          .launch = [=](const safegpu::Gpu& run,
                        bool c) { *result = &(*k)[c](run, std::as_const(*da), *x, *y); },
          .check = [=] { return (*result)->download() == *want ? "" : "differs"; },
          .poison = poison({x, y})};
}

Case transposition(uint32_t n) {
  const std::vector<float> m = randomFloats(size_t{n} * n, 8);
  const Buffer dm = device(m), r = device(size_t{n} * n);
  const auto k = both([](bool c) { return safegpu::transpose(c); });
  return {
      .program = "matrix transposition",
      .paperName = "matrix transposition",
      .shape = square(n),
      .elements = double(n) * n,
      .contracts = "post: Result.item(j, i) = item(i, j) (range)",
      .launch =
          [=](const safegpu::Gpu& run, bool c) {
            run((*k)[c], {std::as_const(*dm), n, n, n, *r});
          },
      .check = [=] { return r->download() == reference::transpose(m, n, n, n) ? "" : "differs"; },
      .poison = poison({r})};
}

Case transposedMatrixVector(uint32_t n) {
  const std::vector<float> m = randomFloats(size_t{n} * n, 9), v = randomFloats(n, 10);
  const Buffer dm = device(m), dv = device(v), r = device(n);
  const auto k = both([](bool c) { return safegpu::transposeRightMultiply(c); });
  return {.program = "transpose.right_multiply (Listing 1)",
          .shape = square(n),
          .elements = double(n) * n,
          .contracts = "pre: matrix.rows = vector.count",
          .launch =
              [=](const safegpu::Gpu& run, bool c) {
                run((*k)[c], {std::as_const(*dm), n, n, n, std::as_const(*dv), *r});
              },
          .check =
              [=] {
                const std::vector<float> got = r->download();
                const auto want = reference::transposeRightMultiply(m, n, n, n, v);
                for (uint32_t i = 0; i < n; ++i) {
                  if (!safegpu::agrees(got[i], want[i])) return "result(" + std::to_string(i) + ")";
                }
                return std::string();
              },
          .poison = poison({r})};
}

// The product's check: 64 random rows against double sums (the whole product on the CPU would
// take minutes at 3163 x 3163).
Case matrixMultiplication(uint32_t n) {
  const std::vector<float> a = randomFloats(size_t{n} * n, 11), b = randomFloats(size_t{n} * n, 12);
  const Buffer da = device(a), db = device(b), r = device(size_t{n} * n);
  const auto k = both([](bool c) { return safegpu::multiply(c); });
  return {.program = "matrix-matrix multiplication",
          .paperName = "matrix-matrix multiplication",
          .shape = square(n),
          .elements = double(n) * n,
          .contracts = "pre: other.rows = columns",
          .launch =
              [=](const safegpu::Gpu& run, bool c) {
                run((*k)[c], {std::as_const(*da), n, n, n, std::as_const(*db), n, n, n, *r});
              },
          .check =
              [=] {
                const std::vector<float> got = r->download();
                std::mt19937 rng(n);
                for (int s = 0; s < 64; ++s) {
                  const size_t i = rng() % n;
                  const std::vector<float> row(a.begin() + i * n, a.begin() + (i + 1) * n);
                  const auto want = reference::multiply(row, 1, n, n, b, n, n);
                  for (size_t j = 0; j < n; ++j) {
                    if (!safegpu::agrees(got[i * n + j], want[j])) {
                      return "element (" + std::to_string(i) + ", " + std::to_string(j) + ")";
                    }
                  }
                }
                return std::string();
              },
          .poison = poison({r})};
}

Case gaussianElimination(uint32_t n) {
  std::vector<float> m = randomFloats(size_t{n} * n, 13);
  for (uint32_t i = 0; i < n; ++i) m[size_t{i} * n + i] += static_cast<float>(n);  // dominant
  const auto want = std::make_shared<const std::vector<float>>(reference::gauss(m, n));
  const Buffer dm = device(m), x = device(size_t{n} * n), y = device(size_t{n} * n);
  const auto k = both([](bool c) { return safegpu::Gauss(c); });
  const auto result = std::make_shared<const gpu::DeviceBuffer<float>*>(nullptr);
  return {
      .program = "Gaussian elimination",
      .paperName = "Gaussian elimination",
      .shape = square(n),
      .elements = double(n) * n,
      .contracts =
          "pre: matrix.rows = matrix.columns, step < matrix.rows; post: no element is "
          "inf or NaN (range)",
      .launches = safegpu::Gauss::steps(n),
      .launch = [=](const safegpu::Gpu& run,
                    bool c) { *result = &(*k)[c](run, std::as_const(*dm), n, *x, *y); },
      .check =
          [=] {
            const std::vector<float> got = (*result)->download();
            // The GPU contracts a - b * c into one rounding (FMA): close, not equal.
            for (size_t i = 0; i < got.size(); ++i) {
              if (std::fabs(got[i] - (*want)[i]) > 1e-3 * (1 + std::fabs((*want)[i]))) {
                return "element " + std::to_string(i);
              }
            }
            const auto d = reference::logDeterminant(got, n);
            const auto e = reference::logDeterminant(*want, n);
            if (d.sign != e.sign || std::fabs(d.logAbs - e.logAbs) > 1e-5 * std::fabs(e.logAbs)) {
              return std::string("log |det|");
            }
            return std::string();
          },
      .poison = poison({x, y})};
}

// ------------------------------------------------------------------ measuring
json timingJson(const gpu::Timing& t) {
  return {{"median_ms", t.medianMs}, {"min_ms", t.minMs}, {"max_ms", t.maxMs}, {"runs", t.runs()}};
}

std::string ratio(double r) {
  if (std::isnan(r)) return "-";
  char s[16];
  std::snprintf(s, sizeof s, "%.2f", r);
  return s;
}

// The table's columns.
constexpr const char* kHead = "%-37s %-11s %8s %10s %10s %10s %7s %7s %9s %6s %6s  %s\n";
constexpr const char* kRow = "%-37s %-11s %8s %10.1f %10.1f %10.1f %7s %7s %9.1f %6s %6s  %s\n";

// The three modes of one case: each run once (outputs set to NaN first) and checked, then timed.
json measure(const Case& c, int runs, bool& ok) {
  safegpu::Gpu none, pre, checked;
  none.options.synchronize = pre.options.synchronize = false;
  checked.options.checked = true;  // synchronizes every launch
  std::string wrong;
  const auto once = [&](const char* mode, const safegpu::Gpu& run, bool contracts) {
    c.poison();
    c.launch(run, contracts);
    gpu::Device::get().synchronize();
    const std::string w = c.check();
    if (!w.empty()) wrong += std::string(wrong.empty() ? "" : "; ") + mode + ": " + w;
  };
  once("none", none, false);
  once("pre", pre, true);
  once("checked", checked, true);
  // Each mode is timed twice, in the order (a), (b), (c) and then (c), (b), (a), and its median
  // taken over both: a drift of the clocks, or of the host that enqueues a program of many
  // launches, falls on every mode alike.
  gpu::TimingOptions timing;
  timing.runs = runs;
  const auto time = [&](const safegpu::Gpu& run, bool contracts, gpu::Timing& into) {
    const gpu::Timing t = gpu::time([&](int) { c.launch(run, contracts); }, timing);
    into.samplesMs.insert(into.samplesMs.end(), t.samplesMs.begin(), t.samplesMs.end());
  };
  gpu::Timing tNone, tPre, tChecked;
  time(none, false, tNone);
  time(pre, true, tPre);
  time(checked, true, tChecked);
  time(checked, true, tChecked);
  time(pre, true, tPre);
  time(none, false, tNone);
  for (gpu::Timing* t : {&tNone, &tPre, &tChecked}) gpu::summarize(*t);
  const double preRatio = tPre.medianMs / tNone.medianMs;
  const double checkedRatio = tChecked.medianMs / tNone.medianMs;
  // What checking adds per launch (synchronizing, the violation record, the check kernels).
  const double perLaunchUs =
      (tChecked.medianMs - tNone.medianMs) * 1e3 / static_cast<double>(c.launches);
  const std::optional<PaperRatios> paper = paperRatios(c.paperName, c.elements);
  std::printf(kRow, c.program.c_str(), c.shape.c_str(), std::to_string(c.launches).c_str(),
              tNone.medianMs * 1e3, tPre.medianMs * 1e3, tChecked.medianMs * 1e3,
              ratio(preRatio).c_str(), ratio(checkedRatio).c_str(), perLaunchUs,
              paper ? ratio(paper->pre).c_str() : "-", paper ? ratio(paper->prePost).c_str() : "-",
              wrong.empty() ? "ok" : ("WRONG: " + wrong).c_str());
  std::fflush(stdout);
  ok = ok && wrong.empty();
  json row = {{"program", c.program},
              {"shape", c.shape},
              {"elements", c.elements},
              {"contracts", c.contracts},
              {"launches", c.launches},
              {"none", timingJson(tNone)},
              {"pre", timingJson(tPre)},
              {"checked", timingJson(tChecked)},
              {"pre_over_none", preRatio},
              {"checked_over_none", checkedRatio},
              {"checked_extra_us_per_launch", perLaunchUs},
              {"ok", wrong.empty()}};
  if (paper) {
    const char* columns[] = {"10^6", "10^7", "10^8"};
    row["paper_safegpu"] = {{"size", columns[*paperColumn(c.elements)]},
                            {"pre", paper->pre},
                            {"pre_and_post", paper->prePost},
                            {"full", paper->full}};
  } else {
    row["paper_safegpu"] = nullptr;
  }
  if (!wrong.empty()) row["wrong"] = wrong;
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "The cost of SafeGPU's contracts in obsidian: unchecked, preconditions only, and "
      "checked launches of the paper's programs on the GPU, beside the paper's Table 4"};
  bool quick = false;
  int runs = 20;
  std::string jsonPath;
  app.add_flag("--quick", quick, "the smallest size of each program only");
  app.add_option("--runs", runs, "timed runs per mode and order (median of twice this)")
      ->check(CLI::Range(20, 1000));
  app.add_option("--json", jsonPath, "write the rows as JSON here");
  CLI11_PARSE(app, argc, argv);
  if (!gpu::available()) {
    std::cout << "SKIPPED: no CUDA device (" << gpu::unavailableReason()
              << "): nothing to measure\n";
    return 77;
  }
  const gpu::DeviceInfo& info = gpu::Device::get().info();
  std::cout << "device: " << info.name << " (" << info.smCount << " SMs)\n"
            << "(a) none: the kernels captured without contracts, launched normally\n"
            << "(b) pre: with SafeGPU's contracts, launched normally: the preconditions (require) "
               "are checked on the host at every launch (always: obsidian has no launch without "
               "them); postconditions do not run\n"
            << "(c) checked: with the contracts, LaunchOptions::checked on every launch: the "
               "bounds-checked kernel, then a check kernel per postcondition (ensure); each "
               "checked launch synchronizes (before and after), and that waiting is timed too; "
               "(c)-(a) us/launch is what checking adds to each launch\n"
            << "times: CUDA events around each run of the whole program (obsidian/timing.hpp), "
               "median of "
            << 2 * runs << " runs: " << runs
            << " after 3 warm-up runs in the order (a), (b), (c), then as many in the order (c), "
               "(b), (a); inputs stay on the device (small ones in L2, for every mode alike)\n"
            << "paper: SafeGPU's ratios of Table 4 (Quadro K2000M, medians of 10 runs of wall "
               "time) at the same size (2^26 beside 10^8): 'pre' and 'pre & post' (p&p), which is "
               "our (c); '-' where the paper has none\n\n";
  std::printf(kHead, "program", "size", "launches", "(a) us", "(b) us", "(c) us", "(b)/(a)",
              "(c)/(a)", "(c)-(a)", "paper", "paper", "check");
  std::printf(kHead, "", "", "", "none", "pre", "checked", "", "", "us/launch", "pre", "p&p", "");

  const std::vector<size_t> vectors = quick
                                          ? std::vector<size_t>{1000000}
                                          : std::vector<size_t>{1000000, 10000000, size_t{1} << 26};
  // Square matrices of about 10^6, 10^7 and 2^26 elements; the O(n^3) programs stop at 10^7.
  const std::vector<uint32_t> matrices =
      quick ? std::vector<uint32_t>{1000} : std::vector<uint32_t>{1000, 3163, 8192};
  const std::vector<uint32_t> cubic =
      quick ? std::vector<uint32_t>{1000} : std::vector<uint32_t>{1000, 3163};

  bool ok = true;
  json rows = json::array();
  try {
    // Each case's buffers are freed before the next is made (2^26 floats are 256 MB each).
    for (size_t n : vectors) rows.push_back(measure(vectorAddition(n), runs, ok));
    for (size_t n : vectors) rows.push_back(measure(dotProduct(n), runs, ok));
    for (size_t n : vectors) rows.push_back(measure(compwiseDivide(n), runs, ok));
    for (uint32_t n : cubic) rows.push_back(measure(matrixMultiplication(n), runs, ok));
    for (uint32_t n : cubic) rows.push_back(measure(gaussianElimination(n), runs, ok));
    for (size_t n : vectors) rows.push_back(measure(sort(n), runs, ok));
    for (uint32_t n : matrices) rows.push_back(measure(transposition(n), runs, ok));
    for (uint32_t n : matrices) rows.push_back(measure(transposedMatrixVector(n), runs, ok));
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  if (!jsonPath.empty()) {
    std::ofstream(jsonPath) << json{{"device", info.name},
                                    {"runs", runs},
                                    {"modes",
                                     {{"none", "kernels without contracts, normal launch"},
                                      {"pre",
                                       "SafeGPU's contracts, normal launch (require "
                                       "checked on the host)"},
                                      {"checked",
                                       "SafeGPU's contracts, LaunchOptions::checked "
                                       "(bounds-checked kernels, postcondition "
                                       "kernels, synchronizing)"}}},
                                    {"rows", rows}}
                                   .dump(2)
                            << "\n";
  }
  return ok ? 0 : 1;
}
