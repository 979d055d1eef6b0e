// Kernel families for design-space exploration: a family names a kernel generator with a
// parameter schema (variant, threads per block, elements per block, ...), and for each point of
// its space builds the kernels, the input data, the reference result and the bytes a run moves.
// The sweep (sweep.hpp) only sees this interface; families.cpp registers the paper's reductions,
// scans and Mandelbrot.
#pragma once

#include <algorithm>
#include <any>
#include <cstdint>
#include <cstring>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <obsidian/obsidian.hpp>
#include <obsidian/runtime.hpp>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "device_data.hpp"

namespace tuning {

using obsidian::Kernel;
using Params = nlohmann::json;  // an object: parameter name -> number or string

// One parameter of a family: an integer in [min, max] or one of a list of strings.
struct ParamSpec {
  std::string name;
  enum class Kind { Int, Choice } kind = Kind::Int;
  std::string help;
  nlohmann::json defaultValue;       // null: the space must give it
  std::vector<std::string> choices;  // Kind::Choice
  int64_t min = 0, max = 0;          // Kind::Int
};

// ------------------------------------------------------------------ parameters of a point
// The families' readers of a point's parameters and makers of their specs (families.cpp,
// device_families.cpp).
inline uint32_t u32(const Params& p, const char* name) { return p.at(name).get<uint32_t>(); }
inline std::string str(const Params& p, const char* name) { return p.at(name).get<std::string>(); }
// f.template operator()<T>() for the point's element type (a "type" of u32 or f32).
template <class F>
auto byType(const Params& p, F f) {
  return str(p, "type") == "f32" ? f.template operator()<float>()
                                 : f.template operator()<uint32_t>();
}

inline ParamSpec intParam(std::string name, std::string help, int64_t min, int64_t max,
                          nlohmann::json def = nullptr) {
  ParamSpec s;
  s.name = std::move(name);
  s.help = std::move(help);
  s.min = min;
  s.max = max;
  s.defaultValue = std::move(def);
  return s;
}

inline ParamSpec choiceParam(std::string name, std::string help, std::vector<std::string> choices,
                             nlohmann::json def = nullptr) {
  ParamSpec s;
  s.name = std::move(name);
  s.kind = ParamSpec::Kind::Choice;
  s.help = std::move(help);
  s.choices = std::move(choices);
  s.defaultValue = std::move(def);
  return s;
}

// ------------------------------------------------------------------ data
// Inputs held in rotation: enough copies that one pass over them is 4x the H100's 50 MB L2 (at
// most 8), so that timed runs do not find their input there.
inline size_t rotationsFor(size_t bytes) {
  const size_t target = size_t{200} << 20;
  return std::clamp<size_t>((target + bytes - 1) / std::max<size_t>(bytes, 1), 1, 8);
}

// Outputs start as 0xFF bytes (u32 0xffffffff, f32 NaN, u8 255: values no point computes), so
// an element a kernel fails to write cannot pass for a value left there by an earlier point (the
// allocator hands the same device memory to the next point) or for a zero.
template <class T>
void poison(std::vector<T>& v) {
  std::memset(static_cast<void*>(v.data()), 0xFF, v.size() * sizeof(T));
}
template <class T>
void poison(obsidian::gpu::DeviceBuffer<T>& b) {
  T ones;
  std::memset(static_cast<void*>(&ones), 0xFF, sizeof ones);
  b.fill(ones);
}

// "" when got equals want element for element, else what differs: "out[17] = 3, expected 4 (2
// of 4096 elements differ)", or the sizes.
template <class T>
std::string firstDifference(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) {
    return "output has " + std::to_string(got.size()) + " elements, expected " +
           std::to_string(want.size());
  }
  size_t count = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(got[i] == want[i]) && count++ == 0) first = i;
  }
  if (count == 0) return "";
  std::ostringstream s;
  s << "out[" << first << "] = " << +got[first] << ", expected " << +want[first] << " (" << count
    << " of " << got.size() << " elements differ)";
  return s.str();
}

// Instance::checkGpu of an output against a reference on the device: "" when its hash is the
// reference's, else firstDifference of the two, brought to the host to say where.
template <class T>
std::string firstDifferenceOnGpu(const obsidian::gpu::DeviceBuffer<T>& got,
                                 const DeviceReference<T>& want) {
  if (want.matches(got)) return "";
  return firstDifference(got.download(), want.values.download());
}

// Host data shared between the points of a sweep (inputs, references, device buffers): made
// once per key and kept while recent, so a sweep over variants and threads generates, uploads
// and checks against each input once. Points that share data are adjacent in a sweep.
class DataCache {
 public:
  explicit DataCache(size_t capacity = 6) : capacity_(capacity) {}
  template <class T>
  std::shared_ptr<T> get(const std::string& key, const std::function<std::shared_ptr<T>()>& make) {
    if (std::any* kept = recent(entries_, key)) return std::any_cast<std::shared_ptr<T>>(*kept);
    std::shared_ptr<T> made = make();
    keep(entries_, key, made, capacity_);
    return made;
  }
  // A device buffer of n T's for a point's output or temporary `name`, handed again to the next
  // point that asks for the same name, type and size: allocating and freeing them per point
  // cost up to ~1 ms a point (cuMemAlloc and cuMemFree of 1 GB outputs synchronize). Its
  // contents are what the last point left: poison it. Points run one at a time, so one holds it
  // at a time; the kOutputs most recent are kept, apart from the inputs.
  template <class T>
  std::shared_ptr<obsidian::gpu::DeviceBuffer<T>> output(const std::string& name, size_t n) {
    using Buffer = obsidian::gpu::DeviceBuffer<T>;
    const std::string key = name + ":" + typeid(T).name() + ":" + std::to_string(n);
    if (std::any* kept = recent(outputs_, key))
      return std::any_cast<std::shared_ptr<Buffer>>(*kept);
    std::shared_ptr<Buffer> made;
    try {
      made = std::make_shared<Buffer>(n);
    } catch (const obsidian::CudaError& e) {
      if (e.code() != 2 /* CUDA_ERROR_OUT_OF_MEMORY */) throw;
      outputs_.clear();  // the kept buffers may be what fills the device: again without them
      made = std::make_shared<Buffer>(n);
    }
    keep(outputs_, key, made, kOutputs);
    return made;
  }
  void clear() {
    entries_.clear();
    outputs_.clear();
  }

 private:
  // Most recently used first.
  using Recent = std::list<std::pair<std::string, std::any>>;
  // The value kept under `key`, made the most recent; nullptr when there is none.
  static std::any* recent(Recent& list, const std::string& key) {
    for (auto it = list.begin(); it != list.end(); ++it) {
      if (it->first == key) {
        list.splice(list.begin(), list, it);
        return &list.front().second;
      }
    }
    return nullptr;
  }
  // Keeps `value` under `key` as the most recent, dropping the least recent beyond `capacity`.
  static void keep(Recent& list, const std::string& key, std::any value, size_t capacity) {
    list.emplace_front(key, std::move(value));
    while (list.size() > capacity) list.pop_back();
  }

  static constexpr size_t kOutputs = 8;
  size_t capacity_;
  Recent entries_, outputs_;
};

// One point, built and ready to run: the sweep runs it on the simulator or on the GPU, then
// checks it.
class Instance {
 public:
  virtual ~Instance() = default;
  // Run once on the simulator with `options`; the outputs stay on the host for check(). What
  // each launch counted, in order.
  virtual std::vector<obsidian::SimStats> simulate(const obsidian::SimOptions& options) = 0;
  // Allocate and upload the device buffers (inputs shared through `cache`).
  virtual void prepareGpu(DataCache& cache) = 0;
  // Inputs held in rotation: run r reads copy r % rotations(), so that timed runs do not find
  // their input in the L2 cache.
  virtual size_t rotations() const { return 1; }
  // One run on the GPU (every launch of the point: one kernel, or a pipeline).
  virtual void launch(size_t run, const obsidian::gpu::LaunchOptions& options) = 0;
  // Outputs of the last run back to the host.
  virtual void download() = 0;
  // "" when the outputs equal the reference, else what differs (first index, values, count).
  virtual std::string check() = 0;
  // check() of the last GPU run; families that check on the device (firstDifferenceOnGpu)
  // bring the outputs to the host only when they differ.
  virtual std::string checkGpu() {
    download();
    return check();
  }
  // Bytes one run reads and writes in global memory (GB/s = this / time).
  virtual double bytesMoved() const = 0;
};

// What a family's build makes of a point: its kernels, in launch order, and what else
// instantiate needs of their making: the BLAS family's plan (the steps' arguments), which
// cannot be had again without capturing every kernel again (~3 ms a point). Empty for the
// families whose kernels are all instantiate needs.
struct Generated {
  Generated(std::vector<Kernel> k = {}, std::any p = {})  // (implicit: most builds make kernels)
      : kernels(std::move(k)), plan(std::move(p)) {}
  std::vector<Kernel> kernels;
  std::any plan;
};

struct Family {
  std::string name;
  std::string description;
  std::vector<ParamSpec> params;  // outermost first: points are generated in this nesting order
  // The parameters that are design choices: those shown by variantLabel (the rows of tables
  // and heatmaps) and the threads per block (their columns). The others describe the problem:
  // a group of points with equal problem parameters gets its best and worst point reported.
  std::vector<std::string> labelParams = {"variant", "seq"};
  std::string threadsParam = "threads";
  std::string sizeParam;  // the problem parameter along which best times are tabled and plotted
  bool testOnly = false;  // not listed by --list-families (used by the tool's tests)

  // The point as the family sees it: parameters that do not apply dropped (so points that
  // differ only in those are one point), and for the simulator sizes capped small.
  std::function<Params(Params, bool simulate)> canonical;
  // The kernels of the point (and what else instantiate needs of their making); throws
  // obsidian::Error when they cannot be generated.
  std::function<Generated(const Params&)> build;
  // For families whose kernels depend on where they run (the array family: a plan's grids and
  // policies follow its target), build for the simulator or the GPU; used instead of build
  // (generate). Null for the others.
  std::function<Generated(const Params&, bool simulate)> buildFor;
  // The point ready to run from what build made of it (the kernels since compiled), with its
  // input and reference (from `cache` where shared).
  std::function<std::unique_ptr<Instance>(const Params&, const Generated&, DataCache& cache)>
      instantiate;
  // The plain kernels (device_data.hpp) that the point's data launches on the GPU: its input's,
  // its reference's, its check's. Optional; listed, they are made and compiled on the compile
  // threads with the point's kernels (the first of each costs a process 0.2 to 3 ms, on the
  // runs' path otherwise). Throws obsidian::Error as instantiate would for the point.
  std::function<std::vector<PlainKernel>(const Params&)> plainKernels;
  // The label of a design choice in tables and plots ("red5p/16", "sklansky2").
  std::function<std::string(const Params&)> variantLabel;
  // The threads per block that give every thread of the widest parallel loop its own work
  // (red1 over 512 elements: 256). With fewer, the kernel is virtualized (threads loop), which
  // the paper's Figure 6 highlights. Null: not known for this family.
  std::function<uint32_t(const Params&)> naturalThreads;
};

// The kernels of point `p` of family f for the simulator or the GPU (Family::buildFor where the
// family has it, else Family::build).
inline Generated generate(const Family& f, const Params& p, bool simulate) {
  return f.buildFor ? f.buildFor(p, simulate) : f.build(p);
}

// Every registered family (families.cpp), in a stable order.
const std::vector<Family>& families();
// The family called `name`; throws obsidian::Error naming the known families otherwise.
const Family& findFamily(const std::string& name);

}  // namespace tuning
