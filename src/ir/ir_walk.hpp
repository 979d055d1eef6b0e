// Generic traversals of the IR shared by the passes: visiting and rewriting the expressions
// of statements, substituting variables, and asking which arrays a subtree touches.
#pragma once

#include <functional>
#include <set>
#include <string>

#include "obsidian/ir.hpp"

namespace obsidian::ir {

// Rebuild e bottom-up through the smart constructors; `leaf` may replace any node first
// (return null to keep it and recurse into its operands). A node reached along several paths
// is rewritten once (`leaf` sees each distinct node once), so shared nodes stay shared.
ExpPtr rewrite(const ExpPtr& e, const std::function<ExpPtr(const ExpPtr&)>& leaf);

// e with every Var `name` replaced by `value` (folded again).
ExpPtr substitute(const ExpPtr& e, const std::string& name, const ExpPtr& value);

// Every expression directly held by s (not those of nested bodies), in a fixed order.
void forEachExp(const Stmt& s, const std::function<void(const ExpPtr&)>& f);
// Rewrite every expression directly held by s.
void mapExps(Stmt& s, const std::function<ExpPtr(const ExpPtr&)>& f);
// Rewrite every expression of a body, nested bodies included.
void mapExpsDeep(Body& body, const std::function<ExpPtr(const ExpPtr&)>& f);

// The nested bodies of s (loop and branch bodies), in order.
std::vector<const Body*> childBodies(const Stmt& s);
std::vector<Body*> childBodies(Stmt& s);

// Does f hold for any node of e (pre-order, left to right)? Iterative, so any depth is fine.
bool anyNode(const ExpPtr& e, const std::function<bool(const ExpNode&)>& f);

// The depth of the deepest expression of a body or of a whole kernel (its parameters'
// lengths, preconditions and grid size included).
uint32_t maxDepth(const Body& body);
uint32_t maxDepth(const KernelIR& k);

// Arrays that s or anything nested in it reads or writes.
void arraysUsed(const Stmt& s, std::set<ArrayId>& out);
void arraysIn(const ExpPtr& e, std::set<ArrayId>& out);
// Variables an expression mentions.
void varsIn(const ExpPtr& e, std::set<std::string>& out);
bool mentionsThreadIdx(const ExpPtr& e);

// Number of statements in s's subtree, s included.
uint32_t subtreeSize(const Stmt& s);

}  // namespace obsidian::ir
