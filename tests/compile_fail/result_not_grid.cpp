// EXPECT: capture: a kernel's result must be Push<Grid>: pConcat block programs over the grid
// A kernel's result is written by the whole grid. (Fix: pConcat(fmap(..., splitUp(256, in))).)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("resultNotGrid", 256, [](DPull<EWord32> in) {
    const SPull<EWord32> first256 = splitUp(256, in)[0u];
    return push<Block>(first256);  // a Push<Block>: the violation
  });
}
