// EXPECT: newShared: shared arrays belong to a Warp or Block program
// Shared memory is shared by the threads of a block or warp; one thread allocates none.
// (Fix: call newShared on the enclosing Block program, before the forAll.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("newSharedInThread", 256, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            p.forAll(256u, [&](const Program<Thread>& t, const EWord32& i) {
              const SMutable<uint32_t> scratch = newShared<uint32_t>(t, 4);  // the violation
              write(t, scratch, 0u, c[i]);
            });
            return push<Block>(c);
          });
        },
        splitUp(256, in)));
  });
}
