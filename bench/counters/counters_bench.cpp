// The simulator's performance counters against the hardware's: runs the paper's reductions
// (red1..red7), the Sklansky scans, the look-back scan and an unpadded and a padded tiled
// transpose on the simulator with SimOptions::profile, writes what it counted per kernel as
// JSON, and with --gpu launches each kernel once on the GPU on the same input (checking that
// the GPU's output equals the simulator's). Run that under Nsight Compute and compare with
// compare_ncu.py (bench/RESULTS.md, "Simulator counters"):
//   ncu --csv --print-units base --metrics $(python3 bench/counters/compare_ncu.py --metrics)
//       obsidian-bench-counters --gpu sim.json > ncu.csv   (one line)
//   python3 bench/counters/compare_ncu.py sim.json ncu.csv
#include <CLI/CLI.hpp>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <obsidian/device/scan.hpp>
#include <obsidian/device/tiled.hpp>
#include <obsidian/matrix.hpp>
#include <obsidian/obsidian.hpp>
#include <obsidian/report_json.hpp>
#include <obsidian/runtime.hpp>
#include <random>

using namespace obsidian;

namespace {

std::vector<uint32_t> randomWords(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) x = rng() % 1000 + 1;
  return v;
}

// One kernel of the comparison: its input and output lengths and the scalars after them.
struct Case {
  Kernel kernel;
  size_t inputs = 0, outputs = 0;
  std::vector<uint32_t> scalars;  // after the input (a matrix's rows, cols, pitch)
};

Kernel transposeKernel(const std::string& name, Padding padding) {
  return capture(name, 256, [padding](DPull2<EWord32> in) {
    return pConcat2(fmap(
                        [padding](const SPull2<EWord32>& tile) {
                          return exec<Block>([tile, padding](const Program<Block>& p) {
                            return push2<Block>(transpose(force2(p, push2<Block>(tile), padding)));
                          });
                        },
                        transpose(tiles(32, 32, in))),
                    in.cols(), in.rows());
  });
}

std::vector<Case> cases() {
  const size_t n = size_t{1} << 20;
  const uint32_t side = 1024;
  std::vector<Case> c;
  for (BlockReduceAlgorithm a : kBlockReduceAlgorithms) {
    c.push_back({tileReduceKernel<uint32_t>(a, Sum{}, 4096, 256), n, n / 4096, {}});
  }
  for (BlockScanAlgorithm a : {BlockScanAlgorithm::Sklansky, BlockScanAlgorithm::Sklansky2,
                               BlockScanAlgorithm::Sklansky3}) {
    c.push_back({tileScanKernel<uint32_t>(a, Sum{}, 512, 256), n, n, {}});
  }
  c.push_back({scanKernel<uint32_t>(Sum{}, ScanPolicy{256, 15, BlockLoadAlgorithm::Direct}), n, n, {}});
  c.push_back({transposeKernel("transposeUnpadded", Padding::None),
               size_t{side} * side,
               size_t{side} * side,
               {side, side, side}});
  c.push_back({transposeKernel("transposePadded", Padding::Auto),
               size_t{side} * side,
               size_t{side} * side,
               {side, side, side}});
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("The simulator's counters for the paper's kernels; --gpu also runs each once");
  std::string output = "counters.json";
  bool onGpu = false;
  app.add_option("output", output, "where to write the simulator's counters (JSON)");
  app.add_flag("--gpu", onGpu, "launch every kernel once on the GPU too (for Nsight Compute)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (onGpu && !gpu::available()) {
      std::cout << "SKIPPED: no CUDA device (" << gpu::unavailableReason() << ")\n";
      return 77;
    }
    nlohmann::json out = nlohmann::json::object();
    bool allEqual = true;
    for (const Case& c : cases()) {
      const std::vector<uint32_t> in = randomWords(c.inputs, 11);
      std::vector<uint32_t> simulated(c.outputs);
      auto args = [&](auto& input, auto& output) {
        std::vector<KernelArg> a{KernelArg(input)};
        for (uint32_t s : c.scalars) a.emplace_back(s);
        a.emplace_back(output);
        return a;
      };
      std::vector<uint32_t> inCopy = in;
      SimOptions o;
      o.profile = true;
      o.detectHazards = false;  // the tests check hazards; this measures
      const SimStats stats = simulate(c.kernel, args(std::as_const(inCopy), simulated), o);
      nlohmann::json j = toJson(stats.profile);
      j.erase("statements");
      j["predicted"] = toJson(predictTime(stats.profile));
      std::string check = "simulated";
      if (onGpu) {
        const gpu::DeviceBuffer<uint32_t> dIn(in);
        gpu::DeviceBuffer<uint32_t> dOut(c.outputs);
        gpu::launch(c.kernel, args(dIn, dOut));
        const bool equal = dOut.download() == simulated;
        allEqual = allEqual && equal;
        check = equal ? "GPU == simulator" : "GPU != simulator";
      }
      std::cout << c.kernel.name() << ": " << check << "; global load efficiency "
                << stats.profile.total.globalLoadEfficiency() << ", shared load wavefronts/request "
                << stats.profile.total.sharedLoadWavefrontsPerRequest() << ", SIMT efficiency "
                << stats.profile.total.simtEfficiency() << "\n";
      out[c.kernel.name()] = j;
    }
    std::ofstream(output) << out.dump(2) << "\n";
    return allEqual ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
