// A program outside the obsidian tree, built against the installed package.
#include <iostream>
#include <obsidian/obsidian.hpp>
using namespace obsidian;
int main() {
  Kernel k = capture("inc", 256, [](DPull<EWord32> in) {
    return push<Grid>(fmap([](EWord32 x) { return x + 1u; }, in));
  });
  std::cout << k.cuda();
  return k.cuda().find("__global__") != std::string::npos ? 0 : 1;
}
