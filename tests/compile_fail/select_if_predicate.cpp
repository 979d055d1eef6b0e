// EXPECT: selectIf: pred is a function of an element \(Exp<X>\) to Exp<bool>
// A predicate must say yes or no: a word is not a condition. (Fix: v % 3u == 0u.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("thirds", 256, [](DPull<EWord32> in) {
    return selectIf<uint32_t>(in, [](const EWord32& v) { return v % 3u; });  // the violation
  });
}
