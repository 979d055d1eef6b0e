// EXPECT: fuse at Grid level would still be one grid loop per part
// Two Push<Grid> outputs fused at Grid level would each keep their own grid loop, reading the
// input again. (Fix: fuse the block programs and pConcat the fused array over the grid.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("fuseAtGrid", 256, [](DPull<EWord32> in) {
    return fuse(push<Grid>(in), push<Grid>(in));  // the violation
  });
}
