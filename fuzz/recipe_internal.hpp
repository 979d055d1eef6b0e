// What the recipe_*.cpp files share and nothing else includes: the reference's words and its
// rejection of a recipe, where a list of steps runs, the collectives' shape rules (the generator
// draws within them, the reference rejects a shrunk recipe outside them), walks over the step
// trees, the C++ printer's text helpers, and each matrix interpretation's entry point (the
// recipe_matrix_*.cpp files).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "recipe.hpp"

namespace fuzz {

using Words = std::vector<uint32_t>;

// Rejects the recipe (InvalidRecipe) where a rule does not hold.
inline void require(bool holds, const char* what) {
  if (!holds) throw InvalidRecipe(what);
}

// Where a list of steps runs: its level, the block's thread counts (both configurations'), and
// whether its input is still the kernel's input read directly (the first step of the block
// body of a splitUp grid over the untouched input: what vectorized loads need).
struct Where {
  Level level = Level::Block;
  uint32_t threads = 0, altThreads = 0;
  bool direct = false;
  Where at(Level l) const { return Where{l, threads, altThreads, false}; }
};

// ------------------------------------------------------------------ rules (recipe_rules.cpp)
bool pow2(uint32_t n);
// Whether collective step n (or a WarpVote, a ThreadItems, a BlockRadixSort, a
// BlockDiscontinuity, a BlockMergeSort) fits an array of length len where w is.
bool collectiveFits(const Where& w, const Node& n, size_t len);
// Whether BlockRadixSort step n fits a block of `threads` threads (whole warps, enough for
// its digits, a tile that holds its chunk, kSortSharedWords at most); collectiveFits asks it
// of both thread counts, the generator of the last ones drawn (a step that does not fit them
// is dropped).
bool sortFitsThreads(const Node& n, uint32_t threads);
// About the words of shared memory that one of n's sorts takes (its tile, every pass's
// counters and scan) in a block of `threads` threads.
uint32_t sortSharedWords(const Node& n, uint32_t threads);
constexpr uint32_t kSortSharedWords = 8192;
// Whether BlockDiscontinuity step n fits a block of `threads` threads (its fields, a tile that
// holds its chunk); collectiveFits asks it of both thread counts, the generator of the last
// ones drawn (a step that does not fit them is dropped).
bool adjacentFitsThreads(const Node& n, uint32_t threads);
// Whether BlockMergeSort step n fits a block of `threads` threads (its fields, a tile that
// holds its chunk, the sort's shared memory within kSortSharedWords); collectiveFits asks it
// of both thread counts, the generator of the last ones drawn (a step that does not fit them
// is dropped).
bool mergeFitsThreads(const Node& n, uint32_t threads);
// A fused part's collective as the collectives' node (its shape rules are theirs).
Node partNode(const FusedPart& f);
// Whether a block reads the input's global array directly as vectors (vectors<W>, or a
// vectorized blockLoad): then the input must stay the parameter itself.
bool directLoads(const Recipe& r);
// Whether the blocks' chunks are pieces of the input itself (splitUp, no grid-level step).
bool untouchedInput(const Recipe& r);
// Whether r's vector-store output (Recipe::store) fits the words it writes: m per block (Flat:
// the grid-level array's length). True without one.
bool storeFits(const Recipe& r, size_t m);

// ------------------------------------------------------------------ walks over the trees
// Calls f on every list of steps in the tree (ops, then each node's kids), in preorder.
inline void forEachNodeList(std::vector<Node>& ops,
                            const std::function<void(std::vector<Node>&)>& f) {
  f(ops);
  for (Node& n : ops) forEachNodeList(n.kids, f);
}
inline size_t countNodes(const std::vector<Node>& ops) {
  size_t c = 0;
  for (const Node& n : ops) c += 1 + countNodes(n.kids);
  return c;
}
inline void forEachTileList(std::vector<TileNode>& ops,
                            const std::function<void(std::vector<TileNode>&)>& f) {
  f(ops);
  for (TileNode& n : ops) forEachTileList(n.kids, f);
}
inline size_t countTileNodes(const std::vector<TileNode>& ops) {
  size_t c = 0;
  for (const TileNode& n : ops) c += 1 + countTileNodes(n.kids);
  return c;
}
inline size_t countExprNodes(const MExpr& e) {
  size_t c = 1;
  for (const MExpr& kid : e.kids) c += countExprNodes(kid);
  return c;
}
// Calls f on the expression's nodes in preorder.
inline void forEachExpr(MExpr& e, const std::function<void(MExpr&)>& f) {
  f(e);
  for (MExpr& kid : e.kids) forEachExpr(kid, f);
}
// Whether the expression reads input k.
inline bool usesInput(const MExpr& e, uint32_t k) {
  if (e.kind == MExprKind::Input) return e.input == k;
  for (const MExpr& kid : e.kids) {
    if (usesInput(kid, k)) return true;
  }
  return false;
}

// ------------------------------------------------------------------ printing (recipe_print.cpp)
// C++ source text, line by line, with fresh local names; the steps of a 1-D body.
class Printer {
 public:
  std::string out;
  uint32_t threads = 0;  // the block's threads (a collective's items per thread)

  void line(int indent, const std::string& s) { out += std::string(2 * indent, ' ') + s + "\n"; }
  std::string fresh(const char* prefix) { return prefix + std::to_string(counter_++); }

  static std::string u(uint32_t v) { return std::to_string(v) + "u"; }
  static std::string unaryLambda(uint32_t fn, uint32_t constant);
  static std::string binaryLambda(uint32_t fn);

  // Prints the steps; returns the name of the result.
  std::string steps(int ind, Level level, const std::string& p, const std::vector<Node>& ops,
                    std::string x);

  // Prints the end of block program p: its result y fused with r's parts, returned. Each part
  // is a local of its own, made in order (as build.cpp makes them).
  void fusedReturn(int ind, const Recipe& r, const std::string& p, std::string y);
  // Prints the end of a block program whose result y r's vector store writes (the forms of
  // its blocks: StoreForm::Blocks, Whole, Threads, Warps, Shared).
  void storeReturn(int ind, const Recipe& r, const std::string& y);

 private:
  std::vector<std::string> fusedParts(int ind, const Recipe& r, const std::string& L,
                                      const std::string& p, const std::string& y);
  static std::string fuseText(const Recipe& r, const std::string& first,
                              const std::vector<std::string>& parts);
  std::string step(int ind, Level level, const std::string& p, const Node& n, const std::string& x);
  void warpVote(int ind, const std::string& p, const Node& n, const std::string& x,
                const std::string& def);
  void threadItems(int ind, const std::string& L, const std::string& p, const Node& n,
                   const std::string& x, const std::string& def);
  void threadItemsScan(int ind, const std::string& p, const Node& n, const std::string& x,
                       const std::string& def);
  void blockRadixSort(int ind, const std::string& p, const Node& n, const std::string& x,
                      const std::string& def);
  void blockDiscontinuity(int ind, const std::string& p, const Node& n, const std::string& x,
                          const std::string& def);
  void blockMergeSort(int ind, const std::string& p, const Node& n, const std::string& x,
                      const std::string& def);

  int counter_ = 0;
};

// ------------------------------------------------------------------ matrices
// The oracle of a matrix recipe (recipe_matrix_reference.cpp): reference() for r.matrix.
std::vector<Words> matrixReference(const Recipe& r, const Words& in);
// A matrix recipe of the data seed, every choice from the matrix stream rng
// (recipe_matrix_generate.cpp).
Recipe generateMatrix(uint64_t dataSeed, std::mt19937_64& rng);
// cppSource for r.matrix (recipe_matrix_print.cpp).
std::string matrixSource(const Recipe& r, uint32_t threads, const std::string& function);
// recipeSize and shrinkCandidates for r.matrix (recipe_matrix_shrink.cpp).
size_t matrixSize(const Recipe& r);
std::vector<Recipe> matrixShrinkCandidates(const Recipe& r);

}  // namespace fuzz
