// What the array families share (families.cpp, device_families.cpp): a point's input and
// reference (ArrayData), made on the host for the simulator and on the device for the GPU, and
// the Instance that runs one kernel over them (ArrayInstance), with the host twins of the plain
// reference kernels.
#pragma once

#include <algorithm>
#include <obsidian/obsidian.hpp>

#include "device_data.hpp"
#include "family.hpp"

namespace tuning {

using namespace obsidian;
namespace gpu = obsidian::gpu;

inline ParamSpec typeParam() { return choiceParam("type", "element type", {"u32", "f32"}, "u32"); }

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

}  // namespace tuning
