// EXPECT: ballot, voteAny and voteAll are collectives of a warp: they need a Program<Warp>
// Votes are collectives of a warp: a Program<Block> has no lanes to vote. (Fix: inside a warp
// program, e.g. pConcat of singletonPush<Warp>.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("voteAtBlock", 64, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return singletonPush<Block>([c](const Program<Block>& p) {
            return cast<uint32_t>(voteAny(p, fmap([](const EWord32& x) { return x > 1u; }, c)));
          });
        },
        splitUp(64, in)));
  });
}
