// EXPECT: atomicAdd works on uint32, int32, uint64, float, double, Half, BFloat16, Half2 and BFloat162
// CUDA has no atomicAdd on bytes. (Fix: count in a DMutable<uint32_t>.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  // A histogram of byte values, counted in bytes.
  capture("histogram8", 256, [](DPull<EWord8> in, DMutable<uint8_t> bins) {
    return tConcat<Grid>(fmap(
        [bins](const EWord8& x) {
          return singletonPush<Thread>([bins, x](const Program<Thread>& t) {
            return atomicAdd(t, bins, w8ToW32(x), EWord8(1u));  // the violation
          });
        },
        in));
  });
}
