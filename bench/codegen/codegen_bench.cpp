// Code-generation speed: how long capture takes (reification and every pass, no NVRTC) for
// the paper's red5 over 4096-element blocks, and the NVRTC compile for comparison.
// Usage: obsidian-bench-codegen [results.json]
#include <algorithm>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <obsidian/obsidian.hpp>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr int kWarmup = 5, kRuns = 51;
  std::vector<double> total;
  std::map<std::string, std::vector<double>> passes;
  for (int r = 0; r < kWarmup + kRuns; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const obsidian::Kernel k = obsidian::tileReduceKernel<uint32_t>(
        obsidian::BlockReduceAlgorithm::Red5, obsidian::Sum{}, 4096, 512);
    const std::chrono::duration<double, std::milli> t = std::chrono::steady_clock::now() - start;
    if (r < kWarmup) continue;
    total.push_back(t.count());
    for (const obsidian::PassTiming& p : k.timings()) passes[p.pass].push_back(p.milliseconds);
  }
  const obsidian::Kernel k = obsidian::tileReduceKernel<uint32_t>(
      obsidian::BlockReduceAlgorithm::Red5, obsidian::Sum{}, 4096, 512);
  const double compileMs = k.compile().seconds * 1000;

  nlohmann::json out;
  out["kernel"] = "red5, 4096 elements per block, 512 threads";
  out["runs"] = kRuns;
  out["generationMedianMs"] = median(total);
  std::cout << "red5 (4096 elements/block, 512 threads): capture, all passes, no NVRTC\n";
  std::cout << std::left << std::setw(22) << "pass"
            << "median ms\n";
  // In pipeline order, as the kernel lists them (src/codegen/lower.cpp is the one list).
  for (const obsidian::PassTiming& p : k.timings()) {
    const double m = median(passes[p.pass]);
    out["passesMedianMs"][p.pass] = m;
    std::cout << std::left << std::setw(22) << p.pass << std::fixed << std::setprecision(4) << m
              << "\n";
  }
  std::cout << std::left << std::setw(22) << "total (wall)" << median(total) << "\n";
  std::cout << std::left << std::setw(22) << "NVRTC (once)" << compileMs << "\n";
  out["nvrtcMs"] = compileMs;
  if (argc > 1) std::ofstream(argv[1]) << out.dump(2) << "\n";
  return 0;
}
