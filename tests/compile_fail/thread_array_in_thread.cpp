// EXPECT: threadArray belongs to a Block or Warp program
// A Thread program's own values are variables (declare) or force<Thread>. (Fix: make the thread
// array in the block program around the loop.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("threadArrayInThread", 64, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            p.forAll(64u, [&](const Program<Thread>& t, const EWord32&) {
              threadArray<uint32_t>(t, 4);  // the violation
            });
            return push<Block>(c);
          });
        },
        splitUp(64, in)));
  });
}
