// Kernels over packed pairs of 16-bit floats (Half2, BFloat162) that the simulator and the GPU
// tests share, with a plain C++ reference that is independent of the library: lanes decoded and
// rounded by its own integer code (not half.hpp's), exact results rounded to odd through the
// FPU's round-toward-zero mode and its inexact flag, then once to nearest even in the lane's
// format; min/max/neg/abs as CUDA documents __hmin2, __hmax2, __hneg2, __habs2.
#pragma once

#include <boost/hana/tuple.hpp>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <obsidian/obsidian.hpp>
#include <random>
#include <string>
#include <vector>

namespace obsidian::testing {

// The lane format of a pair type: exponent and mantissa bits (f16 5/10, bf16 8/7).
template <class P>
struct PairFormat {
  static constexpr bool half = std::is_same_v<P, Half2>;
  static constexpr int ebits = half ? 5 : 8;
  static constexpr int mbits = half ? 10 : 7;
  static constexpr int bias = (1 << (ebits - 1)) - 1;
  static constexpr uint32_t expMask = ((1u << ebits) - 1) << mbits;
  static constexpr uint32_t manMask = (1u << mbits) - 1;
};

// The value of a 16-bit lane (NaN: any NaN; its bits are not needed by the reference).
template <class P>
double refLaneValue(uint32_t b) {
  using F = PairFormat<P>;
  const double sign = (b & 0x8000u) ? -1.0 : 1.0;
  const uint32_t field = (b & F::expMask) >> F::mbits, man = b & F::manMask;
  if (field == (1u << F::ebits) - 1) return man ? NAN : sign * INFINITY;
  if (field == 0) return sign * std::ldexp(static_cast<double>(man), 1 - F::bias - F::mbits);
  return sign * std::ldexp(static_cast<double>(man | (1u << F::mbits)),
                           static_cast<int>(field) - F::bias - F::mbits);
}
template <class P>
bool refLaneNaN(uint32_t b) {
  using F = PairFormat<P>;
  return (b & F::expMask) == F::expMask && (b & F::manMask) != 0;
}

// x rounded to nearest even into the lane format (x rounded to odd at 53 bits, or exact): an
// integer significand at the quantum of x's binade, the tie decided by the remaining fraction.
template <class P>
uint32_t refLaneRound(double x) {
  using F = PairFormat<P>;
  if (std::isnan(x)) return 0x7fffu;  // the canonical NaN of both formats
  const uint32_t sign = std::signbit(x) ? 0x8000u : 0u;
  const double a = std::fabs(x);
  if (std::isinf(a)) return sign | F::expMask;
  if (a == 0) return sign;
  int e = 0;
  std::frexp(a, &e);                                      // a = f * 2^e, f in [0.5, 1)
  const int q = std::max(e - 1, 1 - F::bias) - F::mbits;  // the quantum's exponent
  const double scaled = std::ldexp(a, -q);                // exact
  uint64_t i = static_cast<uint64_t>(scaled);
  const double frac = scaled - static_cast<double>(i);
  if (frac > 0.5 || (frac == 0.5 && (i & 1u))) ++i;
  int qe = q;
  if (i == (uint64_t{2} << F::mbits)) {  // carried into the next binade
    i >>= 1;
    ++qe;
  }
  if (i < (uint64_t{1} << F::mbits)) return sign | static_cast<uint32_t>(i);  // subnormal
  const int field = qe + F::mbits + F::bias;
  if (field >= (1 << F::ebits) - 1) return sign | F::expMask;  // overflow: infinity
  return sign | (static_cast<uint32_t>(field) << F::mbits) |
         (static_cast<uint32_t>(i) & F::manMask);
}

// x + y rounded to odd (truncated, the last bit set when inexact), through the FPU: volatile so
// that the addition runs under the rounding mode set here.
inline double refOddSum(double x, double y) {
  volatile double vx = x, vy = y;
  std::feclearexcept(FE_INEXACT);
  std::fesetround(FE_TOWARDZERO);
  volatile double s = vx + vy;
  std::fesetround(FE_TONEAREST);
  const bool inexact = std::fetestexcept(FE_INEXACT) != 0;
  double r = s;
  if (inexact && std::isfinite(r) && r != 0) {
    r = std::bit_cast<double>(std::bit_cast<uint64_t>(r) | 1u);
  }
  return r;
}

template <class P>
uint32_t refLane(uint32_t w, int lane) {
  return (w >> (16 * lane)) & 0xffffu;
}

// One lane of each operation.
template <class P>
uint32_t refAdd(uint32_t x, uint32_t y, bool subtract) {
  const double a = refLaneValue<P>(x), b = refLaneValue<P>(y);
  return refLaneRound<P>(refOddSum(a, subtract ? -b : b));
}
template <class P>
uint32_t refMul(uint32_t x, uint32_t y) {
  return refLaneRound<P>(refLaneValue<P>(x) * refLaneValue<P>(y));  // exact: <= 22 bits
}
template <class P>
uint32_t refFma(uint32_t x, uint32_t y, uint32_t z) {
  const double p = refLaneValue<P>(x) * refLaneValue<P>(y);  // exact
  return refLaneRound<P>(refOddSum(p, refLaneValue<P>(z)));
}
// __hmin2 / __hmax2: a NaN gives the other operand, two NaNs the canonical NaN, -0 < +0.
template <class P>
uint32_t refMinMax(uint32_t x, uint32_t y, bool isMin) {
  const bool nx = refLaneNaN<P>(x), ny = refLaneNaN<P>(y);
  if (nx && ny) return 0x7fffu;
  if (nx) return y;
  if (ny) return x;
  const double a = refLaneValue<P>(x), b = refLaneValue<P>(y);
  if (a == b) {
    const bool xNeg = (x & 0x8000u) != 0;
    return (xNeg == isMin) ? x : y;
  }
  return ((a < b) == isMin) ? x : y;
}
// A lane converted to f32 and back (cvt.f32.f16 / the bf16 shift, then cvt.rn): NaN canonical.
template <class P>
uint32_t refThroughFloat(uint32_t x) {
  return refLaneNaN<P>(x) ? 0x7fffu : x;
}

template <class P, class F>
uint32_t refPerLane(uint32_t a, uint32_t b, F f) {
  return f(refLane<P>(a, 0), refLane<P>(b, 0)) | (f(refLane<P>(a, 1), refLane<P>(b, 1)) << 16);
}

// A random lane: random bits, NaNs with random payloads, infinities, zeros, subnormals, and
// small-significand values at nearby exponents (so that sums, products and fmas are often
// exact or exactly halfway between two values of the format: ties).
template <class P>
uint32_t randomLane(std::mt19937& rng) {
  using F = PairFormat<P>;
  const uint32_t sign = (rng() & 1u) << 15;
  switch (rng() % 8) {
    case 0:
    case 1: return rng() & 0xffffu;
    case 2: return sign | F::expMask | (1u + rng() % F::manMask);  // NaN
    case 3: return sign | ((rng() % 3 == 0) ? F::expMask : 0u);    // infinity or zero
    case 4: return sign | (rng() & F::manMask);                    // subnormal (or zero)
    default: {
      const double k = static_cast<double>(1 + rng() % 63);
      const int e = static_cast<int>(rng() % 9) - 4;
      return refLaneRound<P>(std::ldexp(k, e)) | sign;  // exact: k has 6 bits
    }
  }
}

template <class P>
std::vector<P> randomPairs(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<P> v(n);
  for (P& p : v) p = P::fromBits(randomLane<P>(rng) | (randomLane<P>(rng) << 16));
  return v;
}

// Every operation on pairs, element by element: a + b, a - b, a * b, fma(a, b, c), -a, abs(a),
// min(a, b), max(a, b), pack2(highLane(a), lowLane(b)), a's word with bit 16 flipped (bitcast
// both ways), the lanes of c through f32 (floats2Pair of lowLane and highLane as floats).
template <class P>
Kernel pairOpsKernel() {
  return capture("pair_ops", 128, [](DPull<Exp<P>> a, DPull<Exp<P>> b, DPull<Exp<P>> c) {
    return push<Grid>(zipWith(
        [](const auto& xy, const Exp<P>& z) {
          const Exp<P> x = hana::at_c<0>(xy), y = hana::at_c<1>(xy);
          return hana::make_tuple(
              x + y, x - y, x * y, fma(x, y, z), -x, abs(x), min(x, y), max(x, y),
              pack2(highLane(x), lowLane(y)), bitcast<P>(bitcast<uint32_t>(x) ^ 0x10000u),
              floats2Pair<P>(cast<float>(lowLane(z)), cast<float>(highLane(z))));
        },
        zip(a, b), c));
  });
}

template <class P>
struct PairResults {
  static constexpr size_t kOps = 11;
  static constexpr const char* kNames[kOps] = {"sum",   "difference", "product",    "fma",
                                               "neg",   "abs",        "min",        "max",
                                               "pack2", "bitcast",    "floats2Pair"};
  std::vector<P> out[kOps];
  explicit PairResults(size_t n = 0) {
    for (auto& o : out) o.resize(n);
  }
};

template <class P>
PairResults<P> pairOpsReference(const std::vector<P>& a, const std::vector<P>& b,
                                const std::vector<P>& c) {
  PairResults<P> r(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const uint32_t x = a[i].bits(), y = b[i].bits(), z = c[i].bits();
    const uint32_t lanes[PairResults<P>::kOps] = {
        refPerLane<P>(x, y, [](uint32_t p, uint32_t q) { return refAdd<P>(p, q, false); }),
        refPerLane<P>(x, y, [](uint32_t p, uint32_t q) { return refAdd<P>(p, q, true); }),
        refPerLane<P>(x, y, [](uint32_t p, uint32_t q) { return refMul<P>(p, q); }),
        refFma<P>(refLane<P>(x, 0), refLane<P>(y, 0), refLane<P>(z, 0)) |
            (refFma<P>(refLane<P>(x, 1), refLane<P>(y, 1), refLane<P>(z, 1)) << 16),
        x ^ 0x80008000u,
        x & 0x7fff7fffu,
        refPerLane<P>(x, y, [](uint32_t p, uint32_t q) { return refMinMax<P>(p, q, true); }),
        refPerLane<P>(x, y, [](uint32_t p, uint32_t q) { return refMinMax<P>(p, q, false); }),
        (x >> 16) | (y << 16),
        x ^ 0x10000u,
        refThroughFloat<P>(z & 0xffffu) | (refThroughFloat<P>(z >> 16) << 16)};
    for (size_t k = 0; k < PairResults<P>::kOps; ++k) r.out[k][i] = P::fromBits(lanes[k]);
  }
  return r;
}

// The operations whose results differ, each with its first differing element ("" when none).
template <class P>
std::string differingPairs(const PairResults<P>& got, const PairResults<P>& want,
                           const std::vector<P>& a, const std::vector<P>& b,
                           const std::vector<P>& c) {
  std::string s;
  char buf[160];
  for (size_t k = 0; k < PairResults<P>::kOps; ++k) {
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < got.out[k].size(); ++i) {
      if (got.out[k][i].bits() != want.out[k][i].bits() && wrong++ == 0) first = i;
    }
    if (wrong == 0) continue;
    std::snprintf(buf, sizeof buf,
                  "%s%s: %zu wrong, first %zu (0x%08x, 0x%08x, 0x%08x) -> 0x%08x, "
                  "want 0x%08x",
                  s.empty() ? "" : "; ", PairResults<P>::kNames[k], wrong, first, a[first].bits(),
                  b[first].bits(), c[first].bits(), got.out[k][first].bits(),
                  want.out[k][first].bits());
    s += buf;
  }
  return s;
}

// Pairs through memory: each block forces its 64 pairs in shared memory and writes them
// reversed (by blocks of 64), and a second output copies the input with vectors<W> loads and
// unvectors<W> stores (one 8- or 16-byte access of W pairs).
template <class P, uint32_t W>
Kernel pairMemoryKernel() {
  return capture("pair_memory", 64, [](DPull<Exp<P>> in) {
    auto reversed = pConcat(fmap(
        [](const SPull<Exp<P>>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            const auto s = forcePull(p, c);
            return push<Block>(mkPull(64u, [s](const EWord32& i) { return s[63u - i]; }));
          });
        },
        splitUp(64, in)));
    return hana::make_tuple(reversed, unvectors<W>(push<Grid>(vectors<W>(in))));
  });
}

// atomicAdd of pairs: value i is added into bins[i % 16] (a shared array per block, then the
// global bins), with integer-valued lanes so that every partial sum is exact and the result
// does not depend on the order of the additions.
template <class P>
Kernel pairAtomicKernel() {
  return capture("pair_atomics", 64, [](DPull<Exp<P>> values, DMutable<P> bins) {
    return pConcat(fmap(
        [bins](const SPull<Exp<P>>& c) {
          return exec<Block>([c, bins](const Program<Block>& p) {
            const SMutable<P> local = newShared<P>(p, 16);
            p.forAll(16u, [&](const Program<Thread>& t, const EWord32& i) {
              write(t, local, i, Exp<P>(P{}));
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

// permuteInto with Sum of pairs: value i is added into bins[i % 16] by atomicAdd (generic).
template <class P>
Kernel pairScatterAddKernel() {
  return capture("pair_scatter_add", 64, [](DPull<Exp<P>> in, DMutable<P> bins) {
    return effect([=](const Program<Grid>& g) {
      permuteInto(g, bins, Sum{}, push<Grid>(in), [](const EWord32& i) { return i % 16u; });
    });
  });
}

// A block's pairs through grid state (newGlobal: read through L2 with __ldcg, written with
// __stcg, which have no overloads of obsidian_half2: the printer moves its word).
inline Kernel pairGridStateKernel() {
  return capture("pair_grid_state", 64, [](DPull<EHalf2> in) {
    return pConcat(fmap(
        [](const SPull<EHalf2>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            const SMutable<Half2> g = newGlobal<Half2>(p, 64);
            p.forAll(64u,
                     [&](const Program<Thread>& t, const EWord32& i) { write(t, g, i, c[i]); });
            p.sync();
            return push<Block>(mkPull(64u, [g](const EWord32& i) { return g[63u - i]; }));
          });
        },
        splitUp(64, in)));
  });
}

// Pairs whose lanes are -1, 0 or 1: a sum of at most 255 of them and a bin's start, in any
// order, passes only through integers of magnitude at most 256, which bf16 (8 significant bits)
// and half hold exactly, so atomic sums do not depend on the order the GPU adds in.
template <class P>
std::vector<P> integerPairs(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<P> v(n);
  for (P& p : v) {
    const auto lane = [&] {
      return refLaneRound<P>(static_cast<double>(static_cast<int>(rng() % 3) - 1));
    };
    p = P::fromBits(lane() | (lane() << 16));
  }
  return v;
}

// bins[i % 16] += values[i] for the first n values, lane by lane.
template <class P>
std::vector<P> pairSumReference(const std::vector<P>& values, std::vector<P> bins, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    P& b = bins[i % 16];
    b = P::fromBits(refPerLane<P>(b.bits(), values[i].bits(),
                                  [](uint32_t p, uint32_t q) { return refAdd<P>(p, q, false); }));
  }
  return bins;
}

template <class P>
std::vector<P> pairAtomicReference(const std::vector<P>& values, std::vector<P> bins) {
  return pairSumReference(values, bins, values.size() / 64 * 64);
}
// smallShuffleKernel's first output (tests/half_kernels.hpp) for pairs: in each warp's 32
// values, lane l's max(in[l ^ 1], in[l ^ 16]) + in[l], lane by lane.
template <class P>
std::vector<P> pairShuffleReference(const std::vector<P>& in) {
  std::vector<P> out(in.size());
  for (size_t w = 0; w + 32 <= in.size(); w += 32) {
    for (size_t l = 0; l < 32; ++l) {
      const uint32_t m =
          refPerLane<P>(in[w + (l ^ 1)].bits(), in[w + (l ^ 16)].bits(),
                        [](uint32_t p, uint32_t q) { return refMinMax<P>(p, q, false); });
      out[w + l] = P::fromBits(refPerLane<P>(
          m, in[w + l].bits(), [](uint32_t p, uint32_t q) { return refAdd<P>(p, q, false); }));
    }
  }
  return out;
}

}  // namespace obsidian::testing
