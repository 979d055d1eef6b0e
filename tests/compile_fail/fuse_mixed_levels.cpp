// EXPECT: fuse: every argument must be at the same level
// One program of one level writes every part: a block program cannot run a thread's
// sequential program as one of its parts. (Fix: tConcat<Block> the thread programs first.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("fuseMixedLevels", 256, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return fuse(push<Block>(c), push<Thread>(c));  // the violation
        },
        splitUp(256, in)));
  });
}
