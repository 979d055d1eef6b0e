// Warp votes (ballot, voteAny, voteAll, matchAny) and bit intrinsics (popc, clz, ffs, brev):
// the CUDA they print, their exact simulator semantics against C++, their folding at generation
// time, and the rules that keep a vote defined (every lane of the warp takes part).
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../support.hpp"
#include "../vote_kernels.hpp"

using namespace obsidian;
using namespace obsidian::testing;
using ::testing::errorOf;
using ::testing::randomWords;

TEST_CASE("warp votes and bit intrinsics: the simulator matches C++ on every case") {
  for (uint32_t i = 0; i < kVoteCases; ++i) {
    const auto c = static_cast<VoteCase>(i);
    CAPTURE(voteCaseName(c));
    const Kernel k = voteKernel(c);
    for (size_t blocks : {size_t{1}, size_t{7}}) {
      const std::vector<uint32_t> in = voteInput(64 * blocks, static_cast<uint32_t>(i + blocks));
      std::vector<uint32_t> out(in.size());
      simulate(k, {in, out});
      CHECK(out == voteReference(c, in));
    }
  }
}

TEST_CASE("warp votes print as CUDA's *_sync intrinsics of the whole warp, with no shared memory") {
  const std::string ballot = voteKernel(VoteCase::Ballot).cuda();
  CHECK(ballot.find("__ballot_sync(0xffffffffu, reg") != std::string::npos);
  const std::string anyAll = voteKernel(VoteCase::AnyAll).cuda();
  CHECK(anyAll.find("__any_sync(0xffffffffu, reg") != std::string::npos);
  CHECK(anyAll.find("__all_sync(0xffffffffu, reg") != std::string::npos);
  const Kernel rank = voteKernel(VoteCase::Rank);
  CHECK(rank.cuda().find("__match_any_sync(0xffffffffu, reg") != std::string::npos);
  CHECK(rank.cuda().find("(uint32_t)__popc(") != std::string::npos);
  CHECK(rank.cuda().find("(uint32_t)__ffs(") != std::string::npos);
  CHECK(rank.report().sharedBytes == 0);
  CHECK(rank.cuda().find("__syncwarp") == std::string::npos);
  // u8 has no match_any overload: it is compared as unsigned.
  CHECK(voteKernel(VoteCase::MatchU8).cuda().find("__match_any_sync(0xffffffffu, (unsigned)reg") !=
        std::string::npos);
  const std::string bits = voteKernel(VoteCase::BitsU64).cuda();
  for (const char* f : {"__popcll(", "__clzll(", "__ffsll(", "__brevll("}) {
    CHECK_MESSAGE(bits.find(f) != std::string::npos, f);
  }
  // The ballot read only by the odd lanes is taken by the whole warp in front of their branch.
  const std::string broadcast = voteKernel(VoteCase::Broadcast).cuda();
  const size_t vote = broadcast.find("__ballot_sync"), branch = broadcast.find("% 2u == 1u");
  REQUIRE(vote != std::string::npos);
  REQUIRE(branch != std::string::npos);
  CHECK(vote < branch);
}

TEST_CASE("warp votes and bit intrinsics: every case compiles with NVRTC for sm_90") {
  for (uint32_t i = 0; i < kVoteCases; ++i) {
    const auto c = static_cast<VoteCase>(i);
    CAPTURE(voteCaseName(c));
    const Kernel k = voteKernel(c);
    const CompileResult r = compileCuda(k.cuda(), k.name());
    CHECK(r.ptx.find(i == 0 || i == 8 ? "vote.sync.ballot" : "") != std::string::npos);
    CHECK(r.registers > 0);
  }
}

TEST_CASE("bit intrinsics fold at generation time and follow CUDA at the edges") {
  auto lit = [](const EWord32& e) {
    uint32_t v = 0;
    REQUIRE(ir::literalU32(e.node(), v));
    return v;
  };
  CHECK(lit(popc(EWord32(0xf0f0u))) == 8);
  CHECK(lit(popc(EWord64(~uint64_t{0}))) == 64);
  CHECK(lit(clz(EWord32(0u))) == 32);
  CHECK(lit(clz(EWord64(uint64_t{0}))) == 64);
  CHECK(lit(clz(EWord32(1u))) == 31);
  CHECK(lit(clz(EWord64(uint64_t{1} << 40))) == 23);
  CHECK(lit(ffs(EWord32(0u))) == 0);
  CHECK(lit(ffs(EWord32(0x80000000u))) == 32);
  CHECK(lit(ffs(EWord64(uint64_t{1} << 63))) == 64);
  CHECK(lit(brev(EWord32(1u))) == 0x80000000u);
  CHECK(lit(brev(EWord32(0x12345678u))) == 0x1e6a2c48u);
  const EWord64 b = brev(EWord64(uint64_t{3}));
  REQUIRE(b.node()->isLiteral());
  CHECK(b.node()->bits == 0xc000000000000000ull);
}

TEST_CASE("warp votes: one value per lane, and errors that name the rule") {
  auto warpKernel = [](auto body) {
    return capture("k", 32, [body](DPull<EWord32> in) {
      return pConcat(fmap(
          [body](const SPull<EWord32>& c) {
            return pConcat(fmap(
                [body](const SPull<EWord32>& w) {
                  return singletonPush<Warp>(
                      [w, body](const Program<Warp>& q) { return body(q, w); });
                },
                splitUp(32, c)));
          },
          splitUp(32, in)));
    });
  };
  CHECK(errorOf([&] {
          warpKernel([](const Program<Warp>& q, const SPull<EWord32>& w) {
            return ballot(q, fmap([](const EWord32& x) { return x > 3u; }, halve(w).first));
          });
        }) == "ballot needs one value per lane of the warp (32 elements); got 16");
  CHECK(errorOf([&] {
          warpKernel([](const Program<Warp>& q, const SPull<EWord32>& w) {
            return matchAny(q, conc(w, w))[0u];
          });
        }) == "matchAny needs one value per lane of the warp (32 elements); got 64");
  CHECK(errorOf([&] {
          warpKernel([](const Program<Warp>& q, const SPull<EWord32>& w) {
            return cast<uint32_t>(voteAll(q, fmap([](const EWord32& x) { return x > 3u; }, w)));
          });
        }) == "no error");
  // The whole warp writes its lanes' predicates and votes once: a warp of 32 lanes, each with
  // the same answer.
  const Kernel k = warpKernel([](const Program<Warp>& q, const SPull<EWord32>& w) {
    return ballot(q, fmap([](const EWord32& x) { return x > 3u; }, w));
  });
  const std::vector<uint32_t> in = randomWords(32 * 3, 5, 8);
  std::vector<uint32_t> out(3);
  simulate(k, {in, out});
  for (size_t w = 0; w < 3; ++w) {
    uint32_t want = 0;
    for (uint32_t l = 0; l < 32; ++l) want |= in[w * 32 + l] > 3 ? 1u << l : 0u;
    CHECK(out[w] == want);
  }
}
