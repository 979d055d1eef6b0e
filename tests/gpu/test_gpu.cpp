// GPU tests (label gpu): the paper's kernels on a real device match the C++ reference and the
// simulator bit for bit, bad arguments are refused before launch, and the large reduction
// pipeline works for awkward sizes.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "../../examples/increment/increment.hpp"
#include "../../examples/reduce/reduce.hpp"
#include "../kernels.hpp"
#include "runtime/compile_hook.hpp"

using namespace obsidian;

namespace {

std::vector<uint32_t> randomWords(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) x = rng();
  return v;
}

// Runs k on the GPU and on the simulator with the same input; both outputs must be equal.
std::vector<uint32_t> gpuMatchesSimulator(const Kernel& k, const std::vector<uint32_t>& in,
                                          size_t outSize) {
  gpu::DeviceBuffer<uint32_t> din(in);
  gpu::DeviceBuffer<uint32_t> dout(outSize);
  dout.zero();
  gpu::launch(k, {din, dout});
  const std::vector<uint32_t> onGpu = dout.download();
  std::vector<uint32_t> onSim(outSize);
  simulate(k, {in, onSim});
  CHECK(onGpu == onSim);
  return onGpu;
}

}  // namespace

TEST_CASE("gpu: the device is described") {
  const gpu::DeviceInfo& info = gpu::Device::get().info();
  MESSAGE("device: " << info.name << " (" << info.arch() << ", " << info.smCount << " SMs)");
  CHECK(info.smCount > 0);
  CHECK(info.sharedPerBlockOptin >= info.sharedPerBlock);
  CHECK(info.arch().rfind("sm_", 0) == 0);
  // Read without a context (the sweep reads it before making one): the same description, and
  // the same error for a device that is not there.
  const gpu::DeviceInfo read = gpu::deviceInfo();
  CHECK(read.name == info.name);
  CHECK(read.arch() == info.arch());
  CHECK(read.smCount == info.smCount);
  CHECK(read.sharedPerBlockOptin == info.sharedPerBlockOptin);
  CHECK(read.totalMemory == info.totalMemory);
  const std::string beyond = "no CUDA device " + std::to_string(gpu::deviceCount());
  CHECK_THROWS_WITH_AS(gpu::deviceInfo(gpu::deviceCount()), doctest::Contains(beyond.c_str()),
                       Error);
}

TEST_CASE("gpu: a launch does not wait for another thread's compile") {
  // Another thread compiles a kernel no cache holds (its constant is new to this run) and is
  // stopped inside the compile, by the test hook, until this thread's launches of a kernel
  // already loaded have ended: they must not wait for that compile. No timing is involved:
  // were a launch to wait, it would wait for ever, and the watchdog below turns that into a
  // failure (it releases the compile after two minutes and records that it had to).
  const Kernel ready = paper::incrementKernel();
  const std::vector<uint32_t> host = randomWords(256 * 4, 9);
  gpu::DeviceBuffer<uint32_t> in(host), out(host.size());
  gpu::launch(ready, {in, out});
  const uint32_t salt = std::random_device{}() | 1u;
  const Kernel fresh = capture("freshCompile", 256, [salt](DPull<EWord32> a) {
    return pConcat(fmap(
        [salt](const SPull<EWord32>& c) {
          return push<Block>(fmap([salt](const EWord32& x) { return x * salt + (x >> 3u); }, c));
        },
        splitUp(256, a)));
  });
  std::mutex m;
  std::condition_variable cv;
  bool inside = false, compiled = false, release = false, launched = false;
  bool watchdogReleased = false;
  testing::setCompileHook([&](const std::string& kernelName) {
    if (kernelName != "freshCompile") return;
    std::unique_lock<std::mutex> lock(m);
    inside = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  });
  std::string compileError;
  std::thread compiler([&] {
    try {
      (void)gpu::Device::get().function(fresh);
    } catch (const std::exception& e) {
      compileError = e.what();
    }
    std::lock_guard<std::mutex> lock(m);
    compiled = true;
    cv.notify_all();
  });
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(m);
    if (!cv.wait_for(lock, std::chrono::minutes(2), [&] { return launched; })) {
      watchdogReleased = release = true;
      cv.notify_all();
    }
  });
  // However this test ends (a launch may throw), the compile is released, both threads are
  // joined and the hook, which refers to this frame, is removed.
  struct Finish {
    std::function<void()> f;
    ~Finish() { f(); }
  } finish{[&] {
    {
      std::lock_guard<std::mutex> lock(m);
      launched = release = true;
    }
    cv.notify_all();
    if (compiler.joinable()) compiler.join();
    if (watchdog.joinable()) watchdog.join();
    testing::setCompileHook({});
  }};
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return inside || compiled; });  // the compile has started, held
  }
  CHECK_MESSAGE(inside, "freshCompile was not compiled: a kernel cache held it");
  for (int i = 0; i < 10; ++i) gpu::launch(ready, {in, out});  // each waits for its kernel
  finish.f();
  finish.f = [] {};
  CHECK(compileError == "");
  CHECK_FALSE(watchdogReleased);
  // Both kernels are right.
  std::vector<uint32_t> want(host.size());
  std::transform(host.begin(), host.end(), want.begin(), [](uint32_t x) { return x + 1; });
  CHECK(out.download() == want);
  gpu::launch(fresh, {in, out});
  std::transform(host.begin(), host.end(), want.begin(),
                 [salt](uint32_t x) { return x * salt + (x >> 3); });
  CHECK(out.download() == want);
}

TEST_CASE("gpu: buffers upload and download, and check sizes") {
  const auto host = randomWords(1000, 1);
  gpu::DeviceBuffer<uint32_t> d(host);
  CHECK(d.download() == host);
  CHECK_THROWS_WITH_AS(
      d.upload(std::vector<uint32_t>(10)),
      "DeviceBuffer::upload: the buffer holds 1000 elements; the host array has 10", Error);
}

namespace {

// Fills a buffer of n elements that held `other` with `value`: the whole of it, a part of it
// (the elements around the part unchanged), and the whole again on a stream.
template <class T>
void checkFill(T value, T other, size_t n) {
  CAPTURE(n);
  gpu::DeviceBuffer<T> d(std::vector<T>(n, other));
  d.fill(value);
  CHECK(d.download() == std::vector<T>(n, value));
  d.upload(std::vector<T>(n, other));
  const size_t first = n / 3, count = n / 2;
  d.fill(value, first, count);
  std::vector<T> want(n, other);
  std::fill_n(want.begin() + static_cast<long>(first), count, value);
  CHECK(d.download() == want);
  gpu::Stream s;
  d.fill(value, &s);
  s.synchronize();
  CHECK(d.download() == std::vector<T>(n, value));
}

}  // namespace

TEST_CASE("gpu: buffers fill with any value of 1, 2, 4 and 8 bytes, whole or in part") {
  for (size_t n : {size_t{1}, size_t{1001}, (size_t{1} << 20) + 3}) {
    checkFill<uint8_t>(0x5A, 0xA5, n);
    // Bytes that differ (a memset of the whole pattern), halves that are equal (of the half),
    // every byte equal (a byte-wise memset).
    checkFill<uint16_t>(0x1234, 0xFFFF, n);
    checkFill<uint16_t>(0x3434, 0, n);
    checkFill<uint32_t>(0x12345678u, 0xFFFFFFFFu, n);
    checkFill<uint32_t>(0x12341234u, 0, n);
    checkFill<uint32_t>(0x56565656u, 0, n);
    checkFill<int32_t>(-2, 7, n);
    checkFill<float>(std::bit_cast<float>(0x12345678u), 1.5f, n);
    checkFill<uint64_t>(0x0123456789ABCDEFull, ~0ull, n);
    checkFill<uint64_t>(0x1234567812345678ull, 0, n);
    checkFill<uint64_t>(0x9999999999999999ull, 0, n);
    checkFill<double>(std::bit_cast<double>(0x0123456789ABCDEFull), -1.0, n);
  }
  // zero() is fill(0).
  gpu::DeviceBuffer<uint64_t> d(std::vector<uint64_t>(100, 0x0123456789ABCDEFull));
  d.zero();
  CHECK(d.download() == std::vector<uint64_t>(100, 0));
  // An empty buffer, and an empty part at the end, set nothing; a part beyond the end is
  // refused before anything is set.
  gpu::DeviceBuffer<uint32_t> empty(0);
  CHECK_NOTHROW(empty.fill(0x12345678u));
  CHECK_NOTHROW(empty.fill(0x12345678u, 0, 0));
  d.fill(0x0123456789ABCDEFull, 100, 0);
  CHECK(d.download() == std::vector<uint64_t>(100, 0));
  CHECK_THROWS_WITH_AS(
      d.fill(1, 90, 11),
      "DeviceBuffer::fill: the buffer holds 100 elements; 11 from element 90 do not fit", Error);
  CHECK_THROWS_WITH_AS(d.fill(1, 1, SIZE_MAX), doctest::Contains("the buffer holds 100 elements"),
                       Error);
  CHECK_THROWS_WITH_AS(
      empty.fill(1, 1, 0),
      "DeviceBuffer::fill: the buffer holds 0 elements; 0 from element 1 do not fit", Error);
  CHECK(d.download() == std::vector<uint64_t>(100, 0));
}

TEST_CASE("gpu: every golden kernel matches the reference and the simulator") {
  const auto in = randomWords(8192 * 7, 2);
  std::vector<uint32_t> plusOne(in.size());
  std::transform(in.begin(), in.end(), plusOne.begin(), [](uint32_t x) { return x + 1; });
  CHECK(gpuMatchesSimulator(paper::incrementKernel(), in, in.size()) == plusOne);
  CHECK(gpuMatchesSimulator(paper::increment2Kernel(), in, in.size()) == plusOne);
  std::vector<uint32_t> agn(in.size());
  std::transform(in.begin(), in.end(), agn.begin(), [](uint32_t x) { return (x + 1) * 2 + 3; });
  CHECK(gpuMatchesSimulator(paper::agnosticBlockKernel(), in, in.size()) == agn);
  CHECK(gpuMatchesSimulator(paper::agnosticWarpKernel(), in, in.size()) == agn);
  for (const auto& [k, chunk] : std::vector<std::pair<Kernel, size_t>>{
           {paper::sumUpKernel(), 8}, {paper::red3Kernel(), 512}, {paper::red5Kernel(), 4096}}) {
    std::vector<uint32_t> sums(in.size() / chunk);
    for (size_t b = 0; b < sums.size(); ++b) {
      sums[b] = std::accumulate(in.begin() + static_cast<long>(b * chunk),
                                in.begin() + static_cast<long>((b + 1) * chunk), 0u);
    }
    CHECK_MESSAGE(gpuMatchesSimulator(k, in, sums.size()) == sums, k.name());
  }
}

TEST_CASE("gpu: virtualized blocks (fewer real blocks) and more than 48 KB of shared memory") {
  const Kernel k = paper::red3Kernel(512, 256);
  const auto in = randomWords(512 * 100, 3);
  gpu::DeviceBuffer<uint32_t> din(in), dout(100);
  for (uint32_t blocks : {1u, 7u, 0u}) {
    dout.zero();
    gpu::LaunchOptions o;
    o.blocks = blocks;
    gpu::launch(k, {din, dout}, o);
    std::vector<uint32_t> expected(100);
    for (size_t b = 0; b < 100; ++b) {
      expected[b] = std::accumulate(in.begin() + static_cast<long>(b * 512),
                                    in.begin() + static_cast<long>((b + 1) * 512), 0u);
    }
    CHECK(dout.download() == expected);
  }
  // 32768 elements per block forced once: 64 KB of shared memory needs the opt-in attribute.
  const Kernel big = capture("bigShared", 1024, [](DPull<EWord32> x) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            auto a = forcePull(p, c);
            return push<Block>(fmap([a](const EWord32& v) { return v + a[0u]; }, a));
          });
        },
        splitUp(16384, x)));
  });
  CHECK(big.sharedBytes() == 65536);
  const auto bin = randomWords(16384 * 3, 4);
  std::vector<uint32_t> bexp(bin.size());
  for (size_t i = 0; i < bin.size(); ++i) bexp[i] = bin[i] + bin[i / 16384 * 16384];
  CHECK(gpuMatchesSimulator(big, bin, bin.size()) == bexp);
  CHECK(gpu::occupancyBlocks(big) >= 1);
  gpu::LaunchOptions fill;
  fill.fillDevice = true;
  gpu::DeviceBuffer<uint32_t> d2(bin), o2(bin.size());
  gpu::launch(big, {d2, o2}, fill);
  CHECK(o2.download() == bexp);
}

TEST_CASE("gpu: bad arguments are refused before anything is launched") {
  const Kernel k = paper::red3Kernel();
  gpu::DeviceBuffer<uint32_t> in(1000), out(2);
  out.zero();
  CHECK_THROWS_WITH_AS(gpu::launch(k, {in, out}),
                       "launch of kernel red3: splitUp(512) needs a length divisible by 512 "
                       "(n0 % 512u == 0u fails with n0 = 1000)",
                       Error);
  const std::vector<uint32_t> host(1024);
  CHECK_THROWS_WITH_AS(gpu::launch(k, {host, out}),
                       "launch of kernel red3: argument 0 is a host array; the GPU needs a "
                       "gpu::DeviceBuffer",
                       Error);
  gpu::DeviceBuffer<float> wrong(1024);
  CHECK_THROWS_WITH_AS(gpu::launch(k, {wrong, out}),
                       doctest::Contains("argument 0 (in0) must be an array of uint32_t"), Error);
  gpu::DeviceBuffer<uint32_t> in2(1024), tiny(1);
  CHECK_THROWS_WITH_AS(gpu::launch(k, {in2, tiny}),
                       doctest::Contains("argument out0 has 1 elements"), Error);
  CHECK(out.download() == std::vector<uint32_t>{0, 0});
  in2.upload(std::vector<uint32_t>(1024, 1));
  gpu::launch(k, {in2, out});  // the next valid launch works
  CHECK(out.download() == std::vector<uint32_t>{512, 512});
}

TEST_CASE("gpu: the large reduction pipeline for sizes 1, 1000, 2^20+3, 2^26") {
  const Kernel k = paper::partialSums(4096, 256, 8);
  for (size_t n : {size_t{1}, size_t{1000}, (size_t{1} << 20) + 3, size_t{1} << 26}) {
    const auto in = randomWords(n, static_cast<uint32_t>(n));
    const uint32_t expected = std::accumulate(in.begin(), in.end(), 0u);
    gpu::DeviceBuffer<uint32_t> d(in);
    CHECK_MESSAGE(reduceOnGpu(k, 4096, d) == expected, "n = " << n);
  }
}

TEST_CASE("gpu: a kernel over the device's shared memory limit is refused before launch") {
  const gpu::DeviceInfo& info = gpu::Device::get().info();
  CaptureOptions o;
  o.sharedMemoryLimit = 1u << 20;  // let the kernel ask for more than any device has
  const uint32_t words = info.sharedPerBlockOptin / 4 + 1024;
  const Kernel k = capture(
      "tooMuchShared", 256,
      [words](DPull<EWord32> x) {
        return pConcat(fmap(
            [](const SPull<EWord32>& c) {
              return exec<Block>(
                  [c](const Program<Block>& p) { return push<Block>(forcePull(p, c)); });
            },
            splitUp(words, x)));
      },
      o);
  gpu::DeviceBuffer<uint32_t> in(words), out(words);
  CHECK_THROWS_WITH_AS(gpu::launch(k, {in, out}),
                       ("launch of kernel tooMuchShared: needs " + std::to_string(k.sharedBytes()) +
                        " bytes of shared memory per block; " + info.name + " allows " +
                        std::to_string(info.sharedPerBlockOptin))
                           .c_str(),
                       Error);
}

// Issue 14, defect 11: writes at data-dependent indices are checked on the GPU when asked.
TEST_CASE("gpu: a checked launch reports the first out-of-bounds write and does not do it") {
  // bins[x % 16] += 1 for each x: with 8 bins, x % 16 >= 8 writes past the end.
  const Kernel k = testing::scatterKernel("checkedScatter");
  std::vector<uint32_t> in(64 * 100);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint32_t>(i % 8);
  // In bounds: the checked variant computes what the plain one does.
  gpu::DeviceBuffer<uint32_t> din(in), bins(8), out(in.size()), guard(1024);
  bins.zero();
  guard.zero();
  gpu::LaunchOptions checked;
  checked.checked = true;
  gpu::launch(k, {din, bins, out}, checked);
  CHECK(bins.download() == std::vector<uint32_t>(8, 800));
  CHECK(out.download() == in);
  // Out of bounds: the launch throws with the kernel, array, index and length, and nothing
  // past the array's end is written.
  in[4321] = 13;
  din.upload(in);
  bins.zero();
  const std::string message = [&] {
    try {
      gpu::launch(k, {din, bins, out}, checked);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  }();
  CHECK(message ==
        "launch of kernel checkedScatter (checked): a write to m1[13] is out of bounds: m1 has 8 "
        "elements (the first out-of-bounds write or atomic of the launch; it was not done)");
  CHECK(guard.download() == std::vector<uint32_t>(1024, 0));
  std::vector<uint32_t> expected(8, 800);
  expected[4321 % 8] -= 1;
  CHECK(bins.download() == expected);
  // The next plain launch of the same kernel still works.
  in[4321] = 4321 % 8;
  din.upload(in);
  bins.zero();
  gpu::launch(k, {din, bins, out});
  CHECK(bins.download() == std::vector<uint32_t>(8, 800));
}

TEST_CASE("gpu: a bitonic network sorts each block's chunk, with and without sharing") {
  // 1024 threads, 55 stages: each stage's two reads are shared variables (codegen/share.hpp).
  const std::vector<uint32_t> in = randomWords(1024 * 37, 12);
  std::vector<uint32_t> want = in;
  for (size_t b = 0; b < 37; ++b) std::sort(want.begin() + b * 1024, want.begin() + (b + 1) * 1024);
  for (bool share : {true, false}) {
    CaptureOptions o;
    o.shareSubexpressions = share;
    const Kernel k = obsidian::testing::bitonicKernel(share ? "bitonic" : "bitonicPlain", 1024, o);
    CHECK(gpuMatchesSimulator(k, in, in.size()) == want);
  }
}
