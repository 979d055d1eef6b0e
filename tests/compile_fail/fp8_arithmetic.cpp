// EXPECT: fp8 values are converted, not computed with
// 8-bit floats have no arithmetic (CUDA has only conversions). (Fix: cast<float>(x) first.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("fp8Arithmetic", 256, [](DPull<Exp<Fp8E4M3>> in) {
    return push<Grid>(fmap([](const Exp<Fp8E4M3>& x) { return x + x; }, in));  // the violation
  });
}
