// The simulator's executable form of a lowered kernel: expressions and statements as flat
// records (variables numbered into register slots, each statement with its text for
// messages), so the machine (sim/machine.hpp) never looks names up while it runs.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/scalar_ops.hpp"
#include "obsidian/kernel.hpp"

namespace obsidian::sim {

struct CExp {
  ExpKind kind;
  ScalarType type;
  ScalarType argType = ScalarType::U32;  // operand type (Binary, Unary, Cast)
  UnOp un = UnOp::Neg;
  BinOp bin = BinOp::Add;
  ir::Value lit{};
  int slot = -1;
  ArrayId array = 0;
  uint8_t vecWidth = 1;  // Index: lane vecLane of a vecWidth-element wide load
  uint8_t vecLane = 0;
  bool ownLane = false;  // Index of a register array: the lane's own element (no shuffle)
  WarpVote vote = WarpVote::None;  // Index of a register array: a vote over every lane's element
  std::unique_ptr<CExp> a, b, c;
};

enum class Op : uint8_t {
  Assign,
  StoreVector,
  Declare,
  AssignVar,
  SeqFor,
  SeqWhile,
  Cond,
  Allocate,
  Sync,
  Atomic,
  Fence,
  Sleep
};

struct CStmt {
  Op op;
  uint32_t id = 0;  // pre-order number in the kernel (the order emitCuda prints statements in)
  Level level = Level::Thread;
  ArrayId array = 0;
  int slot = -1;
  AtomicOp atomic = AtomicOp::Add;
  ScalarType type = ScalarType::U32;
  Virtual made = Virtual::None;  // SeqFor: what virtualize made it for
  std::unique_ptr<CExp> e0, e1, e2, e3;
  std::vector<std::unique_ptr<CExp>> lanes;  // StoreVector: the vector's values
  std::vector<CStmt> body, otherwise;
  std::string text;  // the statement, for messages
};

// Compiles a lowered kernel's body (parallel loops already removed by virtualize) into CStmts,
// numbering every variable it meets into a register slot.
class Compiler {
 public:
  explicit Compiler(const KernelIR& k) : k_(k) {}

  // The slot of variable `name` (a new one the first time it is seen).
  int slot(const std::string& name);
  size_t slotCount() const { return slots_.size(); }
  // Statements compiled so far (ids are 0 .. statementCount() - 1).
  uint32_t statementCount() const { return statements_; }

  std::vector<CStmt> body(const Body& b);

 private:
  std::unique_ptr<CExp> exp(const ExpPtr& e);
  CStmt stmt(const Stmt& s);
  // e as messages quote it: the variables of shared values (Declare::constant, made by the
  // share pass) written out as the expressions they hold, so a message reads as the program
  // the user wrote rather than naming a t7 the user never saw.
  std::string show(const ExpPtr& e) const;
  ExpPtr expand(const ExpPtr& e) const;

  const KernelIR& k_;
  std::map<std::string, int> slots_;
  std::unordered_map<std::string, ExpPtr> shared_;  // variable -> its value, expanded
  uint32_t statements_ = 0;
};

}  // namespace obsidian::sim
