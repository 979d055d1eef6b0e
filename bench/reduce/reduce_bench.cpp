// The reduction benchmark (issue: reductions as fast as CUB). In one run, on the same random
// data: our one-launch reduction (reduceAll) against cub::DeviceReduce::Sum, our batched
// reduction of 4096-element segments (redVec, the paper's mapRed shape) against
// cub::DeviceSegmentedReduce::Sum, and a 16-byte-load read kernel as the memory roofline.
// Small inputs are rotated over disjoint slices of a 1 GiB buffer so that no run finds its
// input in the 50 MB L2; every slice's result is checked against a CPU reference first.
//
// Usage: obsidian-bench-reduce [--quick] [--sweep] [--runs N] [--json FILE]
//        [--threads T --unroll U --seg-threads S --seg-fill]
#include <iostream>
#include <nlohmann/json.hpp>
#include <obsidian/obsidian.hpp>

#include "../../examples/reduce/fast_reduce.hpp"
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
  uint32_t threads = 512, unroll = 4;  // reduceAll (the best of --sweep on the H100)
  uint32_t minVectors = 4;             // reduceAll: fewer blocks for short inputs
  bool gridStrided = false;            // reduceAll: a grid-strided sweep instead of tiles
  uint32_t segThreads = 256;           // redVec
  bool segFill = false;                // redVec with an occupancy-sized grid
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
  const auto plusT = [](const Exp<T>& a, const Exp<T>& b) { return a + b; };
  // The grid is what the device holds at once: measure the occupancy of a first capture.
  paper::ReduceAllShape shape{1, c.unroll, c.minVectors, !c.gridStrided};
  shape.blocks = gpu::occupancyBlocks(paper::reduceAllKernel<T>(plusT, T{0}, shape, c.threads));
  return paper::reduceAllKernel<T>(plusT, T{0}, shape, c.threads);
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
          "threads " + std::to_string(c.threads) + ", unroll " + std::to_string(c.unroll) +
              ", min vectors per thread " + std::to_string(c.minVectors) +
              (c.gridStrided ? ", grid-strided" : ", tiles")};
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
          "threads " + std::to_string(c.segThreads) +
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
  bench::addCommonOptions(app, common,
                          "time configurations of both kernels at 2^24 and 2^28 first");
  app.add_option("--threads", c.threads, "reduceAll: threads per block");
  app.add_option("--unroll", c.unroll, "reduceAll: vectors in flight per thread");
  app.add_option("--min-vectors", c.minVectors,
                 "reduceAll: fewer blocks for short inputs, at least this many vectors per thread "
                 "(0: always an occupancy-sized grid)");
  app.add_flag("--grid-strided", c.gridStrided, "reduceAll: a grid-strided sweep, not tiles");
  app.add_option("--seg-threads", c.segThreads, "redVec: threads per block");
  app.add_flag("--seg-fill", c.segFill, "redVec: an occupancy-sized grid (virtual blocks loop)");
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  c.runs = common.runs;

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
  auto plusU = [](const EWord32& a, const EWord32& b) { return a + b; };
  auto plusF = [](const EFloat& a, const EFloat& b) { return a + b; };

  if (common.sweep) {
    std::cout << "\nsweep (u32)\n" << kTable.header;
    for (bool strided : {false, true}) {
      for (uint32_t threads : {256u, 512u}) {
        for (uint32_t unroll : {2u, 4u, 8u}) {
          Config s = c;
          s.threads = threads;
          s.unroll = unroll;
          s.gridStrided = strided;
          const Kernel k = reduceAllFor<uint32_t>(s);
          for (size_t n : {size_t{1} << 20, size_t{1} << 24, size_t{1} << 28}) {
            print(runReduce(words, n, s, k), roofline);
          }
        }
      }
    }
  }

  std::cout << "\nreduce: " << c.threads << " threads, unroll " << c.unroll
            << "; segmented: " << c.segThreads << " threads"
            << (c.segFill ? ", occupancy grid" : "") << "\n"
            << kTable.header;
  const Kernel ku = reduceAllFor<uint32_t>(c), kf = reduceAllFor<float>(c);
  for (size_t n : bench::tableSizes(common)) {
    for (const Row& r : {runReduce(words, n, c, ku), runReduce(floats, n, c, kf)}) {
      print(r, roofline);
      rows.push_back(bench::toJson(kTable, r));
    }
  }
  const Kernel su = paper::segmentedReduceKernel<uint32_t>(plusU, 4096, c.segThreads);
  const Kernel sf = paper::segmentedReduceKernel<float>(plusF, 4096, c.segThreads);
  for (size_t n : bench::largeSizes(common.quick)) {
    for (const Row& r : {runSegmented(words, n, c, su), runSegmented(floats, n, c, sf)}) {
      print(r, roofline);
      rows.push_back(bench::toJson(kTable, r));
    }
  }
  return bench::finish(common, roofline, rows);
}
