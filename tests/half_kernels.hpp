// Kernels over half precision and 8-bit floats (Half, BFloat16, Fp8E4M3, Fp8E5M2) that the
// simulator, NVRTC and GPU tests share, with plain C++ references that compute as the printed
// code does (f32 arithmetic, f64 for the transcendental functions, one rounding to the format)
// through the host types of obsidian/half.hpp: every unary operation, the binary operations,
// the conversions to and from every type, and wide loads (vectors<W>).
#pragma once

#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <cmath>
#include <cstdint>
#include <obsidian/obsidian.hpp>
#include <random>
#include <string>
#include <vector>

namespace obsidian::testing {

// The unary operations of a Half or BFloat16 (the IR's float math, and negation).
inline const std::vector<UnOp>& smallUnaryOps() {
  static const std::vector<UnOp> ops = {UnOp::Neg,  UnOp::Sqrt,  UnOp::Rsqrt, UnOp::Exp, UnOp::Exp2,
                                        UnOp::Log,  UnOp::Log2,  UnOp::Sin,   UnOp::Cos, UnOp::Tan,
                                        UnOp::Fabs, UnOp::Floor, UnOp::Ceil};
  return ops;
}

template <class X>
Exp<X> applyUnary(UnOp op, const Exp<X>& x) {
  switch (op) {
    case UnOp::Neg: return -x;
    case UnOp::Sqrt: return sqrt(x);
    case UnOp::Rsqrt: return rsqrt(x);
    case UnOp::Exp: return exp(x);
    case UnOp::Exp2: return exp2(x);
    case UnOp::Log: return log(x);
    case UnOp::Log2: return log2(x);
    case UnOp::Sin: return sin(x);
    case UnOp::Cos: return cos(x);
    case UnOp::Tan: return tan(x);
    case UnOp::Fabs: return fabs(x);
    case UnOp::Floor: return floor(x);
    case UnOp::Ceil: return ceil(x);
    default: return x;
  }
}

// out[i] = op(in[i]).
template <class X>
Kernel smallUnaryKernel(UnOp op) {
  return capture("small_unary" + std::to_string(static_cast<int>(op)), 256, [op](DPull<Exp<X>> in) {
    return push<Grid>(fmap([op](const Exp<X>& x) { return applyUnary<X>(op, x); }, in));
  });
}

// The reference: as printed, in f32 (neg, sqrt, fabs, floor, ceil) or f64, rounded once.
template <class X>
X unaryReference(UnOp op, X x) {
  const float f = static_cast<float>(x);
  const double d = static_cast<double>(f);
  switch (op) {
    case UnOp::Neg: return X(-f);
    case UnOp::Sqrt: return X(std::sqrt(f));
    case UnOp::Rsqrt: return X(1.0 / std::sqrt(d));
    case UnOp::Exp: return X(std::exp(d));
    case UnOp::Exp2: return X(std::exp2(d));
    case UnOp::Log: return X(std::log(d));
    case UnOp::Log2: return X(std::log2(d));
    case UnOp::Sin: return X(std::sin(d));
    case UnOp::Cos: return X(std::cos(d));
    case UnOp::Tan: return X(std::tan(d));
    case UnOp::Fabs: return X(std::fabs(f));
    case UnOp::Floor: return X(std::floor(f));
    case UnOp::Ceil: return X(std::ceil(f));
    default: return x;
  }
}

// Every bit pattern of X (65,536 or 256 values), in order.
template <class X>
std::vector<X> allPatterns() {
  std::vector<X> v(size_t{1} << (8 * sizeof(X)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = X::fromBits(static_cast<decltype(X::bits)>(i));
  return v;
}

// Random values of X: random bits, with every 5th a small integer (exact cases) and every 7th a
// NaN with a random payload.
template <class X>
std::vector<X> randomSmall(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<X> v(n);
  using Bits = decltype(X::bits);
  for (size_t i = 0; i < n; ++i) {
    v[i] = X::fromBits(static_cast<Bits>(rng()));
    if (i % 5 == 1) v[i] = X(static_cast<float>(static_cast<int>(rng() % 17) - 8));
    if (i % 7 == 3) v[i] = X::fromBits(static_cast<Bits>(X(NAN).bits | (rng() & 1)));
  }
  return v;
}

// The binary operations and comparisons of X, element by element: out0..out6 are a + b, a - b,
// a * b, a / b, min, max, pow; out7 packs the six comparisons as bits (==, !=, <, <=, >, >=).
template <class X>
Kernel smallBinaryKernel() {
  return capture("small_binary", 256, [](DPull<Exp<X>> a, DPull<Exp<X>> b) {
    return push<Grid>(zipWith(
        [](const Exp<X>& x, const Exp<X>& y) {
          const EWord32 c = cast<uint32_t>(x == y) | cast<uint32_t>(x != y) << 1u |
                            cast<uint32_t>(x < y) << 2u | cast<uint32_t>(x <= y) << 3u |
                            cast<uint32_t>(x > y) << 4u | cast<uint32_t>(x >= y) << 5u;
          return hana::make_tuple(x + y, x - y, x * y, x / y, min(x, y), max(x, y), pow(x, y), c);
        },
        a, b));
  });
}

template <class X>
struct BinaryResults {
  std::vector<X> sum, difference, product, quotient, minimum, maximum, power;
  std::vector<uint32_t> comparisons;
  explicit BinaryResults(size_t n = 0)
      : sum(n),
        difference(n),
        product(n),
        quotient(n),
        minimum(n),
        maximum(n),
        power(n),
        comparisons(n) {}
  bool operator==(const BinaryResults&) const = default;
};

// The names of the results that differ between a and b ("" when none does).
template <class X>
std::string differingResults(const BinaryResults<X>& a, const BinaryResults<X>& b) {
  std::string names;
  auto note = [&names](bool same, const char* name) {
    if (!same) names += std::string(names.empty() ? "" : ", ") + name;
  };
  note(a.sum == b.sum, "sum");
  note(a.difference == b.difference, "difference");
  note(a.product == b.product, "product");
  note(a.quotient == b.quotient, "quotient");
  note(a.minimum == b.minimum, "minimum");
  note(a.maximum == b.maximum, "maximum");
  note(a.power == b.power, "power");
  note(a.comparisons == b.comparisons, "comparisons");
  return names;
}

template <class X>
BinaryResults<X> binaryReference(const std::vector<X>& a, const std::vector<X>& b) {
  BinaryResults<X> r(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const float x = static_cast<float>(a[i]), y = static_cast<float>(b[i]);
    r.sum[i] = X(x + y);
    r.difference[i] = X(x - y);
    r.product[i] = X(x * y);
    r.quotient[i] = X(x / y);
    r.minimum[i] = X(std::fmin(x, y));
    r.maximum[i] = X(std::fmax(x, y));
    r.power[i] = X(std::pow(static_cast<double>(x), static_cast<double>(y)));
    r.comparisons[i] = uint32_t{x == y} | uint32_t{x != y} << 1 | uint32_t{x < y} << 2 |
                       uint32_t{x <= y} << 3 | uint32_t{x > y} << 4 | uint32_t{x >= y} << 5;
  }
  return r;
}

// out[i] = cast<To>(in[i]).
template <class To, class From>
Kernel convertKernel(const std::string& name) {
  return capture(name, 256, [](DPull<Exp<From>> in) {
    return push<Grid>(fmap([](const Exp<From>& x) { return cast<To>(x); }, in));
  });
}

// out[i] = bits of cast<To>(cast<float>(in[i]) * s): a scalar parameter of type float, and the
// round trip through f32 with a scale.
template <class X>
Kernel scaledKernel() {
  return capture("small_scaled", 128, [](DPull<Exp<X>> in, Exp<X> s) {
    return push<Grid>(fmap([s](const Exp<X>& x) { return x * s + Exp<X>(0.5); }, in));
  });
}

// vectors<W> of X: out[j] hashes the bits of vector j's lanes in order (h = h * 31 + bits),
// so that a lane read from the wrong bytes changes it.
template <class X, uint32_t W>
Kernel smallVectorKernel() {
  return capture("small_vectors", 64, [](DPull<Exp<X>> in) {
    return push<Grid>(fmap(
        [](const Vector<W, X>& v) {
          EWord32 h(0u);
          hana::for_each(v, [&h](const Exp<X>& x) { h = h * 31u + bits32(x); });
          return h;
        },
        vectors<W>(in)));
  });
}

template <class X, uint32_t W>
std::vector<uint32_t> smallVectorReference(const std::vector<X>& in) {
  std::vector<uint32_t> out(in.size() / W);
  for (size_t j = 0; j < out.size(); ++j) {
    for (uint32_t k = 0; k < W; ++k) out[j] = out[j] * 31u + in[j * W + k].bits;
  }
  return out;
}

// Registers of X moved between lanes: each warp holds its 32 values in a register array
// (forceReg); lane l's out0 is max(r[l ^ 1], r[l ^ 16]) + r[l] (two shuffles, f32 arithmetic
// rounded twice), out1 the lanes whose value has lane l's bits (matchAny).
template <class X>
Kernel smallShuffleKernel() {
  return capture("small_shuffles", 64, [](DPull<Exp<X>> in) {
    return pConcat(fmap(
        [](const SPull<Exp<X>>& block) {
          return pConcat(fmap(
              [](const SPull<Exp<X>>& w) {
                return exec<Warp>([w](const Program<Warp>& q) {
                  const auto r = forceReg(q, push<Warp>(w));
                  const auto m = matchAny(q, w);
                  return push<Warp>(mkPull(32u, [r, m](const EWord32& l) {
                    return hana::make_tuple(max(r[l ^ 1u], r[l ^ 16u]) + r[l], m[l]);
                  }));
                });
              },
              splitUp(32, block)));
        },
        splitUp(64, in)));
  });
}

template <class X>
std::pair<std::vector<X>, std::vector<uint32_t>> smallShuffleReference(const std::vector<X>& in) {
  std::vector<X> out(in.size());
  std::vector<uint32_t> match(in.size());
  for (size_t w = 0; w + 32 <= in.size(); w += 32) {
    for (size_t l = 0; l < 32; ++l) {
      const float m =
          std::fmax(static_cast<float>(in[w + (l ^ 1)]), static_cast<float>(in[w + (l ^ 16)]));
      out[w + l] = X(static_cast<float>(X(m)) + static_cast<float>(in[w + l]));
      for (size_t k = 0; k < 32; ++k) {
        if (in[w + k].bits == in[w + l].bits) match[w + l] |= 1u << k;
      }
    }
  }
  return {out, match};
}

// atomicAdd of X: each block of 64 sums its values into 16 shared bins (value i into bin
// i % 16), then into the global `bins`; the values are copied to the output. With small integer
// values every partial sum is exact, so the result does not depend on the additions' order.
template <class X>
Kernel smallAtomicKernel() {
  return capture("small_atomics", 64, [](DPull<Exp<X>> values, DMutable<X> bins) {
    return pConcat(fmap(
        [bins](const SPull<Exp<X>>& c) {
          return exec<Block>([c, bins](const Program<Block>& p) {
            const SMutable<X> local = newShared<X>(p, 16);
            p.forAll(16u, [&](const Program<Thread>& t, const EWord32& i) {
              write(t, local, i, Exp<X>(0));
            });
            p.sync();
            p.forAll(64u, [&](const Program<Thread>& t, const EWord32& i) {
              atomicAdd(t, local, i % 16u, c[i]);
            });
            p.sync();
            p.forAll(16u, [&](const Program<Thread>& t, const EWord32& i) {
              atomicAdd(t, bins, i, local[i]);
            });
            return push<Block>(c);
          });
        },
        splitUp(64, values)));
  });
}

template <class X>
std::vector<X> smallAtomicReference(const std::vector<X>& values, std::vector<X> bins) {
  for (size_t i = 0; i < values.size() / 64 * 64; ++i) {
    X& b = bins[i % 16];
    b = X(static_cast<float>(b) + static_cast<float>(values[i]));
  }
  return bins;
}

// Bits of a vector of host small floats (for comparing with NaNs: operator== is bitwise).
template <class X>
std::vector<uint32_t> bitsOf(const std::vector<X>& v) {
  std::vector<uint32_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = v[i].bits;
  return b;
}

}  // namespace obsidian::testing
