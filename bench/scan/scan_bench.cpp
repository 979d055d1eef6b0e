// The scan benchmark (issue: scans as fast as CUB). In one run, on the same random data: our
// single-pass scan (scanGrid with the thread-sequential block scan, examples/scan/fast_scan.hpp)
// against cub::DeviceScan::InclusiveSum / ExclusiveSum, the three-kernel large scan of the case
// studies, and a 16-byte copy kernel as the roofline (bytes read + written). Small inputs are
// rotated over disjoint slices of 1 GiB buffers; every slice's output is checked first.
//
// Usage: obsidian-bench-scan [--quick] [--sweep] [--runs N] [--json FILE] [--threads T --seq S]
#include <iostream>
#include <nlohmann/json.hpp>
#include <obsidian/obsidian.hpp>

#include "../../examples/scan/fast_scan.hpp"
#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cub_scan.hpp"

namespace {

using namespace obsidian;
using bench::Data;
using bench::gbps;
using bench::mutablePtr;
using bench::ptr;
using bench::Row;
using bench::slice;
using bench::slices;
using bench::typeName;
using nlohmann::json;

struct Config {
  uint32_t threads = 512, seq = 19;  // scanAll: tiles of threads x seq elements (--sweep's best)
  bool stage = false;                // scanAll: load the tile through shared memory
  int runs = 30;
};

// The prefixes of host[from, from + n) against out (u32 exactly, f32 to a relative bound).
template <class T>
bool checkScan(const std::vector<T>& host, size_t from, size_t n, const std::vector<T>& out,
               bool exclusive) {
  if constexpr (std::is_same_v<T, float>) {
    double acc = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!exclusive) acc += host[from + i];
      if (!std::isfinite(out[i]) || std::abs(out[i] - acc) > 1e-4 * acc + 1e-2) return false;
      if (exclusive) acc += host[from + i];
    }
  } else {
    uint32_t acc = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!exclusive) acc += host[from + i];
      if (out[i] != acc) return false;
      if (exclusive) acc += host[from + i];
    }
  }
  return true;
}

template <class T>
Row runScan(const Data<T>& d, gpu::DeviceBuffer<T>& out, size_t n, bool exclusive, const Config& c,
            const Kernel& k) {
  Row row{exclusive ? "exclusive" : "inclusive",
          typeName<T>(),
          n,
          {},
          {},
          {},
          true,
          true,
          "threads " + std::to_string(c.threads) + ", seq " + std::to_string(c.seq) +
              (c.stage ? ", staged" : "")};
  const std::vector<size_t> from = slices(n, d.host.size());
  const bool isFloat = std::is_same_v<T, float>;
  const size_t tempBytes = bench::cubScanTempBytes(n, isFloat, exclusive);
  void* temp = bench::deviceAlloc(std::max<size_t>(tempBytes, 1));
  auto outAt = [&](size_t f) { return mutablePtr(out.address() + f * sizeof(T)); };
  gpu::LaunchOptions async;
  async.synchronize = false;
  std::vector<T> got(n);
  for (size_t f : from) {
    gpu::launch(k, {slice(d.device, f, n), slice(out, f, n, true)});
    bench::download(got.data(), outAt(f), n * sizeof(T));
    row.oursOk = row.oursOk && checkScan(d.host, f, n, got, exclusive);
    bench::cubScanSum(ptr(d.device.address() + f * sizeof(T)), outAt(f), n, isFloat, exclusive,
                      temp, tempBytes);
    bench::download(got.data(), outAt(f), n * sizeof(T));
    row.cubOk = row.cubOk && checkScan(d.host, f, n, got, exclusive);
  }
  row.ours = bench::timeGpu(
      [&](int r) {
        const size_t f = from[r % from.size()];
        gpu::launch(k, {slice(d.device, f, n), slice(out, f, n, true)}, async);
      },
      c.runs);
  row.cub = bench::timeGpu(
      [&](int r) {
        const size_t f = from[r % from.size()];
        bench::cubScanSum(ptr(d.device.address() + f * sizeof(T)), outAt(f), n, isFloat, exclusive,
                          temp, tempBytes);
      },
      c.runs);
  row.roof = bench::timeGpu(
      [&](int r) {
        const size_t f = from[r % from.size()];
        bench::copyKernel(ptr(d.device.address() + f * sizeof(T)), outAt(f), n * sizeof(T));
      },
      c.runs);
  bench::deviceFree(temp);
  return row;
}

// The case studies' three-kernel scan (block scans, scan of the block sums, add-back).
Row runLargeScan(const Data<uint32_t>& d, size_t n, int runs) {
  Row row{"3-kernel scan", "u32", n, {}, {}, {}, true, true, "sklansky3, 2048-element chunks"};
  const auto plusW = [](const EWord32& a, const EWord32& b) { return a + b; };
  const paper::LargeScan kernels =
      paper::largeScanKernels<uint32_t>(paper::ScanVariant::Sklansky3, 11, 1024, plusW, 0u);
  std::vector<uint32_t> host(d.host.begin(), d.host.begin() + static_cast<std::ptrdiff_t>(n));
  gpu::DeviceBuffer<uint32_t> in(host), out(n);
  paper::ScanPlan<gpu::DeviceBuffer<uint32_t>> plan(kernels, n);
  plan.run(in, out, false);
  row.oursOk = checkScan(d.host, 0, n, out.download(), false);
  gpu::LaunchOptions async;
  async.synchronize = false;
  row.ours = bench::timeGpu([&](int) { plan.run(in, out, false, async); }, runs);
  const size_t tempBytes = bench::cubScanTempBytes(n, false, false);
  void* temp = bench::deviceAlloc(std::max<size_t>(tempBytes, 1));
  row.cub = bench::timeGpu(
      [&](int) {
        bench::cubScanSum(ptr(in.address()), mutablePtr(out.address()), n, false, false, temp,
                          tempBytes);
      },
      runs);
  row.roof = bench::timeGpu(
      [&](int) { bench::copyKernel(ptr(in.address()), mutablePtr(out.address()), n * 4); }, runs);
  bench::deviceFree(temp);
  return row;
}

// Bytes read and written per element; the roofline is the copy kernel.
const bench::Table kTable{
    "kind           type           n   ours us    CUB us ours/CUB ours GB/s copy GB/s %copy  "
    "check\n",
    14, 8, "copy"};

void print(const Row& r, double roofline) { bench::print(kTable, r, roofline); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian scans against CUB on the GPU"};
  Config c;
  bench::CommonOptions common;
  bench::addCommonOptions(app, common, "time tile shapes at 2^24 and 2^28 first");
  app.add_option("--threads", c.threads, "scanAll: threads per block");
  app.add_option("--seq", c.seq, "scanAll: elements per thread (odd avoids bank conflicts)");
  app.add_flag("--stage", c.stage, "scanAll: load each tile through shared memory");
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  c.runs = common.runs;

  if (!bench::deviceOrSkip()) return bench::kSkipped;
  const size_t total = bench::kTotal;
  Data<uint32_t> words(total, 1);
  Data<float> floats(total, 2);
  gpu::DeviceBuffer<uint32_t> outWords(total);
  gpu::DeviceBuffer<float> outFloats(total);
  const bench::Timing roof = bench::timeGpu(
      [&](int) {
        bench::copyKernel(ptr(words.device.address()), mutablePtr(outWords.address()), total * 4);
      },
      c.runs);
  const double roofline = gbps(total * 8, roof.medianMs);
  std::cout << "copy roofline (16-byte loads and stores, 1 GiB each way): " << roofline
            << " GB/s\n";
  const auto plusW = [](const EWord32& a, const EWord32& b) { return a + b; };
  const auto plusF = [](const EFloat& a, const EFloat& b) { return a + b; };
  json rows = json::array();

  if (common.sweep) {
    std::cout << "\nsweep (u32, inclusive)\n" << kTable.header;
    const std::pair<uint32_t, uint32_t> shapes[] = {{256, 15}, {256, 19}, {512, 15},  {512, 17},
                                                    {512, 19}, {512, 21}, {1024, 11}, {1024, 13}};
    for (const auto& [threads, seq] : shapes) {
      for (bool stage : {false, true}) {
        Config s = c;
        s.threads = threads;
        s.seq = seq;
        s.stage = stage;
        const Kernel k =
            paper::fastScanKernel<uint32_t>(plusW, threads, seq, ScanKind::Inclusive, 0u, stage);
        for (size_t n : {size_t{1} << 24, size_t{1} << 28}) {
          print(runScan(words, outWords, n, false, s, k), roofline);
        }
      }
    }
  }

  std::cout << "\nscanAll: " << c.threads << " threads x " << c.seq << " elements per tile\n"
            << kTable.header;
  const Kernel ku = paper::fastScanKernel<uint32_t>(plusW, c.threads, c.seq);
  const Kernel kf = paper::fastScanKernel<float>(plusF, c.threads, c.seq);
  const Kernel ke =
      paper::fastScanKernel<uint32_t>(plusW, c.threads, c.seq, ScanKind::Exclusive, 0u);
  for (size_t n : bench::tableSizes(common)) {
    for (const Row& r :
         {runScan(words, outWords, n, false, c, ku), runScan(floats, outFloats, n, false, c, kf),
          runScan(words, outWords, n, true, c, ke)}) {
      print(r, roofline);
      rows.push_back(bench::toJson(kTable, r));
    }
  }
  for (size_t n : bench::largeSizes(common.quick)) {
    const Row r = runLargeScan(words, n, c.runs);
    print(r, roofline);
    rows.push_back(bench::toJson(kTable, r));
  }
  return bench::finish(common, roofline, rows);
}
