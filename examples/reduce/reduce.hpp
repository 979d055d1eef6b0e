// The paper's reductions (Section 5.2): red1..red7 of one block, generic in the operator, the
// element type and the chunk size, and mapRed, which spreads one chunk per block over the grid.
// Each function body is the paper's, line for line (see README.md for the line counts).
#pragma once

#include <obsidian/obsidian.hpp>

namespace paper {

using namespace obsidian;

inline EWord32 plus(const EWord32& a, const EWord32& b) { return a + b; }

// sumUp' arr: halve and add, forcing each stage, until one element is left.
inline EWord32 sumUp(const Program<Block>& p, SPull<EWord32> arr) {
  while (len(arr) > 1) {
    auto [a1, a2] = halve(arr);
    arr = forcePull(p, zipWith(plus, a1, a2));
  }
  return arr[0u];
}

// red1: combine adjacent elements (evenOdds) until one is left.
template <class T, class Op>
T red1(const Program<Block>& p, Op f, SPull<T> arr) {
  while (len(arr) > 1) {
    auto [a1, a2] = evenOdds(arr);
    arr = forcePull(p, zipWith(f, a1, a2));
  }
  return arr[0u];
}

// red2: combine the two halves (coalesced; needs a commutative operator).
template <class T, class Op>
T red2(const Program<Block>& p, Op f, SPull<T> arr) {
  while (len(arr) > 1) {
    auto [a1, a2] = halve(arr);
    arr = forcePull(p, zipWith(f, a1, a2));
  }
  return arr[0u];
}

// red3: as red2, but the last `cutoff` elements are folded without a force.
template <class T, class Op>
T red3(const Program<Block>& p, uint32_t cutoff, Op f, SPull<T> arr) {
  while (len(arr) > cutoff) {
    auto [a1, a2] = halve(arr);
    arr = forcePull(p, zipWith(f, a1, a2));
  }
  return foldPull1(f, arr);
}

// red4: each thread first reduces 8 consecutive elements (splitUp), then red3. Consecutive
// threads read far-apart elements: uncoalesced (the paper's Figure 5, left).
template <class T, class Op>
T red4(const Program<Block>& p, Op f, const SPull<T>& arr) {
  auto arr2 = force(
      p, tConcat<Block>(fmap([f](const SPull<T>& c) { return seqReduce(f, c); }, splitUp(8, arr))));
  return red3(p, 2, f, arr2);
}

// red5: the same with coalesce, so consecutive threads read consecutive elements.
template <class T, class Op>
T red5(const Program<Block>& p, Op f, const SPull<T>& arr) {
  auto arr2 = force(p, tConcat<Block>(fmap([f](const SPull<T>& c) { return seqReduce(f, c); },
                                           coalesce(8, arr))));
  return red3(p, 2, f, arr2);
}

// red5': red5 with the sequential factor n as a parameter; red6 and red7 are n = 16 and 32.
template <class T, class Op>
T red5p(const Program<Block>& p, uint32_t n, Op f, const SPull<T>& arr) {
  auto arr2 = force(p, tConcat<Block>(fmap([f](const SPull<T>& c) { return seqReduce(f, c); },
                                           coalesce(n, arr))));
  return red3(p, 2, f, arr2);
}
template <class T, class Op>
T red6(const Program<Block>& p, Op f, const SPull<T>& arr) {
  return red5p(p, 16, f, arr);
}
template <class T, class Op>
T red7(const Program<Block>& p, Op f, const SPull<T>& arr) {
  return red5p(p, 32, f, arr);
}

// One block per chunk of the input, each reducing its chunk with `red`.
template <class T, class Red>
auto mapRed(uint32_t chunk, Red red, const DPull<T>& in) {
  return pConcat(fmap(
      [red](const SPull<T>& c) {
        return singletonPush<Block>([red, c](const Program<Block>& p) { return red(p, c); });
      },
      splitUp(chunk, in)));
}

// ---- kernels
enum class Variant { Red1, Red2, Red3, Red4, Red5, Red6, Red7 };
inline const char* variantName(Variant v) {
  static const char* names[] = {"red1", "red2", "red3", "red4", "red5", "red6", "red7"};
  return names[static_cast<int>(v)];
}

// The block reduction `v` of one chunk with operator f.
template <class T, class Op>
T reduceBlock(Variant v, const Program<Block>& p, Op f, const SPull<T>& c) {
  switch (v) {
    case Variant::Red1: return red1(p, f, c);
    case Variant::Red2: return red2(p, f, c);
    case Variant::Red3: return red3(p, 2, f, c);
    case Variant::Red4: return red4(p, f, c);
    case Variant::Red5: return red5(p, f, c);
    case Variant::Red6: return red6(p, f, c);
    case Variant::Red7: return red7(p, f, c);
  }
  throw Error("reduceBlock: unknown variant");
}

// mapRed with variant v: one partial result per `chunk` elements (the input length must be a
// multiple of chunk).
template <class T, class Op>
Kernel reduceKernel(Variant v, Op f, uint32_t chunk, uint32_t threads) {
  return capture(variantName(v), threads, [v, f, chunk](DPull<Exp<T>> in) {
    return mapRed<Exp<T>>(
        chunk,
        [v, f](const Program<Block>& p, const SPull<Exp<T>>& c) { return reduceBlock(v, p, f, c); },
        in);
  });
}

inline Kernel sumUpKernel() {
  return capture("sumUp", 4, [](DPull<EWord32> in) {
    return mapRed<EWord32>(
        8, [](const Program<Block>& p, const SPull<EWord32>& c) { return sumUp(p, c); }, in);
  });
}

inline Kernel red3Kernel(uint32_t chunk = 512, uint32_t threads = 256) {
  return reduceKernel<uint32_t>(Variant::Red3, plus, chunk, threads);
}

inline Kernel red5Kernel(uint32_t chunk = 4096, uint32_t threads = 512) {
  return reduceKernel<uint32_t>(Variant::Red5, plus, chunk, threads);
}

}  // namespace paper
