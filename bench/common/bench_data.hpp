// What the CUB comparisons (bench/reduce, bench/scan) share: random inputs on host and device,
// CPU references, result checks, rotation over slices larger than L2, and units.
#pragma once

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <obsidian/runtime.hpp>
#include <random>
#include <string>
#include <vector>

#include "gpu_timer.hpp"

namespace bench {

using namespace obsidian;

// Host and device copies of the random input of one element type.
template <class T>
struct Data {
  std::vector<T> host;
  gpu::DeviceBuffer<T> device;
  explicit Data(size_t n, uint32_t seed) : host(n), device(n) {
    std::mt19937_64 rng(seed);
    for (T& x : host) {
      if constexpr (std::is_same_v<T, float>) {
        x = static_cast<float>(rng() >> 40) / static_cast<float>(1 << 24);  // [0, 1), not zero
      } else if constexpr (std::is_same_v<T, double>) {
        x = static_cast<double>(rng() >> 11) / static_cast<double>(uint64_t{1} << 53);  // [0, 1)
      } else if constexpr (std::is_same_v<T, uint64_t>) {
        x = rng();
      } else {
        x = static_cast<uint32_t>(rng());
      }
    }
    device.upload(host);
  }
};

template <class T>
inline const char* typeName() {
  if constexpr (std::is_same_v<T, float>) return "f32";
  if constexpr (std::is_same_v<T, double>) return "f64";
  if constexpr (std::is_same_v<T, uint64_t>) return "u64";
  if constexpr (std::is_same_v<T, uint16_t>) return "u16";
  if constexpr (std::is_same_v<T, uint8_t>) return "u8";
  return "u32";
}

// Sum of host[from, from + n) as the reference: wrapping for u32, double for f32.
template <class T>
double reference(const std::vector<T>& host, size_t from, size_t n) {
  if constexpr (std::is_same_v<T, float>) {
    double s = 0;
    for (size_t i = from; i < from + n; ++i) s += host[i];
    return s;
  } else {
    uint32_t s = 0;
    for (size_t i = from; i < from + n; ++i) s += host[i];
    return s;
  }
}

template <class T>
bool matches(T got, double want, size_t terms) {
  if constexpr (std::is_same_v<T, float>) {
    // float sums of `terms` values in [0, 1): a loose bound on the rounding of any order.
    return std::isfinite(got) &&
           std::abs(got - want) <=
               1e-6 * std::sqrt(double(terms)) * std::max(1.0, std::abs(want)) + 1e-3;
  } else {
    return got == static_cast<uint32_t>(want);
  }
}

// Disjoint slices of n elements (starting at multiples of 4 elements) of a buffer of `total`.
inline std::vector<size_t> slices(size_t n, size_t total) {
  const size_t step = (n + 3) / 4 * 4;
  const size_t count = std::max<size_t>(1, std::min<size_t>(16, total / step));
  std::vector<size_t> s;
  for (size_t i = 0; i < count; ++i) s.push_back(i * step);
  return s;
}

// A read-only (or writable) view of n elements of a device buffer, from element `from`.
template <class T>
KernelArg slice(const gpu::DeviceBuffer<T>& b, size_t from, size_t n, bool writable = false) {
  return KernelArg::deviceArray(scalarTypeOf<T>, b.address() + from * sizeof(T), n, writable);
}

inline const void* ptr(uint64_t address) { return reinterpret_cast<const void*>(address); }
inline void* mutablePtr(uint64_t address) { return reinterpret_cast<void*>(address); }

inline double gbps(size_t bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

// n random floats of magnitude in [lo, hi) (lo > 0: never zero), of random sign if `sign`.
inline std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = 0.25f, float hi = 1.25f,
                                       bool sign = true) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> magnitude(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) {
    x = std::max(lo, magnitude(rng));
    if (sign && (rng() & 1)) x = -x;
  }
  return v;
}

inline nlohmann::json timingJson(const Timing& x) {
  return nlohmann::json{{"median_us", x.medianMs * 1e3},
                        {"min_us", x.minMs * 1e3},
                        {"max_us", x.maxMs * 1e3},
                        {"runs", x.runs}};
}

}  // namespace bench
