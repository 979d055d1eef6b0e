// EXPECT: atomicMax works on uint32, int32 and uint64 arrays
// CUDA has atomic add of __half and __nv_bfloat16, no atomic max. (Fix: atomicCAS on the bits.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("halfAtomicMax", 64, [](DPull<EWord32> in, DMutable<Half> m) {
    return pConcat(fmap(
        [m](const SPull<EWord32>& c) {
          return exec<Block>([c, m](const Program<Block>& p) {
            p.forAll(64u, [&](const Program<Thread>& t, const EWord32& i) {
              atomicMax(t, m, i, EHalf(1.0f));  // the violation
            });
            return push<Block>(c);
          });
        },
        splitUp(64, in)));
  });
}
