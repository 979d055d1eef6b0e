/// Timing GPU work: CUDA events around each run after warm-up, the median of N runs, with an
/// optional setup per run that is not timed (rotating inputs, zeroing an output). Each run is
/// queued behind a short kernel that keeps the GPU busy while the host enqueues the start event,
/// the work and the stop event, so the time is the GPU's alone (the kernels and the gaps between
/// them), not the host's launch latency. Examples, benchmarks and the tuner all time with it.
/// @file
#pragma once

#include <functional>
#include <vector>

#include "obsidian/runtime.hpp"

namespace obsidian::gpu {

/// How time() runs and measures the work.
struct TimingOptions {
  int warmup = 3;  ///< untimed runs first (module loading, caches, clocks)
  int runs = 20;   ///< timed runs; the median is reported
  /// Enqueued before each run, untimed (it may launch or copy on the stream, or do host work).
  std::function<void(int run)> setup = {};
  /// The stream the work is enqueued on (null: the default stream, which launches without a
  /// stream and the CUDA runtime's legacy default stream share).
  const Stream* stream = nullptr;
  /// Queue each run behind a busy kernel (about 50 us), so that the host's enqueueing is not
  /// timed. Off, a run that is shorter than its launch overhead measures the host.
  bool hideLaunchLatency = true;
  /// Keep running (beyond `runs`) until the timed runs add up to this many ms, up to maxRuns:
  /// short kernels get more samples.
  double minTimeMs = 0;
  int maxRuns = 10000;  ///< the most timed runs minTimeMs may ask for
  /// Enqueue runs in batches, each run between its own pair of events, and wait once per batch
  /// (no busy kernel, no wait between runs): the time of back-to-back runs, as a sweep over
  /// thousands of points wants it. setup, if any, must then only enqueue.
  bool batched = false;
};

/// The times of the timed runs, in milliseconds.
struct Timing {
  /// @{
  /// The median, fastest and slowest timed run (summarize sets them from samplesMs).
  double medianMs = 0, minMs = 0, maxMs = 0;
  /// @}
  std::vector<double> samplesMs;  ///< every timed run, in order
  /// The number of timed runs.
  int runs() const { return static_cast<int>(samplesMs.size()); }
};

/// Sets t's median, min and max from its samples (at least one): what time() reports, for
/// samples gathered from several calls (runs of one program interleaved with others).
void summarize(Timing& t);

/// time(work, options): runs options.setup(r) then work(r) for warm-up and timed runs r = 0, 1,
/// ... (the warm-up runs pass r = 0 .. warmup - 1 too); work only enqueues on options.stream.
/// Waits for the GPU after every run, so a kernel's errors surface here. runs must be >= 1.
Timing time(const std::function<void(int run)>& work, const TimingOptions& options = {});

}  // namespace obsidian::gpu
