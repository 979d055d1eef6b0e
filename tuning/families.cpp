// The registered kernel families: the paper's block reductions (reduce), the whole-array
// reduction of Figure 10 (reduce_whole), the Sklansky and Kogge-Stone block scans (scan), the
// Mandelbrot image (mandelbrot), the device layer's algorithms (the sweeps behind their policy
// tables, in device_families.cpp), the fused BLAS sequences (blas, in blas_family.cpp), and a
// test-only family whose reference is deliberately wrong. The reductions and scans are the
// library's (obsidian/block, obsidian/device); Mandelbrot is the example's program, which its
// example and this family share.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <obsidian/obsidian.hpp>
#include <sstream>

#include "../examples/mandelbrot/mandelbrot.hpp"
#include "array_family.hpp"
#include "array_instance.hpp"
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

}  // namespace

const std::vector<Family>& families() {
  static const std::vector<Family> all = [] {
    std::vector<Family> f = {reduceFamily(false), wholeFamily(), scanFamily(), mandelbrotFamily()};
    for (Family& d : deviceFamilies()) f.push_back(std::move(d));
    f.push_back(blasFamily());
    f.push_back(arrayFamily());
    f.push_back(reduceFamily(true));
    return f;
  }();
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
