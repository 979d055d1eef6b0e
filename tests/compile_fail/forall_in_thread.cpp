// EXPECT: no parallel loop inside a Thread program
// A Thread program is sequential: it cannot spread work over threads. (Fix: t.seqFor.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("forAllInThread", 256, [](DPull<EWord32> in, DMutable<uint32_t> out) {
    return pConcat(fmap(
        [out](const SPull<EWord32>& c) {
          return exec<Block>([c, out](const Program<Block>& p) {
            p.forAll(64u, [&](const Program<Thread>& t, const EWord32& i) {
              t.forAll(4u, [&](const Program<Thread>& u, const EWord32& j) {  // the violation
                write(u, out, i * 4u + j, c[i * 4u + j]);
              });
            });
            return push<Block>(c);
          });
        },
        splitUp(256, in)));
  });
}
