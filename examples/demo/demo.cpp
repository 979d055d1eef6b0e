// The demo: generate the paper's increment, increment2 and a block reduction (red3), print
// their CUDA and kernel reports (NVRTC-compiled for sm_90), then run each on random data and
// check it against a plain C++ reference: on the GPU when there is one, else on the CPU
// simulator. It says which it used.
#include <iostream>
#include <numeric>
#include <obsidian/report_json.hpp>
#include <obsidian/runtime.hpp>
#include <obsidian/sim.hpp>
#include <random>

#include "../increment/increment.hpp"
#include "../reduce/reduce.hpp"

namespace {

using obsidian::Kernel;

std::vector<uint32_t> randomWords(size_t n) {
  std::mt19937 rng(2026);
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) x = rng() % 100000 + 1;
  return v;
}

// Runs k on `in` and compares the output with `expected`.
bool run(const Kernel& k, const std::vector<uint32_t>& in, const std::vector<uint32_t>& expected) {
  std::vector<uint32_t> out(expected.size());
  if (obsidian::gpu::available()) {
    obsidian::gpu::DeviceBuffer<uint32_t> din(in), dout(out.size());
    obsidian::gpu::launch(k, {din, dout});
    dout.download(out);
  } else {
    obsidian::simulate(k, {in, out});
  }
  const bool pass = out == expected;
  std::cout << k.name() << ": " << in.size() << " elements: " << (pass ? "PASS" : "FAIL") << "\n";
  return pass;
}

}  // namespace

int main() {
  try {
    const Kernel inc = paper::incrementKernel(), inc2 = paper::increment2Kernel(),
                 red = paper::red3Kernel();
    for (const Kernel& k : {inc, inc2, red}) {
      std::cout << "==================== " << k.name() << " ====================\n"
                << k.cuda() << "\n";
      k.compile();  // NVRTC, for the default target (sm_90)
      std::cout << "report: " << toJson(k.report()).dump(2) << "\n\n";
    }

    const std::vector<uint32_t> in = randomWords(8192 * 5);
    std::vector<uint32_t> plusOne(in.size()), sums(in.size() / 512);
    std::transform(in.begin(), in.end(), plusOne.begin(), [](uint32_t x) { return x + 1; });
    for (size_t b = 0; b < sums.size(); ++b) {
      sums[b] = std::accumulate(in.begin() + static_cast<long>(b * 512),
                                in.begin() + static_cast<long>((b + 1) * 512), 0u);
    }
    if (obsidian::gpu::available()) {
      std::cout << "running on the GPU: " << obsidian::gpu::Device::get().info().name << "\n";
    } else {
      std::cout << "running on the CPU simulator (no GPU: " << obsidian::gpu::unavailableReason()
                << ")\n";
    }
    bool ok = run(inc, in, plusOne);
    ok = run(inc2, in, plusOne) && ok;
    ok = run(red, in, sums) && ok;
    std::cout << (ok ? "all results match the C++ references" : "MISMATCH") << "\n";
    return ok ? 0 : 1;
  } catch (const obsidian::Error& e) {
    std::cerr << "obsidian-demo: " << e.what() << "\n";
    return 1;
  }
}
