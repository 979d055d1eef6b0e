/// Whole-array programs, the plan: Plan(outputs) plans the program that computes `outputs`
/// (array/values.hpp) into kernels, and run() runs them over bound data on the GPU or the
/// simulator. The planner (src/array/schedule.cpp) fuses maps into their consumers, fuses the
/// passes that read the same data (siblings, a reduction's partials with the pass that makes its
/// input, a row reduction's consumers into its epilogue), and cuts a kernel only where a
/// reduction's result is consumed or where a value is read by other blocks than the ones that
/// compute it. Plans are cached by the program's structure (its nodes, with every element
/// function as reified expressions) and target: planning the same program again captures and
/// compiles nothing. report() says what each kernel fuses, reads and writes, and why it ends.
/// @file
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "obsidian/array/values.hpp"
#include "obsidian/device/algorithm.hpp"
#include "obsidian/runtime.hpp"
#include "obsidian/sim.hpp"

namespace obsidian::array {

/// A named result of a program.
struct Output {
  std::string name;  ///< the name its data is bound to (Bindings::output)
  NodePtr node;      ///< its value
  /// Output `name` is value v.
  template <Shape S, class X>
  Output(std::string n, const Value<S, X>& v) : name(std::move(n)), node(v.node()) {}
};

/// How to plan.
struct PlanOptions {
  /// Fuse (the planner's rules); false stores every intermediate value, one kernel per
  /// operation, as a library without fusion runs the program (the baseline of report()).
  bool fuse = true;
  /// Where the plan runs: the GPU (device 0) or the simulator.
  device::Target target = device::Target::simulator();
  /// Threads per block of every kernel (a power-of-two multiple of 32, at most 1024).
  uint32_t threads = 256;
  /// Elements a thread takes from each tile of a vector pass (one tile per block).
  uint32_t items = 4;
  /// Elements a thread takes a trip in a vector pass with whole reductions (a device's worth of
  /// blocks, each looping over its share).
  uint32_t reduceItems = 8;
  /// Elements a row pass's lane (a column pass's thread) reads before it folds them: loads in
  /// flight (blas::Shape::rowUnroll; 8 was the tuned choice of the hand-fused BLAS plans).
  uint32_t unroll = 8;
  /// Lanes of a warp that fold one CSR segment (segmentedReduce, spmv): 1, 2, 4, 8, 16 or 32;
  /// about the mean segment length over `unroll` is right.
  uint32_t segmentLanes = 8;
  /// Rows a column pass folds per band (its partials: ceil(rows / band) per column); 0 chooses
  /// it at each run by the matrix's shape (enough bands to fill the device).
  uint32_t band = 0;
  /// Blocks of a vector pass with whole reductions (a grid-stride loop over its tiles; a pass
  /// without takes one block a tile): 0 for what fills the device (a few on the simulator).
  uint32_t blocks = 0;
  /// The fusion space's decisions, by name (Plan::choices lists a program's): false takes the
  /// unfused side of that decision (store the value, split the pass, no epilogue). Decisions
  /// not named take the fused side.
  std::map<std::string, bool> choices = {};
};

/// The data of one run: every input's data and every output's storage, by name. Host data
/// (std::vector) runs on the simulator, device data (gpu::DeviceBuffer) on the GPU; each is
/// held by reference and must outlive the run.
class Bindings {
 public:
  /// One bound name.
  struct Entry {
    Shape shape;         ///< what was bound: a scalar, a vector (or an output), a matrix
    KernelArg data;      ///< the array (host or device), or the scalar's value
    uint32_t rows = 0;   ///< a matrix's rows
    uint32_t cols = 0;   ///< a matrix's columns
    uint32_t pitch = 0;  ///< a matrix's elements from one row's start to the next's
  };
  /// A scalar input's value.
  template <Element X>
  Bindings& scalar(const std::string& name, X value) {
    return add(name, {Shape::Scalar, KernelArg(value)});
  }
  /// A vector input (read-only).
  template <Element X>
  Bindings& vector(const std::string& name, const std::vector<X>& host) {
    return add(name, {Shape::Vector, KernelArg(std::span<const X>(host))});
  }
  /// A vector input on the device.
  template <Element X>
  Bindings& vector(const std::string& name, const gpu::DeviceBuffer<X>& d) {
    return add(name, {Shape::Vector, device(d, false)});
  }
  /// A row-major matrix input: element (r, c) at data[r * pitch + c].
  template <Element X>
  Bindings& matrix(const std::string& name, const std::vector<X>& host, uint32_t rows,
                   uint32_t cols, uint32_t pitch) {
    return add(name, {Shape::Matrix, KernelArg(std::span<const X>(host)), rows, cols, pitch});
  }
  /// A row-major matrix input on the device.
  template <Element X>
  Bindings& matrix(const std::string& name, const gpu::DeviceBuffer<X>& d, uint32_t rows,
                   uint32_t cols, uint32_t pitch) {
    return add(name, {Shape::Matrix, device(d, false), rows, cols, pitch});
  }
  /// An output's storage (a scalar's: one element; a matrix's: rows x cols, dense).
  template <Element X>
  Bindings& output(const std::string& name, std::vector<X>& host) {
    return add(name, {Shape::Vector, KernelArg(std::span<X>(host))});
  }
  /// An output's storage on the device.
  template <Element X>
  Bindings& output(const std::string& name, gpu::DeviceBuffer<X>& d) {
    return add(name, {Shape::Vector, device(d, true)});
  }
  /// The entry of `name`, or null.
  const Entry* find(const std::string& name) const;

 private:
  template <class X>
  static KernelArg device(const gpu::DeviceBuffer<X>& d, bool writable) {
    return KernelArg::deviceArray(scalarTypeOf<X>, d.address(), d.size(), writable);
  }
  Bindings& add(const std::string& name, Entry e);
  std::map<std::string, Entry> entries_;
};

/// What running a plan takes besides its data.
struct RunOptions {
  const gpu::Stream* stream = nullptr;         ///< GPU: the stream (null: the default stream)
  bool synchronize = true;                     ///< GPU: wait for the last kernel before returning
  SimOptions simulation = {};                  ///< simulator: its options
  std::vector<SimStats>* simulated = nullptr;  ///< simulator: what each kernel counted
  /// Run a plan made for the GPU on the simulator, over host data: its kernels as the GPU
  /// launches them (its grid), counted as SimOptions says (predictBySimulation's runs).
  bool simulate = false;
};

/// One kernel of a plan, as report() describes it.
struct PassReport {
  std::string name;                 ///< the kernel's name
  std::string kind;                 ///< "vector pass", "row pass", "column pass", ...
  std::vector<std::string> fuses;   ///< the operations it computes (inlined ones included)
  std::vector<std::string> reads;   ///< the arrays it reads (inputs, earlier kernels' values)
  std::vector<std::string> writes;  ///< the arrays it writes (outputs, intermediates, partials)
  std::string boundary;             ///< why the next kernel is a new kernel
  double bytes = 0;                 ///< bytes its arrays hold (read or written once), at `sizes`
};
/// A plan described: its kernels, and the bytes they move against the unfused plan's.
struct PlanReport {
  std::vector<PassReport> kernels;  ///< the plan's kernels, in launch order
  double bytes = 0;                 ///< the sum of the kernels' bytes
  double unfusedBytes = 0;          ///< the same for PlanOptions::fuse = false
  uint32_t unfusedKernels = 0;      ///< the kernels of PlanOptions::fuse = false
  double planMilliseconds = 0;      ///< planning and capturing the kernels (0 when cached)
  /// As text, one paragraph per kernel.
  std::string str() const;
};

namespace detail {
struct PlanData;
}

/// A planned program.
class Plan {
 public:
  /// Plans the program computing `outputs` (each name once). Throws Error for a program the
  /// planner cannot run (shapes that cannot agree, an output name used twice, ...).
  explicit Plan(std::vector<Output> outputs, const PlanOptions& options = {});
  /// Runs the plan over `data` (every input of the program and every output bound; the lengths
  /// must agree as the operations require: an Error naming the inputs otherwise). Runs of one
  /// plan, or of the same program planned again (they share the plan, its intermediates and its
  /// kernels' grid state), must not overlap: with `synchronize` false, queue the next run on the
  /// same stream. A plan with contracts waits for its kernels to read their checks.
  void run(const Bindings& data, const RunOptions& options = {}) const;
  /// The plan described, its bytes at the sizes of `data`.
  PlanReport report(const Bindings& data) const;
  /// The number of kernels a run launches.
  size_t kernelCount() const;
  /// The kernels, in launch order.
  std::vector<Kernel> kernels() const;
  /// The whole program as a standalone CUDA header (exportHeader's kernels and launchers) with
  /// one host function `function` in namespace `ns`:
  /// @code{.unparsed}
  ///   cudaError_t function(<inputs by name: const T* v, size_t vLen | const T* m, uint32_t mRows,
  ///                        uint32_t mCols, uint32_t mPitch | T s>, <outputs by name: T* o,
  ///                        size_t oLen>, cudaStream_t stream = 0)
  /// @endcode
  /// which checks the extents as run() does (cudaErrorInvalidValue, nothing launched), takes the
  /// intermediates from cudaMallocAsync and launches the plan's kernels in order (the plan must
  /// target the GPU; a user's kernel, call, through its own launcher; a sort as the device
  /// radix sort's launches, over storage of its own for the call). A program with contracts
  /// (require, ensure) is refused: run() checks them.
  std::string exportHeader(const std::string& function, const std::string& ns) const;
  /// The fusion space's decisions this program has (each a name for PlanOptions::choices),
  /// and the side this plan took of each.
  std::vector<std::pair<std::string, bool>> choices() const;
  /// Whether this plan came from the cache (planned before in this process).
  bool cached() const { return cached_; }
  /// Plans made so far in this process and plans found in the cache, for tests.
  static size_t plansMade();
  /// The most plans the cache keeps (256 to start with): past it, the least recently used is
  /// dropped (a Plan still holding it keeps it alive; making it again plans it again). 0 keeps
  /// none, so every Plan plans.
  static void setCacheCapacity(size_t plans);
  /// The plans the cache holds now.
  static size_t cachedPlans();

 private:
  std::shared_ptr<detail::PlanData> data_;
  bool cached_ = false;
  PlanOptions options_;
};

/// One plan of a program's fusion space (fusionSpace).
struct Alternative {
  std::map<std::string, bool> choices;  ///< PlanOptions::choices that make it
  uint32_t kernels = 0;                 ///< kernels it launches
  double bytes = 0;                     ///< bytes its kernels move (at the data's sizes)
  double predictedMicroseconds = 0;     ///< bytes at the model's DRAM rate, plus its launches
  /// The simulator's cost model's time (predictBySimulation; 0 until then): its kernels run on
  /// the simulator, counted, each predicted by predictTime and summed.
  double simulatedMicroseconds = 0;
  std::string simulatedBound;  ///< what bounds its slowest kernel ("dram", "latency", ...)
};

/// The fusion space of the program computing `outputs` (seed 002, Section 4): every plan that
/// the decisions of the planner's rules can give (each decision met in one plan flipped, and so
/// on, up to `limit` plans), each predicted at the sizes of `data` with the cost model's DRAM
/// bandwidth and launch time (DeviceModel), pruned of plans that move the same bytes in the
/// same kernels as another (no traffic saved) and of plans another beats on both; cheapest
/// first. The rules' plan is always among them (even where another beats it). With `prune`
/// false every plan found is kept (each once), cheapest predicted first: the plans to measure
/// where the model may be wrong (obsidian-tune's array family).
std::vector<Alternative> fusionSpace(const std::vector<Output>& outputs, const PlanOptions& options,
                                     const Bindings& data, size_t limit = 256, bool prune = true);

/// Predicts each alternative of `space` (fusionSpace's, of the same outputs and options) with
/// the simulator's cost model: its plan runs on the simulator over `hostData` (host vectors and
/// matrices: a slice of the problem), every kernel counted (SimOptions::profile) and predicted
/// by predictTime on `model` with its counters times `scale` (the problem over the slice), the
/// kernels' times summed into Alternative::simulatedMicroseconds. The space is then sorted
/// cheapest first by that time (the rules' plan kept where it ties). Slower than fusionSpace's
/// bytes and launches by a simulation per plan, it sees what bytes do not: a gather's reuse in
/// L2, the latency of a long row, shared-memory staging. An Error names a device buffer in
/// `hostData`, or outputs the space was not made from (a choice the plans do not meet).
void predictBySimulation(std::vector<Alternative>& space, const std::vector<Output>& outputs,
                         const PlanOptions& options, const Bindings& hostData, double scale = 1,
                         const DeviceModel& model = {});

}  // namespace obsidian::array
