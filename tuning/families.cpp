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
// A point's input and reference, made where they are used (device_data.hpp): on the host for
// the simulator; on the device for the GPU (the same input values), the reference computed there
// by a plain kernel and the output compared there. Points with equal keys share them.
template <class T>
struct ArrayData {
  std::string tag;  // the input: n elements of `formula` (param) from `seed`
  size_t n = 0;
  uint64_t seed = 0;
  Random formula = Random::SmallInts;
  uint64_t param = 0;
  std::string referenceKey;  // the reference: outputSize elements
  size_t outputSize = 0;
  std::function<std::vector<T>(const std::vector<T>& in)> onHost;
  std::function<gpu::DeviceBuffer<T>(const gpu::DeviceBuffer<T>& in)> onGpu;
  std::vector<PlainKernel> plain;  // the plain kernels onGpu launches
};

// Small integers (Random::SmallInts: u32 in 1..16, f32 non-zero in [-8, 8]): every sum of a
// block's chunk (and every partial sum of a whole reduction of up to 2^26 elements) is an
// integer far below 2^24, so float sums are exact in any order and results compare exactly.
template <class T>
ArrayData<T> smallInput(const std::string& tag, size_t n, uint64_t seed) {
  ArrayData<T> d;
  d.tag = tag;
  d.n = n;
  d.seed = seed;
  return d;
}

template <class T>
struct DeviceCopies {
  std::vector<gpu::DeviceBuffer<T>> copies;
};

// What names d's input among the sweep's shared data: everything that makes it.
template <class T>
std::string inputKey(const ArrayData<T>& d) {
  return d.tag + ":" + typeName<T>() + ":" + std::to_string(d.n) + ":" + std::to_string(d.seed) +
         ":" + std::to_string(static_cast<int>(d.formula)) + ":" + std::to_string(d.param);
}

// The host input of d (shared).
template <class T>
std::shared_ptr<const std::vector<T>> hostInput(DataCache& cache, const ArrayData<T>& d) {
  return cache.get<const std::vector<T>>("host:" + inputKey(d), [&] {
    return std::make_shared<const std::vector<T>>(randomOnHost<T>(d.n, d.seed, d.formula, d.param));
  });
}

// The device input of d, in rotated copies made on the device (shared).
template <class T>
std::shared_ptr<DeviceCopies<T>> deviceInput(DataCache& cache, const ArrayData<T>& d) {
  return cache.get<DeviceCopies<T>>("device:" + inputKey(d), [&] {
    auto c = std::make_shared<DeviceCopies<T>>();
    const size_t r = rotationsFor(d.n * sizeof(T));
    for (size_t i = 0; i < r; ++i)
      randomOnGpu(c->copies.emplace_back(d.n), d.seed, d.formula, d.param);
    return c;
  });
}

// The plain kernels an ArrayInstance's data launches on the GPU: its input's, its reference's
// and its check's (Family::plainKernels).
template <class T>
std::vector<PlainKernel> arrayPlainKernels(const ArrayData<T>& d) {
  std::vector<PlainKernel> k = d.plain;
  k.push_back(plainRandom<T>(d.formula));
  k.push_back(plainHash());
  return k;
}

// A point with one kernel from one input array to one output array.
template <class T>
class ArrayInstance : public Instance {
 public:
  ArrayInstance(Kernel k, ArrayData<T> data, DataCache& cache)
      : k_(std::move(k)), d_(std::move(data)), cache_(cache) {}

  std::vector<obsidian::SimStats> simulate(const obsidian::SimOptions& o) override {
    const auto in = hostInput(cache_, d_);
    expected_ = cache_.get<const std::vector<T>>("host-ref:" + d_.referenceKey, [&] {
      return std::make_shared<const std::vector<T>>(d_.onHost(*in));
    });
    out_.resize(d_.outputSize);
    poison(out_);
    return {obsidian::simulate(k_, {*in, out_}, o)};
  }
  void prepareGpu(DataCache& cache) override {
    dIn_ = deviceInput(cache, d_);
    dExpected_ = cache.get<const DeviceReference<T>>("device-ref:" + d_.referenceKey, [&] {
      return std::make_shared<const DeviceReference<T>>(d_.onGpu(dIn_->copies.at(0)));
    });
    dOut_ = cache.output<T>("out", d_.outputSize);
    poison(*dOut_);
  }
  size_t rotations() const override { return dIn_->copies.size(); }
  void launch(size_t run, const gpu::LaunchOptions& o) override {
    const gpu::DeviceBuffer<T>& in = dIn_->copies[run % dIn_->copies.size()];
    gpu::launch(k_, {in, *dOut_}, o);
  }
  void download() override { out_ = dOut_->download(); }
  std::string check() override { return firstDifference(out_, *expected_); }
  std::string checkGpu() override { return firstDifferenceOnGpu(*dOut_, *dExpected_); }
  double bytesMoved() const override {
    return static_cast<double>((d_.n + d_.outputSize) * sizeof(T));
  }

 private:
  Kernel k_;
  ArrayData<T> d_;
  DataCache& cache_;  // the host data of simulate() (the sweep's, which outlives the point)
  std::shared_ptr<const std::vector<T>> expected_;
  std::vector<T> out_;
  std::shared_ptr<DeviceCopies<T>> dIn_;
  std::shared_ptr<const DeviceReference<T>> dExpected_;
  std::shared_ptr<gpu::DeviceBuffer<T>> dOut_;
};

// The host twins of the plain reference kernels (device_data.hpp).
template <class T>
std::vector<T> segmentSums(const std::vector<T>& in, size_t segment) {
  std::vector<T> r((in.size() + segment - 1) / segment);
  for (size_t s = 0; s < r.size(); ++s) {
    T acc = 0;
    for (size_t i = s * segment; i < std::min(in.size(), (s + 1) * segment); ++i) acc = acc + in[i];
    r[s] = acc;
  }
  return r;
}
// Sums in 64-bit integers (u32 modulo 2^32; the small-integer floats exact).
template <class T>
T sumOf(const std::vector<T>& in) {
  int64_t s = 0;
  for (T x : in) s += static_cast<int64_t>(x);
  return static_cast<T>(std::is_same_v<T, float> ? s : s & 0xffffffffll);
}

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

// One partial sum per chunk; the test-only family's reference is off by one in one element.
template <class T>
ArrayData<T> reduceData(const Params& p, bool corruptReference) {
  const size_t n = p.at("n").get<size_t>();
  const uint32_t chunk = u32(p, "chunk");
  if (n % chunk != 0) {
    throw Error("reduce: n (" + std::to_string(n) + ") must be a multiple of chunk (" +
                std::to_string(chunk) + ")");
  }
  ArrayData<T> d = smallInput<T>("small", n, n);
  d.referenceKey =
      "reduce:" + inputKey(d) + ":" + std::to_string(chunk) + (corruptReference ? ":corrupt" : "");
  d.outputSize = n / chunk;
  const auto corrupt = [corruptReference](std::vector<T> r) {
    if (corruptReference && !r.empty()) r[r.size() / 2] += 1;
    return r;
  };
  d.onHost = [chunk, corrupt](const std::vector<T>& in) { return corrupt(segmentSums(in, chunk)); };
  d.onGpu = [chunk, corrupt, corruptReference](const gpu::DeviceBuffer<T>& in) {
    gpu::DeviceBuffer<T> r = segmentSumsOnGpu(in, chunk);
    if (corruptReference) r.upload(corrupt(r.download()));
    return r;
  };
  d.plain = {plainSegmentFold<T>(false)};
  return d;
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
  f.instantiate = [testWrong](const Params& p, const Generated& g, DataCache& cache) {
    return byType(p, [&]<class T>() -> std::unique_ptr<Instance> {
      return std::make_unique<ArrayInstance<T>>(g.kernels.at(0), reduceData<T>(p, testWrong),
                                                cache);
    });
  };
  f.plainKernels = [testWrong](const Params& p) {
    return byType(p, [&]<class T>() { return arrayPlainKernels(reduceData<T>(p, testWrong)); });
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
  WholeReduceInstance(Kernel k, uint32_t chunk, ArrayData<T> data, DataCache& cache)
      : k_(std::move(k)), chunk_(chunk), d_(std::move(data)), cache_(cache) {
    for (size_t m = partialCount(d_.n, chunk_);; m = partialCount(m, chunk_)) {
      sizes_.push_back(m);
      if (m == 1) break;
    }
  }
  std::vector<obsidian::SimStats> simulate(const obsidian::SimOptions& o) override {
    const auto in = hostInput(cache_, d_);
    expected_ = *cache_.get<T>("host-ref:" + d_.referenceKey,
                               [&] { return std::make_shared<T>(sumOf(*in)); });
    std::vector<obsidian::SimStats> runs;
    std::vector<T> data = *in;
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
    dIn_ = deviceInput(cache, d_);
    expected_ = *cache.get<T>("device-ref:" + d_.referenceKey,
                              [&] { return std::make_shared<T>(sumOnGpu(dIn_->copies.at(0))); });
    for (size_t i = 0; i < sizes_.size(); ++i) {
      poison(*levels_.emplace_back(cache.output<T>("level" + std::to_string(i), sizes_[i])));
    }
  }
  size_t rotations() const override { return dIn_->copies.size(); }
  void launch(size_t run, const gpu::LaunchOptions& o) override {
    const gpu::DeviceBuffer<T>* current = &dIn_->copies[run % dIn_->copies.size()];
    for (const auto& level : levels_) {
      gpu::launch(k_, {*current, *level}, o);
      current = level.get();
    }
  }
  void download() override { got_ = levels_.back()->download().at(0); }
  std::string check() override {
    if (got_ == expected_) return "";
    std::ostringstream s;
    s << "sum = " << got_ << ", expected " << expected_;
    return s.str();
  }
  double bytesMoved() const override {
    size_t elements = d_.n;
    for (size_t m : sizes_) elements += 2 * m;  // written, then read by the next level
    return static_cast<double>((elements - 1) * sizeof(T));
  }

 private:
  Kernel k_;
  uint32_t chunk_;
  ArrayData<T> d_;
  DataCache& cache_;
  T expected_{};
  T got_{};
  std::vector<size_t> sizes_;
  std::shared_ptr<DeviceCopies<T>> dIn_;
  std::vector<std::shared_ptr<gpu::DeviceBuffer<T>>> levels_;
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

// The input; the reference is sumOnGpu's, checked on the host (one value).
template <class T>
ArrayData<T> wholeData(const Params& p) {
  ArrayData<T> d = smallInput<T>("whole", p.at("n").get<size_t>(), p.at("n").get<size_t>());
  d.referenceKey = "sum:" + inputKey(d);
  return d;
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
  f.instantiate = [](const Params& p, const Generated& g, DataCache& cache) {
    return byType(p, [&]<class T>() -> std::unique_ptr<Instance> {
      return std::make_unique<WholeReduceInstance<T>>(g.kernels.at(0), u32(p, "chunk"),
                                                      wholeData<T>(p), cache);
    });
  };
  f.plainKernels = [](const Params& p) {
    return byType(p, [&]<class T>() {
      return std::vector<PlainKernel>{plainRandom<T>(wholeData<T>(p).formula),
                                      plainSegmentFold<T>(false)};
    });
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

// The inclusive prefixes of every chunk; u32 inputs in 1..2^16, f32 small integers.
template <class T>
ArrayData<T> scanData(const Params& p) {
  const size_t n = p.at("n").get<size_t>();
  const uint32_t chunk = u32(p, "chunk");
  if (n % chunk != 0) {
    throw Error("scan: n (" + std::to_string(n) + ") must be a multiple of chunk (" +
                std::to_string(chunk) + ")");
  }
  ArrayData<T> d = smallInput<T>("scan", n, 2026);
  if constexpr (!std::is_same_v<T, float>) {
    d.formula = Random::Words;
    d.param = 1u << 16;
  }
  d.referenceKey = "scans:" + inputKey(d) + ":" + std::to_string(chunk);
  d.outputSize = n;
  d.onHost = [chunk](const std::vector<T>& in) {
    std::vector<T> r(in.size());
    for (size_t b = 0; b < in.size(); b += chunk) {
      T acc = 0;
      for (size_t i = b; i < std::min(in.size(), b + chunk); ++i) r[i] = acc = acc + in[i];
    }
    return r;
  };
  d.onGpu = [chunk](const gpu::DeviceBuffer<T>& in) { return segmentScansOnGpu(in, chunk); };
  d.plain = {plainSegmentFold<T>(true)};
  return d;
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
  f.instantiate = [](const Params& p, const Generated& g, DataCache& cache) {
    return byType(p, [&]<class T>() -> std::unique_ptr<Instance> {
      return std::make_unique<ArrayInstance<T>>(g.kernels.at(0), scanData<T>(p), cache);
    });
  };
  f.plainKernels = [](const Params& p) {
    return byType(p, [&]<class T>() { return arrayPlainKernels(scanData<T>(p)); });
  };
  f.variantLabel = [](const Params& p) { return str(p, "variant"); };
  f.naturalThreads = [](const Params& p) {
    const uint32_t chunk = u32(p, "chunk");
    return std::max(1u, chunk / elementsPerThread(scanVariantOf(p)));
  };
  return f;
}

// ------------------------------------------------------------------ mandelbrot (Figure 3)
// The reference is the CPU's emulation of the kernel's float operations (seconds for a 4096^2
// image) on the simulator, and its device twin (mandelbrotOnGpu, milliseconds) on the GPU, per
// size, compared there.
class MandelInstance : public Instance {
 public:
  MandelInstance(Kernel k, uint32_t width, uint32_t height)
      : k_(std::move(k)),
        width_(width),
        height_(height),
        key_("mandel:" + std::to_string(width) + "x" + std::to_string(height)),
        reference_([width, height] { return paper::mandelReference(width, height); }) {}
  std::vector<obsidian::SimStats> simulate(const obsidian::SimOptions& o) override {
    expected_ = std::make_shared<const std::vector<uint8_t>>(reference_());
    out_.resize(size_t{width_} * height_);  // (on the host only here: 16 MB a 4096^2 point)
    poison(out_);
    return {obsidian::simulate(k_, {height_, out_}, o)};
  }
  void prepareGpu(DataCache& cache) override {
    dExpected_ = cache.get<const DeviceReference<uint8_t>>("device-ref:" + key_, [&] {
      return std::make_shared<const DeviceReference<uint8_t>>(mandelbrotOnGpu(width_, height_));
    });
    dOut_ = cache.output<uint8_t>("image", size_t{width_} * height_);
    poison(*dOut_);
  }
  void launch(size_t, const gpu::LaunchOptions& o) override {
    gpu::launch(k_, {height_, *dOut_}, o);
  }
  void download() override { out_ = dOut_->download(); }
  std::string check() override { return firstDifference(out_, *expected_); }
  std::string checkGpu() override { return firstDifferenceOnGpu(*dOut_, *dExpected_); }
  double bytesMoved() const override { return static_cast<double>(size_t{width_} * height_); }

 private:
  Kernel k_;
  uint32_t width_, height_;
  std::string key_;
  std::function<std::vector<uint8_t>()> reference_;
  std::shared_ptr<const std::vector<uint8_t>> expected_;
  std::vector<uint8_t> out_;
  std::shared_ptr<const DeviceReference<uint8_t>> dExpected_;
  std::shared_ptr<gpu::DeviceBuffer<uint8_t>> dOut_;
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
  f.instantiate = [](const Params& p, const Generated& g, DataCache&) {
    return std::make_unique<MandelInstance>(g.kernels.at(0), u32(p, "size"), u32(p, "height"));
  };
  f.plainKernels = [](const Params&) {
    return std::vector<PlainKernel>{plainMandelbrot(), plainHash()};
  };
  f.variantLabel = [](const Params&) { return std::string("mandel"); };
  f.naturalThreads = [](const Params& p) { return u32(p, "size"); };  // one thread per pixel
  return f;
}

// ------------------------------------------------------------------ the device layer's algorithms
// The sweeps that choose the policy tables of obsidian/device/*.hpp: each point is one policy of
// a device algorithm on one input, its output checked against C++.
template <class T>
ArrayData<T> inputOf(const Params& p) {
  return smallInput<T>("device", p.at("n").get<size_t>(), p.at("n").get<size_t>());
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
ArrayData<T> deviceReduceData(const Params& p) {
  ArrayData<T> d = inputOf<T>(p);
  d.referenceKey = "sum:" + inputKey(d);
  d.outputSize = 1;
  d.onHost = [](const std::vector<T>& in) { return std::vector<T>{sumOf(in)}; };
  d.onGpu = [](const gpu::DeviceBuffer<T>& in) {
    return gpu::DeviceBuffer<T>(std::vector<T>{sumOnGpu(in)});
  };
  d.plain = {plainSegmentFold<T>(false)};
  return d;
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
  f.instantiate = [](const Params& p, const Generated& g, DataCache& cache) {
    return byType(p, [&]<class T>() -> std::unique_ptr<Instance> {
      return std::make_unique<ArrayInstance<T>>(g.kernels.at(0), deviceReduceData<T>(p), cache);
    });
  };
  f.plainKernels = [](const Params& p) {
    return byType(p, [&]<class T>() { return arrayPlainKernels(deviceReduceData<T>(p)); });
  };
  f.variantLabel = [](const Params& p) {
    return "unroll " + std::to_string(u32(p, "unroll")) + " " + str(p, "sweep");
  };
  return f;
}

template <class T>
ArrayData<T> segmentedData(const Params& p) {
  const uint32_t segment = u32(p, "segment");
  ArrayData<T> d = inputOf<T>(p);
  d.referenceKey = "sums:" + inputKey(d) + ":" + std::to_string(segment);
  d.outputSize = partialCount(d.n, segment);
  d.onHost = [segment](const std::vector<T>& in) { return segmentSums(in, segment); };
  d.onGpu = [segment](const gpu::DeviceBuffer<T>& in) { return segmentSumsOnGpu(in, segment); };
  d.plain = {plainSegmentFold<T>(false)};
  return d;
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
  f.instantiate = [](const Params& p, const Generated& g, DataCache& cache) {
    return byType(p, [&]<class T>() -> std::unique_ptr<Instance> {
      return std::make_unique<ArrayInstance<T>>(g.kernels.at(0), segmentedData<T>(p), cache);
    });
  };
  f.plainKernels = [](const Params& p) {
    return byType(p, [&]<class T>() { return arrayPlainKernels(segmentedData<T>(p)); });
  };
  f.variantLabel = [](const Params& p) { return "segment " + std::to_string(u32(p, "segment")); };
  return f;
}

template <class T>
ArrayData<T> deviceScanData(const Params& p) {
  const bool exclusive = str(p, "kind") == "exclusive";
  ArrayData<T> d = inputOf<T>(p);
  d.referenceKey = "scan:" + inputKey(d) + ":" + str(p, "kind");
  d.outputSize = d.n;
  d.onHost = [exclusive](const std::vector<T>& in) {
    std::vector<T> r(in.size());
    T acc = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      if (!exclusive) acc = acc + in[i];
      r[i] = acc;
      if (exclusive) acc = acc + in[i];
    }
    return r;
  };
  d.onGpu = [exclusive](const gpu::DeviceBuffer<T>& in) { return scanOnGpu(in, exclusive); };
  d.plain = plainScan<T>();
  return d;
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
  f.instantiate = [](const Params& p, const Generated& g, DataCache& cache) {
    return byType(p, [&]<class T>() -> std::unique_ptr<Instance> {
      return std::make_unique<ArrayInstance<T>>(g.kernels.at(0), deviceScanData<T>(p), cache);
    });
  };
  f.plainKernels = [](const Params& p) {
    return byType(p, [&]<class T>() { return arrayPlainKernels(deviceScanData<T>(p)); });
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
