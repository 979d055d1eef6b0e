// EXPECT: pConcat steps exactly one level up: there is no level above Grid
// A Push<Grid> already uses the whole grid; there is nothing to distribute it over.
// (Fix: make the elements Push<Block> arrays.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("pConcatAboveGrid", 256, [](DPull<EWord32> in) {
    return pConcat(fmap(  // the violation
        [](const SPull<EWord32>& c) {
          return push<Grid>(fmap([](const EWord32& x) { return x + 1u; }, c));
        },
        splitUp(256, in)));
  });
}
