// Plain C++ references of the row-wise operations (device/rowwise.hpp), in double, and the
// closeness the simulator and GPU tests and bench/rowwise ask of the results.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <obsidian/device/rowwise.hpp>
#include <random>
#include <vector>

namespace obsidian::testing {

template <class X>
double asDouble(X x) {
  if constexpr (std::is_same_v<X, float>) {
    return x;
  } else {
    return x.toDouble();
  }
}

// rows x cols random values, normal around `mean` with deviation `spread`, as X.
template <class X>
std::vector<X> randomRows(size_t n, uint32_t seed, float mean = 0.0f, float spread = 2.0f) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(mean, spread);
  std::vector<X> v;
  v.reserve(n);
  for (size_t i = 0; i < n; ++i) v.push_back(X(d(g)));
  return v;
}

// The operation's exact result for one row of `cols` elements at `row`, in double, into `out`.
template <class X>
void referenceRow(RowOp op, const X* row, const std::vector<X>& gamma, const std::vector<X>& beta,
                  uint32_t cols, double eps, double* out) {
  const auto x = [&](uint32_t c) { return asDouble(row[c]); };
  double a = 0, b = 0;
  if (op == RowOp::Softmax) {
    a = -INFINITY;
    for (uint32_t c = 0; c < cols; ++c) a = std::max(a, x(c));
    for (uint32_t c = 0; c < cols; ++c) b += std::exp(x(c) - a);
  } else if (op == RowOp::LayerNorm) {
    for (uint32_t c = 0; c < cols; ++c) a += x(c);
    a /= cols;
    for (uint32_t c = 0; c < cols; ++c) b += (x(c) - a) * (x(c) - a);
    b = 1 / std::sqrt(b / cols + eps);
  } else {
    for (uint32_t c = 0; c < cols; ++c) a += x(c) * x(c);
    a = 1 / std::sqrt(a / cols + eps);
  }
  for (uint32_t c = 0; c < cols; ++c) {
    switch (op) {
      case RowOp::Softmax: out[c] = std::exp(x(c) - a) / b; break;
      case RowOp::LayerNorm:
        out[c] = (x(c) - a) * b * asDouble(gamma[c]) + asDouble(beta[c]);
        break;
      case RowOp::RmsNorm: out[c] = x(c) * a * asDouble(gamma[c]); break;
    }
  }
}

// The operation's exact result, row by row, in double from the X inputs.
template <class X>
std::vector<double> rowwiseReference(RowOp op, const std::vector<X>& in,
                                     const std::vector<X>& gamma, const std::vector<X>& beta,
                                     uint32_t rows, uint32_t cols, double eps) {
  std::vector<double> out(in.size());
  for (uint32_t r = 0; r < rows; ++r) {
    referenceRow(op, in.data() + size_t{r} * cols, gamma, beta, cols, eps,
                 out.data() + size_t{r} * cols);
  }
  return out;
}

// Whether a result is as close to the reference as X's rounding and f32 math allow: a relative
// 2^-9 for Half, 2^-6 for BFloat16, 1e-5 for float; the norms' results (a difference and a sum:
// cancellation near zero) also that much of 8, their scale, absolutely; Half also its
// subnormals' spacing (2^-24: small softmax results are that coarse).
template <class X>
bool closeEnough(RowOp op, X got, double want) {
  const double rel = std::is_same_v<X, float> ? 1e-5 : std::is_same_v<X, Half> ? 0x1p-9 : 0x1p-6;
  const double absolute =
      (op == RowOp::Softmax ? 0.0 : 8 * rel) + (std::is_same_v<X, Half> ? 0x1p-24 : 0.0);
  return std::fabs(asDouble(got) - want) <= rel * std::fabs(want) + absolute;
}

// The index of the first result that is not closeEnough to the reference, or -1.
template <class X>
long long firstFar(RowOp op, const std::vector<X>& got, const std::vector<double>& want) {
  for (size_t i = 0; i < got.size(); ++i) {
    if (!closeEnough(op, got[i], want[i])) return static_cast<long long>(i);
  }
  return -1;
}

}  // namespace obsidian::testing
