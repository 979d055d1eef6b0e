// The SpMV benchmark (issue 18, item 2: seed 004, Section 6). In one run, on the same CSR
// matrices: obsidian's vector-CSR kernel (examples/accelerate/spmv.hpp) at every lane-group width,
// the width spmvThreadsPerRow picks marked, against cuSPARSE's SpMV with
// both CSR algorithms (cuda_spmv.cu), on a banded, a uniform random and a power-law matrix of
// 2^22 + 5 to 2^23 + 10 rows (each larger than the 50 MB L2), with the read kernel over the
// matrix's bytes as the roofline. Every y, ours and cuSPARSE's, is checked row by row against the
// C++ reference (within a tolerance of a few ulps of the products' magnitudes a term) after its
// output was poisoned.
//
// Usage: obsidian-bench-spmv [--quick] [--only ROWS] [--runs N] [--matrix CLASS] [--json FILE]
#include <bit>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "../../examples/accelerate/spmv.hpp"
#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cuda_spmv.hpp"

namespace {

using namespace obsidian;
using nlohmann::json;

struct Matrix {
  std::string name;
  accelerate::Csr a;
};

// The three classes at `rows` rows (the banded one twice as tall: it has fewer nonzeros a row).
// (Only the class named `only`, when there is one.)
std::vector<Matrix> matrices(uint32_t rows, const std::string& only) {
  std::vector<Matrix> m;
  if (only.empty() || only == "banded")
    m.push_back({"banded (9 diagonals)", accelerate::bandedMatrix(2 * rows, 4, 1)});
  if (only.empty() || only == "uniform")
    m.push_back({"uniform (16 a row)", accelerate::uniformMatrix(rows, rows, 16, 2)});
  if (only.empty() || only == "power-law")
    m.push_back({"power-law (Lomax 1.5)", accelerate::powerLawMatrix(rows, rows, 16, 8192, 3)});
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian's CSR SpMV against cuSPARSE on banded, uniform and power-law matrices"};
  bench::CommonOptions common;
  bench::addCommonOptions(app, common);
  std::string only;
  app.add_option("--matrix", only, "this matrix class alone")
      ->check(CLI::IsMember({"banded", "uniform", "power-law"}));
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  if (common.only > (1u << 26)) {
    std::cerr << "--only: at most 2^26 rows; got " << common.only << "\n";
    return 2;
  }
  if (!bench::deviceOrSkip()) return bench::kSkipped;
  const uint32_t rows = common.only    ? static_cast<uint32_t>(common.only)
                        : common.quick ? (1u << 16) + 3
                                       : (1u << 22) + 5;
  gpu::LaunchOptions async;
  async.synchronize = false;
  json out = json::array();
  bool allOk = true;

  std::cout
      << "\nmatrix                   rows       nnz   mean longest  program          us  "
         "ours/cuSPARSE  GB/s  %roof  check\n(GB/s: the offsets, columns, values, x and y "
         "each once; roof: the read kernel over the values and columns; ours/cuSPARSE: against the "
         "faster algorithm; * the width spmvThreadsPerRow picks)\n";
  for (const Matrix& m : matrices(rows, only)) {
    const accelerate::Csr& a = m.a;
    const uint32_t nnz = static_cast<uint32_t>(a.values.size());
    std::vector<float> x(a.cols);
    {
      std::mt19937_64 rng(11);
      std::uniform_real_distribution<float> d(-1.0f, 1.0f);
      for (float& v : x) v = d(rng);
    }
    const std::vector<float> want = accelerate::spmvReference(a, x);
    std::vector<float> tolerance(a.rows);
    for (uint32_t r = 0; r < a.rows; ++r) tolerance[r] = accelerate::spmvTolerance(a, x, r);
    gpu::DeviceBuffer<uint32_t> offsets(a.rowOffsets), columns(a.columns);
    gpu::DeviceBuffer<float> values(a.values), dx(x), dy(a.rows);
    float* y = reinterpret_cast<float*>(dy.address());
    const double bytes = 8.0 * nnz + 4.0 * (a.rows + 1) + 4.0 * a.cols + 4.0 * a.rows;
    gpu::DeviceBuffer<uint32_t> sink(1);
    // The read roofline over the matrix's own bytes: its values and columns arrays, read whole.
    const bench::Timing readAll = bench::timeGpu(
        [&](int) {
          bench::readKernel(reinterpret_cast<const void*>(values.address()),
                            size_t{nnz} * 4 / 16 * 16, reinterpret_cast<uint32_t*>(sink.address()));
          bench::readKernel(reinterpret_cast<const void*>(columns.address()),
                            size_t{nnz} * 4 / 16 * 16, reinterpret_cast<uint32_t*>(sink.address()));
        },
        common.runs);
    const double roofGbps = bench::gbps(size_t{nnz} * 8 / 16 * 16, readAll.medianMs);

    const auto check = [&](const std::string& who) {
      bench::checkCuda(who);
      std::vector<float> got(a.rows);
      bench::download(got.data(), y, size_t{a.rows} * 4);
      for (uint32_t r = 0; r < a.rows; ++r) {
        if (!(std::fabs(got[r] - want[r]) <= tolerance[r])) {
          std::cout << who << ": row " << r << " = " << got[r] << ", want " << want[r] << "\n";
          return false;
        }
      }
      return true;
    };
    const auto poison = [&] { dy.fill(std::bit_cast<float>(0xFFFFFFFFu)); };
    struct Row {
      std::string program;
      bench::Timing t;
      bool ok;
    };
    std::vector<Row> ours, theirs;
    for (int algorithm : {1, 2}) {
      const bench::VendorSpmv vendor(algorithm, a.rows, a.cols, nnz,
                                     reinterpret_cast<const uint32_t*>(offsets.address()),
                                     reinterpret_cast<const uint32_t*>(columns.address()),
                                     reinterpret_cast<const float*>(values.address()),
                                     reinterpret_cast<const float*>(dx.address()), y);
      poison();
      vendor();
      const std::string name = "cuSPARSE ALG" + std::to_string(algorithm);
      const bool ok = check(name);
      theirs.push_back({name, bench::timeGpu([&](int) { vendor(); }, common.runs), ok});
    }
    const uint32_t chosen = accelerate::spmvThreadsPerRow(a);
    for (uint32_t w = 1; w <= 32; w *= 2) {
      const Kernel k = accelerate::spmv(w);
      const std::vector<KernelArg> args = {
          KernelArg::deviceArray(ScalarType::U32, offsets.address(), a.rows + 1, false),
          KernelArg::deviceArray(ScalarType::U32, columns.address(), nnz, false),
          KernelArg::deviceArray(ScalarType::F32, values.address(), nnz, false),
          KernelArg::deviceArray(ScalarType::F32, dx.address(), a.cols, false),
          KernelArg::deviceArray(ScalarType::F32, dy.address(), a.rows, true)};
      poison();
      gpu::launch(k, args, async);
      const std::string name = "obsidian w=" + std::to_string(w) + (w == chosen ? "*" : "");
      const bool ok = check(name);
      ours.push_back(
          {name, bench::timeGpu([&](int) { gpu::launch(k, args, async); }, common.runs), ok});
    }
    const double best = std::min(theirs[0].t.medianMs, theirs[1].t.medianMs);
    std::vector<Row> all = theirs;
    all.insert(all.end(), ours.begin(), ours.end());
    for (const Row& r : all) {
      const double gbps = bytes / (r.t.medianMs * 1e-3) / 1e9;
      std::cout << std::left << std::setw(22) << m.name << std::right << std::setw(9) << a.rows
                << std::setw(10) << nnz << std::fixed << std::setprecision(1) << std::setw(7)
                << a.meanRowLength() << std::setw(8) << a.longestRow() << "  " << std::left
                << std::setw(15) << r.program << std::right << std::setprecision(1) << std::setw(8)
                << r.t.medianMs * 1e3 << std::setprecision(3) << std::setw(15)
                << r.t.medianMs / best << std::setprecision(0) << std::setw(6) << gbps
                << std::setprecision(1) << std::setw(7) << 100 * gbps / roofGbps << "  "
                << (r.ok ? "ok" : "WRONG") << std::endl;
      allOk = allOk && r.ok;
      out.push_back(json{{"matrix", m.name},
                         {"rows", a.rows},
                         {"nnz", nnz},
                         {"mean_row", a.meanRowLength()},
                         {"longest_row", a.longestRow()},
                         {"program", r.program},
                         {"timing", bench::timingJson(r.t)},
                         {"over_best_cusparse", r.t.medianMs / best},
                         {"gbps", gbps},
                         {"roofline_gbps", roofGbps},
                         {"ok", r.ok}});
    }
  }
  if (!common.jsonPath.empty()) {
    std::ofstream(common.jsonPath)
        << json{{"device", bench::deviceName()}, {"rows", out}}.dump(2) << "\n";
  }
  return allOk ? 0 : 1;
}
