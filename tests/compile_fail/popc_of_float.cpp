// EXPECT: popc needs an unsigned word, EWord32 or EWord64
// Bit intrinsics count the bits of unsigned words. (Fix: bitcast<uint32_t>(x) first.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("popcOfFloat", 256, [](DPull<EFloat> in) {
    return push<Grid>(fmap([](const EFloat& x) { return popc(x); }, in));  // the violation
  });
}
