// The simulator's machine: runs a compiled kernel (sim/program.hpp) one real block at a time,
// all threads of the block in lock-step, statement by statement, over the set of threads that
// are active there (like a SIMT machine with per-thread masks). It holds the threads'
// registers, the block's shared memory, per-thread and per-warp arrays and the global arrays,
// computes values with the same scalar semantics as constant folding (ir/scalar_ops), and
// reports every access, barrier and fence to its hazard detector (sim/hazards.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "ir/pipeline_state.hpp"
#include "obsidian/arguments.hpp"
#include "obsidian/sim.hpp"
#include "sim/counters.hpp"
#include "sim/hazards.hpp"
#include "sim/program.hpp"

namespace obsidian::sim {

// A global or grid-state array as the kernel sees it.
struct GlobalArray {
  uint8_t* data = nullptr;
  size_t count = 0;
  bool writable = false;
  std::vector<uint8_t> state;  // the bytes of a GridState array (zero, as at module load)
};

class Machine {
 public:
  // Kernel `kernel` on the arrays and scalars of `bound`, launched with `blocks` real blocks.
  Machine(const Kernel& kernel, const BoundArguments& bound, const SimOptions& options,
          uint32_t blocks);

  // Runs every real block; throws HazardError for hazards, Error past the step limit.
  SimStats run();

 private:
  // Scratch value arrays (one value per thread) for operands, reused in stack order.
  struct Scratch {
    std::vector<std::vector<ir::Value>> buffers;
    size_t used = 0;
  };
  ir::Value* acquire();
  void release();

  // Address of element i of array a for thread t; checks bounds and records the access.
  uint8_t* address(ArrayId a, uint64_t i, uint32_t t, bool isWrite, bool atomic);
  // With counters: the access whose addresses address() just collected, one per lane.
  void counted(ArrayId a, AccessKind kind, const Lanes& lanes, uint32_t bytes);
  SimProfile profile() const;

  // out[t] = e for every t in lanes.
  void eval(const CExp& e, const Lanes& lanes, ir::Value* out);
  void vote(const CExp& e, const Lanes& lanes, ir::Value* out);
  void split(const Lanes& lanes, const ir::Value* cond, Lanes& yes, Lanes& no) const;

  void countSteps(size_t n);
  void exec(const std::vector<CStmt>& body, const Lanes& lanes);
  void exec(const CStmt& s, const Lanes& lanes);
  ir::Value atomicUpdate(const CStmt& s, ScalarType type, ir::Value old, ir::Value v,
                         ir::Value cmp) const;

  const KernelIR& k_;
  const MemoryMap& memory_;  // where the memory map put k_'s shared arrays
  const SimOptions& options_;
  uint32_t blocks_;
  uint32_t threads_;
  Compiler compiler_;
  std::vector<std::pair<int, ir::Value>> params_;  // scalar parameters: slot, value
  std::vector<CStmt> body_;
  std::vector<std::vector<ir::Value>> regs_;  // per slot, per thread
  std::vector<GlobalArray> globals_;          // per array (global and grid-state ones)
  std::vector<SimTraffic> traffic_;           // per array (global and grid-state ones)
  std::vector<uint8_t> smem_;
  std::vector<std::vector<uint8_t>> local_;  // per array (per-thread and per-warp ones)
  // Thread arrays (Local of a Block or Warp program): which elements each thread has written.
  std::vector<std::vector<uint8_t>> localWritten_;
  Scratch scratch_;
  Cursor at_;
  Hazards hazards_;
  std::unique_ptr<Counters> counters_;  // SimOptions::profile
  std::vector<uint64_t> addresses_;     // with counters: address()'s byte addresses, in order
  uint64_t steps_ = 0;
  uint64_t stepLimit_ = 0;
};

}  // namespace obsidian::sim
