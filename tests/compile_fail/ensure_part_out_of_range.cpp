// EXPECT: ensure<K>: K must name a part of the fused result
// A fused result of two parts has parts 0 and 1. (Fix: ensure<1>.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("ensurePartOutOfRange", 256, [](DPull<EWord32> in) {
    const auto f =
        pConcat(fmap([](const SPull<EWord32>& c) { return fuse(push<Block>(c), push<Block>(c)); },
                     splitUp(256, in)));
    return ensure<2>(
        f, [](const EWord32& x) { return x < 5u; }, "small");  // the violation
  });
}
