// The BLAS family (blas_family.hpp): each point is one of the eleven sequences on one problem
// with one blas::Shape, run as the whole sequence (every kernel of its plan, in order) and
// checked against the double-precision reference with blas::mismatch. Inputs and references are
// shared by the points of one sequence and problem. On the GPU the inputs are made on the device
// and rotated so that timed runs do not find them in L2, the outputs start as NaN so that an
// element no kernel writes fails the check, and the check runs on the device: blas::mismatch's
// test against the double reference computed there (blas_reference.hpp). GB/s is over the
// bytes the sequence must move (Sequence::bytes: every input read once, every output written once),
// so fused and unfused plans compare as the useful bandwidth they reach.
#include "blas_family.hpp"

#include <algorithm>
#include <cassert>
#include <map>

#include "../examples/blas/blas.hpp"
#include "blas_data.hpp"

namespace tuning {

namespace {

using namespace obsidian;
namespace gpu = obsidian::gpu;

// The Shape fields as parameters, in Shape's order, with their letters in variant labels.
struct ShapeParam {
  const char* name;
  const char* label;
  uint32_t blas::Shape::*field;
};
const ShapeParam kShapeParams[] = {{"rowUnroll", "u", &blas::Shape::rowUnroll},
                                   {"band", "b", &blas::Shape::band},
                                   {"bicgkBand", "k", &blas::Shape::bicgkBand},
                                   {"perLane", "l", &blas::Shape::perLane},
                                   {"vectorItems", "v", &blas::Shape::vectorItems}};

bool fused(const Params& p) { return !p.contains("fuse") || str(p, "fuse") == "fused"; }

blas::Problem problemOf(const Params& p) {
  if (blas::isVectorSequence(str(p, "sequence"))) return {u32(p, "size"), 0, 0, 0};
  return {0, u32(p, "size"), u32(p, "cols"), u32(p, "pitch")};
}

// The point's shape: its parameters, and Shape's defaults for those canonical dropped.
blas::Shape shapeOf(const Params& p) {
  blas::Shape s;
  s.fuse = fused(p);
  s.threads = u32(p, "threads");
  for (const ShapeParam& sp : kShapeParams) {
    if (p.contains(sp.name)) s.*sp.field = u32(p, sp.name);
  }
  return s;
}

class BlasInstance : public Instance {
 public:
  BlasInstance(blas::Sequence q, blas::Problem pr, std::string key, DataCache& cache)
      : q_(std::move(q)), pr_(pr), key_(std::move(key)), cache_(cache) {}
  std::vector<SimStats> simulate(const SimOptions& options) override {
    host_ = blasHostData(cache_, q_, pr_);
    got_ = host_->inputs;
    for (const auto& list : {q_.outputs, q_.temporaries}) {
      for (const auto& [name, n] : list) {
        got_[name].resize(n);
        poison(got_[name]);
      }
    }
    return blas::simulate(q_, got_, options);
  }
  void prepareGpu(DataCache& cache) override {
    device_ = blasDeviceData(cache, q_, pr_);
    for (const auto& list : {q_.outputs, q_.temporaries}) {
      for (const auto& [name, n] : list) poison(*(own_[name] = cache.output<float>(name, n)));
    }
  }
  size_t rotations() const override { return device_->copies.size(); }
  void launch(size_t run, const gpu::LaunchOptions& options) override {
    const blas::DeviceBuffers& in = device_->copies[run % device_->copies.size()];
    blas::launchWith(
        q_,
        [&](const std::string& name) -> const gpu::DeviceBuffer<float>& {
          const auto it = own_.find(name);
          return it != own_.end() ? *it->second : in.at(name);
        },
        options);
  }
  void download() override {
    for (const auto& [name, n] : q_.outputs) got_[name] = own_.at(name)->download();
  }
  std::string check() override {
    if (!host_) host_ = blasHostData(cache_, q_, pr_);
    return blas::mismatch(host_->expected, got_);
  }
  // blas::mismatch's test on the device; the host reference only to say what differs.
  std::string checkGpu() override {
    bool within = true;
    for (const auto& [name, n] : q_.outputs) {
      within = within && outsideToleranceOnGpu(*own_.at(name), device_->expected.at(name)) == 0;
    }
    if (within) return "";
    download();
    const std::string what = check();
    return what.empty() ? "an output is outside its tolerance on the device, not on the host"
                        : what;
  }
  double bytesMoved() const override { return q_.bytes(); }

 private:
  std::string dataKeyOf(const std::string& out, const char* bound) const {
    return key_ + ":" + out + ":" + bound;
  }
  blas::Sequence q_;
  blas::Problem pr_;
  std::string key_;
  DataCache& cache_;  // the host data (simulate, check), shared per problem
  std::shared_ptr<const BlasHostData> host_;
  blas::Buffers got_;
  std::shared_ptr<BlasDeviceData> device_;
  std::map<std::string, std::shared_ptr<gpu::DeviceBuffer<float>>> own_;  // outputs, temporaries
};

}  // namespace

std::string blasDataKey(const std::string& name, const blas::Problem& pr) {
  return "blas:" + name + ":" + std::to_string(pr.n) + ":" + std::to_string(pr.rows) + "x" +
         std::to_string(pr.cols) + "/" + std::to_string(pr.pitch);
}

namespace {
// The seed of input `name` of the data named `key`.
uint64_t inputSeed(const std::string& key, const std::string& name) {
  return hashKey(key + ":" + name);
}
}  // namespace

std::shared_ptr<const BlasHostData> blasHostData(DataCache& cache, const blas::Sequence& q,
                                                 const blas::Problem& pr) {
  const std::string key = blasDataKey(q.name, pr);
  return cache.get<const BlasHostData>(key + ":host", [&] {
    auto d = std::make_shared<BlasHostData>();
    for (const auto& [in, n] : q.inputs) {
      d->inputs[in] = randomOnHost<float>(n, inputSeed(key, in), Random::Signed);
    }
    for (const auto& list : {q.outputs, q.temporaries}) {  // what blas::reference expects
      for (const auto& [out, n] : list) d->inputs[out].assign(n, 0.0f);
    }
    d->expected = blas::reference(q.name, pr, d->inputs);
    for (const auto& list : {q.outputs, q.temporaries}) {  // inputs only: plans differ
      for (const auto& [out, n] : list) d->inputs.erase(out);
    }
    return std::shared_ptr<const BlasHostData>(std::move(d));
  });
}

std::shared_ptr<BlasDeviceData> blasDeviceData(DataCache& cache, const blas::Sequence& q,
                                               const blas::Problem& pr) {
  const std::string key = blasDataKey(q.name, pr);
  return cache.get<BlasDeviceData>(key + ":device", [&] {
    auto d = std::make_shared<BlasDeviceData>();
    double bytes = 0;
    for (const auto& [name, n] : q.inputs) bytes += 4.0 * n;
    const size_t r = rotationsFor(static_cast<size_t>(bytes));
    for (size_t i = 0; i < r; ++i) {
      blas::DeviceBuffers& copy = d->copies.emplace_back();
      for (const auto& [name, n] : q.inputs) {
        randomOnGpu(copy.emplace(name, gpu::DeviceBuffer<float>(n)).first->second,
                    inputSeed(key, name), Random::Signed);
      }
    }
    d->expected = blasReferenceOnGpu(q, pr, d->copies.at(0));
    return d;
  });
}

Family blasFamily() {
  Family f;
  f.name = "blas";
  f.description =
      "the kernel-fusion BLAS-1/2 sequences (examples/blas, seed 002's Table 1) over blas::Shape: "
      "fused or one kernel per BLAS call (the F-tagged sequences), threads, and the tiles and "
      "serial iterations of the passes each plan uses";
  const blas::Shape d;
  f.params = {
      choiceParam("sequence", "the sequence (seed 002's Table 1)", blas::sequenceNames()),
      intParam("size", "vector length (AXPYDOT, SSCAL, VADD, WAXPBY), else the matrix's rows", 1,
               int64_t{1} << 30),
      intParam("cols", "the matrix's columns (0: as many as rows; matrix sequences)", 0,
               int64_t{1} << 30, 0),
      intParam("pitch", "elements between rows of the inputs (0: cols; matrix sequences)", 0,
               int64_t{1} << 30, 0),
      choiceParam("fuse", "fused plan, or one kernel per BLAS call (tag F sequences)",
                  {"fused", "unfused"}, "fused"),
      intParam("threads", "threads per block of every kernel (a multiple of 32)", 32, 1024,
               d.threads),
      intParam("rowUnroll",
               "row dots: products a lane folds a trip; column passes: rows a thread reads", 1, 16,
               d.rowUnroll),
      intParam("band", "column passes: rows each thread folds", 1, 1 << 16, d.band),
      intParam("bicgkBand", "fused BiCGK: rows each warp visits", 1, 1 << 16, d.bicgkBand),
      intParam("perLane", "fused BiCGK: columns each lane owns", 1, 16, d.perLane),
      intParam("vectorItems", "AXPYDOT, SSCAL, unfused WAXPBY: elements a thread takes per tile", 1,
               16, d.vectorItems)};
  f.labelParams = {"fuse", "rowUnroll", "band", "bicgkBand", "perLane", "vectorItems"};
  f.sizeParam = "size";
  f.canonical = [](Params p, bool simulate) {
    const std::string name = str(p, "sequence");
    if (blas::isVectorSequence(name)) {
      p.erase("cols");
      p.erase("pitch");
      if (simulate) p["size"] = std::min(u32(p, "size"), 4099u);
    } else {
      if (u32(p, "cols") == 0) p["cols"] = p.at("size");
      if (u32(p, "pitch") == 0) p["pitch"] = p.at("cols");
      if (u32(p, "pitch") < u32(p, "cols")) {
        throw Error("blas: pitch (" + std::to_string(u32(p, "pitch")) +
                    ") must be at least cols (" + std::to_string(u32(p, "cols")) + ")");
      }
      if (simulate) {  // small, keeping a pitch's padding (up to 3)
        const uint32_t pad = std::min(u32(p, "pitch") - u32(p, "cols"), 3u);
        p["size"] = std::min(u32(p, "size"), 70u);
        p["cols"] = std::min(u32(p, "cols"), 161u);
        p["pitch"] = u32(p, "cols") + pad;
      }
    }
    const std::vector<std::string> used = blas::shapeFields(name, fused(p));
    const auto drop = [&](const char* field) {
      if (std::find(used.begin(), used.end(), field) == used.end()) p.erase(field);
    };
    drop("fuse");
    for (const ShapeParam& sp : kShapeParams) drop(sp.name);
    return p;
  };
  f.build = [](const Params& p) {
    blas::Sequence q = blas::sequence(str(p, "sequence"), problemOf(p), shapeOf(p));
    std::vector<Kernel> kernels;
    for (const blas::Step& s : q.steps) kernels.push_back(s.kernel);
    return Generated(std::move(kernels), std::move(q));
  };
  f.instantiate = [](const Params& p, const Generated& g,
                     DataCache& cache) -> std::unique_ptr<Instance> {
    const std::string name = str(p, "sequence");
    const blas::Problem pr = problemOf(p);
    if (!blas::isVectorSequence(name) && pr.matrixElements() > (size_t{1} << 31)) {
      throw Error("blas: a " + std::to_string(pr.rows) + " x " + std::to_string(pr.pitch) +
                  " matrix is over 2^31 elements");
    }
    const auto* plan = std::any_cast<blas::Sequence>(&g.plan);
    if (!plan) throw Error("blas: instantiate needs the plan that build made of the point");
    blas::Sequence q = *plan;
    assert(q.steps.size() == g.kernels.size());
    for (size_t i = 0; i < q.steps.size(); ++i) q.steps[i].kernel = g.kernels[i];  // as compiled
    return std::make_unique<BlasInstance>(std::move(q), pr, blasDataKey(name, pr), cache);
  };
  f.variantLabel = [](const Params& p) {
    std::string label = p.contains("fuse") ? str(p, "fuse") : "";
    for (const ShapeParam& sp : kShapeParams) {
      if (!p.contains(sp.name)) continue;
      label += (label.empty() ? "" : " ") + std::string(sp.label) + std::to_string(u32(p, sp.name));
    }
    return label.empty() ? std::string("plan") : label;
  };
  return f;
}

}  // namespace tuning
