// EXPECT: force needs a static length \(uint32_t\): shared memory is sized at generation time
// Shared memory is sized when the kernel is generated, so only static-length arrays can be
// forced. (Fix: force a static-length chunk, e.g. one from splitUp.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("forceDynamic", 256, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [in](const SPull<EWord32>& c) {
          return exec<Block>([in, c](const Program<Block>& p) {
            const SPull<EWord32> all = force(p, push<Block>(in));  // the violation
            return push<Block>(
                zipWith([](const EWord32& a, const EWord32& b) { return a + b; }, c, all));
          });
        },
        splitUp(256, in)));
  });
}
