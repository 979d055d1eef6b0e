// EXPECT: capture: a 2-D result must be Push2<Grid>: pConcat2 the block programs
// A kernel's result is written by the whole grid. (Fix: pConcat2 of the block programs over
// the tiles.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("resultPush2Block", 256, [](DPull2<EFloat> in) {
    return push2<Block>(tiles(16, 16, in)(0u, 0u));  // a Push2<Block>: the violation
  });
}
