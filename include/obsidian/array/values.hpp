/// Whole-array programs, the values: Scalar<X>, Vector<X> and Matrix<X> (row-major) are lazy
/// handles on graph nodes (array/node.hpp). Building them runs nothing; a Plan (array/plan.hpp)
/// fuses them into kernels and runs them. The operations are Accelerate's and the fusion
/// compiler's: map/zipWith over any Exp function, generate and fill, gather, replicate and
/// outer products, transposed and reshaped views, windows and clamped stencils, scans (whole and
/// segmented), permutes, sorts, and reductions (whole, per row, per column, segmented). Numbers in
/// a program are constants of its kernels: a value that changes between runs is a scalarInput (each
/// new constant plans and compiles the program again, and the cache keeps every plan).
/// @code
///   auto w = vectorInput<float>("w"), v = vectorInput<float>("v"), u = vectorInput<float>("u");
///   auto z = w - 0.75f * v;        // AXPYDOT: z = w - alpha v; r = z . u
///   auto r = dot(z, u);
///   Plan plan({{"z", z}, {"r", r}});
/// @endcode
/// @file
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "obsidian/array/node.hpp"
#include "obsidian/error.hpp"
#include "obsidian/memory_ops.hpp"
#include "obsidian/operators.hpp"

namespace obsidian::array {

/// The element types of array programs.
template <class X>
concept Element = std::is_same_v<X, uint32_t> || std::is_same_v<X, int32_t> ||
    std::is_same_v<X, uint64_t> || std::is_same_v<X, float> || std::is_same_v<X, double>;

/// A lazy value of shape S and element type X.
template <Shape S, Element X>
class Value {
 public:
  using Type = X;                    ///< the element type
  static constexpr Shape shape = S;  ///< its shape
  /// The value of node n (which must have shape S and element type X).
  explicit Value(NodePtr n) : node_(std::move(n)) {}
  /// A scalar constant (Scalar<X> only).
  Value(X literal)  // NOLINT: implicit, so that 0.75f * v works
      requires(S == Shape::Scalar)
      : node_(detail::makeConstant(Exp<X>(literal).node())) {}
  /// Its node.
  const NodePtr& node() const { return node_; }

 private:
  NodePtr node_;
};

template <Element X>
using Scalar = Value<Shape::Scalar, X>;  ///< one element (a host value or a reduction's result)
template <Element X>
using Vector = Value<Shape::Vector, X>;  ///< a vector
template <Element X>
using Matrix = Value<Shape::Matrix, X>;  ///< a row-major matrix (rows x cols with a pitch)

/// scalarInput<X>(name): a scalar given at run (Bindings::scalar).
template <Element X>
Scalar<X> scalarInput(const std::string& name) {
  return Scalar<X>(detail::makeInput(Shape::Scalar, scalarTypeOf<X>, name));
}
/// vectorInput<X>(name): a vector given at run (host or device data).
template <Element X>
Vector<X> vectorInput(const std::string& name) {
  return Vector<X>(detail::makeInput(Shape::Vector, scalarTypeOf<X>, name));
}
/// matrixInput<X>(name): a row-major matrix given at run (rows, cols, pitch and data).
template <Element X>
Matrix<X> matrixInput(const std::string& name) {
  return Matrix<X>(detail::makeInput(Shape::Matrix, scalarTypeOf<X>, name));
}

namespace detail {
template <class T>
struct IsValue : std::false_type {};
template <Shape S, class X>
struct IsValue<Value<S, X>> : std::true_type {};
template <class T>
inline constexpr bool isValue = IsValue<std::remove_cvref_t<T>>::value;

// A value, or a plain number made a constant of element type X.
template <class X, class A>
auto lift(const A& a) {
  if constexpr (isValue<A>) {
    return a;
  } else {
    return Scalar<X>(static_cast<X>(a));
  }
}

// The element type of a value argument (void for a plain number).
template <class A>
struct ElementOf {
  using type = void;
};
template <Shape S, class X>
struct ElementOf<Value<S, X>> {
  using type = X;
};

// The result shape of an elementwise operation: the one non-scalar shape among the operands.
template <class... A>
constexpr Shape mapShape() {
  Shape s = Shape::Scalar;
  ((s = (std::remove_cvref_t<A>::shape != Shape::Scalar ? std::remove_cvref_t<A>::shape : s)), ...);
  return s;
}
template <class... A>
constexpr bool oneShape() {
  constexpr Shape s = mapShape<A...>();
  return ((std::remove_cvref_t<A>::shape == Shape::Scalar || std::remove_cvref_t<A>::shape == s) &&
          ...);
}
}  // namespace detail

/// zipWith(f, a, b, ...): the elementwise f of values of one shape (scalars are broadcast to
/// every element), e.g. zipWith([](EFloat x, EFloat y) { return 2.0f * x + y; }, x, y). f is
/// any function of Exp elements to an Exp; it is reified once, here. Vectors and matrices must
/// agree in length (or rows and cols) at run.
template <class F, class... A>
auto zipWith(F f, const A&... a) {
  static_assert(sizeof...(A) >= 1, "zipWith(f, values...): give at least one value");
  static_assert((detail::isValue<A> && ...),
                "zipWith(f, values...): each operand is a Scalar, Vector or Matrix");
  static_assert(detail::oneShape<A...>(),
                "zipWith(f, values...): a vector and a matrix cannot be zipped; replicate the "
                "vector first (replicateRows, replicateCols)");
  static_assert(std::is_invocable_v<F, Exp<typename A::Type>...>,
                "zipWith(f, values...): f takes one Exp element of each value");
  using R = std::invoke_result_t<F, Exp<typename A::Type>...>;
  static_assert(IsExp<R>::value, "zipWith(f, values...): f returns an Exp");
  using X = typename R::Scalar;
  static_assert(Element<X>, "zipWith(f, values...): f returns an Exp of u32, i32, u64, f32 or f64");
  const R body = [&]<size_t... K>(std::index_sequence<K...>) {
    return f(Exp<typename A::Type>(detail::argPlaceholder(scalarTypeOf<typename A::Type>, K))...);
  }
  (std::index_sequence_for<A...>{});
  return Value<detail::mapShape<A...>(), X>(detail::makeMap({a.node()...}, body.node(), "zipWith"));
}
/// map(f, a): zipWith of one value.
template <class F, class A>
auto map(F f, const A& a) {
  return zipWith(f, a);
}

/// Arithmetic on values, elementwise; a plain number is a constant of the other's type.
#define OBSIDIAN_ARRAY_BINARY(OP)                                                               \
  template <class A, class B>                                                                   \
  requires(detail::isValue<A> || detail::isValue<B>) auto operator OP(const A& a, const B& b) { \
    using X = std::conditional_t<detail::isValue<A>, typename detail::ElementOf<A>::type,       \
                                 typename detail::ElementOf<B>::type>;                          \
    return zipWith([](const Exp<X>& p, const Exp<X>& q) { return p OP q; }, detail::lift<X>(a), \
                   detail::lift<X>(b));                                                         \
  }
OBSIDIAN_ARRAY_BINARY(+)
OBSIDIAN_ARRAY_BINARY(-)
OBSIDIAN_ARRAY_BINARY(*)
OBSIDIAN_ARRAY_BINARY(/)
#undef OBSIDIAN_ARRAY_BINARY
/// -a, elementwise.
template <Shape S, Element X>
Value<S, X> operator-(const Value<S, X>& a) {
  return zipWith([](const Exp<X>& p) { return -p; }, a);
}

/// generate<X>(n, f): the vector of n elements f(i) (f takes an EWord32).
template <Element X, class F>
Vector<X> generate(uint32_t n, F f) {
  static_assert(std::is_invocable_r_v<Exp<X>, F, const EWord32&>,
                "generate<X>(n, f): f takes the index (EWord32) and returns an Exp<X>");
  const Exp<X> body = f(EWord32(detail::indexPlaceholder()));
  return Vector<X>(detail::makeGenerate(n, body.node()));
}
/// fill(n, x): n copies of x, a Scalar (fill<float>(n, 3.0f) for a number).
template <Element X>
Vector<X> fill(uint32_t n, const Scalar<X>& x) {
  const Vector<X> zero = generate<X>(n, [](const EWord32&) { return Exp<X>(X{0}); });
  return zipWith([](const Exp<X>&, const Exp<X>& v) { return v; }, zero, x);
}

/// gather(src, idx): element i is src[idx[i]], or 0 where idx[i] >= len(src) (Accelerate's
/// backpermute; the length is idx's).
template <Element X, class I>
Vector<X> gather(const Vector<X>& src, const Vector<I>& idx) {
  static_assert(std::is_same_v<I, uint32_t>, "gather(src, idx): idx is a Vector<uint32_t>");
  return Vector<X>(detail::makeGather(src.node(), idx.node()));
}

/// replicateRows(v): the matrix whose every row is v (element (r, c) = v[c]); its row count
/// comes from the matrix it is zipped with.
template <Element X>
Matrix<X> replicateRows(const Vector<X>& v) {
  return Matrix<X>(detail::makeReplicate(OpKind::ReplicateRows, v.node()));
}
/// replicateCols(u): the matrix whose every column is u (element (r, c) = u[r]).
template <Element X>
Matrix<X> replicateCols(const Vector<X>& u) {
  return Matrix<X>(detail::makeReplicate(OpKind::ReplicateCols, u.node()));
}
/// outer(u, v): the rank-1 matrix u v^T (element (r, c) = u[r] * v[c]).
template <Element X>
Matrix<X> outer(const Vector<X>& u, const Vector<X>& v) {
  return replicateCols(u) * replicateRows(v);
}
/// transpose(m): the view of m with rows and columns exchanged.
template <Element X>
Matrix<X> transpose(const Matrix<X>& m) {
  return Matrix<X>(detail::makeTranspose(m.node()));
}

/// reshape(v, cols): v's elements as a row-major matrix of `cols` columns, element (r, c) being
/// v[r * cols + c]: len(v) / cols rows (len(v) must be a multiple of cols at run; cols >= 1). A
/// way of reading v, recomputed where it is read (as transpose is).
template <Element X>
Matrix<X> reshape(const Vector<X>& v, uint32_t cols) {
  return Matrix<X>(detail::makeReshape(v.node(), cols));
}
/// flatten(m): m's elements row by row, a vector of rows(m) x cols(m) elements (element i is
/// m(i / cols(m), i % cols(m)); a pitched input's padding is skipped). reshape(flatten(m), k)
/// reshapes a matrix.
template <Element X>
Vector<X> flatten(const Matrix<X>& m) {
  return Vector<X>(detail::makeFlatten(m.node()));
}

/// row(m, k): row k of m, a vector of cols(m) elements (element j is m(k, j)); every element
/// is 0 where k >= rows(m), as a gather past its source. k is a Scalar<uint32_t> (an input, a
/// reduction's result, ...) or a number: a pivot row, read by every element that needs it.
template <Element X, class K>
Vector<X> row(const Matrix<X>& m, const K& k) {
  return Vector<X>(detail::makePick(OpKind::RowOf, m.node(), detail::lift<uint32_t>(k).node()));
}
/// column(m, k): column k of m, a vector of rows(m) elements (element i is m(i, k)); 0 where
/// k >= cols(m).
template <Element X, class K>
Vector<X> column(const Matrix<X>& m, const K& k) {
  return Vector<X>(detail::makePick(OpKind::ColumnOf, m.node(), detail::lift<uint32_t>(k).node()));
}
/// diagonal(m): element i is m(i, i); m must be square (its rows and cols are tied: a run with
/// rows(m) != cols(m) is refused).
template <Element X>
Vector<X> diagonal(const Matrix<X>& m) {
  return Vector<X>(detail::makePick(OpKind::Diagonal, m.node(), nullptr));
}
/// at(v, k): element k of v, a scalar (0 where k >= len(v)); at(row(m, i), j) is m(i, j).
template <Element X, class K>
Scalar<X> at(const Vector<X>& v, const K& k) {
  return Scalar<X>(detail::makePick(OpKind::Element, v.node(), detail::lift<uint32_t>(k).node()));
}
/// matmul(a, b): the rows(a) x cols(b) product, element (r, c) the sum over k < cols(a) of
/// a(r, k) * b(k, c) (cols(a) and rows(b) are tied). Always stored: one thread per element
/// folds a row of a against a column of b, so a and b are read at other indices (an operand
/// made in the program is stored first unless it is a map of inputs).
template <Element X>
Matrix<X> matmul(const Matrix<X>& a, const Matrix<X>& b) {
  return Matrix<X>(detail::makeMatMul(a.node(), b.node()));
}

namespace detail {
template <Element X, class Op>
NodePtr reduceNode(OpKind k, Op f, const NodePtr& in, const char* label) {
  static_assert(std::is_invocable_r_v<Exp<X>, Op, const Exp<X>&, const Exp<X>&>,
                "reduce(f, ...): f combines two Exp elements into one");
  const Exp<X> body =
      f(Exp<X>(accPlaceholder(scalarTypeOf<X>)), Exp<X>(elemPlaceholder(scalarTypeOf<X>)));
  return makeReduce(k, in, body.node(), Exp<X>(Op::template identity<X>()).node(), label);
}
template <class Op>
const char* opLabel() {
  if constexpr (std::is_same_v<Op, Sum>)
    return "sum";
  else if constexpr (std::is_same_v<Op, Min>)
    return "min";
  else if constexpr (std::is_same_v<Op, Max>)
    return "max";
  else
    return "reduce";
}
}  // namespace detail

/// reduce(f, v): the f-fold of every element of v, a Scalar (on the device until read). f is an
/// operator with an identity (Sum, Min, Max, BitAnd, ...), associative and commutative.
template <class Op, Element X>
Scalar<X> reduce(Op f, const Vector<X>& v) {
  return Scalar<X>(detail::reduceNode<X>(OpKind::Reduce, f, v.node(), detail::opLabel<Op>()));
}
/// rowReduce(f, m): one f-fold per row of m (a vector of rows(m) elements).
template <class Op, Element X>
Vector<X> rowReduce(Op f, const Matrix<X>& m) {
  return Vector<X>(detail::reduceNode<X>(OpKind::RowReduce, f, m.node(), detail::opLabel<Op>()));
}
/// colReduce(f, m): one f-fold per column of m (a vector of cols(m) elements).
template <class Op, Element X>
Vector<X> colReduce(Op f, const Matrix<X>& m) {
  return Vector<X>(detail::reduceNode<X>(OpKind::ColReduce, f, m.node(), detail::opLabel<Op>()));
}
/// segmentedReduce(f, v, offsets): one f-fold per segment of v, segment r being the elements
/// offsets[r] .. offsets[r + 1] - 1 (CSR's row offsets: len(offsets) - 1 segments; an empty
/// segment is f's identity). offsets must be non-decreasing and at most len(v) (an element
/// past the end is never read: such a segment stops at len(v)). Segmented reductions over one
/// offsets array take inputs of one length (the pass that folds them is one).
template <class Op, Element X>
Vector<X> segmentedReduce(Op f, const Vector<X>& v, const Vector<uint32_t>& offsets) {
  static_assert(std::is_invocable_r_v<Exp<X>, Op, const Exp<X>&, const Exp<X>&>,
                "segmentedReduce(f, ...): f combines two Exp elements into one");
  const Exp<X> body = f(Exp<X>(detail::accPlaceholder(scalarTypeOf<X>)),
                        Exp<X>(detail::elemPlaceholder(scalarTypeOf<X>)));
  return Vector<X>(detail::makeSegReduce(v.node(), offsets.node(), body.node(),
                                         Exp<X>(Op::template identity<X>()).node(),
                                         detail::opLabel<Op>()));
}
/// spmv(values, columns, offsets, x): the CSR matrix (values, column indices, row offsets)
/// times x: row r is the sum of values[k] * x[columns[k]] over its k (a gather fused into a
/// segmented reduction).
template <Element X>
Vector<X> spmv(const Vector<X>& values, const Vector<uint32_t>& columns,
               const Vector<uint32_t>& offsets, const Vector<X>& x) {
  return segmentedReduce(Sum{}, values * gather(x, columns), offsets);
}
/// slice(v, from, trim): the elements of v from `from` to len(v) - trim - 1 (Barracuda's
/// slices: zipWith over slices of one vector is a 1-D window stencil); its length is
/// len(v) - from - trim, which must not be negative at run.
template <Element X>
Vector<X> slice(const Vector<X>& v, uint32_t from, uint32_t trim) {
  return Vector<X>(detail::makeSlice(v.node(), from, trim));
}
/// shift(v, d): element i is v[i + d], clamped to the vector (the edges repeat): a neighbour
/// of a clamped 1-D stencil.
template <Element X>
Vector<X> shift(const Vector<X>& v, int32_t d) {
  return Vector<X>(detail::makeShift(v.node(), d, 0));
}
/// shift(m, dr, dc): element (r, c) is m(r + dr, c + dc), clamped to the matrix: a neighbour
/// of a clamped 2-D stencil (blur = zipWith over shifts).
template <Element X>
Matrix<X> shift(const Matrix<X>& m, int32_t dr, int32_t dc) {
  return Matrix<X>(detail::makeShift(m.node(), dr, dc));
}

/// window(v, width, f): Barracuda's 1-D window stencil, the vector of len(v) - width + 1
/// elements f(w) where w(k) (k < width) is the window's k-th element: w(k) is the slice of v from
/// k, so f is any function of values (f = [](auto w) { return w(1) - w(0); } is the forward
/// difference; the same generic f serves plain floats in a C++ reference).
template <Element X, class F>
auto window(const Vector<X>& v, uint32_t width, F f) {
  if (width == 0) throw Error("window(v, width, f): the width must be at least 1");
  return f([v, width](uint32_t k) {
    if (k >= width) {
      throw Error("window(v, width, f): f read w(" + std::to_string(k) + ") of a window of " +
                  std::to_string(width));
    }
    return slice(v, k, width - 1 - k);
  });
}
/// stencil(v, f): a clamped 1-D stencil, the vector of len(v) elements f(nb) where nb(d) is the
/// neighbour d away, clamped to the vector (shift(v, d)).
template <Element X, class F>
auto stencil(const Vector<X>& v, F f) {
  return f([v](int32_t d) { return shift(v, d); });
}
/// stencil(m, f): a clamped 2-D stencil, the matrix of m's shape whose element (r, c) is f(nb),
/// nb(dr, dc) the element (r + dr, c + dc) clamped to the matrix (shift(m, dr, dc)): the Jacobi
/// step is f = [](auto nb) { return (nb(-1, 0) + nb(1, 0) + nb(0, -1) + nb(0, 1)) * 0.25f; }.
template <Element X, class F>
auto stencil(const Matrix<X>& m, F f) {
  return f([m](int32_t dr, int32_t dc) { return shift(m, dr, dc); });
}

namespace detail {
template <Element X, class Op>
NodePtr scanNode(Op f, const NodePtr& v, bool exclusive, const NodePtr& heads = nullptr) {
  static_assert(std::is_invocable_r_v<Exp<X>, Op, const Exp<X>&, const Exp<X>&>,
                "scan(f, v): f combines two Exp elements into one");
  const Exp<X> body =
      f(Exp<X>(accPlaceholder(scalarTypeOf<X>)), Exp<X>(elemPlaceholder(scalarTypeOf<X>)));
  return makeScan(v, exclusive, body.node(), Exp<X>(Op::template identity<X>()).node(),
                  opLabel<Op>(), heads);
}
}  // namespace detail
/// inclusiveScan(f, v): element i is v[0] f ... f v[i] (f associative, with an identity).
template <class Op, Element X>
Vector<X> inclusiveScan(Op f, const Vector<X>& v) {
  return Vector<X>(detail::scanNode<X>(f, v.node(), false));
}
/// exclusiveScan(f, v): element 0 is f's identity, element i is v[0] f ... f v[i - 1].
template <class Op, Element X>
Vector<X> exclusiveScan(Op f, const Vector<X>& v) {
  return Vector<X>(detail::scanNode<X>(f, v.node(), true));
}

/// inclusiveScan(f, v, heads): the scan restarting at every segment: element i folds v from the
/// last j <= i with heads[j] != 0 (or from 0) to i (Blelloch's head flags; segmentHeads makes
/// them from CSR offsets). heads has v's length; v's elements are 32-bit (u32, i32, f32).
template <class Op, Element X>
Vector<X> inclusiveScan(Op f, const Vector<X>& v, const Vector<uint32_t>& heads) {
  return Vector<X>(detail::scanNode<X>(f, v.node(), false, heads.node()));
}
/// exclusiveScan(f, v, heads): as inclusiveScan(f, v, heads), each element's own left out: a
/// segment's first element is f's identity.
template <class Op, Element X>
Vector<X> exclusiveScan(Op f, const Vector<X>& v, const Vector<uint32_t>& heads) {
  return Vector<X>(detail::scanNode<X>(f, v.node(), true, heads.node()));
}

namespace detail {
template <class... A>
std::vector<NodePtr> operandNodes(const A&... operands) {
  static_assert((isValue<A> && ...), "call(k, ...): each operand is a Vector or a Scalar value");
  static_assert(((std::remove_cvref_t<A>::shape != Shape::Matrix) && ...),
                "call(k, ...): an operand is a Vector or a Scalar (flatten a matrix first)");
  return {operands.node()...};
}
}  // namespace detail

/// call<X>(k, length, operands...): the user's own captured kernel k (capture) as an operation
/// of the program. k's parameters, in order, are the operands (a Vector: an array k reads, a
/// DPull; a Scalar: a value, a scalarInput or a number made a Scalar) and then the result, an
/// array of X that k writes (a DMutable, or a push array's output): `length` elements (where k
/// ties its output's length to an operand's, another `length` is refused at run by the launch's
/// check; elements k does not write are undefined). k may
/// read its operands anywhere; it runs as a kernel of its own (its vector operands stored
/// first, its readers after it), launched as k itself is (its grid, its checks), and the
/// simulator checks it as it checks any kernel; Plan::exportHeader exports it with its launcher.
/// Each parameter's kind and type is checked when the value is made (an Error naming the
/// parameter).
template <Element X, class... A>
Vector<X> call(const Kernel& k, uint32_t length, const A&... operands) {
  return Vector<X>(
      detail::makeCall(k, detail::operandNodes(operands...), scalarTypeOf<X>, false, length));
}
/// callElementwise<X>(k, operands...): call with k's access declared elementwise: its result
/// has its vector operands' length (one length: the program ties them).
template <Element X, class... A>
Vector<X> callElementwise(const Kernel& k, const A&... operands) {
  return Vector<X>(
      detail::makeCall(k, detail::operandNodes(operands...), scalarTypeOf<X>, true, 0));
}

/// The order of a sort: ascending or descending.
enum class Order : uint8_t { Ascending, Descending };

/// sort(v, order): v's elements sorted, stably, by their order-preserving bits (the device
/// radix sort, device::radixSortKeys): integers by value, floats by value with -0 before +0 and
/// NaNs after +inf (a negative NaN before -inf). A sort is a kernel boundary of its own: it
/// reads its operand stored (an input as it is; a computed vector is stored first) and every
/// reader waits for it.
template <Element X>
Vector<X> sort(const Vector<X>& v, Order order = Order::Ascending) {
  return Vector<X>(detail::makeSort(v.node(), nullptr, order == Order::Descending, "sort"));
}
/// sortByKey(keys, values, order): values moved into the order that sorts keys (as sort(keys)
/// orders them; equal keys keep their values' order). keys and values have one length.
template <Element K, Element V>
Vector<V> sortByKey(const Vector<K>& keys, const Vector<V>& values,
                    Order order = Order::Ascending) {
  return Vector<V>(
      detail::makeSort(keys.node(), values.node(), order == Order::Descending, "sortByKey"));
}
/// permute(f, defaults, idx, values): Accelerate's permute: defaults, with each values[i]
/// combined by f into element idx[i] (destinations at len(defaults) or beyond are dropped; any
/// number may share one). f is an operator with an atomic (Sum, Min, Max, BitAnd, BitOr,
/// BitXor; Min and Max on integers), so the order of the combinations does not matter for
/// integers (a float sum's rounding does depend on it).
template <class Op, Element X>
Vector<X> permute(Op, const Vector<X>& defaults, const Vector<uint32_t>& idx,
                  const Vector<X>& values) {
  constexpr bool integer = std::is_integral_v<X>;
  static_assert(std::is_same_v<Op, Sum> ||
                    (integer && (std::is_same_v<Op, Min> || std::is_same_v<Op, Max> ||
                                 std::is_same_v<Op, BitAnd> || std::is_same_v<Op, BitOr> ||
                                 std::is_same_v<Op, BitXor>)),
                "permute(f, ...): f is an operator with an atomic: Sum, or on integers Min, Max, "
                "BitAnd, BitOr or BitXor");
  const AtomicOp op = std::is_same_v<Op, Sum>      ? AtomicOp::Add
                      : std::is_same_v<Op, Min>    ? AtomicOp::Min
                      : std::is_same_v<Op, Max>    ? AtomicOp::Max
                      : std::is_same_v<Op, BitAnd> ? AtomicOp::And
                      : std::is_same_v<Op, BitOr>  ? AtomicOp::Or
                                                   : AtomicOp::Xor;
  return Vector<X>(
      detail::makePermute(defaults.node(), idx.node(), values.node(), op, atomicOpName(op)));
}
/// histogram(bins, idx): how many elements of idx hold each of 0 .. bins - 1 (others dropped).
inline Vector<uint32_t> histogram(uint32_t bins, const Vector<uint32_t>& idx) {
  const auto zeros = generate<uint32_t>(bins, [](const EWord32&) { return EWord32(0u); });
  return permute(Sum{}, zeros, idx, map([](const EWord32&) { return EWord32(1u); }, idx));
}

/// len(v): v's length, a Scalar<uint32_t> (mean = sum(v) / cast of len(v), a bound, ...).
template <Element X>
Scalar<uint32_t> len(const Vector<X>& v) {
  return Scalar<uint32_t>(detail::makeExtent(v.node(), 0));
}
/// rows(m): m's row count.
template <Element X>
Scalar<uint32_t> rows(const Matrix<X>& m) {
  return Scalar<uint32_t>(detail::makeExtent(m.node(), 1));
}
/// cols(m): m's column count.
template <Element X>
Scalar<uint32_t> cols(const Matrix<X>& m) {
  return Scalar<uint32_t>(detail::makeExtent(m.node(), 2));
}
/// indices(v): element i is i (of a matrix: r * cols + c), as a value of v's shape.
template <Shape S, Element X>
requires(S != Shape::Scalar) Value<S, uint32_t> indices(const Value<S, X>& v) {
  return Value<S, uint32_t>(detail::makeIota(v.node()));
}

/// sortIndices(v, order): the stable permutation that sorts v: element i is the index in v of
/// sort(v, order)'s element i (gather(w, sortIndices(v)) orders w by v; an argsort).
template <Element X>
Vector<uint32_t> sortIndices(const Vector<X>& v, Order order = Order::Ascending) {
  return Vector<uint32_t>(
      detail::makeSort(v.node(), indices(v).node(), order == Order::Descending, "sortIndices"));
}

/// segmentHeads(offsets, v): the head flags of v's CSR segments (segmentedReduce's offsets):
/// element i is 1 where some offsets[r] is i, else 0; v's length (offsets at or past it are
/// dropped).
template <Element X>
Vector<uint32_t> segmentHeads(const Vector<uint32_t>& offsets, const Vector<X>& v) {
  const auto none = map([](const EWord32&) { return EWord32(0u); }, indices(v));
  const auto one = map([](const EWord32&) { return EWord32(1u); }, offsets);
  return permute(BitOr{}, none, offsets, one);
}

namespace detail {
// The contract of `message` on v: the first element (by index) where f fails, ~0u for none,
// computed as a reduction beside v (fused into the pass that computes or reads v).
template <Shape S, Element X, class F>
Value<S, X> contract(const Value<S, X>& v, F f, const std::string& message, bool precondition) {
  static_assert(std::is_invocable_r_v<EBool, F, const Exp<X>&>,
                "require/ensure(v, f, message): f takes an element (Exp) and returns an EBool");
  const auto failing = [f](const Exp<X>& x, const EWord32& i) {
    return ifThenElse(EBool(f(x)), EWord32(~0u), i);
  };
  NodePtr check;
  if constexpr (S == Shape::Scalar) {
    check =
        zipWith([f](const Exp<X>& x) { return ifThenElse(EBool(f(x)), EWord32(~0u), EWord32(0u)); },
                v)
            .node();
  } else if constexpr (S == Shape::Vector) {
    check = reduce(Min{}, zipWith(failing, v, indices(v))).node();
  } else {
    check = reduce(Min{}, rowReduce(Min{}, zipWith(failing, v, indices(v)))).node();
  }
  return Value<S, X>(makeContract(v.node(), check, precondition, message));
}
}  // namespace detail

/// ensure(v, f, message): v with a postcondition (SafeGPU's ensure): every element x of v meets
/// f(x). Checked as the plan runs, by a reduction fused into the pass that computes v (a
/// matrix's, or a row reduction's, takes a kernel more); a
/// violation makes run() throw Error naming `message` and the first failing element (by index).
template <Shape S, Element X, class F>
Value<S, X> ensure(const Value<S, X>& v, F f, const std::string& message) {
  return detail::contract(v, f, message, false);
}
/// require(v, f, message): v with a precondition (SafeGPU's require): every element x of v
/// meets f(x) before it is used. Checked as ensure is, in the pass that first reads v; run()
/// throws Error naming `message` and the first failing element (the outputs are then
/// undefined).
template <Shape S, Element X, class F>
Value<S, X> require(const Value<S, X>& v, F f, const std::string& message) {
  return detail::contract(v, f, message, true);
}

/// sum(v): the sum of v's elements.
template <Element X>
Scalar<X> sum(const Vector<X>& v) {
  return reduce(Sum{}, v);
}
/// dot(a, b): the sum of a[i] * b[i].
template <Element X>
Scalar<X> dot(const Vector<X>& a, const Vector<X>& b) {
  return sum(a * b);
}
/// gemv(A, x): A x (BLAS-2: a row reduction of A times x repeated on every row).
template <Element X>
Vector<X> gemv(const Matrix<X>& a, const Vector<X>& x) {
  return rowReduce(Sum{}, a * replicateRows(x));
}
/// gemvT(A, y): A^T y (a column reduction of A times y repeated on every column).
template <Element X>
Vector<X> gemvT(const Matrix<X>& a, const Vector<X>& y) {
  return colReduce(Sum{}, a * replicateCols(y));
}

/// ger(A, alpha, x, y): the rank-1 update A + alpha x y^T (BLAS-2 GER).
template <Element X>
Matrix<X> ger(const Matrix<X>& a, const Scalar<X>& alpha, const Vector<X>& x, const Vector<X>& y) {
  return a + alpha * outer(x, y);
}
/// ger2(A, u1, v1, u2, v2): the rank-2 update A + u1 v1^T + u2 v2^T (GEMVER's B).
template <Element X>
Matrix<X> ger2(const Matrix<X>& a, const Vector<X>& u1, const Vector<X>& v1, const Vector<X>& u2,
               const Vector<X>& v2) {
  return a + outer(u1, v1) + outer(u2, v2);
}

}  // namespace obsidian::array
