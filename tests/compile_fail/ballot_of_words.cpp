// EXPECT: ballot, voteAny and voteAll vote on one EBool per lane
// A ballot collects one predicate per lane. (Fix: compare, e.g. x != 0u.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("ballotOfWords", 32, [](DPull<EWord32> in) {
    return pConcat(fmap([](const SPull<EWord32>& c) { return pConcat(fmap(
        [](const SPull<EWord32>& w) {
          return singletonPush<Warp>([w](const Program<Warp>& q) { return ballot(q, w); });
        },
        splitUp(32, c))); }, splitUp(32, in)));
  });
}
