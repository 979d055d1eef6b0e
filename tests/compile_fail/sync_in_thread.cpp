// EXPECT: sync is not available in a Thread program: a barrier needs a Warp or Block
// A barrier synchronizes the threads of a warp or block; one thread has nothing to wait for.
// (Fix: call p.sync() on the enclosing Block program, after the forAll.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("syncInThread", 256, [](DPull<EWord32> in, DMutable<uint32_t> out) {
    return pConcat(fmap(
        [out](const SPull<EWord32>& c) {
          return exec<Block>([c, out](const Program<Block>& p) {
            p.forAll(256u, [&](const Program<Thread>& t, const EWord32& i) {
              write(t, out, i, c[i]);
              t.sync();  // the violation
            });
            return push<Block>(c);
          });
        },
        splitUp(256, in)));
  });
}
