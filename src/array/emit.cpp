// Whole-array programs, the kernels: each pass of a plan (schedule.cpp) becomes an ordinary
// obsidian kernel (an effect over DMutable outputs), built with the language and the block
// layer, so the simulator, the cache and the launch checks treat it as any other kernel.
//  - vector pass: one tile of threads x items elements per block; stored values are written as
//    they are computed. With whole reductions, at most a device's worth of blocks, each an even
//    share of the vector (whole 32-element lines), reductions folding in registers, each
//    block's result published and the last block to arrive folding them (as device::reduceAll)
//    and computing the scalars made of the totals (the epilogue);
//  - matrix pass: the same loop over the elements of a matrix (row-major, dense stores); one
//    that reads a transposed view or a stencil's neighbours at its own element takes 32 x 32
//    tiles instead, the views' sources staged in shared memory (a transpose's reads and writes
//    coalesced; a stencil's source read once, with its halo); a vector pass of maps over a
//    window stencil likewise stages its tile's span of the source;
//  - row pass: a warp per row, its lanes folding strided columns, five xor shuffles, and lane
//    0 writing the row's results and the epilogue computed from them;
//  - column pass: a thread per column over a band of rows (coalesced), writing one partial per
//    band and column; a later pass folds the partials where it reads them;
//  - scalar pass: one thread computing scalars of earlier results.
// Values are evaluated by value(): inputs and earlier passes' arrays are read, everything else
// is the node's element function with its operands' values substituted (inlined).
#include <algorithm>
#include <bit>
#include <cassert>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "array/plan_data.hpp"
#include "ir/ir_walk.hpp"
#include "obsidian/block/reduce.hpp"
#include "obsidian/capture.hpp"
#include "obsidian/device/scan.hpp"
#include "obsidian/thread_array.hpp"
#include "obsidian/vector_load.hpp"
#include "obsidian/warp/reduce.hpp"

namespace obsidian::array::detail {

namespace {

using obsidian::detail::CaptureState;
using obsidian::detail::KernelParam;

ExpPtr u32(uint32_t v) { return ir::u32(v); }
EWord32 w32(const ExpPtr& e) { return EWord32(e); }

// op(acc, x) from a reduction's body.
ExpPtr combine(const Node& r, const ExpPtr& acc, const ExpPtr& x) {
  return ir::substitute(ir::substitute(r.body, "obsidian_acc", acc), "obsidian_elem", x);
}

EWord32 ceilDiv(const EWord32& n, uint32_t k) {
  return n / k + ifThenElse(n % k != 0u, EWord32(1u), EWord32(0u));
}

class PassEmitter {
 public:
  PassEmitter(PlanData& plan, int pass) : plan_(plan), p_(pass), pass_(plan.passes[pass]) {}

  // Which arrays, inputs and lengths the pass reads and writes (a dry run of the body's walk).
  void collect() {
    collecting_ = true;
    walk();
    collecting_ = false;
  }

  Kernel emit() {
    std::unique_ptr<Context> holder;
    const std::string name = "pass" + std::to_string(p_) + "_" + kindName();
    Context& ctx = obsidian::detail::newCaptureContext(holder, name, threads());
    {
      obsidian::detail::ContextScope scope(ctx);
      CaptureOptions options;
      options.names = paramNames();
      CaptureState state{ctx, options};
      makeParams(state);
      const GridEffect effect = obsidian::effect([this](const Program<Grid>& g) { body(g); });
      obsidian::detail::bindEffect(ctx, effect);
    }
    return obsidian::detail::finishCapture(std::move(holder), CaptureOptions{}, 0.0);
  }

  std::vector<ArgRef> args() const { return args_; }

 private:
  std::string kindName() const {
    switch (pass_.layout) {
      case Layout::Scalar: return "scalar";
      case Layout::Vector: return "vector";
      case Layout::Matrix: return "matrix";
      case Layout::RowWarp: return "rows";
      case Layout::ColumnBand: return "columns";
      case Layout::Tile: return "tiles";
      case Layout::Scan: return "scan";
      case Layout::Sort: return "sort";
      case Layout::Call: return "call";
    }
    return "pass";
  }

  bool hasBand() const {
    return pass_.layout == Layout::ColumnBand || pass_.layout == Layout::Tile;
  }

  // ---------------------------------------------------------------- parameters
  // The parameters in order: dims' lengths, inputs, arrays read, arrays written, parts.
  struct InputUse {
    Shape shape;
    ScalarType type;
  };
  std::vector<std::string> paramNames() {
    std::vector<std::string> names;
    std::set<std::string> used;
    const auto unique = [&](std::string n) {
      std::string u = n;
      for (int k = 2; !used.insert(u).second; ++k) u = n + "_" + std::to_string(k);
      return u;
    };
    for (int d : dimsUsed_) names.push_back(unique("len" + std::to_string(d)));
    for (const auto& [input, use] : inputsUsed_) {
      names.push_back(unique(input));
      if (use.shape == Shape::Matrix) {
        used.insert(input + "Rows");
        used.insert(input + "Cols");
        used.insert(input + "Pitch");
      }
      used.insert(input + "Len");
    }
    const auto bufferName = [&](int b) {
      const BufferInfo& info = plan_.buffers[b];
      return unique(info.output ? info.name : "t" + std::to_string(b));
    };
    for (int b : buffersRead_) {
      names.push_back(bufferName(b));
      used.insert(names.back() + "Len");
    }
    for (int b : buffersWritten_) {
      names.push_back(bufferName(b));
      used.insert(names.back() + "Len");
    }
    for (int b : partsUsed_) names.push_back(unique("parts" + std::to_string(b)));
    if (hasBand()) names.push_back(unique("band"));
    return names;
  }

  void makeParams(CaptureState& s) {
    size_t k = 0;
    for (int d : dimsUsed_) {
      dimLen_[d] = KernelParam<EWord32>::make(s, k++).node();
      args_.push_back({ArgRef::Kind::DimLength, "", -1, d, -1});
    }
    for (const auto& [input, use] : inputsUsed_) {
      withType(use.type, [&]<class X>() {
        if (use.shape == Shape::Scalar) {
          const Exp<X> v = KernelParam<Exp<X>>::make(s, k);
          scalars_[input] = v.node();
        } else if (use.shape == Shape::Vector) {
          const DPull<Exp<X>> v = KernelParam<DPull<Exp<X>>>::make(s, k);
          vectors_[input] = [v](const ExpPtr& i) { return v[w32(i)].node(); };
        } else {
          const DPull2<Exp<X>> m = KernelParam<DPull2<Exp<X>>>::make(s, k);
          matrices_[input] = [m](const ExpPtr& r, const ExpPtr& c) {
            return m(w32(r), w32(c)).node();
          };
        }
      });
      ++k;
      args_.push_back({ArgRef::Kind::Input, input, -1, -1, -1});
    }
    for (int b : buffersRead_) {
      withType(plan_.buffers[b].type, [&]<class X>() {
        const DPull<Exp<X>> v = KernelParam<DPull<Exp<X>>>::make(s, k);
        reads_[b] = [v](const ExpPtr& i) { return v[w32(i)].node(); };
      });
      ++k;
      args_.push_back({ArgRef::Kind::Buffer, "", b, -1, -1});
    }
    for (int b : buffersWritten_) {
      withType(plan_.buffers[b].type, [&]<class X>() {
        const DMutable<X> m = KernelParam<DMutable<X>>::make(s, k);
        writes_[b] = [m](const Program<Thread>& t, const ExpPtr& i, const ExpPtr& v) {
          write(t, m, w32(i), Exp<X>(v));
        };
        atomics_[b] = [m](const Program<Thread>& t, AtomicOp op, const ExpPtr& i, const ExpPtr& v) {
          obsidian::detail::atomic<X>(t, op, m.ref(), w32(i), v, nullptr);
        };
      });
      ++k;
      args_.push_back({ArgRef::Kind::Buffer, "", b, -1, -1});
    }
    for (int b : partsUsed_) {
      parts_[b] = KernelParam<EWord32>::make(s, k++).node();
      args_.push_back({ArgRef::Kind::Parts, "", b, -1, -1});
    }
    if (hasBand()) {
      band_ = KernelParam<EWord32>::make(s, k++).node();
      args_.push_back({ArgRef::Kind::Band, "", -1, -1, p_});
    }
  }

  // A scan pass runs with the tuned scan's policy (its large-input row); the others with the
  // plan's threads.
  ScanPolicy scanPolicy() const {
    const Node& node = *plan_.nodes[pass_.stores.front()].node;
    if (node.args.size() > 1) {  // segmented: (head, element) pairs in 64 bits
      return device::scanPolicyFor<uint64_t, Sum>(plan_.options.target, size_t{1} << 28);
    }
    return withType(node.type, [&]<class X>() {
      return device::scanPolicyFor<X, Sum>(plan_.options.target, size_t{1} << 28);
    });
  }
  uint32_t threads() const {
    return pass_.layout == Layout::Scan ? scanPolicy().threads : plan_.options.threads;
  }

  // ---------------------------------------------------------------- reading values
  ExpPtr dimLength(int d) {
    if (collecting_) {
      if (std::find(dimsUsed_.begin(), dimsUsed_.end(), d) == dimsUsed_.end()) {
        dimsUsed_.push_back(d);
      }
      return u32(1);
    }
    return dimLen_.at(d);
  }
  static ExpPtr zeroOf(ScalarType t) {
    return withType(t, [&]<class X>() { return Exp<X>(X{0}).node(); });
  }
  ExpPtr readBuffer(int b, const ExpPtr& i) {
    if (collecting_) {
      buffersRead_.insert(b);
      return zeroOf(plan_.buffers[b].type);
    }
    return reads_.at(b)(i);
  }
  void writeBuffer(const Program<Thread>* t, int b, const ExpPtr& i, const ExpPtr& v) {
    if (collecting_) {
      buffersWritten_.insert(b);
      return;
    }
    writes_.at(b)(*t, i, v);
  }
  ExpPtr partsOf(int b) {
    if (collecting_) {
      partsUsed_.insert(b);
      return u32(1);
    }
    return parts_.at(b);
  }

  // The fold of a column reduction's partials at column c (statements in t).
  ExpPtr foldPartials(int id, const ExpPtr& c) {
    const NodeInfo& n = plan_.nodes[id];
    const int b = n.buffer;
    const ExpPtr cols = dimLength(n.slot0);
    const ExpPtr parts = partsOf(b);
    if (collecting_) return readBuffer(b, c);
    if (!t_) throw Error("array::Plan: internal: a partials fold outside a thread program");
    return withType(n.node->type, [&]<class X>() -> ExpPtr {
      const Program<Thread>& t = *t_;
      const Exp<X> acc = t.declare(Exp<X>(n.node->identity));
      const EWord32 count = w32(parts);
      constexpr uint32_t unroll = 8;  // loads in flight a trip (as blas::combine)
      const auto fold = [&](const Program<Thread>& s, const EWord32& k0, uint32_t m) {
        std::vector<Exp<X>> values;
        for (uint32_t k = 0; k < m; ++k) {
          values.push_back(
              s.declare(Exp<X>(reads_.at(b)((((k0 + k) * w32(cols)) + w32(c)).node()))));
        }
        for (const Exp<X>& v : values)
          s.assign(acc, Exp<X>(combine(*n.node, acc.node(), v.node())));
      };
      const EWord32 trips = count / unroll;
      t.seqFor(trips,
               [&](const Program<Thread>& s, const EWord32& i) { fold(s, i * unroll, unroll); });
      t.seqFor(count - trips * unroll,
               [&](const Program<Thread>& s, const EWord32& i) { fold(s, trips * unroll + i, 1); });
      return acc.node();
    });
  }

  // Node id's element at idx (0, 1 or 2 indices by its shape). `random`: read at other indices
  // than the pass's own (through a gather, a replicate or a transpose).
  ExpPtr value(int id, const std::vector<ExpPtr>& idx, bool random = false) {
    const auto key = std::make_tuple(id, idx.empty() ? ExpPtr() : idx[0],
                                     idx.size() < 2 ? ExpPtr() : idx[1], random);
    if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
    const ExpPtr v = compute(id, idx, random);
    memo_[key] = v;
    return v;
  }

  ExpPtr compute(int id, const std::vector<ExpPtr>& idx, bool random) {
    const NodeInfo& n = plan_.nodes[id];
    const Node& node = *n.node;
    if (node.op == OpKind::Input) {
      if (collecting_) {
        inputsUsed_[node.name] = InputUse{node.shape, node.type};
        return zeroOf(node.type);
      }
      if (node.shape == Shape::Scalar) return scalars_.at(node.name);
      if (node.shape == Shape::Vector && group_.at && !random && idx[0] == group_.at) {
        return vectorRead(node.name, node.type);
      }
      if (node.shape == Shape::Vector) return vectors_.at(node.name)(idx[0]);
      return matrices_.at(node.name)(idx[0], idx[1]);
    }
    if (node.op == OpKind::Constant) return node.body;
    // (known values are this element's: a read at another index reads the stored array)
    if (const auto it = known_.find(id); it != known_.end() && !random) return it->second;
    if (n.producer >= 0 && n.producer != p_) return stored(id, idx, random);
    if (n.finisher >= 0 && n.finisher < p_ && random) return stored(id, idx, random);
    switch (node.op) {
      case OpKind::Map: {
        ExpPtr body = node.body;
        for (size_t k = 0; k < n.args.size(); ++k) {
          const NodeInfo& a = plan_.nodes[n.args[k]];
          const ExpPtr v = value(
              n.args[k], a.node->shape == Shape::Scalar ? std::vector<ExpPtr>{} : idx, random);
          body = ir::substitute(body, "obsidian_arg" + std::to_string(k), v);
        }
        return body;
      }
      case OpKind::Generate: return ir::substitute(node.body, "obsidian_index", idx[0]);
      case OpKind::Gather: {
        const NodeInfo& src = plan_.nodes[n.args[0]];
        const EWord32 i = w32(value(n.args[1], idx, random));
        const EWord32 len = w32(dimLength(src.slot0));
        const ExpPtr inside = (i < len).node();
        const ExpPtr safe = ifThenElse(i < len, i, EWord32(0u)).node();
        const ExpPtr v = value(n.args[0], {safe}, true);
        return ir::select(inside, v,
                          withType(node.type, [&]<class X>() { return Exp<X>(X{0}).node(); }));
      }
      case OpKind::Contract: return value(n.args[0], idx, random);
      case OpKind::Iota: {
        if (node.shape == Shape::Vector) return idx[0];
        const EWord32 cols = w32(dimLength(plan_.nodes[n.args[0]].slot1));
        return (w32(idx[0]) * cols + w32(idx[1])).node();
      }
      case OpKind::Extent: {
        const NodeInfo& a = plan_.nodes[n.args[0]];
        return dimLength(node.a == 2 ? a.slot1 : a.slot0);
      }
      case OpKind::Slice: return value(n.args[0], {(w32(idx[0]) + uint32_t(node.a)).node()}, true);
      case OpKind::Shift: {
        const NodeInfo& a = plan_.nodes[n.args[0]];
        // index + d within [0, len): the edges repeat
        const auto clamp = [&](const ExpPtr& i, int64_t d, int dim) -> ExpPtr {
          if (d == 0) return i;
          const EWord32 len = w32(dimLength(dim));
          const EWord32 x = w32(i);
          if (d < 0) {
            const uint32_t k = uint32_t(-d);
            return ifThenElse(x < k, EWord32(0u), x - k).node();
          }
          return min(x + uint32_t(d), len - 1u).node();
        };
        if (node.shape == Shape::Vector)
          return value(n.args[0], {clamp(idx[0], node.a, a.slot0)}, true);
        return value(n.args[0], {clamp(idx[0], node.a, a.slot0), clamp(idx[1], node.b, a.slot1)},
                     true);
      }
      case OpKind::ReplicateRows: return value(n.args[0], {idx[1]}, true);
      case OpKind::ReplicateCols: return value(n.args[0], {idx[0]}, true);
      case OpKind::Transpose: return value(n.args[0], {idx[1], idx[0]}, true);
      case OpKind::Reshape:
        return value(n.args[0], {(w32(idx[0]) * w32(dimLength(n.slot1)) + w32(idx[1])).node()},
                     true);
      case OpKind::Flatten: {
        const EWord32 cols = w32(dimLength(plan_.nodes[n.args[0]].slot1));
        return value(n.args[0], {(w32(idx[0]) / cols).node(), (w32(idx[0]) % cols).node()}, true);
      }
      case OpKind::Diagonal: return value(n.args[0], {idx[0], idx[0]}, true);
      case OpKind::RowOf:
      case OpKind::ColumnOf:
      case OpKind::Element: {
        // k within the picked extent, else 0 (as a gather past its source)
        const NodeInfo& src = plan_.nodes[n.args[0]];
        const EWord32 k = w32(value(n.args[1], {}, random));
        const EWord32 len = w32(dimLength(node.op == OpKind::ColumnOf ? src.slot1 : src.slot0));
        const ExpPtr safe = ifThenElse(k < len, k, EWord32(0u)).node();
        const ExpPtr v = node.op == OpKind::RowOf      ? value(n.args[0], {safe, idx[0]}, true)
                         : node.op == OpKind::ColumnOf ? value(n.args[0], {idx[0], safe}, true)
                                                       : value(n.args[0], {safe}, true);
        return ir::select((k < len).node(), v,
                          withType(node.type, [&]<class X>() { return Exp<X>(X{0}).node(); }));
      }
      case OpKind::MatMul: return product(id, idx);
      case OpKind::ColReduce:
        if (!random || n.finisher == p_) return foldPartials(id, idx[0]);
        break;
      default: break;
    }
    throw Error("array::Plan: internal: " + describe(plan_, id) + " is read before it is computed");
  }

  // Element (r, c) of a product: a loop over k folding a(r, k) * b(k, c) in order, four
  // terms read a trip before they are added (as the hand kernel's seqFoldStrided).
  ExpPtr product(int id, const std::vector<ExpPtr>& idx) {
    const NodeInfo& n = plan_.nodes[id];
    const EWord32 inner = w32(dimLength(plan_.nodes[n.args[0]].slot1));
    return withType(n.node->type, [&]<class X>() -> ExpPtr {
      const auto term = [&](const EWord32& k) {
        return Exp<X>(value(n.args[0], {idx[0], k.node()}, true)) *
               Exp<X>(value(n.args[1], {k.node(), idx[1]}, true));
      };
      if (collecting_ || !t_) {
        term(EWord32(0u));
        return zeroOf(n.node->type);
      }
      const Program<Thread>& t = *t_;
      const Exp<X> acc = t.declare(Exp<X>(X{0}));
      const auto saved = memo_;  // (values of the loop's k are not the element's)
      constexpr uint32_t kUnroll = 4;
      t.seqFor(inner / kUnroll, [&](const Program<Thread>& s, const EWord32& q) {
        t_ = &s;
        std::vector<Exp<X>> terms;
        for (uint32_t u = 0; u < kUnroll; ++u) terms.push_back(term(q * kUnroll + u));
        Exp<X> x = acc;
        for (const Exp<X>& e : terms) x = x + e;
        s.assign(acc, x);
      });
      const EWord32 done = t.declare(inner / kUnroll * kUnroll);
      t.seqFor(inner - done, [&](const Program<Thread>& s, const EWord32& j) {
        t_ = &s;
        s.assign(acc, acc + term(done + j));
      });
      t_ = &t;
      memo_ = saved;
      return acc.node();
    });
  }

  // A value an earlier pass stored.
  ExpPtr stored(int id, const std::vector<ExpPtr>& idx, bool random) {
    const NodeInfo& n = plan_.nodes[id];
    if (n.storage == Storage::Partials) {
      // The folded buffer once an earlier pass has written it; the partials themselves else.
      if (random && n.finished >= 0 && n.finisher < p_) return readBuffer(n.finished, idx[0]);
      return foldPartials(id, idx[0]);
    }
    if (n.node->shape == Shape::Scalar) return readBuffer(n.buffer, u32(0));
    if (n.node->shape == Shape::Vector) return readBuffer(n.buffer, idx[0]);
    const EWord32 cols = w32(dimLength(n.slot1));
    return readBuffer(n.buffer, (w32(idx[0]) * cols + w32(idx[1])).node());
  }

  // ---------------------------------------------------------------- the bodies
  uint32_t gridBlocks() const {
    const PlanOptions& o = plan_.options;
    if (o.blocks) return o.blocks;
    if (!o.target.gpu) return 3;
    return o.target.smCount * std::max(1u, 2048u / o.threads);
  }

  void walk() {
    // The dry run: the same calls as body() with no program (collecting_ is set).
    memo_.clear();
    const std::vector<ExpPtr> none;
    const ExpPtr i = u32(0);
    switch (pass_.layout) {
      case Layout::Scalar:
        for (int s : pass_.stores) writeBuffer(nullptr, plan_.nodes[s].buffer, i, value(s, none));
        break;
      case Layout::Scan:
        dimLength(pass_.dimA);
        for (int s : pass_.stores) {
          for (int a : plan_.nodes[s].args) value(a, {i}, true);  // (as scanPass reads them)
          writeBuffer(nullptr, plan_.nodes[s].buffer, i, i);
        }
        break;
      case Layout::Vector:
        dimLength(pass_.dimA);
        if (staged()) {
          for (const StagedView& v : stagedViews()) dimLength(plan_.nodes[v.source].slot0);
        }
        commit(nullptr, evaluate(nullptr, {i}), nullptr);
        for (int r : pass_.reductions) {
          writeBuffer(nullptr, plan_.nodes[r].buffer, i, i);
          known_[r] = zeroOf(plan_.nodes[r].node->type);
        }
        for (int e : pass_.epilogue) writeBuffer(nullptr, plan_.nodes[e].buffer, i, value(e, none));
        known_.clear();
        break;
      case Layout::Matrix:
        dimLength(pass_.dimA);
        dimLength(pass_.dimB);
        commit(nullptr, evaluate(nullptr, {i, i}), nullptr);
        break;
      case Layout::RowWarp:
      case Layout::ColumnBand:
      case Layout::Tile:
        dimLength(pass_.dimA);
        if (pass_.offsets >= 0) {
          value(pass_.offsets, {i}, true);
          dimLength(segmentValuesDim());
        }
        if (pass_.dimB >= 0) dimLength(pass_.dimB);
        if (pass_.offsets < 0) commit(nullptr, evaluate(nullptr, {i, i}), nullptr);
        for (int r : pass_.reductions) {
          value(plan_.nodes[r].args[0],
                pass_.offsets >= 0 ? std::vector<ExpPtr>{i} : std::vector<ExpPtr>{i, i});
          if (pass_.layout == Layout::RowWarp) {
            known_[r] = zeroOf(plan_.nodes[r].node->type);
            if (needsStore(r)) writeBuffer(nullptr, plan_.nodes[r].buffer, i, i);
          } else {
            writeBuffer(nullptr, plan_.nodes[r].buffer, i, i);
          }
        }
        for (int e : pass_.epilogue) writeBuffer(nullptr, plan_.nodes[e].buffer, i, value(e, {i}));
        known_.clear();
        break;
      case Layout::Sort:  // (planSort, planCall: their arguments are operands and result)
      case Layout::Call: break;
    }
  }

  // What one element of a vector or matrix pass does: the arrays it writes (buffer, index,
  // value) and its reductions' elements (reduction, element).
  struct Pending {
    std::vector<std::tuple<int, ExpPtr, ExpPtr>> writes;
    std::vector<std::pair<int, ExpPtr>> folds;
    std::vector<std::tuple<int, ExpPtr, ExpPtr>> scatters;  // permute, destination, value
  };
  // Evaluates the element at idx (a clamped, safe index): every value declared in t, nothing
  // written yet, so that a thread's loads of all its elements are in flight together.
  Pending evaluate(const Program<Thread>* t, const std::vector<ExpPtr>& idx) {
    t_ = t;
    memo_.clear();
    Pending out;
    for (int s : pass_.stores) {
      ExpPtr at = idx[0];
      if (idx.size() == 2) at = (w32(idx[0]) * w32(dimLength(pass_.dimB)) + w32(idx[1])).node();
      ExpPtr v = value(s, idx);
      if (t && !collecting_) v = declareAny(*t, v);
      out.writes.emplace_back(plan_.nodes[s].buffer, at, v);
      known_[s] = v;
    }
    for (int f : pass_.finishes) {
      const ExpPtr v = foldPartials(f, idx[0]);
      out.writes.emplace_back(plan_.nodes[f].finished, idx[0], v);
      known_[f] = v;
    }
    for (int p : pass_.inits) {
      const NodeInfo& n = plan_.nodes[p];
      out.writes.emplace_back(n.buffer, idx[0], value(n.args[0], idx));
    }
    for (int p : pass_.scatters) {
      const NodeInfo& n = plan_.nodes[p];
      ExpPtr dest = value(n.args[1], idx), v = value(n.args[2], idx);
      if (t && !collecting_) {
        dest = declareAny(*t, dest);
        v = declareAny(*t, v);
      }
      out.scatters.emplace_back(p, dest, v);
    }
    if (pass_.layout == Layout::Vector) {
      for (int r : pass_.reductions) {
        ExpPtr v = value(plan_.nodes[r].args[0], idx);
        if (t && !collecting_) v = declareAny(*t, v);
        out.folds.emplace_back(r, v);
      }
    }
    known_.clear();
    return out;
  }
  // The element's writes, under `inside` (the index is in the array).
  void commit(const Program<Thread>* t, const Pending& e, const ExpPtr& inside) {
    if (collecting_ || !t) {
      for (const auto& [b, at, v] : e.writes) writeBuffer(t, b, at, v);
      for (const auto& [p, dest, v] : e.scatters) {
        writeBuffer(t, plan_.nodes[p].buffer, dest, v);
        dimLength(plan_.nodes[p].slot0);
      }
    } else if (!e.writes.empty() || !e.scatters.empty()) {
      t->cond(EBool(inside), [&](const Program<Thread>& u) {
        for (const auto& [b, at, v] : e.writes) writeBuffer(&u, b, at, v);
        for (const auto& [p, dest, v] : e.scatters) {
          const NodeInfo& n = plan_.nodes[p];
          const EWord32 limit = w32(dimLength(n.slot0));
          u.cond(w32(dest) < limit, [&](const Program<Thread>& x) {
            atomics_.at(n.buffer)(x, AtomicOp(n.node->a), dest, v);
          });
        }
      });
    }
  }

  static ExpPtr declareAny(const Program<Thread>& t, const ExpPtr& v) {
    return withType(v->type, [&]<class X>() { return t.declare(Exp<X>(v)).node(); });
  }

  // Whether a row pass writes row reduction r's buffer: an output, or read by another pass.
  bool needsStore(int r) const { return storedRows_.count(r) > 0; }

  void body(const Program<Grid>& g) {
    switch (pass_.layout) {
      case Layout::Scalar:
        g.distrPar(1u, [&](const Program<Block>& p, const EWord32&) {
          p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
            memo_.clear();
            t_ = &t;
            for (int s : pass_.stores) {
              writeBuffer(&t, plan_.nodes[s].buffer, u32(0), value(s, {}));
            }
          });
        });
        return;
      case Layout::Vector: return staged() ? stagedWindows(g) : gridStride(g);
      case Layout::Matrix: return staged() ? stagedTiles(g) : gridStride(g);
      case Layout::RowWarp: return rowPass(g);
      case Layout::ColumnBand: return columnPass(g);
      case Layout::Tile: return tilePass(g);
      case Layout::Scan: return scanPass(g);
      case Layout::Sort:  // (the device radix sort's kernels: sort.cpp; the user's: call.cpp)
      case Layout::Call: break;
    }
    assert(false && "array::Plan: a sort or call pass is not emitted");
  }

  // The tuned device scan (device::scanAll), its input's elements computed as it loads them.
  void scanPass(const Program<Grid>& g) {
    const int s = pass_.stores.front();
    const NodeInfo& n = plan_.nodes[s];
    const Node& node = *n.node;
    const int out = n.buffer;
    const ScanPolicy policy = scanPolicy();
    withType(node.type, [&]<class X>() {
      const auto op = [&node](const Exp<X>& a, const Exp<X>& b) {
        return Exp<X>(combine(node, a.node(), b.node()));
      };
      const int arg = n.args[0];
      const DPull<Exp<X>> in(w32(dimLen_.at(pass_.dimA)), [this, arg](const EWord32& i) {
        memo_.clear();
        t_ = nullptr;  // (the schedule stores inputs that would need statements)
        return Exp<X>(value(arg, {i.node()}, true));  // (read where the scan loads it)
      });
      const X identity = evaluateLiteral<X>(node.identity);
      const ScanKind kind = node.a ? ScanKind::Exclusive : ScanKind::Inclusive;
      if (n.args.size() > 1) {
        if constexpr (sizeof(X) == 4) {
          return segmentedScan<X>(g, op, in, n.args[1], kind, identity);
        } else {
          throw Error("array::Plan: internal: a segmented scan of 64-bit elements");
        }
      }
      const auto push = scanAll<X>(op, in, policy, kind, identity);
      push(g, [&](const Program<Thread>& t, const Exp<X>& v, const EWord32& i) {
        writeBuffer(&t, out, i.node(), v.node());
      });
    });
  }

  // A segmented scan as one scan of (head, element) pairs packed in 64 bits (the head in the
  // high word; a 32-bit element's bits in the low): (ha, a) + (hb, b) = (ha | hb, hb ? b : a f b)
  // is associative, restarts at every head, and has (0, identity) for identity. Exclusive: the
  // pairs' exclusive scan, with a head's own element its identity.
  template <class X, class Op>
  void segmentedScan(const Program<Grid>& g, Op op, const DPull<Exp<X>>& in, int heads,
                     ScanKind kind, X identity) {
    static_assert(sizeof(X) == 4, "segmentedScan: 32-bit elements (graph.cpp checks)");
    using P = uint64_t;
    const auto headOf = [](const Exp<P>& p) { return cast<uint32_t>(p >> EWord64(32)); };
    const auto elementOf = [](const Exp<P>& p) { return bitcast<X>(cast<uint32_t>(p)); };
    const auto pack = [](const EWord32& h, const Exp<X>& x) {
      return (cast<uint64_t>(h) << EWord64(32)) | cast<uint64_t>(bitcast<uint32_t>(x));
    };
    const auto pairs = [=](const Exp<P>& a, const Exp<P>& b) {
      const EWord32 hb = headOf(b);
      return pack(headOf(a) | hb,
                  ifThenElse(hb != 0u, elementOf(b), op(elementOf(a), elementOf(b))));
    };
    const DPull<Exp<X>> values = in;
    const DPull<Exp<P>> packed(values.len(), [this, values, heads, pack](const EWord32& i) {
      const Exp<X> x = values[i];
      memo_.clear();
      t_ = nullptr;  // (as scanPass's loads)
      const EWord32 h = w32(value(heads, {i.node()}, true));
      return pack(cast<uint32_t>(h != 0u), x);
    });
    const X zero = identity;
    const int out = plan_.nodes[pass_.stores.front()].buffer;
    const auto push =
        scanAll<P>(pairs, packed, scanPolicy(), kind, P{std::bit_cast<uint32_t>(zero)});
    push(g, [&](const Program<Thread>& t, const Exp<P>& v, const EWord32& i) {
      Exp<X> x = elementOf(v);
      if (kind == ScanKind::Exclusive) {
        memo_.clear();
        t_ = &t;
        const EWord32 h = w32(value(heads, {i.node()}, true));
        x = ifThenElse(h != 0u, Exp<X>(zero), x);
      }
      writeBuffer(&t, out, i.node(), x.node());
    });
  }

  // The value of a literal expression (a reduction's identity).
  template <class X>
  static X evaluateLiteral(const ExpPtr& e) {
    if (e->kind != ExpKind::Literal)
      throw Error("array::Plan: internal: an identity that is not a literal");
    if constexpr (std::is_floating_point_v<X>) {
      return static_cast<X>(e->real);
    } else {
      return static_cast<X>(e->bits);
    }
  }

  // Row and column reductions of one matrix from one read (as blas::bicgkPass). Warp w of the
  // grid owns column tile j (lane l: columns j * 32K + m * 32 + l, m < K) and band b of rows;
  // row by row, its lanes' elements meet in xor shuffles into the row's partial for tile j
  // (lane 0 writes rowPartials[j * rows + row]), while each lane folds its K columns' running
  // column reductions in registers, written at the band's end to colPartials[b * cols + c].
  void tilePass(const Program<Grid>& g) {
    constexpr uint32_t K = kTileLanes, width = 32 * K;
    const uint32_t warps = plan_.options.threads / 32;
    const EWord32 band = w32(band_);
    const EWord32 rows = w32(dimLen_.at(pass_.dimA)), cols = w32(dimLen_.at(pass_.dimB));
    const EWord32 bands = (rows + band - 1u) / band, tiles = ceilDiv(cols, width);
    const EWord32 instances = bands * tiles;  // (band, tile) pairs, tile fastest
    std::vector<int> rowReds, colReds;
    for (int r : pass_.reductions) {
      (plan_.nodes[r].node->op == OpKind::RowReduce ? rowReds : colReds).push_back(r);
    }
    g.distrPar(ceilDiv(instances, warps), [&](const Program<Block>& blk, const EWord32& bid) {
      blk.distrPar(warps, [&](const Program<Warp>& w, const EWord32& wid) {
        const EWord32 instance = bid * warps + wid;
        w.cond(instance < instances, [&](const Program<Warp>& p) {
          const EWord32 b = instance / tiles, j = instance % tiles;
          const EWord32 first = b * band, count = min(band, rows - first);
          // Per column reduction: K running values per lane; per row reduction: the lane's
          // part of the current row.
          std::vector<std::function<void(const Program<Thread>&, uint32_t, const ExpPtr&)>> colFold;
          std::vector<std::function<void(const Program<Thread>&, uint32_t)>> colInit;
          std::vector<std::function<ExpPtr(uint32_t)>> colValue;
          for (int r : colReds) {
            const Node& node = *plan_.nodes[r].node;
            withType(node.type, [&]<class X>() {
              const ThreadArray<X> acc = threadArray<X>(p, K);
              colInit.push_back([acc, &node](const Program<Thread>& t, uint32_t m) {
                acc.write(t, m, Exp<X>(node.identity));
              });
              colFold.push_back(
                  [acc, &node](const Program<Thread>& t, uint32_t m, const ExpPtr& x) {
                    acc.write(t, m, Exp<X>(combine(node, acc[m].node(), x)));
                  });
              colValue.push_back([acc](uint32_t m) { return acc[m].node(); });
            });
          }
          p.forAll(32u, [&](const Program<Thread>& t, const EWord32&) {
            for (uint32_t m = 0; m < K; ++m) {
              for (auto& f : colInit) f(t, m);
            }
          });
          p.seqFor(count, [&](const Program<Warp>& q, const EWord32& i) {
            const EWord32 row = first + i;
            std::vector<std::function<void(const Program<Thread>&, const ExpPtr&)>> rowSet;
            std::vector<std::function<ExpPtr(const Program<Warp>&)>> rowSum;
            for (int r : rowReds) {
              const Node& node = *plan_.nodes[r].node;
              withType(node.type, [&]<class X>() {
                const ThreadArray<X> part = threadArray<X>(q, 1);
                rowSet.push_back([part](const Program<Thread>& t, const ExpPtr& v) {
                  part.write(t, 0, Exp<X>(v));
                });
                rowSum.push_back([part, &node](const Program<Warp>& x) {
                  const auto op = [&node](const Exp<X>& a, const Exp<X>& c) {
                    return Exp<X>(combine(node, a.node(), c.node()));
                  };
                  auto lanes = forceReg(
                      x, push<Warp>(mkPull(32u, [part](const EWord32&) { return part[0]; })));
                  lanes = warpReduceGroups(x, op, lanes, 32);
                  return lanes[0u].node();
                });
              });
            }
            q.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
              std::vector<ExpPtr> dots;
              for (int r : rowReds) dots.push_back(plan_.nodes[r].node->identity);
              std::vector<std::tuple<EWord32, Pending>> elements;
              for (uint32_t m = 0; m < K; ++m) {
                const EWord32 c = j * width + m * 32u + lane;
                const EWord32 safe = t.declare(min(c, cols - 1u));
                elements.emplace_back(c, evaluate(&t, {row.node(), safe.node()}));
                t_ = &t;
                std::vector<ExpPtr> values;  // the row reductions' elements, then the columns'
                for (const std::vector<int>* list : {&rowReds, &colReds}) {
                  for (int r : *list) {
                    values.push_back(
                        declareAny(t, value(plan_.nodes[r].args[0], {row.node(), safe.node()})));
                  }
                }
                const ExpPtr inside = (c < cols).node();
                size_t k = 0;
                for (size_t r = 0; r < rowReds.size(); ++r, ++k) {
                  const Node& node = *plan_.nodes[rowReds[r]].node;
                  dots[r] = combine(node, dots[r], ir::select(inside, values[k], node.identity));
                }
                for (size_t r = 0; r < colReds.size(); ++r, ++k) {
                  const Node& node = *plan_.nodes[colReds[r]].node;
                  colFold[r](t, m, ir::select(inside, values[k], node.identity));
                }
              }
              for (const auto& [c, e] : elements) commit(&t, e, (c < cols).node());
              for (size_t r = 0; r < rowReds.size(); ++r) rowSet[r](t, dots[r]);
            });
            std::vector<ExpPtr> sums;
            for (auto& f : rowSum) sums.push_back(f(q));
            q.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
              t.cond(lane == 0u, [&](const Program<Thread>& u) {
                for (size_t r = 0; r < rowReds.size(); ++r) {
                  writeBuffer(&u, plan_.nodes[rowReds[r]].buffer, (j * rows + row).node(), sums[r]);
                }
              });
            });
          });
          p.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
            for (uint32_t m = 0; m < K; ++m) {
              const EWord32 c = j * width + m * 32u + lane;
              t.cond(c < cols, [&](const Program<Thread>& u) {
                for (size_t r = 0; r < colReds.size(); ++r) {
                  writeBuffer(&u, plan_.nodes[colReds[r]].buffer, (b * cols + c).node(),
                              colValue[r](m));
                }
              });
            }
          });
        });
      });
    });
  }

  // Elements a thread takes a trip: PlanOptions::reduceItems for a pass with whole reductions
  // (AXPYDOT at 2^24 on the H100: 95.8 us with 8, 99.2 with 4), 1 for a pass that folds
  // partials (each element is a column of partials already: with 4, a 4096-element finish ran
  // on 4 blocks), PlanOptions::items otherwise.
  uint32_t itemsPerThread() const {
    if (!pass_.finishes.empty()) return 1;
    // (a product's element is a loop of its own: a thread each, as the hand kernel)
    for (int s : pass_.stores) {
      if (plan_.nodes[s].node->op == OpKind::MatMul) return 1;
    }
    if (pass_.layout == Layout::Vector) {
      for (int s : pass_.stores) {
        if (plan_.nodes[s].storage == Storage::Full && readsPartials(s)) return 1;
      }
    }
    return pass_.reductions.empty() ? plan_.options.items : plan_.options.reduceItems;
  }
  // Whether computing node id here folds a column reduction's partials.
  bool readsPartials(int id) const {
    std::set<int> seen;
    return readsPartials(id, seen);
  }
  bool readsPartials(int id, std::set<int>& seen) const {
    if (!seen.insert(id).second) return false;  // (a shared operand once)
    const NodeInfo& n = plan_.nodes[id];
    if (n.node->op == OpKind::Input || n.node->op == OpKind::Constant) return false;
    if (n.producer >= 0 && n.producer != p_) return n.storage == Storage::Partials;
    for (int a : n.args) {
      if (readsPartials(a, seen)) return true;
    }
    return false;
  }

  // Elements a thread reads together from each input in a whole tile: a 16-byte vector of
  // 4-byte elements, two of 8-byte ones.
  static constexpr uint32_t kGroup = 4;
  // Whether this pass reads an input vector at its own element (what wholeTile vectorizes).
  bool readsVectorInputs() const {
    std::set<int> seen;
    const std::function<bool(int)> walk = [&](int id) {
      if (!seen.insert(id).second) return false;
      const NodeInfo& n = plan_.nodes[id];
      const Node& node = *n.node;
      if (node.op == OpKind::Input) return node.shape == Shape::Vector;
      if (node.op == OpKind::Constant || (n.producer >= 0 && n.producer != p_)) return false;
      if (node.op != OpKind::Map && node.op != OpKind::Contract && node.op != OpKind::Reduce) {
        return false;  // (read elsewhere than at the element's own index)
      }
      for (int a : n.args) {
        if (plan_.nodes[a].node->shape == Shape::Vector && walk(a)) return true;
      }
      return false;
    };
    for (int s : pass_.stores) {
      if (walk(s)) return true;
    }
    for (int r : pass_.reductions) {
      if (walk(r)) return true;
    }
    return false;
  }
  // Lane group_.lane of the vector holding input `name`'s element group_.base + lane.
  ExpPtr vectorRead(const std::string& name, ScalarType type) {
    const uint32_t width = 16 / sizeOf(type);
    auto it = vectorSources_.find(name);
    if (it == vectorSources_.end()) {
      const ExpPtr probed = vectors_.at(name)(variable<uint32_t>(obsidian::detail::kProbe).node());
      it = vectorSources_.emplace(name, obsidian::detail::vectorSource(width, probed)).first;
    }
    const EWord32 j = group_.base / width + group_.lane / width;
    return obsidian::detail::vectorLane(it->second, type, width, j, group_.lane % width);
  }

  // Vector and matrix passes: tiles of threads x items elements.
  void gridStride(const Program<Grid>& g) {
    const uint32_t threads = plan_.options.threads, items = itemsPerThread();
    const uint32_t blocks = gridBlocks();
    const bool matrix = pass_.layout == Layout::Matrix;
    const EWord32 cols = matrix ? w32(dimLen_.at(pass_.dimB)) : EWord32(1u);
    const EWord32 n = matrix ? w32(dimLen_.at(pass_.dimA)) * cols : w32(dimLen_.at(pass_.dimA));
    const uint32_t chunk = threads * items;
    const EWord32 tiles = ceilDiv(n, chunk);
    // Inputs read at the element's own index are read in 16-byte vectors in whole tiles: by a
    // pass of maps or of reductions alone. (Read so, a pass that both stores and reduces,
    // AXPYDOT's at 2^26 on the H100, took 442 us against 379 us element by element.)
    const bool vectorized = !matrix && items % kGroup == 0 &&
                            (pass_.reductions.empty() || pass_.stores.empty()) &&
                            readsVectorInputs();
    // A map: one tile per block. With reductions: a grid-stride loop over at most `blocks`
    // blocks (their results' grid state has room for that many), as few as the tiles need.
    const bool reducing = !pass_.reductions.empty();
    // (as many blocks as give each the same number of tiles, give or take the last)
    const EWord32 perBlock = max(ceilDiv(tiles, blocks), EWord32(1u));
    const EWord32 active = reducing ? max((tiles + perBlock - 1u) / perBlock, EWord32(1u)) : tiles;
    g.distrPar(active, [&](const Program<Block>& p, const EWord32& bid) {
      // Per reduction: a register accumulator per thread.
      std::vector<std::function<void(const Program<Thread>&)>> init;
      std::vector<std::function<void(const Program<Thread>&, const ExpPtr&, const ExpPtr&)>> fold;
      std::vector<std::function<void(const Program<Block>&, const EWord32&)>> finish;
      std::vector<std::function<ExpPtr(const Program<Block>&)>> total;
      for (int r : pass_.reductions) {
        const Node& node = *plan_.nodes[r].node;
        withType(node.type, [&]<class X>() {
          const ThreadArray<X> acc = threadArray<X>(p, 1);
          init.push_back(
              [acc, &node](const Program<Thread>& t) { acc.write(t, 0, Exp<X>(node.identity)); });
          fold.push_back(
              [acc, &node](const Program<Thread>& t, const ExpPtr& x, const ExpPtr& inside) {
                const Exp<X> v = ifThenElse(EBool(inside), Exp<X>(x), Exp<X>(node.identity));
                acc.write(t, 0, Exp<X>(combine(node, acc[0].node(), v.node())));
              });
          total.push_back([acc, &node](const Program<Block>& q) {
            const auto op = [&node](const Exp<X>& a, const Exp<X>& b) {
              return Exp<X>(combine(node, a.node(), b.node()));
            };
            return blockReduce(q, op, acc).node();
          });
        });
      }
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        for (auto& f : init) f(t);
        // elements first + item * threads + tid, item < items, below `end`
        const auto finish = [&](const Program<Thread>& s,
                                const std::vector<std::pair<Pending, ExpPtr>>& elements) {
          for (const auto& [e, inside] : elements) {
            for (size_t r = 0; r < e.folds.size(); ++r) fold[r](s, e.folds[r].second, inside);
            commit(&s, e, inside);
          }
        };
        // A whole tile with inputs read in 16-byte vectors: the thread's items in groups of
        // kGroup consecutive elements (group g at first + (g * threads + tid) * kGroup).
        const auto wholeTile = [&](const Program<Thread>& s, const EWord32& first) {
          std::vector<std::pair<Pending, ExpPtr>> elements;  // all read first, then folded
          const ExpPtr yes = (EWord32(0u) == 0u).node();
          for (uint32_t item = 0; item < items; ++item) {
            const EWord32 base = first + (item / kGroup * threads + tid) * kGroup;
            const EWord32 at = s.declare(base + item % kGroup);
            group_ = {at.node(), base, item % kGroup};
            elements.emplace_back(evaluate(&s, {at.node()}), yes);
          }
          group_ = {};
          finish(s, elements);
        };
        const auto tileBody = [&](const Program<Thread>& s, const EWord32& first,
                                  const EWord32& end) {
          const auto anyTile = [&](const Program<Thread>& u) {
            std::vector<std::pair<Pending, ExpPtr>> elements;  // all read first, then folded
            for (uint32_t item = 0; item < items; ++item) {
              const EWord32 i = first + item * threads + tid;
              const EWord32 at = u.declare(min(i, n - 1u));  // n >= 1 here: the tile exists
              std::vector<ExpPtr> idx = {at.node()};
              if (matrix) idx = {(at / cols).node(), (at % cols).node()};
              elements.emplace_back(evaluate(&u, idx), (i < end).node());
            }
            finish(u, elements);
          };
          if (!vectorized) return anyTile(s);
          s.cond(first + chunk <= end, [&](const Program<Thread>& u) { wholeTile(u, first); });
          s.cond(first + chunk > end, anyTile);  // the last, partial tile
        };
        if (!reducing) {
          tileBody(t, bid * chunk, n);
          return;
        }
        // Tiles dealt in turn, so that at any time the blocks read neighbouring tiles (DRAM
        // pages): an even share of contiguous elements per block took AXPYDOT at 2^26 from
        // 375 to 403 us on the H100.
        const EWord32 mine = ifThenElse(tiles > bid, (tiles - 1u - bid) / active + 1u, EWord32(0u));
        t.seqFor(mine, [&](const Program<Thread>& s, const EWord32& k) {
          tileBody(s, (bid + k * active) * chunk, n);
        });
      });
      if (!reducing) return;
      // Each block's results published, then the last block to take a ticket folds them.
      std::vector<ExpPtr> totals;
      for (auto& f : total) totals.push_back(f(p));
      publish(p, bid, blocks, active, totals);
    });
  }

  void publish(const Program<Block>& p, const EWord32& bid, uint32_t blocks, const EWord32& active,
               const std::vector<ExpPtr>& totals) {
    const uint32_t threads = plan_.options.threads;
    std::vector<std::function<void(const Program<Thread>&)>> publishers;
    std::vector<std::function<ExpPtr(const Program<Block>&)>> folders;
    for (size_t k = 0; k < pass_.reductions.size(); ++k) {
      const int r = pass_.reductions[k];
      const Node& node = *plan_.nodes[r].node;
      const int out = plan_.nodes[r].buffer;
      withType(node.type, [&]<class X>() {
        const SMutable<X> results = newGlobal<X>(p, blocks);
        const ExpPtr mineTotal = totals[k];
        publishers.push_back([results, bid, mineTotal](const Program<Thread>& t) {
          write(t, results, bid, Exp<X>(mineTotal));
        });
        folders.push_back([this, results, &node, out, threads, active](const Program<Block>& q) {
          const auto op = [&node](const Exp<X>& a, const Exp<X>& b) {
            return Exp<X>(combine(node, a.node(), b.node()));
          };
          // This launch's results only (the rest are an earlier launch's).
          const SPull<Exp<X>> stored = results.pull();
          const DPull<Exp<X>> all(active, [stored](const EWord32& i) { return stored[i]; });
          auto folded = force(
              q,
              mkPush<Block, Exp<X>>(threads, [=](const Program<Block>& r, const Writer<Exp<X>>& w) {
                r.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                  seqFoldStrided(op, Exp<X>(node.identity), all, tid, EWord32(threads))(
                      t, [&](const Program<Thread>& u, const Exp<X>& acc, const EWord32&) {
                        w(u, acc, tid);
                      });
                });
              }));
          const Exp<X> sum = blockReduce(q, op, folded);
          q.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
            writeBuffer(&t, out, u32(0), sum.node());
          });
          return sum.node();
        });
      });
    }
    const SMutable<uint32_t> ticket = newGlobal<uint32_t>(p, 1);
    auto isLast =
        force(p, mkPush<Block, EWord32>(1u, [=](const Program<Block>& q, const Writer<EWord32>& w) {
                q.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
                  for (const auto& f : publishers) f(t);
                  threadFence(t);
                  // Wraps to 0 after the last block: the ticket is ready for the next launch.
                  const EWord32 old = atomicInc(t, ticket, 0u, active - 1u);
                  threadFence(t);
                  w(t, cast<uint32_t>(old == active - 1u), 0u);
                });
              }));
    p.cond(isLast[0u] != 0u, [&](const Program<Block>& q) {
      for (size_t k = 0; k < folders.size(); ++k) known_[pass_.reductions[k]] = folders[k](q);
      // The scalars made of the totals (schedule's epilogues), by one thread.
      if (!pass_.epilogue.empty()) {
        q.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
          for (int e : pass_.epilogue) writeBuffer(&t, plan_.nodes[e].buffer, u32(0), value(e, {}));
        });
      }
      known_.clear();
    });
  }

  // Views this pass reads at its own element that shared memory serves better than global:
  // a transposed view (read in row-major order it is a strided read of its source), and the
  // neighbours of a stencil (slices and shifts of one source: each neighbour a load, where a
  // staged tile reads the source once). Grouped by the source they read.
  struct StagedView {
    bool transpose = false;  // a transposed tile, else a tile with a halo
    int source = -1;
    std::vector<int> nodes;  // the views of `source` read from the tile
    int64_t lo = 0, hi = 0;  // a halo: the views' offsets (a matrix's: -radius .. radius)
  };
  static constexpr int64_t kMaxRadius = 8, kMaxWindow = 256;  // (bounded shared memory)
  // The pass's staged views (found once: the pass does not change while it is emitted).
  const std::vector<StagedView>& stagedViews() const {
    if (!views_) views_ = findStagedViews();
    return *views_;
  }
  std::vector<StagedView> findStagedViews() const {
    const bool matrix = pass_.layout == Layout::Matrix;
    std::vector<StagedView> views;
    const auto group = [&](bool transpose, int source) -> StagedView& {
      for (StagedView& v : views) {
        if (v.transpose == transpose && v.source == source) return v;
      }
      views.push_back(StagedView{transpose, source, {}, 0, 0});
      return views.back();
    };
    std::set<int> seen;
    const std::function<void(int)> walk = [&](int id) {
      if (!seen.insert(id).second) return;
      const NodeInfo& n = plan_.nodes[id];
      const Node& node = *n.node;
      if (node.op == OpKind::Input || node.op == OpKind::Constant) return;
      if (n.producer >= 0 && n.producer != p_) return;  // stored: read from its array
      if (matrix && node.op == OpKind::Transpose) {
        group(true, n.args[0]).nodes.push_back(id);
        return;
      }
      if (matrix && node.op == OpKind::Shift &&
          std::max(std::abs(node.a), std::abs(node.b)) <= kMaxRadius) {
        StagedView& v = group(false, n.args[0]);
        v.nodes.push_back(id);
        v.hi = std::max({v.hi, std::abs(node.a), std::abs(node.b)});
        v.lo = -v.hi;
        return;
      }
      if (!matrix && (node.op == OpKind::Shift || node.op == OpKind::Slice) &&
          std::abs(node.a) <= kMaxWindow) {
        StagedView& v = group(false, n.args[0]);
        v.nodes.push_back(id);
        v.lo = std::min(v.lo, node.a);
        v.hi = std::max(v.hi, node.a);
        return;
      }
      if (node.op != OpKind::Map && node.op != OpKind::Contract) return;  // (elementwise only)
      for (int a : n.args) {
        if (plan_.nodes[a].node->shape == node.shape) walk(a);
      }
    };
    for (int s : pass_.stores) walk(s);
    // A halo pays for itself where the source is read three times or more.
    std::erase_if(views, [](const StagedView& v) { return !v.transpose && v.nodes.size() < 3; });
    return views;
  }
  // Whether this pass takes tiles staged through shared memory (stagedTiles, stagedWindows).
  bool staged() const {
    return (pass_.layout == Layout::Matrix || pass_.layout == Layout::Vector) &&
           pass_.reductions.empty() && pass_.finishes.empty() && pass_.scatters.empty() &&
           pass_.inits.empty() && !stagedViews().empty();
  }

  // clamp(base + k + lo) into [0, n) (lo <= 0): a halo's element k.
  static EWord32 clampedFrom(const EWord32& base, const EWord32& k, int64_t lo, const EWord32& n) {
    const uint32_t back = static_cast<uint32_t>(-lo);
    return ifThenElse(base + k < back, EWord32(0u), min(base + k - back, n - 1u));
  }

  // Stages `count` elements of one view's source in shared memory: element e is read(e) (at(e)
  // clamped into the source for every e). inFlight: a thread reads all its elements before it
  // stores any (a window's span: the moving average took 193 us against 202 on the H100);
  // else each is stored as it is read (a matrix tile: Jacobi took 217 us against 228 loading
  // first, its registers cutting occupancy; bench/RESULTS.md).
  template <class X>
  SPull<Exp<X>> stage(const Program<Block>& p, uint32_t count,
                      const std::function<std::vector<ExpPtr>(const EWord32&)>& at, int source,
                      bool inFlight = false) {
    const uint32_t threads = plan_.options.threads, trips = (count + threads - 1) / threads;
    return force(
        p, mkPush<Block, Exp<X>>(count, [&](const Program<Block>& q, const Writer<Exp<X>>& w) {
          q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
            t_ = &t;
            memo_.clear();
            std::vector<Exp<X>> loaded;
            for (uint32_t k = 0; inFlight && k < trips; ++k) {
              loaded.push_back(Exp<X>(declareAny(t, value(source, at(tid + k * threads), true))));
            }
            for (uint32_t k = 0; k < trips; ++k) {
              const EWord32 e = tid + k * threads;
              const auto store = [&](const Program<Thread>& u) {
                w(u, inFlight ? loaded[k] : Exp<X>(value(source, at(e), true)), e);
              };
              if ((k + 1) * threads <= count) {
                store(t);
              } else {
                t.cond(e < count, store);
              }
            }
          });
        }));
  }

  // A matrix pass through tiles of its output, a block each: every staged view's source read
  // once into shared memory (coalesced: row by row), a transpose's as the source's tile
  // (c0.., r0..) read transposed from there, a stencil's with its halo; then each element
  // computed with those views read from the tiles, written row by row. Tiles of 32 x 32 with a
  // transpose; else by the stencil's radius, as the hand stencils measured them on the H100
  // (examples/stencils tileFor, bench/RESULTS.md "Barracuda's stencils": 16 x 64 for radius 1,
  // 64 x 64 beyond).
  void stagedTiles(const Program<Grid>& g) {
    const std::vector<StagedView>& views = stagedViews();
    const uint32_t threads = plan_.options.threads;
    uint32_t tileRows = 32, tileCols = 32;
    int64_t radius = 0;
    bool transposes = false;
    for (const StagedView& v : views) {
      transposes = transposes || v.transpose;
      radius = std::max(radius, v.hi);
    }
    if (!transposes && threads >= 64) {
      tileRows = radius <= 1 ? 16 : 64;
      tileCols = 64;
    }
    const uint32_t rowsAtOnce = threads / tileCols;
    const uint32_t trips = (tileRows + rowsAtOnce - 1) / rowsAtOnce;
    const EWord32 rows = w32(dimLen_.at(pass_.dimA)), cols = w32(dimLen_.at(pass_.dimB));
    const EWord32 across = ceilDiv(cols, tileCols);
    g.distrPar(ceilDiv(rows, tileRows) * across, [&](const Program<Block>& p, const EWord32& bid) {
      const EWord32 r0 = (bid / across) * tileRows, c0 = (bid % across) * tileCols;
      // Per view node: its value at element (i, j) of the tile, read from shared memory.
      std::map<int, std::function<ExpPtr(const EWord32&, const EWord32&)>> readers;
      for (const StagedView& v : views) {
        withType(plan_.nodes[v.source].node->type, [&]<class X>() {
          if (v.transpose) {
            // tile[y * kPitch + x] = source(c0 + y, r0 + x); T(r0 + i, c0 + j) is tile[j][i]
            constexpr uint32_t kSide = 32, kPitch = kSide + 1;  // (the pad: no bank conflicts)
            const auto tile = stage<X>(
                p, kSide * kPitch,
                [&](const EWord32& e) {
                  const EWord32 y = e / kPitch, x = e % kPitch;
                  return std::vector<ExpPtr>{min(c0 + y, cols - 1u).node(),
                                             min(r0 + min(x, kSide - 1u), rows - 1u).node()};
                },
                v.source);
            for (int id : v.nodes) {
              readers[id] = [tile](const EWord32& i, const EWord32& j) {
                return tile[j * kPitch + i].node();
              };
            }
            return;
          }
          // tile[y * pitch + x] = source(clamp(r0 + y - R), clamp(c0 + x - R)); the shift
          // (dr, dc) at (i, j) is tile[i + dr + R][j + dc + R] (clamped as shift clamps)
          const uint32_t r = static_cast<uint32_t>(v.hi);
          const uint32_t height = tileRows + 2 * r, width = tileCols + 2 * r, pitch = width | 1u;
          const auto tile = stage<X>(
              p, height * pitch,
              [&](const EWord32& e) {
                const EWord32 y = e / pitch, x = min(e % pitch, width - 1u);
                return std::vector<ExpPtr>{clampedFrom(r0, y, v.lo, rows).node(),
                                           clampedFrom(c0, x, v.lo, cols).node()};
              },
              v.source);
          for (int id : v.nodes) {
            const Node& shift = *plan_.nodes[id].node;
            const uint32_t dy = static_cast<uint32_t>(shift.a + v.hi),
                           dx = static_cast<uint32_t>(shift.b + v.hi);
            readers[id] = [tile, pitch, dy, dx](const EWord32& i, const EWord32& j) {
              return tile[(i + dy) * pitch + j + dx].node();
            };
          }
        });
      }
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        std::vector<std::pair<Pending, ExpPtr>> elements;  // all read first, then written
        for (uint32_t k = 0; k < trips; ++k) {
          const EWord32 i = tid / tileCols + k * rowsAtOnce, j = tid % tileCols;
          const EWord32 r = r0 + i, c = c0 + j;
          for (const auto& [id, read] : readers) known_[id] = read(min(i, tileRows - 1u), j);
          elements.emplace_back(evaluate(&t, {min(r, rows - 1u).node(), min(c, cols - 1u).node()}),
                                (r < rows && c < cols && i < tileRows).node());
        }
        for (const auto& [e, inside] : elements) commit(&t, e, inside);
      });
    });
  }

  // A vector pass of maps with window stencils: one tile of threads x items elements a block
  // (as gridStride's), each staged source's span of the tile with its halo read once into
  // shared memory (clamped to the source, as shift clamps; a slice's reads are inside it).
  // Its tile: 4096 elements (or PlanOptions::items a thread, if more), the size the hand window
  // kernel measured best on the H100 (examples/stencils Window::tile), but at most 16 a thread
  // (each is unrolled: 32 threads would take 128).
  void stagedWindows(const Program<Grid>& g) {
    const uint32_t threads = plan_.options.threads;
    const uint32_t items = std::max(plan_.options.items, std::min(16u, 4096 / threads));
    const uint32_t chunk = threads * items;
    const EWord32 n = w32(dimLen_.at(pass_.dimA));
    const std::vector<StagedView>& views = stagedViews();
    g.distrPar(ceilDiv(n, chunk), [&](const Program<Block>& p, const EWord32& bid) {
      const EWord32 first = bid * chunk;
      std::map<int, std::function<ExpPtr(const EWord32&)>> readers;  // by element of the tile
      for (const StagedView& v : views) {
        const EWord32 len = w32(dimLength(plan_.nodes[v.source].slot0));
        withType(plan_.nodes[v.source].node->type, [&]<class X>() {
          // span[e] = source(clamp(first + lo + e)); the view at offset d reads span[k + d - lo]
          const auto span = stage<X>(
              p, chunk + static_cast<uint32_t>(v.hi - v.lo),
              [&](const EWord32& e) {
                return std::vector<ExpPtr>{clampedFrom(first, e, v.lo, len).node()};
              },
              v.source, true);
          for (int id : v.nodes) {
            const uint32_t d = static_cast<uint32_t>(plan_.nodes[id].node->a - v.lo);
            readers[id] = [span, d](const EWord32& k) { return span[k + d].node(); };
          }
        });
      }
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        std::vector<std::pair<Pending, ExpPtr>> elements;  // all read first, then written
        for (uint32_t item = 0; item < items; ++item) {
          const EWord32 k = item * threads + tid, i = first + k;
          const EWord32 at = t.declare(min(i, n - 1u));
          for (const auto& [id, read] : readers) known_[id] = read(k);
          elements.emplace_back(evaluate(&t, {at.node()}), (i < n).node());
        }
        for (const auto& [e, inside] : elements) commit(&t, e, inside);
      });
    });
  }

  // A warp per row: lanes fold the row's columns lane, lane + 32, ... (`unroll` a trip, read
  // before they are folded), xor shuffles add the lanes, lane 0 writes.
  // A segment pass's reductions' input length (one for all: schedule unites them).
  int segmentValuesDim() const {
    return plan_.nodes[plan_.nodes[pass_.reductions.front()].args[0]].slot0;
  }

  void rowPass(const Program<Grid>& g) {
    const uint32_t warps = plan_.options.threads / 32, unroll = plan_.options.unroll;
    const bool segments = pass_.offsets >= 0;
    const EWord32 rows = w32(dimLen_.at(pass_.dimA));
    const EWord32 matrixCols = segments ? EWord32(0u) : w32(dimLen_.at(pass_.dimB));
    // Lanes a row (segment) takes: a whole warp for a matrix's rows, PlanOptions::segmentLanes
    // for CSR segments (a few elements each: a warp a segment left most lanes idle).
    const uint32_t G = segments ? plan_.options.segmentLanes : 32u, perWarp = 32u / G;
    g.distrPar(ceilDiv(rows, warps * perWarp), [&](const Program<Block>& blk, const EWord32& b) {
      blk.distrPar(warps, [&](const Program<Warp>& w, const EWord32& v) {
        // lane l's row: the warp's first + l / G (rows past the last fold the last again and
        // write nothing)
        const EWord32 firstRow = (b * warps + v) * perWarp;
        const auto rowOf = [&](const EWord32& lane) {
          return G == 32 ? min(firstRow, rows - 1u) : min(firstRow + lane / G, rows - 1u);
        };
        const auto validOf = [&](const EWord32& lane) {
          return G == 32 ? EBool(firstRow < rows) : EBool(firstRow + lane / G < rows);
        };
        std::vector<std::function<void(const Program<Thread>&)>> init;
        std::vector<std::function<void(const Program<Thread>&, const ExpPtr&)>> fold;
        std::vector<std::function<std::function<ExpPtr(const EWord32&)>(const Program<Warp>&)>>
            reduce;
        for (int r : pass_.reductions) {
          const Node& node = *plan_.nodes[r].node;
          withType(node.type, [&]<class X>() {
            const ThreadArray<X> acc = threadArray<X>(w, 1);
            init.push_back(
                [acc, &node](const Program<Thread>& t) { acc.write(t, 0, Exp<X>(node.identity)); });
            fold.push_back([acc, &node](const Program<Thread>& t, const ExpPtr& x) {
              acc.write(t, 0, Exp<X>(combine(node, acc[0].node(), x)));
            });
            reduce.push_back([acc, &node, G](const Program<Warp>& q) {
              const auto op = [&node](const Exp<X>& a, const Exp<X>& c) {
                return Exp<X>(combine(node, a.node(), c.node()));
              };
              auto lanes =
                  forceReg(q, push<Warp>(mkPull(32u, [acc](const EWord32&) { return acc[0]; })));
              lanes = warpReduceGroups(q, op, lanes, G);
              // (each lane of a group holds the group's fold)
              return std::function<ExpPtr(const EWord32&)>(
                  [lanes](const EWord32& lane) { return lanes[lane].node(); });
            });
          });
        }
        w.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
          for (auto& f : init) f(t);
          const EWord32 row = G == 32 ? rowOf(lane) : t.declare(rowOf(lane));
          const EBool valid = validOf(lane);
          const EWord32 sub = G == 32 ? lane : lane % G;  // the lane's place in its group
          // A segment's elements: offsets[row] .. offsets[row + 1] - 1, within the input.
          EWord32 base(0u), cols = matrixCols;
          if (segments) {
            memo_.clear();
            t_ = &t;
            const EWord32 total = w32(dimLen_.at(segmentValuesDim()));
            base = t.declare(min(w32(value(pass_.offsets, {row.node()}, true)), total));
            const EWord32 end = min(w32(value(pass_.offsets, {(row + 1u).node()}, true)), total);
            cols = t.declare(ifThenElse(end > base, end - base, EWord32(0u)));
          }
          const auto at = [&](const EWord32& c) -> std::vector<ExpPtr> {
            if (segments) return {(base + c).node()};
            return {row.node(), c.node()};
          };
          // columns c = (k * unroll + u) * G + sub: whole trips, then the rest one at a time
          const EWord32 trips = cols / (G * unroll);
          const auto columns = [&](const Program<Thread>& s, const EWord32& first, uint32_t m,
                                   bool guard) {
            std::vector<std::vector<ExpPtr>> values(m);
            std::vector<EWord32> cs;
            for (uint32_t u = 0; u < m; ++u) {
              const EWord32 c = first + u * G + sub;
              const EWord32 safe = guard ? s.declare(min(c, cols - 1u)) : c;
              cs.push_back(c);
              memo_.clear();
              t_ = &s;
              for (int r : pass_.reductions) {
                values[u].push_back(declareAny(s, value(plan_.nodes[r].args[0], at(safe))));
              }
              for (int st : pass_.stores) {
                values[u].push_back(declareAny(s, value(st, at(safe))));
              }
            }
            for (uint32_t u = 0; u < m; ++u) {
              const auto body = [&](const Program<Thread>& x) {
                size_t k = 0;
                for (size_t r = 0; r < pass_.reductions.size(); ++r) fold[r](x, values[u][k++]);
                for (int st : pass_.stores) {
                  x.cond(valid, [&](const Program<Thread>& y) {
                    writeBuffer(&y, plan_.nodes[st].buffer, (row * cols + cs[u]).node(),
                                values[u][k]);
                  });
                  ++k;
                }
              };
              if (guard) {
                s.cond(cs[u] < cols, body);
              } else {
                body(s);
              }
            }
          };
          t.seqFor(trips, [&](const Program<Thread>& s, const EWord32& k) {
            columns(s, k * (G * unroll), unroll, false);
          });
          const EWord32 rest = cols - trips * (G * unroll);
          t.seqFor(ceilDiv(rest, G), [&](const Program<Thread>& s, const EWord32& j) {
            columns(s, trips * (G * unroll) + j * G, 1, true);
          });
        });
        std::vector<std::function<ExpPtr(const EWord32&)>> results;
        for (auto& f : reduce) results.push_back(f(w));
        w.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
          const EWord32 row = rowOf(lane);
          t.cond((G == 32 ? lane == 0u : lane % G == 0u) && validOf(lane),
                 [&](const Program<Thread>& u) {
                   memo_.clear();
                   t_ = &u;
                   for (size_t k = 0; k < pass_.reductions.size(); ++k) {
                     const int r = pass_.reductions[k];
                     known_[r] = results[k](lane);
                     if (needsStore(r))
                       writeBuffer(&u, plan_.nodes[r].buffer, row.node(), known_[r]);
                   }
                   for (int e : pass_.epilogue) {
                     writeBuffer(&u, plan_.nodes[e].buffer, row.node(), value(e, {row.node()}));
                   }
                   known_.clear();
                 });
        });
      });
    });
  }

  // A thread per column, each block `threads` adjacent columns of one band of rows.
  void columnPass(const Program<Grid>& g) {
    const uint32_t threads = plan_.options.threads, unroll = plan_.options.unroll;
    const EWord32 band = w32(band_);  // rows a thread folds: chosen at run by the sizes
    const EWord32 rows = w32(dimLen_.at(pass_.dimA)), cols = w32(dimLen_.at(pass_.dimB));
    const EWord32 bands = (rows + band - 1u) / band, tiles = ceilDiv(cols, threads);
    g.distrPar(bands * tiles, [&](const Program<Block>& p, const EWord32& blk) {
      const EWord32 b = blk / tiles, j = blk % tiles;
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        const EWord32 c = j * threads + tid;
        t.cond(c < cols, [&](const Program<Thread>& u) {
          const EWord32 first = b * band;
          const EWord32 count = min(band, rows - first);
          std::vector<ExpPtr> accs;
          for (int r : pass_.reductions) {
            accs.push_back(declareAny(u, plan_.nodes[r].node->identity));
          }
          const auto rowsAt = [&](const Program<Thread>& s, const EWord32& from, uint32_t m) {
            std::vector<std::vector<ExpPtr>> values(m);
            for (uint32_t k = 0; k < m; ++k) {
              const EWord32 r = first + from + k;
              memo_.clear();
              t_ = &s;
              for (int red : pass_.reductions) {
                values[k].push_back(
                    declareAny(s, value(plan_.nodes[red].args[0], {r.node(), c.node()})));
              }
              for (int st : pass_.stores) {
                values[k].push_back(declareAny(s, value(st, {r.node(), c.node()})));
              }
            }
            for (uint32_t k = 0; k < m; ++k) {
              const EWord32 r = first + from + k;
              size_t q = 0;
              for (size_t red = 0; red < pass_.reductions.size(); ++red) {
                const Node& node = *plan_.nodes[pass_.reductions[red]].node;
                withType(node.type, [&]<class X>() {
                  s.assign(Exp<X>(accs[red]), Exp<X>(combine(node, accs[red], values[k][q])));
                });
                ++q;
              }
              for (int st : pass_.stores) {
                writeBuffer(&s, plan_.nodes[st].buffer, (r * cols + c).node(), values[k][q++]);
              }
            }
          };
          const EWord32 trips = count / unroll;
          u.seqFor(trips, [&](const Program<Thread>& s, const EWord32& i) {
            rowsAt(s, i * unroll, unroll);
          });
          u.seqFor(count - trips * unroll, [&](const Program<Thread>& s, const EWord32& i) {
            rowsAt(s, trips * unroll + i, 1);
          });
          for (size_t red = 0; red < pass_.reductions.size(); ++red) {
            const int r = pass_.reductions[red];
            writeBuffer(&u, plan_.nodes[r].buffer, (b * cols + c).node(), accs[red]);
          }
        });
      });
    });
  }

  PlanData& plan_;
  int p_;
  Pass& pass_;
  bool collecting_ = false;
  const Program<Thread>* t_ = nullptr;
  std::map<std::tuple<int, ExpPtr, ExpPtr, bool>, ExpPtr> memo_;  // (keys hold their indices alive)
  std::map<int, ExpPtr> known_;
  mutable std::optional<std::vector<StagedView>> views_;  // (stagedViews)

 public:
  std::set<int> storedRows_;  // row reductions this row pass must write (set by emitKernels)
  std::vector<int> dimsUsed_;
  std::map<std::string, InputUse> inputsUsed_;
  std::set<int> buffersRead_, buffersWritten_, partsUsed_;

 private:
  std::map<int, ExpPtr> dimLen_;
  std::map<std::string, ExpPtr> scalars_;
  std::map<std::string, std::function<ExpPtr(const ExpPtr&)>> vectors_;
  // The element of a whole tile being evaluated (wholeTile): its index, its group's first
  // element and its lane in the group; an input read at `at` is a lane of a vector load.
  struct Group {
    ExpPtr at;
    EWord32 base = EWord32(0u);
    uint32_t lane = 0;
  };
  Group group_;
  std::map<std::string, obsidian::detail::VectorSource> vectorSources_;
  std::map<std::string, std::function<ExpPtr(const ExpPtr&, const ExpPtr&)>> matrices_;
  std::map<int, std::function<ExpPtr(const ExpPtr&)>> reads_;
  std::map<int, std::function<void(const Program<Thread>&, const ExpPtr&, const ExpPtr&)>> writes_;
  std::map<int, ExpPtr> parts_;
  std::map<int, std::function<void(const Program<Thread>&, AtomicOp, const ExpPtr&, const ExpPtr&)>>
      atomics_;
  ExpPtr band_;
  std::vector<ArgRef> args_;
};

}  // namespace

void emitKernels(PlanData& plan) {
  // Which row reductions other passes read (or are outputs): their row pass writes them.
  std::vector<std::unique_ptr<PassEmitter>> emitters;  // (none for an opaque pass)
  for (size_t p = 0; p < plan.passes.size(); ++p) {
    emitters.push_back(opaque(plan.passes[p].layout)
                           ? nullptr
                           : std::make_unique<PassEmitter>(plan, static_cast<int>(p)));
  }
  std::set<int> rowsRead;
  for (size_t p = 0; p < plan.passes.size(); ++p) {
    for (int r : plan.passes[p].reductions) {
      const OpKind op = plan.nodes[r].node->op;
      if (op == OpKind::RowReduce || op == OpKind::SegReduce) emitters[p]->storedRows_.insert(r);
    }
  }
  for (size_t p = 0; p < plan.passes.size(); ++p) {
    if (plan.passes[p].layout == Layout::Sort) {
      planSort(plan, static_cast<int>(p));
    } else if (plan.passes[p].layout == Layout::Call) {
      planCall(plan, static_cast<int>(p));
    } else {
      emitters[p]->collect();
    }
  }
  const auto reads = [&](size_t q, int buffer) {
    if (emitters[q]) return emitters[q]->buffersRead_.count(buffer) > 0;
    const std::vector<ArgRef>& args = plan.passes[q].args;
    return std::any_of(args.begin(), args.end() - 1, [&](const ArgRef& a) {
      return a.kind == ArgRef::Kind::Buffer && a.buffer == buffer;
    });
  };
  // A row reduction is written only if an output or another pass reads its buffer.
  for (size_t p = 0; p < plan.passes.size(); ++p) {
    for (int r : plan.passes[p].reductions) {
      const NodeInfo& n = plan.nodes[r];
      if (n.node->op != OpKind::RowReduce && n.node->op != OpKind::SegReduce) continue;
      bool read = !n.output.empty();
      for (size_t q = 0; q < plan.passes.size(); ++q) {
        read = read || (q != p && reads(q, n.buffer));
      }
      if (!read && plan.passes[p].layout == Layout::RowWarp) {  // (a tile pass writes partials)
        emitters[p]->storedRows_.erase(r);
        emitters[p]->buffersWritten_.erase(n.buffer);
      }
    }
  }
  for (size_t p = 0; p < plan.passes.size(); ++p) {
    Pass& pass = plan.passes[p];
    if (emitters[p]) {
      pass.kernel.emplace(emitters[p]->emit());
      pass.args = emitters[p]->args();
    }
    for (const ArgRef& a : pass.args) {
      if (a.kind == ArgRef::Kind::Buffer) {
        plan.buffers[a.buffer].lastPass = std::max(plan.buffers[a.buffer].lastPass, int(p));
      }
    }
  }
  // A contract's check is read after the last pass: no later buffer may share its memory.
  for (const auto& [contract, check] : plan.checks) {
    plan.buffers[plan.nodes[check].buffer].lastPass = int(plan.passes.size());
  }
}

}  // namespace obsidian::array::detail
