// The kernel-fusion BLAS seed's eleven sequences (blas.hpp) on random data of odd shapes, each
// checked against its double-precision C++ reference, on the GPU when there is one and on the
// simulator otherwise; on the GPU each sequence's time and the GB/s its kernels move.
//
//   obsidian-blas [--n N] [--rows R] [--cols C] [--only NAME] [--cuda] [--simulate | --gpu]
//                 [--quick] [--runs N]
#include "blas.hpp"

#include <iomanip>
#include <iostream>
#include <obsidian/timing.hpp>

#include "../common/runner.hpp"

int main(int argc, char** argv) {
  CLI::App app{"The kernel-fusion BLAS sequences (AXPYDOT ... WAXPBY), checked against C++"};
  uint32_t n = 0, rows = 0, cols = 0;
  std::string only;
  app.add_option("--n", n, "vector length (default: 2^24 + 3 on the GPU, 10007 simulated)");
  app.add_option("--rows", rows, "matrix rows (default: 4099 on the GPU, 67 simulated)");
  app.add_option("--cols", cols, "matrix cols (default: 3001 on the GPU, 45 simulated)");
  app.add_option("--only", only, "one sequence (AXPYDOT, ATAX, BiCGK, ...)");
  const examples::Options o = examples::parse(app, argc, argv);
  const bool gpu = o.gpu();
  if (n == 0) n = o.quick ? 1003 : gpu ? (1u << 24) + 3 : 10007;
  if (rows == 0) rows = o.quick ? 37 : gpu ? 4099 : 67;
  if (cols == 0) cols = o.quick ? 45 : gpu ? 3001 : 131;
  // Rows padded to a multiple of 4 elements: the pitch is exercised.
  const blas::Problem problem{n, rows, cols, (cols + 3) / 4 * 4 + 4};
  try {
    std::cout << "The kernel-fusion BLAS sequences on " << examples::backendName(o)
              << ": vectors of " << n << ", matrices " << rows << " x " << cols << " (pitch "
              << problem.pitch << ")\n\n"
              << std::left << std::setw(10) << "sequence" << std::right << std::setw(8) << "kernels"
              << std::setw(12) << "check";
    if (gpu) std::cout << std::setw(12) << "us" << std::setw(10) << "GB/s";
    std::cout << "\n";
    int failures = 0;
    for (const std::string& name : blas::sequenceNames()) {
      if (!only.empty() && name != only) continue;
      // On the GPU the shapes obsidian-tune chose (tunedShape); on the simulator the defaults.
      const blas::Sequence q =
          blas::sequence(name, problem, gpu ? blas::tunedShape(name, problem) : blas::Shape{});
      if (o.cuda) {
        for (const blas::Step& s : q.steps) std::cout << s.kernel.cuda() << "\n";
      }
      blas::Buffers b = blas::randomInputs(q, 11);
      for (const auto& [out, size] : q.outputs) b[out].assign(size, std::nanf(""));  // poisoned
      double us = 0;
      if (gpu) {
        const blas::DeviceBuffers d = blas::upload(q, b);
        blas::launch(q, d, {});
        blas::download(q, d, b);
        obsidian::gpu::LaunchOptions async;
        async.synchronize = false;
        us = obsidian::gpu::time([&](int) { blas::launch(q, d, async); }, {.runs = o.runs})
                 .medianMs *
             1e3;
      } else {
        blas::simulate(q, b);
      }
      const std::string bad = blas::mismatch(blas::reference(name, problem, b), b);
      failures += !bad.empty();
      std::cout << std::left << std::setw(10) << name << std::right << std::setw(8)
                << q.steps.size() << std::setw(12) << (bad.empty() ? "ok" : "WRONG");
      if (gpu) {
        std::cout << std::fixed << std::setprecision(1) << std::setw(12) << us << std::setw(10)
                  << std::setprecision(0) << blas::movedBytes(q) / (us * 1e3);
      }
      std::cout << (bad.empty() ? "" : "  " + bad) << "\n";
    }
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
