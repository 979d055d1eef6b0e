// One planted hazard of each kind is reported with the kernel, array, index, both threads and
// both statements. Faults are planted with testing::withFaults (drop a barrier, shrink an
// array) or by editing a kernel's lowered IR.
#include <doctest/doctest.h>

#include <obsidian/sim.hpp>

#include "../../examples/increment/increment.hpp"
#include "../../examples/reduce/reduce.hpp"
#include "kernel/kernel_access.hpp"

using namespace obsidian;

namespace {

std::vector<uint32_t> ones(size_t n) { return std::vector<uint32_t>(n, 1); }

// red3 over 512 elements with 256 threads; `faults` break it.
Kernel red3With(const Faults& faults) {
  const Kernel k = capture("red3", 256, [](DPull<EWord32> in) {
    return mapRed(
        512,
        [](const Program<Block>& p, const SPull<EWord32>& c) {
          return red3(p, 2, paper::plus, c);
        },
        in);
  });
  return testing::withFaults(k, faults);
}

std::string hazardOf(const Kernel& k, const std::vector<KernelArg>& args, SimOptions o = {}) {
  try {
    simulate(k, args, o);
  } catch (const HazardError& e) {
    return e.what();
  }
  return "no hazard";
}

}  // namespace

TEST_CASE("hazard: the intact kernels are clean") {
  std::vector<uint32_t> out(2);
  CHECK(hazardOf(red3With({}), {ones(1024), out}) == "no hazard");
  CHECK(out == std::vector<uint32_t>{512, 512});
}

TEST_CASE("hazard: a dropped __syncthreads is a shared-memory race") {
  Faults f;
  f.dropBarrier = 0;  // between the first and the second stage
  std::vector<uint32_t> out(2);
  CHECK(hazardOf(red3With(f), {ones(1024), out}) ==
        "simulate(kernel red3): shared-memory race on arr0[128]: block 0 thread 0 reads it in "
        "`arr1[threadIdx.x] = arr0[threadIdx.x] + arr0[threadIdx.x + 128u]` and block 0 thread "
        "128 wrote it in `arr0[threadIdx.x] = in0[bid0 * 512u + threadIdx.x] + in0[bid0 * 512u + "
        "(threadIdx.x + 256u)]` with no barrier between them");
}

TEST_CASE("hazard: dropping the barrier between virtual blocks races across iterations") {
  // The last barrier of red3 separates one virtual block from the next on a real block.
  const Kernel intact = red3With({});
  const uint32_t barriers = intact.report().barriers.block;
  Faults f;
  f.dropBarrier = static_cast<int>(barriers) - 1;
  std::vector<uint32_t> out(4);
  // With one block per chunk there is no reuse and no race...
  CHECK(hazardOf(red3With(f), {ones(2048), out}) == "no hazard");
  // ...with one real block for four chunks, the next chunk's first stage overwrites arr7.
  const std::string h = hazardOf(red3With(f), {ones(2048), out}, SimOptions{.blocks = 1});
  CHECK(h.find("shared-memory race on arr") != std::string::npos);
  CHECK(h.find("out0[bid0] = arr7[0u] + arr7[1u]") != std::string::npos);
}

TEST_CASE("hazard: a shrunk allocation is an out-of-bounds access") {
  Faults f;
  f.shrinkArray = "arr1";
  f.shrinkTo = 100;
  std::vector<uint32_t> out(2);
  CHECK(hazardOf(red3With(f), {ones(1024), out}) ==
        "simulate(kernel red3): out-of-bounds write of shared arr1[100] (length 100) by block 0 "
        "thread 100 in `arr1[threadIdx.x] = arr0[threadIdx.x] + arr0[threadIdx.x + 128u]`");
}

TEST_CASE("hazard: out-of-bounds global read") {
  const Kernel k = capture("shifted", 32, [](DPull<EWord32> in) {
    return push<Grid>(mkPull(len(in), [in](const EWord32& i) { return in[i + 1u]; }));
  });
  std::vector<uint32_t> out(40);
  CHECK(hazardOf(k, {ones(40), out}) ==
        "simulate(kernel shifted): out-of-bounds read of global in0[40] (the array has 40 "
        "elements) by block 1 thread 7 in `out0[i0] = in0[i0 + 1u]`");
}

TEST_CASE("hazard: a read of shared memory that nothing wrote") {
  const Kernel k = capture("uninit", 64, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            const SMutable<uint32_t> s = newShared<uint32_t>(p, 64);
            p.forAll(32u,
                     [&](const Program<Thread>& t, const EWord32& i) { write(t, s, i, c[i]); });
            p.sync();
            return push<Block>(s.pull());
          });
        },
        splitUp(64, in)));
  });
  std::vector<uint32_t> out(64);
  CHECK(hazardOf(k, {ones(64), out}) ==
        "simulate(kernel uninit): read of shared arr0[32] that nothing wrote, by block 0 thread "
        "32 in `out0[bid0 * 64u + threadIdx.x] = arr0[threadIdx.x]`");
}

TEST_CASE("hazard: a dropped __syncwarp is a race inside a warp") {
  auto warpKernel = [](int drop) {
    Faults f;
    f.dropBarrier = drop;
    return testing::withFaults(
        capture("warpRev", 64,
                [](DPull<EWord32> in) {
                  auto warps =
                      fmap([](const SPull<EWord32>& c) { return splitUp(32, c); }, splitUp(64, in));
                  return pConcat(fmap(
                      [](const SPull<SPull<EWord32>>& block) {
                        return pConcat(fmap(
                            [](const SPull<EWord32>& w) {
                              return exec<Warp>([w](const Program<Warp>& p) {
                                auto a = forcePull(p, w);
                                return push<Warp>(
                                    mkPull(32u, [a](const EWord32& i) { return a[31u - i]; }));
                              });
                            },
                            block));
                      },
                      warps));
                }),
        f);
  };
  std::vector<uint32_t> in(128), out(128);
  for (uint32_t i = 0; i < 128; ++i) in[i] = i + 1;
  CHECK(hazardOf(warpKernel(-1), {in, out}) == "no hazard");
  CHECK(out[0] == 32);
  const std::string h = hazardOf(warpKernel(0), {in, out});
  CHECK(h ==
        "simulate(kernel warpRev): shared-memory race on arr0[31]: block 0 thread 0 reads "
        "it in `out0[bid0 * 64u + threadIdx.x] = arr0[threadIdx.x / 32u * 32u + (31u - "
        "threadIdx.x % 32u)]` and block 0 thread 31 wrote it in `arr0[threadIdx.x] = "
        "in0[bid0 * 64u + threadIdx.x]` with no barrier between them");
}

TEST_CASE("hazard: two blocks write one global address without atomics") {
  const Kernel k = capture("collide", 32, [](DPull<EWord32> in) {
    // Every block writes its sum to element 0.
    return Push<Grid, EWord32, EWord32>(len(in) / 32u, [in](const Program<Grid>& p,
                                                            const Writer<EWord32>& w) {
      p.distrPar(len(in) / 32u, [&](const Program<Block>& b, const EWord32& bid) {
        b.forAll(1u, [&](const Program<Thread>& t, const EWord32&) { w(t, in[bid * 32u], 0u); });
      });
    });
  });
  std::vector<uint32_t> out(3);
  CHECK(hazardOf(k, {ones(96), out}) ==
        "simulate(kernel collide): global-memory race on out0[0]: block 1 thread 0 writes it in "
        "`out0[0u] = in0[bid0 * 32u]` and block 0 thread 0 wrote it in `out0[0u] = in0[bid0 * "
        "32u]` with no barrier between them");
}

TEST_CASE("hazard: a barrier reached by only part of a block") {
  // verify rejects this in a capture, so the lowered IR of a correct kernel is edited: the
  // first stage's barrier is moved under `if (threadIdx.x < 128u)`.
  LoweredKernel l = detail::KernelAccess::lowered(red3With({}));
  Body& grid = std::get<SeqFor>(l.lowered.body.at(0).node).body;
  auto sync = std::find_if(grid.begin(), grid.end(),
                           [](const Stmt& s) { return std::holds_alternative<Sync>(s.node); });
  REQUIRE(sync != grid.end());
  *sync = Cond{
      Level::Block, ir::binary(BinOp::Lt, ir::threadIdx(), ir::u32(128)), {Sync{Level::Block}}, {}};
  const Kernel broken = detail::KernelAccess::make(std::move(l));
  std::vector<uint32_t> out(2);
  CHECK(hazardOf(broken, {ones(1024), out}) ==
        "simulate(kernel red3): __syncthreads() reached by only part of block 0: 128 of 256 "
        "threads (first missing: thread 128) at `__syncthreads()`");
}

TEST_CASE("hazard: atomics from many blocks do not race with each other") {
  const Kernel k = capture("count", 32, [](DPull<EWord32> in, DMutable<uint32_t> total) {
    return pConcat(fmap(
        [total](const SPull<EWord32>& c) {
          return exec<Block>([c, total](const Program<Block>& p) {
            p.forAll(32u, [&](const Program<Thread>& t, const EWord32& i) {
              atomicAdd(t, total, 0u, c[i]);
            });
            return push<Block>(c);
          });
        },
        splitUp(32, in)));
  });
  std::vector<uint32_t> total(1, 0), out(320);
  CHECK(hazardOf(k, {ones(320), total, out}) == "no hazard");
  CHECK(total[0] == 320);
}

TEST_CASE("hazard: a plain read in one block and an update in another race") {
  // Block 0 reads total[0]; block 1 reads it and then updates it atomically: on a GPU block 0
  // may see either value.
  const Kernel k = capture("readThenUpdate", 1, [](DMutable<uint32_t> total) {
    return pConcat(mkPull(2u, [total](const EWord32& bid) {
      return singletonPush<Block>([total, bid](const Program<Block>& p) {
        p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
          atomicAdd(t, total, 1u - min(bid, 1u), 1u);
        });
        return total[0u] + bid;
      });
    }));
  });
  std::vector<uint32_t> total{0, 0}, out(2);
  const std::string h = hazardOf(k, {total, out});
  CHECK(h.find("global-memory race on m0[0]") != std::string::npos);
}

TEST_CASE("hazard: an atomic update of shared memory that nothing wrote") {
  const Kernel k = capture("uninitCounter", 32, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            const SMutable<uint32_t> counter = newShared<uint32_t>(p, 1);
            p.forAll(32u, [&](const Program<Thread>& t, const EWord32&) {
              atomicAdd(t, counter, 0u, 1u);
            });
            p.sync();
            return push<Block>(c);
          });
        },
        splitUp(32, in)));
  });
  std::vector<uint32_t> out(64);
  CHECK(hazardOf(k, {ones(64), out}) ==
        "simulate(kernel uninitCounter): atomic update of shared arr0[0] that nothing wrote, by "
        "block 0 thread 0 in `old0 = atomicAdd(&arr0[0u], 1u)`");
}

TEST_CASE("sim: a bool scalar parameter") {
  const Kernel k = capture("maybeDouble", 32, [](DPull<EWord32> in, EBool twice) {
    return push<Grid>(fmap([twice](const EWord32& x) { return ifThenElse(twice, x * 2u, x); }, in));
  });
  std::vector<uint32_t> out(40);
  simulate(k, {ones(40), true, out});
  CHECK(out == std::vector<uint32_t>(40, 2));
  simulate(k, {ones(40), false, out});
  CHECK(out == std::vector<uint32_t>(40, 1));
}
