// EXPECT: arithmetic needs a numeric Exp, not Exp<bool>
// Exp<bool> has logic (&&, ||, !), not arithmetic. (Fix: a || b, or cast<uint32_t> first.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("arithOnBool", 256, [](DPull<EWord32> in) {
    return push<Grid>(fmap(
        [](const EWord32& x) {
          const EBool odd = (x & 1u) == 1u;
          const EBool big = x > 100u;
          return odd + big;  // the violation
        },
        in));
  });
}
