// The simulator (see include/obsidian/sim.hpp). It executes the lowered IR one block at a
// time, all threads of the block in lock-step, statement by statement, over the set of
// threads that are active there (like a SIMT machine with per-thread masks): a barrier is a
// statement the whole block (or warp) must reach together. Values are computed with the same
// scalar semantics as constant folding (ir/scalar_ops). Hazards are found with happens-before
// epochs, not with an interleaving: two accesses of different threads to one address race
// when no barrier separates them (a __syncthreads for any two threads of a block, a
// __syncwarp for two threads of one warp) and one of them writes; across blocks, any such pair
// races unless both are atomic.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include "ir/deep_stack.hpp"
#include "ir/ir_walk.hpp"
#include "ir/print.hpp"
#include "ir/scalar_ops.hpp"
#include "memmap/memory_map.hpp"
#include "obsidian/sim.hpp"

namespace obsidian {
namespace {

using ir::Value;
using Lanes = std::vector<uint32_t>;

// ------------------------------------------------------------------ executable form
struct CExp {
  ExpKind kind;
  ScalarType type;
  ScalarType argType = ScalarType::U32;  // operand type (Binary, Unary, Cast)
  UnOp un = UnOp::Neg;
  BinOp bin = BinOp::Add;
  Value lit{};
  int slot = -1;
  ArrayId array = 0;
  std::unique_ptr<CExp> a, b, c;
};

enum class Op : uint8_t {
  Assign,
  Declare,
  AssignVar,
  SeqFor,
  SeqWhile,
  Cond,
  Allocate,
  Sync,
  Atomic,
  Fence
};

struct CStmt {
  Op op;
  Level level = Level::Thread;
  ArrayId array = 0;
  int slot = -1;
  AtomicOp atomic = AtomicOp::Add;
  ScalarType type = ScalarType::U32;
  Virtual made = Virtual::None;  // SeqFor: what virtualize made it for
  std::unique_ptr<CExp> e0, e1, e2, e3;
  std::vector<CStmt> body, otherwise;
  std::string text;  // the statement, for messages
};

class Compiler {
 public:
  explicit Compiler(const KernelIR& k) : k_(k) {}

  int slot(const std::string& name) {
    const auto it = slots_.find(name);
    if (it != slots_.end()) return it->second;
    const int s = static_cast<int>(slots_.size());
    slots_.emplace(name, s);
    return s;
  }
  size_t slotCount() const { return slots_.size(); }

  std::unique_ptr<CExp> exp(const ExpPtr& e) {
    if (!e) return nullptr;
    auto c = std::make_unique<CExp>();
    c->kind = e->kind;
    c->type = e->type;
    switch (e->kind) {
      case ExpKind::Literal: c->lit = ir::literalValue(*e); break;
      case ExpKind::Var: c->slot = slot(e->name); break;
      case ExpKind::ThreadIdx:
      case ExpKind::BlockIdx:
      case ExpKind::GridDim: break;
      case ExpKind::Unary:
        c->un = e->unOp;
        c->argType = e->args[0]->type;
        c->a = exp(e->args[0]);
        break;
      case ExpKind::Binary:
        c->bin = e->binOp;
        c->argType = e->args[0]->type;
        c->a = exp(e->args[0]);
        c->b = exp(e->args[1]);
        break;
      case ExpKind::Select:
        c->a = exp(e->args[0]);
        c->b = exp(e->args[1]);
        c->c = exp(e->args[2]);
        break;
      case ExpKind::Cast:
        c->argType = e->args[0]->type;
        c->a = exp(e->args[0]);
        break;
      case ExpKind::Index:
        c->array = e->array;
        c->a = exp(e->args[0]);
        break;
    }
    return c;
  }

  std::string show(const ExpPtr& e) const { return ir::printExp(e, k_.arrays); }

  std::vector<CStmt> body(const Body& b) {
    std::vector<CStmt> out;
    for (const Stmt& s : b) out.push_back(stmt(s));
    return out;
  }

  CStmt stmt(const Stmt& s) {
    CStmt c;
    std::visit(
        [&](const auto& n) {
          using T = std::remove_cvref_t<decltype(n)>;
          if constexpr (std::is_same_v<T, Assign>) {
            c.op = Op::Assign;
            c.array = n.array;
            c.e0 = exp(n.index);
            c.e1 = exp(n.value);
            c.text = k_.arrays[n.array].name + "[" + show(n.index) + "] = " + show(n.value);
          } else if constexpr (std::is_same_v<T, Declare>) {
            c.op = Op::Declare;
            c.slot = slot(n.var);
            c.type = n.type;
            c.e0 = exp(n.init);
            c.text = std::string(cudaTypeName(n.type)) + " " + n.var +
                     (n.init ? " = " + show(n.init) : "");
          } else if constexpr (std::is_same_v<T, AssignVar>) {
            c.op = Op::AssignVar;
            c.slot = slot(n.var);
            c.e0 = exp(n.value);
            c.text = n.var + " = " + show(n.value);
          } else if constexpr (std::is_same_v<T, ForAll> || std::is_same_v<T, DistrPar>) {
            throw InternalError("simulate: parallel loops are removed by virtualize");
          } else if constexpr (std::is_same_v<T, SeqFor>) {
            c.op = Op::SeqFor;
            c.level = n.level;
            c.made = n.made;
            c.slot = slot(n.var);
            c.e0 = exp(n.start);
            c.e1 = exp(n.bound);
            c.e2 = exp(n.step);
            c.body = body(n.body);
            c.text = "for (" + n.var + " = " + show(n.start) + "; " + n.var + " < " +
                     show(n.bound) + "; " + n.var + " += " + show(n.step) + ")";
          } else if constexpr (std::is_same_v<T, SeqWhile>) {
            c.op = Op::SeqWhile;
            c.level = n.level;
            c.e0 = exp(n.cond);
            c.body = body(n.body);
            c.text = "while (" + show(n.cond) + ")";
          } else if constexpr (std::is_same_v<T, Cond>) {
            c.op = Op::Cond;
            c.level = n.level;
            c.e0 = exp(n.cond);
            c.body = body(n.then);
            c.otherwise = body(n.otherwise);
            c.text = "if (" + show(n.cond) + ")";
          } else if constexpr (std::is_same_v<T, Allocate>) {
            c.op = Op::Allocate;
            c.array = n.array;
            c.text = "allocate " + k_.arrays[n.array].name;
          } else if constexpr (std::is_same_v<T, Sync>) {
            c.op = Op::Sync;
            c.level = n.level;
            c.text = n.level == Level::Block ? "__syncthreads()" : "__syncwarp()";
          } else if constexpr (std::is_same_v<T, Fence>) {
            c.op = Op::Fence;
            c.text = "__threadfence()";
          } else if constexpr (std::is_same_v<T, Atomic>) {
            c.op = Op::Atomic;
            c.atomic = n.op;
            c.array = n.array;
            c.slot = slot(n.result);
            c.e0 = exp(n.index);
            c.e1 = exp(n.value);
            c.e2 = exp(n.compare);
            c.text = n.result + " = atomic" + atomicOpName(n.op) + "(&" + k_.arrays[n.array].name +
                     "[" + show(n.index) + "]" + (n.compare ? ", " + show(n.compare) : "") +
                     (n.value ? ", " + show(n.value) : "") + ")";
          } else {
            static_assert(alwaysFalse<T>, "simulate: a statement type is not handled");
          }
        },
        s.node);
    return c;
  }

 private:
  const KernelIR& k_;
  std::map<std::string, int> slots_;
};

// ------------------------------------------------------------------ memory and shadows
Value load(const uint8_t* p, ScalarType t) {
  Value v{};
  switch (t) {
    case ScalarType::U8:
    case ScalarType::Bool: v.u = *p; break;
    case ScalarType::U32:
    case ScalarType::I32: {
      uint32_t x;
      std::memcpy(&x, p, 4);
      v.u = x;
      break;
    }
    case ScalarType::U64: std::memcpy(&v.u, p, 8); break;
    case ScalarType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      v.f = f;
      break;
    }
    case ScalarType::F64: std::memcpy(&v.f, p, 8); break;
  }
  return v;
}

void store(uint8_t* p, ScalarType t, Value v) {
  switch (t) {
    case ScalarType::U8: *p = static_cast<uint8_t>(v.u); break;
    case ScalarType::Bool: *p = v.u ? 1 : 0; break;
    case ScalarType::U32:
    case ScalarType::I32: {
      const auto x = static_cast<uint32_t>(v.u);
      std::memcpy(p, &x, 4);
      break;
    }
    case ScalarType::U64: std::memcpy(p, &v.u, 8); break;
    case ScalarType::F32: {
      const auto f = static_cast<float>(v.f);
      std::memcpy(p, &f, 4);
      break;
    }
    case ScalarType::F64: std::memcpy(p, &v.f, 8); break;
  }
}

// One access, for happens-before checks.
struct Access {
  int32_t block = -1;  // -1: none
  uint32_t thread = 0;
  uint32_t epoch = 0;      // __syncthreads passed by the block before the access
  uint32_t warpEpoch = 0;  // __syncwarp passed by the thread's warp before the access
  uint32_t fences = 0;     // __threadfence executed by the block before the access
  const CStmt* stmt = nullptr;
  bool atomic = false;
};

// The accesses to one address that later ones must be checked against. Readers since the last
// write, enough of them that a racing write always meets one: the first reader of the current
// barrier interval, the latest reader from another warp than it, the latest other reader from
// its warp, and the latest reader from an earlier block (blocks are never ordered).
struct Shadow {
  Access write;
  Access first, otherWarp, sameWarp, otherBlock;
  bool written = false;  // shared memory: written since the virtual block started
};

struct GlobalArray {
  uint8_t* data = nullptr;
  size_t count = 0;
  bool writable = false;
  std::vector<Shadow> shadow;  // per element, for arrays the kernel writes
  std::vector<uint8_t> state;  // the bytes of a GridState array (zero, as at module load)
  // Blocks that published their writes through an atomic on this array after a fence: block ->
  // the number of fences it had executed by then (its accesses before that many are published).
  std::map<uint32_t, uint32_t> published;
};

// ------------------------------------------------------------------ the machine
class Machine {
 public:
  Machine(const Kernel& kernel, const BoundArguments& bound, const SimOptions& options,
          uint32_t blocks)
      : k_(kernel.ir()),
        options_(options),
        blocks_(blocks),
        threads_(k_.threadsPerBlock),
        compiler_(k_) {
    // Scalar and length parameters take the first slots.
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (p.kind == ParamKind::Array) continue;
      params_.emplace_back(compiler_.slot(p.name), isFloat(p.type) ? ir::realValue(bound.reals[i])
                                                                   : ir::intValue(bound.bits[i]));
    }
    body_ = compiler_.body(k_.body);
    regs_.assign(compiler_.slotCount(), std::vector<Value>(threads_));
    globals_.resize(k_.arrays.size());
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (p.kind != ParamKind::Array) continue;
      GlobalArray& g = globals_[p.array];
      g.data = static_cast<uint8_t*>(bound.arrays[i]->data());
      g.count = bound.arrays[i]->count();
      g.writable = p.output || k_.arrays[p.array].writable;
      if (g.writable && options_.detectHazards) g.shadow.assign(g.count, Shadow{});
    }
    for (size_t a = 0; a < k_.arrays.size(); ++a) {
      const ArrayDecl& d = k_.arrays[a];
      if (d.space != MemorySpace::GridState) continue;
      GlobalArray& g = globals_[a];
      g.state.assign(uint64_t{d.length} * sizeOf(d.type), 0);
      g.data = g.state.data();
      g.count = d.length;
      g.writable = true;
      if (options_.detectHazards) g.shadow.assign(g.count, Shadow{});
    }
    smem_.assign(k_.sharedBytes, 0);
    if (options_.detectHazards) smemShadow_.assign(k_.sharedBytes, Shadow{});
    local_.resize(k_.arrays.size());
    warpEpoch_.assign((threads_ + 31) / 32, 0);
    stepLimit_ = options_.maxStepsPerThread * threads_ * std::max<uint64_t>(blocks_, 1);
  }

  SimStats run() {
    Lanes all(threads_);
    for (uint32_t t = 0; t < threads_; ++t) all[t] = t;
    for (uint32_t b = 0; b < blocks_; ++b) {
      block_ = options_.reverseBlocks ? blocks_ - 1 - b : b;
      // A fresh block: its shared memory is undefined and nothing orders it with others.
      epoch_ = 0;
      fences_ = 0;
      acquired_.clear();
      std::fill(warpEpoch_.begin(), warpEpoch_.end(), 0);
      if (options_.detectHazards) std::fill(smemShadow_.begin(), smemShadow_.end(), Shadow{});
      // Shared memory is undefined at a block's start: a poison pattern, not the last block's.
      std::fill(smem_.begin(), smem_.end(), uint8_t{0xa5});
      for (auto& [s, v] : params_) std::fill(regs_[s].begin(), regs_[s].end(), v);
      exec(body_, all);
    }
    return SimStats{blocks_, threads_, steps_};
  }

 private:
  // ---- messages
  std::string who(uint32_t block, uint32_t thread) const {
    return "block " + std::to_string(block) + " thread " + std::to_string(thread);
  }
  [[noreturn]] void hazard(const std::string& what) const {
    throw HazardError("simulate(kernel " + k_.name + "): " + what);
  }
  std::string element(ArrayId a, uint64_t i) const {
    return k_.arrays[a].name + "[" + std::to_string(i) + "]";
  }

  // ---- happens-before
  bool concurrent(const Access& prev, uint32_t t) const {
    if (prev.block < 0) return false;
    if (prev.block != static_cast<int32_t>(block_)) {
      // Other blocks are unordered, unless this block acquired the access through an atomic
      // that the other block published it with (a fence, then an atomic on the same array).
      const auto it = acquired_.find(static_cast<uint32_t>(prev.block));
      return it == acquired_.end() || prev.fences >= it->second;
    }
    if (prev.thread == t || prev.epoch != epoch_) return false;
    const bool sameWarp = prev.thread / 32 == t / 32;
    return !(sameWarp && prev.warpEpoch != warpEpoch_[t / 32]);
  }
  Access access(uint32_t t, bool atomic) const {
    return Access{
        static_cast<int32_t>(block_), t, epoch_, warpEpoch_[t / 32], fences_, current_, atomic};
  }
  void race(const char* space, ArrayId a, uint64_t i, const Access& prev, const char* prevDid,
            uint32_t t, const char* did) const {
    hazard(std::string(space) + " race on " + element(a, i) + ": " + who(block_, t) + " " + did +
           " it in `" + current_->text + "` and " +
           who(static_cast<uint32_t>(prev.block), prev.thread) + " " + prevDid + " it in `" +
           (prev.stmt ? prev.stmt->text : "?") + "` with no barrier between them");
  }
  void checkRead(Shadow& s, const char* space, ArrayId a, uint64_t i, uint32_t t, bool atomic) {
    if (concurrent(s.write, t) && !(atomic && s.write.atomic)) {
      race(space, a, i, s.write, "wrote", t, atomic ? "atomically updates" : "reads");
    }
    const Access now = access(t, atomic);
    for (Access* r : {&s.first, &s.otherWarp, &s.sameWarp}) {
      if (r->block < 0) continue;
      if (r->block != now.block) {
        s.otherBlock = *r;  // stays concurrent with this block's writes
        *r = Access{};
      } else if (r->epoch != now.epoch) {
        *r = Access{};  // a __syncthreads separates it from everything this block does now
      }
    }
    if (s.first.block < 0) {
      s.first = now;
    } else if (s.first.thread / 32 != t / 32) {
      s.otherWarp = now;
    } else if (s.first.thread != t) {
      s.sameWarp = now;
    }
  }
  void checkWrite(Shadow& s, const char* space, ArrayId a, uint64_t i, uint32_t t, bool atomic) {
    const char* did = atomic ? "atomically updates" : "writes";
    if (concurrent(s.write, t) && !(atomic && s.write.atomic))
      race(space, a, i, s.write, "wrote", t, did);
    for (const Access* r : {&s.first, &s.otherWarp, &s.sameWarp, &s.otherBlock}) {
      if (concurrent(*r, t) && !(atomic && r->atomic)) race(space, a, i, *r, "read", t, did);
    }
    s.write = access(t, atomic);
    s.first = s.otherWarp = s.sameWarp = s.otherBlock = Access{};
    s.written = true;
  }

  // A block's atomic on a grid-state array publishes what it did before its last fence and
  // acquires what the blocks before it published there (their atomics came first).
  void publishAndAcquire(ArrayId a) {
    if (k_.arrays[a].space != MemorySpace::GridState) return;
    GlobalArray& g = globals_[a];
    if (fences_ > 0) g.published[block_] = fences_;
    for (const auto& [b, f] : g.published) {
      if (b == block_) continue;
      uint32_t& mine = acquired_[b];
      mine = std::max(mine, f);
    }
  }

  // A read of another lane's register is a __shfl_sync: the whole warp must take part.
  void converged(ArrayId a, const Lanes& lanes, const Value* ix) const {
    for (size_t i = 0; i < lanes.size();) {
      const uint32_t w = lanes[i] / 32;
      size_t j = i;
      bool shuffles = false;
      while (j < lanes.size() && lanes[j] / 32 == w) {
        shuffles = shuffles || ix[lanes[j]].u != lanes[j] % 32;
        ++j;
      }
      const uint32_t warpLanes = std::min<uint32_t>(32, threads_ - w * 32);
      if (shuffles && j - i != warpLanes) {
        hazard("__shfl_sync of register array " + k_.arrays[a].name +
               " reached by only part of "
               "warp " +
               std::to_string(w) + " of block " + std::to_string(block_) + ": " +
               std::to_string(j - i) + " of " + std::to_string(warpLanes) + " lanes at `" +
               current_->text + "`");
      }
      i = j;
    }
  }

  // ---- memory
  // Address of element i of array a for thread t; checks bounds and records the access.
  uint8_t* address(ArrayId a, uint64_t i, uint32_t t, bool isWrite, bool atomic) {
    const ArrayDecl& d = k_.arrays[a];
    const uint32_t size = sizeOf(d.type);
    const char* kind = isWrite ? (atomic ? "atomic update" : "write") : "read";
    switch (d.space) {
      case MemorySpace::Global:
      case MemorySpace::GridState: {
        GlobalArray& g = globals_[a];
        if (i >= g.count) {
          hazard(std::string("out-of-bounds ") + kind + " of global " + element(a, i) +
                 " (the array has " + std::to_string(g.count) + " elements) by " + who(block_, t) +
                 " in `" + current_->text + "`");
        }
        if (!g.shadow.empty()) {
          if (isWrite) {
            checkWrite(g.shadow[i], "global-memory", a, i, t, atomic);
          } else {
            checkRead(g.shadow[i], "global-memory", a, i, t, atomic);
          }
        }
        return g.data + i * size;
      }
      case MemorySpace::Shared: {
        const uint64_t slices = sharedSlices(d, threads_);
        const uint64_t length = uint64_t{d.length} * slices;
        if (i >= length) {
          hazard(std::string("out-of-bounds ") + kind + " of shared " + element(a, i) +
                 " (length " + std::to_string(length) + ") by " + who(block_, t) + " in `" +
                 current_->text + "`");
        }
        const uint64_t at = d.offset + i * size;
        OBSIDIAN_ASSERT(at + size <= smem_.size(),
                        "shared arrays lie inside the kernel's shared memory");
        if (options_.detectHazards) {
          for (uint32_t b = 0; b < size; ++b) {
            Shadow& s = smemShadow_[at + b];
            if (atomic && !s.written) {
              hazard("atomic update of shared " + element(a, i) + " that nothing wrote, by " +
                     who(block_, t) + " in `" + current_->text + "`");
            }
            if (isWrite) {
              checkWrite(s, "shared-memory", a, i, t, atomic);
            } else {
              if (!s.written) {  // an atomic update reads the old value too
                hazard("read of shared " + element(a, i) + " that nothing wrote, by " +
                       who(block_, t) + " in `" + current_->text + "`");
              }
              checkRead(s, "shared-memory", a, i, t, atomic);
            }
          }
        }
        return smem_.data() + at;
      }
      case MemorySpace::Register: {
        if (i >= 32) {
          hazard(std::string("out-of-bounds ") + kind + " of register array " + element(a, i) +
                 " (a warp's 32 lanes) by " + who(block_, t) + " in `" + current_->text + "`");
        }
        return local_[a].data() + (uint64_t{t / 32} * 32 + i) * size;
      }
      case MemorySpace::Local: {
        if (i >= d.length) {
          hazard(std::string("out-of-bounds ") + kind + " of per-thread " + element(a, i) +
                 " (length " + std::to_string(d.length) + ") by " + who(block_, t) + " in `" +
                 current_->text + "`");
        }
        return local_[a].data() + (uint64_t{t} * d.length + i) * size;
      }
    }
    return nullptr;
  }

  // ---- expressions: out[t] for every t in lanes
  struct Scratch {
    std::vector<std::vector<Value>> buffers;
    size_t used = 0;
  };
  Value* acquire() {
    if (scratch_.used == scratch_.buffers.size()) scratch_.buffers.emplace_back(threads_);
    return scratch_.buffers[scratch_.used++].data();
  }
  void release() { --scratch_.used; }

  void split(const Lanes& lanes, const Value* cond, Lanes& yes, Lanes& no) const {
    for (uint32_t t : lanes) (cond[t].u ? yes : no).push_back(t);
  }

  void eval(const CExp& e, const Lanes& lanes, Value* out) {
    switch (e.kind) {
      case ExpKind::Literal:
        for (uint32_t t : lanes) out[t] = e.lit;
        return;
      case ExpKind::Var: {
        const Value* r = regs_[e.slot].data();
        for (uint32_t t : lanes) out[t] = r[t];
        return;
      }
      case ExpKind::ThreadIdx:
        for (uint32_t t : lanes) out[t] = ir::intValue(t);
        return;
      case ExpKind::BlockIdx:
        for (uint32_t t : lanes) out[t] = ir::intValue(block_);
        return;
      case ExpKind::GridDim:
        for (uint32_t t : lanes) out[t] = ir::intValue(blocks_);
        return;
      case ExpKind::Unary:
        eval(*e.a, lanes, out);
        for (uint32_t t : lanes) out[t] = ir::evalUnary(e.un, e.argType, out[t]);
        return;
      case ExpKind::Cast:
        eval(*e.a, lanes, out);
        for (uint32_t t : lanes) out[t] = ir::evalCast(e.type, e.argType, out[t]);
        return;
      case ExpKind::Binary: {
        if (e.bin == BinOp::And || e.bin == BinOp::Or) {  // short-circuit, as in CUDA
          eval(*e.a, lanes, out);
          Lanes rest, done;
          for (uint32_t t : lanes)
            ((out[t].u != 0) == (e.bin == BinOp::And) ? rest : done).push_back(t);
          if (!rest.empty()) eval(*e.b, rest, out);
          for (uint32_t t : rest) out[t].u = out[t].u ? 1 : 0;
          return;
        }
        eval(*e.a, lanes, out);
        Value* rhs = acquire();
        eval(*e.b, lanes, rhs);
        if ((e.bin == BinOp::Div || e.bin == BinOp::Mod) && !isFloat(e.argType)) {
          for (uint32_t t : lanes) {
            if ((rhs[t].u & ir::typeMask(e.argType)) == 0) {
              hazard("integer division by zero by " + who(block_, t) + " in `" + current_->text +
                     "`");
            }
          }
        }
        for (uint32_t t : lanes) out[t] = ir::evalBinary(e.bin, e.argType, out[t], rhs[t]);
        release();
        return;
      }
      case ExpKind::Select: {  // only the chosen side is evaluated, as in CUDA
        Value* cond = acquire();
        eval(*e.a, lanes, cond);
        Lanes yes, no;
        split(lanes, cond, yes, no);
        release();
        if (!yes.empty()) eval(*e.b, yes, out);
        if (!no.empty()) eval(*e.c, no, out);
        return;
      }
      case ExpKind::Index: {
        Value* ix = acquire();
        eval(*e.a, lanes, ix);
        if (k_.arrays[e.array].space == MemorySpace::Register) converged(e.array, lanes, ix);
        for (uint32_t t : lanes) out[t] = load(address(e.array, ix[t].u, t, false, false), e.type);
        release();
        return;
      }
    }
  }

  // ---- statements
  void countSteps(size_t n) {
    steps_ += n;
    if (steps_ > stepLimit_) {
      throw Error("simulate(kernel " + k_.name + "): gave up after " + std::to_string(steps_) +
                  " thread steps (SimOptions::maxStepsPerThread); does a loop never end? Last "
                  "statement: `" +
                  current_->text + "`");
    }
  }

  void exec(const std::vector<CStmt>& body, const Lanes& lanes) {
    for (const CStmt& s : body) exec(s, lanes);
  }

  void sync(const CStmt& s, const Lanes& lanes) {
    if (s.level == Level::Block) {
      if (lanes.size() != threads_) {
        hazard("__syncthreads() reached by only part of block " + std::to_string(block_) + ": " +
               std::to_string(lanes.size()) + " of " + std::to_string(threads_) +
               " threads (first missing: thread " +
               std::to_string(firstMissing(lanes, 0, threads_)) + ") at `" + s.text + "`");
      }
      ++epoch_;
      return;
    }
    size_t i = 0;
    while (i < lanes.size()) {
      const uint32_t w = lanes[i] / 32;
      const uint32_t warpEnd = std::min(threads_, (w + 1) * 32);
      size_t j = i;
      while (j < lanes.size() && lanes[j] / 32 == w) ++j;
      if (j - i != warpEnd - w * 32) {
        const Lanes part(lanes.begin() + static_cast<long>(i),
                         lanes.begin() + static_cast<long>(j));
        hazard("__syncwarp() reached by only part of warp " + std::to_string(w) + " of block " +
               std::to_string(block_) + ": " + std::to_string(j - i) + " of " +
               std::to_string(warpEnd - w * 32) + " threads (first missing: thread " +
               std::to_string(firstMissing(part, w * 32, warpEnd)) + ") at `" + s.text + "`");
      }
      ++warpEpoch_[w];
      i = j;
    }
  }

  static uint32_t firstMissing(const Lanes& lanes, uint32_t from, uint32_t to) {
    uint32_t expect = from;
    for (uint32_t t : lanes) {
      if (t != expect) return expect;
      ++expect;
    }
    return expect < to ? expect : to;
  }

  Value atomicUpdate(const CStmt& s, ScalarType type, Value old, Value v, Value cmp) const {
    using ir::evalBinary;
    switch (s.atomic) {
      case AtomicOp::Add: return evalBinary(BinOp::Add, type, old, v);
      case AtomicOp::Sub: return evalBinary(BinOp::Sub, type, old, v);
      case AtomicOp::Min: return evalBinary(BinOp::Min, type, old, v);
      case AtomicOp::Max: return evalBinary(BinOp::Max, type, old, v);
      case AtomicOp::Inc: return ir::intValue(old.u >= v.u ? 0 : (old.u + 1) & 0xffffffffu);
      case AtomicOp::Dec: return ir::intValue((old.u == 0 || old.u > v.u) ? v.u : old.u - 1);
      case AtomicOp::Exch: return v;
      case AtomicOp::Cas: return old.u == cmp.u ? v : old;
      case AtomicOp::And: return evalBinary(BinOp::BitAnd, type, old, v);
      case AtomicOp::Or: return evalBinary(BinOp::BitOr, type, old, v);
      case AtomicOp::Xor: return evalBinary(BinOp::BitXor, type, old, v);
      case AtomicOp::Load: return old;
    }
    return old;
  }

  void exec(const CStmt& s, const Lanes& lanes) {
    if (lanes.empty()) return;
    current_ = &s;
    countSteps(lanes.size());
    switch (s.op) {
      case Op::Assign: {
        Value* ix = acquire();
        Value* v = acquire();
        eval(*s.e0, lanes, ix);
        eval(*s.e1, lanes, v);
        current_ = &s;
        const ScalarType t = k_.arrays[s.array].type;
        for (uint32_t l : lanes) store(address(s.array, ix[l].u, l, true, false), t, v[l]);
        release();
        release();
        return;
      }
      case Op::Declare:
        if (s.e0) {
          eval(*s.e0, lanes, regs_[s.slot].data());
        } else {
          for (uint32_t l : lanes) regs_[s.slot][l] = Value{};
        }
        return;
      case Op::AssignVar: {
        Value* v = acquire();
        eval(*s.e0, lanes, v);
        for (uint32_t l : lanes) regs_[s.slot][l] = v[l];
        release();
        return;
      }
      case Op::SeqFor: {
        Value* bound = acquire();
        Value* step = acquire();
        eval(*s.e0, lanes, regs_[s.slot].data());
        Lanes active = lanes, next;
        for (;;) {
          current_ = &s;
          eval(*s.e1, active, bound);
          next.clear();
          for (uint32_t l : active) {
            if (regs_[s.slot][l].u < bound[l].u) next.push_back(l);
          }
          active.swap(next);
          if (active.empty()) break;
          // Each iteration of the loop over virtual blocks starts a new virtual block: its
          // shared memory is undefined again.
          if (s.made == Virtual::Blocks && options_.detectHazards) {
            for (Shadow& sh : smemShadow_) sh.written = false;
          }
          exec(s.body, active);
          current_ = &s;
          countSteps(active.size());
          eval(*s.e2, active, step);
          // Loops do not wrap around (see SeqFor): a step past 2^32 - 1 ends the loop.
          for (uint32_t l : active) {
            regs_[s.slot][l].u = std::min<uint64_t>(regs_[s.slot][l].u + step[l].u, 0xffffffffu);
          }
        }
        release();
        release();
        return;
      }
      case Op::SeqWhile: {
        Value* cond = acquire();
        Lanes active = lanes, next;
        for (;;) {
          current_ = &s;
          eval(*s.e0, active, cond);
          next.clear();
          for (uint32_t l : active) {
            if (cond[l].u) next.push_back(l);
          }
          active.swap(next);
          if (active.empty()) break;
          countSteps(active.size());
          exec(s.body, active);
        }
        release();
        return;
      }
      case Op::Cond: {
        Value* cond = acquire();
        eval(*s.e0, lanes, cond);
        Lanes yes, no;
        split(lanes, cond, yes, no);
        release();
        exec(s.body, yes);
        exec(s.otherwise, no);
        return;
      }
      case Op::Allocate: {
        const ArrayDecl& d = k_.arrays[s.array];
        if (d.space == MemorySpace::Local) {
          local_[s.array].assign(uint64_t{threads_} * d.length * sizeOf(d.type), 0);
        } else if (d.space == MemorySpace::Register) {
          local_[s.array].assign(uint64_t{(threads_ + 31) / 32} * 32 * sizeOf(d.type), 0);
        }
        return;
      }
      case Op::Sync: sync(s, lanes); return;
      case Op::Fence: fences_ += 1; return;
      case Op::Atomic: {
        Value* ix = acquire();
        Value* v = acquire();
        Value* cmp = acquire();
        eval(*s.e0, lanes, ix);
        if (s.e1) eval(*s.e1, lanes, v);
        if (s.e2) eval(*s.e2, lanes, cmp);
        current_ = &s;
        const ScalarType t = k_.arrays[s.array].type;
        for (uint32_t l : lanes) {  // one at a time, in thread order: deterministic
          const bool update = s.atomic != AtomicOp::Load;
          uint8_t* p = address(s.array, ix[l].u, l, update, true);
          const Value old = load(p, t);
          if (update) store(p, t, atomicUpdate(s, t, old, v[l], cmp[l]));
          regs_[s.slot][l] = old;
        }
        publishAndAcquire(s.array);
        release();
        release();
        release();
        return;
      }
    }
  }

  const KernelIR& k_;
  const SimOptions& options_;
  uint32_t blocks_;
  uint32_t threads_;
  Compiler compiler_;
  std::vector<std::pair<int, Value>> params_;
  std::vector<CStmt> body_;
  std::vector<std::vector<Value>> regs_;
  std::vector<GlobalArray> globals_;
  std::vector<uint8_t> smem_;
  std::vector<Shadow> smemShadow_;
  std::vector<std::vector<uint8_t>> local_;
  std::vector<uint32_t> warpEpoch_;
  Scratch scratch_;
  uint32_t block_ = 0;
  uint32_t epoch_ = 0;
  uint32_t fences_ = 0;                    // __threadfence executed by this block so far
  std::map<uint32_t, uint32_t> acquired_;  // block -> its accesses before that many fences
  const CStmt* current_ = nullptr;
  uint64_t steps_ = 0;
  uint64_t stepLimit_ = 0;
};

SimStats simulateOn(const Kernel& k, const std::vector<KernelArg>& args,
                    const SimOptions& options) {
  const BoundArguments bound = bindArguments(k.ir(), args);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].onDevice()) {
      throw Error(
          "simulate(kernel " + k.name() + "): argument " + std::to_string(i) +
          " is a device buffer; the simulator runs on host arrays (std::vector, std::span)");
    }
  }
  const uint32_t blocks =
      std::max<uint32_t>(realBlocks(k.ir(), bound, options.blocks, "SimOptions::blocks"), 1);
  return Machine(k, bound, options, blocks).run();
}

}  // namespace

SimStats simulate(const Kernel& k, const std::vector<KernelArg>& args, const SimOptions& options) {
  // The simulator compiles and evaluates expressions recursively (see ir/deep_stack.hpp).
  return ir::withStackFor(ir::maxDepth(k.ir()), [&] { return simulateOn(k, args, options); });
}

}  // namespace obsidian
