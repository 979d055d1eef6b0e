// EXPECT: capture: a kernel parameter must be DPull<T>, SPull<T>
// A kernel takes arrays and scalar expressions; a host value is not a kernel parameter.
// (Fix: take an EWord32 scalar parameter.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("paramType", 256, [](DPull<EWord32> in, uint32_t offset) {  // the violation
    return push<Grid>(fmap([offset](const EWord32& x) { return x + offset; }, in));
  });
}
