/// Program<L>: where a level-L program's statements are recorded (the C++ form of the paper's
/// Program monad: a builder passed by reference), and the per-capture Context that names things.
/// @file
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "obsidian/exp.hpp"
#include "obsidian/ir.hpp"
#include "obsidian/level.hpp"

namespace obsidian {

/// Everything one kernel capture creates: fresh names, the array table, the preconditions.
/// There is no global naming state; a Context lives for one capture.
class Context {
 public:
  /// `serial` 0 takes a new capture serial; a scratch context of the same capture passes its
  /// capture's serial (exec<L>).
  explicit Context(uint32_t threadsPerBlock, uint32_t serial = 0);
  /// The capture's serial number, unique in the process: what ties arrays and variables to it.
  uint32_t serial() const { return kernel_.capture; }
  /// A reference to array `id` of this capture.
  ArrayRef ref(ArrayId id) const { return ArrayRef{id, serial()}; }
  /// Throws Error unless `a` belongs to this capture: `what` names the statement ("write").
  void checkOwn(const ArrayRef& a, const char* what) const;

  /// A name never returned before in this context and not reserved: prefix + counter ("arr0",
  /// "i3").
  std::string fresh(const std::string& prefix);
  /// Keeps fresh from returning `name` (the kernel's parameters and outputs: a loop variable
  /// named like a scalar parameter would hide it).
  void reserve(const std::string& name) { reserved_.insert(name); }
  /// Adds an array to the kernel's table; returns its id.
  ArrayId addArray(ArrayDecl decl);
  /// The declaration of array `id`.
  const ArrayDecl& array(ArrayId id) const { return kernel_.arrays.at(id); }
  /// The real threads per block of the kernel being captured.
  uint32_t threadsPerBlock() const { return kernel_.threadsPerBlock; }

  /// A condition on dynamic lengths that must hold at launch. A condition that folds to false
  /// is a mistake known now and throws; one that folds to true is dropped.
  void require(const Exp<bool>& holds, const std::string& message);

  /// The kernel IR being built.
  KernelIR& kernel() { return kernel_; }

 private:
  KernelIR kernel_;
  std::map<std::string, uint32_t> counters_;
  std::set<std::string> reserved_;
};

namespace detail {
// The Context of the capture running on this thread, for combinators that record
// preconditions on dynamic lengths but take no Program (splitUp, coalesce, ...).
Context* currentContext();
class ContextScope {
 public:
  explicit ContextScope(Context& ctx);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  Context* previous_;
  ir::CaptureScope capture_;
};
// The error for kernel `kernel` using something (`what`: "variable n0", "an atomic uses an
// array") that capture `origin` made; names that capture's kernel while it is remembered.
Error foreignValue(const std::string& kernel, const std::string& what, uint32_t origin);
// Remembers capture `serial`'s kernel name for foreignValue's messages.
void rememberCaptureName(uint32_t serial, const std::string& name);
// Records a precondition in the current capture; outside a capture only literal conditions
// can be checked.
void requireLength(const Exp<bool>& holds, const std::string& message);
}  // namespace detail

/// A level-L program being recorded: what a combinator emits its statements through. Passed by
/// reference (the paper's Program monad); the level in its type decides which loops and
/// barriers it offers.
template <class L>
class Program {
  static_assert(HierarchyLevel<L>, "Program<L> needs L to be Thread, Warp, Block or Grid");

 public:
  using Level = L;  ///< the program's level
  /// Records into `body`, naming things through `ctx`.
  Program(Context& ctx, Body& body) : ctx_(&ctx), body_(&body) {}

  /// The capture's Context.
  Context& context() const { return *ctx_; }
  /// The statement list being recorded.
  Body& body() const { return *body_; }
  /// Appends a statement.
  void emit(Stmt s) const { body_->push_back(std::move(s)); }

  /// `n` instances of a Thread program, in parallel over the threads of this level.
  template <class F>
  void forAll(const EWord32& n, F&& f) const {
    static_assert(!level_le<L, Thread>,
                  "no parallel loop inside a Thread program: use seqFor (push<Thread> is "
                  "sequential)");
    ForAll loop{L::value, n.node(), ctx_->fresh("i"), {}};
    Program<Thread> inner(*ctx_, loop.body);
    f(inner, variable<uint32_t>(loop.var));
    emit(std::move(loop));
  }

  /// `n` instances of a program one level down, in parallel over this level (the paper's
  /// DistrPar): Warp programs over a block, Block programs over the grid.
  template <class F>
  void distrPar(const EWord32& n, F&& f) const {
    static_assert(!level_le<L, Thread>,
                  "no parallel loop inside a Thread program: use seqFor (push<Thread> is "
                  "sequential)");
    if constexpr (std::is_same_v<L, Warp>) {
      forAll(n, std::forward<F>(f));  // Thread programs over the lanes of a warp
    } else {
      using Sub = StepDown<L>;
      DistrPar loop{
          Sub::value, n.node(), ctx_->fresh(std::is_same_v<Sub, Block> ? "bid" : "wid"), {}};
      Program<Sub> inner(*ctx_, loop.body);
      f(inner, variable<uint32_t>(loop.var));
      emit(std::move(loop));
    }
  }

  /// A sequential loop; every thread of this level runs all `n` iterations.
  template <class F>
  void seqFor(const EWord32& n, F&& f) const {
    SeqFor loop{L::value, ctx_->fresh("s"), ir::u32(0), n.node(), ir::u32(1), {}};
    Program<L> inner(*ctx_, loop.body);
    f(inner, variable<uint32_t>(loop.var));
    emit(std::move(loop));
  }

  /// while (cond) body. `cond` is re-evaluated before every iteration (it reads variables
  /// the body assigns).
  template <class F>
  void seqWhile(const Exp<bool>& cond, F&& f) const {
    SeqWhile loop{L::value, cond.node(), {}};
    Program<L> inner(*ctx_, loop.body);
    f(inner);
    emit(std::move(loop));
  }

  /// if (c) then: `then` records the branch into a Program of this level.
  template <class F>
  void cond(const Exp<bool>& c, F&& then) const {
    Cond s{L::value, c.node(), {}, {}};
    Program<L> inner(*ctx_, s.then);
    then(inner);
    emit(std::move(s));
  }
  /// if (c) then else otherwise.
  template <class F, class G>
  void cond(const Exp<bool>& c, F&& then, G&& otherwise) const {
    Cond s{L::value, c.node(), {}, {}};
    Program<L> a(*ctx_, s.then);
    then(a);
    Program<L> b(*ctx_, s.otherwise);
    otherwise(b);
    emit(std::move(s));
  }

  /// A variable of each executing thread, initialised to `init`.
  template <KernelScalar T>
  Exp<T> declare(const Exp<T>& init) const {
    Declare d{ctx_->fresh("v"), scalarTypeOf<T>, init.node()};
    Exp<T> v = variable<T>(d.var);
    emit(std::move(d));
    return v;
  }
  /// var = value, for a variable made by declare (an Error for any other expression).
  template <KernelScalar T>
  void assign(const Exp<T>& var, const Exp<T>& value) const {
    if (var.node()->kind != ExpKind::Var) {
      throw Error("assign: the target must be a variable made by declare; got an expression");
    }
    emit(AssignVar{var.node()->name, value.node()});
  }

  /// Barrier of this level: __syncthreads() for a Block, __syncwarp() for a Warp.
  void sync() const {
    static_assert(level_le<L, Block>,
                  "sync is not available at Grid level: blocks cannot synchronize");
    static_assert(!level_le<L, Thread>,
                  "sync is not available in a Thread program: a barrier needs a Warp or Block");
    emit(Sync{L::value});
  }

 private:
  Context* ctx_;
  Body* body_;
};

}  // namespace obsidian
