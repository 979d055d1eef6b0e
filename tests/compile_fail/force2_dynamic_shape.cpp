// EXPECT: force2 needs a static shape
// Shared memory is sized when the kernel is generated: a matrix whose rows or cols are known
// only at launch cannot be forced. (Fix: force a tile of it, tiles(32, 32, m).)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("force2DynamicShape", 256, [](DPull2<EFloat> in) {
    return pConcat2(fmap(
        [in](const SPull2<EFloat>&) {
          return exec<Block>([in](const Program<Block>& p) {
            const auto all = force2(p, push2<Block>(in));  // the violation: in's shape is dynamic
            return push2<Block>(
                mkPull2(1, 1, [all](const EWord32&, const EWord32&) { return all(0u, 0u); }));
          });
        },
        tiles(1, 1, in)));
  });
}
