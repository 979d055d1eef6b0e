// Simulator speed: a 2^20-element reduction (the paper's red5 over 4096-element blocks, 256
// blocks of 512 threads) simulated with hazard detection on and off, and each with the
// performance counters (SimOptions::profile) on and off, checked against C++.
// Usage: obsidian-bench-sim [results.json]
#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <obsidian/obsidian.hpp>
#include <obsidian/sim.hpp>
#include <random>

int main(int argc, char** argv) {
  const size_t n = size_t{1} << 20, chunk = 4096;
  std::mt19937 rng(7);
  std::vector<uint32_t> in(n);
  for (uint32_t& x : in) x = rng() % 1000 + 1;
  std::vector<uint32_t> expected(n / chunk);
  for (size_t b = 0; b < expected.size(); ++b) {
    expected[b] = std::accumulate(in.begin() + static_cast<long>(b * chunk),
                                  in.begin() + static_cast<long>((b + 1) * chunk), 0u);
  }
  const obsidian::Kernel k = obsidian::tileReduceKernel<uint32_t>(
      obsidian::BlockReduceAlgorithm::Red5, obsidian::Sum{}, chunk, 512);
  nlohmann::json out;
  out["kernel"] = "red5, 2^20 elements, 4096 per block, 512 threads";
  for (auto [hazards, profile] : {std::pair{true, false}, std::pair{false, false},
                                  std::pair{true, true}, std::pair{false, true}}) {
    std::vector<double> times;
    for (int r = 0; r < 5; ++r) {
      std::vector<uint32_t> result(expected.size());
      obsidian::SimOptions o;
      o.detectHazards = hazards;
      o.profile = profile;
      const auto start = std::chrono::steady_clock::now();
      obsidian::simulate(k, {in, result}, o);
      const std::chrono::duration<double> t = std::chrono::steady_clock::now() - start;
      if (result != expected) {
        std::cerr << "wrong result\n";
        return 1;
      }
      times.push_back(t.count());
    }
    std::sort(times.begin(), times.end());
    const std::string key = std::string(hazards ? "secondsWithHazards" : "secondsWithoutHazards") +
                            (profile ? "Profiled" : "");
    out[key] = times[times.size() / 2];
    std::cout << "red5 2^20 on the simulator, hazard detection " << (hazards ? "on " : "off")
              << ", counters " << (profile ? "on " : "off") << ": " << times[times.size() / 2]
              << " s (median of 5), result checked\n";
  }
  if (argc > 1) std::ofstream(argv[1]) << out.dump(2) << "\n";
  return 0;
}
