// The histogram benchmark (issue 15: the algorithm layer). In one run, on the same random data:
// our histogramEven (include/obsidian/device/histogram.hpp) against
// cub::DeviceHistogram::HistogramEven, with a 16-byte-load read kernel over the same bytes as
// the roofline: 256 bins of u8 samples at 2^20, 2^24 and 2^26; u32 and f32 samples with 64,
// 256, 1024 and 4096 bins. Inputs smaller than the 50 MB L2 are rotated over disjoint slices
// of a 256 MB (u8) or 512 MB buffer; every slice's counts, ours and CUB's, are checked against
// a CPU histogram first. Bin widths are powers of two, so every binning formula agrees exactly.
//
// Usage: obsidian-bench-histogram [--quick] [--runs N] [--json FILE]
//        [--threads T --vectors V --copies C]
#include <iostream>
#include <nlohmann/json.hpp>
#include <obsidian/device/histogram.hpp>
#include <random>

#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cub_histogram.hpp"

namespace {

using namespace obsidian;
using bench::gbps;
using bench::Row;
using nlohmann::json;

// Random samples on host and device: u8 anything, u32 below 2^30, f32 in [0, 1).
template <class S>
struct Samples {
  std::vector<S> host;
  gpu::DeviceBuffer<S> device;
  Samples(size_t n, uint32_t seed) : host(n), device(n) {
    std::mt19937_64 rng(seed);
    for (S& x : host) {
      if constexpr (std::is_same_v<S, float>) {
        x = static_cast<float>(rng() >> 40) / static_cast<float>(1 << 24);
      } else if constexpr (std::is_same_v<S, uint8_t>) {
        x = static_cast<uint8_t>(rng() >> 56);
      } else {
        x = static_cast<uint32_t>(rng() >> 34);
      }
    }
    device.upload(host);
  }
};

template <class S>
const char* typeName() {
  return std::is_same_v<S, uint8_t> ? "u8" : std::is_same_v<S, float> ? "f32" : "u32";
}
template <class S>
bench::SampleKind kindOf() {
  return std::is_same_v<S, uint8_t> ? bench::SampleKind::U8
         : std::is_same_v<S, float> ? bench::SampleKind::F32
                                    : bench::SampleKind::U32;
}
// The levels: the whole u8 range, [0, 2^30) for u32, [0, 1) for f32.
template <class S>
HistogramLevel<S> upperLevel() {
  if constexpr (std::is_same_v<S, uint8_t>) return 256u;
  if constexpr (std::is_same_v<S, float>) return 1.0f;
  if constexpr (std::is_same_v<S, uint32_t>) return 1u << 30;
}

template <class S>
std::vector<uint32_t> reference(const std::vector<S>& host, size_t from, size_t n, uint32_t bins) {
  std::vector<uint32_t> counts(bins, 0);
  for (size_t i = from; i < from + n; ++i) {
    if constexpr (std::is_same_v<S, float>) {
      ++counts[static_cast<uint32_t>(host[i] * static_cast<float>(bins))];
    } else {
      ++counts[static_cast<uint32_t>(uint64_t{host[i]} * bins / upperLevel<S>())];
    }
  }
  return counts;
}

// Slices of n samples, each starting 256-byte aligned.
std::vector<size_t> slicesOf(size_t n, size_t total, size_t bytesPer) {
  const size_t align = 256 / bytesPer;
  const size_t step = (n + align - 1) / align * align;
  const size_t count = std::max<size_t>(1, std::min<size_t>(16, total / step));
  std::vector<size_t> s;
  for (size_t i = 0; i < count; ++i) s.push_back(i * step);
  return s;
}

std::string describe(const HistogramPolicy& p, uint32_t bins) {
  return "threads " + std::to_string(p.threads) + ", vectors " + std::to_string(p.vectors) +
         ", copies " + std::to_string(histogramCopies(bins, p));
}

template <class S>
Row run(const Samples<S>& d, size_t n, uint32_t bins, const HistogramPolicy& policy, int runs) {
  Row row{std::to_string(bins) + " bins", typeName<S>(), n, {}, {}, {}, true, true,
          describe(policy, bins)};
  const std::vector<size_t> from = slicesOf(n, d.host.size(), sizeof(S));
  gpu::DeviceBuffer<uint32_t> ours(bins);
  uint32_t* cub = static_cast<uint32_t*>(bench::deviceAlloc(bins * 4));
  const size_t tempBytes = bench::cubHistogramTempBytes(kindOf<S>(), static_cast<int>(bins), n);
  void* temp = bench::deviceAlloc(std::max<size_t>(tempBytes, 1));
  const auto at = [&](size_t f) { return d.device.address() + f * sizeof(S); };
  device::Options o = device::withPolicy<device::HistogramEven>(policy);
  const auto launchOurs = [&](size_t f) {
    device::histogramEven<S>(at(f), n, ours, HistogramLevel<S>(0), upperLevel<S>(), o);
  };
  const auto launchCub = [&](size_t f) {
    bench::cubHistogramEven(kindOf<S>(), bench::ptr(at(f)), n, cub, static_cast<int>(bins), 0.0,
                            static_cast<double>(upperLevel<S>()), temp, tempBytes);
  };
  std::vector<uint32_t> got(bins);
  for (size_t f : from) {
    const std::vector<uint32_t> want = reference(d.host, f, n, bins);
    launchOurs(f);
    row.oursOk = row.oursOk && ours.download() == want;
    launchCub(f);
    bench::download(got.data(), cub, bins * 4);
    row.cubOk = row.cubOk && got == want;
  }
  o.synchronize = false;
  row.ours = bench::timeGpu([&](int r) { launchOurs(from[r % from.size()]); }, runs);
  row.cub = bench::timeGpu([&](int r) { launchCub(from[r % from.size()]); }, runs);
  uint32_t* sink = static_cast<uint32_t*>(bench::deviceAlloc(4));
  row.roof = bench::timeGpu(
      [&](int r) { bench::readKernel(bench::ptr(at(from[r % from.size()])), n * sizeof(S), sink); },
      runs);
  bench::deviceFree(sink);
  bench::deviceFree(temp);
  bench::deviceFree(cub);
  return row;
}

const bench::Table kTable8{
    "bins            type           n   ours us    CUB us ours/CUB  ours GB/s read GB/s %read  "
    "check\n",
    15, 1, "read"};
const bench::Table kTable32{kTable8.header, 15, 4, "read"};

template <class S>
const bench::Table& tableOf() {
  return sizeof(S) == 1 ? kTable8 : kTable32;
}

// Each row against its own read kernel's GB/s (the same bytes, the same slices).
template <class S>
void print(const Row& r) {
  bench::print(tableOf<S>(), r, gbps(r.n * sizeof(S), r.roof.medianMs));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian's histogram against CUB's on the GPU"};
  bench::CommonOptions common;
  bench::addCommonOptions(app, common);
  HistogramPolicy chosen{0, 0, 0, 0};
  app.add_option("--threads", chosen.threads, "threads per block (default: the policy table's)");
  app.add_option("--vectors", chosen.vectors, "16-byte vectors in flight per thread");
  app.add_option("--copies", chosen.copies, "copies of the shared histogram (1..32)");
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  if (!bench::deviceOrSkip()) return bench::kSkipped;

  HistogramPolicy policy = tunedFor(device::HistogramEven::table, currentSm()).policy;
  if (chosen.threads) policy.threads = chosen.threads;
  if (chosen.vectors) policy.vectors = chosen.vectors;
  if (chosen.copies) policy.copies = chosen.copies;

  const size_t big = common.quick ? size_t{1} << 22 : size_t{1} << 26;
  Samples<uint8_t> bytes(size_t{1} << 28, 1);
  Samples<uint32_t> words(size_t{1} << 27, 2);
  Samples<float> floats(size_t{1} << 27, 3);
  json rows = json::array();

  std::cout << "\npolicy: " << describe(policy, 256) << " (copies shrink for many bins)\n"
            << kTable8.header;
  std::vector<size_t> small =
      common.quick ? std::vector<size_t>{size_t{1} << 20}
                   : std::vector<size_t>{size_t{1} << 20, size_t{1} << 24, size_t{1} << 26};
  if (common.only) small = {common.only};
  for (size_t n : small) {
    const Row r = run(bytes, n, 256, policy, common.runs);
    print<uint8_t>(r);
    rows.push_back(bench::toJson(kTable8, r));
  }
  for (uint32_t bins : {64u, 256u, 1024u, 4096u}) {
    const Row u = run(words, common.only ? common.only : big, bins, policy, common.runs);
    print<uint32_t>(u);
    rows.push_back(bench::toJson(kTable32, u));
    const Row f = run(floats, common.only ? common.only : big, bins, policy, common.runs);
    print<float>(f);
    rows.push_back(bench::toJson(kTable32, f));
  }
  return bench::finish(common, 0, rows);
}
