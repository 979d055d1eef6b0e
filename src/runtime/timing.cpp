// The public timing helper (obsidian/timing.hpp). The busy kernel that hides the host's launch
// latency is written in the language itself: a thread iterating a dependent hash.
#include "obsidian/timing.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "obsidian/capture.hpp"
#include "obsidian/library.hpp"

namespace obsidian::gpu {

namespace {
// About 50 us of one thread's dependent multiply-adds on a 2 GHz part (4 cycles each).
constexpr uint32_t kSpinIterations = 25000;
// Events alive at once in a batched timing.
constexpr size_t kMaxBatch = 1000;

const Kernel& spinKernel() {
  static const Kernel k = capture("timingSpin", 1, [](EWord32 iterations) {
    return mkPush<Grid, EWord32>(
        1u, [iterations](const Program<Grid>& g, const Writer<EWord32>& w) {
          g.distrPar(1u, [&](const Program<Block>& b, const EWord32&) {
            b.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
              seqIterate(
                  iterations,
                  [](const EWord32&, const EWord32& s) { return s * 1664525u + 1013904223u; },
                  EWord32(1u))(t, [&](const Program<Thread>& u, const EWord32& v, const EWord32&) {
                w(u, v, 0u);
              });
            });
          });
        });
  });
  return k;
}
}  // namespace

Timing time(const std::function<void(int run)>& work, const TimingOptions& options) {
  if (options.runs < 1)
    throw Error("gpu::time needs at least one timed run; got " + std::to_string(options.runs));
  if (options.warmup < 0)
    throw Error("gpu::time needs a warm-up of 0 or more runs; got " +
                std::to_string(options.warmup));
  Device& device = options.stream ? options.stream->device() : Device::get();
  DeviceBuffer<uint32_t> sink(1, device);
  LaunchOptions spin;
  spin.stream = options.stream;
  spin.synchronize = false;
  const auto settle = [&] {
    if (options.stream) {
      options.stream->synchronize();
    } else {
      device.synchronize();
    }
  };
  for (int r = 0; r < options.warmup; ++r) {
    if (options.setup) options.setup(r);
    work(r);
    settle();
  }
  Timing t;
  std::vector<std::unique_ptr<Event>> starts, stops;
  double total = 0;
  size_t batch = options.batched ? std::min(static_cast<size_t>(options.runs), kMaxBatch) : 1;
  const size_t maxRuns = static_cast<size_t>(std::max(options.maxRuns, options.runs));
  for (;;) {
    while (starts.size() < batch) {
      starts.push_back(std::make_unique<Event>(device));
      stops.push_back(std::make_unique<Event>(device));
    }
    for (size_t b = 0; b < batch; ++b) {
      const int r = static_cast<int>(t.samplesMs.size() + b);
      if (options.setup) options.setup(r);
      if (options.hideLaunchLatency && !options.batched) {
        launch(spinKernel(), {KernelArg(kSpinIterations), sink}, spin);
      }
      starts[b]->record(options.stream);
      work(r);
      stops[b]->record(options.stream);
    }
    for (size_t b = 0; b < batch; ++b) {
      const double ms = stops[b]->millisecondsSince(*starts[b]);
      t.samplesMs.push_back(ms);
      total += ms;
    }
    const size_t done = t.samplesMs.size();
    if ((done >= static_cast<size_t>(options.runs) && total >= options.minTimeMs) ||
        done >= maxRuns) {
      break;
    }
    if (!options.batched) continue;
    // The next batch: what the runs or the time still need, at the mean so far.
    const double mean = total / static_cast<double>(done);
    const double forTime = std::max(options.minTimeMs - total, 0.0) / std::max(mean, 1e-6);
    const size_t forRuns =
        static_cast<size_t>(options.runs) - std::min(done, static_cast<size_t>(options.runs));
    batch = std::clamp<size_t>(std::max(static_cast<size_t>(std::ceil(forTime)), forRuns), 1,
                               std::min<size_t>(maxRuns - done, kMaxBatch));
  }
  settle();
  summarize(t);
  return t;
}

void summarize(Timing& t) {
  if (t.samplesMs.empty()) throw Error("gpu::summarize: a timing needs at least one sample");
  std::vector<double> sorted = t.samplesMs;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  t.medianMs = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  t.minMs = sorted.front();
  t.maxMs = sorted.back();
}

}  // namespace obsidian::gpu
