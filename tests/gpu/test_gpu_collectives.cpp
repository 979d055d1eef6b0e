// GPU tests of the algorithm layer's ready calls (label gpu): device::reduce, segmentedReduce
// and the scans on device buffers, on a stream and asynchronously, against C++ and the
// simulator; and the public timing helper.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <obsidian/obsidian.hpp>
#include <random>

using namespace obsidian;

namespace {
std::vector<uint32_t> words(size_t n, uint32_t seed, uint32_t below = 0) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) x = below ? rng() % below : rng();
  return v;
}
}  // namespace

TEST_CASE("gpu: device::reduce and segmentedReduce, any length, the tuned policy") {
  for (size_t n : {size_t{0}, size_t{1}, size_t{4099}, (size_t{1} << 24) + 7}) {
    CAPTURE(n);
    const std::vector<uint32_t> w = words(n, static_cast<uint32_t>(n));
    gpu::DeviceBuffer<uint32_t> in(w), out(1);
    uint32_t want = 0;
    for (uint32_t x : w) want += x;
    device::reduce(in, out);
    CHECK(out.download()[0] == want);
    std::vector<float> f(n);
    for (size_t i = 0; i < n; ++i) f[i] = static_cast<float>(w[i] % 1000) - 500.0f;
    gpu::DeviceBuffer<float> fin(f), fout(1);
    device::reduce(fin, fout, Max{});
    CHECK(fout.download()[0] ==
          (n ? *std::max_element(f.begin(), f.end()) : -std::numeric_limits<float>::infinity()));
  }
  const std::vector<uint32_t> w = words((size_t{1} << 22) + 5, 3);
  gpu::DeviceBuffer<uint32_t> in(w), out(w.size() / 4096 + 1);
  device::segmentedReduce(in, 4096, out, Sum{}, 0u);
  std::vector<uint32_t> want(out.size(), 0);
  for (size_t i = 0; i < w.size(); ++i) want[i / 4096] += w[i];
  CHECK(out.download() == want);
}

TEST_CASE("gpu: device scans on a stream, asynchronously, match C++") {
  gpu::Stream stream;
  device::Options async;
  async.stream = &stream;
  async.synchronize = false;
  for (size_t n : {size_t{1}, size_t{1000}, size_t{30000001}}) {
    CAPTURE(n);
    const std::vector<uint32_t> w = words(n, static_cast<uint32_t>(n), 1000);
    gpu::DeviceBuffer<uint32_t> in(w), inc(n), exc(n);
    device::inclusiveScan(in, inc, Sum{}, async);
    device::exclusiveScan(in, exc, Sum{}, async);
    stream.synchronize();
    const std::vector<uint32_t> gotInc = inc.download(), gotExc = exc.download();
    uint32_t acc = 0;
    bool ok = true;
    for (size_t i = 0; i < n; ++i) {
      ok = ok && gotExc[i] == acc;
      acc += w[i];
      ok = ok && gotInc[i] == acc;
    }
    CHECK(ok);
  }
}

TEST_CASE("gpu: the timing helper runs setup untimed, warms up, and reports the median") {
  const std::vector<uint32_t> w = words(size_t{1} << 24, 9);
  gpu::DeviceBuffer<uint32_t> in(w), out(1);
  int setups = 0, works = 0;
  gpu::TimingOptions options;
  options.warmup = 2;
  options.runs = 21;
  options.setup = [&](int) { ++setups; };
  const gpu::Timing t = gpu::time(
      [&](int) {
        ++works;
        device::Options async;
        async.synchronize = false;
        device::reduce(in, out, Sum{}, async);
      },
      options);
  CHECK(setups == 23);
  CHECK(works == 23);
  CHECK(t.runs() == 21);
  CHECK(t.minMs > 0);
  CHECK(t.minMs <= t.medianMs);
  CHECK(t.medianMs <= t.maxMs);
  options.batched = true;
  options.setup = nullptr;
  options.minTimeMs = 50;
  const gpu::Timing b = gpu::time(
      [&](int) { device::reduce(in, out, Sum{}, device::Options{.synchronize = false}); }, options);
  CHECK(b.runs() >= 21);
  double total = 0;
  for (double ms : b.samplesMs) total += ms;
  CHECK((total >= 50 || b.runs() == options.maxRuns));
  CHECK_THROWS_WITH_AS(gpu::time([](int) {}, gpu::TimingOptions{.runs = 0}),
                       "gpu::time needs at least one timed run; got 0", Error);
}
