// Kernels with warp votes (ballot, voteAny, voteAll, matchAny) and bit intrinsics (popc, clz,
// ffs, brev) that the simulator and GPU tests share, with their plain C++ references. Every
// kernel runs warps of 32 lanes, two per block; lane l of a warp reads element l of its 32.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <obsidian/obsidian.hpp>
#include <random>
#include <string>
#include <vector>

namespace obsidian::testing {

// What a vote kernel computes for each lane.
enum class VoteCase : uint32_t {
  Ballot,     // ballot(x & 1)
  AnyAll,     // voteAny(x % 64 == 0) | voteAll(x % 64 != 0) << 1
  Rank,       // m = matchAny(x % 4): popc(m & lanes below) | popc(m) << 8 | ffs(m) << 16
  MatchF32,   // matchAny of x's bits as an f32 (NaNs, -0 and +0 among them)
  MatchU8,    // matchAny(u8(x % 3))
  MatchU64,   // matchAny(u64(x % 3) | u64(x % 2) << 40)
  BitsU32,    // popc(x) ^ clz(x) << 8 ^ ffs(x) << 16 ^ brev(x)
  BitsU64,    // the same of x | (x * 7) << 32, folded to 32 bits
  Broadcast,  // ballot(x & 1) read by a thread-level branch of half the lanes
  Compact,    // the warp's x with x % 3 != 0, in order, then zeros (compaction in a warp)
};
inline constexpr uint32_t kVoteCases = 10;

inline std::string voteCaseName(VoteCase c) {
  static const char* names[] = {"ballot",   "anyAll",  "rank",    "matchF32",  "matchU8",
                                "matchU64", "bitsU32", "bitsU64", "broadcast", "compact"};
  return names[static_cast<uint32_t>(c)];
}

inline Kernel voteKernel(VoteCase c) {
  return capture("votes_" + voteCaseName(c), 64, [c](DPull<EWord32> in) {
    return pConcat(fmap(
        [c](const SPull<EWord32>& block) {
          return pConcat(fmap(
              [c](const SPull<EWord32>& w) {
                return exec<Warp>([c, w](const Program<Warp>& q) -> SPush<Warp, EWord32> {
                  auto lanes = [&q](auto f) { return push<Warp>(mkPull(32u, f)); };
                  switch (c) {
                    case VoteCase::Ballot: {
                      const EWord32 b =
                          ballot(q, fmap([](const EWord32& x) { return (x & 1u) == 1u; }, w));
                      return lanes([b](const EWord32&) { return b; });
                    }
                    case VoteCase::AnyAll: {
                      const EBool any =
                          voteAny(q, fmap([](const EWord32& x) { return x % 64u == 0u; }, w));
                      const EBool all = voteAll(
                          q, push<Warp>(fmap([](const EWord32& x) { return x % 64u != 0u; }, w)));
                      return lanes([any, all](const EWord32&) {
                        return cast<uint32_t>(any) | (cast<uint32_t>(all) << 1u);
                      });
                    }
                    case VoteCase::Rank: {
                      const auto m = matchAny(q, fmap([](const EWord32& x) { return x % 4u; }, w));
                      return lanes([m](const EWord32& l) {
                        const EWord32 mine = m[l];
                        return popc(mine & ((EWord32(1u) << l) - 1u)) | (popc(mine) << 8u) |
                               (ffs(mine) << 16u);
                      });
                    }
                    case VoteCase::MatchF32: {
                      const auto m =
                          matchAny(q, fmap([](const EWord32& x) { return bitcast<float>(x); }, w));
                      return lanes([m](const EWord32& l) { return m[l]; });
                    }
                    case VoteCase::MatchU8: {
                      const auto m = matchAny(
                          q, fmap([](const EWord32& x) { return cast<uint8_t>(x % 3u); }, w));
                      return lanes([m](const EWord32& l) { return m[l]; });
                    }
                    case VoteCase::MatchU64: {
                      const auto m =
                          matchAny(q, fmap(
                                          [](const EWord32& x) {
                                            return cast<uint64_t>(x % 3u) |
                                                   (cast<uint64_t>(x % 2u) << EWord64(40u));
                                          },
                                          w));
                      return lanes([m](const EWord32& l) { return m[l]; });
                    }
                    case VoteCase::BitsU32:
                      return push<Warp>(fmap(
                          [](const EWord32& x) {
                            return popc(x) ^ (clz(x) << 8u) ^ (ffs(x) << 16u) ^ brev(x);
                          },
                          w));
                    case VoteCase::BitsU64:
                      return push<Warp>(fmap(
                          [](const EWord32& x) {
                            const EWord64 y =
                                cast<uint64_t>(x) | (cast<uint64_t>(x * 7u) << EWord64(32u));
                            const EWord64 r = brev(y);
                            return popc(y) ^ (clz(y) << 8u) ^ (ffs(y) << 16u) ^ cast<uint32_t>(r) ^
                                   cast<uint32_t>(r >> EWord64(32u));
                          },
                          w));
                    case VoteCase::Broadcast: {
                      const auto preds = fmap([](const EWord32& x) { return (x & 1u) == 1u; }, w);
                      return mkPush<Warp, EWord32>(
                          32u, [preds, w](const Program<Warp>& r, const Writer<EWord32>& out) {
                            const EWord32 b = ballot(r, preds);
                            const SMutable<uint32_t> s = newShared<uint32_t>(r, 32);
                            r.forAll(32u, [&](const Program<Thread>& t, const EWord32& l) {
                              write(t, s, l, w[l]);
                              // Only the odd lanes read the ballot: the whole warp takes it in
                              // front of the loop.
                              t.cond(l % 2u == 1u,
                                     [&](const Program<Thread>& u) { write(u, s, l, b); });
                              out(t, s[l], l);
                            });
                          });
                    }
                    case VoteCase::Compact: {
                      // A kept element goes to the number of kept ones in the lanes below.
                      const auto keep = fmap([](const EWord32& x) { return x % 3u != 0u; }, w);
                      return mkPush<Warp, EWord32>(
                          32u, [keep, w](const Program<Warp>& r, const Writer<EWord32>& out) {
                            const EWord32 b = ballot(r, keep);
                            const SMutable<uint32_t> s = newShared<uint32_t>(r, 32);
                            r.forAll(32u, [&](const Program<Thread>& t, const EWord32& l) {
                              write(t, s, l, EWord32(0u));
                            });
                            r.sync();
                            r.forAll(32u, [&](const Program<Thread>& t, const EWord32& l) {
                              t.cond(keep[l], [&](const Program<Thread>& u) {
                                write(u, s, popc(b & ((EWord32(1u) << l) - 1u)), w[l]);
                              });
                            });
                            r.sync();
                            r.forAll(32u, [&](const Program<Thread>& t, const EWord32& l) {
                              out(t, s[l], l);
                            });
                          });
                    }
                  }
                  return push<Warp>(w);
                });
              },
              splitUp(32, block)));
        },
        splitUp(64, in)));
  });
}

// The kernels' input: random words, with zeros, equal neighbours and float specials.
inline std::vector<uint32_t> voteInput(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  const uint32_t specials[] = {0x7fc00000u, 0x7fc00001u, 0xffc00000u, 0x7f800001u,
                               0x80000000u, 0u,          0x7f800000u, 0x3f800000u};
  for (size_t i = 0; i < n; ++i) {
    const uint32_t r = rng();
    v[i] = r % 7 == 0 ? 0u : r % 7 == 1 ? specials[(r >> 8) % 8] : r % 7 == 2 ? r % 64 : r;
  }
  return v;
}

inline std::vector<uint32_t> voteReference(VoteCase c, const std::vector<uint32_t>& in) {
  std::vector<uint32_t> out(in.size());
  for (size_t w = 0; w < in.size(); w += 32) {
    auto mask = [&](auto pred) {
      uint32_t m = 0;
      for (uint32_t l = 0; l < 32; ++l) m |= pred(in[w + l]) ? 1u << l : 0u;
      return m;
    };
    auto match = [&](uint32_t l, auto key) {
      return mask([&](uint32_t x) { return key(x) == key(in[w + l]); });
    };
    for (uint32_t l = 0; l < 32; ++l) {
      const uint32_t x = in[w + l];
      uint32_t r = 0;
      switch (c) {
        case VoteCase::Ballot:
        case VoteCase::Broadcast: {
          const uint32_t b = mask([](uint32_t y) { return (y & 1) == 1; });
          r = c == VoteCase::Ballot || l % 2 == 1 ? b : x;
          break;
        }
        case VoteCase::AnyAll:
          r = (mask([](uint32_t y) { return y % 64 == 0; }) != 0 ? 1u : 0u) |
              (mask([](uint32_t y) { return y % 64 != 0; }) == 0xffffffffu ? 2u : 0u);
          break;
        case VoteCase::Rank: {
          const uint32_t m = match(l, [](uint32_t y) { return y % 4; });
          r = static_cast<uint32_t>(std::popcount(m & ((1u << l) - 1u))) |
              static_cast<uint32_t>(std::popcount(m)) << 8 |
              static_cast<uint32_t>(std::countr_zero(m) + 1) << 16;
          break;
        }
        case VoteCase::MatchF32: r = match(l, [](uint32_t y) { return y; }); break;
        case VoteCase::MatchU8: r = match(l, [](uint32_t y) { return y % 3; }); break;
        case VoteCase::MatchU64:
          r = match(l, [](uint32_t y) { return uint64_t{y % 3} | uint64_t{y % 2} << 40; });
          break;
        case VoteCase::BitsU32: {
          const uint32_t ffs = x == 0 ? 0u : static_cast<uint32_t>(std::countr_zero(x)) + 1;
          r = static_cast<uint32_t>(std::popcount(x)) ^
              static_cast<uint32_t>(std::countl_zero(x)) << 8 ^ ffs << 16 ^ [](uint32_t v) {
                uint32_t b = 0;
                for (int i = 0; i < 32; ++i) b |= ((v >> i) & 1u) << (31 - i);
                return b;
              }(x);
          break;
        }
        case VoteCase::Compact: break;  // below, for the whole warp
        case VoteCase::BitsU64: {
          const uint64_t y = uint64_t{x} | uint64_t{x * 7u} << 32;
          uint64_t b = 0;
          for (int i = 0; i < 64; ++i) b |= ((y >> i) & 1u) << (63 - i);
          const uint32_t ffs = y == 0 ? 0u : static_cast<uint32_t>(std::countr_zero(y)) + 1;
          r = static_cast<uint32_t>(std::popcount(y)) ^
              static_cast<uint32_t>(std::countl_zero(y)) << 8 ^ ffs << 16 ^
              static_cast<uint32_t>(b) ^ static_cast<uint32_t>(b >> 32);
          break;
        }
      }
      out[w + l] = r;
    }
    if (c == VoteCase::Compact) {
      uint32_t kept = 0;
      for (uint32_t l = 0; l < 32; ++l) out[w + l] = 0;
      for (uint32_t l = 0; l < 32; ++l) {
        if (in[w + l] % 3 != 0) out[w + kept++] = in[w + l];
      }
    }
  }
  return out;
}

}  // namespace obsidian::testing
