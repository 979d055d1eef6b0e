// EXPECT: unvectors<W>: W is a power of two of at least 2 elements
// Three floats are 12 bytes, which no vector store writes. (Fix: unvectors<2> or unvectors<4>.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("floats3", 256, [](DPull<EFloat> in) {
    return unvectors<3>(push<Grid>(fmap(
        [](const EFloat& x) { return hana::make_tuple(x, x, x); }, in)));  // the violation
  });
}
