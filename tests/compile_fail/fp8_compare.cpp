// EXPECT: fp8 values are not compared
// 8-bit floats have no comparisons. (Fix: cast<float>(x) < cast<float>(y).)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("fp8Compare", 256, [](DPull<Exp<Fp8E5M2>> in) {
    return push<Grid>(fmap(
        [](const Exp<Fp8E5M2>& x) { return cast<uint32_t>(x < x); }, in));  // the violation
  });
}
