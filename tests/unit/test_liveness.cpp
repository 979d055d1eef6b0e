// Tests for the liveness analysis of shared arrays, the reuse barriers it asks for, and the
// memory map that places arrays by simulating the first-fit allocator.
#include <doctest/doctest.h>

#include <algorithm>
#include <obsidian/report_json.hpp>
#include <string>
#include <vector>

#include "../../examples/increment/increment.hpp"
#include "../../examples/reduce/reduce.hpp"
#include "ir_builder.hpp"
#include "kernel/kernel_access.hpp"
#include "memmap/liveness.hpp"
#include "memmap/memory_map.hpp"
#include "memmap/reuse_barriers.hpp"

using namespace obsidian;
using namespace obsidian::testing;

namespace {

const ArrayLiveness& of(const Liveness& l, ArrayId a) {
  for (const ArrayLiveness& x : l.arrays) {
    if (x.array == a) return x;
  }
  FAIL("no liveness for array " << a);
  return l.arrays.front();
}

const ArrayPlacement& placed(const std::vector<ArrayPlacement>& ps, ArrayId a) {
  for (const ArrayPlacement& p : ps) {
    if (p.array == a) return p;
  }
  FAIL("no placement for array " << a);
  return ps.front();
}

bool bytesOverlap(const ArrayPlacement& a, const ArrayPlacement& b) {
  return a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}
bool liveOverlap(const ArrayPlacement& a, const ArrayPlacement& b) {
  return a.liveFrom <= b.liveTo && b.liveFrom <= a.liveTo;
}

// No two arrays that are live at the same time share a byte.
void checkNoLiveSharing(const Kernel& kernel) {
  const auto& ps = detail::KernelAccess::lowered(kernel).memory.placements;
  for (size_t i = 0; i < ps.size(); ++i) {
    CHECK(ps[i].offset % 16 == 0);
    CHECK(ps[i].offset + ps[i].bytes <= kernel.sharedBytes());
    for (size_t j = i + 1; j < ps.size(); ++j) {
      if (liveOverlap(ps[i], ps[j])) {
        INFO(kernel.name() << ": arrays " << ps[i].array << " and " << ps[j].array);
        CHECK_FALSE(bytesOverlap(ps[i], ps[j]));
      }
    }
  }
}

}  // namespace

TEST_CASE("liveness: an array allocated before a loop stays live for the whole loop") {
  Ir t(64);
  const ArrayId a = t.shared("a", 64), b = t.shared("b", 64);
  Body loop;
  loop.push_back(Ir::par(Level::Block, 64, "j", t.out, V("j"), rd(a, V("j"))));     // 6, 7
  loop.push_back(Sync{Level::Block});                                               // 8
  loop.push_back(Ir::par(Level::Block, 64, "k", t.out, V("k"), rd(t.in, V("k"))));  // 9, 10
  loop.push_back(Sync{Level::Block});                                               // 11
  Body blk;
  blk.push_back(Allocate{a});                                                   // 1
  blk.push_back(Ir::par(Level::Block, 64, "i", a, V("i"), rd(t.in, V("i"))));   // 2, 3
  blk.push_back(Sync{Level::Block});                                            // 4
  blk.push_back(SeqFor{Level::Block, "s", lit(0), lit(4), lit(1), loop});       // 5
  blk.push_back(Sync{Level::Block});                                            // 12
  blk.push_back(Allocate{b});                                                   // 13
  blk.push_back(Ir::par(Level::Block, 64, "m", b, V("m"), rd(t.in, V("m"))));   // 14, 15
  blk.push_back(Sync{Level::Block});                                            // 16
  blk.push_back(Ir::par(Level::Block, 64, "q", t.out, V("q"), rd(b, V("q"))));  // 17, 18
  blk.push_back(Sync{Level::Block});                                            // 19
  t.blocks(blk);

  const SpreadPlans plans = planVirtualization(t.k);
  const Liveness live = analyzeLiveness(t.k, plans);
  CHECK(live.statements == 20);
  const ArrayLiveness& la = of(live, a);
  CHECK(la.allocPos == 1);
  // The last textual use is statement 7, inside the loop; a later iteration reads it again.
  CHECK(la.lastUsePos == 11);
  CHECK(la.freePos == 12);
  const ArrayLiveness& lb = of(live, b);
  CHECK(lb.allocPos == 13);
  CHECK(lb.lastUsePos == 18);
  CHECK(lb.freePos == 19);
  CHECK(live.needsTrailingSync.empty());

  // b starts after a is freed: the memory map gives it a's bytes.
  const MemoryMap map = memoryMap(t.k, plans, live, 48 * 1024);
  const std::vector<ArrayPlacement>& ps = map.placements;
  CHECK(placed(ps, a).offset == placed(ps, b).offset);
  CHECK(map.sharedBytes == 256);
  CHECK(placed(ps, a).liveFrom == 1);
  CHECK(placed(ps, a).liveTo == 12);
  CHECK(map.of(a).placed);
}

TEST_CASE("liveness: an array of a loop body with no barrier after its last use") {
  Ir t(32);
  const ArrayId tmp = t.shared("tmp", 32);
  Body loop;
  loop.push_back(Allocate{tmp});  // 2
  loop.push_back(Ir::par(Level::Block, 32, "i", tmp, V("i"),
                         rd(t.in, add(mul(V("s"), lit(32)), V("i")))));  // 3, 4
  loop.push_back(Sync{Level::Block});                                    // 5
  loop.push_back(Ir::par(Level::Block, 32, "j", t.out, add(mul(V("s"), lit(32)), V("j")),
                         rd(tmp, V("j"))));  // 6, 7
  Body blk;
  blk.push_back(SeqFor{Level::Block, "s", lit(0), lit(3), lit(1), loop});  // 1
  t.blocks(blk);
  const Body* loopBody = &std::get<SeqFor>(t.blockBody().at(0).node).body;

  Liveness live = analyzeLiveness(t.k, planVirtualization(t.k));
  // The next iteration writes tmp again while slow threads may still read it.
  REQUIRE(live.needsTrailingSync.count(loopBody) == 1);
  CHECK(live.needsTrailingSync.at(loopBody) == Level::Block);
  CHECK(live.needsTrailingSync.size() == 1);
  CHECK(of(live, tmp).lastUsePos == 7);
  CHECK(of(live, tmp).freePos == 7);

  // The reuse-barrier pass appends the barrier; then nothing more is needed.
  CHECK(insertReuseBarriers(t.k, live));
  const Body& after = std::get<SeqFor>(t.blockBody().at(0).node).body;
  REQUIRE(after.size() == 5);
  REQUIRE(std::holds_alternative<Sync>(after.back().node));
  CHECK(std::get<Sync>(after.back().node).level == Level::Block);
  live = analyzeLiveness(t.k, planVirtualization(t.k));
  CHECK(live.needsTrailingSync.empty());
  CHECK(of(live, tmp).freePos == 8);
  CHECK_FALSE(insertReuseBarriers(t.k, live));
}

TEST_CASE("liveness: a loop body that already ends with a barrier needs none") {
  Ir t(32);
  const ArrayId tmp = t.shared("tmp", 32);
  Body loop;
  loop.push_back(Allocate{tmp});
  loop.push_back(Ir::par(Level::Block, 32, "i", tmp, V("i"), rd(t.in, V("i"))));
  loop.push_back(Sync{Level::Block});
  loop.push_back(Ir::par(Level::Block, 32, "j", t.out, V("j"), rd(tmp, V("j"))));
  loop.push_back(Sync{Level::Block});  // 8
  Body blk;
  blk.push_back(SeqFor{Level::Block, "s", lit(0), lit(3), lit(1), loop});
  t.blocks(blk);
  const Liveness live = analyzeLiveness(t.k, planVirtualization(t.k));
  CHECK(live.needsTrailingSync.empty());
  CHECK(of(live, tmp).freePos == 8);
}

TEST_CASE("liveness: arrays are freed at the next barrier after their last use") {
  Ir t(64);
  const ArrayId a = t.shared("a", 64), b = t.shared("b", 32), c = t.shared("c", 16);
  Body blk;
  blk.push_back(Allocate{a});                                                  // 1
  blk.push_back(Ir::par(Level::Block, 64, "i", a, V("i"), rd(t.in, V("i"))));  // 2, 3
  blk.push_back(Sync{Level::Block});                                           // 4
  blk.push_back(Allocate{b});                                                  // 5
  blk.push_back(Ir::par(Level::Block, 32, "j", b, V("j"),
                        add(rd(a, V("j")), rd(a, add(V("j"), lit(32))))));         // 6, 7
  blk.push_back(Ir::par(Level::Block, 64, "k", t.out, V("k"), rd(t.in, V("k"))));  // 8, 9
  blk.push_back(Sync{Level::Block});                                               // 10
  // A block-uniform branch: c dies inside it, at the barrier after the branch.
  Body then;
  then.push_back(Allocate{c});                                                          // 12
  then.push_back(Ir::par(Level::Block, 16, "m", c, V("m"), rd(b, V("m"))));             // 13, 14
  then.push_back(Sync{Level::Block});                                                   // 15
  then.push_back(Ir::par(Level::Block, 16, "q", t.out, V("q"), rd(c, V("q"))));         // 16, 17
  blk.push_back(Cond{Level::Block, ir::binary(BinOp::Gt, V("n0"), lit(5)), then, {}});  // 11
  blk.push_back(Ir::par(Level::Block, 32, "r", t.out, V("r"), rd(b, V("r"))));          // 18, 19
  blk.push_back(Sync{Level::Block});                                                    // 20
  t.blocks(blk);

  const SpreadPlans plans = planVirtualization(t.k);
  const Liveness live = analyzeLiveness(t.k, plans);
  CHECK(of(live, a).lastUsePos == 7);
  CHECK(of(live, a).freePos == 10);  // not 7 or 9: the barrier at 10 is the first after
  CHECK(of(live, b).lastUsePos == 19);
  CHECK(of(live, b).freePos == 20);
  CHECK(of(live, c).allocPos == 12);
  CHECK(of(live, c).lastUsePos == 17);
  CHECK(of(live, c).freePos == 20);  // the branch has no barrier after its last use
  CHECK(live.needsTrailingSync.empty());

  // a (256 B) is free when c is allocated: c goes to offset 0, b stays at 256.
  const MemoryMap map = memoryMap(t.k, plans, live, 48 * 1024);
  const std::vector<ArrayPlacement>& ps = map.placements;
  CHECK(placed(ps, a).offset == 0);
  CHECK(placed(ps, b).offset == 256);
  CHECK(placed(ps, c).offset == 0);
  CHECK(map.sharedBytes == 256 + 128);
}

TEST_CASE("memory map: red3 reuses memory and never shares bytes between live arrays") {
  const Kernel kernel = paper::red3Kernel();
  const auto& ps = detail::KernelAccess::lowered(kernel).memory.placements;
  REQUIRE(ps.size() == 8);
  uint32_t sum = 0;
  for (const ArrayPlacement& p : ps) sum += p.bytes;
  CHECK(sum == 1024 + 512 + 256 + 128 + 64 + 32 + 16 + 8);
  CHECK(kernel.sharedBytes() < sum);
  CHECK(kernel.sharedBytes() == 1024 + 512);  // two arrays live at a time
  checkNoLiveSharing(kernel);
  // Consecutive arrays are both live (one is read to write the other).
  for (size_t i = 0; i + 1 < ps.size(); ++i) CHECK(liveOverlap(ps[i], ps[i + 1]));
  // The report shows the same placements.
  const auto report = toJson(kernel.report());
  REQUIRE(report["sharedArrays"].size() == 8);
  CHECK(report["sharedArrays"][1]["offset"].get<uint32_t>() == ps[1].offset);
  CHECK(report["sharedBytes"].get<uint32_t>() == 1536);

  // On the reified IR: the last array is read by the final one-thread write, with no barrier
  // after it in the virtual-block loop body, which therefore needs a trailing __syncthreads.
  const KernelIR& reified = detail::KernelAccess::lowered(kernel).reified;
  const Liveness live = analyzeLiveness(reified, SpreadPlans{});  // no warp programs to plan
  CHECK(live.arrays.size() == 8);
  const Body* blockBody = &std::get<DistrPar>(reified.body.at(0).node).body;
  REQUIRE(live.needsTrailingSync.count(blockBody) == 1);
  CHECK(live.needsTrailingSync.at(blockBody) == Level::Block);
  CHECK(detail::KernelAccess::lowered(kernel).barriers.block == 9);  // 8 forces + the trailing one
}

TEST_CASE("memory map: the paper's kernels never share bytes between live arrays") {
  for (const Kernel& kernel : {paper::red5Kernel(), paper::sumUpKernel(),
                               paper::agnosticBlockKernel(), paper::agnosticWarpKernel()}) {
    checkNoLiveSharing(kernel);
  }
}

TEST_CASE("memory map: warp arrays take one slice per real warp") {
  const Kernel kernel = paper::agnosticWarpKernel();  // 256 threads: 8 warps
  const auto& ps = detail::KernelAccess::lowered(kernel).memory.placements;
  REQUIRE(ps.size() == 3);
  for (const ArrayPlacement& p : ps) {
    CHECK(kernel.ir().arrays[p.array].level == Level::Warp);
    CHECK(kernel.ir().arrays[p.array].length == 32);
    CHECK(p.bytes == 32 * 4 * 8);
  }
  checkNoLiveSharing(kernel);
  ArrayDecl w;
  w.name = "w";
  w.level = Level::Warp;
  w.length = 10;
  w.type = ScalarType::F64;
  CHECK(sharedFootprint(w, 256) == 10 * 8 * 8);
  CHECK(sharedFootprint(w, 64) == 10 * 8 * 2);
  CHECK(sharedFootprint(w, 32) == 10 * 8);
  w.level = Level::Block;
  CHECK(sharedFootprint(w, 256) == 10 * 8);
  w.type = ScalarType::U8;
  CHECK(sharedFootprint(w, 256) == 10);
}

TEST_CASE("liveness: warp arrays are freed at the first __syncthreads after their program") {
  Ir t(256);
  const ArrayId y = t.shared("y", 32, Level::Warp);
  Body warp;
  warp.push_back(Allocate{y});                                                  // 2
  warp.push_back(Ir::par(Level::Warp, 32, "i", y, V("i"), rd(t.in, V("i"))));   // 3, 4
  warp.push_back(Sync{Level::Warp});                                            // 5
  warp.push_back(Ir::par(Level::Warp, 32, "j", t.out, V("j"), rd(y, V("j"))));  // 6, 7
  Body blk;
  blk.push_back(DistrPar{Level::Warp, lit(8), "w", warp});                          // 1
  blk.push_back(Ir::par(Level::Block, 256, "k", t.out, V("k"), rd(t.in, V("k"))));  // 8, 9
  blk.push_back(Sync{Level::Block});                                                // 10
  t.blocks(blk);
  Liveness live = analyzeLiveness(t.k, planVirtualization(t.k));
  CHECK(of(live, y).freePos == 10);
  // As many virtual warps as real ones: no slice is reused within the block program.
  CHECK(live.needsTrailingSync.empty());

  // 16 virtual warps on 8 real ones: each real warp runs two, reusing its slice.
  std::get<DistrPar>(t.blockBody().at(0).node).count = lit(16);
  live = analyzeLiveness(t.k, planVirtualization(t.k));
  const Body* warpBody = &std::get<DistrPar>(t.blockBody().at(0).node).body;
  REQUIRE(live.needsTrailingSync.count(warpBody) == 1);
  CHECK(live.needsTrailingSync.at(warpBody) == Level::Warp);
}

TEST_CASE(
    "liveness: warp slices that other warps' slices reuse need a __syncthreads at the "
    "end of the virtual-block loop") {
  // Two warp programs separated by a __syncthreads: y (32 per warp) dies at the barrier and x
  // (64 per warp) gets its bytes, so warp 1's slice of x covers warp 2's slice of y. In the
  // loop over virtual blocks, warp 2 may write y for the next block while warp 1 still reads
  // x: a __syncwarp at the end of the body does not order them; only a __syncthreads does.
  Ir t(256);
  const ArrayId y = t.shared("y", 32, Level::Warp), x = t.shared("x", 64, Level::Warp);
  auto phase = [&](ArrayId a, uint32_t len, const char* w, const char* i, const char* j) {
    Body b;
    b.push_back(Allocate{a});
    b.push_back(Ir::par(Level::Warp, len, i, a, V(i), rd(t.in, V(i))));
    b.push_back(Sync{Level::Warp});
    b.push_back(Ir::par(Level::Warp, len, j, t.out, add(mul(V(w), lit(len)), V(j)), rd(a, V(j))));
    return DistrPar{Level::Warp, lit(8), w, b};
  };
  Body blk;
  blk.push_back(phase(y, 32, "w", "i", "j"));   // 1..7
  blk.push_back(Sync{Level::Block});            // 8
  blk.push_back(phase(x, 64, "w2", "k", "l"));  // 9..15
  t.blocks(blk);

  const Liveness live = analyzeLiveness(t.k, planVirtualization(t.k));
  CHECK(of(live, y).freePos == 8);
  CHECK(of(live, x).freePos == 15);
  const LoweredKernel lowered = lowerKernel(t.k, LowerOptions{});
  const ArrayPlacement& py = placed(lowered.memory.placements, y);
  const ArrayPlacement& px = placed(lowered.memory.placements, x);
  REQUIRE(py.bytes == 1024);
  REQUIRE(px.bytes == 2048);
  if (bytesOverlap(py, px)) {
    const Body& loop = std::get<SeqFor>(lowered.lowered.body.at(0).node).body;
    REQUIRE_FALSE(loop.empty());
    const auto* last = std::get_if<Sync>(&loop.back().node);
    REQUIRE(last != nullptr);
    CHECK(last->level == Level::Block);
  }
}

TEST_CASE("memory map: over the limit names the arrays live at the peak") {
  CaptureOptions options;
  options.sharedMemoryLimit = 1000;
  auto reduce = [](DPull<EWord32> in) {
    return mapRed(
        512,
        [](const Program<Block>& p, const SPull<EWord32>& c) { return red3(p, 2, paper::plus, c); },
        in);
  };
  try {
    (void)capture("tooBig", 256, reduce, options);
    FAIL("expected an Error");
  } catch (const Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("tooBig") != std::string::npos);
    CHECK(msg.find("1536") != std::string::npos);
    CHECK(msg.find("1000") != std::string::npos);
    CHECK(msg.find("arr0 (1024 B at offset 0)") != std::string::npos);
    CHECK(msg.find("arr1 (512 B at offset 1024)") != std::string::npos);
    CHECK(msg.find("arr2") == std::string::npos);  // not live at the peak
  }
  options.sharedMemoryLimit = 1536;  // exactly enough
  CHECK(capture("justFits", 256, reduce, options).sharedBytes() == 1536);
}

TEST_CASE("liveness: a warp array in a warp-level loop body is reused by the next iteration") {
  // seqFor Warp s < 4 { y = force (32 per warp); out[j] = y[31 - j] }: in iteration s + 1
  // lane i writes y[i] while lane 31 - i of the same warp may still read it for iteration s.
  // Lanes of a warp are not in lock-step (independent thread scheduling), so the loop body
  // needs a trailing __syncwarp, as a block-level loop body gets a __syncthreads.
  Ir t(256);
  const ArrayId y = t.shared("y", 32, Level::Warp);
  Body loop;
  loop.push_back(Allocate{y});
  loop.push_back(Ir::par(Level::Warp, 32, "i", y, V("i"), rd(t.in, add(V("s"), V("i")))));
  loop.push_back(Sync{Level::Warp});
  loop.push_back(Ir::par(Level::Warp, 32, "j", t.out, add(mul(V("w"), lit(32)), V("j")),
                         rd(y, ir::binary(BinOp::Sub, lit(31), V("j")))));
  Body warp{SeqFor{Level::Warp, "s", lit(0), lit(4), lit(1), loop}};
  Body blk{DistrPar{Level::Warp, lit(8), "w", warp}};
  t.blocks(blk);
  const LoweredKernel lowered = lowerKernel(t.k, LowerOptions{});
  // bid loop > s loop (the 8 warp programs map onto the 8 real warps one to one)
  const SeqFor& bidLoop = std::get<SeqFor>(lowered.lowered.body.at(0).node);
  const SeqFor* sLoop = nullptr;
  for (const Stmt& s : bidLoop.body) {
    if (const auto* f = std::get_if<SeqFor>(&s.node); f && f->var == "s") sLoop = f;
  }
  REQUIRE(sLoop != nullptr);
  REQUIRE_FALSE(sLoop->body.empty());
  CHECK(std::holds_alternative<Sync>(sLoop->body.back().node));
}
