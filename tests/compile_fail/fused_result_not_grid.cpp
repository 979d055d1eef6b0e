// EXPECT: capture: a fused result must be Fused<Grid>: pConcat the fused block programs
// A kernel's outputs are written by the whole grid; a fused block program writes one block's
// parts. (Fix: pConcat(fmap(..., splitUp(256, in))) of the fused block programs.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("fusedResultNotGrid", 256, [](DPull<EWord32> in) {
    const SPull<EWord32> c = splitUp(256, in)[0u];
    return fuse(push<Block>(c), push<Block>(c));  // a Fused<Block>: the violation
  });
}
