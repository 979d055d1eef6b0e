// device_data.hpp: the device twins of a sweep's host data agree with the host (random inputs
// and the plain reference kernels on the simulator; every routine on the GPU when there is
// one), and the disk store returns what it stored, only to the same key.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "../../examples/mandelbrot/mandelbrot.hpp"
#include "device_data.hpp"

using namespace obsidian;
using namespace tuning;
namespace gpu = obsidian::gpu;

namespace {

template <class T>
std::vector<T> hostSums(const std::vector<T>& in, size_t segment, bool scan) {
  std::vector<T> out;
  for (size_t s = 0; s < in.size(); s += segment) {
    T acc = 0;
    for (size_t i = s; i < std::min(in.size(), s + segment); ++i) {
      acc = acc + in[i];
      if (scan) out.push_back(acc);
    }
    if (!scan) out.push_back(acc);
  }
  return out;
}

template <class T>
void checkRandomOnSimulator(Random formula, uint64_t param) {
  const uint32_t n = 1001;
  std::vector<T> got(n);
  simulate(plainRandom<T>(formula).make(), {n, splitmix64(77), param, got});
  const std::vector<T> want = randomOnHost<T>(n, 77, formula, param);
  CHECK(got == want);
  // Not a constant: the formula's values spread.
  CHECK(std::count(want.begin(), want.end(), want[0]) < static_cast<long>(n / 2));
}

template <class T>
void checkSegmentsOnSimulator(uint32_t segment) {
  const std::vector<T> in = randomOnHost<T>(1000, 5, Random::SmallInts);
  std::vector<T> sums((in.size() + segment - 1) / segment), scans(in.size());
  simulate(plainSegmentFold<T>(false).make(), {segment, in, sums});
  simulate(plainSegmentFold<T>(true).make(), {segment, in, scans});
  CHECK(sums == hostSums(in, segment, false));
  CHECK(scans == hostSums(in, segment, true));
}

}  // namespace

TEST_CASE("device_data: random inputs on the simulator equal the host's") {
  checkRandomOnSimulator<uint32_t>(Random::Words, 1u << 16);
  checkRandomOnSimulator<uint32_t>(Random::SmallInts, 0);
  checkRandomOnSimulator<uint32_t>(Random::Bits, 0);
  checkRandomOnSimulator<uint32_t>(Random::Modulo, 1000003);
  checkRandomOnSimulator<float>(Random::SmallInts, 0);
  checkRandomOnSimulator<float>(Random::Bits, 0);
  checkRandomOnSimulator<float>(Random::Modulo, 1000003);
  checkRandomOnSimulator<uint8_t>(Random::Bits, 0);
  checkRandomOnSimulator<float>(Random::Signed, 0);
  // The formulas' ranges.
  for (uint32_t x : randomOnHost<uint32_t>(4096, 1, Random::Words, 10)) CHECK((x >= 1 && x <= 10));
  for (float x : randomOnHost<float>(4096, 1, Random::SmallInts)) {
    CHECK((x != 0 && x >= -8 && x <= 8 && x == std::floor(x)));
  }
  for (float x : randomOnHost<float>(4096, 1, Random::Bits)) CHECK((x >= 0 && x < 1));
  for (float x : randomOnHost<float>(4096, 1, Random::Signed)) CHECK((x >= -1 && x < 1));
  CHECK_THROWS_WITH_AS(randomOnHost<uint32_t>(4, 1, Random::Words, 0),
                       "random data: Words and Modulo need a non-zero parameter", Error);
}

TEST_CASE("device_data: the plain segment sums and scans on the simulator equal the host's") {
  checkSegmentsOnSimulator<uint32_t>(64);
  checkSegmentsOnSimulator<uint32_t>(7);  // a short last segment
  checkSegmentsOnSimulator<float>(1000);
  checkSegmentsOnSimulator<float>(4096);  // one segment, shorter than its size
}

TEST_CASE("device_data: the plain Mandelbrot kernel on the simulator is mandelReference") {
  // Pixels near the set's boundary iterate differently at the first other rounding.
  for (const auto& [width, height] : {std::pair{37u, 5u}, std::pair{64u, 3u}}) {
    std::vector<uint8_t> got(size_t{width} * height);
    simulate(plainMandelbrot().make(), {width, height, got});
    const std::vector<uint8_t> want = paper::mandelReference(width, height);
    CHECK(got == want);
    CHECK(std::count(want.begin(), want.end(), want[0]) < static_cast<long>(want.size()));
  }
}

TEST_CASE("device_data: the disk store returns what it stored, for its key only") {
  const std::filesystem::path dir = KernelCache::global().directory();
  REQUIRE_MESSAGE(!dir.empty(), "the tests run with OBSIDIAN_CACHE_DIR set");
  const std::string key = "test:" + std::to_string(std::random_device{}());
  int made = 0;
  const auto make = [&made] {
    ++made;
    return std::vector<uint32_t>{1, 2, 3, static_cast<uint32_t>(made)};
  };
  const std::vector<uint32_t> first = storedReference<uint32_t>(key, make);
  CHECK(made == 1);
  CHECK(storedReference<uint32_t>(key, make) == first);  // read back, not made
  CHECK(made == 1);
  CHECK(storedReference<uint32_t>(key + "x", make) != first);  // another key: made
  CHECK(made == 2);
  // A damaged entry (cut short) is made again and replaced.
  size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / "references")) {
    std::ifstream in(e.path(), std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    if (text.find(key + ":u32|") == std::string::npos) continue;  // (the key and the type)
    ++entries;
    std::filesystem::resize_file(e.path(), std::filesystem::file_size(e.path()) - 1);
  }
  CHECK(entries == 1);
  CHECK(storedReference<uint32_t>(key, make).back() == 3u);
  CHECK(made == 3);
  CHECK(storedReference<uint32_t>(key, make).back() == 3u);
  CHECK(made == 3);
  // (the test's entries removed from the shared cache)
  for (const auto& e : std::filesystem::directory_iterator(dir / "references")) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    in.close();
    if (text.find(key) != std::string::npos) std::filesystem::remove(e.path());
  }
}

TEST_CASE("device_data: the check's hash tells outputs apart, and the kernel's equals the host's") {
  const std::vector<uint32_t> words = randomOnHost<uint32_t>(5003, 21, Random::Bits);
  const uint64_t h = hashOnHost(words.data(), words.size() * 4);
  CHECK(hashOnHost(words.data(), 0) == 0);
  // The kernel on the simulator, on fewer threads than vectors (each loops) and more (idle),
  // with 3 words after the last whole vector.
  for (uint32_t blocks : {1u, 3u, 20u}) {
    std::vector<uint64_t> sum(1, 0);
    simulate(plainHash().make(), {blocks, words, sum});
    CHECK(sum[0] == h);
  }
  // One word changed, anywhere and by any amount, changes it (its factor is odd).
  for (size_t i : {size_t{0}, size_t{1}, size_t{2500}, words.size() - 1}) {
    for (uint32_t delta : {1u, 1u << 31, 0x10000u}) {
      std::vector<uint32_t> w = words;
      w[i] += delta;
      CHECK(hashOnHost(w.data(), w.size() * 4) != h);
    }
  }
  // Words swapped, and the whole array shifted by one, change it.
  std::vector<uint32_t> swapped = words;
  std::swap(swapped[7], swapped[4000]);
  CHECK(hashOnHost(swapped.data(), swapped.size() * 4) != h);
  std::vector<uint32_t> shifted(words.size());
  std::copy(words.begin(), words.end() - 1, shifted.begin() + 1);
  shifted[0] = words.back();
  CHECK(hashOnHost(shifted.data(), shifted.size() * 4) != h);
  // Every element plus a constant (a power of two: what a linear weighting would miss).
  std::vector<uint32_t> plus = words;
  for (uint32_t& x : plus) x += 256;
  CHECK(hashOnHost(plus.data(), plus.size() * 4) != h);
  // A trailing partial word counts its bytes, zero-padded.
  std::vector<uint8_t> bytes(1001, 7);
  const uint64_t hb = hashOnHost(bytes.data(), bytes.size());
  const uint64_t whole = hashOnHost(bytes.data(), 1000);
  CHECK(whole != hb);
  bytes.back() = 8;
  CHECK(hashOnHost(bytes.data(), bytes.size()) != hb);
  CHECK(hashOnHost(bytes.data(), 1000) == whole);  // (the whole words did not change)
  uint8_t padded[4] = {7, 0, 0, 0};
  CHECK(hashOnHost(padded, 1) == hashOnHost(padded, 4));
  // Word indices are 32-bit: longer arrays are refused before anything is read.
  CHECK_THROWS_WITH_AS(hashOnHost(padded, (size_t{1} << 34) + 4),
                       "hashOnHost: at most 2^32 - 1 whole 4-byte words; got 4294967297", Error);
}

TEST_CASE("device_data: every routine on the GPU agrees with the host") {
  if (!gpu::available()) {
    std::cout << "SKIPPED: no CUDA device (" << gpu::unavailableReason() << ")\n";
    return;
  }
  const size_t n = 3 * 4096 + 5;
  const std::vector<uint32_t> words = randomOnHost<uint32_t>(n, 9, Random::Words, 1u << 16);
  gpu::DeviceBuffer<uint32_t> dWords(n);
  randomOnGpu(dWords, 9, Random::Words, 1u << 16);
  CHECK(dWords.download() == words);
  const std::vector<float> small = randomOnHost<float>(n, 9, Random::SmallInts);
  gpu::DeviceBuffer<float> dSmall(n);
  randomOnGpu(dSmall, 9, Random::SmallInts);
  CHECK(dSmall.download() == small);
  gpu::DeviceBuffer<uint8_t> dBytes(1001);
  randomOnGpu(dBytes, 3, Random::Bits);
  CHECK(dBytes.download() == randomOnHost<uint8_t>(1001, 3, Random::Bits));

  CHECK(segmentSumsOnGpu(dWords, 100).download() == hostSums(words, 100, false));
  CHECK(segmentScansOnGpu(dSmall, 100).download() == hostSums(small, 100, true));
  std::vector<float> inclusive = hostSums(small, n, true), exclusive(n);
  for (size_t i = 0; i < n; ++i) exclusive[i] = inclusive[i] - small[i];
  CHECK(scanOnGpu(dSmall, false).download() == inclusive);
  CHECK(scanOnGpu(dSmall, true).download() == exclusive);
  CHECK(sumOnGpu(dWords) == hostSums(words, n, false).at(0));
  // Shorter than one 4096-element segment, and empty.
  const std::vector<uint32_t> five = {3, 1, 4, 1, 5};
  CHECK(scanOnGpu(gpu::DeviceBuffer<uint32_t>(five), false).download() ==
        std::vector<uint32_t>{3, 4, 8, 9, 14});
  CHECK(scanOnGpu(gpu::DeviceBuffer<uint32_t>(five), true).download() ==
        std::vector<uint32_t>{0, 3, 4, 8, 9});
  CHECK(sumOnGpu(gpu::DeviceBuffer<uint32_t>(five)) == 14u);
  gpu::DeviceBuffer<uint32_t> none(0);
  CHECK(scanOnGpu(none, false).size() == 0);
  CHECK(sumOnGpu(none) == 0u);
  randomOnGpu(none, 1, Random::Bits);  // nothing to make
  CHECK(hashOnGpu(none) == 0);

  const uint32_t rows = 37, cols = 53;
  const std::vector<uint32_t> m = randomOnHost<uint32_t>(rows * cols, 4, Random::Modulo, 1000003);
  std::vector<uint32_t> mt(m.size());
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c) mt[c * rows + r] = m[r * cols + c];
  CHECK(transposeOnGpu(gpu::DeviceBuffer<uint32_t>(m), rows, cols).download() == mt);
  CHECK_THROWS_WITH_AS(transposeOnGpu(gpu::DeviceBuffer<uint32_t>(m), rows, cols + 1),
                       "transposeOnGpu: a 37 x 54 matrix has 1998 elements; got 1961", Error);

  // The check's hash equals the host's, over whole words and a trailing partial word; a
  // reference matches its bytes only.
  CHECK(hashOnGpu(dWords) == hashOnHost(words.data(), n * 4));
  const DeviceReference<uint32_t> ref{gpu::DeviceBuffer<uint32_t>(words)};
  CHECK(ref.matches(dWords));
  std::vector<uint32_t> changed = words;
  changed[n - 1] += 7;
  CHECK(!ref.matches(gpu::DeviceBuffer<uint32_t>(changed)));
  changed = words;
  std::swap(changed[1], changed[n / 2]);
  CHECK(!ref.matches(gpu::DeviceBuffer<uint32_t>(changed)));
  CHECK(!ref.matches(gpu::DeviceBuffer<uint32_t>(n - 1)));
  std::vector<uint8_t> bytes = dBytes.download();
  CHECK(hashOnGpu(dBytes) == hashOnHost(bytes.data(), bytes.size()));
  const DeviceReference<uint8_t> byteRef{gpu::DeviceBuffer<uint8_t>(bytes)};
  CHECK(byteRef.matches(dBytes));
  bytes.back() ^= 0x10;  // in the last, partial word (1001 = 250 x 4 + 1)
  CHECK(!byteRef.matches(gpu::DeviceBuffer<uint8_t>(bytes)));
  std::vector<float> nan = small;
  nan[n / 2] = std::numeric_limits<float>::quiet_NaN();
  CHECK(!DeviceReference<float>(gpu::DeviceBuffer<float>(small))
             .matches(gpu::DeviceBuffer<float>(nan)));
  // Larger than the grid (each thread loops): 2^22 + 3 words.
  const std::vector<uint32_t> big = randomOnHost<uint32_t>((1u << 22) + 3, 5, Random::Bits);
  CHECK(hashOnGpu(gpu::DeviceBuffer<uint32_t>(big)) == hashOnHost(big.data(), big.size() * 4));

  // The Mandelbrot reference, as the CPU's emulation, at a size whose rows are not a block.
  CHECK(mandelbrotOnGpu(301, 97).download() == paper::mandelReference(301, 97));
  CHECK(mandelbrotOnGpu(0, 5).size() == 0);
  CHECK_THROWS_WITH_AS(mandelbrotOnGpu(65536, 65537),
                       "mandelbrotOnGpu: a 65536 x 65537 image is over 2^32 - 1 pixels", Error);
}
