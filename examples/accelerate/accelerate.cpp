// The Accelerate example: its benchmarks (seed 004, Section 6), the dot product, SAXPY and
// Black-Scholes option pricing (accelerate.hpp) on random data of an odd size, and the CSR
// sparse-matrix vector product (spmv.hpp) on a power-law matrix (empty rows, rows of thousands),
// each checked against its C++ reference, on the GPU when there is one and on the simulator
// otherwise. First it prints what generating and compiling each kernel costs, as the paper's
// Table 3 does for Accelerate's (capture, then NVRTC, uncached); then each kernel's resources
// and, on the GPU, its time and GB/s.
//
//   obsidian-accelerate [--n N] [--cuda] [--simulate | --gpu] [--quick] [--runs N]
#include "accelerate.hpp"

#include <chrono>
#include <iomanip>
#include <iostream>
#include <obsidian/nvrtc.hpp>

#include "../common/runner.hpp"
#include "spmv.hpp"

namespace {

using namespace examples;

// Milliseconds that make() takes (the median of 5) and the kernel it made.
template <class Make>
std::pair<double, Kernel> timed(Make make) {
  std::vector<double> ms;
  std::optional<Kernel> k;
  for (int r = 0; r < 5; ++r) {
    const auto start = std::chrono::steady_clock::now();
    k.emplace(make());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[2], *k};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Accelerate's benchmarks: dot product, SAXPY, Black-Scholes"};
  uint32_t n = 0;
  app.add_option("--n", n, "elements (default: 2^26 + 3 on the GPU, 100003 on the simulator)");
  uint32_t rows = 0;
  app.add_option("--rows", rows,
                 "SpMV's rows (default: 2^22 + 5 on the GPU, 2003 on the simulator)");
  const Options o = parse(app, argc, argv);
  if (n == 0) n = o.quick ? 10007 : o.gpu() ? (1u << 26) + 3 : 100003;
  if (rows == 0) rows = o.quick ? 1003 : o.gpu() ? (1u << 22) + 5 : 2003;
  try {
    std::cout << "Accelerate's benchmarks, n = " << n << ", on " << backendName(o) << "\n";
    const bool gpu = o.gpu();
    const uint32_t blocks =
        gpu ? gpu::occupancyBlocks(accelerate::dotp(1)) : kSimulatedReduceBlocks;
    // Power-law rows (mean 16, up to 4096: capped at the row count) over as many columns.
    const accelerate::Csr matrix =
        accelerate::powerLawMatrix(rows, rows, 16, std::min(rows, 4096u), 4);
    const uint32_t threadsPerRow = accelerate::spmvThreadsPerRow(matrix);

    // Table 3: generation (capture: the callable run, every pass) and NVRTC, uncached.
    const std::vector<std::pair<std::string, std::function<Kernel()>>> makers = {
        {"dotp", [blocks] { return accelerate::dotp(blocks); }},
        {"saxpy", [] { return accelerate::saxpy(); }},
        {"blackScholes", [] { return accelerate::blackScholes(); }},
        {"spmv", [threadsPerRow] { return accelerate::spmv(threadsPerRow); }}};
    std::cout << "\n| kernel | kernels | generation ms | NVRTC ms | CUDA bytes | registers |\n"
              << "| --- | --- | --- | --- | --- | --- |\n";
    for (const auto& [label, make] : makers) {
      const auto [generation, k] = timed(make);
      const CompileResult c = compileCuda(k.cuda(), k.name(), k.compileOptions());
      std::cout << "| " << label << " | 1 | " << std::fixed << std::setprecision(3) << generation
                << " | " << std::setprecision(1) << c.seconds * 1000 << " | " << k.cuda().size()
                << " | " << c.registers << " |\n";
      if (o.cuda) std::cout << "\n// ---- " << k.name() << "\n" << k.cuda();
    }

    bool pass = true;
    Table table("n = " + std::to_string(n) + " (GB/s: the bytes each reads and writes once)");
    const std::vector<float> x = randomFloats(n, 1), y = randomFloats(n, 2);
    {
      const Kernel k = accelerate::dotp(blocks);
      std::vector<float> dot(1);
      Args args;
      args.in(x).in(y).out(dot);
      const double ms = run(k, args, o);
      const double want = accelerate::dotReference(x, y);
      const bool ok = std::fabs(dot[0] - want) <= 1e-4 * (1 + std::fabs(want)) + 1e-6 * n;
      std::cout << "\ndotp = " << dot[0] << " (reference " << want << ")" << (ok ? "" : ": WRONG")
                << "\n";
      pass = pass && ok;
      table.add("dotp", k, 0, n, ok, ms, 8.0 * n);
    }
    {
      const Kernel k = accelerate::saxpy();
      const float alpha = 0.75f;
      std::vector<float> z(n);
      Args args;
      args.scalar(alpha).in(x).in(y).out(z);
      const double ms = run(k, args, o);
      bool ok = true;
      for (uint32_t i = 0; i < n && ok; ++i) {
        const float want = alpha * x[i] + y[i];
        ok = std::fabs(z[i] - want) <= 1e-6f * (1 + std::fabs(want));
      }
      pass = pass && ok;
      table.add("saxpy", k, 256, n, ok, ms, 12.0 * n);
    }
    {
      const Kernel k = accelerate::blackScholes();
      const accelerate::Options opts = accelerate::randomOptions(n, 3);
      std::vector<float> call(n), put(n);
      Args args;
      args.in(opts.s).in(opts.x).in(opts.t).out(call).out(put);
      const double ms = run(k, args, o);
      bool ok = true;
      for (uint32_t i = 0; i < n && ok; ++i) {
        const auto [c, p] = accelerate::blackScholesBody(opts.s[i], opts.x[i], opts.t[i]);
        ok = std::fabs(call[i] - c) <= 1e-4f * (1 + std::fabs(c)) &&
             std::fabs(put[i] - p) <= 1e-4f * (1 + std::fabs(p));
        if (!ok) {
          std::cout << "blackScholes: option " << i << " call " << call[i] << " put " << put[i]
                    << ", want " << c << " and " << p << "\n";
        }
      }
      pass = pass && ok;
      table.add("blackScholes (call and put)", k, 128, n, ok, ms, 20.0 * n);
    }
    {
      const Kernel k = accelerate::spmv(threadsPerRow);
      const std::vector<float> v = randomFloats(matrix.cols, 5);
      std::vector<float> y(matrix.rows, std::nanf(""));  // a row left unwritten fails the check
      Args args;
      args.in(matrix.rowOffsets).in(matrix.columns).in(matrix.values).in(v).out(y);
      const double ms = run(k, args, o);
      const std::vector<float> want = accelerate::spmvReference(matrix, v);
      bool ok = true;
      for (uint32_t r = 0; r < matrix.rows && ok; ++r) {
        ok = std::fabs(y[r] - want[r]) <= accelerate::spmvTolerance(matrix, v, r);
        if (!ok) std::cout << "spmv: row " << r << " = " << y[r] << ", want " << want[r] << "\n";
      }
      std::cout << "spmv: " << matrix.rows << " rows, " << matrix.values.size()
                << " nonzeros (mean " << matrix.meanRowLength() << ", longest "
                << matrix.longestRow() << "), " << threadsPerRow << " lanes a row\n";
      pass = pass && ok;
      const double bytes = 8.0 * matrix.values.size() + 12.0 * matrix.rows + 4;
      table.add("spmv (CSR, power-law rows)", k, 256 / threadsPerRow, matrix.rows, ok, ms, bytes);
    }
    table.print();
    std::cout << (pass ? "PASS" : "FAIL") << "\n";
    return pass ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
