// Kernels with thread arrays (threadArray: a Block or Warp program's values per thread, in
// registers across its barriers) that the simulator and GPU tests share, with their plain C++
// references.
#pragma once

#include <cstdint>
#include <obsidian/obsidian.hpp>
#include <vector>

namespace obsidian::testing {

// Blocks of 128 threads over chunks of 512: each thread loads its 4 items into a thread array;
// the block's total is a block reduction, of the threads' sums written to shared memory after
// the loop (staged) or of the thread array itself (blockReduce of a ThreadArray); then each
// thread writes item * 3 + the total from its registers (no second read of the input, no
// staging of the items in shared memory).
inline Kernel threadItemsKernel(bool staged = true) {
  return capture(staged ? "threadItems" : "threadTotal", 128, [staged](DPull<EWord32> in) {
    return pConcat(fmap(
        [staged](const SPull<EWord32>& c) {
          return exec<Block>([c, staged](const Program<Block>& p) {
            const auto plus = [](const EWord32& a, const EWord32& b) { return a + b; };
            const ThreadArray<uint32_t> items = threadArray<uint32_t>(p, 4);
            p.forAll(128u, [&](const Program<Thread>& t, const EWord32& tid) {
              for (uint32_t k = 0; k < 4; ++k) items.write(t, k, c[tid * 4u + k]);
            });
            EWord32 total = 0u;
            if (staged) {
              const SMutable<uint32_t> sums = newShared<uint32_t>(p, 128);
              p.forAll(128u, [&](const Program<Thread>& t, const EWord32& tid) {
                write(t, sums, tid, items[0] + items[1] + items[2] + items[3]);
              });
              p.sync();
              total = blockReduce(p, plus, sums.pull());
            } else {
              total = blockReduce(p, plus, items);
            }
            return mkPush<Block, EWord32>(
                512u, [items, total](const Program<Block>& q, const Writer<EWord32>& out) {
                  q.forAll(128u, [&](const Program<Thread>& t, const EWord32& tid) {
                    for (uint32_t k = 0; k < 4; ++k) out(t, items[k] * 3u + total, tid * 4u + k);
                  });
                });
          });
        },
        splitUp(512, in)));
  });
}

inline std::vector<uint32_t> threadItemsReference(const std::vector<uint32_t>& in) {
  std::vector<uint32_t> out(in.size());
  for (size_t b = 0; b < in.size(); b += 512) {
    uint32_t total = 0;
    for (size_t i = b; i < b + 512; ++i) total += in[i];
    for (size_t i = b; i < b + 512; ++i) out[i] = in[i] * 3u + total;
  }
  return out;
}

// Warp programs (two per block of 64 threads) over 64 elements: lane l keeps elements 2l and
// 2l + 1 in a warp's thread array, puts the first in shared memory at 31 - l, and after the
// warp's barrier writes both of its own with its mirror lane's, the second plus the warp's
// total (warpReduce of the thread array).
inline Kernel warpItemsKernel() {
  return capture("warpItems", 64, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return pConcat(fmap(
              [](const SPull<EWord32>& w) {
                return exec<Warp>([w](const Program<Warp>& q) {
                  const ThreadArray<uint32_t> items = threadArray<uint32_t>(q, 2);
                  const SMutable<uint32_t> s = newShared<uint32_t>(q, 32);
                  q.forAll(32u, [&](const Program<Thread>& t, const EWord32& l) {
                    items.write(t, 0, w[2u * l]);
                    items.write(t, 1, w[2u * l + 1u]);
                    write(t, s, 31u - l, items[0]);
                  });
                  q.sync();
                  const EWord32 total = warpReduce(
                      q, [](const EWord32& a, const EWord32& b) { return a + b; }, items);
                  return mkPush<Warp, EWord32>(
                      64u, [items, s, total](const Program<Warp>& r, const Writer<EWord32>& out) {
                        r.forAll(32u, [&](const Program<Thread>& t, const EWord32& l) {
                          out(t, items[0] ^ s[l], 2u * l);
                          out(t, items[1] + s[l] + total, 2u * l + 1u);
                        });
                      });
                });
              },
              splitUp(64, c)));
        },
        splitUp(128, in)));
  });
}

inline std::vector<uint32_t> warpItemsReference(const std::vector<uint32_t>& in) {
  std::vector<uint32_t> out(in.size());
  for (size_t w = 0; w < in.size(); w += 64) {
    uint32_t total = 0;
    for (size_t i = w; i < w + 64; ++i) total += in[i];
    for (uint32_t l = 0; l < 32; ++l) {
      const uint32_t mirror = in[w + 2 * (31 - l)];
      out[w + 2 * l] = in[w + 2 * l] ^ mirror;
      out[w + 2 * l + 1] = in[w + 2 * l + 1] + mirror + total;
    }
  }
  return out;
}

}  // namespace obsidian::testing
