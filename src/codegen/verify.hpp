// Pass: verify. Checks a reified kernel for the mistakes C++ types cannot rule out, and for
// IR that the front end should never have built.
#pragma once

#include "obsidian/ir.hpp"

namespace obsidian {

// verify(k) throws Error, naming the kernel and the construct, when
// - a variable or shared/local array is used outside the program that binds it (a value
//   computed inside a Thread program escaped into its enclosing program);
// - a Block- or Warp-level parallel loop, or a warp distribution, has a dynamic count
//   (threads of a block are fixed when the kernel is generated);
// - a barrier sits under a thread-dependent branch or loop condition;
// - warp-level programs are used with threadsPerBlock not a multiple of 32;
// - a thread array (threadArray: a Block or Warp program's per-thread registers) is used in a
//   parallel loop that gives a thread several instances (more than threadsPerBlock threads,
//   threadsPerBlock / 32 warps or 32 lanes), which would share its registers.
// Hierarchy nesting the types guarantee (a ForAll of level L only in a level-L program) is
// asserted as an internal invariant.
void verify(const KernelIR& k);

// verifyOwnership(k) throws Error when k uses a variable, length or array made by another
// capture (a DPull or Exp kept from one capture and used in the next): those name the other
// kernel's parameters and arrays, which this kernel's ids would silently stand for. Runs first,
// before any pass looks an array up by its id.
void verifyOwnership(const KernelIR& k);

}  // namespace obsidian
