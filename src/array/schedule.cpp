// Whole-array programs, the planner: from the outputs' graph to passes (kernels to be), by rules.
//  1. dims: the extents the operations tie together (zipWith: one length; gemv: x's length is
//     the matrix's cols), found by union-find;
//  2. storage: outputs and reductions are stored; a value read by other elements than its own
//     (gather's source, a replicated vector) is stored unless recomputing it reads no more than
//     one array; every other value is inlined into its consumers (maps are never stored);
//  3. levels: a value is computed at the first level where everything it reads is there: a
//     reduction's result one level after its input (its kernel must end: the global barrier), a
//     stored value read at other indices one level after it is stored, and the same level for
//     a consumer at the same index (the same pass computes both);
//  4. passes: one per (space, level): the values stored there and the reductions folded there
//     (siblings in one pass; a reduction's partials in the pass that makes its input);
//  5. epilogues: a vector pass that only maps row reductions (and values of earlier levels)
//     runs in the row pass's epilogue, on the row's result in registers (SGEMV's
//     alpha A x + beta y in one kernel); a scalar pass that only maps whole reductions runs in
//     the last block of the vector pass that folds them (RMSE's root of the mean in one kernel).
// With PlanOptions::fuse false every operation is stored by a pass of its own.
#include <algorithm>
#include <cassert>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "array/plan_data.hpp"
#include "ir/identifiers.hpp"
#include "obsidian/kernel.hpp"

namespace obsidian::array::detail {

namespace {

// How a consumer reads an operand: at its own index, at others (a gather's source, a replicated
// vector), whole (a scalar), or each element once but in another space than the consumer's
// (a segmented reduction's input: fused like an elementwise read, ordered like a random one).
enum class Access : uint8_t { Elementwise, Random, Whole, Segment };

// How consumer n reads its operand k.
Access accessOf(const Node& n, size_t k) {
  const Node& a = *n.args[k];
  if (a.shape == Shape::Scalar) return Access::Whole;
  switch (n.op) {
    case OpKind::Gather: return k == 0 ? Access::Random : Access::Elementwise;
    case OpKind::SegReduce: return k == 0 ? Access::Segment : Access::Random;
    case OpKind::Slice:
    case OpKind::Shift: return Access::Random;
    case OpKind::Scan:
    case OpKind::Sort:
    case OpKind::Call: return Access::Segment;
    case OpKind::Permute: return k == 0 ? Access::Elementwise : Access::Segment;
    case OpKind::Contract: return k == 0 ? Access::Elementwise : Access::Whole;
    case OpKind::Iota:
    case OpKind::Extent: return Access::Whole;  // (only its extent is read)
    case OpKind::ReplicateRows:
    case OpKind::ReplicateCols:
    case OpKind::Transpose:
    case OpKind::RowOf:
    case OpKind::ColumnOf:
    case OpKind::Diagonal:
    case OpKind::Element:
    case OpKind::MatMul:
    case OpKind::Reshape:
    case OpKind::Flatten: return Access::Random;
    default: return Access::Elementwise;
  }
}

bool isReduction(OpKind k) {
  return k == OpKind::Reduce || k == OpKind::RowReduce || k == OpKind::ColReduce ||
         k == OpKind::SegReduce;
}
// A reduction a warp finishes per row (or segment): its result is complete in the pass.
bool isRowLike(OpKind k) { return k == OpKind::RowReduce || k == OpKind::SegReduce; }
// A value whose readers must wait for its whole pass: a reduction or a scan.
bool isBoundary(OpKind k) {
  return isReduction(k) || k == OpKind::Scan || k == OpKind::Permute || k == OpKind::Sort ||
         k == OpKind::Call;
}
// A value whose kernels are not the planner's (the device sort, the user's kernel): they read
// their operands as arrays, so those are stored.
bool opaque(OpKind k) { return k == OpKind::Sort || k == OpKind::Call; }
// A value that is only a way of reading another (never worth storing by itself).
bool isView(OpKind k) {
  return k == OpKind::ReplicateRows || k == OpKind::ReplicateCols || k == OpKind::Transpose ||
         k == OpKind::Slice || k == OpKind::Shift || k == OpKind::Contract || k == OpKind::Iota ||
         k == OpKind::RowOf || k == OpKind::ColumnOf || k == OpKind::Diagonal ||
         k == OpKind::Reshape || k == OpKind::Flatten;
}

// Where a pass is made: passes() makes one pass a site (planned unfused: one an operation).
struct Site {
  Layout layout;
  int dimA, dimB, level;
  auto operator<=>(const Site&) const = default;
};

struct UnionFind {
  std::vector<int> parent;
  int add() {
    parent.push_back(static_cast<int>(parent.size()));
    return parent.back();
  }
  int find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(int a, int b) {
    assert(a >= 0 && b >= 0 && "array::Plan: a dim of a node that has none");
    parent[find(a)] = find(b);
  }
};

class Planner {
 public:
  Planner(const std::vector<Output>& outputs, const PlanOptions& options)
      : plan_(std::make_shared<PlanData>()) {
    plan_->options = options;
    collect(outputs);
    dims();
    storage();
    levels();
    if (options.fuse && storeShared()) levels();
    passes();
    if (options.fuse) epilogues();
    order();
    buffers();
  }
  std::shared_ptr<PlanData> result() { return plan_; }

 private:
  // ---------------------------------------------------------------- the graph, operands first
  void collect(const std::vector<Output>& outputs) {
    if (outputs.empty()) throw Error("array::Plan: a program needs at least one output");
    std::map<const Node*, int> ids;
    std::function<int(const NodePtr&)> visit = [&](const NodePtr& n) -> int {
      if (!n) throw Error("array::Plan: an output is an empty value");
      if (const auto it = ids.find(n.get()); it != ids.end()) return it->second;
      std::vector<int> args;
      for (const NodePtr& a : n->args) args.push_back(visit(a));
      const int id = static_cast<int>(plan_->nodes.size());
      ids[n.get()] = id;
      NodeInfo info;
      info.node = n;
      info.args = std::move(args);
      plan_->nodes.push_back(std::move(info));
      return id;
    };
    std::set<std::string> names;
    for (const Output& o : outputs) {
      if (!ir::isIdentifier(o.name)) {
        throw Error("array::Plan: output '" + o.name +
                    "': a name must be a C identifier (letters, digits, _)");
      }
      if (const auto why = ir::reservedIdentifierReason(o.name)) {
        throw Error("array::Plan: output '" + o.name + "': the name is " + *why +
                    "; choose another name");
      }
      if (!names.insert(o.name).second) {
        throw Error("array::Plan: two outputs are named '" + o.name + "'");
      }
      const int id = visit(o.node);
      NodeInfo& n = plan_->nodes[id];
      if (!n.output.empty()) {
        throw Error("array::Plan: outputs '" + n.output + "' and '" + o.name +
                    "' are one value; compute it once and copy it, or make them differ");
      }
      if (n.node->op == OpKind::Constant) {
        throw Error("array::Plan: output '" + o.name + "' is a constant");
      }
      n.output = o.name;
      plan_->outputs.emplace_back(o.name, id);
    }
    // Contracts: their checks are computed as if they were outputs (run() reads them).
    for (size_t id = 0; id < plan_->nodes.size(); ++id) {
      const NodeInfo& n = plan_->nodes[id];
      if (n.node->op == OpKind::Contract) plan_->checks.emplace_back(int(id), n.args[1]);
    }
    // The nodes whose elements are read: the outputs, the checks and what they read. len, rows,
    // cols and indices read only their operand's extents: an operand read nowhere else gets no
    // pass (a row pass of len(rowReduce(f, m)) alone would compute and write nothing).
    needed_.assign(plan_->nodes.size(), false);
    for (const auto& [name, id] : plan_->outputs) needed_[id] = true;
    for (const auto& [contract, check] : plan_->checks) needed_[check] = true;
    for (size_t id = plan_->nodes.size(); id-- > 0;) {  // (readers after their operands)
      const OpKind op = plan_->nodes[id].node->op;
      if (!needed_[id] || op == OpKind::Extent || op == OpKind::Iota) continue;
      for (int a : plan_->nodes[id].args) needed_[a] = true;
    }
    // Inputs: one shape and type per name.
    std::map<std::string, const Node*> inputs;
    for (const NodeInfo& n : plan_->nodes) {
      if (n.node->op != OpKind::Input) continue;
      const auto [it, fresh] = inputs.emplace(n.node->name, n.node.get());
      if (!fresh && (it->second->shape != n.node->shape || it->second->type != n.node->type)) {
        throw Error("array::Plan: input '" + n.node->name +
                    "' is used with two shapes or element types");
      }
      if (names.count(n.node->name)) {
        throw Error("array::Plan: '" + n.node->name + "' names both an input and an output");
      }
    }
  }

  // ---------------------------------------------------------------- 1. dims
  void dims() {
    UnionFind uf;
    std::map<std::string, std::pair<int, int>> inputSlots;  // one extent per input name
    std::vector<std::pair<int, DimSource>> sources;
    std::map<int, int> segmentInputs;  // offsets node -> a segmented input's slot
    for (NodeInfo& n : plan_->nodes) {
      const Node& node = *n.node;
      if (node.shape == Shape::Vector) n.slot0 = uf.add();
      if (node.shape == Shape::Matrix) {
        n.slot0 = uf.add();
        n.slot1 = uf.add();
      }
      const auto arg = [&](size_t k) -> const NodeInfo& { return plan_->nodes[n.args[k]]; };
      switch (node.op) {
        case OpKind::Input: {
          const auto [it, fresh] = inputSlots.emplace(node.name, std::pair{n.slot0, n.slot1});
          if (!fresh) {
            if (n.slot0 >= 0) uf.unite(n.slot0, it->second.first);
            if (n.slot1 >= 0) uf.unite(n.slot1, it->second.second);
          } else if (node.shape == Shape::Vector) {
            sources.push_back({n.slot0, {DimSource::Kind::Length, node.name, 0}});
          } else if (node.shape == Shape::Matrix) {
            sources.push_back({n.slot0, {DimSource::Kind::Rows, node.name, 0}});
            sources.push_back({n.slot1, {DimSource::Kind::Cols, node.name, 0}});
          }
          break;
        }
        case OpKind::Map:
          for (size_t k = 0; k < n.args.size(); ++k) {
            if (arg(k).slot0 >= 0) uf.unite(arg(k).slot0, n.slot0);
            if (arg(k).slot1 >= 0) uf.unite(arg(k).slot1, n.slot1);
          }
          break;
        case OpKind::Generate:
          sources.push_back({n.slot0, {DimSource::Kind::Static, "", node.length}});
          break;
        case OpKind::Gather: uf.unite(arg(1).slot0, n.slot0); break;
        case OpKind::ReplicateRows: uf.unite(arg(0).slot0, n.slot1); break;
        case OpKind::ReplicateCols: uf.unite(arg(0).slot0, n.slot0); break;
        case OpKind::Transpose:
          uf.unite(arg(0).slot0, n.slot1);
          uf.unite(arg(0).slot1, n.slot0);
          break;
        case OpKind::RowOf: uf.unite(arg(0).slot1, n.slot0); break;
        case OpKind::ColumnOf: uf.unite(arg(0).slot0, n.slot0); break;
        case OpKind::Diagonal:  // (square: rows and cols tied)
          uf.unite(arg(0).slot0, n.slot0);
          uf.unite(arg(0).slot1, n.slot0);
          break;
        case OpKind::MatMul:
          uf.unite(arg(0).slot0, n.slot0);
          uf.unite(arg(1).slot1, n.slot1);
          uf.unite(arg(0).slot1, arg(1).slot0);
          break;
        case OpKind::RowReduce: uf.unite(arg(0).slot0, n.slot0); break;
        case OpKind::ColReduce: uf.unite(arg(0).slot1, n.slot0); break;
        case OpKind::SegReduce: {
          sources.push_back({n.slot0, {DimSource::Kind::Minus, "", 1, arg(1).slot0}});
          // The inputs of segmented reductions over one offsets array have one length.
          const auto [it, fresh] = segmentInputs.emplace(n.args[1], arg(0).slot0);
          if (!fresh) uf.unite(it->second, arg(0).slot0);
          break;
        }
        case OpKind::Slice:
          // A slice that drops nothing has its operand's length: as a Minus of 0 it could close
          // a cycle of lengths that agree (slice(slice(v, 0, 0), 0, 0) + v), refused below.
          if (node.a + node.b == 0) {
            uf.unite(arg(0).slot0, n.slot0);
          } else {
            sources.push_back(
                {n.slot0, {DimSource::Kind::Minus, "", uint64_t(node.a + node.b), arg(0).slot0}});
          }
          break;
        case OpKind::Permute:
          uf.unite(arg(0).slot0, n.slot0);
          uf.unite(arg(1).slot0, arg(2).slot0);
          break;
        case OpKind::Reshape:  // cols fixed; rows len(v) / cols
          sources.push_back({n.slot1, {DimSource::Kind::Static, "", uint64_t(node.a)}});
          sources.push_back(
              {n.slot0, {DimSource::Kind::Quotient, "", uint64_t(node.a), arg(0).slot0}});
          break;
        case OpKind::Flatten:
          sources.push_back(
              {n.slot0, {DimSource::Kind::Product, "", 0, arg(0).slot0, arg(0).slot1}});
          break;
        case OpKind::Call:  // elementwise: the vector operands' length; else `length`
          if (node.a) {
            for (int a : n.args) {
              if (plan_->nodes[a].slot0 >= 0) uf.unite(plan_->nodes[a].slot0, n.slot0);
            }
          } else {
            sources.push_back({n.slot0, {DimSource::Kind::Static, "", node.length}});
          }
          break;
        case OpKind::Sort:  // (keys and values: one length)
          for (int a : n.args) uf.unite(plan_->nodes[a].slot0, n.slot0);
          break;
        case OpKind::Contract:
        case OpKind::Iota:
        case OpKind::Shift:
        case OpKind::Scan:
          // (a segmented scan's heads: one per element)
          if (node.op == OpKind::Scan && n.args.size() > 1) uf.unite(arg(1).slot0, n.slot0);
          if (n.slot0 >= 0) uf.unite(arg(0).slot0, n.slot0);  // (a scalar's contract: none)
          if (n.slot1 >= 0) uf.unite(arg(0).slot1, n.slot1);
          break;
        case OpKind::Constant:
        case OpKind::Reduce:
        case OpKind::Element:
        case OpKind::Extent: break;
      }
    }
    // Dims are the classes' representatives, numbered.
    std::map<int, int> number;
    const auto dimOf = [&](int slot) {
      const int root = uf.find(slot);
      const auto [it, fresh] = number.emplace(root, static_cast<int>(number.size()));
      if (fresh) plan_->dims.emplace_back();
      return it->second;
    };
    for (NodeInfo& n : plan_->nodes) {
      if (n.slot0 >= 0) n.slot0 = dimOf(n.slot0);
      if (n.slot1 >= 0) n.slot1 = dimOf(n.slot1);
    }
    for (auto [slot, source] : sources) {
      if (source.dim >= 0) source.dim = dimOf(source.dim);
      if (source.dim2 >= 0) source.dim2 = dimOf(source.dim2);
      const int d = dimOf(slot);
      plan_->dims[d].sources.push_back(source);
    }
    // A length defined from others (a slice's, a reshape's rows, a flatten's) must not come
    // back to itself: zipWith(f, slice(v, 1, 0), v) asks len(v) - 1 == len(v).
    std::vector<int> state(plan_->dims.size(), 0);  // 0 new, 1 on the path, 2 done
    std::function<void(int)> visit = [&](int d) {
      if (state[d] == 2) return;
      if (state[d] == 1) {
        throw Error(
            "array::Plan: a slice (or a segmentedReduce's segments, a reshape's rows or a "
            "flatten's length) is tied to a length it is made from: its length is that length "
            "less the slice's ends (over the cols; times the other extent), so they cannot "
            "agree (zip it with another slice of the same size instead)");
      }
      state[d] = 1;
      for (const DimSource& s : plan_->dims[d].sources) {
        for (int f : s.from()) visit(f);
      }
      state[d] = 2;
    };
    for (size_t d = 0; d < plan_->dims.size(); ++d) visit(static_cast<int>(d));
    for (size_t d = 0; d < plan_->dims.size(); ++d) {
      if (plan_->dims[d].sources.empty()) {
        throw Error(
            "array::Plan: an extent of the program comes from no input: a replicated vector "
            "(replicateRows, replicateCols, outer) must be zipped with a matrix whose rows or cols "
            "it takes");
      }
    }
  }

  // ---------------------------------------------------------------- 2. storage
  // The arrays an inlined value reads (stored values and inputs that are not scalars), and
  // whether one of them is a column reduction's partials.
  void leavesOf(int id, std::set<int>& leaves, bool& partials) {
    std::set<int> seen;
    leavesOf(id, leaves, partials, seen);
  }
  void leavesOf(int id, std::set<int>& leaves, bool& partials, std::set<int>& seen) {
    if (!seen.insert(id).second) return;  // (a shared operand once: graphs share a lot)
    const NodeInfo& n = plan_->nodes[id];
    if (n.node->shape == Shape::Scalar) return;
    if (n.node->op == OpKind::Input || n.storage != Storage::Inline) {
      leaves.insert(id);
      partials = partials || n.storage == Storage::Partials;
      return;
    }
    for (int a : n.args) leavesOf(a, leaves, partials, seen);
  }

  // Whether node id is read at other indices than its own: directly (a gather's source, a
  // replicate, a scan or segmented reduction), or through values inlined into such a read.
  bool readElsewhere(int id, std::set<int>& seen) {
    if (!seen.insert(id).second) return false;
    for (const auto& [reader, access] : readers_[id]) {
      if (access == Access::Random || access == Access::Segment) return true;
      const NodeInfo& r = plan_->nodes[reader];
      const OpKind op = r.node->op;
      const bool inlined = !isBoundary(op) && r.output.empty() && op != OpKind::Input &&
                           (r.storage == Storage::Inline || isView(op));
      if (access == Access::Elementwise && inlined && readElsewhere(reader, seen)) return true;
    }
    return false;
  }

  void storage() {
    const bool fuse = plan_->options.fuse;
    readers_.assign(plan_->nodes.size(), {});
    for (size_t id = 0; id < plan_->nodes.size(); ++id) {
      for (size_t k = 0; k < plan_->nodes[id].args.size(); ++k) {
        readers_[plan_->nodes[id].args[k]].push_back(
            {static_cast<int>(id), accessOf(*plan_->nodes[id].node, k)});
      }
    }
    for (size_t id = 0; id < plan_->nodes.size(); ++id) {
      NodeInfo& n = plan_->nodes[id];
      const OpKind op = n.node->op;
      if (op == OpKind::Input || op == OpKind::Constant) continue;
      if (op == OpKind::ColReduce) {
        n.storage = Storage::Partials;
        std::set<int> seen;
        n.finish = readElsewhere(static_cast<int>(id), seen);  // folded once, into a buffer
        continue;
      }
      bool check = false, opaqueRead = false;
      for (const auto& [contract, c] : plan_->checks) check |= c == int(id);
      // (a sort's kernels read their keys and values as arrays, in every digit's pass; the
      // user's kernel reads arrays)
      for (const auto& [reader, access] : readers_[id]) {
        opaqueRead |= opaque(plan_->nodes[reader].node->op) && n.node->shape != Shape::Scalar;
      }
      // (a product's element is a loop over a row and a column: never recomputed)
      if (isBoundary(op) || !n.output.empty() || check || opaqueRead || op == OpKind::MatMul) {
        n.storage = Storage::Full;
        continue;
      }
      if (n.node->shape == Shape::Scalar || isView(op)) continue;  // recomputed: cheap
      if (!fuse) {
        n.storage = Storage::Full;
        continue;
      }
      bool random = false, scanned = false;
      for (const auto& [reader, access] : readers_[id]) {
        random |= access == Access::Random;
        scanned |= plan_->nodes[reader].node->op == OpKind::Scan;
      }
      if (!random && !scanned) continue;
      std::set<int> leaves;
      bool partials = false;
      for (int a : n.args) leavesOf(a, leaves, partials);
      // Recomputed at other indices only if that reads no more arrays than the stored value
      // would; a scan loads its input in no thread program, so no partials are folded there.
      if (partials) {
        n.storage = Storage::Full;
      } else if (random && !choose("recompute " + describe(*plan_, static_cast<int>(id)) +
                                       " where it is read at other indices",
                                   leaves.size() <= 1)) {
        n.storage = Storage::Full;
      }
    }
  }

  // ---------------------------------------------------------------- 3. levels
  // The level at which consumer access `access` can read node a.
  int avail(int a, Access access) const {
    const NodeInfo& n = plan_->nodes[a];
    const OpKind op = n.node->op;
    if (op == OpKind::Input || op == OpKind::Constant) return 0;
    if (n.storage == Storage::Inline) {
      // read at other indices, an inlined value reads its operands there too
      return access == Access::Random || access == Access::Segment ? n.randomLevel : n.level;
    }
    if (isBoundary(op)) {
      const bool elsewhere = access == Access::Random || access == Access::Segment;
      return n.level + ((op == OpKind::ColReduce && elsewhere) ? 2 : 1);
    }
    if (access == Access::Elementwise && plan_->options.fuse) return n.level;
    return n.level + 1;  // (Random, Segment: every element written before any is read)
  }
  void levels() {
    for (size_t id = 0; id < plan_->nodes.size(); ++id) {
      NodeInfo& n = plan_->nodes[id];
      int level = 0;
      // (a contract is its value: its check is read after the run, by no pass)
      const size_t read = n.node->op == OpKind::Contract ? 1 : n.args.size();
      for (size_t k = 0; k < read; ++k) {
        level = std::max(level, avail(n.args[k], accessOf(*n.node, k)));
      }
      if (n.node->op == OpKind::Permute) {
        // The defaults are copied in one pass, the values combined in a later one.
        n.initLevel = avail(n.args[0], Access::Elementwise);
        level = std::max(level, n.initLevel + 1);
      }
      n.level = level;
      int random = level;
      for (size_t k = 0; k < read; ++k) {
        const Access a = accessOf(*n.node, k);
        random = std::max(random, avail(n.args[k], a == Access::Whole ? a : Access::Random));
      }
      n.randomLevel = random;
    }
  }

  // An inlined value is computed in every pass that reads it: where those are two passes or
  // more and it reads two arrays or more, it is stored once instead (one write and one read
  // where it was recomputed from its arrays in each).
  bool storeShared() {
    const size_t count = plan_->nodes.size();
    // The passes that compute each inlined value, by their sites.
    std::vector<std::set<Site>> at(count);
    for (size_t i = count; i-- > 0;) {
      const NodeInfo& r = plan_->nodes[i];
      const bool inlined = r.storage == Storage::Inline && r.node->op != OpKind::Input &&
                           r.node->op != OpKind::Constant;
      for (size_t k = 0; k < r.args.size(); ++k) {
        if (inlined) {
          at[r.args[k]].insert(at[i].begin(), at[i].end());
        } else {
          at[r.args[k]].insert(r.node->op == OpKind::Permute && k == 0 ? initSite(int(i))
                                                                       : siteOf(int(i)));
        }
      }
    }
    bool changed = false;
    for (size_t id = 0; id < count; ++id) {
      NodeInfo& n = plan_->nodes[id];
      const OpKind op = n.node->op;
      if (n.storage != Storage::Inline || n.node->shape == Shape::Scalar || isView(op) ||
          op == OpKind::Input || op == OpKind::Constant || at[id].size() < 2) {
        continue;
      }
      std::set<int> leaves;
      bool partials = false;
      for (int a : n.args) leavesOf(a, leaves, partials);
      if (choose("store " + describe(*plan_, int(id)) + ", computed in several kernels",
                 leaves.size() >= 2)) {
        n.storage = Storage::Full;
        changed = true;
      }
    }
    return changed;
  }

  // ---------------------------------------------------------------- 4. passes
  // The pass that computes stored value `id`: its layout, dims and level (passFor's key).
  Site siteOf(int id) const {
    const NodeInfo& n = plan_->nodes[id];
    const OpKind op = n.node->op;
    const auto at = [&](Layout layout, int dimA, int dimB) {
      return Site{layout, dimA, dimB, n.level};
    };
    switch (op) {
      case OpKind::Reduce: return at(Layout::Vector, plan_->nodes[n.args[0]].slot0, -1);
      case OpKind::Permute: return at(Layout::Vector, plan_->nodes[n.args[2]].slot0, -1);
      case OpKind::Scan: return at(Layout::Scan, n.slot0, id);  // a kernel of its own
      case OpKind::Sort: return at(Layout::Sort, n.slot0, id);  // kernels of their own
      case OpKind::Call: return at(Layout::Call, n.slot0, id);
      // A warp per segment: a row pass over the segments, one per offsets array.
      case OpKind::SegReduce: return at(Layout::RowWarp, n.slot0, n.args[1]);
      case OpKind::RowReduce:
      case OpKind::ColReduce: {
        const NodeInfo& in = plan_->nodes[n.args[0]];
        return at(Layout::Matrix, in.slot0, in.slot1);
      }
      default: break;
    }
    if (n.node->shape == Shape::Scalar) return at(Layout::Scalar, -1, -1);
    if (n.node->shape == Shape::Vector) return at(Layout::Vector, n.slot0, -1);
    return at(Layout::Matrix, n.slot0, n.slot1);
  }
  // The pass that fills a scatter's defaults before it scatters.
  Site initSite(int id) const {
    const NodeInfo& n = plan_->nodes[id];
    return Site{Layout::Vector, n.slot0, -1, n.initLevel};
  }
  int passAt(const Site& s, int node) { return passFor(s.layout, s.dimA, s.dimB, s.level, node); }
  int passFor(Layout layout, int dimA, int dimB, int level, int node) {
    // Unfused: a pass per operation.
    const auto key =
        std::make_tuple(int(layout), dimA, dimB, level, plan_->options.fuse ? -1 : node);
    if (const auto it = passOf_.find(key); it != passOf_.end()) return it->second;
    Pass p;
    p.layout = layout;
    p.level = level;
    p.dimA = dimA;
    p.dimB = dimB;
    plan_->passes.push_back(std::move(p));
    return passOf_[key] = static_cast<int>(plan_->passes.size()) - 1;
  }
  void passes() {
    for (size_t i = 0; i < plan_->nodes.size(); ++i) {
      const int id = static_cast<int>(i);
      NodeInfo& n = plan_->nodes[id];
      const OpKind op = n.node->op;
      if (!needed_[id]) continue;
      if (n.storage == Storage::Inline && !(op == OpKind::Input && !n.output.empty())) continue;
      if (op == OpKind::Permute) plan_->passes[passAt(initSite(id), id)].inits.push_back(id);
      n.producer = passAt(siteOf(id), id);
      Pass& p = plan_->passes[n.producer];
      if (op == OpKind::Reduce || op == OpKind::RowReduce || op == OpKind::ColReduce) {
        p.reductions.push_back(id);
      } else if (op == OpKind::Permute) {
        p.scatters.push_back(id);
      } else if (op == OpKind::SegReduce) {
        p.offsets = n.args[1];
        p.reductions.push_back(id);
      } else {
        p.stores.push_back(id);
      }
      // (their site's dimB is a node, keying their own pass: not an extent)
      if (op == OpKind::Scan || op == OpKind::SegReduce || opaque(op)) p.dimB = -1;
      if (opaque(op)) {
        p.boundary = op == OpKind::Sort
                         ? "a sort: its kernels (a digit histogram, then a pass a digit) read and "
                           "write whole arrays"
                         : "the user's kernel " + n.node->kernel->name() +
                               ": it reads and writes whole arrays";
      }
      if ((op == OpKind::RowReduce || op == OpKind::ColReduce) &&
          (n.finish || (op == OpKind::ColReduce && !n.output.empty()))) {
        // Folded into a Full buffer by a vector pass of the next level.
        n.finish = true;
        n.finisher = passFor(Layout::Vector, n.slot0, -1, n.level + 1, id);
        plan_->passes[n.finisher].finishes.push_back(id);
      }
      if (op == OpKind::Input) n.storage = Storage::Full;  // an output that is an input: copied
    }
    // Matrix passes by what they reduce: rows (a warp per row) or columns (bands of rows); a
    // pass with both is split in two (each reads the matrix).
    const size_t count = plan_->passes.size();
    for (size_t p = 0; p < count; ++p) {
      if (plan_->passes[p].layout != Layout::Matrix) continue;
      std::vector<int> rows, cols;
      for (int r : plan_->passes[p].reductions) {
        (plan_->nodes[r].node->op == OpKind::RowReduce ? rows : cols).push_back(r);
      }
      if (rows.empty() && cols.empty()) continue;
      if (!rows.empty() && !cols.empty()) {
        // One read for both (a Tile pass) unless a row reduction is read at other rows than
        // its own (it would need its partials folded a level earlier than planned).
        bool tile = plan_->options.fuse;
        for (int r : rows) {
          std::set<int> seen;
          tile = tile && !readElsewhere(r, seen);  // (its partials would be finished too late)
        }
        if (tile) {
          tile = choose("read the matrix of " + describe(*plan_, rows.front()) + " and " +
                            describe(*plan_, cols.front()) + " once (a tile pass)",
                        true);
        }
        if (tile) {
          plan_->passes[p].layout = Layout::Tile;
          for (int r : rows) {
            NodeInfo& n = plan_->nodes[r];
            n.storage = Storage::Partials;
            if (!n.output.empty()) {
              n.finish = true;
              n.finisher = passFor(Layout::Vector, n.slot0, -1, n.level + 1, r);
              plan_->passes[n.finisher].finishes.push_back(r);
            }
          }
          continue;
        }
        Pass split = plan_->passes[p];
        split.layout = Layout::ColumnBand;
        split.stores.clear();  // the matrix's stores stay with the row pass
        split.reductions = cols;
        plan_->passes[p].layout = Layout::RowWarp;
        plan_->passes[p].reductions = rows;
        plan_->passes.push_back(std::move(split));
        for (int c : cols) plan_->nodes[c].producer = static_cast<int>(plan_->passes.size()) - 1;
        plan_->passes[p].boundary = "a row reduction and a column reduction of one matrix";
        continue;
      }
      plan_->passes[p].layout = rows.empty() ? Layout::ColumnBand : Layout::RowWarp;
    }
  }

  // ---------------------------------------------------------------- 5. epilogues
  // Whether every array pass p reads is there before level `level`, or is a row reduction of
  // pass q (read at its own row).
  // `random`: read at other rows than the epilogue's own (through a gather): a row reduction
  // of q is then not there yet (other warps write it).
  bool readsOnly(int id, int p, int q, int level, std::set<std::pair<int, bool>>& seen,
                 bool random = false) const {
    if (!seen.insert({id, random}).second) return true;
    const NodeInfo& n = plan_->nodes[id];
    const OpKind op = n.node->op;
    if (op == OpKind::Input || op == OpKind::Constant) return true;
    // (a row pass's results in its lanes' registers; a vector pass's whole reductions in its
    // last block)
    const Layout host = plan_->passes[q].layout;
    if (n.producer == q && ((host == Layout::RowWarp && isRowLike(op)) ||
                            (host == Layout::Vector && op == OpKind::Reduce))) {
      return !random;
    }
    if (n.producer >= 0 && n.producer != p) {
      // (read elsewhere, a column reduction's folded buffer must be there too)
      return plan_->passes[n.producer].level < level &&
             (!random || n.finisher < 0 || plan_->passes[n.finisher].level < level);
    }
    if (n.finisher >= 0) return false;
    for (size_t k = 0; k < n.args.size(); ++k) {
      const Access a = accessOf(*n.node, k);
      const bool r = random || a == Access::Random || a == Access::Segment;
      if (!readsOnly(n.args[k], p, q, level, seen, r)) return false;
    }
    return true;
  }
  void epilogues() {
    for (size_t q = 0; q < plan_->passes.size(); ++q) {
      Pass& rowPass = plan_->passes[q];
      // A vector pass's whole reductions are folded by its last block, which can go on to the
      // scalars made of them.
      const bool whole =
          rowPass.layout == Layout::Vector && !rowPass.reductions.empty() &&
          std::all_of(rowPass.reductions.begin(), rowPass.reductions.end(),
                      [&](int r) { return plan_->nodes[r].node->op == OpKind::Reduce; });
      if (rowPass.layout != Layout::RowWarp && !whole) continue;
      const Layout consumer = whole ? Layout::Scalar : Layout::Vector;
      for (size_t p = 0; p < plan_->passes.size(); ++p) {
        Pass& v = plan_->passes[p];
        if (v.layout != consumer || (!whole && v.dimA != rowPass.dimA) ||
            v.level != rowPass.level + 1 || !v.reductions.empty() || !v.finishes.empty() ||
            !v.inits.empty() || !v.scatters.empty() || v.stores.empty()) {
          continue;
        }
        bool ok = true;
        std::set<std::pair<int, bool>> seen;
        for (int s : v.stores) {
          const NodeInfo& store = plan_->nodes[s];
          for (size_t k = 0; k < store.args.size(); ++k) {
            const Access a = accessOf(*store.node, k);
            ok = ok && readsOnly(store.args[k], static_cast<int>(p), static_cast<int>(q),
                                 rowPass.level, seen, a == Access::Random || a == Access::Segment);
          }
        }
        if (!ok || !choose("compute " + describe(*plan_, v.stores.front()) +
                               (whole ? " in the last block of the vector pass of "
                                      : " in the epilogue of the row pass of ") +
                               describe(*plan_, rowPass.reductions.front()),
                           true)) {
          continue;
        }
        for (int s : v.stores) {
          rowPass.epilogue.push_back(s);
          plan_->nodes[s].producer = static_cast<int>(q);
        }
        v.stores.clear();
      }
    }
    // Passes left empty are dropped (order() renumbers).
  }

  // ---------------------------------------------------------------- launch order
  void order() {
    std::vector<int> ids;
    for (size_t p = 0; p < plan_->passes.size(); ++p) {
      const Pass& pass = plan_->passes[p];
      if (!pass.stores.empty() || !pass.reductions.empty() || !pass.finishes.empty() ||
          !pass.epilogue.empty() || !pass.inits.empty() || !pass.scatters.empty()) {
        ids.push_back(static_cast<int>(p));
      }
    }
    std::stable_sort(ids.begin(), ids.end(),
                     [&](int a, int b) { return plan_->passes[a].level < plan_->passes[b].level; });
    std::vector<int> renumber(plan_->passes.size(), -1);
    std::vector<Pass> sorted;
    for (int p : ids) {
      renumber[p] = static_cast<int>(sorted.size());
      sorted.push_back(std::move(plan_->passes[p]));
    }
    plan_->passes = std::move(sorted);
    for (NodeInfo& n : plan_->nodes) {
      if (n.producer >= 0) n.producer = renumber[n.producer];
      if (n.finisher >= 0) n.finisher = renumber[n.finisher];
    }
    // Why each kernel ends where it does.
    for (size_t p = 0; p + 1 < plan_->passes.size(); ++p) {
      Pass& a = plan_->passes[p];
      const Pass& b = plan_->passes[p + 1];
      if (!a.boundary.empty()) continue;
      if (!plan_->options.fuse) {
        a.boundary = "no fusion (PlanOptions::fuse is false)";
      } else if (b.level > a.level) {
        a.boundary =
            "the next kernel reads a reduction's result or values other blocks write "
            "(a global barrier)";
      } else {
        a.boundary =
            "the next kernel walks another space (" + std::string(layoutName(b.layout)) + ")";
      }
    }
  }

  // ---------------------------------------------------------------- buffers
  void buffers() {
    for (size_t id = 0; id < plan_->nodes.size(); ++id) {
      NodeInfo& n = plan_->nodes[id];
      if (n.storage == Storage::Inline || n.producer < 0) continue;
      BufferInfo b;
      b.type = n.node->type;
      b.name = n.output.empty() ? describe(*plan_, static_cast<int>(id)) : n.output;
      if (n.storage == Storage::Partials) {
        const NodeInfo& m = plan_->nodes[n.args[0]];
        b.name = "partials of " + describe(*plan_, static_cast<int>(id));
        b.dimA = n.slot0;
        if (n.node->op == OpKind::ColReduce) {
          b.partsDim = m.slot0;  // a band of rows each
          b.bandPass = n.producer;
        } else {
          b.partsDim = m.slot1;  // a tile of columns each
          b.width = 32 * kTileLanes;
        }
        n.buffer = add(std::move(b));
        if (n.finish) {
          BufferInfo f;
          f.type = n.node->type;
          f.name = n.output.empty() ? describe(*plan_, static_cast<int>(id)) : n.output;
          f.output = !n.output.empty();
          f.dimA = n.slot0;
          n.finished = add(std::move(f));
        }
        continue;
      }
      b.output = !n.output.empty();
      b.dimA = n.slot0;
      b.dimB = n.slot1;
      n.buffer = add(std::move(b));
    }
  }
  int add(BufferInfo b) {
    plan_->buffers.push_back(std::move(b));
    return static_cast<int>(plan_->buffers.size()) - 1;
  }

  // A decision of the fusion space: PlanOptions::choices' side for `name`, or `preferred`
  // (the rules' side) when it names none; recorded either way.
  bool choose(const std::string& name, bool preferred) {
    const auto& given = plan_->options.choices;
    const auto it = given.find(name);
    const bool side = it == given.end() ? preferred : it->second;
    plan_->choices.emplace_back(name, side);
    return side;
  }

  std::shared_ptr<PlanData> plan_;
  std::vector<std::vector<std::pair<int, Access>>> readers_;
  std::vector<bool> needed_;  // per node: its elements are read (collect)
  std::map<std::tuple<int, int, int, int, int>, int> passOf_;
};

}  // namespace

std::shared_ptr<PlanData> schedule(const std::vector<Output>& outputs, const PlanOptions& options) {
  return Planner(outputs, options).result();
}

}  // namespace obsidian::array::detail
