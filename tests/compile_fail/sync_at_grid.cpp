// EXPECT: sync is not available at Grid level: blocks cannot synchronize
// There is no barrier across the blocks of a grid. (Fix: sync inside a Block program.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("syncAtGrid", 256, [](DPull<EWord32> in) {
    return exec<Grid>([in](const Program<Grid>& p) {
      p.sync();  // the violation
      return push<Grid>(in);
    });
  });
}
