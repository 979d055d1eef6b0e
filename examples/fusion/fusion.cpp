// The fusion example: AXPYDOT (z = w - alpha * v, r = z . u; the kernel-fusion BLAS seed) as
// one kernel whose blocks write z and their partial dot products from one pass over w, v and u
// (fuse), against the two-pass kernel that a tuple of outputs makes, on the GPU when there is
// one and on the simulator otherwise. Both are checked against a C++ reference. It prints
// what the report says of each (grid passes, the access sites of w) and, on the simulator,
// the elements each run moved; on the GPU, the times against a copy kernel moving the fused
// kernel's bytes (16 per element) as the roofline.
//
//   obsidian-fusion [--n N] [--cuda] [--simulate | --gpu] [--quick] [--runs N]
#include "fusion.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>

#include "../common/runner.hpp"

namespace {

using namespace examples;

// The elements k's generated code loads from array `name`, over its access sites (the report).
uint32_t loadSites(const Kernel& k, const std::string& name) {
  for (const ReportTraffic& t : k.report().traffic) {
    if (t.array == name) return t.loads;
  }
  return 0;
}

// A copy in chunks of 1024 words per block, as the kernels read and write (the roofline: run
// on 2n words, it moves the fused kernel's 16 bytes per element).
Kernel copyKernel() {
  return capture("copy", 256, [](DPull<EWord32> in) {
    return pConcat(fmap([](const SPull<EWord32>& c) { return push<Block>(c); }, splitUp(1024, in)));
  });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Fused outputs: AXPYDOT in one pass over its inputs (fuse) against two passes"};
  uint32_t n = 0;
  app.add_option("--n", n,
                 "elements of w, v and u (a multiple of 1024; default: 2^26 on the "
                 "GPU, 2^18 on the simulator, 2^14 with --quick)");
  const Options o = parse(app, argc, argv);
  if (n == 0) n = o.quick ? (1u << 14) : o.gpu() ? (1u << 26) : (1u << 18);
  if (n % 1024 != 0) {
    std::cerr << "error: --n must be a multiple of 1024 (the chunk of a block); got " << n << "\n";
    return 1;
  }
  try {
    std::cout << "AXPYDOT, n = " << n << ", on " << backendName(o) << "\n";
    const std::vector<float> w = randomFloats(n, 1), v = randomFloats(n, 2), u = randomFloats(n, 3);
    const float alpha = 0.75f;
    const uint32_t blocks = n / 1024;
    double dot = 0;
    for (uint32_t i = 0; i < n; ++i) dot += (double(w[i]) - double(alpha) * v[i]) * u[i];

    Table table("axpydot n = " + std::to_string(n) +
                " (GB/s = the fused kernel's 16 bytes per element)");
    bool pass = true;
    for (bool fused : {true, false}) {
      const Kernel k = fusion::axpydot(fused);
      if (o.cuda) std::cout << "\n// ---- " << k.name() << "\n" << k.cuda();
      std::vector<float> z(n), partial(blocks);
      Args args;
      args.scalar(alpha).in(w).in(v).in(u).out(z).out(partial);
      const double ms = run(k, args, o);
      double r = 0;
      auto check = [&] {
        double worstZ = 0;
        r = 0;
        for (uint32_t b = 0; b < blocks; ++b) r += partial[b];
        for (uint32_t i = 0; i < n; ++i) {
          const double ref = double(w[i]) - double(alpha) * v[i];
          worstZ = std::max(worstZ, std::fabs(z[i] - ref) / (1 + std::fabs(ref)));
        }
        return worstZ <= 1e-6 && std::fabs(r - dot) <= 1e-4 * (1 + std::fabs(dot));
      };
      const bool ok = check();
      pass = pass && ok;
      std::cout << k.name() << ": " << k.report().gridPasses << " grid pass(es), w read at "
                << loadSites(k, "w") << " site(s); r = " << r << " (reference " << dot << ")"
                << (ok ? "" : ": WRONG") << "\n";
      if (!o.gpu()) {
        const SimStats s = simulate(k, args.host());
        for (const SimTraffic& t : s.traffic) {
          std::cout << "  " << t.array << ": " << t.loads << " loaded, " << t.stores << " stored\n";
        }
      }
      table.add(k.name(), k, 1024, n, ok, ms, 16.0 * n);
      if (o.gpu()) {
        // An occupancy-sized grid: each real block loops over many chunks, so the second pass
        // of the two-pass kernel no longer finds its block's chunk of w and v in L2.
        std::fill(z.begin(), z.end(), 0.0f);
        std::fill(partial.begin(), partial.end(), 0.0f);
        Args fresh;  // outputs uploaded as zeros
        fresh.scalar(alpha).in(w).in(v).in(u).out(z).out(partial);
        const std::vector<KernelArg> device = fresh.upload();
        gpu::LaunchOptions fill;
        fill.fillDevice = true;
        gpu::launch(k, device, fill);
        fresh.download();
        const bool fillOk = check();
        pass = pass && fillOk;
        fill.synchronize = false;
        const double fillMs = timeOnGpu([&] { gpu::launch(k, device, fill); }, o);
        table.add(k.name() + " (fill)", k, 1024, n, fillOk, fillMs, 16.0 * n);
      }
    }
    if (o.gpu()) {
      const Kernel copy = copyKernel();
      const std::vector<uint32_t> from = randomWords(size_t{n} * 2, 4);  // 8 bytes each way
      std::vector<uint32_t> to(size_t{n} * 2);
      Args args;
      args.in(from).out(to);
      table.add("copy (roofline)", copy, 1024, n, true, run(copy, args, o), 16.0 * n);
    }
    table.print();
    std::cout << (pass ? "PASS" : "FAIL") << "\n";
    return pass ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
