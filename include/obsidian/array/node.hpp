/// Whole-array programs, the graph: one node per operation of the user's program (Accelerate's
/// collective operations, the fusion compiler's script calls). Nodes are immutable and shared;
/// a node's element function is reified once, when the node is made, as an expression over
/// placeholder variables (arg0, arg1, ...; index), so that the planner can inline it anywhere
/// and the plan cache can key on it. The typed front end is array/values.hpp.
/// @file
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "obsidian/exp.hpp"
#include "obsidian/ir.hpp"

namespace obsidian {
class Kernel;
}

namespace obsidian::array {

/// What a value is: one element, a vector, or a row-major matrix.
enum class Shape : uint8_t { Scalar, Vector, Matrix };

/// The operations a node can be.
enum class OpKind : uint8_t {
  Input,          ///< a named input (bound at run): scalar, vector or matrix
  Constant,       ///< a scalar literal (body)
  Map,            ///< elementwise: body over arg0.. (scalars broadcast); any shape
  Generate,       ///< a vector of `length` elements, body over the placeholder `index`
  Gather,         ///< vector: args {src, idx}: src[idx[i]] (0 for idx[i] >= len(src))
  ReplicateRows,  ///< matrix: args {v}: element (r, c) = v[c] (v is one row, repeated)
  ReplicateCols,  ///< matrix: args {u}: element (r, c) = u[r] (u is one column, repeated)
  Transpose,      ///< matrix: args {m}: element (r, c) = m(c, r)
  Reduce,         ///< scalar: args {v}: the fold of every element (body over acc, x)
  RowReduce,      ///< vector: args {m}: one fold per row (body over acc, x)
  ColReduce,      ///< vector: args {m}: one fold per column (body over acc, x)
  SegReduce,      ///< vector: args {v, offsets}: element r folds v[offsets[r] .. offsets[r+1])
  Slice,          ///< vector: args {v}: element i = v[i + a]; length len(v) - a - b
  Shift,          ///< args {v or m}: element i = v[clamp(i + a)] (a matrix: (r + a, c + b))
  Scan,           ///< vector: args {v} or {v, heads}: the inclusive (a == 0) or exclusive
                  ///< (a == 1) scan, restarting where heads[i] != 0 (segmented)
  Permute,        ///< vector: args {defaults, idx, values}: defaults with values[i] combined
                  ///< into element idx[i] by the atomic AtomicOp(a) (idx[i] >= len: dropped)
  Iota,           ///< u32, the shape of args {v}: element i is i (a matrix: r * cols + c)
  Extent,         ///< u32 scalar: args {v}: len(v) (a == 0), rows(v) (a == 1) or cols(v) (a == 2)
  Contract,       ///< args {v, check}: v itself, with `check` (the first element that fails the
                  ///< contract, or ~0u) read after the run; label: the contract's message
  RowOf,          ///< vector: args {m, k}: element j = m(k, j) (0 for k >= rows(m))
  ColumnOf,       ///< vector: args {m, k}: element i = m(i, k) (0 for k >= cols(m))
  Diagonal,       ///< vector: args {m}: element i = m(i, i) (m square)
  Element,        ///< scalar: args {v, k}: v[k] (0 for k >= len(v))
  MatMul,         ///< matrix: args {a, b}: element (r, c) = sum over k of a(r, k) * b(k, c)
  Sort,           ///< vector: args {keys} or {keys, values}: the keys sorted stably by their
                  ///< order-preserving bits (RadixKey), ascending (a == 0) or descending (a == 1);
                  ///< with values, the values in that order
  Reshape,        ///< matrix: args {v}: element (r, c) = v[r * a + c] (a columns; len(v) / a rows)
  Flatten,        ///< vector: args {m}: element i = m(i / cols(m), i % cols(m))
  Call            ///< vector: args {operands}: the user's kernel (Node::kernel) launched with the
                  ///< operands (vectors: arrays it reads; scalars: values) and the result, an
                  ///< array it writes: `length` elements, or (a == 1, elementwise) the operands'
};

/// The name of an operation ("map", "rowReduce", ...), for plans and messages.
const char* opName(OpKind k);

struct Node;
/// A shared, immutable node.
using NodePtr = std::shared_ptr<const Node>;

/// One operation of a whole-array program.
struct Node {
  OpKind op;                  ///< the operation
  Shape shape;                ///< the value's shape
  ScalarType type;            ///< the element type
  std::vector<NodePtr> args;  ///< operands, in order
  std::string name;           ///< Input: the binding's name; any node: a label for reports
  ExpPtr body;                ///< Constant, Map, Generate, reductions (see OpKind)
  ExpPtr identity;            ///< reductions: the operator's identity
  uint32_t length = 0;        ///< Generate: its elements
  std::string label;          ///< what the user called it (reductions: the operator's name)
  int64_t a = 0;              ///< Slice, Shift, Scan, Permute, Extent, Contract: see OpKind
  int64_t b = 0;              ///< Slice, Shift: see OpKind
  std::shared_ptr<const Kernel> kernel = nullptr;  ///< Call: the user's kernel
};

namespace detail {
/// The placeholder of argument k in a Map's body, of type t.
ExpPtr argPlaceholder(ScalarType t, size_t k);
/// The placeholder of the index in a Generate's body.
ExpPtr indexPlaceholder();
/// The placeholders of a reduction's body: the accumulator and the element.
ExpPtr accPlaceholder(ScalarType t);
ExpPtr elemPlaceholder(ScalarType t);
/// The element types the planner's kernels support (u32, i32, u64, f32, f64): an Error naming
/// `who` otherwise.
void checkElementType(ScalarType t, const std::string& who);
/// Builders: each checks its operands' shapes and throws Error naming the operation.
NodePtr makeInput(Shape s, ScalarType t, const std::string& name);
NodePtr makeConstant(ExpPtr literal);
NodePtr makeMap(std::vector<NodePtr> args, ExpPtr body, const std::string& label);
NodePtr makeGenerate(uint32_t length, ExpPtr body);
NodePtr makeGather(NodePtr src, NodePtr idx);
NodePtr makeReplicate(OpKind k, NodePtr v);
NodePtr makeTranspose(NodePtr m);
NodePtr makeReduce(OpKind k, NodePtr in, ExpPtr body, ExpPtr identity, const std::string& label);
NodePtr makeSlice(NodePtr v, uint32_t from, uint32_t trim);
NodePtr makeShift(NodePtr v, int32_t dr, int32_t dc);
NodePtr makeScan(NodePtr v, bool exclusive, ExpPtr body, ExpPtr identity, const std::string& label,
                 NodePtr heads = nullptr);
NodePtr makePermute(NodePtr defaults, NodePtr idx, NodePtr values, AtomicOp op,
                    const std::string& label);
NodePtr makeIota(NodePtr v);
NodePtr makeExtent(NodePtr v, int which);
NodePtr makeContract(NodePtr v, NodePtr check, bool precondition, const std::string& message);
/// RowOf, ColumnOf, Element (k: a u32 scalar) and Diagonal (k: null).
NodePtr makePick(OpKind k, NodePtr from, NodePtr index);
NodePtr makeMatMul(NodePtr a, NodePtr b);
/// Reshape (a vector's elements as rows of `cols` elements) and Flatten (a matrix's elements,
/// row by row).
NodePtr makeReshape(NodePtr v, uint32_t cols);
NodePtr makeFlatten(NodePtr m);
/// Call: the user's kernel k with the operands, its result of type `result` (elementwise: the
/// operands' length; else `length` elements).
NodePtr makeCall(const Kernel& k, std::vector<NodePtr> operands, ScalarType result,
                 bool elementwise, uint32_t length);
/// Sort (values: null for the keys themselves).
NodePtr makeSort(NodePtr keys, NodePtr values, bool descending, const std::string& label);
NodePtr makeSegReduce(NodePtr in, NodePtr offsets, ExpPtr body, ExpPtr identity,
                      const std::string& label);
}  // namespace detail

}  // namespace obsidian::array
