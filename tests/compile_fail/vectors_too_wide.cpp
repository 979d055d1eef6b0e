// EXPECT: vectors<W>: a vector is at most 16 bytes \(W \* sizeof\(X\) <= 16
// 32 bytes are two loads, not one: CUDA's widest load is 16 bytes. (Fix: vectors<16>.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("bytes32", 256, [](DPull<EWord8> in) {
    return push<Grid>(fmap([](const Vector<32, uint8_t>& v) { return hana::at_c<0>(v); },
                           vectors<32>(in)));  // the violation
  });
}
