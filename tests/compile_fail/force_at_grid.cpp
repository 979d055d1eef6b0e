// EXPECT: force is not available at Grid level: blocks cannot synchronize
// force needs a barrier of its level afterwards; blocks of a grid have none, so a Grid program
// cannot make an array manifest. (Fix: force inside a Block program, then pConcat.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  CaptureOptions options;
  options.staticLengths = {4096};
  capture(
      "forceAtGrid", 256,
      [](SPull<EWord32> in) {
        return exec<Grid>([in](const Program<Grid>& p) {
          const SPull<EWord32> forced = force(p, push<Grid>(in));  // the violation
          return push<Grid>(fmap([](const EWord32& x) { return x + 1u; }, forced));
        });
      },
      options);
}
