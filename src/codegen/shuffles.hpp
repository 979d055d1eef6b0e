// Pass: materialize shuffles.
#pragma once

#include "obsidian/ir.hpp"

namespace obsidian {

// Every read of another lane's element of a register array (forceReg) becomes a variable
// declared just before the statement that reads it, so that its __shfl_sync is a statement of
// its own that the whole warp executes: a shuffle inside a conditional expression, or in a
// branch only some lanes take, is undefined on the GPU. A read whose index is the same for every
// lane (a broadcast such as r[0u], typically the warp's result written by one lane) moves in
// front of the Warp-level statement around it, where every lane runs it; so does a warp vote
// (ballot, any, all, match_any over a register array: each lane contributes its own element).
// verify then checks that each shuffle and vote is reached by the whole warp.
void materializeShuffles(KernelIR& k);

// Is e a read of another lane's element of a register array (a shuffle), or a vote over all
// of them, given the index variable of the enclosing warp-wide parallel loop (empty outside
// one)?
bool isShuffle(const KernelIR& k, const ExpPtr& e, const std::string& laneVar);

}  // namespace obsidian
