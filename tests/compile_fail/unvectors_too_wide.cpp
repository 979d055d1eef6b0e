// EXPECT: unvectors<W>: a vector is at most 16 bytes \(W \* sizeof\(X\) <= 16
// 32 bytes are two stores, not one: CUDA's widest store is 16 bytes. (Fix: unvectors<4>.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("doubles4", 256, [](DPull<EDouble> in) {
    return unvectors<4>(push<Grid>(fmap(
        [](const EDouble& x) { return Vector<4, double>(x, x, x, x); }, in)));  // the violation
  });
}
