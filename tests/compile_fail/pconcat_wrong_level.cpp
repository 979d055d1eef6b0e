// EXPECT: pConcat steps exactly one level up: Push<L> elements make a Push<Step<L>>
// Warp programs are distributed over a block, not over the grid: pConcat of Push<Warp>
// elements is a Push<Block>. (Fix: pConcat<Block>, then pConcat those blocks over the grid.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("pConcatWrongLevel", 256, [](DPull<EWord32> in) {
    return pConcat<Grid>(fmap(  // the violation
        [](const SPull<EWord32>& w) {
          return push<Warp>(fmap([](const EWord32& x) { return x + 1u; }, w));
        },
        splitUp(32, in)));
  });
}
