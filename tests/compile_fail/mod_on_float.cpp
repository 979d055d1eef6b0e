// EXPECT: operator% needs an integer Exp
// % is an integer operation in CUDA. (Fix: work on an integer Exp.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("modOnFloat", 256, [](DPull<EFloat> in) {
    return push<Grid>(fmap([](const EFloat& x) { return x % 2.0f; }, in));  // the violation
  });
}
