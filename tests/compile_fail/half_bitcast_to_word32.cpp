// EXPECT: needs types of the same size: u32, i32, f32 among themselves
// A Half is 16 bits: its bits are a uint16_t. (Fix: bitcast<uint16_t>(x), or bits32(x).)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("halfBitcast", 256, [](DPull<EHalf> in) {
    return push<Grid>(fmap([](const EHalf& x) { return bitcast<uint32_t>(x); }, in));  // violation
  });
}
