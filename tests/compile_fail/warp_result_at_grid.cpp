// EXPECT: warp-level programs only inside blocks
// Warp programs run inside blocks; a kernel's result must be a Push<Grid>.
// (Fix: pConcat the Push<Warp> arrays into a Push<Block>, then pConcat the blocks.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("warpAtGrid", 256, [](DPull<EWord32> in) {
    return pConcat(fmap(  // a Push<Warp>: the violation
        [](const SPull<EWord32>& w) {
          return push<Thread>(fmap([](const EWord32& x) { return x + 1u; }, w));
        },
        splitUp(32, in)));
  });
}
