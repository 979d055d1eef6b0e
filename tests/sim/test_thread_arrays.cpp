// Thread arrays (threadArray): a Block or Warp program's values per thread, in registers across
// its barriers. Their CUDA, their simulation against C++, and the rules that keep them defined:
// each instance of a loop that touches one has a thread of its own (verify), and a thread reads
// only what it wrote (the simulator).
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../support.hpp"
#include "../thread_array_kernels.hpp"

using namespace obsidian;
using namespace obsidian::testing;
using ::testing::errorOf;
using ::testing::randomWords;

TEST_CASE("threadArray: a block's items stay in registers across its barriers") {
  const Kernel k = threadItemsKernel();
  const std::string cuda = k.cuda();
  CHECK(cuda.find("uint32_t loc0[4];") != std::string::npos);
  // The input is read once (one load per item), and shared memory holds the sums and the
  // reduction's partials, not the items (which would take 512 * 4 bytes).
  CHECK(::testing::count(cuda, "in0[") == 4);
  CHECK(k.report().sharedBytes < 512 * 4);
  for (size_t blocks : {size_t{1}, size_t{5}}) {
    const std::vector<uint32_t> in = randomWords(512 * blocks, static_cast<uint32_t>(blocks));
    std::vector<uint32_t> out(in.size());
    simulate(k, {in, out});
    CHECK(out == threadItemsReference(in));
  }
}

TEST_CASE("blockReduce of a thread array: no staging, one barrier fewer") {
  const Kernel staged = threadItemsKernel(true), direct = threadItemsKernel(false);
  CHECK(direct.report().barriers.block + 1 == staged.report().barriers.block);
  CHECK(direct.report().sharedBytes < staged.report().sharedBytes);
  const std::vector<uint32_t> in = randomWords(512 * 3, 4);
  std::vector<uint32_t> out(in.size());
  simulate(direct, {in, out});
  CHECK(out == threadItemsReference(in));
  CHECK(errorOf([] {
          capture("odd", 96, [](DPull<EWord32> in) {
            return pConcat(fmap(
                [](const SPull<EWord32>& c) {
                  return exec<Block>([c](const Program<Block>& p) {
                    const ThreadArray<uint32_t> items = threadArray<uint32_t>(p, 1);
                    p.forAll(96u, [&](const Program<Thread>& t, const EWord32& i) {
                      items.write(t, 0, c[i]);
                    });
                    const EWord32 total = blockReduce(
                        p, [](const EWord32& a, const EWord32& b) { return a + b; }, items);
                    return push<Block>(fmap([total](const EWord32& x) { return x + total; }, c));
                  });
                },
                splitUp(96, in)));
          });
        }) ==
        "blockReduce of a thread array needs a block of 32, 64, 128, 256, 512 or 1024 threads; "
        "got 96");
}

TEST_CASE("threadArray: a warp's items across __syncwarp") {
  const Kernel k = warpItemsKernel();
  CHECK(k.cuda().find("uint32_t loc0[2];") != std::string::npos);
  const std::vector<uint32_t> in = randomWords(128 * 3, 11);
  std::vector<uint32_t> out(in.size());
  simulate(k, {in, out});
  CHECK(out == warpItemsReference(in));
}

namespace {
// A block program of `threads` threads: a thread array written by a loop over `writers`
// instances and read by one over `readers`.
Kernel itemsKernel(uint32_t threads, uint32_t writers, uint32_t readers) {
  return capture("items", threads, [=](DPull<EWord32> in) {
    return pConcat(fmap(
        [=](const SPull<EWord32>& c) {
          return exec<Block>([=](const Program<Block>& p) {
            const ThreadArray<uint32_t> items = threadArray<uint32_t>(p, 1);
            p.forAll(writers,
                     [&](const Program<Thread>& t, const EWord32& i) { items.write(t, 0, c[i]); });
            p.sync();
            return mkPush<Block, EWord32>(
                readers, [items, readers](const Program<Block>& q, const Writer<EWord32>& out) {
                  q.forAll(readers, [&](const Program<Thread>& t, const EWord32& i) {
                    out(t, items[0] + 1u, i);
                  });
                });
          });
        },
        splitUp(readers, in)));
  });
}
}  // namespace

TEST_CASE("threadArray: the rules, each with a message that names it") {
  // More instances than threads: virtual threads would share a thread's registers.
  CHECK(errorOf([] { itemsKernel(64, 128, 128); }) ==
        "verify(kernel items): thread array loc0 (1 per thread) is used in a parallel loop over "
        "128 threads of a block of 64: each instance needs a thread of its own, or they would "
        "share its registers");
  CHECK(errorOf([] { itemsKernel(128, 128, 128); }) == "no error");
  // Fewer writers than readers: threads 64..127 read a register they never wrote.
  const Kernel partial = itemsKernel(128, 64, 128);
  const std::vector<uint32_t> in = randomWords(128, 3);
  std::vector<uint32_t> out(128);
  const std::string hazard = errorOf([&] { simulate(partial, {in, out}); });
  CHECK(hazard ==
        "simulate(kernel items): read of never-written element 0 of thread array loc0 (1 per "
        "thread) by block 0 thread 64 in `out0[bid0 * 128u + threadIdx.x] = loc0[0u] + 1u`");
  // Static indices within the array, and at least one element.
  CHECK(errorOf([] {
          capture("past", 32, [](DPull<EWord32> in) {
            return pConcat(fmap(
                [](const SPull<EWord32>& c) {
                  return exec<Block>([c](const Program<Block>& p) {
                    const ThreadArray<uint32_t> items = threadArray<uint32_t>(p, 2);
                    return push<Block>(fmap([items](const EWord32& x) { return x + items[2]; }, c));
                  });
                },
                splitUp(32, in)));
          });
        }) == "threadArray: a read of element 2 of a thread array of 2 elements per thread");
  CHECK(errorOf([] {
          capture("none", 32, [](DPull<EWord32> in) {
            return pConcat(fmap(
                [](const SPull<EWord32>& c) {
                  return exec<Block>([c](const Program<Block>& p) {
                    threadArray<float>(p, 0);
                    return push<Block>(c);
                  });
                },
                splitUp(32, in)));
          });
        }) == "threadArray needs at least one element per thread; got 0");
}
