// Code-generation speed: how long capture takes (reification and every pass, no NVRTC) for
// the paper's red5 over 4096-element blocks, and the NVRTC compile for comparison. Then
// subexpression sharing before/after (OBSIDIAN_SHARE=0 turns the pass off): generation time,
// CUDA size, NVRTC time and registers of the paper's kernels, a bitonic sorting network and
// Black-Scholes.
// Usage: obsidian-bench-codegen [results.json]
#include <algorithm>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <obsidian/device/tiled.hpp>
#include <obsidian/obsidian.hpp>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

using namespace obsidian;

// A bitonic sorting network over each block's 1024 elements, one forcePull stage per step.
Kernel bitonic() {
  constexpr uint32_t n = 1024;
  return capture("bitonic", n, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            SPull<EWord32> x = c;
            for (uint32_t k = 2; k <= n; k *= 2) {
              for (uint32_t j = k / 2; j > 0; j /= 2) {
                const SPull<EWord32> cur = x;
                x = forcePull(p, SPull<EWord32>(n, [cur, j, k](const EWord32& i) {
                                const EWord32 a = cur[i], b = cur[i ^ j];
                                return ifThenElse(((i & k) == 0u) == ((i & j) == 0u), min(a, b),
                                                  max(a, b));
                              }));
              }
            }
            return push<Block>(x);
          });
        },
        splitUp(n, in)));
  });
}

// Black-Scholes call and put prices (the CUDA samples' formulas), written as a new user writes
// them: d1 and the normal CDF are plain C++ functions of expressions, so each use repeats them.
Kernel blackScholes() {
  auto cnd = [](const EFloat& d) {
    const EFloat k = 1.0f / (1.0f + 0.2316419f * fabs(d));
    const EFloat poly =
        k * (0.31938153f +
             k * (-0.356563782f + k * (1.781477937f + k * (-1.821255978f + k * 1.330274429f))));
    const EFloat c = 0.39894228040143267794f * exp(-0.5f * d * d) * poly;
    return ifThenElse(d > 0.0f, 1.0f - c, c);
  };
  auto price = [cnd](bool call) {
    return [cnd, call](const EFloat& s, const EFloat& x, const EFloat& t) {
      const EFloat r = 0.02f, v = 0.30f;
      const EFloat d1 = (log(s / x) + (r + 0.5f * v * v) * t) / (v * sqrt(t));
      const EFloat d2 = d1 - v * sqrt(t);
      const EFloat discounted = x * exp(-r * t);
      return call ? s * cnd(d1) - discounted * cnd(d2)
                  : discounted * (1.0f - cnd(d2)) - s * (1.0f - cnd(d1));
    };
  };
  return capture("blackScholes", 256, [price](DPull<EFloat> s, DPull<EFloat> x, DPull<EFloat> t) {
    auto at = [s, x, t](auto f) {
      return push<Grid>(
          mkPull(len(s), [s, x, t, f](const EWord32& i) { return f(s[i], x[i], t[i]); }));
    };
    return hana::make_tuple(at(price(true)), at(price(false)));
  });
}

struct Sharing {
  double generationMs = 0;
  size_t cudaBytes = 0;
  double nvrtcMs = 0;
  int registers = 0;
};

// Captures make() with sharing on or off (the median of five) and compiles it.
Sharing measure(const std::function<Kernel()>& make, bool share) {
  if (share) {
    ::unsetenv("OBSIDIAN_SHARE");
  } else {
    ::setenv("OBSIDIAN_SHARE", "0", 1);
  }
  std::vector<double> times;
  std::optional<Kernel> k;
  for (int r = 0; r < 5; ++r) {
    const auto start = std::chrono::steady_clock::now();
    k.emplace(make());
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  ::unsetenv("OBSIDIAN_SHARE");
  // NVRTC's time varies from one compile to the next: the median of three, uncached.
  std::vector<double> nvrtc;
  int registers = -1;
  for (int r = 0; r < 3; ++r) {
    const CompileResult c = compileCuda(k->cuda(), k->name(), k->compileOptions());
    nvrtc.push_back(c.seconds * 1000);
    registers = c.registers;
  }
  return Sharing{median(times), k->cuda().size(), median(nvrtc), registers};
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

  // Subexpression sharing, off and on.
  std::vector<std::pair<std::string, std::function<Kernel()>>> kernels;
  for (BlockReduceAlgorithm a : kBlockReduceAlgorithms) {
    kernels.emplace_back(name(a) + " (4096/block, 512 threads)",
                         [a] { return tileReduceKernel<uint32_t>(a, Sum{}, 4096, 512); });
  }
  for (BlockScanAlgorithm a : kBlockScanAlgorithms) {
    kernels.emplace_back(name(a) + " (1024/block, 512 threads)", [a] {
      return tileScanKernel<uint32_t>(a, Sum{}, 1024,
                                      a == BlockScanAlgorithm::KoggeStone ? 1024 : 512);
    });
  }
  kernels.emplace_back("bitonic sort (1024/block)", bitonic);
  kernels.emplace_back("Black-Scholes (call and put)", blackScholes);
  std::cout << "\nsubexpression sharing: off -> on\n"
            << "| kernel | generation ms | CUDA bytes | NVRTC ms | registers |\n"
            << "| --- | --- | --- | --- | --- |\n";
  for (const auto& [label, make] : kernels) {
    const Sharing off = measure(make, false), on = measure(make, true);
    std::cout << std::setprecision(3) << "| " << label << " | " << off.generationMs << " -> "
              << on.generationMs << " | " << off.cudaBytes << " -> " << on.cudaBytes << " | "
              << std::setprecision(1) << off.nvrtcMs << " -> " << on.nvrtcMs << " | "
              << off.registers << " -> " << on.registers << " |\n";
    for (const auto& [key, m] : {std::pair{"off", off}, std::pair{"on", on}}) {
      nlohmann::json& j = out["sharing"][label][key];
      j["generationMs"] = m.generationMs;
      j["cudaBytes"] = m.cudaBytes;
      j["nvrtcMs"] = m.nvrtcMs;
      j["registers"] = m.registers;
    }
  }
  if (argc > 1) std::ofstream(argv[1]) << out.dump(2) << "\n";
  return 0;
}
