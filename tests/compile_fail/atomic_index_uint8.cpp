// EXPECT: an array index is an EWord32: widen a u8 index with w8ToW32\(i\)
// An index of bytes does not convert to an EWord32 silently. (Fix: w8ToW32(x).)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("byteIndex", 256, [](DPull<EWord8> in, DMutable<uint32_t> bins) {
    return forEachBlock(splitUp(256, in), [bins](const Program<Block>& p, const SPull<EWord8>& c) {
      p.forAll(256u, [&](const Program<Thread>& t, const EWord32& i) {
        atomicAdd(t, bins, c[i], 1u);  // the violation: c[i] is an EWord8
      });
    });
  });
}
