// Whole-array programs, the graph: the node builders (each checks its operands and names the
// operation in its Error), the placeholders element functions are reified over, and the
// structural key the plan cache looks plans up by.
#include <map>
#include <sstream>

#include "array/plan_data.hpp"
#include "ir/identifiers.hpp"
#include "ir/ir_walk.hpp"
#include "ir/print.hpp"
#include "obsidian/kernel.hpp"

namespace obsidian::array {

const char* opName(OpKind k) {
  switch (k) {
    case OpKind::Input: return "input";
    case OpKind::Constant: return "constant";
    case OpKind::Map: return "zipWith";
    case OpKind::Generate: return "generate";
    case OpKind::Gather: return "gather";
    case OpKind::ReplicateRows: return "replicateRows";
    case OpKind::ReplicateCols: return "replicateCols";
    case OpKind::Transpose: return "transpose";
    case OpKind::Reduce: return "reduce";
    case OpKind::RowReduce: return "rowReduce";
    case OpKind::ColReduce: return "colReduce";
    case OpKind::SegReduce: return "segmentedReduce";
    case OpKind::Slice: return "slice";
    case OpKind::Shift: return "shift";
    case OpKind::Scan: return "scan";
    case OpKind::Permute: return "permute";
    case OpKind::Iota: return "iota";
    case OpKind::Extent: return "extent";
    case OpKind::Contract: return "contract";
    case OpKind::RowOf: return "row";
    case OpKind::ColumnOf: return "column";
    case OpKind::Diagonal: return "diagonal";
    case OpKind::Element: return "at";
    case OpKind::MatMul: return "matmul";
    case OpKind::Sort: return "sort";
    case OpKind::Reshape: return "reshape";
    case OpKind::Flatten: return "flatten";
    case OpKind::Call: return "call";
  }
  return "?";
}

namespace detail {

const char* layoutName(Layout l) {
  switch (l) {
    case Layout::Scalar: return "scalar pass";
    case Layout::Vector: return "vector pass";
    case Layout::Matrix: return "matrix pass";
    case Layout::RowWarp: return "row pass";
    case Layout::ColumnBand: return "column pass";
    case Layout::Tile: return "tile pass";
    case Layout::Scan: return "scan pass";
    case Layout::Sort: return "sort pass";
    case Layout::Call: return "call pass";
  }
  return "?";
}

ExpPtr argPlaceholder(ScalarType t, size_t k) {
  return ir::var(t, "obsidian_arg" + std::to_string(k));
}
ExpPtr indexPlaceholder() { return ir::var(ScalarType::U32, "obsidian_index"); }
ExpPtr accPlaceholder(ScalarType t) { return ir::var(t, "obsidian_acc"); }
ExpPtr elemPlaceholder(ScalarType t) { return ir::var(t, "obsidian_elem"); }

void checkElementType(ScalarType t, const std::string& who) {
  switch (t) {
    case ScalarType::U32:
    case ScalarType::I32:
    case ScalarType::U64:
    case ScalarType::F32:
    case ScalarType::F64: return;
    default:
      throw Error(who + ": array programs hold u32, i32, u64, f32 or f64 elements; got " +
                  std::string(scalarInfo(t).cudaName));
  }
}

namespace {
const char* shapeName(Shape s) {
  return s == Shape::Scalar ? "a scalar" : s == Shape::Vector ? "a vector" : "a matrix";
}
void expectShape(const NodePtr& n, Shape s, const std::string& who) {
  if (!n) throw Error(who + ": an operand is an empty value");
  if (n->shape != s) {
    throw Error(who + ": expects " + shapeName(s) + " operand; got " + shapeName(n->shape));
  }
}
// An element function may use only its arguments: an array read (or another capture's
// variable) in it would name an array of no kernel of the plan.
void checkBody(const ExpPtr& body, const std::string& who) {
  const bool foreign = ir::anyNode(body, [](const ExpNode& e) {
    return e.kind == ExpKind::Index || e.kind == ExpKind::ThreadIdx ||
           e.kind == ExpKind::BlockIdx || e.kind == ExpKind::GridDim ||
           (e.kind == ExpKind::Var && e.name.rfind("obsidian_", 0) != 0);
  });
  if (foreign) {
    throw Error(who +
                ": the element function reads something other than its arguments (an array, a "
                "kernel's variable or parameter); array programs' functions are pure functions "
                "of their elements: pass other values as operands");
  }
}
NodePtr make(Node n) { return std::make_shared<const Node>(std::move(n)); }
}  // namespace

NodePtr makeInput(Shape s, ScalarType t, const std::string& name) {
  const std::string who = "array input '" + name + "'";
  checkElementType(t, who);
  if (!ir::isIdentifier(name)) {
    throw Error("array inputs: a name must be a C identifier (letters, digits, _); got '" + name +
                "'");
  }
  if (const auto why = ir::reservedIdentifierReason(name)) {
    throw Error(who + ": the name is " + *why + "; choose another name");
  }
  return make(Node{OpKind::Input, s, t, {}, name, nullptr, nullptr, 0, name});
}

NodePtr makeConstant(ExpPtr literal) {
  checkElementType(literal->type, "array constant");
  return make(Node{
      OpKind::Constant, Shape::Scalar, literal->type, {}, "", literal, nullptr, 0, "constant"});
}

NodePtr makeMap(std::vector<NodePtr> args, ExpPtr body, const std::string& label) {
  Shape s = Shape::Scalar;
  for (const NodePtr& a : args) {
    if (!a) throw Error(label + ": an operand is an empty value");
    if (a->shape != Shape::Scalar) {
      if (s != Shape::Scalar && a->shape != s) {
        throw Error(label + ": operands of one shape (and scalars); got a vector and a matrix");
      }
      s = a->shape;
    }
  }
  checkElementType(body->type, label);
  checkBody(body, label);
  return make(Node{OpKind::Map, s, body->type, std::move(args), "", body, nullptr, 0, label});
}

NodePtr makeGenerate(uint32_t length, ExpPtr body) {
  checkElementType(body->type, "generate");
  checkBody(body, "generate");
  return make(
      Node{OpKind::Generate, Shape::Vector, body->type, {}, "", body, nullptr, length, "generate"});
}

NodePtr makeGather(NodePtr src, NodePtr idx) {
  expectShape(src, Shape::Vector, "gather(src, idx)");
  expectShape(idx, Shape::Vector, "gather(src, idx)");
  if (idx->type != ScalarType::U32) throw Error("gather(src, idx): idx holds u32 indices");
  const ScalarType t = src->type;
  return make(Node{OpKind::Gather,
                   Shape::Vector,
                   t,
                   {std::move(src), std::move(idx)},
                   "",
                   nullptr,
                   nullptr,
                   0,
                   "gather"});
}

NodePtr makeReplicate(OpKind k, NodePtr v) {
  expectShape(v, Shape::Vector, opName(k));
  const ScalarType t = v->type;
  return make(Node{k, Shape::Matrix, t, {std::move(v)}, "", nullptr, nullptr, 0, opName(k)});
}

NodePtr makeTranspose(NodePtr m) {
  expectShape(m, Shape::Matrix, "transpose");
  const ScalarType t = m->type;
  return make(Node{
      OpKind::Transpose, Shape::Matrix, t, {std::move(m)}, "", nullptr, nullptr, 0, "transpose"});
}

NodePtr makeReduce(OpKind k, NodePtr in, ExpPtr body, ExpPtr identity, const std::string& label) {
  const std::string who = std::string(opName(k)) + "(" + label + ")";
  expectShape(in, k == OpKind::Reduce ? Shape::Vector : Shape::Matrix, who);
  checkBody(body, who);
  const Shape s = k == OpKind::Reduce ? Shape::Scalar : Shape::Vector;
  const ScalarType t = in->type;
  return make(Node{k, s, t, {std::move(in)}, "", body, identity, 0, who});
}

NodePtr makeSlice(NodePtr v, uint32_t from, uint32_t trim) {
  expectShape(v, Shape::Vector, "slice");
  const ScalarType t = v->type;
  Node n{OpKind::Slice, Shape::Vector, t, {std::move(v)}, "", nullptr, nullptr, 0, "slice"};
  n.a = from;
  n.b = trim;
  return make(std::move(n));
}

NodePtr makeShift(NodePtr v, int32_t dr, int32_t dc) {
  if (!v) throw Error("shift: an operand is an empty value");
  if (v->shape == Shape::Scalar) throw Error("shift: expects a vector or a matrix; got a scalar");
  if (v->shape == Shape::Vector && dc != 0) throw Error("shift: a vector shifts along one axis");
  const ScalarType t = v->type;
  const Shape s = v->shape;
  Node n{OpKind::Shift, s, t, {std::move(v)}, "", nullptr, nullptr, 0, "shift"};
  n.a = dr;
  n.b = dc;
  return make(std::move(n));
}

NodePtr makeScan(NodePtr v, bool exclusive, ExpPtr body, ExpPtr identity, const std::string& label,
                 NodePtr heads) {
  const std::string who =
      std::string(exclusive ? "exclusiveScan(" : "inclusiveScan(") + label + ")";
  expectShape(v, Shape::Vector, who);
  checkBody(body, who);
  const ScalarType t = v->type;
  std::vector<NodePtr> args = {std::move(v)};
  if (heads) {
    expectShape(heads, Shape::Vector, who);
    if (heads->type != ScalarType::U32) {
      throw Error(who + ": the segments' heads are a Vector<uint32_t>");
    }
    if (sizeOf(t) != 4) {
      throw Error(who + ": a segmented scan takes 32-bit elements (u32, i32 or f32; each is " +
                  "scanned with its head in 64 bits); these are " +
                  std::string(scalarInfo(t).cudaName));
    }
    args.push_back(std::move(heads));
  }
  Node n{OpKind::Scan, Shape::Vector, t, std::move(args), "", body, identity, 0, who};
  n.a = exclusive;
  return make(std::move(n));
}

NodePtr makePermute(NodePtr defaults, NodePtr idx, NodePtr values, AtomicOp op,
                    const std::string& label) {
  const std::string who = "permute(" + label + ")";
  expectShape(defaults, Shape::Vector, who);
  expectShape(idx, Shape::Vector, who);
  expectShape(values, Shape::Vector, who);
  if (idx->type != ScalarType::U32) throw Error(who + ": the destinations are u32 indices");
  if (values->type != defaults->type) {
    throw Error(who + ": the values and the defaults have one element type");
  }
  const ScalarType t = defaults->type;
  Node n{OpKind::Permute,
         Shape::Vector,
         t,
         {std::move(defaults), std::move(idx), std::move(values)},
         "",
         nullptr,
         nullptr,
         0,
         who};
  n.a = static_cast<int64_t>(op);
  return make(std::move(n));
}

NodePtr makeIota(NodePtr v) {
  if (!v) throw Error("indices: an operand is an empty value");
  if (v->shape == Shape::Scalar) throw Error("indices: expects a vector or a matrix; got a scalar");
  const Shape s = v->shape;
  return make(
      Node{OpKind::Iota, s, ScalarType::U32, {std::move(v)}, "", nullptr, nullptr, 0, "indices"});
}

NodePtr makeExtent(NodePtr v, int which) {
  const char* names[] = {"len", "rows", "cols"};
  expectShape(v, which == 0 ? Shape::Vector : Shape::Matrix, names[which]);
  Node n{OpKind::Extent, Shape::Scalar, ScalarType::U32, {std::move(v)}, "", nullptr, nullptr, 0,
         names[which]};
  n.a = which;
  return make(std::move(n));
}

NodePtr makeContract(NodePtr v, NodePtr check, bool precondition, const std::string& message) {
  if (!v || !check) throw Error("require/ensure: an operand is an empty value");
  const ScalarType t = v->type;
  const Shape s = v->shape;
  Node n{OpKind::Contract, s,       t, {std::move(v), std::move(check)},   message,
         nullptr,          nullptr, 0, precondition ? "require" : "ensure"};
  n.a = precondition;
  return make(std::move(n));
}

NodePtr makePick(OpKind k, NodePtr from, NodePtr index) {
  const std::string who = k == OpKind::RowOf      ? "row(m, k)"
                          : k == OpKind::ColumnOf ? "column(m, k)"
                          : k == OpKind::Diagonal ? "diagonal(m)"
                                                  : "at(v, k)";
  expectShape(from, k == OpKind::Element ? Shape::Vector : Shape::Matrix, who);
  std::vector<NodePtr> args = {std::move(from)};
  if (k != OpKind::Diagonal) {
    expectShape(index, Shape::Scalar, who);
    if (index->type != ScalarType::U32) {
      throw Error(who + ": the index k is a Scalar<uint32_t>; got " +
                  std::string(scalarInfo(index->type).cudaName));
    }
    args.push_back(std::move(index));
  }
  const ScalarType t = args[0]->type;
  const Shape s = k == OpKind::Element ? Shape::Scalar : Shape::Vector;
  return make(Node{k, s, t, std::move(args), "", nullptr, nullptr, 0, opName(k)});
}

NodePtr makeMatMul(NodePtr a, NodePtr b) {
  expectShape(a, Shape::Matrix, "matmul(a, b)");
  expectShape(b, Shape::Matrix, "matmul(a, b)");
  if (a->type != b->type) throw Error("matmul(a, b): a and b have one element type");
  const ScalarType t = a->type;
  return make(Node{OpKind::MatMul,
                   Shape::Matrix,
                   t,
                   {std::move(a), std::move(b)},
                   "",
                   nullptr,
                   nullptr,
                   0,
                   "matmul"});
}

NodePtr makeSegReduce(NodePtr in, NodePtr offsets, ExpPtr body, ExpPtr identity,
                      const std::string& label) {
  const std::string who = "segmentedReduce(" + label + ")";
  expectShape(in, Shape::Vector, who);
  expectShape(offsets, Shape::Vector, who);
  if (offsets->type != ScalarType::U32) throw Error(who + ": offsets holds u32 indices");
  checkBody(body, who);
  const ScalarType t = in->type;
  return make(Node{OpKind::SegReduce,
                   Shape::Vector,
                   t,
                   {std::move(in), std::move(offsets)},
                   "",
                   body,
                   identity,
                   0,
                   who});
}

NodePtr makeReshape(NodePtr v, uint32_t cols) {
  expectShape(v, Shape::Vector, "reshape(v, cols)");
  if (cols == 0) throw Error("reshape(v, cols): a row holds at least one element; cols is 0");
  const ScalarType t = v->type;
  Node n{OpKind::Reshape, Shape::Matrix, t, {std::move(v)}, "", nullptr, nullptr, 0, "reshape"};
  n.a = cols;
  return make(std::move(n));
}

NodePtr makeFlatten(NodePtr m) {
  expectShape(m, Shape::Matrix, "flatten(m)");
  const ScalarType t = m->type;
  return make(
      Node{OpKind::Flatten, Shape::Vector, t, {std::move(m)}, "", nullptr, nullptr, 0, "flatten"});
}

NodePtr makeCall(const Kernel& k, std::vector<NodePtr> operands, ScalarType result,
                 bool elementwise, uint32_t length) {
  const std::string who = "call(" + k.name() + ")";
  checkElementType(result, who);
  std::vector<const Param*> params;  // (the ones a launch passes: lengths follow their arrays)
  for (const Param& p : k.params()) {
    if (p.kind != ParamKind::Length) params.push_back(&p);
  }
  if (params.size() != operands.size() + 1) {
    throw Error(who + ": the kernel takes " + std::to_string(params.size()) +
                " argument(s): the operands and then the result it writes; got " +
                std::to_string(operands.size()) + " operand(s)");
  }
  const auto writes = [&](const Param& p) {
    return p.kind == ParamKind::Array && (p.output || k.ir().arrays[p.array].writable);
  };
  bool vectors = false;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Param& p = *params[i];
    const NodePtr& a = operands[i];
    if (!a) throw Error(who + ": operand " + std::to_string(i) + " is an empty value");
    const std::string which = who + ": parameter " + std::to_string(i) + " (" + p.name + ") ";
    const bool array = a->shape == Shape::Vector;
    vectors = vectors || array;
    if ((p.kind == ParamKind::Array) != array || p.type != a->type) {
      throw Error(
          which + "is " + (p.kind == ParamKind::Array ? "an array of " : "a scalar of type ") +
          std::string(scalarInfo(p.type).cudaName) + "; operand " + std::to_string(i) + " is " +
          shapeName(a->shape) + " of " + std::string(scalarInfo(a->type).cudaName));
    }
    if (writes(p)) {
      throw Error(which +
                  "is an array the kernel writes; an operand is only read (the result "
                  "is the last parameter)");
    }
    if (!array && a->op != OpKind::Input && a->op != OpKind::Constant) {
      throw Error(which +
                  "is a scalar: pass a scalarInput or a number (a computed scalar is on "
                  "the device: pass it as a vector of one element, e.g. fill(1, s))");
    }
  }
  const Param& last = *params.back();
  if (!writes(last) || last.type != result) {
    throw Error(who + ": its last parameter (" + last.name + ") is the result: an array of " +
                std::string(scalarInfo(result).cudaName) + " the kernel writes");
  }
  if (elementwise && !vectors) {
    throw Error(who + ": an elementwise kernel has a vector operand (its result's length)");
  }
  Node n{OpKind::Call, Shape::Vector, result,  std::move(operands),
         "",           nullptr,       nullptr, elementwise ? 0 : length,
         who};
  n.a = elementwise;
  n.kernel = std::make_shared<const Kernel>(k);
  return make(std::move(n));
}

NodePtr makeSort(NodePtr keys, NodePtr values, bool descending, const std::string& label) {
  expectShape(keys, Shape::Vector, label);
  std::vector<NodePtr> args = {std::move(keys)};
  ScalarType t = args[0]->type;
  if (values) {
    expectShape(values, Shape::Vector, label);
    t = values->type;
    args.push_back(std::move(values));
  }
  Node n{OpKind::Sort, Shape::Vector, t, std::move(args), "", nullptr, nullptr, 0, label};
  n.a = descending;
  return make(std::move(n));
}

std::string describe(const PlanData& plan, int node) {
  const NodeInfo& n = plan.nodes[node];
  if (n.node->op == OpKind::Input) return n.node->name;
  const std::string base = n.node->label + "#" + std::to_string(node);
  return n.output.empty() ? base : n.output + " = " + base;
}

std::string structuralKey(const std::vector<Output>& outputs, const PlanOptions& o) {
  std::ostringstream key;
  // Text the user wrote (names, labels, contract messages, choices) by its length first, so
  // that no text can read as another field: two programs never share a key.
  const auto text = [](const std::string& t) { return std::to_string(t.size()) + ":" + t; };
  key << (o.fuse ? "fuse " : "nofuse ") << o.target.key() << " t" << o.threads << " i" << o.items
      << " u" << o.unroll << " sl" << o.segmentLanes << " ri" << o.reduceItems << " sms"
      << o.target.smCount;
  for (const auto& [name, side] : o.choices) key << " [" << text(name) << "=" << side << "]";
  key << " b" << o.band << " g" << o.blocks << "\n";
  std::map<const Node*, size_t> ids;
  const std::vector<ArrayDecl> none;
  // Post-order numbering; each node by its fields and its operands' numbers.
  std::function<size_t(const NodePtr&)> visit = [&](const NodePtr& n) -> size_t {
    if (const auto it = ids.find(n.get()); it != ids.end()) return it->second;
    std::vector<size_t> args;
    for (const NodePtr& a : n->args) args.push_back(visit(a));
    const size_t id = ids.size();
    ids[n.get()] = id;
    key << id << ": " << opName(n->op) << " " << int(n->shape) << " "
        << std::string(scalarInfo(n->type).cudaName) << " " << text(n->name) << " "
        << text(n->label) << " " << n->length << " " << n->a << " " << n->b << " "
        << (n->kernel ? n->kernel->id() : 0) << " (";
    for (size_t a : args) key << a << " ";
    key << ") " << (n->body ? ir::printExp(n->body, none) : "") << " | "
        << (n->identity ? ir::printExp(n->identity, none) : "") << "\n";
    return id;
  };
  for (const Output& out : outputs) {
    const size_t id = visit(out.node);
    key << "out " << text(out.name) << " = " << id << "\n";
  }
  return key.str();
}

}  // namespace detail
}  // namespace obsidian::array
