// EXPECT: fuse: the arguments must be push arrays
// fuse combines the programs of push arrays; a pull array has no program. (Fix: push<Block>.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("fuseNotArray", 256, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return fuse(push<Block>(c), c);  // the violation: c is a pull array
        },
        splitUp(256, in)));
  });
}
