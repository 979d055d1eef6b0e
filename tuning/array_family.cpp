// The array family (array_family.hpp): the registry of programs, the BLAS scripts registered in
// it with the blas family's data (blas_data.hpp: the same inputs, references and checks), and
// the family whose points plan a program with one alternative of its fusion space. A point's
// plan is made by build for where it runs (the simulator or the GPU: grids and policies follow
// the target), so the sweep's compile threads compile the kernels the runs launch (a Plan's
// kernels are handles to its own).
#include "array_family.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

#include "../examples/blas/scripts.hpp"
#include "blas_data.hpp"
#include "space.hpp"

namespace tuning {

namespace {

using namespace obsidian;
namespace gpu = obsidian::gpu;

// ------------------------------------------------------------------ the registry
struct Registry {
  std::mutex mutex;
  std::vector<ArrayProgram> programs;
  bool frozen = false;  // the family was made: its `program` choices are fixed
};

void registerBlasPrograms(Registry& r);

Registry& registry() {
  static Registry* r = [] {
    auto* made = new Registry;  // (never destroyed: instances refer to its programs)
    registerBlasPrograms(*made);
    return made;
  }();
  return *r;
}

void add(Registry& r, ArrayProgram p) {
  if (p.name.empty() || !p.outputs || !p.onHost || !p.onGpu) {
    throw Error("registerArrayProgram: program '" + p.name +
                "' needs a name, outputs, onHost and onGpu");
  }
  for (const ArrayProgram& q : r.programs) {
    if (q.name == p.name) {
      throw Error("registerArrayProgram: a program named '" + p.name + "' is registered already");
    }
  }
  r.programs.push_back(std::move(p));
}

const ArrayProgram& programOf(const Params& p) {
  const std::string name = str(p, "program");
  for (const ArrayProgram& q : arrayPrograms()) {
    if (q.name == name) return q;
  }
  throw Error("array: no program named '" + name + "' is registered");
}

// ------------------------------------------------------------------ parameters
// The PlanOptions fields a program may read, as parameters, with their letters in labels.
struct OptionParam {
  const char* name;
  const char* label;
  uint32_t array::PlanOptions::*field;
};
const OptionParam kOptionParams[] = {{"items", "i", &array::PlanOptions::items},
                                     {"reduceItems", "r", &array::PlanOptions::reduceItems},
                                     {"unroll", "u", &array::PlanOptions::unroll},
                                     {"band", "b", &array::PlanOptions::band},
                                     {"segmentLanes", "s", &array::PlanOptions::segmentLanes}};

ArrayProblem problemOf(const Params& p, const ArrayProgram& prog) {
  if (!prog.matrix) return {u32(p, "size"), 0, 0, 0};
  return {0, u32(p, "size"), u32(p, "cols"), u32(p, "pitch")};
}

// The problem sizes as the simulator runs them (as the blas family caps them): small, keeping a
// matrix's padding (up to 3). Capping twice caps once.
Params capped(Params p, const ArrayProgram& prog) {
  if (!prog.matrix) {
    p["size"] = std::min(u32(p, "size"), 4099u);
    return p;
  }
  const uint32_t pad = std::min(u32(p, "pitch") - u32(p, "cols"), 3u);
  p["size"] = std::min(u32(p, "size"), 70u);
  p["cols"] = std::min(u32(p, "cols"), 161u);
  p["pitch"] = u32(p, "cols") + pad;
  return p;
}

array::PlanOptions optionsOf(const Params& p, bool simulate) {
  array::PlanOptions o;
  o.target = simulate ? device::Target::simulator() : device::Target::onGpu();
  o.threads = u32(p, "threads");
  for (const OptionParam& op : kOptionParams) {
    if (p.contains(op.name)) o.*op.field = u32(p, op.name);
  }
  return o;
}

// What build made of a point: the program, the options with the alternative's choices, and the
// plan for the target build was asked for.
struct PlannedPoint {
  std::vector<array::Output> outputs;
  array::PlanOptions options;
  array::Plan plan;
};

// ------------------------------------------------------------------ the instance
// A point: its plan run over the program's data, on the simulator or the GPU.
class ArrayPlanInstance : public Instance {
 public:
  ArrayPlanInstance(const ArrayProgram& program, ArrayProblem problem,
                    std::shared_ptr<const PlannedPoint> point, DataCache& cache)
      : program_(program), problem_(problem), point_(std::move(point)), cache_(cache) {}
  std::vector<SimStats> simulate(const SimOptions& options) override {
    plan_ = planFor(false);
    data_ = program_.onHost(problem_, cache_);
    array::RunOptions r;
    r.simulation = options;
    std::vector<SimStats> stats;
    r.simulated = &stats;
    plan_->run(data_->bindings(0), r);
    return stats;
  }
  void prepareGpu(DataCache& cache) override {
    plan_ = planFor(true);
    data_ = program_.onGpu(problem_, cache);
  }
  size_t rotations() const override { return data_->rotations(); }
  void launch(size_t run, const gpu::LaunchOptions& options) override {
    array::RunOptions r;
    r.stream = options.stream;
    r.synchronize = options.synchronize;
    plan_->run(data_->bindings(run), r);
  }
  void download() override {}  // the data's check reads the outputs where they are
  std::string check() override { return data_ ? data_->check() : "the point has not run"; }
  std::string checkGpu() override { return check(); }
  double bytesMoved() const override {
    if (!data_) return 0;
    const double b = data_->bytes();
    return b > 0 ? b : plan_->report(data_->bindings(0)).bytes;
  }

 private:
  // The plan build made, or (a point built for the GPU and simulated to predict it, --prune)
  // the same choices planned for the other target.
  array::Plan planFor(bool gpu) const {
    if (point_->options.target.gpu == gpu) return point_->plan;
    array::PlanOptions o = point_->options;
    o.target = gpu ? device::Target::onGpu() : device::Target::simulator();
    return array::Plan(point_->outputs, o);
  }

  const ArrayProgram& program_;
  ArrayProblem problem_;
  std::shared_ptr<const PlannedPoint> point_;
  DataCache& cache_;  // the host data of simulate() (the sweep's, which outlives the point)
  std::optional<array::Plan> plan_;
  std::unique_ptr<ProgramData> data_;
};

// ------------------------------------------------------------------ the BLAS scripts
blas::Problem blasProblem(const ArrayProblem& p) { return {p.n, p.rows, p.cols, p.pitch}; }

// blas::sequence(name, pr) without its steps: the names and sizes of its buffers, which the
// data and references read. Kept per problem, since making one captures every kernel of the
// hand plan (~3 ms).
std::shared_ptr<const blas::Sequence> skeleton(const std::string& name, const blas::Problem& pr) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const blas::Sequence>> kept;
  const std::string key = blasDataKey(name, pr);
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = kept.find(key);
    if (it != kept.end()) return it->second;
  }
  auto q = std::make_shared<blas::Sequence>(blas::sequence(name, pr));
  q->steps.clear();
  std::lock_guard<std::mutex> lock(mutex);
  return kept.emplace(key, std::move(q)).first->second;
}

// Every input and output of q bound as blas::bindings binds them (matrix inputs rows x cols with
// pr's pitch), each found by input(name) or output(name).
template <class In, class Out>
array::Bindings bindBlas(const blas::Sequence& q, const blas::Problem& pr, In input, Out output) {
  array::Bindings b;
  for (const auto& [name, n] : q.inputs) {
    if (blas::detail::isMatrixInput(name)) {
      b.matrix(name, input(name), pr.rows, pr.cols, pr.pitch);
    } else {
      b.vector(name, input(name));
    }
  }
  for (const auto& [name, n] : q.outputs) b.output(name, output(name));
  return b;
}

// On the host: the shared inputs, the point's own outputs, blas::mismatch against the reference.
class BlasOnHost : public ProgramData {
 public:
  BlasOnHost(std::shared_ptr<const blas::Sequence> q, const blas::Problem& pr, DataCache& cache)
      : q_(std::move(q)), host_(blasHostData(cache, *q_, pr)) {
    for (const auto& [name, n] : q_->outputs) {
      out_[name].resize(n);
      poison(out_[name]);
    }
    bound_ = bindBlas(
        *q_, pr,
        [&](const std::string& k) -> const std::vector<float>& { return host_->inputs.at(k); },
        [&](const std::string& k) -> std::vector<float>& { return out_.at(k); });
  }
  const array::Bindings& bindings(size_t) const override { return bound_; }
  std::string check() override { return blas::mismatch(host_->expected, out_); }
  double bytes() const override { return q_->bytes(); }

 private:
  std::shared_ptr<const blas::Sequence> q_;
  std::shared_ptr<const BlasHostData> host_;
  blas::Buffers out_;
  array::Bindings bound_;
};

// On the device: the shared rotated inputs, the outputs from the cache's buffers, the check
// on the device (the host reference only to say what differs), as the blas family's.
class BlasOnGpu : public ProgramData {
 public:
  BlasOnGpu(std::shared_ptr<const blas::Sequence> q, const blas::Problem& pr, DataCache& cache)
      : q_(std::move(q)), pr_(pr), cache_(cache), device_(blasDeviceData(cache, *q_, pr)) {
    for (const auto& [name, n] : q_->outputs) {
      poison(*(out_[name] = cache.output<float>("array:" + name, n)));
    }
    for (const blas::DeviceBuffers& copy : device_->copies) {
      bound_.push_back(bindBlas(
          *q_, pr,
          [&](const std::string& k) -> const gpu::DeviceBuffer<float>& { return copy.at(k); },
          [&](const std::string& k) -> gpu::DeviceBuffer<float>& { return *out_.at(k); }));
    }
  }
  const array::Bindings& bindings(size_t run) const override { return bound_[run % bound_.size()]; }
  size_t rotations() const override { return bound_.size(); }
  std::string check() override {
    bool within = true;
    for (const auto& [name, n] : q_->outputs) {
      within = within && outsideToleranceOnGpu(*out_.at(name), device_->expected.at(name)) == 0;
    }
    if (within) return "";
    blas::Buffers got;
    for (const auto& [name, n] : q_->outputs) got[name] = out_.at(name)->download();
    const std::string what = blas::mismatch(blasHostData(cache_, *q_, pr_)->expected, got);
    return what.empty() ? "an output is outside its tolerance on the device, not on the host"
                        : what;
  }
  double bytes() const override { return q_->bytes(); }

 private:
  std::shared_ptr<const blas::Sequence> q_;
  blas::Problem pr_;
  DataCache& cache_;
  std::shared_ptr<BlasDeviceData> device_;
  std::map<std::string, std::shared_ptr<gpu::DeviceBuffer<float>>> out_;
  std::vector<array::Bindings> bound_;  // one per rotated copy of the inputs
};

void registerBlasPrograms(Registry& r) {
  for (const std::string& name : blas::sequenceNames()) {
    ArrayProgram p;
    p.name = name;
    p.description = "the BLAS sequence " + name + " (examples/blas/scripts.hpp)";
    p.matrix = !blas::isVectorSequence(name);
    // The options its plans' passes read (every alternative's): vector passes items (with a
    // whole reduction, AXPYDOT's dot, reduceItems instead), the matrix pass items, row passes
    // unroll, column and tile passes unroll and band.
    static const std::map<std::string, std::vector<std::string>> kOptions = {
        {"AXPYDOT", {"reduceItems"}},
        {"SSCAL", {"items"}},
        {"VADD", {"items"}},
        {"WAXPBY", {"items"}},
        {"MADD", {"items"}},
        {"GESUMMV", {"unroll"}},
        {"SGEMV", {"items", "unroll"}},
        {"ATAX", {"items", "unroll", "band"}},
        {"SGEMVT", {"items", "unroll", "band"}},
        {"GEMVER", {"items", "unroll", "band"}},
        {"BiCGK", {"items", "unroll", "band"}}};
    p.options = kOptions.at(name);
    p.outputs = [name] { return blas::script(name); };
    p.onHost = [name](const ArrayProblem& a, DataCache& cache) -> std::unique_ptr<ProgramData> {
      const blas::Problem pr = blasProblem(a);
      return std::make_unique<BlasOnHost>(skeleton(name, pr), pr, cache);
    };
    p.onGpu = [name](const ArrayProblem& a, DataCache& cache) -> std::unique_ptr<ProgramData> {
      const blas::Problem pr = blasProblem(a);
      if (pr.matrixElements() > (size_t{1} << 31)) {
        throw Error("array: a " + std::to_string(pr.rows) + " x " + std::to_string(pr.pitch) +
                    " matrix is over 2^31 elements");
      }
      return std::make_unique<BlasOnGpu>(skeleton(name, pr), pr, cache);
    };
    add(r, std::move(p));
  }
}

// Family::buildFor: alternative k of the point's fusion space planned for its target.
Generated planPoint(const Params& p, bool simulate) {
  const ArrayProgram& prog = programOf(p);
  const std::vector<array::Alternative> space = arrayAlternatives(p);
  const uint32_t k = u32(p, "alternative");
  if (k >= space.size()) {
    throw Error("array: program " + prog.name + " has " + std::to_string(space.size()) +
                " fusion alternative(s) at these options; alternative " + std::to_string(k) +
                " is past them");
  }
  array::PlanOptions o = optionsOf(p, simulate);
  o.choices = space[k].choices;
  std::vector<array::Output> outputs = prog.outputs();
  array::Plan plan(outputs, o);
  std::vector<Kernel> kernels = plan.kernels();
  return Generated(std::move(kernels), std::shared_ptr<const PlannedPoint>(new PlannedPoint{
                                           std::move(outputs), o, std::move(plan)}));
}

}  // namespace

void registerArrayProgram(ArrayProgram program) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.frozen) {
    throw Error("registerArrayProgram: program '" + program.name +
                "' registered after the array family was made; register before families()");
  }
  add(r, std::move(program));
}

const std::vector<ArrayProgram>& arrayPrograms() { return registry().programs; }

std::vector<array::Alternative> arrayAlternatives(const Params& p) {
  const ArrayProgram& prog = programOf(p);
  Params small = capped(p, prog);
  small.erase("alternative");
  const std::string key = pointKey("array", small);
  static std::mutex mutex;
  static std::map<std::string, std::vector<array::Alternative>> spaces;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = spaces.find(key);
    if (it != spaces.end()) return it->second;
  }
  // (planned on the simulator, whatever the point's target: the same plans, host data)
  DataCache cache;
  const std::unique_ptr<ProgramData> data = prog.onHost(problemOf(small, prog), cache);
  std::vector<array::Alternative> space =
      array::fusionSpace(prog.outputs(), optionsOf(small, true), data->bindings(0), 256, false);
  std::lock_guard<std::mutex> lock(mutex);
  return spaces.emplace(key, std::move(space)).first->second;
}

Family arrayFamily() {
  std::vector<std::string> names;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.frozen = true;
    for (const ArrayProgram& p : r.programs) names.push_back(p.name);
  }
  Family f;
  f.name = "array";
  f.description =
      "whole-array programs (obsidian/array.hpp; the BLAS scripts and any registered with "
      "registerArrayProgram) planned by array::Plan: each alternative of the program's fusion "
      "space (array::fusionSpace unpruned, cheapest predicted first) over the plan's options";
  const array::PlanOptions d;
  f.params = {
      choiceParam("program", "the registered program", names),
      intParam("size", "the vectors' length (vector programs), else the matrix's rows", 1,
               int64_t{1} << 30),
      intParam("cols", "the matrix's columns (0: as many as rows; matrix programs)", 0,
               int64_t{1} << 30, 0),
      intParam("pitch", "elements between rows of the matrix inputs (0: cols; matrix programs)", 0,
               int64_t{1} << 30, 0),
      intParam("alternative",
               "index into the program's fusion space at the simulator's sizes (0: cheapest "
               "predicted); past its end the point is skipped",
               0, 255, 0),
      intParam("threads", "threads per block of every kernel (32, 64, ..., 1024)", 32, 1024,
               d.threads),
      intParam("items", "elements a thread takes from a vector pass's tile", 1, 16, d.items),
      intParam("reduceItems", "elements a thread takes a trip in a whole reduction's pass", 1, 16,
               d.reduceItems),
      intParam("unroll", "loads in flight per lane of a row or column pass", 1, 16, d.unroll),
      intParam("band", "rows a column pass folds per band (0: by the matrix's shape)", 0,
               int64_t{1} << 16, d.band),
      intParam("segmentLanes", "lanes folding one CSR segment (1, 2, 4, ..., 32)", 1, 32,
               d.segmentLanes)};
  f.labelParams = {"alternative", "items", "reduceItems", "unroll", "band", "segmentLanes"};
  f.sizeParam = "size";
  f.canonical = [](Params p, bool simulate) {
    const ArrayProgram& prog = programOf(p);
    if (!prog.matrix) {
      p.erase("cols");
      p.erase("pitch");
    } else {
      if (u32(p, "cols") == 0) p["cols"] = p.at("size");
      if (u32(p, "pitch") == 0) p["pitch"] = p.at("cols");
      if (u32(p, "pitch") < u32(p, "cols")) {
        throw Error("array: pitch (" + std::to_string(u32(p, "pitch")) +
                    ") must be at least cols (" + std::to_string(u32(p, "cols")) + ")");
      }
    }
    if (simulate) p = capped(std::move(p), prog);
    for (const OptionParam& op : kOptionParams) {
      if (std::find(prog.options.begin(), prog.options.end(), op.name) == prog.options.end()) {
        p.erase(op.name);
      }
    }
    return p;
  };
  f.buildFor = planPoint;
  f.build = [](const Params& p) { return planPoint(p, true); };
  f.instantiate = [](const Params& p, const Generated& g,
                     DataCache& cache) -> std::unique_ptr<Instance> {
    const auto* point = std::any_cast<std::shared_ptr<const PlannedPoint>>(&g.plan);
    if (!point) throw Error("array: instantiate needs the plan that build made of the point");
    const ArrayProgram& prog = programOf(p);
    return std::make_unique<ArrayPlanInstance>(prog, problemOf(p, prog), *point, cache);
  };
  // "a1 3k +-+ i4 u8": the alternative, its kernels and the side of each decision it meets
  // (by name; + fused, - not), then the options.
  f.variantLabel = [](const Params& p) {
    const uint32_t k = u32(p, "alternative");
    std::string label = "a" + std::to_string(k);
    try {
      const std::vector<array::Alternative> space = arrayAlternatives(p);
      if (k < space.size()) {
        label += " " + std::to_string(space[k].kernels) + "k";
        if (!space[k].choices.empty()) label += ' ';
        for (const auto& [name, side] : space[k].choices) label += side ? '+' : '-';
      }
    } catch (const Error&) {  // (a point that cannot be planned: build says why)
    }
    for (const OptionParam& op : kOptionParams) {
      if (p.contains(op.name))
        label += " " + std::string(op.label) + std::to_string(u32(p, op.name));
    }
    return label;
  };
  return f;
}

}  // namespace tuning
