// The simulator's machine (see sim/machine.hpp).
#include "sim/machine.hpp"

#include <algorithm>
#include <cstring>

#include "codegen/emit_cuda.hpp"
#include "kernel/kernel_access.hpp"
#include "memmap/memory_map.hpp"

namespace obsidian::sim {
namespace {

// ---- scalars in memory, as the GPU stores them
ir::Value load(const uint8_t* p, ScalarType t) {
  ir::Value v{};
  switch (t) {
    case ScalarType::U8:
    case ScalarType::Bool: v.u = *p; break;
    case ScalarType::U16: {
      uint16_t x;
      std::memcpy(&x, p, 2);
      v.u = x;
      break;
    }
    case ScalarType::U32:
    case ScalarType::I32:
    case ScalarType::F16x2:  // a pair is held as its word
    case ScalarType::BF16x2: {
      uint32_t x;
      std::memcpy(&x, p, 4);
      v.u = x;
      break;
    }
    case ScalarType::U64: std::memcpy(&v.u, p, 8); break;
    case ScalarType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      v.f = detail::widenF32(f);  // a NaN's bits kept (types.hpp)
      break;
    }
    case ScalarType::F64: std::memcpy(&v.f, p, 8); break;
    case ScalarType::F16:
    case ScalarType::BF16:
    case ScalarType::E4M3:
    case ScalarType::E5M2: {
      uint16_t x = *p;
      if (sizeOf(t) == 2) std::memcpy(&x, p, 2);
      v.f = detail::smallFloatValue(*scalarInfo(t).small, x);  // a NaN's bits kept
      break;
    }
  }
  return v;
}

void store(uint8_t* p, ScalarType t, ir::Value v) {
  switch (t) {
    case ScalarType::U8: *p = static_cast<uint8_t>(v.u); break;
    case ScalarType::Bool: *p = v.u ? 1 : 0; break;
    case ScalarType::U16: {
      const auto x = static_cast<uint16_t>(v.u);
      std::memcpy(p, &x, 2);
      break;
    }
    case ScalarType::U32:
    case ScalarType::I32:
    case ScalarType::F16x2:
    case ScalarType::BF16x2: {
      const auto x = static_cast<uint32_t>(v.u);
      std::memcpy(p, &x, 4);
      break;
    }
    case ScalarType::U64: std::memcpy(p, &v.u, 8); break;
    case ScalarType::F32: {
      const float f = detail::narrowF32(v.f);
      std::memcpy(p, &f, 4);
      break;
    }
    case ScalarType::F64: std::memcpy(p, &v.f, 8); break;
    case ScalarType::F16:
    case ScalarType::BF16:
    case ScalarType::E4M3:
    case ScalarType::E5M2: {
      const auto x = static_cast<uint16_t>(detail::smallFloatBits(*scalarInfo(t).small, v.f));
      if (sizeOf(t) == 2) {
        std::memcpy(p, &x, 2);
      } else {
        *p = static_cast<uint8_t>(x);
      }
      break;
    }
  }
}

}  // namespace

Machine::Machine(const Kernel& kernel, const BoundArguments& bound, const SimOptions& options,
                 uint32_t blocks)
    : k_(kernel.ir()),
      memory_(detail::KernelAccess::lowered(kernel).memory),
      options_(options),
      blocks_(blocks),
      threads_(k_.threadsPerBlock),
      compiler_(k_),
      hazards_(k_, memory_.sharedBytes, options.detectHazards, at_) {
  // Scalar and length parameters take the first slots.
  for (size_t i = 0; i < k_.params.size(); ++i) {
    const Param& p = k_.params[i];
    if (p.kind == ParamKind::Array) continue;
    params_.emplace_back(compiler_.slot(p.name), isFloat(p.type) ? ir::realValue(bound.reals[i])
                                                                 : ir::intValue(bound.bits[i]));
  }
  body_ = compiler_.body(k_.body);
  regs_.assign(compiler_.slotCount(), std::vector<ir::Value>(threads_));
  globals_.resize(k_.arrays.size());
  for (size_t i = 0; i < k_.params.size(); ++i) {
    const Param& p = k_.params[i];
    if (p.kind != ParamKind::Array) continue;
    GlobalArray& g = globals_[p.array];
    g.data = static_cast<uint8_t*>(bound.arrays[i]->data());
    g.count = bound.arrays[i]->count();
    g.writable = p.output || k_.arrays[p.array].writable;
    if (g.writable) hazards_.trackGlobal(p.array, g.count);
  }
  for (size_t a = 0; a < k_.arrays.size(); ++a) {
    const ArrayDecl& d = k_.arrays[a];
    if (d.space != MemorySpace::GridState) continue;
    GlobalArray& g = globals_[a];
    g.state.assign(uint64_t{d.length} * sizeOf(d.type), 0);
    g.data = g.state.data();
    g.count = d.length;
    g.writable = true;
    hazards_.trackGlobal(static_cast<ArrayId>(a), g.count);
  }
  traffic_.resize(k_.arrays.size());
  smem_.assign(memory_.sharedBytes, 0);
  local_.resize(k_.arrays.size());
  localWritten_.resize(k_.arrays.size());
  stepLimit_ = options_.maxStepsPerThread * threads_ * std::max<uint64_t>(blocks_, 1);
  if (options_.profile) {
    std::vector<uint64_t> bytes(k_.arrays.size(), 0);
    for (size_t a = 0; a < k_.arrays.size(); ++a) {
      if (globals_[a].data) bytes[a] = globals_[a].count * sizeOf(k_.arrays[a].type);
    }
    counters_ = std::make_unique<Counters>(compiler_.statementCount(), bytes);
  }
}

SimStats Machine::run() {
  Lanes all(threads_);
  for (uint32_t t = 0; t < threads_; ++t) all[t] = t;
  for (uint32_t b = 0; b < blocks_; ++b) {
    at_.block = options_.reverseBlocks ? blocks_ - 1 - b : b;
    // A fresh block: its shared memory is undefined and nothing orders it with others.
    hazards_.startBlock();
    if (counters_) counters_->startBlock();
    // Shared memory is undefined at a block's start: a poison pattern, not the last block's.
    std::fill(smem_.begin(), smem_.end(), uint8_t{0xa5});
    for (auto& [s, v] : params_) std::fill(regs_[s].begin(), regs_[s].end(), v);
    exec(body_, all);
    if (counters_) counters_->boundary();
  }
  SimStats stats{blocks_, threads_, steps_, {}, counters_ ? profile() : SimProfile{}};
  for (size_t a = 0; a < k_.arrays.size(); ++a) {
    const ArrayDecl& d = k_.arrays[a];
    if (d.space != MemorySpace::Global && d.space != MemorySpace::GridState) continue;
    SimTraffic t = traffic_[a];
    t.array = d.name;
    t.elementBytes = sizeOf(d.type);
    stats.traffic.push_back(std::move(t));
  }
  return stats;
}

SimProfile Machine::profile() const {
  SimProfile p;
  p.enabled = true;
  p.blocks = blocks_;
  p.threadsPerBlock = threads_;
  p.sharedBytes = memory_.sharedBytes;
  const std::vector<uint32_t> lines = cudaStatementLines(k_, memory_);
  const std::vector<SimCounters>& counts = counters_->perStatement();
  // The iterations of a loop with literal bounds (0 for other loops).
  auto trips = [](const CStmt& s) -> uint64_t {
    if (s.op != Op::SeqFor) return 0;
    for (const auto* e : {s.e0.get(), s.e1.get(), s.e2.get()}) {
      if (e->kind != ExpKind::Literal) return 0;
    }
    const uint64_t start = s.e0->lit.u, bound = s.e1->lit.u, step = s.e2->lit.u;
    return bound <= start || step == 0 ? 0 : (bound - start + step - 1) / step;
  };
  auto walk = [&](const std::vector<CStmt>& body, uint32_t loops, uint64_t unrolled,
                  auto& self) -> void {
    for (const CStmt& s : body) {
      if (counts[s.id][Counter::WarpStatements] != 0) {
        OBSIDIAN_ASSERT(s.id < lines.size(), "emitCuda prints every statement the simulator runs");
        p.statements.push_back({s.id, lines[s.id], s.text, loops,
                                static_cast<uint32_t>(std::min<uint64_t>(unrolled, 64)),
                                counts[s.id]});
        p.total += counts[s.id];
      }
      const bool loop = s.op == Op::SeqFor || s.op == Op::SeqWhile;
      const uint64_t n = trips(s);
      self(s.body, loops + (loop ? 1 : 0), n > 0 ? std::min<uint64_t>(unrolled * n, 64) : unrolled,
           self);
      self(s.otherwise, loops, unrolled, self);
    }
  };
  walk(body_, 0, 1, walk);
  return p;
}

void Machine::counted(ArrayId a, AccessKind kind, const Lanes& lanes, uint32_t bytes) {
  const uint32_t s = at_.stmt->id;
  switch (k_.arrays[a].space) {
    case MemorySpace::Global:
    case MemorySpace::GridState:
      counters_->global(s, kind, a, !globals_[a].writable, bytes, lanes, addresses_);
      break;
    case MemorySpace::Shared:
      counters_->shared(s, kind, bytes, memory_.of(a).offset, lanes, addresses_);
      break;
    case MemorySpace::Register:
      if (kind == AccessKind::Load) counters_->shuffle(s, lanes);  // writes: the lane's own
      break;
    case MemorySpace::Local: break;  // registers (or local memory: not modelled)
  }
  addresses_.clear();
}

// ---- memory
uint8_t* Machine::address(ArrayId a, uint64_t i, uint32_t t, bool isWrite, bool atomic) {
  const ArrayDecl& d = k_.arrays[a];
  const uint32_t size = sizeOf(d.type);
  const char* kind = isWrite ? (atomic ? "atomic update" : "write") : "read";
  switch (d.space) {
    case MemorySpace::Global:
    case MemorySpace::GridState: {
      GlobalArray& g = globals_[a];
      if (i >= g.count) {
        hazards_.hazard(std::string("out-of-bounds ") + kind + " of global " +
                        hazards_.element(a, i) + " (the array has " + std::to_string(g.count) +
                        " elements) by " + hazards_.who(at_.block, t) + " in `" + at_.stmt->text +
                        "`");
      }
      hazards_.global(a, i, t, isWrite, atomic);
      if (counters_) addresses_.push_back(i * size);
      SimTraffic& moved = traffic_[a];
      ++(atomic ? moved.atomics : isWrite ? moved.stores : moved.loads);
      return g.data + i * size;
    }
    case MemorySpace::Shared: {
      const SharedPlace& place = memory_.of(a);
      const uint64_t slices = sharedSlices(d, threads_, place.warpSlices);
      const uint64_t length = uint64_t{d.length} * slices;
      if (i >= length) {
        hazards_.hazard(std::string("out-of-bounds ") + kind + " of shared " +
                        hazards_.element(a, i) + " (length " + std::to_string(length) + ") by " +
                        hazards_.who(at_.block, t) + " in `" + at_.stmt->text + "`");
      }
      const uint64_t at = place.offset + i * size;
      OBSIDIAN_ASSERT(at + size <= smem_.size(),
                      "shared arrays lie inside the kernel's shared memory");
      hazards_.shared(at, size, a, i, t, isWrite, atomic);
      if (counters_) addresses_.push_back(at);
      return smem_.data() + at;
    }
    case MemorySpace::Register: {
      if (i >= 32) {
        hazards_.hazard(std::string("out-of-bounds ") + kind + " of register array " +
                        hazards_.element(a, i) + " (a warp's 32 lanes) by " +
                        hazards_.who(at_.block, t) + " in `" + at_.stmt->text + "`");
      }
      return local_[a].data() + (uint64_t{t / 32} * 32 + i) * size;
    }
    case MemorySpace::Local: {
      if (i >= d.length) {
        hazards_.hazard(std::string("out-of-bounds ") + kind + " of per-thread " +
                        hazards_.element(a, i) + " (length " + std::to_string(d.length) + ") by " +
                        hazards_.who(at_.block, t) + " in `" + at_.stmt->text + "`");
      }
      const uint64_t at = uint64_t{t} * d.length + i;
      // A thread array (of a Block or Warp program) keeps a thread's values across barriers:
      // reading one it has not written is reading an undefined register.
      if (d.level != Level::Thread && i < d.length) {
        std::vector<uint8_t>& written = localWritten_[a];
        if (isWrite) {
          written[at] = 1;
        } else if (!written[at] && hazards_.detecting()) {
          hazards_.hazard("read of never-written element " + std::to_string(i) +
                          " of thread array " + d.name + " (" + std::to_string(d.length) +
                          " per thread) by " + hazards_.who(at_.block, t) + " in `" +
                          at_.stmt->text + "`");
        }
      }
      return local_[a].data() + at * size;
    }
  }
  return nullptr;
}

// ---- expressions
ir::Value* Machine::acquire() {
  if (scratch_.used == scratch_.buffers.size()) scratch_.buffers.emplace_back(threads_);
  return scratch_.buffers[scratch_.used++].data();
}

void Machine::release() { --scratch_.used; }

void Machine::split(const Lanes& lanes, const ir::Value* cond, Lanes& yes, Lanes& no) const {
  for (uint32_t t : lanes) (cond[t].u ? yes : no).push_back(t);
}

void Machine::eval(const CExp& e, const Lanes& lanes, ir::Value* out) {
  switch (e.kind) {
    case ExpKind::Literal:
      for (uint32_t t : lanes) out[t] = e.lit;
      return;
    case ExpKind::Var: {
      const ir::Value* r = regs_[e.slot].data();
      for (uint32_t t : lanes) out[t] = r[t];
      return;
    }
    case ExpKind::ThreadIdx:
      for (uint32_t t : lanes) out[t] = ir::intValue(t);
      return;
    case ExpKind::BlockIdx:
      for (uint32_t t : lanes) out[t] = ir::intValue(at_.block);
      return;
    case ExpKind::GridDim:
      for (uint32_t t : lanes) out[t] = ir::intValue(blocks_);
      return;
    case ExpKind::Unary:
      eval(*e.a, lanes, out);
      if (counters_) {
        counters_->arithmetic(at_.stmt->id, lanes, isFloat(e.argType) || isPair(e.argType));
      }
      for (uint32_t t : lanes) out[t] = ir::evalUnary(e.un, e.argType, out[t]);
      return;
    case ExpKind::Cast:
      eval(*e.a, lanes, out);
      if (counters_) counters_->arithmetic(at_.stmt->id, lanes, false);
      for (uint32_t t : lanes) out[t] = ir::evalCast(e.type, e.argType, out[t]);
      return;
    case ExpKind::BitCast:  // a register move: no instruction counted
      eval(*e.a, lanes, out);
      for (uint32_t t : lanes) out[t] = ir::evalBitCast(e.type, e.argType, out[t]);
      return;
    case ExpKind::Binary: {
      if (counters_) {
        counters_->arithmetic(at_.stmt->id, lanes, isFloat(e.argType) || isPair(e.argType));
      }
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
      ir::Value* rhs = acquire();
      eval(*e.b, lanes, rhs);
      if ((e.bin == BinOp::Div || e.bin == BinOp::Mod) && !isFloat(e.argType)) {
        for (uint32_t t : lanes) {
          if ((rhs[t].u & ir::typeMask(e.argType)) == 0) {
            hazards_.hazard("integer division by zero by " + hazards_.who(at_.block, t) + " in `" +
                            at_.stmt->text + "`");
          }
        }
      }
      for (uint32_t t : lanes) out[t] = ir::evalBinary(e.bin, e.argType, out[t], rhs[t]);
      release();
      return;
    }
    case ExpKind::Fma: {
      if (counters_) counters_->arithmetic(at_.stmt->id, lanes, true);
      eval(*e.a, lanes, out);
      ir::Value* b = acquire();
      eval(*e.b, lanes, b);
      ir::Value* c = acquire();
      eval(*e.c, lanes, c);
      for (uint32_t t : lanes) out[t] = ir::evalFma(e.type, out[t], b[t], c[t]);
      release();
      release();
      return;
    }
    case ExpKind::Select: {  // only the chosen side is evaluated, as in CUDA
      if (counters_) counters_->arithmetic(at_.stmt->id, lanes, false);
      ir::Value* cond = acquire();
      eval(*e.a, lanes, cond);
      Lanes yes, no;
      split(lanes, cond, yes, no);
      release();
      if (!yes.empty()) eval(*e.b, yes, out);
      if (!no.empty()) eval(*e.c, no, out);
      return;
    }
    case ExpKind::Index: {
      if (e.vote != WarpVote::None) {
        vote(e, lanes, out);
        return;
      }
      ir::Value* ix = acquire();
      eval(*e.a, lanes, ix);
      if (k_.arrays[e.array].space == MemorySpace::Register) hazards_.converged(e.array, lanes, ix);
      for (uint32_t t : lanes) out[t] = load(address(e.array, ix[t].u, t, false, false), e.type);
      // A wide load is one access of every lane's vector, counted at its first element; a
      // lane's own element of a register array is its register.
      if (counters_ && e.vecLane == 0 && !e.ownLane) {
        counted(e.array, AccessKind::Load, lanes, e.vecWidth * sizeOf(e.type));
      }
      addresses_.clear();
      release();
      return;
    }
  }
}

// A warp vote: each lane of `lanes` gets the vote over its warp's elements of the register
// array, compared bit for bit (match_any), as __ballot_sync and kin with a full mask.
void Machine::vote(const CExp& e, const Lanes& lanes, ir::Value* out) {
  hazards_.converged(e.array, lanes, nullptr, e.vote);
  if (counters_) counters_->arithmetic(at_.stmt->id, lanes, false);
  const ArrayDecl& d = k_.arrays[e.array];
  const uint32_t size = sizeOf(d.type);
  auto bitsAt = [&](uint32_t t) {  // the bits of thread t's element
    uint64_t b = 0;
    std::memcpy(&b, local_[e.array].data() + uint64_t{t} * size, size);
    return b;
  };
  for (uint32_t t : lanes) {
    const uint32_t first = t / 32 * 32, end = std::min(first + 32, threads_);
    uint64_t mask = 0;
    for (uint32_t j = first; j < end; ++j) {
      const bool counted = e.vote == WarpVote::MatchAny ? bitsAt(j) == bitsAt(t) : bitsAt(j) != 0;
      if (counted) mask |= uint64_t{1} << (j - first);
    }
    const uint64_t everyone = (uint64_t{1} << (end - first)) - 1;
    switch (e.vote) {
      case WarpVote::Ballot:
      case WarpVote::MatchAny: out[t] = ir::intValue(mask); break;
      case WarpVote::Any: out[t] = ir::intValue(mask != 0 ? 1 : 0); break;
      case WarpVote::All: out[t] = ir::intValue(mask == everyone ? 1 : 0); break;
      case WarpVote::None: OBSIDIAN_ASSERT(false, "eval reads plain elements");
    }
  }
}

// ---- statements
void Machine::countSteps(size_t n) {
  steps_ += n;
  if (steps_ > stepLimit_) {
    throw Error("simulate(kernel " + k_.name + "): gave up after " + std::to_string(steps_) +
                " thread steps (SimOptions::maxStepsPerThread); does a loop never end? Last "
                "statement: `" +
                at_.stmt->text + "`");
  }
}

void Machine::exec(const std::vector<CStmt>& body, const Lanes& lanes) {
  for (const CStmt& s : body) exec(s, lanes);
}

ir::Value Machine::atomicUpdate(const CStmt& s, ScalarType type, ir::Value old, ir::Value v,
                                ir::Value cmp) const {
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

void Machine::exec(const CStmt& s, const Lanes& lanes) {
  if (lanes.empty()) return;
  at_.stmt = &s;
  countSteps(lanes.size());
  // Loops count each test of their condition (below). Straight-line code ends at anything but
  // an assignment or declaration (Counters::boundary).
  const bool straight = s.op == Op::Assign || s.op == Op::StoreVector || s.op == Op::Declare ||
                        s.op == Op::AssignVar;
  if (counters_ && !straight) counters_->boundary();
  if (counters_ && s.op != Op::SeqFor && s.op != Op::SeqWhile) counters_->statement(s.id, lanes);
  switch (s.op) {
    case Op::Assign: {
      ir::Value* ix = acquire();
      ir::Value* v = acquire();
      eval(*s.e0, lanes, ix);
      eval(*s.e1, lanes, v);
      at_.stmt = &s;
      const ScalarType t = k_.arrays[s.array].type;
      for (uint32_t l : lanes) store(address(s.array, ix[l].u, l, true, false), t, v[l]);
      if (counters_) counted(s.array, AccessKind::Store, lanes, sizeOf(t));
      release();
      release();
      return;
    }
    case Op::StoreVector: {
      // W element writes, each checked as a write; counted as one W * size-byte access of
      // every lane's vector (at its first element), as a wide load is.
      const ScalarType t = k_.arrays[s.array].type;
      const auto w = static_cast<uint32_t>(s.lanes.size());
      ir::Value* ix = acquire();
      eval(*s.e0, lanes, ix);
      std::vector<ir::Value*> v;
      for (const auto& lane : s.lanes) {
        v.push_back(acquire());
        eval(*lane, lanes, v.back());
      }
      at_.stmt = &s;
      for (uint32_t k = 0; k < w; ++k) {
        for (uint32_t l : lanes) store(address(s.array, ix[l].u + k, l, true, false), t, v[k][l]);
        if (counters_ && k == 0) counted(s.array, AccessKind::Store, lanes, w * sizeOf(t));
        addresses_.clear();
      }
      for (uint32_t k = 0; k <= w; ++k) release();
      return;
    }
    case Op::Declare:
      if (s.e0) {
        eval(*s.e0, lanes, regs_[s.slot].data());
      } else {
        for (uint32_t l : lanes) regs_[s.slot][l] = ir::Value{};
      }
      return;
    case Op::AssignVar: {
      ir::Value* v = acquire();
      eval(*s.e0, lanes, v);
      for (uint32_t l : lanes) regs_[s.slot][l] = v[l];
      release();
      return;
    }
    case Op::SeqFor: {
      ir::Value* bound = acquire();
      ir::Value* step = acquire();
      eval(*s.e0, lanes, regs_[s.slot].data());
      Lanes active = lanes, next;
      for (;;) {
        at_.stmt = &s;
        if (counters_) counters_->boundary();
        eval(*s.e1, active, bound);
        next.clear();
        for (uint32_t l : active) {
          if (regs_[s.slot][l].u < bound[l].u) next.push_back(l);
        }
        if (counters_) {
          counters_->statement(s.id, active);
          counters_->branch(s.id, active, next);
        }
        active.swap(next);
        if (active.empty()) break;
        // Each iteration of the loop over virtual blocks starts a new virtual block: its shared
        // memory is undefined again.
        if (s.made == Virtual::Blocks) hazards_.startVirtualBlock();
        exec(s.body, active);
        at_.stmt = &s;
        countSteps(active.size());
        eval(*s.e2, active, step);
        // Loops do not wrap around (see SeqFor): a step past 2^32 - 1 ends the loop.
        for (uint32_t l : active) {
          regs_[s.slot][l].u = std::min<uint64_t>(regs_[s.slot][l].u + step[l].u, 0xffffffffu);
        }
      }
      if (counters_) counters_->boundary();
      release();
      release();
      return;
    }
    case Op::SeqWhile: {
      ir::Value* cond = acquire();
      Lanes active = lanes, next;
      for (;;) {
        at_.stmt = &s;
        if (counters_) counters_->boundary();
        eval(*s.e0, active, cond);
        next.clear();
        for (uint32_t l : active) {
          if (cond[l].u) next.push_back(l);
        }
        if (counters_) {
          counters_->statement(s.id, active);
          counters_->branch(s.id, active, next);
        }
        active.swap(next);
        if (active.empty()) break;
        countSteps(active.size());
        exec(s.body, active);
      }
      if (counters_) counters_->boundary();
      release();
      return;
    }
    case Op::Cond: {
      ir::Value* cond = acquire();
      eval(*s.e0, lanes, cond);
      Lanes yes, no;
      split(lanes, cond, yes, no);
      release();
      if (counters_) counters_->branch(s.id, lanes, yes);
      exec(s.body, yes);
      if (counters_) counters_->boundary();
      exec(s.otherwise, no);
      if (counters_) counters_->boundary();
      return;
    }
    case Op::Allocate: {
      const ArrayDecl& d = k_.arrays[s.array];
      if (d.space == MemorySpace::Local) {
        local_[s.array].assign(uint64_t{threads_} * d.length * sizeOf(d.type), 0);
        if (d.level != Level::Thread) {
          localWritten_[s.array].assign(uint64_t{threads_} * d.length, 0);
        }
      } else if (d.space == MemorySpace::Register) {
        local_[s.array].assign(uint64_t{(threads_ + 31) / 32} * 32 * sizeOf(d.type), 0);
      }
      return;
    }
    case Op::Sync:
      hazards_.barrier(s, lanes);
      if (counters_) counters_->barrier(s.id, s.level, lanes);
      return;
    case Op::Fence:
      hazards_.fence();
      if (counters_) counters_->fence(s.id, lanes);
      return;
    case Op::Sleep: return;  // time only: the simulator's threads take turns anyway
    case Op::Atomic: {
      ir::Value* ix = acquire();
      ir::Value* v = acquire();
      ir::Value* cmp = acquire();
      eval(*s.e0, lanes, ix);
      if (s.e1) eval(*s.e1, lanes, v);
      if (s.e2) eval(*s.e2, lanes, cmp);
      at_.stmt = &s;
      const ScalarType t = k_.arrays[s.array].type;
      for (uint32_t l : lanes) {  // one at a time, in thread order: deterministic
        const bool update = s.atomic != AtomicOp::Load;
        uint8_t* p = address(s.array, ix[l].u, l, update, true);
        const ir::Value old = load(p, t);
        if (update) store(p, t, atomicUpdate(s, t, old, v[l], cmp[l]));
        regs_[s.slot][l] = old;
      }
      // A volatile load (AtomicOp::Load) is a load to the memory system.
      if (counters_) {
        counted(s.array, s.atomic == AtomicOp::Load ? AccessKind::Load : AccessKind::Atomic, lanes,
                sizeOf(t));
      }
      hazards_.atomicOn(s.array);
      release();
      release();
      release();
      return;
    }
  }
}

}  // namespace obsidian::sim
