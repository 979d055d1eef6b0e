// The Program IR as indented pseudo-code (what OBSIDIAN_DUMP_IR prints after each pass).
#include <sstream>

#include "ir/print.hpp"

namespace obsidian::ir {
namespace {

class IrPrinter {
 public:
  IrPrinter(const KernelIR& k, const MemoryMap& memory) : k_(k), memory_(memory) {}

  void body(const Body& b, int depth) {
    for (const Stmt& s : b) stmt(s, depth);
  }
  std::string str() const { return out_.str(); }

 private:
  std::string e(const ExpPtr& x) const { return x ? printExp(x, k_.arrays) : "<null>"; }
  std::string pad(int depth) const { return std::string(2 * static_cast<size_t>(depth), ' '); }
  std::string name(ArrayId a) const { return k_.arrays.at(a).name; }

  void stmt(const Stmt& s, int d) {
    std::visit(
        [&](const auto& n) {
          using T = std::remove_cvref_t<decltype(n)>;
          if constexpr (std::is_same_v<T, Assign>) {
            out_ << pad(d) << name(n.array) << "[" << e(n.index) << "] = " << e(n.value) << "\n";
          } else if constexpr (std::is_same_v<T, StoreVector>) {
            out_ << pad(d) << name(n.array) << "[" << e(n.index) << " ..+" << n.values.size()
                 << "] = {";
            for (size_t l = 0; l < n.values.size(); ++l) out_ << (l ? ", " : "") << e(n.values[l]);
            out_ << "}\n";
          } else if constexpr (std::is_same_v<T, Declare>) {
            out_ << pad(d) << "declare " << cudaTypeName(n.type) << " " << n.var;
            if (n.init) out_ << " = " << e(n.init);
            out_ << "\n";
          } else if constexpr (std::is_same_v<T, AssignVar>) {
            out_ << pad(d) << n.var << " = " << e(n.value) << "\n";
          } else if constexpr (std::is_same_v<T, ForAll>) {
            out_ << pad(d) << "forAll " << levelName(n.level) << " " << n.var << " < " << e(n.count)
                 << " {\n";
            body(n.body, d + 1);
            out_ << pad(d) << "}\n";
          } else if constexpr (std::is_same_v<T, DistrPar>) {
            out_ << pad(d) << "distrPar " << levelName(n.level) << " " << n.var << " < "
                 << e(n.count) << " {\n";
            body(n.body, d + 1);
            out_ << pad(d) << "}\n";
          } else if constexpr (std::is_same_v<T, SeqFor>) {
            out_ << pad(d) << "seqFor " << levelName(n.level) << " " << n.var << " = " << e(n.start)
                 << "; < " << e(n.bound) << "; += " << e(n.step) << " {\n";
            body(n.body, d + 1);
            out_ << pad(d) << "}\n";
          } else if constexpr (std::is_same_v<T, SeqWhile>) {
            out_ << pad(d) << "seqWhile " << levelName(n.level) << " (" << e(n.cond) << ") {\n";
            body(n.body, d + 1);
            out_ << pad(d) << "}\n";
          } else if constexpr (std::is_same_v<T, Cond>) {
            out_ << pad(d) << "if " << levelName(n.level) << " (" << e(n.cond) << ") {\n";
            body(n.then, d + 1);
            if (!n.otherwise.empty()) {
              out_ << pad(d) << "} else {\n";
              body(n.otherwise, d + 1);
            }
            out_ << pad(d) << "}\n";
          } else if constexpr (std::is_same_v<T, Allocate>) {
            const ArrayDecl& a = k_.arrays.at(n.array);
            out_ << pad(d) << "allocate " << a.name << " : " << cudaTypeName(a.type) << "["
                 << a.length << "] " << levelName(a.level)
                 << (a.space == MemorySpace::Local      ? " local"
                     : a.space == MemorySpace::Register ? " register"
                                                        : " shared");
            if (const SharedPlace& at = memory_.of(n.array); at.placed) out_ << " @" << at.offset;
            out_ << "\n";
          } else if constexpr (std::is_same_v<T, Sync>) {
            out_ << pad(d) << "sync " << levelName(n.level) << "\n";
          } else if constexpr (std::is_same_v<T, Fence>) {
            out_ << pad(d) << "fence\n";
          } else if constexpr (std::is_same_v<T, Sleep>) {
            out_ << pad(d) << "sleep " << n.ns << " ns\n";
          } else if constexpr (std::is_same_v<T, Atomic>) {
            out_ << pad(d) << n.result << " = atomic" << atomicOpName(n.op) << " " << name(n.array)
                 << "[" << e(n.index) << "]";
            if (n.value) out_ << ", " << e(n.value);
            if (n.compare) out_ << ", compare " << e(n.compare);
            out_ << "\n";
          } else {
            static_assert(alwaysFalse<T>, "printIr: a statement type is not handled");
          }
        },
        s.node);
  }

  const KernelIR& k_;
  const MemoryMap& memory_;
  std::ostringstream out_;
};

}  // namespace

std::string printIr(const KernelIR& k, const MemoryMap& memory) {
  IrPrinter p(k, memory);
  std::ostringstream head;
  head << "kernel " << k.name << " (threads per block " << k.threadsPerBlock;
  if (memory.sharedBytes) head << ", shared bytes " << memory.sharedBytes;
  head << ")\n";
  p.body(k.body, 1);
  return head.str() + p.str();
}

}  // namespace obsidian::ir

const char* obsidian::atomicOpName(AtomicOp op) {
  switch (op) {
    case AtomicOp::Add: return "Add";
    case AtomicOp::Sub: return "Sub";
    case AtomicOp::Min: return "Min";
    case AtomicOp::Max: return "Max";
    case AtomicOp::Inc: return "Inc";
    case AtomicOp::Dec: return "Dec";
    case AtomicOp::Exch: return "Exch";
    case AtomicOp::Cas: return "CAS";
    case AtomicOp::And: return "And";
    case AtomicOp::Or: return "Or";
    case AtomicOp::Xor: return "Xor";
    case AtomicOp::Load: return "Load";
  }
  return "?";
}
