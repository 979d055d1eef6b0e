// EXPECT: vectors<W>: W is a power of two of at least 2 elements
// Three u32 are 12 bytes: no load reads them at once. (Fix: vectors<4>, or vectors<2>.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("triples", 256, [](DPull<EWord32> in) {
    return push<Grid>(fmap([](const Vector<3, uint32_t>& v) { return hana::at_c<0>(v); },
                           vectors<3>(in)));  // the violation
  });
}
