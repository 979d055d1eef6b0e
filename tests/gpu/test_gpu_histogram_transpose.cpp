// GPU tests of the device histogram and transpose (label gpu): histogramEven for every sample
// type against C++ and the simulator, on a stream, accumulating, with a misaligned input
// refused; transpose of odd shapes (8191 x 4097 included) against C++, on a stream.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <obsidian/device/histogram.hpp>
#include <obsidian/device/transpose.hpp>
#include <random>

using namespace obsidian;

namespace {

template <class S>
std::vector<uint32_t> reference(const std::vector<S>& samples, uint32_t bins,
                                HistogramLevel<S> lower, HistogramLevel<S> upper) {
  std::vector<uint32_t> counts(bins, 0);
  for (S x : samples) {
    if constexpr (std::is_same_v<S, float>) {
      if (!(lower <= x && x < upper)) continue;
      const float scale = static_cast<float>(bins) / (upper - lower);
      ++counts[static_cast<uint32_t>(
          std::fmin(std::fmax((x - lower) * scale, 0.0f), float(bins - 1)))];
    } else {
      if (x < lower || x >= upper) continue;
      ++counts[static_cast<uint32_t>(uint64_t{x - lower} * bins / (upper - lower))];
    }
  }
  return counts;
}

template <class S>
std::vector<S> randomSamples(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<S> v(n);
  for (S& x : v) {
    if constexpr (std::is_same_v<S, float>) {
      x = static_cast<float>(static_cast<double>(rng() >> 11) / 9007199254740992.0 * 1.5 - 0.25);
    } else {
      x = static_cast<S>(rng());
    }
  }
  return v;
}

// The samples' bytes in a u32 device buffer (u16 is not a kernel scalar type).
template <class S>
gpu::DeviceBuffer<uint32_t> packed(const std::vector<S>& samples) {
  std::vector<uint32_t> words((samples.size() * sizeof(S) + 3) / 4, 0);
  std::memcpy(words.data(), samples.data(), samples.size() * sizeof(S));
  return gpu::DeviceBuffer<uint32_t>(words);
}

template <class S>
void checkHistogram(size_t n, uint32_t bins, HistogramLevel<S> lower, HistogramLevel<S> upper) {
  const std::vector<S> in = randomSamples<S>(n, static_cast<uint32_t>(n + bins));
  const gpu::DeviceBuffer<uint32_t> din = packed(in);
  gpu::DeviceBuffer<uint32_t> counts(bins);
  device::histogramEven<S>(din.address(), n, counts, lower, upper);
  CHECK_MESSAGE(counts.download() == reference(in, bins, lower, upper),
                "n " << n << ", bins " << bins);
  if (n <= 20000) {
    CHECK(device::histogramEven<S>(in, bins, lower, upper) == counts.download());
  }
}

}  // namespace

TEST_CASE("gpu: histogramEven, every sample type, odd sizes, against C++") {
  for (size_t n : {size_t{1}, size_t{19}, size_t{4099}, size_t{1000003}, (size_t{1} << 24) + 5}) {
    checkHistogram<uint8_t>(n, 256, 0u, 256u);
    checkHistogram<uint8_t>(n, 7, 20u, 200u);
    checkHistogram<uint16_t>(n, 1000, 100u, 60000u);
    checkHistogram<uint32_t>(n, 4096, 0u, 4294967295u);
    checkHistogram<uint32_t>(n, 100, 5000u, 3000000000u);
    checkHistogram<float>(n, 1024, 0.0f, 1.0f);
    checkHistogram<float>(n, 3, -0.1f, 0.7f);
  }
}

TEST_CASE("gpu: histogramEven of NaN and constant data") {
  std::vector<float> f(100000, std::numeric_limits<float>::quiet_NaN());
  for (size_t i = 0; i < f.size(); i += 3) f[i] = 0.5f;
  gpu::DeviceBuffer<float> df(f);
  gpu::DeviceBuffer<uint32_t> counts(64);
  device::histogramEven<float>(df, counts, 0.0f, 1.0f);
  CHECK(counts.download() == reference(f, 64, 0.0f, 1.0f));
  const std::vector<uint8_t> same(3000001, 200);
  gpu::DeviceBuffer<uint8_t> ds(same);
  gpu::DeviceBuffer<uint32_t> c256(256);
  device::histogramEven<uint8_t>(ds, c256, 0u, 256u);
  CHECK(c256.download()[200] == 3000001);
}

TEST_CASE("gpu: histogramEven on a stream, accumulating, and its errors") {
  const std::vector<uint8_t> in = randomSamples<uint8_t>(1 << 20, 3);
  gpu::DeviceBuffer<uint8_t> din(in);
  gpu::DeviceBuffer<uint32_t> counts(256);
  gpu::Stream stream;
  device::Options o;
  o.stream = &stream;
  o.synchronize = false;
  device::histogramEven<uint8_t>(din, counts, 0u, 256u, o);
  o.accumulate = true;
  device::histogramEven<uint8_t>(din, counts, 0u, 256u, o);  // adds the same counts again
  stream.synchronize();
  std::vector<uint32_t> twice = reference(in, 256, 0u, 256u);
  for (uint32_t& c : twice) c *= 2;
  CHECK(counts.download() == twice);
  std::string error;
  try {
    device::histogramEven<uint8_t>(din.address() + 4, 100, counts, 0u, 256u);
  } catch (const Error& e) {
    error = e.what();
  }
  CHECK(error ==
        "histogramEven: the samples must start at a 16-byte aligned address (they are read "
        "with 16-byte loads); got one 4 bytes past");
}

TEST_CASE("gpu: transpose, odd shapes, against C++") {
  for (auto [rows, cols] :
       {std::pair{1u, 1u}, {1u, 5000u}, {5000u, 1u}, {33u, 17u}, {1000u, 777u}, {8191u, 4097u}}) {
    std::mt19937 rng(rows * 7 + cols);
    std::vector<uint32_t> in(size_t{rows} * cols);
    for (uint32_t& x : in) x = rng();
    gpu::DeviceBuffer<uint32_t> din(in), dout(in.size());
    device::transpose<uint32_t>(din, dout, rows, cols);
    const std::vector<uint32_t> out = dout.download();
    bool same = true;
    for (uint32_t r = 0; r < rows && same; ++r)
      for (uint32_t c = 0; c < cols && same; ++c)
        same = out[size_t{c} * rows + r] == in[size_t{r} * cols + c];
    CHECK_MESSAGE(same, rows << " x " << cols);
  }
}

TEST_CASE("gpu: transpose of floats on a stream, and back") {
  std::vector<float> in(300 * 501);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) * 0.5f;
  gpu::DeviceBuffer<float> a(in), b(in.size()), c(in.size());
  gpu::Stream stream;
  device::Options o;
  o.stream = &stream;
  o.synchronize = false;
  device::transpose<float>(a, b, 300, 501, o);
  device::transpose<float>(b, c, 501, 300, o);
  stream.synchronize();
  CHECK(c.download() == in);
  CHECK(b.download() == device::transpose<float>(in, 300, 501));
}
