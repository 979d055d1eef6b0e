// EXPECT: atomicAdd works on uint32, int32, uint64, float, double, Half, BFloat16, Half2 and BFloat162
// CUDA has no atomicAdd on 16-bit integers. (Fix: count in a DMutable<uint32_t>.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("histogram16", 256, [](DPull<EWord16> in, DMutable<uint16_t> bins) {
    return tConcat<Grid>(fmap(
        [bins](const EWord16& x) {
          return singletonPush<Thread>([bins, x](const Program<Thread>& t) {
            return atomicAdd(t, bins, w16ToW32(x), EWord16(1u));  // the violation
          });
        },
        in));
  });
}
