// NaN bit patterns through a kernel (issue 40): signalling and quiet NaNs with payloads and
// both signs, loaded, stored, selected, bit-cast, passed as a scalar and computed with. The
// simulator and the GPU must agree bit for bit; the reference below spells out what the GPU
// does (measured on the H100 and H200, sm_90), independently of the library's scalar_ops.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <obsidian/obsidian.hpp>
#include <vector>

namespace obsidian::testing {

// f32 bit patterns: NaNs (signalling, quiet, payloads, both signs), infinities, zeros, normals.
inline std::vector<uint32_t> f32Patterns() {
  return {0x7fa00001u, 0xffa00001u, 0x7fc12345u, 0xffc12345u, 0x7f800001u,
          0x7fffffffu, 0x7fd00000u, 0xff800000u, 0x7f800000u, 0x00000000u,
          0x80000000u, 0x3f800000u, 0xc0200000u, 0x00000001u};
}
inline std::vector<uint64_t> f64Patterns() {
  return {0x7ff4000000000001ull, 0xfff4000000000001ull, 0x7ff8123456789abcull,
          0x7ff0000000000001ull, 0x7ff4000020000000ull, 0xfff0000000000000ull,
          0x7ff0000000000000ull, 0x0000000000000000ull, 0x8000000000000000ull,
          0x3ff0000000000000ull, 0xc004000000000000ull};
}

inline constexpr uint32_t kF32NanOps = 16;
inline constexpr uint32_t kF64NanOps = 13;

// For every pair (x, y) of the patterns (x = a[i], y = b[i]) and a scalar s: kF32NanOps results
// as bits, op k of pair i at out[i * kF32NanOps + k].
inline Kernel f32NanKernel() {
  return capture("f32nan", 64, [](DPull<EFloat> a, DPull<EFloat> b, EFloat s) {
    const EWord32 n = min(len(a), len(b));
    return push<Grid>(DPull<EWord32>(n * kF32NanOps, [a, b, s](const EWord32& i) {
      const EFloat x = a[i / kF32NanOps], y = b[i / kF32NanOps];
      const EWord32 k = i % kF32NanOps;
      const EDouble wide = cast<double>(x);
      const EWord64 wideBits = bitcast<uint64_t>(wide);
      const EWord32 r[kF32NanOps] = {
          bitcast<uint32_t>(x),  // a move
          bitcast<uint32_t>(x + y),
          bitcast<uint32_t>(x - y),
          bitcast<uint32_t>(x * y),
          bitcast<uint32_t>(x / y),
          bitcast<uint32_t>(min(x, y)),
          bitcast<uint32_t>(max(x, y)),
          bitcast<uint32_t>(-x),
          bitcast<uint32_t>(fabs(x)),
          bitcast<uint32_t>(sqrt(x)),
          bitcast<uint32_t>(ifThenElse(x > y, x, y)),
          cast<uint32_t>(wideBits >> 32u),
          cast<uint32_t>(wideBits),
          bitcast<uint32_t>(s),
          bitcast<uint32_t>(cast<float>(wide)),
          bitcast<uint32_t>(bitcast<float>(bitcast<uint32_t>(x) ^ 0x80000000u))};
      EWord32 v = r[kF32NanOps - 1];
      for (uint32_t j = kF32NanOps - 1; j-- > 0;) v = ifThenElse(k == j, r[j], v);
      return v;
    }));
  });
}

inline Kernel f64NanKernel() {
  return capture("f64nan", 64, [](DPull<EDouble> a, DPull<EDouble> b, EDouble s) {
    const EWord32 n = min(len(a), len(b));
    return push<Grid>(DPull<EWord64>(n * kF64NanOps, [a, b, s](const EWord32& i) {
      const EDouble x = a[i / kF64NanOps], y = b[i / kF64NanOps];
      const EWord32 k = i % kF64NanOps;
      const EWord64 r[kF64NanOps] = {bitcast<uint64_t>(x),
                                     bitcast<uint64_t>(x + y),
                                     bitcast<uint64_t>(x - y),
                                     bitcast<uint64_t>(x * y),
                                     bitcast<uint64_t>(x / y),
                                     bitcast<uint64_t>(min(x, y)),
                                     bitcast<uint64_t>(max(x, y)),
                                     bitcast<uint64_t>(-x),
                                     bitcast<uint64_t>(fabs(x)),
                                     bitcast<uint64_t>(sqrt(x)),
                                     bitcast<uint64_t>(ifThenElse(x > y, x, y)),
                                     bitcast<uint64_t>(s),
                                     cast<uint64_t>(bitcast<uint32_t>(cast<float>(x)))};
      EWord64 v = r[kF64NanOps - 1];
      for (uint32_t j = kF64NanOps - 1; j-- > 0;) v = ifThenElse(k == j, r[j], v);
      return v;
    }));
  });
}

// NaN constants selected by the input v: the folded bit casts of 0x7fa00001 (v = 0) and of
// 0xfff4000000000003 (v = 2: the high word), NaN * 1.0f folded (1), and a NaN constant in
// arithmetic with a value known only at run time, f32 (3) and f64 (4: the high word), which
// the CUDA compiler would fold with the constant's payload where the GPU computes its own
// NaN; otherwise the high word of -0.5.
inline Kernel nanConstantKernel() {
  return capture("nanConstant", 32, [](DPull<EWord32> in) {
    return push<Grid>(fmap(
        [](const EWord32& v) {
          const EFloat snan = bitcast<float>(EWord32(0x7fa00001u));
          const EDouble dnan = bitcast<double>(EWord64(0xfff4000000000003ull));
          const EWord32 single = bitcast<uint32_t>(
              ifThenElse(v == 0u, snan, ifThenElse(v == 1u, snan * 1.0f, cast<float>(v) * snan)));
          const EDouble wide =
              ifThenElse(v == 2u, dnan, ifThenElse(v == 4u, cast<double>(v) + dnan, EDouble(-0.5)));
          const EWord32 high = cast<uint32_t>(bitcast<uint64_t>(wide) >> 32u);
          return ifThenElse(v < 2u || v == 3u, single, high);
        },
        in));
  });
}
inline std::vector<uint32_t> nanConstantReference() {
  return {0x7fa00001u, 0x7fffffffu, 0xfff40000u, 0x7fffffffu, 0xfffc0000u, 0xbfe00000u};
}

// f64 NaN constants whose low word reads as an f32 signalling NaN (fuzz/RESULTS.md, finding 5:
// ptxas quieted such a word in an immediate): element v is, by v % 4, the low word of the
// constant, the high word of v + the constant (the constant quieted: bit 51 set), the low word
// of the constant, or the two words of the quieted one xor-ed (the halves used apart, as in the
// fuzzer's program). With and without subexpression sharing.
inline constexpr uint64_t kLowSignallingNans[] = {0x7ff000007fa9e863ull, 0xfff12345ffa00001ull};
inline Kernel nanLowWordKernel(bool share) {
  CaptureOptions options;
  options.shareSubexpressions = share;
  return capture(
      share ? "nanLowWord" : "nanLowWordUnshared", 32,
      [](DPull<EWord32> in) {
        return push<Grid>(fmap(
            [](const EWord32& v) {
              EWord32 word = 0u;
              for (size_t c = 0; c < std::size(kLowSignallingNans); ++c) {
                const EDouble d = EDouble(std::bit_cast<double>(kLowSignallingNans[c]));
                // v + d folds to d quieted: two f64 NaN constants, selected at run time.
                const EWord64 bits =
                    bitcast<uint64_t>(ifThenElse(v % 2u == 0u, d, cast<double>(v) + d));
                const EWord32 lo = cast<uint32_t>(bits), hi = cast<uint32_t>(bits >> 32u);
                const EWord32 pick =
                    ifThenElse(v % 4u == 0u, lo,
                               ifThenElse(v % 4u == 1u, hi, ifThenElse(v % 4u == 2u, lo, hi ^ lo)));
                word = ifThenElse(v / 4u == static_cast<uint32_t>(c), pick, word);
              }
              return word;
            },
            in));
      },
      options);
}
inline std::vector<uint32_t> nanLowWordReference() {
  std::vector<uint32_t> out;
  for (uint64_t c : kLowSignallingNans) {
    const uint32_t lo = static_cast<uint32_t>(c), hi = static_cast<uint32_t>(c >> 32);
    out.insert(out.end(), {lo, hi | 0x80000u, lo, (hi | 0x80000u) ^ lo});
  }
  return out;
}

// ---------------------------------------------------------------- the GPU's rules, spelled out
namespace nanref {
inline bool nan32(uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu); }
inline bool nan64(uint64_t b) {
  return (b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0xfffffffffffffull);
}
inline float f(uint32_t b) { return std::bit_cast<float>(b); }
inline uint32_t bits(float v) { return std::bit_cast<uint32_t>(v); }
inline double d(uint64_t b) { return std::bit_cast<double>(b); }
inline uint64_t bits(double v) { return std::bit_cast<uint64_t>(v); }
// An f32 operation with a NaN result gives 0x7fffffff.
inline uint32_t arith32(float r) { return std::isnan(r) ? 0x7fffffffu : bits(r); }
// An f64 one gives its first NaN operand quieted, else 0xfff8000000000000.
inline uint64_t arith64(double r, uint64_t x, uint64_t y) {
  if (!std::isnan(r)) return bits(r);
  if (nan64(x)) return x | (1ull << 51);
  if (nan64(y)) return y | (1ull << 51);
  return 0xfff8000000000000ull;
}
template <class B, class F>
B minMax(B x, B y, bool isMax, bool (*isNan)(B), F value) {
  if (isNan(x) && isNan(y)) return x;  // the caller makes it the type's NaN
  if (isNan(x)) return y;
  if (isNan(y)) return x;
  if (value(x) == value(y)) {  // +0 and -0: -0 is the smaller
    const bool xNeg = std::signbit(value(x));
    return (xNeg != isMax) ? x : y;
  }
  return (value(x) < value(y)) != isMax ? x : y;
}
}  // namespace nanref

inline std::vector<uint32_t> f32NanReference(const std::vector<uint32_t>& a,
                                             const std::vector<uint32_t>& b, uint32_t s) {
  using namespace nanref;
  std::vector<uint32_t> out;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const uint32_t xb = a[i], yb = b[i];
    const float x = f(xb), y = f(yb);
    auto mm = [&](bool isMax) {
      const uint32_t r = minMax<uint32_t>(xb, yb, isMax, nan32, f);
      return nan32(r) ? 0x7fffffffu : r;
    };
    // f32 -> f64 quiets a NaN and keeps its sign and payload.
    const uint64_t wide = nan32(xb) ? ((uint64_t{xb >> 31} << 63) | 0x7ff8000000000000ull |
                                       (uint64_t{xb & 0x7fffffu} << 29))
                                    : bits(static_cast<double>(x));
    const uint32_t back = nan32(xb) ? (xb | 0x400000u) : xb;
    const uint32_t r[kF32NanOps] = {xb,
                                    arith32(x + y),
                                    arith32(x - y),
                                    arith32(x * y),
                                    arith32(x / y),
                                    mm(false),
                                    mm(true),
                                    arith32(-x),
                                    arith32(std::fabs(x)),
                                    arith32(std::sqrt(x)),
                                    x > y ? xb : yb,
                                    static_cast<uint32_t>(wide >> 32),
                                    static_cast<uint32_t>(wide),
                                    s,
                                    back,
                                    xb ^ 0x80000000u};
    out.insert(out.end(), r, r + kF32NanOps);
  }
  return out;
}

inline std::vector<uint64_t> f64NanReference(const std::vector<uint64_t>& a,
                                             const std::vector<uint64_t>& b, uint64_t s) {
  using namespace nanref;
  std::vector<uint64_t> out;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const uint64_t xb = a[i], yb = b[i];
    const double x = d(xb), y = d(yb);
    auto mm = [&](bool isMax) {
      const uint64_t r = minMax<uint64_t>(xb, yb, isMax, nan64, d);
      return nan64(r) ? (r | (1ull << 51)) : r;
    };
    // f64 -> f32 quiets a NaN, keeps its sign and the payload's top 22 bits.
    const uint64_t narrow = nan64(xb) ? ((xb >> 63) << 31) | 0x7fc00000u | ((xb >> 29) & 0x3fffffu)
                                      : bits(static_cast<float>(x));
    const uint64_t r[kF64NanOps] = {xb,
                                    arith64(x + y, xb, yb),
                                    arith64(x - y, xb, yb),
                                    arith64(x * y, xb, yb),
                                    arith64(x / y, xb, yb),
                                    mm(false),
                                    mm(true),
                                    arith64(-x, xb, xb),
                                    arith64(std::fabs(x), xb, xb),
                                    arith64(std::sqrt(x), xb, xb),
                                    x > y ? xb : yb,
                                    s,
                                    narrow};
    out.insert(out.end(), r, r + kF64NanOps);
  }
  return out;
}

// Bit patterns as the floats (F: float or double) that hold them.
template <class F, class B>
std::vector<F> floatsOf(const std::vector<B>& bits) {
  std::vector<F> v(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) v[i] = std::bit_cast<F>(bits[i]);
  return v;
}

// Every ordered pair of the patterns, as two arrays of bits.
template <class B>
void allPairs(const std::vector<B>& patterns, std::vector<B>& a, std::vector<B>& b) {
  for (B x : patterns) {
    for (B y : patterns) {
      a.push_back(x);
      b.push_back(y);
    }
  }
}

}  // namespace obsidian::testing
