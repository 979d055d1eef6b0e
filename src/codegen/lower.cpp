// The pass pipeline, in order. This file is the readable list of what happens to a kernel
// between reification (capture) and the CUDA text; each pass is documented in its header.
#include "codegen/lower.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "codegen/emit_cuda.hpp"
#include "codegen/share.hpp"
#include "codegen/shuffles.hpp"
#include "codegen/verify.hpp"
#include "codegen/virtualize.hpp"
#include "ir/ir_walk.hpp"
#include "ir/print.hpp"
#include "memmap/liveness.hpp"
#include "memmap/memory_map.hpp"
#include "memmap/reuse_barriers.hpp"

namespace obsidian {
namespace {

void countBarriers(const Body& b, BarrierCounts& c) {
  for (const Stmt& s : b) {
    if (const auto* sync = std::get_if<Sync>(&s.node)) {
      (sync->level == Level::Block ? c.block : c.warp) += 1;
    }
    for (const Body* child : ir::childBodies(s)) countBarriers(*child, c);
  }
}

// Test-only: break the lowered kernel the way Faults asks.
bool dropNthSync(Body& b, int& n) {
  for (auto it = b.begin(); it != b.end(); ++it) {
    if (std::holds_alternative<Sync>(it->node) && n-- == 0) {
      b.erase(it);
      return true;
    }
    for (Body* child : ir::childBodies(*it)) {
      if (dropNthSync(*child, n)) return true;
    }
  }
  return false;
}

void injectFaults(KernelIR& k, const Faults& f) {
  if (f.dropBarrier >= 0) {
    int n = f.dropBarrier;
    if (!dropNthSync(k.body, n)) {
      throw Error("Faults::dropBarrier: kernel " + k.name + " has no barrier " +
                  std::to_string(f.dropBarrier));
    }
  }
  if (!f.shrinkArray.empty()) {
    for (ArrayDecl& a : k.arrays) {
      if (a.name == f.shrinkArray) {
        a.length = f.shrinkTo;
        return;
      }
    }
    throw Error("Faults::shrinkArray: kernel " + k.name + " has no array " + f.shrinkArray);
  }
}

bool dumpToStderr() {
  const char* env = std::getenv("OBSIDIAN_DUMP_IR");
  return env && std::strcmp(env, "") != 0 && std::strcmp(env, "0") != 0;
}

}  // namespace

LoweredKernel lowerKernel(KernelIR reified, const LowerOptions& options) {
  LoweredKernel out;
  out.reified = reified;
  out.options = options;
  const bool dump = options.dumpIr || dumpToStderr();
  KernelIR k = std::move(reified);
  if (dump) {
    verifyOwnership(k);  // the dump looks arrays up by id
    out.irDump += "=== reify\n" + ir::printIr(k);
  }

  // Runs one pass, timing it and dumping the IR after it when asked to.
  auto pass = [&](const char* name, auto&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    const std::chrono::duration<double, std::milli> t = std::chrono::steady_clock::now() - start;
    out.timings.push_back(PassTiming{name, t.count()});
    if (dump) out.irDump += "=== " + std::string(name) + "\n" + ir::printIr(k, out.memory);
  };

  // What the passes decide besides the IR (ir/pipeline_state.hpp): the plan lives until
  // virtualize applies it; the memory map stays with the lowered kernel.
  SpreadPlans plans;
  Liveness live;
  pass("verify ownership", [&] { verifyOwnership(k); });
  pass("materialize shuffles", [&] { materializeShuffles(k); });
  pass("verify", [&] { verify(k); });
  pass("plan virtualization", [&] { plans = planVirtualization(k); });
  pass("liveness", [&] { live = analyzeLiveness(k, plans); });
  pass("reuse barriers", [&] {
    if (insertReuseBarriers(k, live)) live = analyzeLiveness(k, plans);
  });
  pass("memory map", [&] {
    out.memory = memoryMap(k, plans, live, options.sharedMemoryLimit, options.reuseSharedMemory);
  });
  pass("virtualize", [&] { k = virtualize(std::move(k), plans); });
  if (options.shareSubexpressions) pass("share subexpressions", [&] { shareSubexpressions(k); });
  injectFaults(k, options.faults);
  pass("emit CUDA", [&] { out.cuda = emitCuda(k, out.memory); });

  countBarriers(k.body, out.barriers);
  out.lowered = std::move(k);
  if (dumpToStderr()) std::cerr << out.irDump;
  return out;
}

}  // namespace obsidian
