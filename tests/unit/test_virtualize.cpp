// Tests for virtualize: how virtual threads, warps and blocks are mapped onto the real ones.
// Besides the shape of the statements and the CUDA text, the virtualized IR is *executed* by a
// small lock-step interpreter (every thread of a block runs each statement before the next
// one starts) to check that every virtual index is covered exactly once for any grid size.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "../../examples/increment/increment.hpp"
#include "../../examples/reduce/reduce.hpp"
#include "codegen/emit_cuda.hpp"
#include "codegen/virtualize.hpp"
#include "ir/ir_walk.hpp"
#include "ir/print.hpp"
#include "ir_builder.hpp"

using namespace obsidian;
using namespace obsidian::testing;

namespace {

// The pass as lowerKernel runs it: the plan, then the apply step.
KernelIR planAndVirtualize(KernelIR k) {
  const SpreadPlans plans = planVirtualization(k);
  return virtualize(std::move(k), plans);
}

// ---- the lock-step interpreter of virtualized IR
struct Run {
  std::map<uint32_t, uint32_t> out;     // out0 index -> value
  std::map<uint32_t, uint32_t> writes;  // out0 index -> number of writes
  bool ok = true;                       // no unknown construct, no unwritten read
  std::string problem;
};

class Interp {
 public:
  Interp(const KernelIR& k, uint32_t gridDim, uint32_t n0, ArrayId out)
      : k_(k), gridDim_(gridDim), n0_(n0), out_(out) {}

  Run run() {
    const uint32_t T = k_.threadsPerBlock;
    for (block_ = 0; block_ < gridDim_; ++block_) {
      shared_.clear();
      vars_.assign(T, {});
      exec(k_.body, std::vector<bool>(T, true));
    }
    return result_;
  }

 private:
  void fail(const std::string& why) {
    if (result_.ok) result_.problem = why;
    result_.ok = false;
  }

  uint32_t eval(const ExpPtr& e, uint32_t t) {
    switch (e->kind) {
      case ExpKind::Literal: return static_cast<uint32_t>(e->bits);
      case ExpKind::Var: {
        if (e->name == "n0") return n0_;
        const auto it = vars_[t].find(e->name);
        if (it == vars_[t].end()) {
          fail("unbound variable " + e->name);
          return 0;
        }
        return it->second;
      }
      case ExpKind::ThreadIdx: return t;
      case ExpKind::BlockIdx: return block_;
      case ExpKind::GridDim: return gridDim_;
      case ExpKind::Select: return eval(e->args[0], t) ? eval(e->args[1], t) : eval(e->args[2], t);
      case ExpKind::Index: {
        const uint32_t i = eval(e->args[0], t);
        const ArrayDecl& a = k_.arrays.at(e->array);
        if (a.name == "in0") return 1000 + i;
        const auto& mem = a.space == MemorySpace::Global ? global_[e->array] : shared_[e->array];
        const auto it = mem.find(i);
        if (it == mem.end()) {
          fail("read of unwritten " + a.name + "[" + std::to_string(i) + "]");
          return 0;
        }
        return it->second;
      }
      case ExpKind::Binary: {
        const uint32_t x = eval(e->args[0], t), y = eval(e->args[1], t);
        switch (e->binOp) {
          case BinOp::Add: return x + y;
          case BinOp::Sub: return x - y;
          case BinOp::Mul: return x * y;
          case BinOp::Div: return y ? x / y : (fail("division by zero"), 0u);
          case BinOp::Mod: return y ? x % y : (fail("division by zero"), 0u);
          case BinOp::Lt: return x < y;
          case BinOp::Le: return x <= y;
          case BinOp::Gt: return x > y;
          case BinOp::Ge: return x >= y;
          case BinOp::Eq: return x == y;
          case BinOp::Ne: return x != y;
          case BinOp::And: return x && y;
          case BinOp::Or: return x || y;
          case BinOp::Min: return std::min(x, y);
          case BinOp::Max: return std::max(x, y);
          default: break;
        }
        fail(std::string("operator ") + binOpName(e->binOp));
        return 0;
      }
      default: fail("expression kind"); return 0;
    }
  }

  void exec(const Body& body, const std::vector<bool>& active) {
    for (const Stmt& s : body) {
      if (!result_.ok) return;
      std::visit([&](const auto& n) { stmt(n, active); }, s.node);
    }
  }

  void stmt(const Assign& a, const std::vector<bool>& active) {
    for (uint32_t t = 0; t < active.size(); ++t) {
      if (!active[t]) continue;
      const uint32_t i = eval(a.index, t), v = eval(a.value, t);
      const ArrayDecl& d = k_.arrays.at(a.array);
      (d.space == MemorySpace::Global ? global_[a.array] : shared_[a.array])[i] = v;
      if (a.array == out_) {
        result_.out[i] = v;
        result_.writes[i] += 1;
      }
    }
  }
  void stmt(const Cond& c, const std::vector<bool>& active) {
    std::vector<bool> yes(active.size(), false), no(active.size(), false);
    for (uint32_t t = 0; t < active.size(); ++t) {
      if (!active[t]) continue;
      (eval(c.cond, t) ? yes : no)[t] = true;
    }
    exec(c.then, yes);
    exec(c.otherwise, no);
  }
  void stmt(const SeqFor& f, const std::vector<bool>& active) {
    std::vector<bool> running = active;
    for (uint32_t t = 0; t < active.size(); ++t) {
      if (active[t]) vars_[t][f.var] = eval(f.start, t);
    }
    for (int guard = 0;; ++guard) {
      bool any = false;
      for (uint32_t t = 0; t < active.size(); ++t) {
        if (running[t] && !(vars_[t][f.var] < eval(f.bound, t))) running[t] = false;
        any = any || running[t];
      }
      if (!any || !result_.ok) return;
      if (guard > 100000) return fail("runaway loop " + f.var);
      exec(f.body, running);
      for (uint32_t t = 0; t < active.size(); ++t) {
        if (running[t]) vars_[t][f.var] += eval(f.step, t);
      }
    }
  }
  void stmt(const Sync&, const std::vector<bool>&) {}  // lock-step: statements are ordered
  void stmt(const Allocate&, const std::vector<bool>&) {}
  template <class S>
  void stmt(const S&, const std::vector<bool>&) {
    fail("statement not expected after virtualize");
  }

  const KernelIR& k_;
  uint32_t gridDim_, n0_;
  ArrayId out_;
  uint32_t block_ = 0;
  std::vector<std::map<std::string, uint32_t>> vars_;
  std::map<ArrayId, std::map<uint32_t, uint32_t>> shared_, global_;
  Run result_;
};

Run execute(const KernelIR& k, uint32_t gridDim, uint32_t n0, ArrayId out) {
  REQUIRE(virtualized(k));
  return Interp(k, gridDim, n0, out).run();
}

// Every out0 index in [0, n) was written exactly once, with expected(index), and none else.
template <class F>
void checkCoverage(const Run& r, uint32_t n, F expected) {
  REQUIRE_MESSAGE(r.ok, r.problem);
  CHECK(r.writes.size() == n);
  for (uint32_t i = 0; i < n; ++i) {
    const auto it = r.writes.find(i);
    if (it == r.writes.end() || it->second != 1) {
      FAIL_CHECK("index " << i << " written " << (it == r.writes.end() ? 0 : it->second)
                          << " times");
      return;
    }
    if (r.out.at(i) != expected(i)) {
      FAIL_CHECK("index " << i << " holds " << r.out.at(i) << ", expected " << expected(i));
      return;
    }
  }
}

std::string show(const KernelIR& k, const ExpPtr& e) { return ir::printExp(e, k.arrays); }

// The virtual-block loop of a kernel whose body is one DistrPar of blocks.
const SeqFor& blockLoop(const KernelIR& k) {
  REQUIRE(k.body.size() == 1);
  const auto* loop = std::get_if<SeqFor>(&k.body[0].node);
  REQUIRE(loop != nullptr);
  return *loop;
}

bool noParallelLoops(const Body& b) {
  for (const Stmt& s : b) {
    if (std::holds_alternative<ForAll>(s.node) || std::holds_alternative<DistrPar>(s.node)) {
      return false;
    }
    for (const Body* c : ir::childBodies(s)) {
      if (!noParallelLoops(*c)) return false;
    }
  }
  return true;
}

// distrPar Block bid < n0 { forAll Block i < n { out0[bid * n + i] = in0[bid * n + i] } }
KernelIR blockForAll(uint32_t threads, uint32_t n) {
  Ir t(threads);
  const ExpPtr ix = add(mul(V("bid"), lit(n)), V("i"));
  Body blk{ForAll{Level::Block, lit(n), "i", {Assign{t.out, ix, rd(t.in, ix)}}}};
  t.k.body.push_back(DistrPar{Level::Block, V("n0"), "bid", blk});
  return t.k;
}

// distrPar Block bid < n0 { distrPar Warp w < warps { forAll Warp i < lanes {
//   out0[bid * warps * lanes + w * lanes + i] = in0[same] } } }
KernelIR warpForAll(uint32_t threads, uint32_t warps, uint32_t lanes) {
  Ir t(threads);
  const ExpPtr ix = add(add(mul(V("bid"), lit(warps * lanes)), mul(V("w"), lit(lanes))), V("i"));
  Body warp{ForAll{Level::Warp, lit(lanes), "i", {Assign{t.out, ix, rd(t.in, ix)}}}};
  Body blk{DistrPar{Level::Warp, lit(warps), "w", warp}};
  t.k.body.push_back(DistrPar{Level::Block, V("n0"), "bid", blk});
  return t.k;
}

}  // namespace

TEST_CASE("virtualize: block ForAll with fewer instances than threads is guarded") {
  KernelIR k = planAndVirtualize(blockForAll(256, 100));
  CHECK(virtualized(k));
  CHECK(noParallelLoops(k.body));
  const SeqFor& loop = blockLoop(k);
  REQUIRE(loop.body.size() == 1);
  const auto* guard = std::get_if<Cond>(&loop.body[0].node);
  REQUIRE(guard != nullptr);
  CHECK(show(k, guard->cond) == "threadIdx.x < 100u");
  REQUIRE(guard->then.size() == 1);
  CHECK(guard->otherwise.empty());
  const auto& a = std::get<Assign>(guard->then[0].node);
  CHECK(show(k, a.index) == "bid * 100u + threadIdx.x");
  const std::string cuda = emitCuda(k);
  CHECK(cuda.find("if (threadIdx.x < 100u) {") != std::string::npos);
  CHECK(cuda.find("out0[bid * 100u + threadIdx.x] = in0[bid * 100u + threadIdx.x];") !=
        std::string::npos);
}

TEST_CASE("virtualize: block ForAll with as many instances as threads is the body itself") {
  KernelIR k = planAndVirtualize(blockForAll(256, 256));
  const SeqFor& loop = blockLoop(k);
  REQUIRE(loop.body.size() == 1);
  const auto* a = std::get_if<Assign>(&loop.body[0].node);
  REQUIRE(a != nullptr);
  CHECK(show(k, a->index) == "bid * 256u + threadIdx.x");
  const std::string cuda = emitCuda(k);
  CHECK(cuda.find("if (") == std::string::npos);
  CHECK(cuda.find("for (uint32_t i") == std::string::npos);
}

TEST_CASE("virtualize: block ForAll with more instances than threads loops") {
  KernelIR k = planAndVirtualize(blockForAll(256, 600));  // 2 * 256 + 88
  const SeqFor& loop = blockLoop(k);
  REQUIRE(loop.body.size() == 1);
  const auto* inner = std::get_if<SeqFor>(&loop.body[0].node);
  REQUIRE(inner != nullptr);
  CHECK(inner->level == Level::Block);
  CHECK(inner->var == "i");
  CHECK(inner->start->kind == ExpKind::ThreadIdx);
  CHECK(ir::isLiteralValue(inner->bound, 600));
  CHECK(ir::isLiteralValue(inner->step, 256));
  REQUIRE(inner->body.size() == 1);
  CHECK(show(k, std::get<Assign>(inner->body[0].node).index) == "bid * 600u + i");
  CHECK(emitCuda(k).find("for (uint32_t i = threadIdx.x; i < 600u; i += 256u) {") !=
        std::string::npos);
}

TEST_CASE("virtualize: block ForAll covers every virtual thread exactly once") {
  for (uint32_t threads : {32u, 64u}) {
    for (uint32_t n : {1u, 5u, 31u, 32u, 33u, 64u, 100u, 129u, 200u}) {
      CAPTURE(threads);
      CAPTURE(n);
      const KernelIR k = planAndVirtualize(blockForAll(threads, n));
      for (uint32_t grid : {1u, 2u}) {
        CAPTURE(grid);
        checkCoverage(execute(k, grid, 3, 1), 3 * n, [](uint32_t i) { return 1000 + i; });
      }
    }
  }
}

TEST_CASE("virtualize: warp programs use lanes and warp indices") {
  // 2 warps of 32 lanes on 64 threads: both substituted, no loop, no guard.
  KernelIR k = planAndVirtualize(warpForAll(64, 2, 32));
  CHECK(noParallelLoops(k.body));
  {
    const SeqFor& loop = blockLoop(k);
    REQUIRE(loop.body.size() == 1);
    const auto* a = std::get_if<Assign>(&loop.body[0].node);
    REQUIRE(a != nullptr);
    const std::string ix = show(k, a->index);
    CHECK(ix.find("threadIdx.x / 32u") != std::string::npos);  // the warp
    CHECK(ix.find("threadIdx.x % 32u") != std::string::npos);  // the lane
  }
  // 16 lanes: guarded by the lane index.
  k = planAndVirtualize(warpForAll(64, 2, 16));
  {
    const SeqFor& loop = blockLoop(k);
    REQUIRE(loop.body.size() == 1);
    const auto* guard = std::get_if<Cond>(&loop.body[0].node);
    REQUIRE(guard != nullptr);
    CHECK(show(k, guard->cond) == "threadIdx.x % 32u < 16u");
  }
  // One warp program on two real warps: guarded by the warp index.
  k = planAndVirtualize(warpForAll(64, 1, 32));
  {
    const SeqFor& loop = blockLoop(k);
    REQUIRE(loop.body.size() == 1);
    const auto* guard = std::get_if<Cond>(&loop.body[0].node);
    REQUIRE(guard != nullptr);
    CHECK(show(k, guard->cond) == "threadIdx.x / 32u < 1u");
  }
}

TEST_CASE("virtualize: more virtual warps than real ones loop over the warp index") {
  KernelIR k = planAndVirtualize(warpForAll(64, 5, 40));
  const SeqFor& loop = blockLoop(k);
  REQUIRE(loop.body.size() == 1);
  const auto* warps = std::get_if<SeqFor>(&loop.body[0].node);
  REQUIRE(warps != nullptr);
  CHECK(warps->var == "w");
  CHECK(show(k, warps->start) == "threadIdx.x / 32u");
  CHECK(ir::isLiteralValue(warps->bound, 5));
  CHECK(ir::isLiteralValue(warps->step, 2));
  REQUIRE(warps->body.size() == 1);
  const auto* lanes = std::get_if<SeqFor>(&warps->body[0].node);
  REQUIRE(lanes != nullptr);
  CHECK(lanes->level == Level::Warp);
  CHECK(show(k, lanes->start) == "threadIdx.x % 32u");
  CHECK(ir::isLiteralValue(lanes->bound, 40));
  CHECK(ir::isLiteralValue(lanes->step, 32));
  const std::string cuda = emitCuda(k);
  CHECK(cuda.find("for (uint32_t w = threadIdx.x / 32u; w < 5u; w += 2u) {") != std::string::npos);
}

TEST_CASE("virtualize: warp programs cover every virtual lane exactly once") {
  struct Shape {
    uint32_t threads, warps, lanes;
  };
  for (const Shape s : {Shape{64, 2, 32}, Shape{64, 2, 16}, Shape{64, 1, 32}, Shape{64, 5, 40},
                        Shape{96, 3, 7}, Shape{32, 4, 33}, Shape{128, 2, 64}}) {
    CAPTURE(s.threads);
    CAPTURE(s.warps);
    CAPTURE(s.lanes);
    const KernelIR k = planAndVirtualize(warpForAll(s.threads, s.warps, s.lanes));
    checkCoverage(execute(k, 1, 2, 1), 2 * s.warps * s.lanes, [](uint32_t i) { return 1000 + i; });
  }
}

TEST_CASE("virtualize: accesses to warp arrays move into the real warp's slice") {
  // Each warp program writes its 16 inputs into a warp array and reads them back reversed.
  Ir t(64);
  const ArrayId y = t.array("y", MemorySpace::Shared, Level::Warp, 16);
  const ExpPtr base = add(mul(V("bid"), lit(4 * 16)), mul(V("w"), lit(16)));
  Body warp;
  warp.push_back(Allocate{y});
  warp.push_back(
      ForAll{Level::Warp, lit(16), "i", {Assign{y, V("i"), rd(t.in, add(base, V("i")))}}});
  warp.push_back(Sync{Level::Warp});
  warp.push_back(ForAll{
      Level::Warp, lit(16), "j", {Assign{t.out, add(base, V("j")), rd(y, sub(lit(15), V("j")))}}});
  Body blk{DistrPar{Level::Warp, lit(4), "w", warp}};  // 4 virtual warps on 2 real ones
  t.k.body.push_back(DistrPar{Level::Block, V("n0"), "bid", blk});
  const KernelIR k = planAndVirtualize(t.k);
  const std::string cuda = emitCuda(k);
  CHECK(cuda.find("y[threadIdx.x / 32u * 16u + threadIdx.x % 32u] = ") != std::string::npos);
  CHECK(cuda.find("y[threadIdx.x / 32u * 16u + (15u - threadIdx.x % 32u)]") != std::string::npos);
  checkCoverage(execute(k, 1, 3, t.out), 3 * 4 * 16,
                [](uint32_t i) { return 1000 + (i / 16) * 16 + (15 - i % 16); });
}

TEST_CASE("virtualize: virtual blocks loop over the grid, for any number of real blocks") {
  Ir t(4);
  const ExpPtr ix = add(mul(V("bid"), lit(4)), V("i"));
  Body blk{ForAll{Level::Block, lit(4), "i", {Assign{t.out, ix, V("bid")}}}};
  t.k.body.push_back(DistrPar{Level::Block, V("n0"), "bid", blk});
  const KernelIR k = planAndVirtualize(t.k);
  const SeqFor& loop = blockLoop(k);
  CHECK(loop.level == Level::Grid);
  CHECK(loop.var == "bid");
  CHECK(loop.start->kind == ExpKind::BlockIdx);
  CHECK(show(k, loop.bound) == "n0");
  CHECK(loop.step->kind == ExpKind::GridDim);
  CHECK(show(k, k.gridBlocks) == "n0");
  // n0 blocks may be 2^32 - 1: the step stops at the bound instead of wrapping (issue 14).
  CHECK(emitCuda(k).find(
            "for (uint32_t bid = blockIdx.x; bid < n0; bid += min(gridDim.x, n0 - bid)) {") !=
        std::string::npos);
  for (uint32_t grid : {1u, 3u, 7u}) {
    for (uint32_t n : {0u, 1u, 5u, 20u}) {
      CAPTURE(grid);
      CAPTURE(n);
      // Every thread of virtual block b writes b: each b visited by exactly one real block.
      checkCoverage(execute(k, grid, n, t.out), 4 * n, [](uint32_t i) { return i / 4; });
    }
  }
}

TEST_CASE("virtualize: gridBlocks of the paper's kernels") {
  CHECK(paper::incrementKernel().report().gridBlocks == "n0 / 256u");
  CHECK(show(paper::incrementKernel().ir(), paper::incrementKernel().ir().gridBlocks) ==
        "n0 / 256u");
  CHECK(paper::red3Kernel().report().gridBlocks == "n0 / 512u");
  CHECK(paper::increment2Kernel().report().gridBlocks == "n0 / 8192u");
}

TEST_CASE("virtualize: a grid-level ForAll becomes a grid-stride loop") {
  Ir t(4);
  t.k.body.push_back(ForAll{Level::Grid, V("n0"), "g", {Assign{t.out, V("g"), rd(t.in, V("g"))}}});
  const KernelIR k = planAndVirtualize(t.k);
  REQUIRE(k.body.size() == 1);
  const auto* loop = std::get_if<SeqFor>(&k.body[0].node);
  REQUIRE(loop != nullptr);
  CHECK(loop->var == "g");
  CHECK(show(k, loop->start) == "blockIdx.x * 4u + threadIdx.x");
  CHECK(show(k, loop->bound) == "n0");
  CHECK(show(k, loop->step) == "gridDim.x * 4u");
  CHECK(show(k, k.gridBlocks) == "n0 / 4u + (uint32_t)(n0 % 4u != 0u)");
  for (uint32_t grid : {1u, 3u, 7u}) {
    for (uint32_t n : {0u, 1u, 5u, 20u, 45u}) {
      CAPTURE(grid);
      CAPTURE(n);
      checkCoverage(execute(k, grid, n, t.out), n, [](uint32_t i) { return 1000 + i; });
    }
  }
}

TEST_CASE("virtualize: gridBlocks is the largest need of the top-level statements") {
  Ir t(4);
  Body blk{ForAll{Level::Block, lit(4), "i", {Assign{t.out, V("i"), V("bid")}}}};
  t.k.body.push_back(DistrPar{Level::Block, ir::binary(BinOp::Div, V("n0"), lit(8)), "bid", blk});
  t.k.body.push_back(ForAll{Level::Grid, V("n0"), "g", {Assign{t.out, V("g"), V("g")}}});
  const KernelIR k = planAndVirtualize(t.k);
  CHECK(show(k, k.gridBlocks) == "max(n0 / 8u, n0 / 4u + (uint32_t)(n0 % 4u != 0u))");
  // A kernel with no parallel loop at all still launches one block.
  Ir s(4);
  s.k.body.push_back(Assign{s.out, lit(0), lit(7)});
  CHECK(ir::isLiteralValue(planAndVirtualize(s.k).gridBlocks, 1));
}

TEST_CASE("virtualize: gridBlocks of a grid ForAll does not wrap for large lengths") {
  // ceil(n0 / 256) computed as (n0 + 255) / 256 wraps around for n0 >= 2^32 - 255 and asks
  // for no block at all; n0 = 2^32 - 1 needs 2^24 blocks.
  Ir t(256);
  t.k.body.push_back(ForAll{Level::Grid, V("n0"), "g", {Assign{t.out, V("g"), lit(1)}}});
  const KernelIR k = planAndVirtualize(t.k);
  uint32_t blocks = 0;
  REQUIRE(ir::literalU32(ir::substitute(k.gridBlocks, "n0", lit(0xFFFFFFFFu)), blocks));
  CHECK(blocks == (1u << 24));
  REQUIRE(ir::literalU32(ir::substitute(k.gridBlocks, "n0", lit(257)), blocks));
  CHECK(blocks == 2);
  REQUIRE(ir::literalU32(ir::substitute(k.gridBlocks, "n0", lit(0)), blocks));
  CHECK(blocks == 0);
}

TEST_CASE("virtualize: the interpreter notices a wrong mapping") {
  // Guards the coverage checks above against passing vacuously.
  KernelIR k = planAndVirtualize(blockForAll(64, 100));
  auto& inner = std::get<SeqFor>(std::get<SeqFor>(k.body.at(0).node).body.at(0).node);
  inner.step = lit(32);  // overlapping passes: indices 32..99 are written twice
  const Run twice = execute(k, 1, 1, 1);
  REQUIRE(twice.ok);
  CHECK(twice.writes.size() == 100);
  CHECK(twice.writes.at(40) == 2);
  inner.step = lit(64);
  inner.start = ir::binary(BinOp::Mod, ir::threadIdx(), lit(32));  // half the threads collide
  const Run holes = execute(k, 1, 1, 1);
  REQUIRE(holes.ok);
  CHECK(holes.writes.count(40) == 0);
  auto& grid = std::get<SeqFor>(k.body.at(0).node);
  grid.step = lit(1);  // every real block runs every virtual block
  inner.start = ir::threadIdx();
  const Run dup = execute(k, 3, 2, 1);
  REQUIRE(dup.ok);
  CHECK(dup.writes.at(0) == 1);    // bid 0: only real block 0
  CHECK(dup.writes.at(100) == 2);  // bid 1: real blocks 0 and 1
}

// ---- the plan and the marks: decided once, read by the other passes

namespace {
// The LoopId of parallel loop `loop` of body b (its number among the ForAll and DistrPar
// statements in pre-order), counting from `next`; true when found.
bool findLoop(const Body& b, const Stmt& loop, LoopId& next) {
  for (const Stmt& s : b) {
    if (&s == &loop) return true;
    if (isParallelLoop(s)) ++next;
    for (const Body* c : ir::childBodies(s)) {
      if (findLoop(*c, loop, next)) return true;
    }
  }
  return false;
}

// The plan that `plans` (planVirtualization(k)) holds for the parallel loop `loop` of k.
SpreadPlan& loopPlan(const KernelIR& k, SpreadPlans& plans, const Stmt& loop) {
  LoopId id = 0;
  REQUIRE(findLoop(k.body, loop, id));
  REQUIRE(id < plans.size());
  return plans[id];
}
}  // namespace

TEST_CASE("virtualization plan: each parallel loop's shape, real and used counts") {
  struct Case {
    uint32_t threads, warps, lanes;
    Spread warpShape;
    uint32_t warpsUsed;
    Spread laneShape;
  };
  for (const Case c : {Case{64, 2, 32, Spread::Exact, 2, Spread::Exact},
                       Case{64, 1, 16, Spread::Guard, 1, Spread::Guard},
                       Case{64, 5, 40, Spread::Loop, 2, Spread::Loop}}) {
    CAPTURE(c.warps);
    KernelIR k = warpForAll(c.threads, c.warps, c.lanes);
    SpreadPlans plans = planVirtualization(k);
    auto planOf = [&](const Stmt& s) -> const SpreadPlan& { return loopPlan(k, plans, s); };
    const Stmt& blocks = k.body.at(0);
    CHECK(planOf(blocks).shape == Spread::Loop);  // over the grid
    CHECK(planOf(blocks).real == 0);
    const Stmt& warps = std::get<DistrPar>(blocks.node).body.at(0);
    CHECK(planOf(warps).shape == c.warpShape);
    CHECK(planOf(warps).real == c.threads / 32);
    CHECK(planOf(warps).used == c.warpsUsed);
    const Stmt& lanes = std::get<DistrPar>(warps.node).body.at(0);
    CHECK(planOf(lanes).shape == c.laneShape);
    CHECK(planOf(lanes).real == 32);
    CHECK(planOf(lanes).used == std::min(c.lanes, 32u));
  }
  KernelIR g = blockForAll(256, 600);
  SpreadPlans gPlans = planVirtualization(g);
  auto planOf = [&](const Stmt& s) -> const SpreadPlan& { return loopPlan(g, gPlans, s); };
  const Stmt& threads = std::get<DistrPar>(g.body.at(0).node).body.at(0);
  CHECK(planOf(threads).shape == Spread::Loop);
  CHECK(planOf(threads).real == 256);
  CHECK(planOf(threads).used == 256);
}

TEST_CASE("virtualization plan: the apply step follows the plan, not the counts") {
  // A plan changed by hand (as a future plan might decide differently) is what virtualize
  // applies: 2 warps on 2 real warps, planned as a loop, become a loop.
  KernelIR k = warpForAll(64, 2, 32);
  SpreadPlans plans = planVirtualization(k);
  const Stmt& warps = std::get<DistrPar>(k.body.at(0).node).body.at(0);
  loopPlan(k, plans, warps).shape = Spread::Loop;
  const KernelIR v = virtualize(std::move(k), plans);
  const SeqFor& loop = blockLoop(v);
  const auto* warpLoop = std::get_if<SeqFor>(&loop.body.at(0).node);
  REQUIRE(warpLoop != nullptr);
  CHECK(warpLoop->made == Virtual::Warps);
  CHECK(ir::isLiteralValue(warpLoop->step, 2));
  checkCoverage(execute(v, 1, 2, 1), 2 * 2 * 32, [](uint32_t i) { return 1000 + i; });
}

TEST_CASE("virtualize: the loops and guards it makes say what they virtualize") {
  const KernelIR blocks = planAndVirtualize(blockForAll(64, 100));
  const SeqFor& grid = blockLoop(blocks);
  CHECK(grid.made == Virtual::Blocks);
  const auto& threads = std::get<SeqFor>(grid.body.at(0).node);
  CHECK(threads.made == Virtual::Threads);
  const KernelIR guarded = planAndVirtualize(warpForAll(64, 1, 16));
  const auto& warpGuard = std::get<Cond>(blockLoop(guarded).body.at(0).node);
  CHECK(warpGuard.made == Virtual::Warps);
  const auto& laneGuard = std::get<Cond>(warpGuard.then.at(0).node);
  CHECK(laneGuard.made == Virtual::Lanes);
  // The program's own loops and branches stay unmarked.
  Ir t(4);
  Body own{SeqFor{Level::Thread, "s", lit(0), lit(3), lit(1), {Assign{t.out, V("s"), V("g")}}}};
  t.k.body.push_back(ForAll{Level::Grid, V("n0"), "g", own});
  const KernelIR g = planAndVirtualize(t.k);
  const auto& gridThreads = std::get<SeqFor>(g.body.at(0).node);
  CHECK(gridThreads.made == Virtual::GridThreads);
  CHECK(std::get<SeqFor>(gridThreads.body.at(0).node).made == Virtual::None);
}

TEST_CASE("virtualize: a register read of the lane's own element is marked, a shuffle is not") {
  Ir t(32);
  const ArrayId r = t.array("reg0", MemorySpace::Register, Level::Warp, 32);
  Body lanes{Assign{t.out, V("i"), ir::binary(BinOp::Add, rd(r, V("i")), V("sh0"))}};
  Body warp{Allocate{r}, ForAll{Level::Warp, lit(32), "j", {Assign{r, V("j"), rd(t.in, V("j"))}}},
            Declare{"sh0", ScalarType::U32, rd(r, lit(3))},
            ForAll{Level::Warp, lit(32), "i", lanes}};
  t.blocks({DistrPar{Level::Warp, lit(1), "w", warp}});
  const KernelIR k = planAndVirtualize(t.k);
  bool own = false, other = false;
  ir::mapExpsDeep(const_cast<Body&>(k.body), [&](const ExpPtr& e) {
    ir::anyNode(e, [&](const ExpNode& n) {
      if (n.kind == ExpKind::Index && n.array == r) (n.ownLane ? own : other) = true;
      return false;
    });
    return e;
  });
  CHECK(own);    // reg0[i] in the lane loop over i
  CHECK(other);  // reg0[3]: another lane's element
  const std::string cuda = emitCuda(k);
  CHECK(cuda.find("__shfl_sync(0xffffffffu, reg0, 3u)") != std::string::npos);
  CHECK(cuda.find("reg0 + sh0") != std::string::npos);
}
