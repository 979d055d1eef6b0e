// Kernels that write with vector stores (unvectors<W>) that the simulator and GPU tests share,
// with their plain C++ references. Each reverses the lanes of every W-element vector of its
// input (so a lane stored in the wrong place shows) and copies the last len % W elements.
#pragma once

#include <boost/hana/reverse.hpp>
#include <cstdint>
#include <cstring>
#include <obsidian/obsidian.hpp>
#include <random>
#include <string>
#include <vector>

namespace obsidian::testing {

// n random elements of X: every bit pattern (float NaNs and infinities included) is as likely.
template <class X>
std::vector<X> randomBitPatterns(size_t n, uint32_t seed) {
  std::mt19937_64 g(seed);
  std::vector<X> v(n);
  for (X& x : v) {
    const uint64_t bits = g();
    if constexpr (SmallFloatScalar<X>) {
      x = X::fromBits(static_cast<decltype(X{}.bits)>(bits));
    } else {
      std::memcpy(&x, &bits, sizeof(X));  // little-endian: the low bytes
    }
  }
  return v;
}

// Whether two arrays hold the same bits (NaNs compare by their bits).
template <class X>
bool sameBits(const std::vector<X>& a, const std::vector<X>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if constexpr (SmallFloatScalar<X>) {
      if (a[i].bits != b[i].bits) return false;
    } else if (std::memcmp(&a[i], &b[i], sizeof(X)) != 0) {
      return false;
    }
  }
  return true;
}

// out = in with the lanes of each whole W-element vector reversed, written one vector store
// per vector; the tail (the last len % W elements) after it, one store per element.
template <class X, uint32_t W>
Kernel reverseLanes(const std::string& name, uint32_t threads = 64) {
  return capture(name, threads, [](DPull<Exp<X>> in) {
    const auto v = vectors<W>(in);
    const EWord32 whole = len(v) * W;
    const auto vectorsPart = unvectors<W>(
        push<Grid>(fmap([](const Vector<W, X>& x) { return Vector<W, X>(hana::reverse(x)); }, v)));
    const auto tail = push<Grid>(
        mkPull(len(in) - whole, [in, whole](const EWord32& i) { return in[whole + i]; }));
    return concP(vectorsPart, tail);
  });
}

template <class X, uint32_t W>
std::vector<X> reverseLanesReference(const std::vector<X>& in) {
  std::vector<X> out = in;
  for (size_t j = 0; j + W <= in.size(); j += W) {
    for (uint32_t k = 0; k < W; ++k) out[j + k] = in[j + W - 1 - k];
  }
  return out;
}

}  // namespace obsidian::testing
