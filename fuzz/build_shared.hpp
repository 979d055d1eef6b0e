// What the 1-D kernels of build.cpp and the vector stores' kernels of build_store.cpp share: the
// kernel's parameters (the input, its divisor, the mutable arrays), the grid-level array of
// words, and the block programs over their chunks. The vector stores have a translation unit of
// their own: their element types and widths make as much code as the rest of build.cpp, and
// the two compile in parallel.
#pragma once

#include <obsidian/obsidian.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "build.hpp"

namespace fuzz {

using Muts = std::vector<obsidian::DMutable<uint32_t>>;

// The input as the kernel's steps see it, given its divisor parameter d (Recipe::divisor): the
// precondition that divides by d, or the input re-lengthed (len(in) / d) * d.
template <class In>
In divided(Divisor use, const In& in, const EWord32& d) {
  using obsidian::len;
  using obsidian::require;
  switch (use) {
    case Divisor::None: break;
    case Divisor::Require: require(len(in) % d == 0u, "d divides the input's length"); break;
    case Divisor::Guarded:
      require(d == 0u || len(in) % d == 0u, "d is 0 or divides the input's length");
      break;
    case Divisor::GuardedSelect:
      require(obsidian::ifThenElse(d != 0u, len(in) / d, EWord32(1u)) >= 1u,
              "the input has d elements or more");
      break;
    case Divisor::Length:
      if constexpr (std::is_same_v<typename In::Length, EWord32>) {
        return In((len(in) / d) * d, [in, d](const EWord32& i) { return in[i / d * d + i % d]; });
      }
      throw std::logic_error("fuzz: a divided length of a static input");
  }
  return in;
}

// Captures f(in, mutables) over an In input, its divisor parameter (with r.divisor) and n
// DMutable<uint32_t> parameters (the global bins, then acc), n being Lo or Lo + 1.
template <class In, uint32_t Lo, class F>
obsidian::Kernel captureWith(const Recipe& r, uint32_t threads,
                             const obsidian::CaptureOptions& options, uint32_t n, const F& f) {
  using obsidian::capture;
  using M = obsidian::DMutable<uint32_t>;
  const Divisor use = r.divisor;
  if (use != Divisor::None) {
    const auto dv = [&](In in, EWord32 d) { return divided(use, in, d); };
    if constexpr (Lo == 0) {
      const auto none = [&](In in, EWord32 d) { return f(dv(in, d), Muts{}); };
      const auto one = [&](In in, EWord32 d, M a) { return f(dv(in, d), Muts{a}); };
      return n == 0 ? capture("fuzz", threads, none, options)
                    : capture("fuzz", threads, one, options);
    } else {
      const auto one = [&](In in, EWord32 d, M a) { return f(dv(in, d), Muts{a}); };
      const auto two = [&](In in, EWord32 d, M a, M b) { return f(dv(in, d), Muts{a, b}); };
      return n == 1 ? capture("fuzz", threads, one, options)
                    : capture("fuzz", threads, two, options);
    }
  }
  if constexpr (Lo == 0) {
    const auto none = [&](In in) { return f(in, Muts{}); };
    const auto one = [&](In in, M a) { return f(in, Muts{a}); };
    return n == 0 ? capture("fuzz", threads, none, options)
                  : capture("fuzz", threads, one, options);
  } else {
    const auto one = [&](In in, M a) { return f(in, Muts{a}); };
    const auto two = [&](In in, M a, M b) { return f(in, Muts{a, b}); };
    return n == 1 ? capture("fuzz", threads, one, options) : capture("fuzz", threads, two, options);
  }
}

inline EWord32 widenLane(const EWord32& x) { return x; }
inline EWord32 widenLane(const obsidian::EWord8& x) { return widen(x); }
inline EWord32 widenLane(const obsidian::EWord16& x) { return widen(x); }

// A block's chunk of the input read as vectors<W> (one load of W * sizeof(X) bytes each), the
// lanes widened into shared memory in their order.
template <class X, uint32_t W>
SPull<EWord32> vectorRead(const Program<obsidian::Block>& p, const SPull<obsidian::Exp<X>>& piece) {
  using namespace obsidian;
  const auto vecs = vectors<W>(piece);
  return force(p, mkPush<Block, EWord32>(
                      piece.len(), [vecs](const Program<Block>& q, const Writer<EWord32>& w) {
                        q.forAll(len(vecs), [&](const Program<Thread>& t, const EWord32& j) {
                          std::vector<EWord32> lanes;
                          hana::for_each(vecs[j], [&](const Exp<X>& x) {
                            lanes.push_back(t.declare(widenLane(x)));
                          });
                          for (uint32_t k = 0; k < W; ++k) w(t, lanes[k], j * W + k);
                        });
                      }));
}

// The words a block's steps start from: its chunk, or its piece of the input read as vectors.
template <class X>
SPull<EWord32> blockInput(const Program<obsidian::Block>& p, uint32_t vector,
                          const SPull<obsidian::Exp<X>>& c) {
  switch (vector) {
    case 0:
      if constexpr (std::is_same_v<X, uint32_t>) return c;
      break;
    case 2: return vectorRead<X, 2>(p, c);
    case 4: return vectorRead<X, 4>(p, c);
    case 8:
      if constexpr (sizeof(X) <= 2) return vectorRead<X, 8>(p, c);
      break;
    case 16:
      if constexpr (sizeof(X) == 1) return vectorRead<X, 16>(p, c);
      break;
    default: break;
  }
  throw std::logic_error("fuzz: no vectors<" + std::to_string(vector) + "> of this type");
}

// The grid-level array of words over the input.
template <class In>
auto gridWords(const Recipe& r, const In& in) {
  using namespace obsidian;
  using X = typename In::Element::Scalar;
  auto g = [&in] {
    if constexpr (std::is_same_v<X, uint32_t>) {
      return in;
    } else {
      return fmap([](const Exp<X>& x) { return widen(x); }, in);
    }
  }();
  if (r.gridMap) g = fmap(unaryFn(r.gridA, r.gridB), g);
  if (r.gridZip) {
    auto [lo, hi] = halve(g);
    g = zipWith(binaryFn(r.gridA), lo, hi);
  }
  return g;
}

// A block's program over its chunk c (of words, or a narrow piece of the input); its result.
template <class C>
SPull<EWord32> blockWords(const Program<obsidian::Block>& p, const Recipe& r, const C& c,
                          const Muts& m) {
  using namespace obsidian;
  const SPull<EWord32> y = steps<Block>(p, r.body, blockInput(p, r.vector, c));
  if (r.globalBins) {
    const uint32_t nb = r.globalBins;
    p.forAll(y.len(), [&](const Program<Thread>& t, const EWord32& i) {
      atomicAdd(t, m[0], y[i] % nb, 1u);
    });
  }
  return y;
}

// f(the blocks' chunks): of the grid-level array, or of the input where blocks read vectors.
template <class In, class F>
auto chunksOf(const Recipe& r, const In& in, const F& f) {
  using obsidian::splitUp;
  if (r.vector) return f(splitUp(r.chunk, in));
  const auto g = gridWords(r, in);
  return r.grid == Shape::SplitUp ? f(splitUp(r.chunk, g)) : f(obsidian::coalesce(r.chunk, g));
}

// The kernel of recipe r over an In input (DPull or SPull of the input's element type) whose
// output a vector store writes (Recipe::store), with `bins` global bins (0 or 1): build_store.cpp
// makes it for the six inputs of buildKernel.
template <class In>
obsidian::Kernel buildStoreFor(const Recipe& r, uint32_t threads,
                               const obsidian::CaptureOptions& options, uint32_t bins);

}  // namespace fuzz
