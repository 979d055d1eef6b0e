// EXPECT: f's parameter types make the kernel's parameters, so they must be concrete
// A generic lambda has no parameter types to read. (Fix: DPull<EWord32> in.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("generic", 256, [](auto in) {  // the violation: auto
    return push<Grid>(fmap([](const EWord32& x) { return x + 1u; }, in));
  });
}
