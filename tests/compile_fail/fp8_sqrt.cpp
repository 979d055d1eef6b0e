// EXPECT: fp8 values are converted, not computed with
// 8-bit floats have no math functions. (Fix: sqrt(cast<float>(x)).)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("fp8Sqrt", 256, [](DPull<Exp<Fp8E4M3>> in) {
    return push<Grid>(fmap([](const Exp<Fp8E4M3>& x) { return sqrt(x); }, in));  // the violation
  });
}
