// The paper's small programs, written with obsidian as they are in the paper: increment and
// increment2 (Figures 12, 13), sumUp' (Section 3.1), agnostic (Section 3.2) and the block
// reductions red1..red3 (Section 5.2). The demo prints them; the golden tests pin their CUDA.
#pragma once

#include <obsidian/obsidian.hpp>

namespace paper {

using namespace obsidian;

inline EWord32 plus(const EWord32& a, const EWord32& b) { return a + b; }

// incLocal arr = fmap (+1) arr
template <class Len>
auto incLocal(const Pull<Len, EWord32>& arr) {
  return fmap([](const EWord32& x) { return x + 1u; }, arr);
}

// increment arr = pConcat (fmap body arr) where body a = push (incLocal a)
template <class Len>
auto increment(const Pull<Len, SPull<EWord32>>& arr) {
  return pConcat(fmap([](const SPull<EWord32>& a) { return push<Block>(incLocal(a)); }, arr));
}

// increment2 arr = pConcat (fmap body arr) where body a = tConcat (fmap push (fmap incLocal a))
template <class Len>
auto increment2(const Pull<Len, SPull<SPull<EWord32>>>& arr) {
  return pConcat(fmap(
      [](const SPull<SPull<EWord32>>& a) {
        return tConcat<Block>(
            fmap([](const SPull<EWord32>& x) { return push<Thread>(incLocal(x)); }, a));
      },
      arr));
}

// sumUp' arr: halve and add, forcing each stage, until one element is left.
inline EWord32 sumUp(const Program<Block>& p, SPull<EWord32> arr) {
  while (len(arr) > 1) {
    auto [a1, a2] = halve(arr);
    arr = forcePull(p, zipWith(plus, a1, a2));
  }
  return arr[0u];
}

// agnostic: three forced stages, at whatever level p is.
template <class L>
SPush<L, EWord32> agnostic(const Program<L>& p, const SPull<EWord32>& arr) {
  auto imm1 = forcePull(p, fmap([](const EWord32& x) { return x + 1u; }, arr));
  auto imm2 = forcePull(p, fmap([](const EWord32& x) { return x * 2u; }, imm1));
  auto imm3 = forcePull(p, fmap([](const EWord32& x) { return x + 3u; }, imm2));
  return push<L>(imm3);
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

// red5': sequential reduction of n strided elements per thread, then red3.
template <class T, class Op>
T red5(const Program<Block>& p, uint32_t n, Op f, const SPull<T>& arr) {
  auto arr2 = force(p, tConcat<Block>(fmap([f](const SPull<T>& c) { return seqReduce(f, c); },
                                           coalesce(n, arr))));
  return red3(p, 2, f, arr2);
}

// One block per chunk of the input, each reducing its chunk with `red`.
template <class Red>
auto mapRed(uint32_t chunk, Red red, const DPull<EWord32>& in) {
  return pConcat(fmap(
      [red](const SPull<EWord32>& c) {
        return singletonPush<Block>([red, c](const Program<Block>& p) { return red(p, c); });
      },
      splitUp(chunk, in)));
}

// ---- the kernels the demo and the golden tests capture ----
inline Kernel incrementKernel() {
  return capture("increment", 256, [](DPull<EWord32> in) { return increment(splitUp(256, in)); });
}

inline Kernel increment2Kernel() {
  return capture("increment2", 256, [](DPull<EWord32> in) {
    return increment2(
        fmap([](const SPull<EWord32>& c) { return splitUp(32, c); }, splitUp(8192, in)));
  });
}

inline Kernel sumUpKernel() {
  return capture("sumUp", 4, [](DPull<EWord32> in) {
    return mapRed(
        8, [](const Program<Block>& p, const SPull<EWord32>& c) { return sumUp(p, c); }, in);
  });
}

inline Kernel agnosticBlockKernel() {
  return capture("agnosticBlock", 256, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& a) {
          return exec<Block>([a](const Program<Block>& p) { return agnostic(p, a); });
        },
        splitUp(256, in)));
  });
}

inline Kernel agnosticWarpKernel() {
  return capture("agnosticWarp", 256, [](DPull<EWord32> in) {
    auto warps = fmap([](const SPull<EWord32>& c) { return splitUp(32, c); }, splitUp(256, in));
    return pConcat(fmap(
        [](const SPull<SPull<EWord32>>& block) {
          return pConcat(fmap(
              [](const SPull<EWord32>& w) {
                return exec<Warp>([w](const Program<Warp>& p) { return agnostic(p, w); });
              },
              block));
        },
        warps));
  });
}

inline Kernel red3Kernel(uint32_t chunk = 512, uint32_t threads = 256) {
  return capture("red3", threads, [chunk](DPull<EWord32> in) {
    return mapRed(
        chunk, [](const Program<Block>& p, const SPull<EWord32>& c) { return red3(p, 2, plus, c); },
        in);
  });
}

inline Kernel red5Kernel(uint32_t chunk = 4096, uint32_t threads = 512) {
  return capture("red5", threads, [chunk](DPull<EWord32> in) {
    return mapRed(
        chunk, [](const Program<Block>& p, const SPull<EWord32>& c) { return red5(p, 8, plus, c); },
        in);
  });
}

}  // namespace paper
