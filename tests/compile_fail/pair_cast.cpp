// EXPECT: Half2 and BFloat162 have \+ - \* fma min max neg abs
// A pair is not one number: it converts lane by lane. (Fix: cast<float>(lowLane(x)), or
// floats2Pair<Half2>(lo, hi) the other way.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("pairCast", 256, [](DPull<EHalf2> in) {
    return push<Grid>(fmap([](const EHalf2& x) { return cast<float>(x); }, in));  // the violation
  });
}
