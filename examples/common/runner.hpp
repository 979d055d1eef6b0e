// What every example shares: the command line (--cuda, --simulate, --gpu, --quick, --threads),
// running a kernel on the GPU when there is one and on the simulator otherwise, timing it on
// the GPU, and the table each example prints per variant.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <obsidian/obsidian.hpp>
#include <random>
#include <string>
#include <vector>

namespace examples {

using namespace obsidian;

struct Options {
  bool cuda = false;        // print each variant's generated CUDA
  bool simulate = false;    // run on the simulator even where a GPU exists
  bool requireGpu = false;  // run on the GPU, or exit 77 ("skipped") where there is none
  bool quick = false;       // small sizes, for tests
  bool profile = false;     // also run each kernel on the simulator with its counters
  int runs = 20;            // timed runs on the GPU (after warm-up); the median is reported
  bool gpu() const { return !simulate && gpu::available(); }
};

// Adds the common flags to `app`, parses, and returns the options. Calls std::exit for --help,
// bad flags, and --gpu where no GPU can be used (exit code 77).
Options parse(CLI::App& app, int argc, char** argv);

// Random values that are never all zero.
std::vector<uint32_t> randomWords(size_t n, uint32_t seed, uint32_t below = 1u << 16);
std::vector<float> randomFloats(size_t n, uint32_t seed);

// Host arrays of one launch. On the GPU they are uploaded to device buffers, and outputs are
// downloaded back after the (checked) first run.
class Args {
 public:
  template <KernelScalar T>
  Args& in(const std::vector<T>& v) {
    slots_.push_back(std::make_unique<Slot<T>>(const_cast<std::vector<T>*>(&v), false));
    return *this;
  }
  template <KernelScalar T>
  Args& out(std::vector<T>& v) {
    slots_.push_back(std::make_unique<Slot<T>>(&v, true));
    return *this;
  }
  template <KernelScalar T>
  Args& scalar(T v) {
    scalars_.emplace_back(slots_.size(), KernelArg(v));
    slots_.push_back(nullptr);
    return *this;
  }

  std::vector<KernelArg> host() const;
  std::vector<KernelArg> upload();  // allocates and uploads the device buffers
  void download();                  // outputs back into their host vectors

 private:
  std::vector<KernelArg> collect(bool device) const;  // in parameter order
  struct SlotBase {
    virtual ~SlotBase() = default;
    virtual KernelArg hostArg() = 0;
    virtual KernelArg deviceArg() = 0;
    virtual void download() = 0;
  };
  template <class T>
  struct Slot : SlotBase {
    Slot(std::vector<T>* v, bool output) : host(v), isOutput(output) {}
    KernelArg hostArg() override {
      return isOutput ? KernelArg(*host) : KernelArg(static_cast<const std::vector<T>&>(*host));
    }
    KernelArg deviceArg() override {
      if (!buffer) buffer = std::make_unique<gpu::DeviceBuffer<T>>(*host);
      return isOutput ? KernelArg(*buffer)
                      : KernelArg(static_cast<const gpu::DeviceBuffer<T>&>(*buffer));
    }
    void download() override {
      if (isOutput && buffer) buffer->download(std::span<T>(*host));
    }
    std::vector<T>* host;
    bool isOutput;
    std::unique_ptr<gpu::DeviceBuffer<T>> buffer;
  };
  std::vector<std::unique_ptr<SlotBase>> slots_;
  std::vector<std::pair<size_t, KernelArg>> scalars_;
};

// Runs k once (on the GPU or the simulator, as `o` says), leaving the outputs in the host
// vectors; on the GPU it then times o.runs more launches and returns the median in ms (NaN on
// the simulator). With o.profile it first runs k on the simulator with the performance
// counters and prints them (profileSummary).
double run(const Kernel& k, Args& args, const Options& o);

// Median time in ms of `launches` (a whole GPU pipeline) over o.runs runs after warm-up.
double timeOnGpu(const std::function<void()>& launches, const Options& o);

// One row per variant: threads per block, elements per block, shared bytes, barriers,
// registers, and on the GPU the median time and GB/s.
class Table {
 public:
  explicit Table(std::string title) : title_(std::move(title)) {}
  void add(const std::string& variant, const Kernel& k, uint32_t elementsPerBlock, uint64_t n,
           bool pass, double ms, double bytesMoved);
  void print() const;
  bool allPassed() const { return allPassed_; }

 private:
  std::string title_;
  std::vector<std::vector<std::string>> rows_;
  bool allPassed_ = true;
};

// "the GPU (NVIDIA H100 ...)" or "the CPU simulator (no GPU: ...)" / "(--simulate)".
std::string backendName(const Options& o);

}  // namespace examples
