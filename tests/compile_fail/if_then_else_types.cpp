// EXPECT: ifThenElse\(c, a, b\): both branches need one element type
// A u32 and a float branch are not silently converted. (Fix: cast one branch.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("mixedBranches", 256, [](DPull<EWord32> in) {
    return push<Grid>(fmap(
        [](const EWord32& x) {
          const EFloat half = cast<float>(x) * 0.5f;
          return ifThenElse(x < 10u, x, half);  // the violation: EWord32 and EFloat
        },
        in));
  });
}
