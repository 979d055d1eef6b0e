// The reduction benchmark (issue: reductions as fast as CUB). In one run, on the same random
// data: our one-launch reduction (reduceAll) against cub::DeviceReduce::Sum, our batched
// reduction of 4096-element segments (redVec, the paper's mapRed shape) against
// cub::DeviceSegmentedReduce::Sum, and a 16-byte-load read kernel as the memory roofline.
// Small inputs are rotated over disjoint slices of a 1 GiB buffer so that no run finds its
// input in the 50 MB L2; every slice's result is checked against a CPU reference first.
//
// Both kernels are the library's device layer (obsidian/device/reduce.hpp) with the tuned
// policy for the device (kReducePolicies, kSegmentedReducePolicies); the options override it
// for experiments. Configurations are swept by obsidian-tune (tuning/spaces/device_reduce.json).
//
// Usage: obsidian-bench-reduce [--quick] [--runs N] [--json FILE]
//        [--threads T --unroll U --seg-threads S --seg-fill]
#include <iostream>
#include <nlohmann/json.hpp>
#include <obsidian/obsidian.hpp>

#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cub_reduce.hpp"

namespace {

using namespace obsidian;
using bench::Data;
using bench::gbps;
using bench::matches;
using bench::ptr;
using bench::reference;
using bench::Row;
using bench::slice;
using bench::slices;
using bench::typeName;
using nlohmann::json;

struct Config {
  ReducePolicy reduce = reducePolicy();                       // reduceAll
  SegmentedReducePolicy segmented = segmentedReducePolicy();  // segmentedReduce
  bool segFill = false;  // segmentedReduce with an occupancy-sized grid
  int runs = 30;
};

// The read roofline at this size: the 16-byte read kernel over the same slices.
template <class T>
bench::Timing readTime(const Data<T>& d, const std::vector<size_t>& from, size_t n, int runs) {
  uint32_t* sink = static_cast<uint32_t*>(bench::deviceAlloc(4));
  const bench::Timing t = bench::timeGpu(
      [&](int r) {
        bench::readKernel(ptr(d.device.address() + from[r % from.size()] * sizeof(T)),
                          n * sizeof(T), sink);
      },
      runs);
  bench::deviceFree(sink);
  return t;
}

template <class T>
Kernel reduceAllFor(const Config& c) {
  return reduceKernel<T>(Sum{}, T{0}, c.reduce, reduceBlocksOnGpu<T>(Sum{}, T{0}, c.reduce));
}

template <class T>
Row runReduce(const Data<T>& d, size_t n, const Config& c, const Kernel& k) {
  Row row{"reduce",
          typeName<T>(),
          n,
          {},
          {},
          {},
          true,
          true,
          device::describePolicy<device::Reduce>(c.reduce)};
  const std::vector<size_t> from = slices(n, d.host.size());
  gpu::DeviceBuffer<T> out(1);
  void* cubOut = bench::deviceAlloc(sizeof(T));
  const size_t tempBytes = bench::cubReduceTempBytes(n, std::is_same_v<T, float>);
  void* temp = bench::deviceAlloc(std::max<size_t>(tempBytes, 1));
  gpu::LaunchOptions async;
  async.synchronize = false;
  for (size_t f : from) {  // every slice's result, once, from both
    const double want = reference(d.host, f, n);
    gpu::launch(k, {slice(d.device, f, n), out});
    row.oursOk = row.oursOk && matches(out.download()[0], want, n);
    bench::cubReduceSum(ptr(d.device.address() + f * sizeof(T)), n, cubOut,
                        std::is_same_v<T, float>, temp, tempBytes);
    T got{};
    bench::download(&got, cubOut, sizeof(T));
    row.cubOk = row.cubOk && matches(got, want, n);
  }
  row.ours = bench::timeGpu(
      [&](int r) {
        gpu::launch(k, {slice(d.device, from[r % from.size()], n), out}, async);
      },
      c.runs);
  row.cub = bench::timeGpu(
      [&](int r) {
        bench::cubReduceSum(ptr(d.device.address() + from[r % from.size()] * sizeof(T)), n, cubOut,
                            std::is_same_v<T, float>, temp, tempBytes);
      },
      c.runs);
  row.roof = readTime(d, from, n, c.runs);
  bench::deviceFree(temp);
  bench::deviceFree(cubOut);
  return row;
}

template <class T>
Row runSegmented(const Data<T>& d, size_t n, const Config& c, const Kernel& k) {
  constexpr uint32_t segment = 4096;
  const size_t segments = n / segment;
  Row row{"segmented 4096",
          typeName<T>(),
          n,
          {},
          {},
          {},
          true,
          true,
          "threads " + std::to_string(c.segmented.threads) +
              (c.segFill ? ", occupancy grid" : ", one block per segment")};
  const std::vector<size_t> from = slices(n, d.host.size());
  gpu::DeviceBuffer<T> out(segments);
  void* cubOut = bench::deviceAlloc(segments * sizeof(T));
  const size_t tempBytes =
      bench::cubSegmentedTempBytes(segments, segment, std::is_same_v<T, float>);
  void* temp = bench::deviceAlloc(std::max<size_t>(tempBytes, 1));
  gpu::LaunchOptions options;
  options.fillDevice = c.segFill;
  std::vector<T> got(segments);
  for (size_t f : from) {
    gpu::launch(k, {slice(d.device, f, n), out}, options);
    const std::vector<T> ours = out.download();
    bench::cubSegmentedSum(ptr(d.device.address() + f * sizeof(T)), segments, segment, cubOut,
                           std::is_same_v<T, float>, temp, tempBytes);
    bench::download(got.data(), cubOut, segments * sizeof(T));
    for (size_t s = 0; s < segments; ++s) {
      const double want = reference(d.host, f + s * segment, segment);
      row.oursOk = row.oursOk && matches(ours[s], want, segment);
      row.cubOk = row.cubOk && matches(got[s], want, segment);
    }
  }
  options.synchronize = false;
  row.ours = bench::timeGpu(
      [&](int r) {
        gpu::launch(k, {slice(d.device, from[r % from.size()], n), out}, options);
      },
      c.runs);
  row.cub = bench::timeGpu(
      [&](int r) {
        bench::cubSegmentedSum(ptr(d.device.address() + from[r % from.size()] * sizeof(T)),
                               segments, segment, cubOut, std::is_same_v<T, float>, temp,
                               tempBytes);
      },
      c.runs);
  row.roof = readTime(d, from, n, c.runs);
  bench::deviceFree(temp);
  bench::deviceFree(cubOut);
  return row;
}

// Bytes read per element; the roofline is the read kernel.
const bench::Table kTable{
    "kind            type           n   ours us    CUB us ours/CUB  ours GB/s read GB/s %roof  "
    "check\n",
    15, 4, "read"};

void print(const Row& r, double roofline) { bench::print(kTable, r, roofline); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian reductions against CUB on the GPU"};
  Config c;
  bench::CommonOptions common;
  bench::addCommonOptions(app, common);
  std::string sweep = name(c.reduce.sweep);
  app.add_option("--threads", c.reduce.threads, "reduceAll: threads per block (default: policy)");
  app.add_option("--unroll", c.reduce.unroll, "reduceAll: vectors in flight per thread");
  app.add_option("--min-vectors", c.reduce.minVectorsPerThread,
                 "reduceAll: fewer blocks for short inputs, at least this many vectors per thread "
                 "(0: always an occupancy-sized grid)");
  app.add_option("--sweep", sweep, "reduceAll: strided, tiles or evenShare (default: policy)");
  app.add_option("--seg-threads", c.segmented.threads, "segmentedReduce: threads per block");
  app.add_flag("--seg-fill", c.segFill,
               "segmentedReduce: an occupancy-sized grid (virtual blocks loop)");
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  c.runs = common.runs;
  c.reduce = device::withSettings<device::Reduce>(c.reduce, {{"sweep", sweep}});

  if (!bench::deviceOrSkip()) return bench::kSkipped;
  const size_t total = bench::kTotal;
  Data<uint32_t> words(total, 1);
  Data<float> floats(total, 2);

  uint32_t* sink = static_cast<uint32_t*>(bench::deviceAlloc(4));
  const bench::Timing roof = bench::timeGpu(
      [&](int) { bench::readKernel(ptr(words.device.address()), total * 4, sink); }, c.runs);
  bench::deviceFree(sink);
  const double roofline = gbps(total * 4, roof.medianMs);
  std::cout << "read roofline (16-byte loads, 1 GiB): " << roofline << " GB/s\n";

  json rows = json::array();

  std::cout << "\nreduce: " << c.reduce.threads << " threads, unroll " << c.reduce.unroll
            << "; segmented: " << c.segmented.threads << " threads"
            << (c.segFill ? ", occupancy grid" : "") << "\n"
            << kTable.header;
  const Kernel ku = reduceAllFor<uint32_t>(c), kf = reduceAllFor<float>(c);
  for (size_t n : bench::tableSizes(common)) {
    for (const Row& r : {runReduce(words, n, c, ku), runReduce(floats, n, c, kf)}) {
      print(r, roofline);
      rows.push_back(bench::toJson(kTable, r));
    }
  }
  const Kernel su = segmentedReduceKernel<uint32_t>(Sum{}, 0u, 4096, c.segmented);
  const Kernel sf = segmentedReduceKernel<float>(Sum{}, 0.0f, 4096, c.segmented);
  for (size_t n : bench::largeSizes(common.quick)) {
    for (const Row& r : {runSegmented(words, n, c, su), runSegmented(floats, n, c, sf)}) {
      print(r, roofline);
      rows.push_back(bench::toJson(kTable, r));
    }
  }
  return bench::finish(common, roofline, rows);
}
