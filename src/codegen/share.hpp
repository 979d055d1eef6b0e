// Pass: share subexpressions.
#pragma once

#include "obsidian/ir.hpp"

namespace obsidian {

// Common subexpressions become variables. A pull array rebuilds its element's expression at
// every use, so a value used twice (a bitonic stage's min and max of the same two elements,
// Black-Scholes' d1) was printed, compiled and computed twice, and nested uses multiplied the
// text NVRTC had to compile. Expressions are numbered by structure (hash-consing: equal
// subtrees get one number whichever nodes hold them), and each statement's subexpression that
// is used again, by the statement itself or by the statements after it before anything could
// change its value, is computed once into `const T tN = ...;` declared just before the
// statement; every later use reads the variable. A branch's own statements count as uses
// after its condition for values that read memory or cost much (a histogram's sample, tested
// for being counted and then binned inside the branch, is loaded once).
//
// - Only values the statement evaluates on every path move in front of it (a value used on
//   both sides of a select counts; one only under a condition, or on the right of && and ||,
//   stays in place), so no read or division happens that the program would not make.
// - A value stays available until a statement (or anything nested in it) writes an array it
//   reads, assigns a variable it mentions, or, for arrays other threads may write (shared,
//   writable global, grid state), passes a barrier, fence or atomic. Read-only inputs stay
//   available across barriers; cheap values (no memory read, no division or math function)
//   do not: held through a barrier they cost a register where pressure is highest, and
//   computing them again costs a few instructions (measured: a transpose with its index
//   arithmetic held through its barrier was 6% slower on the H100).
// - Cheap values (a leaf, one operation on leaves) are not bound unless share() marked them:
//   binding them would make the CUDA longer, not the kernel faster.
// - Values marked by share() are bound even when used once, under the name they were given
//   (made unique with a suffix when the kernel already uses it).
//
// Runs after virtualize, on the kernel the simulator runs and the CUDA is printed from, so
// the simulator checks exactly what the GPU executes.
void shareSubexpressions(KernelIR& k);

}  // namespace obsidian
