// The registered kernel families: the paper's block reductions (reduce), the whole-array
// reduction of Figure 10 (reduce_whole), the Sklansky and Kogge-Stone block scans (scan), the
// Mandelbrot image (mandelbrot), the device layer's tuned algorithms (device_reduce,
// device_segmented_reduce, device_scan: the sweeps that chose their policy tables; histogram and
// transpose in device_families.cpp), the fused BLAS sequences (blas, in blas_family.cpp), and a
// test-only family whose reference is deliberately wrong. The reductions and scans are the
// library's (obsidian/block, obsidian/device); Mandelbrot is the example's program, which its
// example and this family share.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <obsidian/obsidian.hpp>
#include <sstream>

#include "../examples/mandelbrot/mandelbrot.hpp"
#include "blas_family.hpp"
#include "device_families.hpp"
#include "family.hpp"

namespace tuning {

namespace {

using namespace obsidian;
namespace gpu = obsidian::gpu;

// ------------------------------------------------------------------ parameters

bool isPowerOfTwo(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

uint32_t log2Exact(uint32_t x, const std::string& what) {
  if (!isPowerOfTwo(x)) {
    throw Error(what + " must be a power of two; got " + std::to_string(x));
  }
  uint32_t l = 0;
  while ((1u << l) < x) ++l;
  return l;
}

ParamSpec typeParam() { return choiceParam("type", "element type", {"u32", "f32"}, "u32"); }

// ------------------------------------------------------------------ data
// 1 .. below, never zero.
std::vector<uint32_t> randomWords(size_t n, uint32_t seed, uint32_t below) {
  std::vector<uint32_t> v(n);
  const uint64_t base = splitmix64(seed);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint32_t>(splitmix64(base + i) % below) + 1;
  return v;
}

// Small integers: u32 in 1..16; f32 non-zero in [-8, 8]. Every sum of a block's chunk (and
// every partial sum of a whole reduction of up to 2^26 elements) is an integer far below 2^24,
// so float sums are exact in any order and results compare exactly.
template <class T>
std::vector<T> smallValues(size_t n, uint32_t seed) {
  const std::vector<uint32_t> w = randomWords(n, seed, 16);
  if constexpr (std::is_same_v<T, float>) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
      const int k = static_cast<int>(w[i]);
      v[i] = static_cast<float>(k <= 8 ? -k : k - 8);
    }
    return v;
  } else {
    return w;
  }
}

template <class T>
std::string typeName() {
  return std::is_same_v<T, float> ? "f32" : "u32";
}

template <class T>
struct DeviceCopies {
  std::vector<gpu::DeviceBuffer<T>> copies;
};

// The host input (shared by every point of the same type and length) and its rotated device
// copies.
template <class T>
std::shared_ptr<const std::vector<T>> hostInput(DataCache& cache, size_t n,
                                                const std::string& tag) {
  return cache.get<const std::vector<T>>(tag + ":" + typeName<T>() + ":" + std::to_string(n), [&] {
    return std::make_shared<const std::vector<T>>(smallValues<T>(n, static_cast<uint32_t>(n)));
  });
}

template <class T>
std::shared_ptr<DeviceCopies<T>> deviceInput(DataCache& cache, const std::vector<T>& host,
                                             const std::string& tag) {
  return cache.get<DeviceCopies<T>>(
      "device:" + tag + ":" + typeName<T>() + ":" + std::to_string(host.size()), [&] {
        auto d = std::make_shared<DeviceCopies<T>>();
        const size_t r = rotationsFor(host.size() * sizeof(T));
        for (size_t i = 0; i < r; ++i) d->copies.emplace_back(host);
        return d;
      });
}

template <class T>
std::string compare(const std::vector<T>& got, const std::vector<T>& expected) {
  if (got.size() != expected.size()) {
    return "output has " + std::to_string(got.size()) + " elements, expected " +
           std::to_string(expected.size());
  }
  size_t first = got.size(), count = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(got[i] == expected[i])) {
      if (count++ == 0) first = i;
    }
  }
  if (count == 0) return "";
  std::ostringstream s;
  s << "out[" << first << "] = " << +got[first] << ", expected " << +expected[first] << " ("
    << count << " of " << got.size() << " elements differ)";
  return s.str();
}

// A point with one kernel from one input array to one output array.
template <class T>
class ArrayInstance : public Instance {
 public:
  ArrayInstance(Kernel k, std::shared_ptr<const std::vector<T>> in,
                std::shared_ptr<const std::vector<T>> expected, std::string tag)
      : k_(std::move(k)),
        in_(std::move(in)),
        expected_(std::move(expected)),
        tag_(std::move(tag)),
        out_(expected_->size()) {
    poison(out_);
  }

  std::vector<obsidian::SimStats> simulate(const obsidian::SimOptions& o) override {
    return {obsidian::simulate(k_, {*in_, out_}, o)};
  }
  void prepareGpu(DataCache& cache) override {
    dIn_ = deviceInput<T>(cache, *in_, tag_);
    dOut_ = std::make_unique<gpu::DeviceBuffer<T>>(out_.size());
    poison(*dOut_);
  }
  size_t rotations() const override { return dIn_->copies.size(); }
  void launch(size_t run, const gpu::LaunchOptions& o) override {
    const gpu::DeviceBuffer<T>& in = dIn_->copies[run % dIn_->copies.size()];
    gpu::launch(k_, {in, *dOut_}, o);
  }
  void download() override { dOut_->download(std::span<T>(out_)); }
  std::string check() override { return compare(out_, *expected_); }
  double bytesMoved() const override {
    return static_cast<double>((in_->size() + out_.size()) * sizeof(T));
  }

 private:
  Kernel k_;
  std::shared_ptr<const std::vector<T>> in_, expected_;
  std::string tag_;
  std::vector<T> out_;
  std::shared_ptr<DeviceCopies<T>> dIn_;
  std::unique_ptr<gpu::DeviceBuffer<T>> dOut_;
};

// ------------------------------------------------------------------ reduce (Figure 6)
const std::vector<std::string> reduceVariants = {"red1", "red2", "red3", "red4",
                                                 "red5", "red6", "red7", "red5p"};

// The block reduction of a point: red1..red7, or red5' with `seq` elements per thread.
struct BlockReducer {
  std::string variant;
  uint32_t seq = 8;
  template <class T, class Op>
  T operator()(const Program<Block>& p, Op f, const SPull<T>& c) const {
    if (variant == "red5p") return red5p(p, seq, f, c);
    const auto it = std::find(reduceVariants.begin(), reduceVariants.end(), variant);
    return blockReduce(static_cast<BlockReduceAlgorithm>(it - reduceVariants.begin()), p, f, c);
  }
};

BlockReducer reducerOf(const Params& p) {
  return BlockReducer{str(p, "variant"), p.contains("seq") ? u32(p, "seq") : 8u};
}

// Threads of the first (widest) stage: red1..red3 combine pairs, red4/red5 reduce 8 elements
// per thread, red6 16, red7 32, red5' seq.
uint32_t reduceNaturalThreads(const Params& p) {
  const std::string v = str(p, "variant");
  const uint32_t chunk = u32(p, "chunk");
  const uint32_t perThread = v == "red4" || v == "red5" ? 8
                             : v == "red6"              ? 16
                             : v == "red7"              ? 32
                             : v == "red5p"             ? u32(p, "seq")
                                                        : 2;
  return std::max(1u, chunk / perThread);
}

std::string reduceLabel(const Params& p) {
  const std::string v = str(p, "variant");
  return v == "red5p" ? v + "/" + std::to_string(u32(p, "seq")) : v;
}

template <class T>
Kernel reduceKernel(const Params& p) {
  const uint32_t chunk = u32(p, "chunk");
  const BlockReducer red = reducerOf(p);
  auto plus = [](const Exp<T>& a, const Exp<T>& b) { return a + b; };
  return capture(red.variant, u32(p, "threads"), [chunk, red, plus](DPull<Exp<T>> in) {
    return mapRed<Exp<T>>(
        chunk,
        [red, plus](const Program<Block>& pr, const SPull<Exp<T>>& c) { return red(pr, plus, c); },
        in);
  });
}

template <class T>
std::unique_ptr<Instance> reduceInstance(const Params& p, const std::vector<Kernel>& k,
                                         DataCache& cache, bool corruptReference) {
  const size_t n = p.at("n").get<size_t>();
  const uint32_t chunk = u32(p, "chunk");
  if (n % chunk != 0) {
    throw Error("reduce: n (" + std::to_string(n) + ") must be a multiple of chunk (" +
                std::to_string(chunk) + ")");
  }
  auto in = hostInput<T>(cache, n, "small");
  auto expected = cache.get<const std::vector<T>>(
      "reduce-ref:" + typeName<T>() + ":" + std::to_string(n) + ":" + std::to_string(chunk) +
          (corruptReference ? ":corrupt" : ""),
      [&] {
        auto r = std::make_shared<std::vector<T>>(n / chunk);
        for (size_t b = 0; b < r->size(); ++b) {
          T acc = (*in)[b * chunk];
          for (size_t i = 1; i < chunk; ++i) acc = acc + (*in)[b * chunk + i];
          (*r)[b] = acc;
        }
        if (corruptReference && !r->empty()) (*r)[r->size() / 2] += 1;
        return std::shared_ptr<const std::vector<T>>(std::move(r));
      });
  return std::make_unique<ArrayInstance<T>>(k.at(0), in, expected, "small");
}

Family reduceFamily(bool testWrong) {
  Family f;
  f.name = testWrong ? "test_wrong_reference" : "reduce";
  f.description = testWrong
                      ? "test only: reduce with a reference that is off by one (always 'wrong')"
                      : "the paper's block reductions red1..red7 (and red5' with seq elements "
                        "per thread): one partial sum per chunk of the input (Figure 6)";
  f.testOnly = testWrong;
  f.params = {
      typeParam(),
      intParam("n", "input elements (a multiple of chunk; capped on the simulator)", 1,
               int64_t{1} << 31, int64_t{1} << 26),
      intParam("chunk", "elements per block", 1, 1 << 20),
      intParam("threads", "threads per block", 1, 1024),
      choiceParam("variant", "block reduction", reduceVariants),
      intParam("seq", "elements each thread reduces sequentially (red5p only)", 1, 1 << 16, 8)};
  f.sizeParam = "chunk";
  f.canonical = [](Params p, bool simulate) {
    if (p.at("variant") != "red5p") p.erase("seq");
    if (simulate) p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 3ull * u32(p, "chunk"));
    return p;
  };
  f.build = [](const Params& p) {
    return std::vector<Kernel>{str(p, "type") == "f32" ? reduceKernel<float>(p)
                                                       : reduceKernel<uint32_t>(p)};
  };
  f.instantiate = [testWrong](const Params& p, const std::vector<Kernel>& k, DataCache& cache) {
    return str(p, "type") == "f32" ? reduceInstance<float>(p, k, cache, testWrong)
                                   : reduceInstance<uint32_t>(p, k, cache, testWrong);
  };
  f.variantLabel = reduceLabel;
  f.naturalThreads = reduceNaturalThreads;
  return f;
}

// ------------------------------------------------------------------ reduce_whole (Figure 10)
// The whole array to one value: the block reduction runs level by level (n -> ceil(n/chunk) ->
// ... -> 1), the last chunk of a level padded with 0, as in the paper's Section 6.1.
template <class T>
class WholeReduceInstance : public Instance {
 public:
  WholeReduceInstance(Kernel k, uint32_t chunk, std::shared_ptr<const std::vector<T>> in,
                      T expected)
      : k_(std::move(k)), chunk_(chunk), in_(std::move(in)), expected_(expected) {
    for (size_t m = partialCount(in_->size(), chunk_);; m = partialCount(m, chunk_)) {
      sizes_.push_back(m);
      if (m == 1) break;
    }
  }
  std::vector<obsidian::SimStats> simulate(const obsidian::SimOptions& o) override {
    std::vector<obsidian::SimStats> runs;
    std::vector<T> data = *in_;
    for (size_t m : sizes_) {
      std::vector<T> partial(m);
      poison(partial);
      runs.push_back(obsidian::simulate(k_, {data, partial}, o));
      data = std::move(partial);
    }
    got_ = data.at(0);
    return runs;
  }
  void prepareGpu(DataCache& cache) override {
    dIn_ = deviceInput<T>(cache, *in_, "whole");
    for (size_t m : sizes_) poison(levels_.emplace_back(m));
  }
  size_t rotations() const override { return dIn_->copies.size(); }
  void launch(size_t run, const gpu::LaunchOptions& o) override {
    const gpu::DeviceBuffer<T>* current = &dIn_->copies[run % dIn_->copies.size()];
    for (gpu::DeviceBuffer<T>& level : levels_) {
      gpu::launch(k_, {*current, level}, o);
      current = &level;
    }
  }
  void download() override { got_ = levels_.back().download().at(0); }
  std::string check() override {
    if (got_ == expected_) return "";
    std::ostringstream s;
    s << "sum = " << got_ << ", expected " << expected_;
    return s.str();
  }
  double bytesMoved() const override {
    size_t elements = in_->size();
    for (size_t m : sizes_) elements += 2 * m;  // written, then read by the next level
    return static_cast<double>((elements - 1) * sizeof(T));
  }

 private:
  Kernel k_;
  uint32_t chunk_;
  std::shared_ptr<const std::vector<T>> in_;
  T expected_;
  T got_{};
  std::vector<size_t> sizes_;
  std::shared_ptr<DeviceCopies<T>> dIn_;
  std::deque<gpu::DeviceBuffer<T>> levels_;
};

template <class T>
Kernel wholeKernel(const Params& p) {
  const BlockReducer red = reducerOf(p);
  auto plus = [](const Exp<T>& a, const Exp<T>& b) { return a + b; };
  return partialReduceWith<T>([red](const Program<Block>& pr, decltype(plus) f,
                                    const SPull<Exp<T>>& c) { return red(pr, f, c); },
                              plus, T{0}, u32(p, "chunk"), u32(p, "threads"),
                              red.variant + "Whole");
}

template <class T>
std::unique_ptr<Instance> wholeInstance(const Params& p, const std::vector<Kernel>& k,
                                        DataCache& cache) {
  const size_t n = p.at("n").get<size_t>();
  auto in = hostInput<T>(cache, n, "whole");
  // Integer sums: exact for u32 (wrapping) and for the small-integer floats (far below 2^24).
  const auto sum = *cache.get<T>("whole-ref:" + typeName<T>() + ":" + std::to_string(n), [&] {
    int64_t s = 0;
    for (T x : *in) s += static_cast<int64_t>(x);
    return std::make_shared<T>(static_cast<T>(std::is_same_v<T, float> ? s : s & 0xffffffffll));
  });
  return std::make_unique<WholeReduceInstance<T>>(k.at(0), u32(p, "chunk"), in, sum);
}

Family wholeFamily() {
  Family f;
  f.name = "reduce_whole";
  f.description =
      "a whole array reduced to one value by red1..red7 level by level, the last chunk padded "
      "(Figure 10: 2^24 elements)";
  f.params = {
      typeParam(),
      intParam("n", "input elements (capped on the simulator)", 1, int64_t{1} << 31,
               int64_t{1} << 24),
      intParam("chunk", "elements per block", 1, 1 << 20, 4096),
      intParam("threads", "threads per block", 1, 1024),
      choiceParam("variant", "block reduction", reduceVariants),
      intParam("seq", "elements each thread reduces sequentially (red5p only)", 1, 1 << 16, 8)};
  f.sizeParam = "n";
  f.canonical = [](Params p, bool simulate) {
    if (p.at("variant") != "red5p") p.erase("seq");
    if (simulate)
      p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 2ull * u32(p, "chunk") + 5);
    return p;
  };
  f.build = [](const Params& p) {
    return std::vector<Kernel>{str(p, "type") == "f32" ? wholeKernel<float>(p)
                                                       : wholeKernel<uint32_t>(p)};
  };
  f.instantiate = [](const Params& p, const std::vector<Kernel>& k, DataCache& cache) {
    return str(p, "type") == "f32" ? wholeInstance<float>(p, k, cache)
                                   : wholeInstance<uint32_t>(p, k, cache);
  };
  f.variantLabel = reduceLabel;
  f.naturalThreads = reduceNaturalThreads;
  return f;
}

// ------------------------------------------------------------------ scan (Figure 9)
std::vector<std::string> scanVariantNames() {
  std::vector<std::string> v;
  for (BlockScanAlgorithm s : kBlockScanAlgorithms) v.push_back(name(s));
  return v;
}

BlockScanAlgorithm scanVariantOf(const Params& p) {
  return parseBlockScanAlgorithm(str(p, "variant"));
}

template <class T>
std::unique_ptr<Instance> scanInstance(const Params& p, const std::vector<Kernel>& k,
                                       DataCache& cache) {
  const size_t n = p.at("n").get<size_t>();
  const uint32_t chunk = u32(p, "chunk");
  if (n % chunk != 0) {
    throw Error("scan: n (" + std::to_string(n) + ") must be a multiple of chunk (" +
                std::to_string(chunk) + ")");
  }
  auto in =
      cache.get<const std::vector<T>>("scan-input:" + typeName<T>() + ":" + std::to_string(n), [&] {
        if constexpr (std::is_same_v<T, float>) {
          return std::make_shared<const std::vector<T>>(smallValues<T>(n, 2026));
        } else {
          return std::make_shared<const std::vector<T>>(randomWords(n, 2026, 1u << 16));
        }
      });
  auto expected = cache.get<const std::vector<T>>(
      "scan-ref:" + typeName<T>() + ":" + std::to_string(n) + ":" + std::to_string(chunk), [&] {
        auto r = std::make_shared<std::vector<T>>(n);
        for (size_t b = 0; b < n; b += chunk) {
          T acc = 0;
          for (size_t i = b; i < b + chunk; ++i) (*r)[i] = acc = acc + (*in)[i];
        }
        return std::shared_ptr<const std::vector<T>>(std::move(r));
      });
  return std::make_unique<ArrayInstance<T>>(k.at(0), in, expected, "scan");
}

Family scanFamily() {
  Family f;
  f.name = "scan";
  f.description =
      "the paper's block scans sklansky, sklansky2, sklansky3 (and Kogge-Stone, and the "
      "library's threadSequential): the inclusive prefixes of every chunk of the input "
      "(Figure 9)";
  f.params = {typeParam(),
              intParam("n", "input elements (a multiple of chunk; capped on the simulator)", 1,
                       int64_t{1} << 31, int64_t{1} << 24),
              intParam("chunk", "elements per block (a power of two)", 1, 1 << 20),
              intParam("threads", "threads per block", 1, 1024),
              choiceParam("variant", "block scan", scanVariantNames())};
  f.sizeParam = "chunk";
  f.canonical = [](Params p, bool simulate) {
    if (simulate) p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 3ull * u32(p, "chunk"));
    return p;
  };
  f.build = [](const Params& p) {
    const uint32_t chunk = u32(p, "chunk");
    log2Exact(chunk, "scan: chunk");
    const BlockScanAlgorithm v = scanVariantOf(p);
    const uint32_t threads = u32(p, "threads");
    if (str(p, "type") == "f32")
      return std::vector<Kernel>{tileScanKernel<float>(v, Sum{}, chunk, threads)};
    return std::vector<Kernel>{tileScanKernel<uint32_t>(v, Sum{}, chunk, threads)};
  };
  f.instantiate = [](const Params& p, const std::vector<Kernel>& k, DataCache& cache) {
    return str(p, "type") == "f32" ? scanInstance<float>(p, k, cache)
                                   : scanInstance<uint32_t>(p, k, cache);
  };
  f.variantLabel = [](const Params& p) { return str(p, "variant"); };
  f.naturalThreads = [](const Params& p) {
    const uint32_t chunk = u32(p, "chunk");
    return std::max(1u, chunk / elementsPerThread(scanVariantOf(p)));
  };
  return f;
}

// ------------------------------------------------------------------ mandelbrot (Figure 3)
class MandelInstance : public Instance {
 public:
  MandelInstance(Kernel k, uint32_t height, std::shared_ptr<const std::vector<uint8_t>> expected)
      : k_(std::move(k)), height_(height), expected_(std::move(expected)), out_(expected_->size()) {
    poison(out_);
  }
  std::vector<obsidian::SimStats> simulate(const obsidian::SimOptions& o) override {
    return {obsidian::simulate(k_, {height_, out_}, o)};
  }
  void prepareGpu(DataCache&) override {
    dOut_ = std::make_unique<gpu::DeviceBuffer<uint8_t>>(out_.size());
    poison(*dOut_);
  }
  void launch(size_t, const gpu::LaunchOptions& o) override {
    gpu::launch(k_, {height_, *dOut_}, o);
  }
  void download() override { dOut_->download(std::span<uint8_t>(out_)); }
  std::string check() override { return compare(out_, *expected_); }
  double bytesMoved() const override { return static_cast<double>(out_.size()); }

 private:
  Kernel k_;
  uint32_t height_;
  std::shared_ptr<const std::vector<uint8_t>> expected_;
  std::vector<uint8_t> out_;
  std::unique_ptr<gpu::DeviceBuffer<uint8_t>> dOut_;
};

Family mandelbrotFamily() {
  Family f;
  f.name = "mandelbrot";
  f.description =
      "the Mandelbrot image, one block per row, one thread per pixel (virtualized): "
      "size x size pixels (Figure 3)";
  f.params = {
      intParam("size", "image width in pixels (and height, unless height is given)", 1, 1 << 16),
      intParam("height", "image height in pixels (0: the size; capped on the simulator)", 0,
               1 << 16, 0),
      intParam("threads", "threads per block", 1, 1024)};
  f.labelParams = {};
  f.sizeParam = "size";
  f.canonical = [](Params p, bool simulate) {
    if (u32(p, "height") == 0) p["height"] = p.at("size");
    if (simulate) p["height"] = std::min(u32(p, "height"), 2u);
    return p;
  };
  f.build = [](const Params& p) {
    return std::vector<Kernel>{paper::mandelKernel(u32(p, "size"), u32(p, "threads"))};
  };
  f.instantiate = [](const Params& p, const std::vector<Kernel>& k, DataCache& cache) {
    const uint32_t width = u32(p, "size"), height = u32(p, "height");
    auto expected = cache.get<const std::vector<uint8_t>>(
        "mandel-ref:" + std::to_string(width) + "x" + std::to_string(height), [&] {
          return std::make_shared<const std::vector<uint8_t>>(
              paper::mandelReference(width, height));
        });
    return std::make_unique<MandelInstance>(k.at(0), height, expected);
  };
  f.variantLabel = [](const Params&) { return std::string("mandel"); };
  f.naturalThreads = [](const Params& p) { return u32(p, "size"); };  // one thread per pixel
  return f;
}

// ------------------------------------------------------------------ the device layer's algorithms
// The sweeps that choose the policy tables of obsidian/device/*.hpp: each point is one policy of
// a device algorithm on one input, its output checked against C++.
template <class T>
std::shared_ptr<const std::vector<T>> inputOf(DataCache& cache, const Params& p) {
  return hostInput<T>(cache, p.at("n").get<size_t>(), "device");
}

// On the GPU, the grid the library's call would use (what the device holds at once); on the
// simulator, kSimulatedReduceBlocks.
template <class T>
Kernel deviceReduceKernel(const ReducePolicy& policy) {
  const uint32_t blocks =
      gpu::available() ? reduceBlocksOnGpu<T>(Sum{}, T{0}, policy) : kSimulatedReduceBlocks;
  return reduceKernel<T>(Sum{}, T{0}, policy, blocks);
}

ReducePolicy reducePolicyOf(const Params& p) {
  return ReducePolicy{u32(p, "threads"), u32(p, "unroll"), u32(p, "min_vectors"),
                      str(p, "sweep") == "tiles"};
}

template <class T>
std::unique_ptr<Instance> deviceReduceInstance(const Params& p, const std::vector<Kernel>& k,
                                               DataCache& cache) {
  auto in = inputOf<T>(cache, p);
  auto expected = cache.get<const std::vector<T>>(
      "device-reduce-ref:" + typeName<T>() + ":" + std::to_string(in->size()), [&] {
        int64_t sum = 0;
        for (T x : *in) sum += static_cast<int64_t>(x);
        return std::make_shared<const std::vector<T>>(
            std::vector<T>{static_cast<T>(std::is_same_v<T, float> ? sum : sum & 0xffffffffll)});
      });
  return std::make_unique<ArrayInstance<T>>(k.at(0), in, expected, "device");
}

Family deviceReduceFamily() {
  Family f;
  f.name = "device_reduce";
  f.description =
      "the device layer's one-launch reduction (reduceAll, obsidian/device/reduce.hpp) by policy: "
      "the sweep behind kReducePolicies";
  f.params = {typeParam(),
              intParam("n", "input elements (capped on the simulator)", 1, int64_t{1} << 31,
                       int64_t{1} << 28),
              intParam("threads", "threads per block (a power-of-two number of warps)", 32, 1024),
              intParam("unroll", "16-byte vectors in flight per thread", 1, 16, 4),
              intParam("min_vectors", "fewer blocks for short inputs (0: always all)", 0, 64, 4),
              choiceParam("sweep", "how blocks share the input", {"tiles", "strided"}, "tiles")};
  f.labelParams = {"unroll", "sweep"};
  f.sizeParam = "n";
  f.canonical = [](Params p, bool simulate) {
    if (simulate) p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 20000);
    return p;
  };
  f.build = [](const Params& p) {
    const ReducePolicy policy = reducePolicyOf(p);
    return std::vector<Kernel>{str(p, "type") == "f32" ? deviceReduceKernel<float>(policy)
                                                       : deviceReduceKernel<uint32_t>(policy)};
  };
  f.instantiate = [](const Params& p, const std::vector<Kernel>& k, DataCache& cache) {
    return str(p, "type") == "f32" ? deviceReduceInstance<float>(p, k, cache)
                                   : deviceReduceInstance<uint32_t>(p, k, cache);
  };
  f.variantLabel = [](const Params& p) {
    return "unroll " + std::to_string(u32(p, "unroll")) + " " + str(p, "sweep");
  };
  return f;
}

template <class T>
std::unique_ptr<Instance> segmentedInstance(const Params& p, const std::vector<Kernel>& k,
                                            DataCache& cache) {
  auto in = inputOf<T>(cache, p);
  const uint32_t segment = u32(p, "segment");
  auto expected = cache.get<const std::vector<T>>(
      "segmented-ref:" + typeName<T>() + ":" + std::to_string(in->size()) + ":" +
          std::to_string(segment),
      [&] {
        auto r = std::make_shared<std::vector<T>>(partialCount(in->size(), segment));
        for (size_t s = 0; s < r->size(); ++s) {
          int64_t sum = 0;
          for (size_t i = s * segment; i < std::min(in->size(), (s + 1) * size_t{segment}); ++i) {
            sum += static_cast<int64_t>((*in)[i]);
          }
          (*r)[s] = static_cast<T>(std::is_same_v<T, float> ? sum : sum & 0xffffffffll);
        }
        return std::shared_ptr<const std::vector<T>>(std::move(r));
      });
  return std::make_unique<ArrayInstance<T>>(k.at(0), in, expected, "device");
}

Family deviceSegmentedReduceFamily() {
  Family f;
  f.name = "device_segmented_reduce";
  f.description =
      "the device layer's segmented reduction (segmentedReduce, obsidian/device/reduce.hpp): one "
      "sum per segment, one block each; the sweep behind kSegmentedReducePolicies";
  f.params = {typeParam(),
              intParam("n", "input elements (capped on the simulator)", 1, int64_t{1} << 31,
                       int64_t{1} << 28),
              intParam("segment", "elements per segment", 1, 1 << 24, 4096),
              intParam("threads", "threads per block (a power-of-two number of warps)", 32, 1024)};
  f.labelParams = {"segment"};
  f.sizeParam = "n";
  f.canonical = [](Params p, bool simulate) {
    if (simulate) {
      p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 3ull * u32(p, "segment") + 7);
    }
    return p;
  };
  f.build = [](const Params& p) {
    const SegmentedReducePolicy policy{u32(p, "threads")};
    const uint32_t segment = u32(p, "segment");
    return std::vector<Kernel>{str(p, "type") == "f32"
                                   ? segmentedReduceKernel<float>(Sum{}, 0.0f, segment, policy)
                                   : segmentedReduceKernel<uint32_t>(Sum{}, 0u, segment, policy)};
  };
  f.instantiate = [](const Params& p, const std::vector<Kernel>& k, DataCache& cache) {
    return str(p, "type") == "f32" ? segmentedInstance<float>(p, k, cache)
                                   : segmentedInstance<uint32_t>(p, k, cache);
  };
  f.variantLabel = [](const Params& p) { return "segment " + std::to_string(u32(p, "segment")); };
  return f;
}

template <class T>
std::unique_ptr<Instance> deviceScanInstance(const Params& p, const std::vector<Kernel>& k,
                                             DataCache& cache) {
  auto in = inputOf<T>(cache, p);
  const bool exclusive = str(p, "kind") == "exclusive";
  auto expected = cache.get<const std::vector<T>>(
      "device-scan-ref:" + typeName<T>() + ":" + std::to_string(in->size()) + ":" + str(p, "kind"),
      [&] {
        auto r = std::make_shared<std::vector<T>>(in->size());
        T acc = 0;
        for (size_t i = 0; i < in->size(); ++i) {
          if (!exclusive) acc = acc + (*in)[i];
          (*r)[i] = acc;
          if (exclusive) acc = acc + (*in)[i];
        }
        return std::shared_ptr<const std::vector<T>>(std::move(r));
      });
  return std::make_unique<ArrayInstance<T>>(k.at(0), in, expected, "device");
}

Family deviceScanFamily() {
  Family f;
  f.name = "device_scan";
  f.description =
      "the device layer's one-launch scan (decoupled look-back over thread-sequential tiles, "
      "obsidian/device/scan.hpp) by policy: the sweep behind kScanPolicies";
  f.params = {
      typeParam(),
      choiceParam("kind", "inclusive or exclusive", {"inclusive", "exclusive"}, "inclusive"),
      intParam("n", "input elements (capped on the simulator)", 1, int64_t{1} << 31,
               int64_t{1} << 28),
      intParam("threads", "threads per block (a multiple of 32)", 32, 1024),
      intParam("items", "elements each thread scans (odd: no bank conflicts)", 1, 64, 15),
      choiceParam("load", "how threads get their elements (block/load_store.hpp)",
                  {"direct", "striped", "warpStriped"}, "direct"),
      intParam("delay", "the look-back's back-off in ns (0: none)", 0, 1000000, 0),
      intParam("blocks", "blocks per SM the registers must allow (0: the compiler's choice)", 0, 64,
               0)};
  f.labelParams = {"items", "load", "delay", "blocks"};
  f.sizeParam = "n";
  f.canonical = [](Params p, bool simulate) {
    if (simulate) p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 20000);
    return p;
  };
  f.build = [](const Params& p) {
    const ScanPolicy policy{u32(p, "threads"), u32(p, "items"),
                            parseBlockLoadAlgorithm(str(p, "load")), u32(p, "delay"),
                            u32(p, "blocks")};
    const ScanKind kind = str(p, "kind") == "exclusive" ? ScanKind::Exclusive : ScanKind::Inclusive;
    return std::vector<Kernel>{str(p, "type") == "f32"
                                   ? scanKernel<float>(Sum{}, policy, kind, 0.0f)
                                   : scanKernel<uint32_t>(Sum{}, policy, kind, 0u)};
  };
  f.instantiate = [](const Params& p, const std::vector<Kernel>& k, DataCache& cache) {
    return str(p, "type") == "f32" ? deviceScanInstance<float>(p, k, cache)
                                   : deviceScanInstance<uint32_t>(p, k, cache);
  };
  f.variantLabel = [](const Params& p) {
    const std::string load = str(p, "load");
    const uint32_t delay = u32(p, "delay");
    const uint32_t blocks = u32(p, "blocks");
    return "x" + std::to_string(u32(p, "items")) + (load == "direct" ? "" : " " + load) +
           (delay == 0 ? "" : " d" + std::to_string(delay)) +
           (blocks == 0 ? "" : " b" + std::to_string(blocks));
  };
  return f;
}

}  // namespace

const std::vector<Family>& families() {
  static const std::vector<Family> all = {
      reduceFamily(false), wholeFamily(),        scanFamily(),
      mandelbrotFamily(),  deviceReduceFamily(), deviceSegmentedReduceFamily(),
      deviceScanFamily(),  histogramFamily(),    transposeFamily(),
      blasFamily(),        reduceFamily(true)};
  return all;
}

const Family& findFamily(const std::string& name) {
  std::string known;
  for (const Family& f : families()) {
    if (f.name == name) return f;
    if (!f.testOnly) known += (known.empty() ? "" : ", ") + f.name;
  }
  throw Error("unknown kernel family \"" + name + "\"; known families: " + known);
}

}  // namespace tuning
