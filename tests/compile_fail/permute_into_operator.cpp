// EXPECT: permuteInto: the operator is one with an atomic: Sum, Min, Max, BitAnd, BitOr or BitXor
// A lambda has no atomic: permuteInto combines with one. (Fix: Sum{}, Min{}, Max{}, ...)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("k", 64, [](DPull<EWord32> in, DMutable<uint32_t> m) {
    return effect([=](const Program<Grid>& g) {
      permuteInto(g, m, [](const EWord32& a, const EWord32& b) { return a * b; },  // the violation
                  push<Grid>(in), [](const EWord32& i) { return i; });
    });
  });
}
