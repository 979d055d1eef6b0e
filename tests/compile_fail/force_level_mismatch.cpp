// EXPECT: force at level L needs a Push<L> array: the array's level must match the program's level
// A Block program forces Push<Block> arrays; a Push<Warp> is written by one warp.
// (Fix: push<Block>(c), or force inside a Warp program.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("forceLevelMismatch", 256, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            const SPull<EWord32> forced = force(p, push<Warp>(c));  // the violation
            return push<Block>(forced);
          });
        },
        splitUp(256, in)));
  });
}
