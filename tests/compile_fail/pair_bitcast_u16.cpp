// EXPECT: bitcast of a Half2 or BFloat162 is to or from uint32_t
// A pair's bits are one 32-bit word. (Fix: bitcast<uint32_t>(x), or lowLane(x) for a lane.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("pairBitcast", 256, [](DPull<EHalf2> in) {
    return push<Grid>(
        fmap([](const EHalf2& x) { return bitcast<float>(x); }, in));  // the violation
  });
}
