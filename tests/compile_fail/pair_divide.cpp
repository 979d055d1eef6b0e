// EXPECT: Half2 and BFloat162 have \+ - \* fma min max neg abs
// CUDA's __h2div is not one instruction with one rounding: pairs have no division. (Fix: divide
// the lanes, pack2(lowLane(x) / lowLane(y), highLane(x) / highLane(y)).)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("pairDivide", 256, [](DPull<EBFloat162> in) {
    return push<Grid>(fmap([](const EBFloat162& x) { return x / x; }, in));  // the violation
  });
}
