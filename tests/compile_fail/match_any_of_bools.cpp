// EXPECT: matchAny compares one scalar per lane: an Exp<X> of a type other than bool
// match_any has no bool form. (Fix: ballot the predicate instead.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("matchBools", 32, [](DPull<EWord32> in) {
    return pConcat(fmap([](const SPull<EWord32>& c) { return pConcat(fmap(
        [](const SPull<EWord32>& w) {
          return singletonPush<Warp>([w](const Program<Warp>& q) {
            return matchAny(q, fmap([](const EWord32& x) { return x > 1u; }, w))[0u];
          });
        },
        splitUp(32, c))); }, splitUp(32, in)));
  });
}
