// Pass: emit CUDA (see emit_cuda.hpp).
#include "codegen/emit_cuda.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "codegen/virtualize.hpp"
#include "ir/ir_walk.hpp"
#include "ir/print.hpp"

namespace obsidian {
namespace {

// Every identifier written here (and in print_exp.cpp and src/export/export.cpp) that a kernel
// could be named is reserved in src/ir/identifiers.cpp: derived from the operator and type
// tables, or listed there by hand. tests/unit/test_identifiers.cpp finds omissions.
const char* kPrelude =
    "#if defined(__CUDACC_RTC__)\n"
    "typedef unsigned char uint8_t;\n"
    "typedef unsigned short uint16_t;\n"
    "typedef unsigned int uint32_t;\n"
    "typedef int int32_t;\n"
    "typedef unsigned long long uint64_t;\n"
    "#else\n"
    "#include <cstdint>\n"
    "#endif\n";

class Emitter {
 public:
  Emitter(const KernelIR& k, const MemoryMap& memory, Checks checks)
      : k_(k), memory_(memory), checks_(checks) {
    collectVars(k_.body);
  }

  // Where each statement's text starts in run()'s result, in pre-order.
  const std::vector<size_t>& statementOffsets() const { return offsets_; }

  std::string run(bool externC) {
    OBSIDIAN_ASSERT(virtualized(k_), "emitCuda runs after virtualize");
    if (checks_ != Checks::None) {
      if (checks_ == Checks::IfDefined) out_ << "#ifdef OBSIDIAN_CHECKED\n";
      // The first out-of-bounds write of a launch; the host clears it before and reads it after.
      out_ << (externC ? "extern \"C\" " : "static ") << "__device__ unsigned long long "
           << violationSymbol(k_) << ";\n";
      if (checks_ == Checks::IfDefined) out_ << "#endif\n";
    }
    for (const ArrayDecl& a : k_.arrays) {
      if (a.space != MemorySpace::GridState) continue;
      // Zero when the module is loaded, kept between launches (see MemorySpace::GridState).
      out_ << (externC ? "" : "static ") << "__device__ " << cudaTypeName(a.type) << " " << a.name
           << "[" << a.length << "];\n";
    }
    out_ << (externC ? "extern \"C\" " : "static ") << "__global__ void __launch_bounds__("
         << k_.threadsPerBlock;
    if (k_.minBlocksPerSm > 0) out_ << ", " << k_.minBlocksPerSm;
    out_ << ") " << k_.name << "(" << params() << ")\n{\n";
    if (memory_.sharedBytes > 0) {
      out_ << "  extern __shared__ __align__(16) unsigned char smem[];\n";
      for (size_t id = 0; id < k_.arrays.size(); ++id) {
        const ArrayDecl& a = k_.arrays[id];
        if (a.space != MemorySpace::Shared) continue;
        const SharedPlace& at = memory_.of(static_cast<ArrayId>(id));
        OBSIDIAN_ASSERT(at.placed, "the memory map placed every shared array");
        out_ << "  " << cudaTypeName(a.type) << "* " << a.name << " = (" << cudaTypeName(a.type)
             << "*)(smem + " << at.offset << ");\n";
      }
    }
    body(k_.body, 1);
    out_ << "}\n";
    return out_.str();
  }

 private:
  // The variables that expressions read: an atomic whose old value nobody reads is emitted
  // without one (nvcc warns about a variable set but never used).
  void collectVars(const Body& b) {
    for (const Stmt& s : b) {
      ir::forEachExp(s, [&](const ExpPtr& x) { ir::varsIn(x, read_); });
      for (const Body* c : ir::childBodies(s)) collectVars(*c);
    }
  }

  std::string params() const {
    std::string s;
    for (const Param& p : k_.params) {
      if (!s.empty()) s += ", ";
      const std::string t(cudaTypeName(p.type));
      switch (p.kind) {
        case ParamKind::Array:
          // __restrict__: launch (and an exported launcher) refuses an array the kernel writes
          // that shares a byte with another array argument, so no write is seen through
          // another pointer; the compiler may keep values in registers across stores and read
          // inputs through the read-only cache.
          s += (p.output || k_.arrays[p.array].writable ? "" : "const ") + t + "* __restrict__ " +
               p.name;
          break;
        case ParamKind::Length:
        case ParamKind::Scalar: s += t + " " + p.name; break;
      }
    }
    return s;
  }

  std::string e(const ExpPtr& x) const { return ir::printCudaExp(x, k_.arrays); }
  // x as the left or right operand of `op` (parenthesized where precedence needs it).
  std::string operand(BinOp op, bool right, const ExpPtr& x) const {
    return ir::printOperand(op, right, x, k_.arrays);
  }

  // Elements of a global array, as a CUDA expression (its parameter's length or grid-state size).
  std::string globalLength(ArrayId a) const {
    const ArrayDecl& d = k_.arrays.at(a);
    if (d.space == MemorySpace::GridState) return std::to_string(d.length) + "u";
    for (const Param& p : k_.params) {
      if (p.kind == ParamKind::Array && p.array == a) return "(" + e(p.length) + ")";
    }
    OBSIDIAN_ASSERT(false, "a global array is a parameter");
    return "";
  }

  // In checked mode, the guard before a write or atomic of array a at `index`: the statement
  // that follows runs only in bounds (`if (out of bounds) record; else <statement>`).
  void guard(ArrayId a, const ExpPtr& index, int d) {
    const MemorySpace space = k_.arrays.at(a).space;
    if (checks_ == Checks::None ||
        (space != MemorySpace::Global && space != MemorySpace::GridState)) {
      return;
    }
    if (checks_ == Checks::IfDefined) out_ << "#ifdef OBSIDIAN_CHECKED\n";
    const std::string i = e(index);
    out_ << pad(d) << "if (!(" << operand(BinOp::Lt, false, index) << " < " << globalLength(a)
         << ")) atomicCAS(&" << violationSymbol(k_) << ", 0ull, " << (uint64_t{a} + 1)
         << "ull << 32 | (" << i << ")); else\n";
    if (checks_ == Checks::IfDefined) out_ << "#endif\n";
  }
  std::string pad(int d) const { return std::string(2 * static_cast<size_t>(d), ' '); }
  const std::string& name(ArrayId a) const { return k_.arrays.at(a).name; }

  void body(const Body& b, int d) {
    for (const Stmt& s : b) stmt(s, d);
  }

  void block(const Body& b, int d) {
    body(b, d + 1);
    out_ << pad(d) << "}\n";
  }

  std::string atomicCall(const Atomic& a) const {
    const ArrayDecl& arr = k_.arrays.at(a.array);
    // uint64_t is unsigned long under nvcc but CUDA's atomics take unsigned long long.
    const bool u64 = arr.type == ScalarType::U64;
    const std::string addr = u64 ? "(unsigned long long*)&" + name(a.array) + "[" + e(a.index) + "]"
                                 : "&" + name(a.array) + "[" + e(a.index) + "]";
    auto arg = [&](const ExpPtr& x) { return u64 ? "(unsigned long long)(" + e(x) + ")" : e(x); };
    // A volatile load: it reads memory every time, and a loop polling it is not one the
    // compiler may assume ends (or delete, as it may a loop of plain loads such as __ldcv).
    if (a.op == AtomicOp::Load) {
      return "*(volatile const " +
             std::string(u64 ? "unsigned long long" : cudaTypeName(arr.type)) + "*)" + addr;
    }
    if (hasPreludeType(arr.type)) {  // CUDA's overloads are not on obsidian_half (NVRTC): PTX
      OBSIDIAN_ASSERT(a.op == AtomicOp::Add, "small floats and pairs have atomicAdd only");
      return "obsidian_atomic_add(" + addr + ", " + e(a.value) + ")";
    }
    std::string call = std::string("atomic") + atomicOpName(a.op) + "(" + addr;
    if (a.compare) call += ", " + arg(a.compare);
    if (a.value) call += ", " + arg(a.value);
    return call + ")";
  }

  // One store of a vector's lanes (unvectors<W>): through CUDA's aligned vector type (float4)
  // where it has one; else (u8, u16 and the small floats) as 32-bit words whose bits are the
  // lanes, little-endian as in memory (how vectors<W> reads them, see narrowLaneOf).
  std::string vectorStore(const StoreVector& v) const {
    const ScalarType t = k_.arrays.at(v.array).type;
    const uint32_t w = static_cast<uint32_t>(v.values.size()), size = sizeOf(t);
    std::string type = vectorTypeName(t, w), lanes;
    if (!type.empty()) {
      for (uint32_t l = 0; l < w; ++l) lanes += (l ? ", " : "") + e(v.values[l]);
    } else {
      const uint32_t bytes = w * size, wordBytes = std::min(bytes, 4u);
      type = bytes >= 8 ? "uint" + std::to_string(bytes / 4)
                        : (bytes == 4 ? "uint32_t" : "uint16_t");
      for (uint32_t word = 0; word < bytes / wordBytes; ++word) {
        std::string bits;
        for (uint32_t l = word * wordBytes / size; l < (word + 1) * wordBytes / size; ++l) {
          const std::string lane = hasPreludeType(t) ? "obsidian_bits(" + e(v.values[l]) + ")"
                                                     : "(" + e(v.values[l]) + ")";
          const uint32_t shift = 8 * ((l * size) % wordBytes);
          bits += std::string(bits.empty() ? "" : " | ") + "(uint32_t)" + lane +
                  (shift ? " << " + std::to_string(shift) + "u" : "");
        }
        lanes += (word ? ", " : "") + (bytes == 2 ? "(uint16_t)(" + bits + ")" : bits);
      }
    }
    return "((" + type + "*)" + name(v.array) + ")[" + e(v.vector) + "] = " + type + "{" +
           lanes + "}";
  }

  void stmt(const Stmt& s, int d) {
    offsets_.push_back(static_cast<size_t>(out_.tellp()));
    std::visit(
        [&](const auto& n) {
          using T = std::remove_cvref_t<decltype(n)>;
          if constexpr (std::is_same_v<T, Assign>) {
            guard(n.array, n.index, d);
            if (k_.arrays.at(n.array).space == MemorySpace::Register) {
              out_ << pad(d) << name(n.array) << " = " << e(n.value) << ";\n";  // its own lane
            } else if (k_.arrays.at(n.array).space == MemorySpace::GridState) {
              const ScalarType t = k_.arrays.at(n.array).type;
              if (hasPreludeType(t)) {  // a pair (grid state is 4 or 8 bytes): __stcg of its word
                OBSIDIAN_ASSERT(sizeOf(t) == 4, "grid state of 4 or 8 bytes");
                out_ << pad(d) << "__stcg((unsigned int*)&" << name(n.array) << "["
                     << e(n.index) << "], obsidian_bits(" << e(n.value) << "));\n";
              } else {
                out_ << pad(d) << "__stcg(&" << name(n.array) << "[" << e(n.index) << "], "
                     << e(n.value) << ");\n";
              }
            } else {
              out_ << pad(d) << name(n.array) << "[" << e(n.index) << "] = " << e(n.value) << ";\n";
            }
          } else if constexpr (std::is_same_v<T, StoreVector>) {
            // The guard checks the last lane: the lanes are consecutive from n.index.
            const auto w = static_cast<uint32_t>(n.values.size());
            guard(n.array, ir::binary(BinOp::Add, n.index, ir::u32(w - 1)), d);
            out_ << pad(d) << vectorStore(n) << ";\n";
          } else if constexpr (std::is_same_v<T, Declare>) {
            out_ << pad(d) << (n.constant ? "const " : "") << cudaTypeName(n.type) << " " << n.var;
            if (n.init) out_ << " = " << e(n.init);
            out_ << ";\n";
          } else if constexpr (std::is_same_v<T, AssignVar>) {
            out_ << pad(d) << n.var << " = " << e(n.value) << ";\n";
          } else if constexpr (std::is_same_v<T, ForAll> || std::is_same_v<T, DistrPar>) {
            OBSIDIAN_ASSERT(false, "emitCuda: parallel loops are removed by virtualize");
          } else if constexpr (std::is_same_v<T, SeqFor>) {
            out_ << pad(d) << "for (uint32_t " << n.var << " = " << e(n.start) << "; " << n.var
                 << " < " << operand(BinOp::Lt, true, n.bound) << "; ";
            if (ir::isLiteralValue(n.step, 1)) {
              out_ << "++" << n.var;
            } else if (ir::upperBound(n.bound) - 1 + ir::upperBound(n.step) > 0xffffffffu) {
              // var + step could wrap past 2^32 - 1 (see SeqFor): step at most to the bound.
              const ExpPtr left = ir::binary(BinOp::Sub, n.bound, ir::var(ScalarType::U32, n.var));
              out_ << n.var << " += " << e(ir::binary(BinOp::Min, n.step, left));
            } else {
              out_ << n.var << " += " << e(n.step);
            }
            out_ << ") {\n";
            block(n.body, d);
          } else if constexpr (std::is_same_v<T, SeqWhile>) {
            out_ << pad(d) << "while (" << e(n.cond) << ") {\n";
            block(n.body, d);
          } else if constexpr (std::is_same_v<T, Cond>) {
            out_ << pad(d) << "if (" << e(n.cond) << ") {\n";
            body(n.then, d + 1);
            if (!n.otherwise.empty()) {
              out_ << pad(d) << "} else {\n";
              body(n.otherwise, d + 1);
            }
            out_ << pad(d) << "}\n";
          } else if constexpr (std::is_same_v<T, Allocate>) {
            const ArrayDecl& a = k_.arrays.at(n.array);
            if (a.space == MemorySpace::Local) {
              out_ << pad(d) << cudaTypeName(a.type) << " " << a.name << "[" << a.length << "];\n";
            } else if (a.space == MemorySpace::Register) {
              out_ << pad(d) << cudaTypeName(a.type) << " " << a.name << ";  // one per lane\n";
            } else {
              out_ << pad(d) << "// " << a.name << ": " << a.length << " x " << cudaTypeName(a.type)
                   << (a.level == Level::Warp ? " per warp" : "") << " at smem + "
                   << memory_.of(n.array).offset << "\n";
            }
          } else if constexpr (std::is_same_v<T, Sync>) {
            out_ << pad(d) << (n.level == Level::Block ? "__syncthreads();" : "__syncwarp();")
                 << "\n";
          } else if constexpr (std::is_same_v<T, Fence>) {
            out_ << pad(d) << "__threadfence();\n";
          } else if constexpr (std::is_same_v<T, Sleep>) {
            // __nanosleep needs sm_70; before it, the loop polls without backing off.
            out_ << "#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700\n"
                 << pad(d) << "__nanosleep(" << n.ns << "u);\n"
                 << "#endif\n";
          } else if constexpr (std::is_same_v<T, Atomic>) {
            const ScalarType t = k_.arrays.at(n.array).type;
            if (n.result.empty() || !read_.contains(n.result)) {
              guard(n.array, n.index, d);
              out_ << pad(d) << atomicCall(n) << ";\n";
            } else if (checks_ != Checks::None &&
                       k_.arrays.at(n.array).space != MemorySpace::Shared) {
              // Guarded, the result is declared first: an atomic not done returns 0.
              out_ << pad(d) << cudaTypeName(t) << " " << n.result << " = 0;\n";
              guard(n.array, n.index, d);
              out_ << pad(d) << n.result << " = (" << cudaTypeName(t) << ")" << atomicCall(n)
                   << ";\n";
            } else {
              out_ << pad(d) << "const " << cudaTypeName(t) << " " << n.result << " = ("
                   << cudaTypeName(t) << ")" << atomicCall(n) << ";\n";
            }
          } else {
            static_assert(alwaysFalse<T>, "emitCuda: a statement type is not handled");
          }
        },
        s.node);
  }

  const KernelIR& k_;
  const MemoryMap& memory_;
  Checks checks_;
  std::set<std::string> read_;
  std::ostringstream out_;
  std::vector<size_t> offsets_;
};

}  // namespace

std::string emitKernelFunction(const KernelIR& k, const MemoryMap& memory, bool externC,
                               Checks checks) {
  return Emitter(k, memory, checks).run(externC);
}

namespace {

std::string translationUnitHead(const KernelIR& k, const MemoryMap& memory, Checks checks) {
  return "// Generated by obsidian: kernel " + k.name + ", " + std::to_string(k.threadsPerBlock) +
         " threads per block, " + std::to_string(memory.sharedBytes) + " bytes of shared memory" +
         (checks == Checks::None ? "" : ", bounds-checked") + ".\n" + kPrelude +
         (usesSmallFloats(k) ? ir::printSmallFloatPrelude() : "") + "\n";
}

bool smallIn(const Body& body) {
  for (const Stmt& s : body) {
    bool found = false;
    ir::forEachExp(s, [&](const ExpPtr& e) {
      found = found || ir::anyNode(e, [](const ExpNode& n) { return hasPreludeType(n.type); });
    });
    if (found) return true;
    for (const Body* child : ir::childBodies(s)) {
      if (smallIn(*child)) return true;
    }
  }
  return false;
}

}  // namespace

bool usesSmallFloats(const KernelIR& k) {
  for (const ArrayDecl& a : k.arrays) {
    if (hasPreludeType(a.type)) return true;
  }
  for (const Param& p : k.params) {
    if (hasPreludeType(p.type)) return true;
  }
  return smallIn(k.body);
}

std::string emitCuda(const KernelIR& k, const MemoryMap& memory, Checks checks) {
  return translationUnitHead(k, memory, checks) + emitKernelFunction(k, memory, true, checks);
}

std::vector<uint32_t> cudaStatementLines(const KernelIR& k, const MemoryMap& memory) {
  const std::string head = translationUnitHead(k, memory, Checks::None);
  Emitter e(k, memory, Checks::None);
  const std::string text = e.run(true);
  std::vector<uint32_t> lines;
  uint32_t line = 1 + static_cast<uint32_t>(std::count(head.begin(), head.end(), '\n'));
  size_t at = 0;
  for (size_t offset : e.statementOffsets()) {
    line += static_cast<uint32_t>(std::count(text.begin() + static_cast<ptrdiff_t>(at),
                                             text.begin() + static_cast<ptrdiff_t>(offset), '\n'));
    at = offset;
    lines.push_back(line);
  }
  return lines;
}

// Kernel names may not start with obsidian_ (capture reserves the prefix), so this name is no
// kernel's.
std::string violationSymbol(const KernelIR& k) { return "obsidian_violation_" + k.name; }

std::string describeViolation(const KernelIR& k, uint64_t record,
                              const std::function<uint64_t(const ExpPtr&)>& length) {
  const uint64_t id = (record >> 32) - 1;
  const uint32_t index = static_cast<uint32_t>(record);
  OBSIDIAN_ASSERT(record != 0 && id < k.arrays.size(), "a violation names an array of the kernel");
  const ArrayDecl& a = k.arrays[id];
  uint64_t n = a.length;
  for (const Param& p : k.params) {
    if (p.kind == ParamKind::Array && p.array == id) n = length(p.length);
  }
  return "a write to " + a.name + "[" + std::to_string(index) + "] is out of bounds: " + a.name +
         " has " + std::to_string(n) +
         " elements (the first out-of-bounds write or atomic of the launch; it was not done)";
}

}  // namespace obsidian
