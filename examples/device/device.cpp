// The device layer in a program of one's own (include/obsidian/device/): each ready call
// (cub::Device*'s equivalents) on the GPU when there is one and on the simulator otherwise, its
// result checked against plain C++, and one block collective composed inside a user's kernel.
// The same lines run on both: a gpu::DeviceBuffer goes to the GPU, a std::vector to the
// simulator.
#include <algorithm>
#include <iomanip>
#include <numeric>

#include "../common/runner.hpp"

namespace {

using namespace examples;

struct Report {
  bool allPassed = true;
  void row(const std::string& call, size_t n, bool pass, double ms) {
    allPassed = allPassed && pass;
    std::cout << "  " << std::left << std::setw(44) << call << std::right << std::setw(10) << n
              << (pass ? "  ok  " : "  FAIL");
    if (!std::isnan(ms))
      std::cout << std::fixed << std::setprecision(1) << std::setw(9) << ms * 1e3 << " us";
    std::cout << "\n";
  }
};

// Runs `launch` (warm-up and timed runs: it must give the same result each time) and keeps its
// median time.
using Timed = std::function<void(const std::function<void()>& launch)>;

// On the GPU: onGpu(timed), which uploads its inputs to device buffers, passes its launch to
// `timed` and returns the downloaded result; on the simulator: simulated(), untimed.
template <class T>
std::pair<T, double> onBackend(const Options& o, const std::function<T(const Timed&)>& onGpu,
                               const std::function<T()>& simulated) {
  if (!o.gpu()) return {simulated(), std::nan("")};
  double ms = 0;
  T got = onGpu([&](const std::function<void()>& launch) { ms = timeOnGpu(launch, o); });
  return {got, ms};
}

// Every element minus the maximum of its chunk of 1024: blockReduce inside one's own block
// program (the maximum is computed once per block and shared by its threads).
Kernel minusChunkMax() {
  return capture("minusChunkMax", 256, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& chunk) {
          return exec<Block>([chunk](const Program<Block>& p) {
            const EWord32 top = blockReduce(BlockReduceAlgorithm::WarpShuffle, p, Max{}, chunk);
            return push<Block>(fmap([top](const EWord32& x) { return top - x; }, chunk));
          });
        },
        splitUp(1024, in)));
  });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian's device layer: reduce, scan, segmented reduce, histogram, transpose"};
  const Options o = parse(app, argc, argv);
  try {
    std::cout << "running on " << backendName(o) << "\n";
    // 2^26 elements on the GPU (256 MB of u32, above the L2); small odd sizes on the simulator.
    const size_t n = o.gpu() && !o.quick ? size_t{1} << 26 : o.quick ? 5003 : 100003;
    const std::vector<uint32_t> words = randomWords(n, 1);
    Report report;

    using U32s = std::vector<uint32_t>;
    {  // device::reduce: the sum, and the maximum with an explicit operator.
      const auto [sum, ms] = onBackend<uint32_t>(
          o,
          [&](const Timed& timed) {
            gpu::DeviceBuffer<uint32_t> in(words), out(1);
            timed([&] { device::reduce(in, out); });
            return out.download()[0];
          },
          [&] { return device::reduce(words); });
      report.row("device::reduce (Sum, u32)", n,
                 sum == std::accumulate(words.begin(), words.end(), 0u), ms);
      const auto [top, ms2] = onBackend<uint32_t>(
          o,
          [&](const Timed& timed) {
            gpu::DeviceBuffer<uint32_t> in(words), out(1);
            timed([&] { device::reduce(in, out, Max{}); });
            return out.download()[0];
          },
          [&] { return device::reduce(words, Max{}); });
      report.row("device::reduce (Max, u32)", n,
                 top == *std::max_element(words.begin(), words.end()), ms2);
    }
    {  // device::inclusiveScan and exclusiveScan (Sum).
      U32s inclusive(n), exclusive(n);
      std::inclusive_scan(words.begin(), words.end(), inclusive.begin());
      std::exclusive_scan(words.begin(), words.end(), exclusive.begin(), 0u);
      const auto [inc, ms] = onBackend<U32s>(
          o,
          [&](const Timed& timed) {
            gpu::DeviceBuffer<uint32_t> in(words), out(n);
            timed([&] { device::inclusiveScan(in, out); });
            return out.download();
          },
          [&] { return device::inclusiveScan(words); });
      report.row("device::inclusiveScan (Sum, u32)", n, inc == inclusive, ms);
      const auto [exc, ms2] = onBackend<U32s>(
          o,
          [&](const Timed& timed) {
            gpu::DeviceBuffer<uint32_t> in(words), out(n);
            timed([&] { device::exclusiveScan(in, out); });
            return out.download();
          },
          [&] { return device::exclusiveScan(words); });
      report.row("device::exclusiveScan (Sum, u32)", n, exc == exclusive, ms2);
    }
    {  // device::segmentedReduce: the minimum of each 1000-element segment (the last is short).
      const std::vector<float> xs = randomFloats(n, 2);
      const uint32_t segment = 1000;
      std::vector<float> want;
      for (size_t s = 0; s < n; s += segment) {
        want.push_back(*std::min_element(xs.begin() + static_cast<long>(s),
                                         xs.begin() + static_cast<long>(std::min(n, s + segment))));
      }
      const float inf = std::numeric_limits<float>::infinity();
      const auto [got, ms] = onBackend<std::vector<float>>(
          o,
          [&](const Timed& timed) {
            gpu::DeviceBuffer<float> in(xs), out(want.size());
            timed([&] { device::segmentedReduce(in, segment, out, Min{}, inf); });
            return out.download();
          },
          [&] { return device::segmentedReduce(xs, segment, Min{}, inf); });
      report.row("device::segmentedReduce (Min, f32, 1000)", n, got == want, ms);
    }
    {  // histogramEven: 256 bins of u8 samples over [0, 256).
      std::vector<uint8_t> bytes(n);
      for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(words[i] * 2654435761u >> 24);
      U32s want(256, 0);
      for (uint8_t b : bytes) ++want[b];
      const auto [got, ms] = onBackend<U32s>(
          o,
          [&](const Timed& timed) {
            gpu::DeviceBuffer<uint8_t> in(bytes);
            gpu::DeviceBuffer<uint32_t> bins(256);
            timed([&] { device::histogramEven<uint8_t>(in, bins, 0u, 256u); });
            return bins.download();
          },
          [&] { return device::histogramEven<uint8_t>(bytes, 256, 0u, 256u); });
      report.row("histogramEven (u8, 256 bins)", n, got == want, ms);
    }
    {  // transpose: an odd shape (the policy's tile is chosen by the shape).
      const bool large = o.gpu() && !o.quick;
      const uint32_t rows = large ? 8191 : 301, cols = large ? 4097 : 77;
      const U32s m = randomWords(size_t{rows} * cols, 3);
      U32s want(m.size());
      for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t c = 0; c < cols; ++c) want[size_t{c} * rows + r] = m[size_t{r} * cols + c];
      const auto [got, ms] = onBackend<U32s>(
          o,
          [&](const Timed& timed) {
            gpu::DeviceBuffer<uint32_t> in(m), out(m.size());
            timed([&] { device::transpose<uint32_t>(in, out, rows, cols); });
            return out.download();
          },
          [&] { return device::transpose<uint32_t>(m, rows, cols); });
      report.row("transpose (u32, " + std::to_string(rows) + " x " + std::to_string(cols) + ")",
                 m.size(), got == want, ms);
    }
    {  // A block collective inside one's own kernel.
      const size_t len = n / 1024 * 1024;
      const std::vector<uint32_t> in(words.begin(), words.begin() + static_cast<long>(len));
      std::vector<uint32_t> want(len), got(len);
      for (size_t c = 0; c < len; c += 1024) {
        const uint32_t top = *std::max_element(in.begin() + static_cast<long>(c),
                                               in.begin() + static_cast<long>(c + 1024));
        for (size_t i = c; i < c + 1024; ++i) want[i] = top - in[i];
      }
      Args args;
      args.in(in).out(got);
      const double ms = run(minusChunkMax(), args, o);
      report.row("blockReduce in a user's kernel (1024-chunks)", len, got == want, ms);
    }
    return report.allPassed ? 0 : 1;
  } catch (const Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
