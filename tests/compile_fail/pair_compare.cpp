// EXPECT: have \+ - \* fma min max neg abs .*compare.*their lanes: lowLane\(x\), highLane\(x\)
// A pair is two numbers: it has no order. (Fix: lowLane(x) < lowLane(y), highLane(x) < ...)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("pairCompare", 256, [](DPull<EHalf2> in) {
    return push<Grid>(
        fmap([](const EHalf2& x) { return cast<uint32_t>(x < x); }, in));  // the violation
  });
}
