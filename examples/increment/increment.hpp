// The paper's first examples (Section 3, Figures 12 and 13): increment and increment2 spread a
// per-element function over the grid with different loop nests, and agnostic (Section 3.2) runs
// the same three-stage program at Block or at Warp level.
#pragma once

#include <obsidian/obsidian.hpp>

namespace paper {

using namespace obsidian;

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

// agnostic: three forced stages, at whatever level p is.
template <class L>
SPush<L, EWord32> agnostic(const Program<L>& p, const SPull<EWord32>& arr) {
  auto imm1 = forcePull(p, fmap([](const EWord32& x) { return x + 1u; }, arr));
  auto imm2 = forcePull(p, fmap([](const EWord32& x) { return x * 2u; }, imm1));
  auto imm3 = forcePull(p, fmap([](const EWord32& x) { return x + 3u; }, imm2));
  return push<L>(imm3);
}

// ---- kernels (one block per chunk of the input)
inline Kernel incrementKernel() {
  return capture("increment", 256, [](DPull<EWord32> in) { return increment(splitUp(256, in)); });
}

inline Kernel increment2Kernel() {
  return capture("increment2", 256, [](DPull<EWord32> in) {
    return increment2(
        fmap([](const SPull<EWord32>& c) { return splitUp(32, c); }, splitUp(8192, in)));
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

}  // namespace paper
