// EXPECT: a matrix parameter is DPull2<T>
// A matrix's rows, cols and pitch are the launch's: a parameter of static shape has none.
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("matrixParamStatic", 256, [](SPull2<EFloat> in) {  // the violation
    return push2<Grid>(in);
  });
}
