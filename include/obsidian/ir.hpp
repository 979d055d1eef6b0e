/// The Program IR: the imperative core language that reification produces and every pass
/// rewrites (the paper's Figure 2, first-order: loop bodies are statement lists that bind a
/// named index variable instead of Haskell functions).
/// @file
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "obsidian/exp.hpp"
#include "obsidian/level.hpp"

namespace obsidian {

/// Where an array lives, which decides how the generated code declares and reaches it.
enum class MemorySpace : uint8_t {
  Global,  ///< a kernel parameter
  Shared,  ///< placed in dynamic shared memory by the memory map
  Local,   ///< a per-thread array (force at Thread level), in registers or local memory
  /// A global array of the kernel's own (newGlobal), zero when the module is loaded and kept
  /// from one launch to the next: grid-wide state such as the partial results and the ticket
  /// of a reduction finished in one launch. Read and written through L2 (__ldcg/__stcg), so
  /// blocks see each other's writes once a fence and an atomic order them.
  GridState,
  /// A warp's array of 32 elements held in registers, one per lane (forceReg): lane l holds
  /// element l; reading another lane's element is a __shfl_sync of the whole warp.
  Register,
};

/// One array the kernel touches. Shared arrays forced at Warp level have `length` elements per
/// warp; the block holds one such slice per real warp.
struct ArrayDecl {
  std::string name;                         ///< its name in the generated code
  ScalarType type = ScalarType::U32;        ///< the element type
  MemorySpace space = MemorySpace::Shared;  ///< where it lives
  Level level = Level::Block;  ///< the level whose program allocated it (Warp, Block or Thread)
  uint32_t length = 0;         ///< elements (static); 0 for global arrays
  bool writable = false;       ///< global arrays: outputs and mutable arrays
  uint32_t alignment = 0;      ///< global arrays: bytes the address must be aligned to (vectors)
};

/// An array of a capture, as the front end holds it: its id in the capture's array table and
/// the capture (Context serial) it belongs to, so that using it in another capture is an error
/// instead of silently naming that capture's array with the same id.
struct ArrayRef {
  ArrayId id = 0;       ///< its index in the capture's array table (KernelIR::arrays)
  uint32_t origin = 0;  ///< the capture (Context serial) it belongs to
};

/// The operation of an Atomic statement: each is the CUDA atomic of its name (atomicAdd, ...,
/// Cas: atomicCAS). Load: an atomic read (no update), for polling flags that other blocks set
/// with atomics.
enum class AtomicOp : uint8_t { Add, Sub, Min, Max, Inc, Dec, Exch, Cas, And, Or, Xor, Load };
/// The operation's name ("Add", "CAS", "Load", ...): the printers, the code generator and the
/// simulator spell atomic statements with it (atomicAdd, ...).
const char* atomicOpName(AtomicOp op);

struct Stmt;
/// A statement list: a program, and the body of a loop or branch.
using Body = std::vector<Stmt>;

/// What virtualize made a loop or branch for; None for the program's own. The printer and the
/// simulator read it instead of recognising the shapes virtualize emits.
enum class Virtual : uint8_t {
  None,         ///< the program's own
  Threads,      ///< a Block's ForAll over its threads
  Lanes,        ///< a Warp's ForAll over its lanes
  Warps,        ///< a Block's DistrPar over its warps
  Blocks,       ///< the Grid's DistrPar over its blocks: each iteration is a new virtual block
  GridThreads,  ///< the Grid's ForAll over all threads (a grid-stride loop)
};

/// array[index] = value
struct Assign {
  ArrayId array = 0;  ///< the array written (KernelIR::arrays)
  ExpPtr index;       ///< the element written
  ExpPtr value;       ///< the value stored there
};
/// array[index + k] = values[k] for k < W = values.size(): one W * size-byte store of W
/// consecutive elements (st.global.v4.f32 for four floats), made by unvectors<W>. `array` is
/// global, `index` a multiple of W, `vector` is index / W, and the launch checks that the array
/// is aligned to W * size bytes (ArrayDecl::alignment).
struct StoreVector {
  ArrayId array = 0;           ///< the array written (a global one)
  ExpPtr index;                ///< the element written by lane 0
  ExpPtr vector;               ///< index / W: the vector written
  std::vector<ExpPtr> values;  ///< the W lanes' values, of the array's element type
};
/// A scalar variable of the executing thread, optionally initialised.
struct Declare {
  std::string var;                    ///< its name
  ScalarType type = ScalarType::U32;  ///< its type
  ExpPtr init;                        ///< may be null
  bool constant = false;              ///< never assigned again (a shared value): printed `const`
};
/// var = value (var was declared)
struct AssignVar {
  std::string var;  ///< the variable assigned (a Declare before it)
  ExpPtr value;     ///< its new value
};
/// `count` instances of the Thread-level body, in parallel over the threads of `level`
/// (Warp: lanes, Block: threads of the block, Grid: all threads). `var` is the instance index.
struct ForAll {
  Level level = Level::Thread;  ///< whose threads run the instances (Warp, Block or Grid)
  ExpPtr count;                 ///< instances
  std::string var;              ///< the instance index, bound in `body`
  Body body;                    ///< the Thread-level program of one instance
};
/// `count` instances of a `level` program, in parallel over level `Step<level>`
/// (Warp programs over a block's warps, Block programs over the grid's blocks).
struct DistrPar {
  Level level = Level::Block;  ///< the level of the instances' program (Warp or Block)
  ExpPtr count;                ///< instances
  std::string var;             ///< the instance index, bound in `body`
  Body body;                   ///< the `level` program of one instance
};
/// for (var = start; var < bound; var += step) body   (every thread of `level` runs it).
/// The loop never wraps around: a step that would pass 2^32 - 1 ends it (the CUDA printed for a
/// loop whose bound and step could get there steps by min(step, bound - var)), so a grid-stride
/// loop over nearly 2^32 elements neither repeats elements nor runs forever.
struct SeqFor {
  Level level = Level::Thread;   ///< whose threads run the loop, every one of them
  std::string var;               ///< the loop variable, bound in `body`
  ExpPtr start;                  ///< its first value
  ExpPtr bound;                  ///< the loop runs while var < bound
  ExpPtr step;                   ///< added to var after each iteration
  Body body;                     ///< one iteration
  Virtual made = Virtual::None;  ///< set by virtualize on the loops it makes
};
/// while (cond) body
struct SeqWhile {
  Level level = Level::Thread;  ///< whose threads run the loop
  ExpPtr cond;                  ///< tested before each iteration
  Body body;                    ///< one iteration
};
/// if (cond) then else otherwise
struct Cond {
  Level level = Level::Thread;   ///< whose threads run it
  ExpPtr cond;                   ///< the condition
  Body then;                     ///< run where cond holds
  Body otherwise;                ///< run where it does not (may be empty)
  Virtual made = Virtual::None;  ///< set by virtualize on the guards it makes
};
/// `array` comes into existence here (shared or local memory).
struct Allocate {
  ArrayId array = 0;  ///< the array allocated (KernelIR::arrays)
};
/// Barrier: __syncthreads() at Block level, __syncwarp() at Warp level.
struct Sync {
  Level level = Level::Block;  ///< which threads wait for each other (Block or Warp)
};
/// result = atomicOp(&array[index], value[, compare])
struct Atomic {
  AtomicOp op = AtomicOp::Add;  ///< the operation
  ArrayId array = 0;            ///< the array updated (KernelIR::arrays)
  ExpPtr index;                 ///< the element updated
  ExpPtr value;                 ///< null for Inc/Dec without operand
  ExpPtr compare;               ///< Cas only
  std::string result;           ///< declared variable receiving the old value; may be empty
};

/// __threadfence(): the executing thread's earlier writes to global memory are visible to
/// every block before its later ones. A fence and then an atomic publish a block's writes to
/// the blocks whose atomics on the same array come after it (the last-block pattern).
struct Fence {};
/// __nanosleep(ns): the thread gives up its issue slots for about ns nanoseconds (a polling
/// loop's back-off). No effect on memory or on what the program computes.
struct Sleep {
  uint32_t ns = 0;  ///< nanoseconds, roughly
};

/// One statement of the Program IR: one of the node structs above, which passes visit with
/// std::visit.
struct Stmt {
  /// The statement itself.
  std::variant<Assign, StoreVector, Declare, AssignVar, ForAll, DistrPar, SeqFor, SeqWhile, Cond, Allocate, Sync,
               Atomic, Fence, Sleep>
      node;
  /// The statement of node `n` (implicit, so that a node converts to a Stmt where one is due).
  template <class T>
  Stmt(T n) : node(std::move(n)) {}  // NOLINT: statements are built from their nodes
};

/// What a kernel parameter is: Array (a pointer to a global array), Length (a dynamic array's
/// length, which the launch fills in from the array argument: the caller does not pass it) or
/// Scalar (a value the caller passes).
enum class ParamKind : uint8_t { Array, Length, Scalar };

/// One parameter of the generated `__global__` function.
struct Param {
  ParamKind kind = ParamKind::Array;  ///< what it is
  std::string name;                   ///< its name in the generated code
  ScalarType type = ScalarType::U32;  ///< element type for arrays
  ArrayId array = 0;                  ///< Array: the array it passes (KernelIR::arrays)
  bool output = false;                ///< Array written by the kernel
  ExpPtr length;  ///< Array: elements the kernel may touch, in terms of the parameters
};

/// A condition the host checks before launch, e.g.\ a dynamic length that splitUp needs to
/// divide. The expression uses only scalar parameters.
struct Precondition {
  ExpPtr holds;         ///< the condition (a bool expression)
  std::string message;  ///< what the error says when it does not hold (require's message)
};

/// A condition every element of an output must meet after the kernel (ensure in capture.hpp):
/// `holds` is in terms of the element's index, the variable `index`, and reads the kernel's
/// global arrays and scalar parameters. capture turns each into a kernel that checks it.
struct Postcondition {
  ExpPtr holds;            ///< the condition (a bool expression)
  std::string index;       ///< the name of the element's index variable in `holds`
  ExpPtr count;            ///< the output's length, in terms of the parameters
  size_t outputIndex = 0;  ///< the output's position among the kernel's outputs
  std::string output;      ///< the output's name
  std::string message;     ///< the message given to ensure
};

/// An output array and its length in terms of the parameters.
struct OutputInfo {
  std::vector<ArrayId> arrays;  ///< one per component of the element type
  ExpPtr length;                ///< its length, in terms of the parameters
};

/// One kernel in the Program IR: its arrays, parameters, contracts and Grid-level body, as
/// capture makes it and the passes rewrite it.
struct KernelIR {
  std::string name;  ///< the kernel's name (the `__global__` function's)
  /// The capture that made this kernel (its Context's serial): every Var and Index leaf of the
  /// kernel must come from it or from no capture (verify checks).
  uint32_t capture = 0;
  uint32_t threadsPerBlock = 0;               ///< threads per real block (the launch's blockDim)
  uint32_t minBlocksPerSm = 0;                ///< CaptureOptions::minBlocksPerSm (0: not given)
  std::vector<ArrayDecl> arrays;              ///< every array, indexed by ArrayId
  std::vector<Param> params;                  ///< the `__global__` function's, in order
  std::vector<OutputInfo> outputs;            ///< the outputs, in order
  std::vector<Precondition> preconditions;    ///< checked by the host before launch
  std::vector<Postcondition> postconditions;  ///< checked by kernels of their own after it
  Body body;                                  ///< a Grid-level program
  /// Blocks to launch so that every virtual block and thread has a real one (the host may
  /// launch fewer: the kernel is virtualized over gridDim). Set by the virtualization plan.
  ExpPtr gridBlocks;
};

}  // namespace obsidian
