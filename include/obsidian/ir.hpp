// The Program IR: the imperative core language that reification produces and every pass
// rewrites (the paper's Figure 2, first-order: loop bodies are statement lists that bind a
// named index variable instead of Haskell functions).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "obsidian/exp.hpp"
#include "obsidian/level.hpp"

namespace obsidian {

enum class MemorySpace : uint8_t {
  Global,  // a kernel parameter
  Shared,  // placed in dynamic shared memory by the memory map
  Local,   // a per-thread array (force at Thread level), in registers or local memory
  // A global array of the kernel's own (newGlobal), zero when the module is loaded and kept
  // from one launch to the next: grid-wide state such as the partial results and the ticket
  // of a reduction finished in one launch. Read and written through L2 (__ldcg/__stcg), so
  // blocks see each other's writes once a fence and an atomic order them.
  GridState,
  // A warp's array of 32 elements held in registers, one per lane (forceReg): lane l holds
  // element l; reading another lane's element is a __shfl_sync of the whole warp.
  Register,
};

// One array the kernel touches. Shared arrays forced at Warp level have `length` elements per
// warp; the block holds one such slice per real warp.
struct ArrayDecl {
  std::string name;
  ScalarType type = ScalarType::U32;
  MemorySpace space = MemorySpace::Shared;
  Level level = Level::Block;  // the level whose program allocated it (Warp, Block or Thread)
  uint32_t length = 0;         // elements (static); 0 for global arrays
  bool writable = false;       // global arrays: outputs and mutable arrays
  uint32_t offset = 0;         // byte offset in shared memory, set by the memory map
  bool placed = false;         // the memory map has set `offset`
  uint32_t alignment = 0;      // global arrays: bytes the address must be aligned to (vectors)
  // Shared arrays of a Warp program: the warp slices the block holds, one per real warp that
  // runs the program (fewer than the block's warps where fewer virtual warps run); set by the
  // memory map.
  uint32_t warpSlices = 0;
};

// An array of a capture, as the front end holds it: its id in the capture's array table and
// the capture (Context serial) it belongs to, so that using it in another capture is an error
// instead of silently naming that capture's array with the same id.
struct ArrayRef {
  ArrayId id = 0;
  uint32_t origin = 0;
};

// Load: an atomic read (no update), for polling flags that other blocks set with atomics.
enum class AtomicOp : uint8_t { Add, Sub, Min, Max, Inc, Dec, Exch, Cas, And, Or, Xor, Load };
const char* atomicOpName(AtomicOp op);

struct Stmt;
using Body = std::vector<Stmt>;

// How a parallel loop's n instances are laid onto the real threads, lanes, warps or blocks.
// Decided once, by the virtualization plan (codegen/virtualize.hpp), before liveness; liveness,
// the memory map and virtualize read it instead of working it out again.
enum class Spread : uint8_t {
  Unplanned,  // the plan has not run
  Exact,      // n == real: instance i runs on real one i
  Guard,      // n < real: `if (real index < n)`
  Loop,       // n > real, or known only at launch: `for (i = real index; i < n; i += real)`
};
struct SpreadPlan {
  Spread shape = Spread::Unplanned;
  uint32_t real = 0;  // real threads, lanes or warps sharing the instances (0: the grid's)
  uint32_t used = 0;  // of those, the ones that run at least one instance (0: the grid's)
};

// What virtualize made a loop or branch for; None for the program's own. The printer and the
// simulator read it instead of recognising the shapes virtualize emits.
enum class Virtual : uint8_t {
  None,
  Threads,      // a Block's ForAll over its threads
  Lanes,        // a Warp's ForAll over its lanes
  Warps,        // a Block's DistrPar over its warps
  Blocks,       // the Grid's DistrPar over its blocks: each iteration is a new virtual block
  GridThreads,  // the Grid's ForAll over all threads (a grid-stride loop)
};

// array[index] = value
struct Assign {
  ArrayId array = 0;
  ExpPtr index;
  ExpPtr value;
};
// A scalar variable of the executing thread, optionally initialised.
struct Declare {
  std::string var;
  ScalarType type = ScalarType::U32;
  ExpPtr init;            // may be null
  bool constant = false;  // never assigned again (a shared value): printed `const`
};
// var = value (var was declared)
struct AssignVar {
  std::string var;
  ExpPtr value;
};
// `count` instances of the Thread-level body, in parallel over the threads of `level`
// (Warp: lanes, Block: threads of the block, Grid: all threads). `var` is the instance index.
struct ForAll {
  Level level = Level::Thread;
  ExpPtr count;
  std::string var;
  Body body;
  SpreadPlan plan = {};  // set by the virtualization plan
};
// `count` instances of a `level` program, in parallel over level Step<level>
// (Warp programs over a block's warps, Block programs over the grid's blocks).
struct DistrPar {
  Level level = Level::Block;
  ExpPtr count;
  std::string var;
  Body body;
  SpreadPlan plan = {};  // set by the virtualization plan
};
// for (var = start; var < bound; var += step) body   (every thread of `level` runs it)
// The loop never wraps around: a step that would pass 2^32 - 1 ends it (the CUDA printed for a
// loop whose bound and step could get there steps by min(step, bound - var)), so a grid-stride
// loop over nearly 2^32 elements neither repeats elements nor runs forever.
struct SeqFor {
  Level level = Level::Thread;
  std::string var;
  ExpPtr start;
  ExpPtr bound;
  ExpPtr step;
  Body body;
  Virtual made = Virtual::None;  // set by virtualize on the loops it makes
};
// while (cond) body
struct SeqWhile {
  Level level = Level::Thread;
  ExpPtr cond;
  Body body;
};
// if (cond) then else otherwise
struct Cond {
  Level level = Level::Thread;
  ExpPtr cond;
  Body then;
  Body otherwise;
  Virtual made = Virtual::None;  // set by virtualize on the guards it makes
};
// `array` comes into existence here (shared or local memory).
struct Allocate {
  ArrayId array = 0;
};
// Barrier: __syncthreads() at Block level, __syncwarp() at Warp level.
struct Sync {
  Level level = Level::Block;
};
// result = atomicOp(&array[index], value[, compare])
struct Atomic {
  AtomicOp op = AtomicOp::Add;
  ArrayId array = 0;
  ExpPtr index;
  ExpPtr value;        // null for Inc/Dec without operand
  ExpPtr compare;      // Cas only
  std::string result;  // declared variable receiving the old value; may be empty
};

// __threadfence(): the executing thread's earlier writes to global memory are visible to
// every block before its later ones. A fence and then an atomic publish a block's writes to
// the blocks whose atomics on the same array come after it (the last-block pattern).
struct Fence {};
// __nanosleep(ns): the thread gives up its issue slots for about ns nanoseconds (a polling
// loop's back-off). No effect on memory or on what the program computes.
struct Sleep {
  uint32_t ns = 0;
};

struct Stmt {
  std::variant<Assign, Declare, AssignVar, ForAll, DistrPar, SeqFor, SeqWhile, Cond, Allocate, Sync,
               Atomic, Fence, Sleep>
      node;
  template <class T>
  Stmt(T n) : node(std::move(n)) {}  // NOLINT: statements are built from their nodes
};

enum class ParamKind : uint8_t { Array, Length, Scalar };

// One parameter of the generated __global__ function.
struct Param {
  ParamKind kind = ParamKind::Array;
  std::string name;
  ScalarType type = ScalarType::U32;  // element type for arrays
  ArrayId array = 0;                  // Array
  bool output = false;                // Array written by the kernel
  ExpPtr length;  // Array: elements the kernel may touch, in terms of the parameters
};

// A condition the host checks before launch, e.g. a dynamic length that splitUp needs to
// divide. The expression uses only scalar parameters.
struct Precondition {
  ExpPtr holds;
  std::string message;
};

// A condition every element of an output must meet after the kernel (ensure in capture.hpp):
// `holds` is in terms of the element's index, the variable `index`, and reads the kernel's
// global arrays and scalar parameters. capture turns each into a kernel that checks it.
struct Postcondition {
  ExpPtr holds;
  std::string index;
  ExpPtr count;  // the output's length, in terms of the parameters
  size_t outputIndex = 0;
  std::string output;  // the output's name
  std::string message;
};

// An output array and its length in terms of the parameters.
struct OutputInfo {
  std::vector<ArrayId> arrays;  // one per component of the element type
  ExpPtr length;
};

struct KernelIR {
  std::string name;
  // The capture that made this kernel (its Context's serial): every Var and Index leaf of the
  // kernel must come from it or from no capture (verify checks).
  uint32_t capture = 0;
  uint32_t threadsPerBlock = 0;
  uint32_t minBlocksPerSm = 0;  // CaptureOptions::minBlocksPerSm (0: not given)
  std::vector<ArrayDecl> arrays;
  std::vector<Param> params;
  std::vector<OutputInfo> outputs;
  std::vector<Precondition> preconditions;
  std::vector<Postcondition> postconditions;
  Body body;  // a Grid-level program
  // Blocks to launch so that every virtual block and thread has a real one (the host may
  // launch fewer: the kernel is virtualized over gridDim). Set by the virtualization plan.
  ExpPtr gridBlocks;
  uint32_t sharedBytes = 0;  // set by the memory map
  bool virtualized = false;  // set by virtualize: ForAll/DistrPar are gone
};

}  // namespace obsidian
