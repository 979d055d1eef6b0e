// The scan benchmark (issue: scans as fast as CUB). In one run, on the same random data: our
// single-pass scan (the library's device scan, obsidian/device/scan.hpp, with the tuned policy
// for the device and element size: device::Scan::table; --threads/--seq/... override it)
// against cub::DeviceScan::InclusiveSum / ExclusiveSum, the three-kernel large scan of the case
// studies, and a 16-byte copy kernel as the roofline (bytes read + written). Small inputs are
// rotated over disjoint slices of 1 GiB buffers; every slice's output is checked first.
// Select-if (selectIf: the selected elements and their count from one pass) races
// cub::DeviceSelect::If on u32 values below 2^31 (half of them). --staged adds rows of the same
// tiles scanned as before the thread arrays: scanGrid over seqScanBlock, the tile staged in
// shared memory between the block scan and the look-back (what the registers buy).
//
// Tile shapes are swept by obsidian-tune (tuning/spaces/device_scan.json).
//
// Usage: obsidian-bench-scan [--quick] [--runs N] [--json FILE] [--threads T --seq S --load NAME]
//        [--staged] [--types u32,f32,u64,f64,select]
#include <array>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <obsidian/obsidian.hpp>

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
  // Changes to the table's policy (--threads, ..., --set field=value), for every element type.
  std::vector<device::PolicySetting> settings;
  int runs = 30;
  // scanAll's policy for n elements of type T: the table's row for them on this device (Large
  // or Small, as the ready calls choose), with the settings.
  template <class T>
  ScanPolicy policy(size_t n) const {
    const device::Target t = device::Target::onGpu();
    return device::withSettings<device::Scan>(device::scanPolicyFor<T>(t, n), settings);
  }
};

// The prefixes of host[from, from + n) against out (integers exactly, wrapping; floats to a
// relative bound).
template <class T>
bool checkScan(const std::vector<T>& host, size_t from, size_t n, const std::vector<T>& out,
               bool exclusive) {
  if constexpr (std::is_floating_point_v<T>) {
    const double tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-10;
    double acc = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!exclusive) acc += host[from + i];
      if (!std::isfinite(out[i]) || std::abs(out[i] - acc) > tolerance * acc + 1e-2) return false;
      if (exclusive) acc += host[from + i];
    }
  } else {
    T acc = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!exclusive) acc += host[from + i];
      if (out[i] != acc) return false;
      if (exclusive) acc += host[from + i];
    }
  }
  return true;
}

// The scanAll kernel's tiles scanned as before thread arrays: scanGrid over seqScanBlock (each
// thread's elements read twice from the load's arrangement, the scanned tile staged in shared
// memory, the tile's prefix added as it is stored).
template <class T>
Kernel stagedScanKernel(const ScanPolicy& policy) {
  ScanShape shape;
  shape.tile = policy.threads * policy.itemsPerThread;
  shape.delayNs = policy.delayNs;
  shape.splitWide = policy.splitWide;
  CaptureOptions options;
  options.minBlocksPerSm = policy.blocksPerSm;
  const auto scan = [policy](const Program<Block>& p, const SPull<Exp<T>>& tile) {
    return seqScanBlock(p, policy.itemsPerThread, Sum{}, tile, policy.load);
  };
  return capture(
      "scanStaged", policy.threads,
      [=](DPull<Exp<T>> in) { return scanGrid<T>(Sum{}, scan, in, shape); }, options);
}

template <class T>
bench::ScanElement scanElement() {
  if constexpr (std::is_same_v<T, float>) return bench::ScanElement::F32;
  if constexpr (std::is_same_v<T, double>) return bench::ScanElement::F64;
  if constexpr (std::is_same_v<T, uint64_t>) return bench::ScanElement::U64;
  return bench::ScanElement::U32;
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
          device::describePolicy<device::Scan>(c.policy<T>(n))};
  const std::vector<size_t> from = slices(n, d.host.size());
  const bench::ScanElement type = scanElement<T>();
  const size_t tempBytes = bench::cubScanTempBytes(n, type, exclusive);
  void* temp = bench::deviceAlloc(std::max<size_t>(tempBytes, 1));
  auto outAt = [&](size_t f) { return mutablePtr(out.address() + f * sizeof(T)); };
  gpu::LaunchOptions async;
  async.synchronize = false;
  std::vector<T> got(n);
  for (size_t f : from) {
    gpu::launch(k, {slice(d.device, f, n), slice(out, f, n, true)});
    bench::download(got.data(), outAt(f), n * sizeof(T));
    row.oursOk = row.oursOk && checkScan(d.host, f, n, got, exclusive);
    bench::cubScanSum(ptr(d.device.address() + f * sizeof(T)), outAt(f), n, type, exclusive, temp,
                      tempBytes);
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
        bench::cubScanSum(ptr(d.device.address() + f * sizeof(T)), outAt(f), n, type, exclusive,
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
  const LargeScan kernels =
      largeScanKernels<uint32_t>(BlockScanAlgorithm::Sklansky3, 1u << 11, 1024, Sum{}, 0u);
  std::vector<uint32_t> host(d.host.begin(), d.host.begin() + static_cast<std::ptrdiff_t>(n));
  gpu::DeviceBuffer<uint32_t> in(host), out(n);
  ScanPlan<gpu::DeviceBuffer<uint32_t>> plan(kernels, n);
  plan.run(in, out, false);
  row.oursOk = checkScan(d.host, 0, n, out.download(), false);
  gpu::LaunchOptions async;
  async.synchronize = false;
  row.ours = bench::timeGpu([&](int) { plan.run(in, out, false, async); }, runs);
  const size_t tempBytes = bench::cubScanTempBytes(n, bench::ScanElement::U32, false);
  void* temp = bench::deviceAlloc(std::max<size_t>(tempBytes, 1));
  row.cub = bench::timeGpu(
      [&](int) {
        bench::cubScanSum(ptr(in.address()), mutablePtr(out.address()), n, bench::ScanElement::U32,
                          false, temp, tempBytes);
      },
      runs);
  row.roof = bench::timeGpu(
      [&](int) { bench::copyKernel(ptr(in.address()), mutablePtr(out.address()), n * 4); }, runs);
  bench::deviceFree(temp);
  return row;
}

// The selection of u32 values below 2^31 against cub::DeviceSelect::If: the selected elements
// in order and their count, both checked.
Row runSelect(const Data<uint32_t>& d, gpu::DeviceBuffer<uint32_t>& out, size_t n, const Config& c,
              const Kernel& k, const std::string& config) {
  constexpr uint32_t kBelow = 1u << 31;
  Row row{"select-if", "u32", n, {}, {}, {}, true, true, config};
  const std::vector<size_t> from = slices(n, d.host.size());
  gpu::DeviceBuffer<uint32_t> count(1);
  const size_t tempBytes = bench::cubSelectBelowTempBytes(n);
  void* temp = bench::deviceAlloc(std::max<size_t>(tempBytes, 1));
  auto outAt = [&](size_t f) { return mutablePtr(out.address() + f * sizeof(uint32_t)); };
  const auto check = [&](size_t f) {
    const uint32_t got = count.download()[0];
    std::vector<uint32_t> values(got);
    if (got > n) return false;
    bench::download(values.data(), outAt(f), got * sizeof(uint32_t));
    size_t at = 0;
    for (size_t i = f; i < f + n; ++i) {
      if (d.host[i] < kBelow && (at >= got || values[at++] != d.host[i])) return false;
    }
    return at == got;
  };
  gpu::LaunchOptions async;
  async.synchronize = false;
  const auto ours = [&](size_t f, const gpu::LaunchOptions& o) {
    gpu::launch(k, {slice(d.device, f, n), slice(out, f, n, true), slice(count, 0, 1, true)}, o);
  };
  const auto cub = [&](size_t f) {
    bench::cubSelectBelow(ptr(d.device.address() + f * sizeof(uint32_t)), outAt(f),
                          mutablePtr(count.address()), n, kBelow, temp, tempBytes);
  };
  for (size_t f : from) {
    ours(f, {});
    row.oursOk = row.oursOk && check(f);
    cub(f);
    row.cubOk = row.cubOk && check(f);
  }
  row.ours = bench::timeGpu([&](int r) { ours(from[r % from.size()], async); }, c.runs);
  row.cub = bench::timeGpu([&](int r) { cub(from[r % from.size()]); }, c.runs);
  row.roof = bench::timeGpu(
      [&](int r) {
        const size_t f = from[r % from.size()];
        bench::copyKernel(ptr(d.device.address() + f * sizeof(uint32_t)), outAt(f), n * 4);
      },
      c.runs);
  bench::deviceFree(temp);
  return row;
}

// Bytes read and written per element; the roofline is the copy kernel.
const bench::Table kTable{
    "kind           type           n   ours us    CUB us ours/CUB ours GB/s copy GB/s %copy  "
    "check\n",
    14, 8, "copy"};

// The same for 8-byte elements (u64, f64): 16 bytes per element.
const bench::Table kTable64{kTable.header, 14, 16, "copy"};

// A selection of half the elements: 4 bytes read and 2 written per element.
const bench::Table kTableSelect{kTable.header, 14, 6, "copy"};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian scans against CUB on the GPU"};
  Config c;
  bench::CommonOptions common;
  bench::addCommonOptions(app, common);
  // Each option sets one field of the policy (device::Scan::fields()), for every element type.
  std::map<std::string, std::string> fields;
  for (const auto& [option, field, help] : std::vector<std::array<std::string, 3>>{
           {"--threads", "threads", "threads per block"},
           {"--seq", "items", "elements per thread (odd avoids bank conflicts)"},
           {"--load", "load", "direct, striped or warpStriped"},
           {"--delay", "delay", "look-back back-off in ns"},
           {"--blocks", "blocks", "blocks per SM the registers must allow"},
           {"--split-wide", "split_wide", "64-bit status in two packed words (true/false)"}}) {
    app.add_option(option, fields[field], "scanAll: " + help + " (default: the policy table's)");
  }
  bool staged = false;
  app.add_flag("--staged", staged,
               "also time the same tiles staged in shared memory (scanGrid over seqScanBlock)");
  std::string types = "u32,f32,u64,f64,select";
  app.add_option("--types", types,
                 "element types to measure, comma-separated (u32,f32 and u64,f64 are measured "
                 "together; select: select-if of u32)");
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  const auto wanted = [&](const char* t) { return types.find(t) != std::string::npos; };
  c.runs = common.runs;
  for (const auto& [field, value] : fields)
    if (!value.empty()) c.settings.push_back({field, value});

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
  json rows = json::array();

  std::cout << "\nscanAll, 32-bit elements (the policy of each size at the end of its row)\n"
            << kTable.header;
  if (wanted("u32") || wanted("f32")) {
    for (size_t n : bench::tableSizes(common)) {
      const Kernel ku = scanKernel<uint32_t>(Sum{}, c.policy<uint32_t>(n));
      const Kernel kf = scanKernel<float>(Sum{}, c.policy<float>(n));
      const Kernel ke = scanKernel<uint32_t>(Sum{}, c.policy<uint32_t>(n), ScanKind::Exclusive, 0u);
      const Kernel ks = stagedScanKernel<uint32_t>(c.policy<uint32_t>(n));
      std::vector<Row> results = {runScan(words, outWords, n, false, c, ku),
                                  runScan(floats, outFloats, n, false, c, kf),
                                  runScan(words, outWords, n, true, c, ke)};
      if (staged) {
        results.push_back(runScan(words, outWords, n, false, c, ks));
        results.back().kind = "incl. staged";
      }
      for (const Row& r : results) {
        bench::print(kTable, r, roofline);
        rows.push_back(bench::toJson(kTable, r));
      }
    }
    for (size_t n : bench::largeSizes(common.quick)) {
      const Row r = runLargeScan(words, n, c.runs);
      bench::print(kTable, r, roofline);
      rows.push_back(bench::toJson(kTable, r));
    }
  }
  if (wanted("u64") || wanted("f64")) {
    // 64-bit elements: separate flag and value arrays in the look-back (no packed word), 2 GiB
    // each way at 2^28.
    Data<uint64_t> longs(total, 3);
    Data<double> doubles(total, 4);
    gpu::DeviceBuffer<uint64_t> outLongs(total);
    gpu::DeviceBuffer<double> outDoubles(total);
    std::cout << "\n64-bit elements (GB/s and %copy count 16 bytes per element)\n" << kTable.header;
    for (size_t n : bench::tableSizes(common)) {
      const Kernel kl = scanKernel<uint64_t>(Sum{}, c.policy<uint64_t>(n));
      const Kernel kd = scanKernel<double>(Sum{}, c.policy<double>(n));
      for (const Row& r : {runScan(longs, outLongs, n, false, c, kl),
                           runScan(doubles, outDoubles, n, false, c, kd)}) {
        bench::print(kTable64, r, roofline);
        rows.push_back(bench::toJson(kTable64, r));
      }
    }
  }
  if (wanted("select")) {
    const ScanPolicy policy = device::withSettings<device::Scan>(kSelectPolicy, c.settings);
    CaptureOptions options;
    options.minBlocksPerSm = policy.blocksPerSm;
    const Kernel k = capture(
        "selectBelow", policy.threads,
        [policy](DPull<EWord32> in) {
          return selectIf<uint32_t>(
              in, [](const EWord32& v) { return v < (1u << 31); }, policy);
        },
        options);
    std::cout << "\nselectIf, u32 values below 2^31 (half of them; GB/s counts 6 bytes an "
                 "element)\n"
              << kTable.header;
    for (size_t n : bench::tableSizes(common)) {
      const Row r =
          runSelect(words, outWords, n, c, k, device::describePolicy<device::Scan>(policy));
      bench::print(kTableSelect, r, roofline);
      rows.push_back(bench::toJson(kTableSelect, r));
    }
  }
  return bench::finish(common, roofline, rows);
}
