// Accelerate's benchmarks (seed 004, Section 6) in obsidian: the dot product, SAXPY and
// Black-Scholes option pricing, with plain C++ references beside them. The example
// (accelerate.cpp) checks them on the simulator and the GPU and prints what generating and
// compiling each costs (the paper's Table 3); bench/accelerate races them against cuBLAS and the
// CUDA samples' Black-Scholes.
#pragma once

#include <cmath>
#include <obsidian/device/reduce.hpp>
#include <obsidian/obsidian.hpp>
#include <vector>

namespace accelerate {

using namespace obsidian;

// dotp xs ys = fold (+) 0 (zipWith (*) xs ys), in one launch: the products are folded as x and y
// arrive in 16-byte vectors (transformReduceAll), never stored (Accelerate's two kernels, fused).
// `blocks`: what the device holds at once (gpu::occupancyBlocks of the kernel; any number on
// the simulator).
inline Kernel dotp(uint32_t blocks, const ReducePolicy& policy = reducePolicy()) {
  return capture("dotp", policy.threads,
                 [=](DPull<EFloat> x, DPull<EFloat> y) {
                   // (transformReduceAll requires x and y to have one length.)
                   return transformReduceAll<float>(
                       Sum{}, 0.0f, [](const EFloat& a, const EFloat& b) { return a * b; }, policy,
                       blocks, x, y);
                 },
                 {.names = {"x", "y"}, .outputNames = {"dot"}});
}

// saxpy alpha xs ys = zipWith (\x y -> alpha * x + y) xs ys: one thread per element, any length.
inline Kernel saxpy(uint32_t threads = 256) {
  return capture("saxpy", threads,
                 [](EFloat alpha, DPull<EFloat> x, DPull<EFloat> y) {
                   require(len(x) == len(y), "xs and ys have the same length");
                   return push<Grid>(zipWith(
                       [alpha](const EFloat& a, const EFloat& b) { return alpha * a + b; }, x, y));
                 },
                 {.names = {"alpha", "x", "y"}, .outputNames = {"z"}});
}

// ---------------------------------------------------------------- Black-Scholes
// The CUDA samples' constants: the riskless rate and the volatility.
inline constexpr float kRiskFree = 0.02f, kVolatility = 0.30f;

// The cumulative normal distribution (Accelerate's cnd, the samples' CND; a polynomial
// approximation): written once, for expressions and for floats.
inline const auto kCnd = [](const auto& d) {
  using std::exp;
  using std::fabs;
  const auto k = 1.0f / (1.0f + 0.2316419f * fabs(d));
  const auto poly =
      k * (0.31938153f +
           k * (-0.356563782f + k * (1.781477937f + k * (-1.821255978f + k * 1.330274429f))));
  const auto c = 0.39894228040143267794f * exp(-0.5f * d * d) * poly;
  return std::make_pair(d > 0.0f, c);  // (d > 0, cnd'): 1 - cnd' when d > 0, else cnd'
};

// The call and put prices of one option (stock price s, strike x, years t), as the samples'
// BlackScholesBodyGPU computes them: d1, d2, the two CNDs and the discount shared by both.
template <class F>
auto blackScholesBody(const F& s, const F& x, const F& t) {
  using std::exp;
  using std::log;
  using std::sqrt;
  const F sqrtT = sqrt(t);
  const F d1 =
      (log(s / x) + (kRiskFree + 0.5f * kVolatility * kVolatility) * t) / (kVolatility * sqrtT);
  const F d2 = d1 - kVolatility * sqrtT;
  const auto cnd = [](const F& d) {
    const auto [positive, c] = kCnd(d);
    if constexpr (std::is_same_v<F, float>) {
      return positive ? 1.0f - c : c;
    } else {
      return ifThenElse(positive, 1.0f - c, c);
    }
  };
  const F cndD1 = cnd(d1), cndD2 = cnd(d2);
  const F discounted = x * exp(-kRiskFree * t);
  return std::make_pair(s * cndD1 - discounted * cndD2,
                        discounted * (1.0f - cndD2) - s * (1.0f - cndD1));
}

// Both prices of every option in one grid loop: an output of (call, put) pairs, stored as two
// arrays, so the subexpressions both use (d1, d2, the CNDs, the discount) are computed once
// (sharing: the share pass binds them to variables).
inline Kernel blackScholes(uint32_t threads = 128) {
  return capture(
      "blackScholes", threads,
      [](DPull<EFloat> s, DPull<EFloat> x, DPull<EFloat> t) {
        require(len(s) == len(x) && len(x) == len(t), "the options' arrays have one length");
        return push<Grid>(mkPull(len(s), [s, x, t](const EWord32& i) {
          const auto [call, put] = blackScholesBody(s[i], x[i], t[i]);
          return hana::make_tuple(call, put);
        }));
      },
      {.names = {"s", "x", "t"}, .outputNames = {"prices"}});  // prices_0: call, prices_1: put
}

// ---------------------------------------------------------------- references
inline double dotReference(const std::vector<float>& x, const std::vector<float>& y) {
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) sum += double(x[i]) * double(y[i]);
  return sum;
}

// Random options in the samples' ranges: price 5..30, strike 1..100, 0.25..10 years.
struct Options {
  std::vector<float> s, x, t;
};
inline Options randomOptions(size_t n, uint32_t seed) {
  Options o{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n)};
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  const auto next = [&state](float lo, float hi) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * static_cast<float>(state >> 40) / static_cast<float>(1 << 24);
  };
  for (size_t i = 0; i < n; ++i) {
    o.s[i] = next(5.0f, 30.0f);
    o.x[i] = next(1.0f, 100.0f);
    o.t[i] = next(0.25f, 10.0f);
  }
  return o;
}

}  // namespace accelerate
