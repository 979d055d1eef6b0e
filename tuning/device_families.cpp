// The device algorithms' kernel families (device_families.hpp), one per descriptor of
// obsidian/device/catalogue.hpp: a point's parameters are the descriptor's policy fields (named
// and ranged as its fields()) and the problem's. Each point runs the algorithm's kernel with the
// point's policy, on the simulator or the GPU, and checks it against a plain C++ reference (on
// the GPU: a plain kernel's, or the C++ one kept on disk; device_data.hpp). The inputs are random
// (splitmix64), made on the device and rotated there so that timed runs do not find them in L2.
#include "device_families.hpp"

#include <algorithm>
#include <obsidian/device/catalogue.hpp>
#include <sstream>

#include "array_instance.hpp"

namespace tuning {

namespace {

using namespace obsidian;
namespace gpu = obsidian::gpu;

// ------------------------------------------------------------------ policies as parameters
// The problem's parameters, then one per field of D's policy (its name, meaning and range; the
// default: the sm 90 row for the first problem class, the row the simulator stands for).
template <class D>
std::vector<ParamSpec> withPolicyParams(std::vector<ParamSpec> params) {
  const typename D::Policy def = tunedFor(D::table, kSimulatedSm).policy;
  const std::vector<device::PolicySetting> values = device::settingsOf<D>(def);
  const std::vector<device::FieldInfo> fields = device::policyFields<D>();
  for (size_t i = 0; i < fields.size(); ++i) {
    const device::FieldInfo& f = fields[i];
    if (f.boolean) {
      params.push_back(choiceParam(f.name, f.doc, {"false", "true"}, values[i].value));
    } else if (!f.choices.empty()) {
      params.push_back(choiceParam(f.name, f.doc, f.choices, values[i].value));
    } else {
      params.push_back(intParam(f.name, f.doc, f.min, f.max, std::stoll(values[i].value)));
    }
  }
  return params;
}
// The labels of a point's variant (Family::labelParams): `extra`, then every field of D's policy
// but threads (the family's threadsParam): the choices, not the problem.
template <class D>
std::vector<std::string> policyLabels(std::vector<std::string> extra = {}) {
  for (const device::FieldInfo& f : device::policyFields<D>())
    if (f.name != "threads") extra.push_back(f.name);
  return extra;
}
// D's policy of a point: every field from its parameter (checked against the field's range).
template <class D>
typename D::Policy policyOf(const Params& p) {
  std::vector<device::PolicySetting> settings;
  for (const device::FieldInfo& f : device::policyFields<D>()) {
    if (!p.contains(f.name)) continue;
    const nlohmann::json& v = p.at(f.name);
    settings.push_back({f.name, v.is_string() ? v.get<std::string>() : v.dump()});
  }
  return device::withSettings<D>(tunedFor(D::table, kSimulatedSm).policy, settings);
}

// ------------------------------------------------------------------ histogram
HistogramPolicy histogramPolicyOf(const Params& p) { return policyOf<device::HistogramEven>(p); }

// Samples of Random::Bits from the seed `bins` (u8, u32: uniform; f32 in [0, 1)), made on the
// device and shared; the counts (a few KB) kept on disk (storedReference) and compared on the
// host.
template <class S>
class HistogramInstance : public Instance {
 public:
  HistogramInstance(const Params& p, DataCache& cache)
      : bins_(u32(p, "bins")),
        policy_(histogramPolicyOf(p)),
        upper_(upperOf(p)),
        n_(p.at("n").get<size_t>()),
        key_("histogram:" + typeName<S>() + ":" + std::to_string(n_) + ":" + std::to_string(bins_) +
             ":" + std::to_string(upper_)),
        cache_(cache) {}
  HistogramLevel<S> upper() const { return upper_; }
  static HistogramLevel<S> upperOf(const Params& p) {
    const uint32_t upper = p.contains("upper") ? u32(p, "upper") : 0;
    if constexpr (std::is_same_v<S, float>) return 0.75f;
    if constexpr (std::is_same_v<S, uint8_t>) return upper ? upper : 200u;
    if constexpr (std::is_same_v<S, uint32_t>) return upper ? upper : 3000000000u;
  }
  std::vector<obsidian::SimStats> simulate(const obsidian::SimOptions& options) override {
    device::Options o = device::withPolicy<device::HistogramEven>(policy_);
    o.simulation = options;
    std::vector<obsidian::SimStats> runs(1);
    o.simulated = &runs[0];
    expected_ = reference();
    got_ = device::histogramEven<S>(*samples(), bins_, HistogramLevel<S>(0), upper(), o);
    return runs;
  }
  void prepareGpu(DataCache& cache) override {
    copies_ = cache.get<std::vector<gpu::DeviceBuffer<S>>>("device:" + key_, [&] {
      auto c = std::make_shared<std::vector<gpu::DeviceBuffer<S>>>();
      for (size_t i = 0; i < rotationsFor(n_ * sizeof(S)); ++i)
        randomOnGpu(c->emplace_back(n_), bins_, Random::Bits);
      return c;
    });
    expected_ = *cache.get<std::vector<uint32_t>>("ref:" + key_, [&] {
      return std::make_shared<std::vector<uint32_t>>(
          storedReference<uint32_t>(key_, [&] { return reference(); }));
    });
    counts_ = cache.output<uint32_t>("counts", bins_);
    poison(*counts_);
  }
  size_t rotations() const override { return copies_->size(); }
  void launch(size_t run, const gpu::LaunchOptions& options) override {
    device::Options o = device::withPolicy<device::HistogramEven>(policy_);
    o.stream = options.stream;
    o.synchronize = options.synchronize;
    device::histogramEven<S>((*copies_)[run % copies_->size()], *counts_, HistogramLevel<S>(0),
                             upper(), o);
  }
  void download() override { got_ = counts_->download(); }
  std::string check() override { return firstDifference(got_, expected_); }
  double bytesMoved() const override { return static_cast<double>(n_ * sizeof(S)); }

 private:
  std::shared_ptr<const std::vector<S>> samples() {
    return cache_.get<const std::vector<S>>("host:" + key_, [&] {
      return std::make_shared<const std::vector<S>>(randomOnHost<S>(n_, bins_, Random::Bits));
    });
  }
  std::vector<uint32_t> reference() {
    std::vector<uint32_t> counts(bins_, 0);
    for (S x : *samples()) {  // the levels of upper(): bins of a power-of-two width or not
      if constexpr (std::is_same_v<S, float>) {
        if (!(x < upper())) continue;
        const float scale = static_cast<float>(bins_) / upper();
        ++counts[static_cast<uint32_t>(std::min(x * scale, float(bins_ - 1)))];
      } else {
        if (x >= upper()) continue;
        ++counts[static_cast<uint32_t>(uint64_t{x} * bins_ / upper())];
      }
    }
    return counts;
  }

  uint32_t bins_;
  HistogramPolicy policy_;
  HistogramLevel<S> upper_;
  size_t n_;
  std::string key_;
  DataCache& cache_;  // the host samples of simulate()
  std::vector<uint32_t> expected_, got_;
  std::shared_ptr<std::vector<gpu::DeviceBuffer<S>>> copies_;
  std::shared_ptr<gpu::DeviceBuffer<uint32_t>> counts_;
};

// ------------------------------------------------------------------ transpose
// Elements of Random::Modulo 1000003 from the seed rows * 131 + cols, made on the device and
// shared with their transpose by a plain kernel (device_data.hpp); outputs compared there.
template <class X>
class TransposeInstance : public Instance {
 public:
  TransposeInstance(const Params& p, DataCache& cache)
      : rows_(u32(p, "rows")),
        cols_(u32(p, "cols")),
        policy_(policyOf<device::Transpose>(p)),
        key_("transpose:" + typeName<X>() + ":" + std::to_string(rows_) + "x" +
             std::to_string(cols_)),
        cache_(cache) {}
  std::vector<obsidian::SimStats> simulate(const obsidian::SimOptions& options) override {
    device::Options o = device::withPolicy<device::Transpose>(policy_);
    o.simulation = options;
    std::vector<obsidian::SimStats> runs(1);
    o.simulated = &runs[0];
    const std::vector<X> in = input();
    expected_.resize(in.size());
    for (size_t r = 0; r < rows_; ++r)
      for (size_t c = 0; c < cols_; ++c) expected_[c * rows_ + r] = in[r * cols_ + c];
    got_ = device::transpose<X>(in, rows_, cols_, o);
    return runs;
  }
  void prepareGpu(DataCache& cache) override {
    const size_t n = size_t{rows_} * cols_;
    data_ = cache.get<Shared>("device:" + key_, [&] {
      auto d = std::make_shared<Shared>();
      for (size_t i = 0; i < rotationsFor(n * sizeof(X) * 2); ++i) {
        randomOnGpu(d->copies.emplace_back(n), seed(), Random::Modulo, kModulus);
      }
      d->expected =
          std::make_unique<DeviceReference<X>>(transposeOnGpu(d->copies.at(0), rows_, cols_));
      return d;
    });
    for (size_t i = 0; i < data_->copies.size(); ++i) {
      poison(*outs_.emplace_back(cache.output<X>("out" + std::to_string(i), n)));
    }
  }
  size_t rotations() const override { return data_->copies.size(); }
  void launch(size_t run, const gpu::LaunchOptions& options) override {
    device::Options o = device::withPolicy<device::Transpose>(policy_);
    o.stream = options.stream;
    o.synchronize = options.synchronize;
    last_ = run % data_->copies.size();
    device::transpose<X>(data_->copies[last_], *outs_[last_], rows_, cols_, o);
  }
  void download() override { got_ = outs_[last_]->download(); }
  std::string check() override { return firstDifference(got_, expected_); }
  std::string checkGpu() override { return firstDifferenceOnGpu(*outs_[last_], *data_->expected); }
  double bytesMoved() const override {
    return static_cast<double>(size_t{rows_} * cols_ * sizeof(X) * 2);
  }

 private:
  static constexpr uint64_t kModulus = 1000003;
  struct Shared {
    std::vector<gpu::DeviceBuffer<X>> copies;  // rotated inputs
    std::unique_ptr<DeviceReference<X>> expected;
  };
  uint64_t seed() const { return uint64_t{rows_} * 131 + cols_; }
  std::vector<X> input() {
    return *cache_.get<const std::vector<X>>("host:" + key_, [&] {
      return std::make_shared<const std::vector<X>>(
          randomOnHost<X>(size_t{rows_} * cols_, seed(), Random::Modulo, kModulus));
    });
  }

  uint32_t rows_, cols_;
  TransposePolicy policy_;
  std::string key_;
  DataCache& cache_;
  std::vector<X> expected_, got_;
  std::shared_ptr<Shared> data_;
  std::vector<std::shared_ptr<gpu::DeviceBuffer<X>>> outs_;  // one per rotated input
  size_t last_ = 0;
};

Family histogramFamily() {
  Family f;
  f.name = "histogram";
  f.description =
      "histogramEven (include/obsidian/device/histogram.hpp): even bins of u8, u32 or f32 "
      "samples, over HistogramPolicy (threads, 16-byte vectors in flight, shared copies)";
  f.params = {
      choiceParam("type", "sample type", {"u8", "u32", "f32"}, "u8"),
      intParam("n", "samples (capped on the simulator)", 1, int64_t{1} << 31, int64_t{1} << 26),
      intParam("bins", "bins", 1, 58112, 256),
      intParam("upper", "the upper level (integer samples; 0: 200 for u8, 3e9 for u32)", 0,
               UINT32_MAX, 0)};
  f.params = withPolicyParams<device::HistogramEven>(f.params);
  f.labelParams = policyLabels<device::HistogramEven>();
  f.sizeParam = "n";
  f.canonical = [](Params p, bool simulate) {
    if (simulate) p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 20011);
    return p;
  };
  f.build = [](const Params& p) {
    const uint32_t bins = u32(p, "bins");
    const HistogramPolicy policy = histogramPolicyOf(p);
    const std::string t = str(p, "type");
    const uint32_t upper = u32(p, "upper");
    return std::vector<Kernel>{
        t == "u8"    ? histogramKernelFor<uint8_t>(bins, 0, upper ? upper : 200, policy)
        : t == "u32" ? histogramKernelFor<uint32_t>(bins, 0, upper ? upper : 3000000000u, policy)
                     : histogramKernelFor<float>(bins, 0.0f, 0.75f, policy)};
  };
  f.instantiate = [](const Params& p, const Generated&,
                     DataCache& cache) -> std::unique_ptr<Instance> {
    const std::string t = str(p, "type");
    if (t == "u8") return std::make_unique<HistogramInstance<uint8_t>>(p, cache);
    if (t == "u32") return std::make_unique<HistogramInstance<uint32_t>>(p, cache);
    return std::make_unique<HistogramInstance<float>>(p, cache);
  };
  f.plainKernels = [](const Params& p) {  // (the counts are compared on the host)
    const std::string t = str(p, "type");
    return std::vector<PlainKernel>{t == "u8"    ? plainRandom<uint8_t>(Random::Bits)
                                    : t == "u32" ? plainRandom<uint32_t>(Random::Bits)
                                                 : plainRandom<float>(Random::Bits)};
  };
  f.variantLabel = [](const Params& p) {
    return "v" + std::to_string(u32(p, "vectors")) + "/c" + std::to_string(u32(p, "copies"));
  };
  return f;
}

Family transposeFamily() {
  Family f;
  f.name = "transpose";
  f.description =
      "transpose (include/obsidian/device/transpose.hpp): a row-major rows x cols matrix, over "
      "TransposePolicy (threads, the tile's side)";
  f.params = {choiceParam("type", "element type", {"u32", "f32"}, "u32"),
              intParam("rows", "rows (capped on the simulator)", 1, 1 << 20, 8192),
              intParam("cols", "columns (capped on the simulator)", 1, 1 << 20, 8192)};
  f.params = withPolicyParams<device::Transpose>(f.params);
  f.labelParams = policyLabels<device::Transpose>();
  f.sizeParam = "rows";
  f.canonical = [](Params p, bool simulate) {
    if (simulate) {
      p["rows"] = std::min<uint32_t>(u32(p, "rows"), 300);
      p["cols"] = std::min<uint32_t>(u32(p, "cols"), 200);
    }
    return p;
  };
  f.build = [](const Params& p) {
    const TransposePolicy policy = policyOf<device::Transpose>(p);
    return std::vector<Kernel>{str(p, "type") == "f32" ? transposeKernel<float>(policy)
                                                       : transposeKernel<uint32_t>(policy)};
  };
  f.instantiate = [](const Params& p, const Generated&,
                     DataCache& cache) -> std::unique_ptr<Instance> {
    if (str(p, "type") == "f32") return std::make_unique<TransposeInstance<float>>(p, cache);
    return std::make_unique<TransposeInstance<uint32_t>>(p, cache);
  };
  f.plainKernels = [](const Params& p) {
    return byType(p, []<class X>() {
      return std::vector<PlainKernel>{plainRandom<X>(Random::Modulo), plainTranspose<X>(),
                                      plainHash()};
    });
  };
  f.variantLabel = [](const Params& p) { return "tile" + std::to_string(u32(p, "tile")); };
  f.naturalThreads = [](const Params& p) {
    return std::min(1024u, u32(p, "tile") * u32(p, "tile") / 4);
  };
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
      "the sweep behind device::Reduce::table";
  f.params = withPolicyParams<device::Reduce>(
      {typeParam(), intParam("n", "input elements (capped on the simulator)", 1, int64_t{1} << 31,
                             int64_t{1} << 28)});
  f.labelParams = policyLabels<device::Reduce>();
  f.sizeParam = "n";
  f.canonical = [](Params p, bool simulate) {
    if (simulate) p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 20000);
    return p;
  };
  f.build = [](const Params& p) {
    const ReducePolicy policy = policyOf<device::Reduce>(p);
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
      "sum per segment, one block each; the sweep behind device::SegmentedReduce::table";
  f.params = withPolicyParams<device::SegmentedReduce>(
      {typeParam(),
       intParam("n", "input elements (capped on the simulator)", 1, int64_t{1} << 31,
                int64_t{1} << 28),
       intParam("segment", "elements per segment", 1, 1 << 24, 4096)});
  f.labelParams = policyLabels<device::SegmentedReduce>({"segment"});
  f.sizeParam = "n";
  f.canonical = [](Params p, bool simulate) {
    if (simulate) {
      p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 3ull * u32(p, "segment") + 7);
    }
    return p;
  };
  f.build = [](const Params& p) {
    const SegmentedReducePolicy policy = policyOf<device::SegmentedReduce>(p);
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
      "obsidian/device/scan.hpp) by policy: the sweep behind device::Scan::table";
  f.params = withPolicyParams<device::Scan>(
      {typeParam(),
       choiceParam("kind", "inclusive or exclusive", {"inclusive", "exclusive"}, "inclusive"),
       intParam("n", "input elements (capped on the simulator)", 1, int64_t{1} << 31,
                int64_t{1} << 28)});
  f.labelParams = policyLabels<device::Scan>();
  f.sizeParam = "n";
  f.canonical = [](Params p, bool simulate) {
    if (simulate) p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 20000);
    return p;
  };
  f.build = [](const Params& p) {
    const ScanPolicy policy = policyOf<device::Scan>(p);
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

// ------------------------------------------------------------------ sorts
// The sort families' points: keys of Random::Bits from the seed n (u32: uniform words; f32:
// [0, 1)), made on the device and rotated; the sorted keys (a host sort, kept on disk) compared
// on the host. Sort supplies what the families differ in: the descriptor and temp, the cache keys,
// the call (sort(): host vectors or device buffers), the host sort and the traffic.
template <class K, class Sort>
class SortInstance : public Instance {
 public:
  using D = typename Sort::Descriptor;
  SortInstance(const Params& p, DataCache& cache)
      : policy_(policyOf<D>(p)),
        n_(p.at("n").get<size_t>()),
        sort_(p, cache),
        keysKey_(sort_.keysKey(typeName<K>(), n_)),
        key_(sort_.referenceKey(keysKey_)),
        cache_(cache) {}
  std::vector<obsidian::SimStats> simulate(const obsidian::SimOptions& options) override {
    device::Options o = device::withPolicy<D>(policy_);
    o.simulation = options;
    std::vector<obsidian::SimStats> runs(1);
    o.simulated = &runs[0];  // the last launch's
    expected_ = reference();
    sort_.sort(*keys(), got_, o, nullptr);
    return runs;
  }
  void prepareGpu(DataCache& cache) override {
    copies_ = cache.get<std::vector<gpu::DeviceBuffer<K>>>("device:" + keysKey_, [&] {
      auto c = std::make_shared<std::vector<gpu::DeviceBuffer<K>>>();
      for (size_t i = 0; i < rotationsFor(n_ * sizeof(K) * 2); ++i)
        randomOnGpu(c->emplace_back(n_), n_, Random::Bits);
      return c;
    });
    sort_.prepareGpu(cache);
    expected_ = *cache.get<std::vector<K>>("ref:" + key_, [&] {
      return std::make_shared<std::vector<K>>(
          storedReference<K>(key_, [&] { return reference(); }));
    });
    out_ = cache.output<K>("sorted", n_);
    poison(*out_);
  }
  size_t rotations() const override { return copies_->size(); }
  void launch(size_t run, const gpu::LaunchOptions& options) override {
    device::Options o = device::withPolicy<D>(policy_);
    o.stream = options.stream;
    o.synchronize = options.synchronize;
    sort_.sort((*copies_)[run % copies_->size()], *out_, o, &temp_);
  }
  void download() override { got_ = out_->download(); }
  std::string check() override { return firstDifference(got_, expected_); }
  double bytesMoved() const override { return sort_.bytesMoved(policy_, n_, sizeof(K)); }

 private:
  std::shared_ptr<const std::vector<K>> keys() {
    return cache_.get<const std::vector<K>>("host:" + keysKey_, [&] {
      return std::make_shared<const std::vector<K>>(randomOnHost<K>(n_, n_, Random::Bits));
    });
  }
  std::vector<K> reference() {
    std::vector<K> sorted = *keys();
    sort_.sortOnHost(sorted);
    return sorted;
  }

  typename D::Policy policy_;
  size_t n_;
  Sort sort_;
  std::string keysKey_, key_;  // the keys' (host and device) and the reference's
  DataCache& cache_;           // the host keys of simulate()
  std::vector<K> expected_, got_;
  std::shared_ptr<std::vector<gpu::DeviceBuffer<K>>> copies_;
  std::shared_ptr<gpu::DeviceBuffer<K>> out_;
  typename Sort::Temp temp_;
};

// A Sort of the whole input: the reference shares the keys' cache key; nothing else to upload.
struct WholeSort {
  WholeSort(const Params&, DataCache&) {}
  static std::string referenceKey(const std::string& keysKey) { return keysKey; }
  static void prepareGpu(DataCache&) {}
};

// ------------------------------------------------------------------ radix sort
// Every bit, ascending (u32 words, f32 in [0, 1): the floats' `<`).
struct RadixSorting : WholeSort {
  using Descriptor = device::RadixSort;
  using Temp = device::RadixSortTemp;
  using WholeSort::WholeSort;
  static std::string keysKey(const std::string& type, size_t n) {
    return "radixSort:" + type + ":" + std::to_string(n);
  }
  template <class In, class Out>
  static void sort(const In& in, Out& out, const device::Options& o, Temp* temp) {
    device::radixSortKeys(in, out, {}, o, temp);
  }
  template <class K>
  static void sortOnHost(std::vector<K>& keys) {
    std::stable_sort(keys.begin(), keys.end());
  }
  static double bytesMoved(const RadixSortPolicy& policy, size_t n, size_t keyBytes) {
    // each pass reads and writes every key
    const uint32_t passes = (8 * keyBytes + policy.radixBits - 1) / policy.radixBits;
    return static_cast<double>(n * keyBytes * 2 * passes);
  }
};
template <class K>
using RadixSortInstance = SortInstance<K, RadixSorting>;

Family radixSortFamily() {
  Family f;
  f.name = "radix_sort";
  f.description =
      "radixSortKeys (include/obsidian/device/radix_sort.hpp): keys sorted by every bit, over "
      "RadixSortPolicy (the sorting pass's tile, the digit, the histogram's loads, the matching, "
      "early counts); the sweep behind device::RadixSort::table";
  f.params = withPolicyParams<device::RadixSort>(
      {choiceParam("type", "key type", {"u32", "f32"}, "u32"),
       intParam("n", "keys (capped on the simulator)", 1, int64_t{1} << 31, int64_t{1} << 24)});
  f.labelParams = policyLabels<device::RadixSort>();
  f.sizeParam = "n";
  f.canonical = [](Params p, bool simulate) {
    if (simulate) p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 20011);
    return p;
  };
  f.build = [](const Params& p) {
    const RadixSortPolicy policy = policyOf<device::RadixSort>(p);
    const auto kernels = [&]<class K>() {
      const uint32_t passes = (8 * sizeof(K) + policy.radixBits - 1) / policy.radixBits;
      return std::vector<Kernel>{radixHistogramKernel<K>(policy, 0, 8 * sizeof(K), false),
                                 radixStartsKernel(policy, passes),
                                 radixPassKernel<K, void>(policy, passes, false)};
    };
    return str(p, "type") == "f32" ? kernels.template operator()<float>()
                                   : kernels.template operator()<uint32_t>();
  };
  f.instantiate = [](const Params& p, const Generated&,
                     DataCache& cache) -> std::unique_ptr<Instance> {
    if (str(p, "type") == "f32") return std::make_unique<RadixSortInstance<float>>(p, cache);
    return std::make_unique<RadixSortInstance<uint32_t>>(p, cache);
  };
  f.plainKernels = [](const Params& p) {
    return std::vector<PlainKernel>{str(p, "type") == "f32" ? plainRandom<float>(Random::Bits)
                                                            : plainRandom<uint32_t>(Random::Bits)};
  };
  f.variantLabel = [](const Params& p) {
    return "x" + std::to_string(u32(p, "items")) +
           (str(p, "early_counts") == "true" ? " early" : "") +
           (u32(p, "match_every") == 0 ? "" : " m" + std::to_string(u32(p, "match_every")));
  };
  return f;
}

// ------------------------------------------------------------------ merge sort
// Stably by Less (u32: Ascending; f32: Descending).
template <class Less>
struct MergeSorting : WholeSort {
  using Descriptor = device::MergeSort;
  using Temp = device::MergeSortTemp;
  using WholeSort::WholeSort;
  static constexpr bool descending = std::is_same_v<Less, Descending>;
  static std::string keysKey(const std::string& type, size_t n) {
    return "mergeSort:" + type + ":" + (descending ? "descending" : "ascending") + ":" +
           std::to_string(n);
  }
  template <class In, class Out>
  static void sort(const In& in, Out& out, const device::Options& o, Temp* temp) {
    device::mergeSortKeys(in, out, Less{}, o, temp);
  }
  template <class K>
  static void sortOnHost(std::vector<K>& keys) {
    std::stable_sort(keys.begin(), keys.end(), [](K a, K b) {  // Less on the host
      return descending ? b < a : a < b;
    });
  }
  static double bytesMoved(const MergeSortPolicy& policy, size_t n, size_t keyBytes) {
    // the tile sort and each merge pass read and write
    const uint32_t passes = device::detail::mergePasses(n, policy.threads * policy.items);
    return static_cast<double>(n * keyBytes * 2 * (1 + passes));
  }
};
template <class K, class Less>
using MergeSortInstance = SortInstance<K, MergeSorting<Less>>;

Family mergeSortFamily() {
  Family f;
  f.name = "merge_sort";
  f.description =
      "mergeSortKeys (include/obsidian/device/merge_sort.hpp): keys sorted stably by a "
      "comparator (u32 Ascending, f32 Descending), over MergeSortPolicy (threads x items a "
      "tile, blocks per SM); the sweep behind device::MergeSort::table";
  f.params = withPolicyParams<device::MergeSort>(
      {choiceParam("type", "key type and order (u32: Ascending, f32: Descending)", {"u32", "f32"},
                   "u32"),
       intParam("n", "keys (capped on the simulator)", 1, int64_t{1} << 31, int64_t{1} << 24)});
  f.labelParams = policyLabels<device::MergeSort>();
  f.sizeParam = "n";
  f.canonical = [](Params p, bool simulate) {  // (the simulator: a few thousand keys)
    if (simulate) p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 5003);
    return p;
  };
  f.build = [](const Params& p) {
    const MergeSortPolicy policy = policyOf<device::MergeSort>(p);
    const auto kernels = [&]<class K, class Less>() {
      return std::vector<Kernel>{mergeSortTilesKernel<K, void>(policy, Less{}),
                                 mergePartitionsKernel<K>(policy, Less{}, false),
                                 mergePartitionsKernel<K>(policy, Less{}, true),
                                 mergeTilesKernel<K, void>(policy, Less{})};
    };
    return str(p, "type") == "f32" ? kernels.template operator()<float, Descending>()
                                   : kernels.template operator()<uint32_t, Ascending>();
  };
  f.instantiate = [](const Params& p, const Generated&,
                     DataCache& cache) -> std::unique_ptr<Instance> {
    if (str(p, "type") == "f32") {
      return std::make_unique<MergeSortInstance<float, Descending>>(p, cache);
    }
    return std::make_unique<MergeSortInstance<uint32_t, Ascending>>(p, cache);
  };
  f.plainKernels = [](const Params& p) {
    return std::vector<PlainKernel>{str(p, "type") == "f32" ? plainRandom<float>(Random::Bits)
                                                            : plainRandom<uint32_t>(Random::Bits)};
  };
  f.variantLabel = [](const Params& p) {
    return "x" + std::to_string(u32(p, "items")) +
           (u32(p, "blocks") == 0 ? "" : " b" + std::to_string(u32(p, "blocks")));
  };
  return f;
}

// ------------------------------------------------------------------ segmented sort
// Segments of `segment` keys (offsets s * segment, the last one shorter: uploaded once per
// problem), each sorted ascending by all the bits (the f32 keys: no NaN and no -0); the
// reference a host stable sort of each segment.
struct SegmentedSorting {
  using Descriptor = device::SegmentedSort;
  using Temp = device::SegmentedSortTemp;
  SegmentedSorting(const Params& p, DataCache& cache)
      : n_(p.at("n").get<size_t>()),
        segment_(p.at("segment").get<size_t>()),
        offsetsKey_("segmentedSort:offsets:" + std::to_string(n_) + ":" + std::to_string(segment_)),
        cache_(cache) {}
  static std::string keysKey(const std::string& type, size_t n) {
    return "segmentedSort:" + type + ":" + std::to_string(n);
  }
  std::string referenceKey(const std::string& keysKey) const {
    return keysKey + ":" + std::to_string(segment_);
  }
  void prepareGpu(DataCache& cache) {
    offsetsOnGpu_ = cache.get<const gpu::DeviceBuffer<uint32_t>>("device:" + offsetsKey_, [&] {
      return std::make_shared<const gpu::DeviceBuffer<uint32_t>>(*offsets());
    });
  }
  template <class K>
  void sort(const std::vector<K>& in, std::vector<K>& out, const device::Options& o, Temp* temp) {
    device::segmentedSortKeys(in, out, *offsets(), {}, o, temp);
  }
  template <class K>
  void sort(const gpu::DeviceBuffer<K>& in, gpu::DeviceBuffer<K>& out, const device::Options& o,
            Temp* temp) {
    device::segmentedSortKeys(in, out, *offsetsOnGpu_, {}, o, temp);
  }
  template <class K>
  void sortOnHost(std::vector<K>& keys) {
    const std::vector<uint32_t>& o = *offsets();
    // The radix order (RadixKey): u32 by value; the f32 keys are finite, non-negative and
    // never -0, where it is the floats' `<` (and equal keys have equal bits).
    for (size_t s = 0; s + 1 < o.size(); ++s)
      std::stable_sort(keys.begin() + o[s], keys.begin() + o[s + 1]);
  }
  static double bytesMoved(const SegmentedSortPolicy&, size_t n, size_t keyBytes) {
    return static_cast<double>(n * keyBytes * 2);  // each key read and written once
  }

 private:
  // Segment s is [s * segment, min((s + 1) * segment, n)).
  std::shared_ptr<const std::vector<uint32_t>> offsets() {
    return cache_.get<const std::vector<uint32_t>>("host:" + offsetsKey_, [&] {
      const size_t segments = (n_ + segment_ - 1) / segment_;
      auto o = std::make_shared<std::vector<uint32_t>>(segments + 1);
      for (size_t s = 0; s <= segments; ++s)
        (*o)[s] = static_cast<uint32_t>(std::min(s * segment_, n_));
      return std::shared_ptr<const std::vector<uint32_t>>(std::move(o));
    });
  }

  size_t n_, segment_;
  std::string offsetsKey_;
  DataCache& cache_;  // the host offsets of simulate()
  std::shared_ptr<const gpu::DeviceBuffer<uint32_t>> offsetsOnGpu_;
};
template <class K>
using SegmentedSortInstance = SortInstance<K, SegmentedSorting>;

Family segmentedSortFamily() {
  Family f;
  f.name = "segmented_sort";
  f.description =
      "segmentedSortKeys (include/obsidian/device/segmented_sort.hpp): segments of `segment` "
      "keys each sorted on its own by every bit, ascending, a block a segment, over "
      "SegmentedSortPolicy (threads x items a tile, the digit, blocks per SM); the sweep behind "
      "device::SegmentedSort::table";
  f.params = withPolicyParams<device::SegmentedSort>(
      {choiceParam("type", "key type", {"u32", "f32"}, "u32"),
       intParam("n", "keys in all (capped on the simulator)", 1, int64_t{1} << 31,
                int64_t{1} << 24),
       intParam("segment", "keys per segment (the last one shorter; at most n)", 1,
                int64_t{1} << 31, 1024)});
  f.labelParams = policyLabels<device::SegmentedSort>();
  f.sizeParam = "n";
  f.canonical = [](Params p, bool simulate) {  // (the simulator: a few thousand keys)
    if (simulate) p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 5003);
    p["segment"] = std::min(p.at("segment").get<uint64_t>(), p.at("n").get<uint64_t>());
    return p;
  };
  f.build = [](const Params& p) {
    const SegmentedSortPolicy policy = policyOf<device::SegmentedSort>(p);
    const auto kernels = [&]<class K>() {  // keys only, every bit, ascending
      return std::vector<Kernel>{segmentedSortKernel<K, void>(policy, 0, RadixKey<K>::bits, false)};
    };
    return str(p, "type") == "f32" ? kernels.template operator()<float>()
                                   : kernels.template operator()<uint32_t>();
  };
  f.instantiate = [](const Params& p, const Generated&,
                     DataCache& cache) -> std::unique_ptr<Instance> {
    if (str(p, "type") == "f32") return std::make_unique<SegmentedSortInstance<float>>(p, cache);
    return std::make_unique<SegmentedSortInstance<uint32_t>>(p, cache);
  };
  f.plainKernels = [](const Params& p) {
    return std::vector<PlainKernel>{str(p, "type") == "f32" ? plainRandom<float>(Random::Bits)
                                                            : plainRandom<uint32_t>(Random::Bits)};
  };
  f.variantLabel = [](const Params& p) {
    return "x" + std::to_string(u32(p, "items")) +
           (u32(p, "radix_bits") == 8 ? "" : " r" + std::to_string(u32(p, "radix_bits"))) +
           (u32(p, "blocks") == 0 ? "" : " b" + std::to_string(u32(p, "blocks")));
  };
  return f;
}

// ------------------------------------------------------------------ selections and runs
// Keys in runs of 4 on average: element i opens a new run where splitmix64(seed + i) % 4 == 0,
// and a new run's key differs from the last.
std::vector<uint32_t> runKeys(size_t n, uint64_t seed) {
  const std::vector<uint32_t> r = randomOnHost<uint32_t>(n, seed, Random::Bits);
  std::vector<uint32_t> keys(n);
  uint32_t key = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i % 4096 == 0 || r[i] % 4 == 0) key += 1 + (r[i] >> 2) % 1000;
    keys[i] = key;
  }
  return keys;
}

// The predicates of the select family's points: a quarter and a half of Random::Bits.
struct BelowQuarter {
  template <class T>
  Exp<bool> operator()(const Exp<T>& v) const {
    if constexpr (std::is_same_v<T, float>) {
      return v < 0.25f;
    } else {
      return v < (1u << 30);
    }
  }
};
struct BelowHalf {
  template <class T>
  Exp<bool> operator()(const Exp<T>& v) const {
    if constexpr (std::is_same_v<T, float>) {
      return v < 0.5f;
    } else {
      return v < (1u << 31);
    }
  }
};

// A point of the select or reduce_by_key family: its call ("op") on host-made inputs uploaded
// in rotated copies, checked on the host against a plain C++ reference. The outputs: a (T: the
// selected elements, the first part, the unique keys), b (T: the second part, the folds or the
// scan), c (T: the others), lengths (u32, runLengthEncode) and counts (u32).
template <class D, class T>
class SelectionInstance : public Instance {
 public:
  SelectionInstance(const Params& p, DataCache& cache)
      : policy_(policyOf<D>(p)), op_(str(p, "op")), n_(p.at("n").get<size_t>()), cache_(cache) {}
  std::vector<obsidian::SimStats> simulate(const obsidian::SimOptions& options) override {
    device::Options o = device::withPolicy<D>(policy_);
    o.simulation = options;
    std::vector<obsidian::SimStats> runs(1);
    o.simulated = &runs[0];
    const Inputs& in = *inputs();
    call(in.keys, in.values, got_.a, got_.b, got_.c, got_.lengths, got_.counts, o);
    return runs;
  }
  void prepareGpu(DataCache& cache) override {
    const std::shared_ptr<const Inputs> in = inputs();
    copies_ = cache.get<std::vector<Uploaded>>("device:" + key(), [&] {
      auto c = std::make_shared<std::vector<Uploaded>>();
      for (size_t i = 0; i < rotationsFor(n_ * sizeof(T) * 2); ++i)
        c->push_back({gpu::DeviceBuffer<T>(in->keys), gpu::DeviceBuffer<T>(in->values)});
      return c;
    });
    a_ = cache.output<T>("a", n_);
    b_ = cache.output<T>("b", n_);
    c_ = cache.output<T>("c", n_);
    lengths_ = cache.output<uint32_t>("lengths", n_);
    counts_ = cache.output<uint32_t>("counts", 2);
    for (auto* buffer : {a_.get(), b_.get(), c_.get()}) poison(*buffer);
    poison(*lengths_);
    poison(*counts_);
  }
  size_t rotations() const override { return copies_->size(); }
  void launch(size_t run, const gpu::LaunchOptions& options) override {
    device::Options o = device::withPolicy<D>(policy_);
    o.stream = options.stream;
    o.synchronize = options.synchronize;
    const Uploaded& in = (*copies_)[run % copies_->size()];
    call(in.keys, in.values, *a_, *b_, *c_, *lengths_, *counts_, o);
  }
  void download() override {
    got_ = {a_->download(), b_->download(), c_->download(), lengths_->download(),
            counts_->download()};
  }
  std::string check() override {
    const Outputs want = reference(*inputs());
    const uint32_t count = got_.counts.empty() ? 0 : got_.counts[0];
    const auto prefix = [](auto v, size_t k) {
      v.resize(std::min(k, v.size()));
      return v;
    };
    if (got_.counts.empty() || count != want.counts[0]) {
      return "count " + std::to_string(count) + ", expected " + std::to_string(want.counts[0]);
    }
    std::string d;
    if (op_ == "scan") return firstDifference(got_.b, want.b);
    if (op_ == "partition") return firstDifference(got_.a, want.a);
    if (!(d = firstDifference(prefix(got_.a, count), want.a)).empty()) return d;
    if (op_ == "three_way") {
      if (got_.counts[1] != want.counts[1]) return "second count differs";
      const size_t second = want.b.size(), others = want.c.size();
      if (!(d = firstDifference(prefix(got_.b, second), want.b)).empty()) return d;
      return firstDifference(prefix(got_.c, others), want.c);
    }
    if (op_ == "reduce") return firstDifference(prefix(got_.b, count), want.b);
    if (op_ == "rle") return firstDifference(prefix(got_.lengths, count), want.lengths);
    return "";
  }
  // The kernels the point's call launches (the ones its ready call makes and keeps).
  static std::vector<Kernel> kernels(const Params& p, const device::Target& t) {
    const ScanPolicy policy = policyOf<D>(p);
    const std::string op = str(p, "op");
    if (op == "if" || op == "partition") {
      return {device::Select::ifKernel<T>(t, policy, BelowHalf{}, op == "partition")};
    }
    if (op == "unique") return {device::Select::uniqueKernel<T>(t, policy)};
    if (op == "three_way") {
      return {device::Select::threeWayKernel<T>(t, policy, BelowQuarter{}, BelowHalf{})};
    }
    if (op == "reduce") return {device::ReduceByKey::reduceKernel<T, T>(t, policy, Sum{})};
    if (op == "rle") return {device::ReduceByKey::encodeKernel<T>(t, policy)};
    return {device::ReduceByKey::scanKernel<T, T>(t, policy, Sum{}, ScanKind::Inclusive, T{})};
  }
  double bytesMoved() const override {  // the input read once; about half of it written
    const bool pairs = op_ == "reduce" || op_ == "scan";
    return static_cast<double>(n_ * sizeof(T) * (pairs ? 3 : 2));
  }

 private:
  struct Inputs {
    std::vector<T> keys, values;
  };
  struct Uploaded {
    gpu::DeviceBuffer<T> keys, values;
  };
  struct Outputs {
    std::vector<T> a, b, c;
    std::vector<uint32_t> lengths, counts;
  };
  std::string key() const {
    return "selection:" + typeName<T>() + ":" + op_ + ":" + std::to_string(n_);
  }
  std::shared_ptr<const Inputs> inputs() {
    return cache_.get<const Inputs>("host:" + key(), [&] {
      auto in = std::make_shared<Inputs>();
      const std::vector<uint32_t> runs = runKeys(n_, n_);
      const bool byRuns = op_ != "if" && op_ != "partition" && op_ != "three_way";
      in->keys =
          byRuns ? std::vector<T>(runs.begin(), runs.end()) : randomOnHost<T>(n_, n_, Random::Bits);
      in->values = randomOnHost<T>(n_, n_ + 1, Random::SmallInts);  // exact sums in any order
      return in;
    });
  }
  static bool below(T v, int part) {  // the predicates: half of the keys, then a quarter
    if constexpr (std::is_same_v<T, float>) return v < (part == 0 ? 0.25f : 0.5f);
    return v < (part == 0 ? 1u << 30 : 1u << 31);
  }
  // The op on host vectors (the simulator) or device buffers (the GPU).
  template <class In, class Out, class Lengths>
  void call(const In& keys, const In& values, Out& a, Out& b, Out& c, Lengths& lengths,
            Lengths& counts, const device::Options& o) {
    const BelowQuarter quarter;
    const BelowHalf half;
    if (op_ == "if") device::selectIf(keys, a, counts, half, o);
    if (op_ == "unique") device::selectUnique(keys, a, counts, o);
    if (op_ == "partition") device::partitionIf(keys, a, counts, half, o);
    if (op_ == "three_way") device::partitionThreeWay(keys, a, b, c, counts, quarter, half, o);
    if (op_ == "reduce") device::reduceByKey(keys, values, a, b, counts, Sum{}, o);
    if (op_ == "rle") device::runLengthEncode(keys, a, lengths, counts, o);
    if (op_ == "scan") {
      device::inclusiveScanByKey(keys, values, b, Sum{}, o);
      if constexpr (std::is_same_v<Lengths, std::vector<uint32_t>>) {
        counts.assign(1, 0);
      } else {
        counts.fill(0u);
      }
    }
  }
  Outputs reference(const Inputs& in) const {
    Outputs r;
    const std::vector<T>& k = in.keys;
    const size_t n = k.size();
    r.counts = {0, 0};
    if (op_ == "if" || op_ == "partition" || op_ == "three_way") {
      std::vector<T> rejected;
      for (T v : k) {
        if (op_ == "three_way") {
          (below(v, 0) ? r.a : below(v, 1) ? r.b : r.c).push_back(v);
        } else {
          (below(v, 1) ? r.a : rejected).push_back(v);
        }
      }
      r.counts = {static_cast<uint32_t>(r.a.size()), static_cast<uint32_t>(r.b.size())};
      if (op_ == "partition") r.a.insert(r.a.end(), rejected.rbegin(), rejected.rend());
      return r;
    }
    T acc{};
    for (size_t i = 0; i < n; ++i) {
      const bool head = i == 0 || k[i] != k[i - 1];
      if (head) {
        r.a.push_back(k[i]);
        r.b.push_back(T{});
        r.lengths.push_back(0);
        acc = T{};
      }
      acc = acc + in.values[i];
      r.b.back() += in.values[i];
      r.lengths.back() += 1;
      if (op_ == "scan") r.c.push_back(acc);
    }
    r.counts[0] = static_cast<uint32_t>(op_ == "scan" ? 0 : r.a.size());
    if (op_ == "scan") r.b = r.c;
    return r;
  }

  ScanPolicy policy_;
  std::string op_;
  size_t n_;
  DataCache& cache_;
  Outputs got_;
  std::shared_ptr<std::vector<Uploaded>> copies_;
  std::shared_ptr<gpu::DeviceBuffer<T>> a_, b_, c_;
  std::shared_ptr<gpu::DeviceBuffer<uint32_t>> lengths_, counts_;
};

// The select and reduce_by_key families: `ops` their calls, `what` their description.
template <class D>
Family selectionFamily(const char* name, const char* what, std::vector<std::string> ops) {
  Family f;
  f.name = name;
  f.description = what;
  const std::string first = ops.front();
  f.params = withPolicyParams<D>(
      {choiceParam("op", "the call", ops, first), typeParam(),
       intParam("n", "elements (capped on the simulator)", 1, int64_t{1} << 31, int64_t{1} << 24)});
  f.labelParams = policyLabels<D>({"op"});
  f.sizeParam = "n";
  f.canonical = [](Params p, bool simulate) {
    if (simulate) p["n"] = std::min<uint64_t>(p.at("n").get<uint64_t>(), 20011);
    return p;
  };
  f.buildFor = [](const Params& p, bool simulate) {
    const device::Target t = simulate ? device::Target::simulator() : device::Target::onGpu();
    return Generated(byType(p, [&]<class T>() { return SelectionInstance<D, T>::kernels(p, t); }));
  };
  f.instantiate = [](const Params& p, const Generated&,
                     DataCache& cache) -> std::unique_ptr<Instance> {
    return byType(p, [&]<class T>() -> std::unique_ptr<Instance> {
      return std::make_unique<SelectionInstance<D, T>>(p, cache);
    });
  };
  f.variantLabel = [](const Params& p) {
    return str(p, "op") + " x" + std::to_string(u32(p, "items")) +
           (u32(p, "blocks") == 0 ? "" : " b" + std::to_string(u32(p, "blocks")));
  };
  return f;
}

}  // namespace

std::vector<Family> deviceFamilies() {
  return {deviceReduceFamily(),
          deviceSegmentedReduceFamily(),
          deviceScanFamily(),
          histogramFamily(),
          transposeFamily(),
          radixSortFamily(),
          mergeSortFamily(),
          segmentedSortFamily(),
          selectionFamily<device::Select>(
              "select",
              "selectIf, selectUnique, partitionIf and partitionThreeWay "
              "(include/obsidian/device/select.hpp) over ScanPolicy: the sweep behind "
              "device::Select::table",
              {"if", "unique", "partition", "three_way"}),
          selectionFamily<device::ReduceByKey>(
              "reduce_by_key",
              "reduceByKey, runLengthEncode and inclusiveScanByKey of u32 keys in runs "
              "(include/obsidian/device/select.hpp) over ScanPolicy: the sweep behind "
              "device::ReduceByKey::table",
              {"reduce", "rle", "scan"})};
}

}  // namespace tuning
