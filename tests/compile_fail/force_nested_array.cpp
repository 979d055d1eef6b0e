// EXPECT: this element type cannot be stored in memory: use Exp<X> or a hana::tuple of them
// Memory holds scalars (or tuples of them); an array of arrays must be flattened first.
// (Fix: force(p, pConcat/tConcat(...)) of the inner arrays.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("forceNested", 256, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            const auto rows = forcePull(p, splitUp(16, c));  // the violation
            return tConcat<Block>(
                fmap([](const SPull<EWord32>& r) { return push<Thread>(r); }, rows));
          });
        },
        splitUp(256, in)));
  });
}
