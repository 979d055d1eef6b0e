// The scan case study (paper Section 5.3): sklansky, sklansky2, sklansky3 and Kogge-Stone block
// scans, inclusive and exclusive, on u32 and f32 with + and on u32 with max, over several chunk
// sizes and thread counts (virtualized where a block has fewer threads than the scan's
// parallel loops), each checked against a plain C++ scan; then the large scan of any length
// (block scans, a scan of the block sums, add-back) on sizes that are not powers of two, on u32
// and f32 with +. On the GPU when there is one (timed), else on the CPU simulator. Exits 0 only
// if every result matches.
#include "scan.hpp"

#include <algorithm>
#include <iostream>

#include "../common/runner.hpp"

namespace {

using namespace examples;
using paper::ScanVariant;

// An associative operator on X: the kernels' (on Exp<X>), the reference's (on X), its identity,
// and the test data to scan with it.
template <KernelScalar X>
struct Monoid {
  std::string name;
  std::function<Exp<X>(const Exp<X>&, const Exp<X>&)> op;
  std::function<X(X, X)> host;
  X identity;
  std::function<std::vector<X>(size_t n, uint32_t seed)> data;
};

// Non-zero integers in [-8, 8] as floats: every partial sum of up to 2^26 of them is an integer
// far below 2^24, so float sums are exact in any order and the results compare exactly.
std::vector<float> smallIntegerFloats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  const std::vector<uint32_t> w = randomWords(n, seed, 16);  // 1..16
  for (size_t i = 0; i < n; ++i) {
    const int k = static_cast<int>(w[i]);
    v[i] = static_cast<float>(k <= 8 ? -k : k - 8);
  }
  return v;
}

Monoid<uint32_t> plusU32() {
  return {"u32 +", [](const EWord32& a, const EWord32& b) { return a + b; },
          [](uint32_t a, uint32_t b) { return a + b; }, 0u,
          [](size_t n, uint32_t seed) { return randomWords(n, seed); }};
}
Monoid<float> plusF32() {
  return {"f32 +", [](const EFloat& a, const EFloat& b) { return a + b; },
          [](float a, float b) { return a + b; }, 0.0f, smallIntegerFloats};
}
Monoid<uint32_t> maxU32() {
  return {"u32 max", [](const EWord32& a, const EWord32& b) { return max(a, b); },
          [](uint32_t a, uint32_t b) { return std::max(a, b); }, 0u,
          [](size_t n, uint32_t seed) { return randomWords(n, seed, 1u << 30); }};
}

// The scan of every chunk of `in` (the last may be short), in plain C++.
template <KernelScalar X>
std::vector<X> reference(const Monoid<X>& m, const std::vector<X>& in, size_t chunk,
                         bool exclusive) {
  std::vector<X> out(in.size());
  for (size_t b = 0; b < in.size(); b += chunk) {
    X acc = m.identity;
    for (size_t i = b; i < std::min(in.size(), b + chunk); ++i) {
      if (exclusive) out[i] = acc;
      acc = m.host(acc, in[i]);
      if (!exclusive) out[i] = acc;
    }
  }
  return out;
}

std::string label(ScanVariant v, bool exclusive) {
  return name(v) + (exclusive ? " exclusive" : "");
}

struct Config {
  uint32_t log;  // chunks of 2^log elements
  uint32_t threads;
};

// The chunk sizes and threads per block of variant v: one thread per element (two for
// sklansky2/3) up to 1024 threads, and fewer threads than that (virtualized).
std::vector<Config> configs(ScanVariant v, const Options& o, bool few) {
  const auto natural = [v](uint32_t log) { return paper::naturalThreads(v, log); };
  if (o.quick) return {{5, natural(5)}, {8, 32}};
  if (few) return {{8, natural(8)}, {10, 128}};
  return {{8, natural(8)}, {10, natural(10)}, {11, natural(11)}, {10, 128}};
}

// Every variant, inclusive and exclusive, over chunks of the input (one block per chunk).
template <KernelScalar X>
bool blockScans(const Monoid<X>& m, const Options& o, bool fewConfigs) {
  Table table("block scans, " + m.name + " (one block per chunk of the input)");
  // On the GPU, 2^26 elements (256 MB, beyond the 50 MB L2); on the simulator, a few blocks.
  const size_t n = o.quick ? 1024 : o.gpu() ? size_t{1} << 26 : size_t{1} << 14;
  const std::vector<X> in = m.data(n, 2026);
  for (ScanVariant v : paper::scanVariants) {
    for (const Config& c : configs(v, o, fewConfigs)) {
      for (bool exclusive : {false, true}) {
        const Kernel k = exclusive
                             ? tileScanKernel<X>(v, m.op, 1u << c.log, c.threads, true, m.identity)
                             : tileScanKernel<X>(v, m.op, 1u << c.log, c.threads);
        if (o.cuda) std::cout << k.cuda() << "\n";
        std::vector<X> out(n);
        Args args;
        args.in(in).out(out);
        const double ms = run(k, args, o);
        const bool pass = out == reference(m, in, size_t{1} << c.log, exclusive);
        table.add(label(v, exclusive), k, 1u << c.log, n, pass, ms, 2.0 * n * sizeof(X));
      }
    }
  }
  table.print();
  return table.allPassed();
}

// The large scan of n elements (any n >= 1) with each variant's 2^log-element block scans.
template <KernelScalar X>
bool largeScans(const Monoid<X>& m, const Options& o) {
  Table table("large scans, " + m.name +
              " (block scans, a scan of the block sums, add-back; timed as a whole)");
  const std::vector<size_t> sizes =
      o.quick   ? std::vector<size_t>{1, 1000, 4096 * 3 + 5}
      : o.gpu() ? std::vector<size_t>{1, 1000, (size_t{1} << 20) + 3, size_t{1} << 26}
                : std::vector<size_t>{1, 1000, 100003};
  const uint32_t log = o.quick ? 8 : 11;
  for (ScanVariant v : paper::scanVariants) {
    const LargeScan k =
        largeScanKernels<X>(v, 1u << log, paper::naturalThreads(v, log), m.op, m.identity);
    if (o.cuda) {
      std::cout << k.inclusive.cuda() << "\n"
                << k.exclusive.cuda() << "\n"
                << k.addBack.cuda() << "\n";
    }
    for (size_t n : sizes) {
      const std::vector<X> in = m.data(n, static_cast<uint32_t>(n));
      for (bool exclusive : {false, true}) {
        std::vector<X> out;
        double ms = std::nan("");
        if (o.gpu()) {
          const gpu::DeviceBuffer<X> din(in);
          gpu::DeviceBuffer<X> dout(n);
          ScanPlan<gpu::DeviceBuffer<X>> plan(k, n);  // scratch allocated once
          plan.run(din, dout, exclusive);
          out = dout.download();
          gpu::LaunchOptions async;
          async.synchronize = false;
          ms = timeOnGpu([&] { plan.run(din, dout, exclusive, async); }, o);
        } else {
          out = scanOnSimulator(k, in, exclusive);
        }
        const bool pass = out == reference(m, in, n, exclusive);
        table.add(label(v, exclusive), exclusive ? k.exclusive : k.inclusive, k.chunk, n, pass, ms,
                  2.0 * n * sizeof(X));
      }
    }
  }
  table.print();
  return table.allPassed();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("The paper's scans (Section 5.3) and a large scan of any length");
  const Options o = parse(app, argc, argv);
  try {
    std::cout << "running on " << backendName(o) << "\n";
    bool ok = blockScans(plusU32(), o, false);
    ok = blockScans(plusF32(), o, true) && ok;
    ok = blockScans(maxU32(), o, true) && ok;
    ok = largeScans(plusU32(), o) && ok;
    ok = largeScans(plusF32(), o) && ok;
    std::cout << "\n" << (ok ? "PASS" : "FAIL") << "\n";
    return ok ? 0 : 1;
  } catch (const Error& e) {
    std::cerr << "scan: " << e.what() << "\n";
    return 1;
  }
}
