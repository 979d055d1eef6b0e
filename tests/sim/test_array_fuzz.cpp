// Whole-array programs (obsidian/array.hpp), fuzzed differentially on the simulator: random
// programs (DAGs of up to 12 operations over vectors of two length classes, a pitched matrix,
// scalars and constants, with values shared between operations) planned with fusion, planned
// without it, and evaluated by plain C++ alongside their construction must agree: bit for bit on
// u32 and i32 elements (wrap-around arithmetic, so the order of summation does not matter), within
// 1e-4 of the sum of magnitudes on f32. A simulated race or out-of-bounds access (an Error), a
// mismatch, or a fused plan with more kernels or bytes than the unfused one fails the test with
// the program printed as C++ and the fused plan's report.
// Drawn: zipWith (1-3 operands, scalars broadcast, replicateRows/Cols), scalar arithmetic,
// generate, fill, gather, outer, transpose, reduce, rowReduce, colReduce, gemv, gemvT, dot,
// segmentedReduce (Sum, Min, Max over non-decreasing CSR offsets, an input or the exclusive scan
// of counts: empty segments, no segments, offsets short of the end), inclusiveScan and
// exclusiveScan (Sum, Min, Max; one in five segmented, the heads segmentHeads of offsets, an
// input of none, some or all heads, a function of the index, or any u32 vector of the length),
// segmentHeads, slice (empty ones too), shift (1-D and 2-D, past either edge), row, column and
// at (the place a number, now and then past the end, or a u32 scalar), diagonal, matmul,
// permute (Sum; on integers also Min, Max, BitAnd, BitOr, BitXor; some destinations dropped),
// sort, sortByKey and sortIndices (ascending or descending; keys of the element type or, in i32
// and f32 programs, u32 index vectors; f32 keys only values the reference holds exactly: inputs
// and what sorts move of them), indices, len, rows, cols, reshape (the cols a divisor of the
// length, any for an empty vector: matrices of new shapes) and flatten (a pitched input's padding
// skipped; where the result's length would be tied to a length it is made from, which the planner
// refuses, a colReduce or reduce of it instead), the user's own captured kernels as operations
// (rarely: callElementwise of userAxpy, alpha * x + y, its alpha a scalar input or a number;
// call of userReverse, a kernel reading anywhere, of its operand's length), and require / ensure
// contracts that hold.
// Lengths are odd (1, 7, 31, 33, 300, 1000, 1031, 4097 and what slices, segments, reshapes and
// flattens make of them, 0 included). A second test case draws contracts that fail and programs
// the planner must refuse at run (a slice longer than its vector, segmented reductions of one
// offsets array over two lengths, no offsets at all, a segmented scan's heads of another length,
// a reshape of a vector that is not whole rows): each an obsidian::Error naming the contract or
// the rule.
// OBSIDIAN_ARRAY_FUZZ_FIRST and OBSIDIAN_ARRAY_FUZZ_COUNT choose other programs (by index; 0 and
// 150 by default), OBSIDIAN_ARRAY_FUZZ_PROGRAMS a list of them ("4,568"), and
// OBSIDIAN_ARRAY_FUZZ_TIME prints each program's time, OBSIDIAN_ARRAY_FUZZ_PRINT each program;
// OBSIDIAN_ARRAY_FUZZ_OPS sets the most operations a program draws (12 by default), and
// OBSIDIAN_ARRAY_FUZZ_FLIP runs a third plan, every decision of the fusion space flipped.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <obsidian/array.hpp>
#include <obsidian/capture.hpp>
#include <obsidian/pull.hpp>
#include <obsidian/push.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "../select_support.hpp"

using namespace obsidian;
using namespace obsidian::array;

namespace {

// ---------------------------------------------------------------- reference numbers

// An integer element of the reference: two's-complement wrap-around, as the device computes.
template <class X>
struct IntRef {
  X v{};
  IntRef() = default;
  explicit IntRef(X x) : v(x) {}
  static IntRef wrap(uint32_t w) { return IntRef(static_cast<X>(w)); }
  static uint32_t w(IntRef a) { return static_cast<uint32_t>(a.v); }
  friend IntRef operator+(IntRef a, IntRef b) { return wrap(w(a) + w(b)); }
  friend IntRef operator-(IntRef a, IntRef b) { return wrap(w(a) - w(b)); }
  friend IntRef operator*(IntRef a, IntRef b) { return wrap(w(a) * w(b)); }
  friend IntRef operator-(IntRef a) { return wrap(0u - w(a)); }
  friend IntRef min(IntRef a, IntRef b) { return IntRef(std::min(a.v, b.v)); }
  friend IntRef max(IntRef a, IntRef b) { return IntRef(std::max(a.v, b.v)); }
  friend IntRef operator&(IntRef a, IntRef b) { return wrap(w(a) & w(b)); }
  friend IntRef operator|(IntRef a, IntRef b) { return wrap(w(a) | w(b)); }
  friend IntRef operator^(IntRef a, IntRef b) { return wrap(w(a) ^ w(b)); }
};

// A float element of the reference: its value in double and the sum of the magnitudes that made
// it (the scale of the rounding error any order of evaluation in f32 may make). A Min or Max
// identity is an infinity of magnitude 0 (compared exactly); a NaN makes the magnitude infinite,
// which every later operation keeps: such elements are not compared (fminf and std::min treat
// NaNs differently).
struct FloatRef {
  double v = 0, m = 0;
  FloatRef() = default;
  explicit FloatRef(float x) : v(x), m(std::fabs(double(x))) {}
  static FloatRef make(double v, double m) {
    FloatRef r;
    r.v = v;
    r.m = std::isnan(v) ? HUGE_VAL : m;
    return r;
  }
  friend FloatRef operator+(FloatRef a, FloatRef b) { return make(a.v + b.v, a.m + b.m); }
  friend FloatRef operator-(FloatRef a, FloatRef b) { return make(a.v - b.v, a.m + b.m); }
  friend FloatRef operator*(FloatRef a, FloatRef b) {
    // (inf * 0 would make the magnitude NaN, which std::max then drops)
    const bool unknown = std::isinf(a.m) || std::isinf(b.m);
    return make(a.v * b.v, unknown ? HUGE_VAL : a.m * b.m);
  }
  friend FloatRef operator-(FloatRef a) { return make(-a.v, a.m); }
  friend FloatRef min(FloatRef a, FloatRef b) {
    return make(std::min(a.v, b.v), std::max(a.m, b.m));
  }
  friend FloatRef max(FloatRef a, FloatRef b) {
    return make(std::max(a.v, b.v), std::max(a.m, b.m));
  }
};

template <class X>
using RefOf = std::conditional_t<std::is_floating_point_v<X>, FloatRef, IntRef<X>>;

template <class X>
const char* typeName() {
  if constexpr (std::is_same_v<X, uint32_t>)
    return "uint32_t";
  else if constexpr (std::is_same_v<X, int32_t>)
    return "int32_t";
  else
    return "float";
}

// A literal of X as C++ source.
template <class X>
std::string literal(X x) {
  std::ostringstream s;
  if constexpr (std::is_same_v<X, uint32_t>)
    s << x << "u";
  else if constexpr (std::is_same_v<X, int32_t>)
    s << x;
  else
    s << std::showpoint << x << "f";
  return s.str();
}

// ---------------------------------------------------------------- the menus

const char* const kBinName[] = {"+", "-", "*", "min", "max"};
constexpr uint32_t kBinOps = 5, kUnOps = 4, kGenFns = 3, kIndexFns = 4;

// Binary operation `op` of the menu, on Exp elements and reference elements alike.
template <class E>
E bin(uint32_t op, const E& a, const E& b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return min(a, b);
    default: return max(a, b);
  }
}
std::string binText(uint32_t op, const std::string& a, const std::string& b) {
  if (op >= 3) return std::string(kBinName[op]) + "(" + a + ", " + b + ")";
  return "(" + a + " " + kBinName[op] + " " + b + ")";
}

// Unary operation `op` of the menu.
template <class X, class E>
E un(uint32_t op, const E& a) {
  switch (op) {
    case 0: return -a;
    case 1: return a * a;
    case 2: return a + E(X(3));
    default: return max(a, E(X(2)));
  }
}
template <class X>
std::string unText(uint32_t op, const std::string& a) {
  switch (op) {
    case 0: return "-" + a;
    case 1: return a + " * " + a;
    case 2: return a + " + " + literal(X(3));
    default: return "max(" + a + ", " + literal(X(2)) + ")";
  }
}

// The element function of a zipWith of 1-3 operands: un(u, a), bin(o1, a, b) or
// bin(o2, bin(o1, a, b), c).
template <class X>
struct ZipFn {
  uint32_t u = 0, o1 = 0, o2 = 0;
  template <class E>
  E operator()(const E& a) const {
    return un<X>(u, a);
  }
  template <class E>
  E operator()(const E& a, const E& b) const {
    return bin(o1, a, b);
  }
  template <class E>
  E operator()(const E& a, const E& b, const E& c) const {
    return bin(o2, bin(o1, a, b), c);
  }
  std::string text(size_t arity) const {
    if (arity == 1) return "[](auto a) { return " + unText<X>(u, "a") + "; }";
    if (arity == 2) return "[](auto a, auto b) { return " + binText(o1, "a", "b") + "; }";
    return "[](auto a, auto b, auto c) { return " + binText(o2, binText(o1, "a", "b"), "c") + "; }";
  }
};

// Index functions of generate: i, i * 3 + 1, i % 5 and (index vectors only) len + 1 - i.
uint32_t indexFn(uint32_t f, uint32_t len, uint32_t i) {
  switch (f) {
    case 0: return i;
    case 1: return i * 3u + 1u;
    case 2: return i % 5u;
    default: return len + 1u - i;
  }
}
EWord32 indexFn(uint32_t f, uint32_t len, const EWord32& i) {
  switch (f) {
    case 0: return i;
    case 1: return i * 3u + 1u;
    case 2: return i % 5u;
    default: return EWord32(len + 1u) - i;
  }
}
std::string indexFnText(uint32_t f, uint32_t len) {
  switch (f) {
    case 0: return "i";
    case 1: return "i * 3u + 1u";
    case 2: return "i % 5u";
    default: return "EWord32(" + std::to_string(len + 1u) + "u) - i";
  }
}

// The user's own kernels (obsidian::capture), one of each per element type, drawn by call and
// callElementwise. userAxpy<X>(): alpha * x + y, elementwise.
template <class X>
const Kernel& userAxpy() {
  static const Kernel k =
      capture(std::string("userAxpy_") + typeName<X>(), 128,
              [](Exp<X> alpha, DPull<Exp<X>> x, DPull<Exp<X>> y) {
                return push<Grid>(zipWith(
                    [alpha](const Exp<X>& a, const Exp<X>& b) { return alpha * a + b; }, x, y));
              });
  return k;
}
// userReverse<X>(): element i is x[len(x) - 1 - i] (reads anywhere).
template <class X>
const Kernel& userReverse() {
  static const Kernel k =
      capture(std::string("userReverse_") + typeName<X>(), 64, [](DPull<Exp<X>> x) {
        return push<Grid>(ixMap([n = len(x)](const EWord32& i) { return n - 1u - i; }, x));
      });
  return k;
}

template <class... A>
constexpr bool oneShapeOf() {
  bool v = false, m = false;
  ((v = v || std::remove_cvref_t<A>::shape == Shape::Vector,
    m = m || std::remove_cvref_t<A>::shape == Shape::Matrix),
   ...);
  return !(v && m);
}

uint32_t envOr(const char* name, uint32_t fallback) {
  const char* v = std::getenv(name);
  return v ? static_cast<uint32_t>(std::strtoul(v, nullptr, 10)) : fallback;
}

// ---------------------------------------------------------------- a random program

enum class Kind { Input, Constant, Computed };

template <class X>
class Program {
 public:
  using R = RefOf<X>;
  using Any = std::variant<Scalar<X>, Vector<X>, Matrix<X>>;

  // A value of the program: its node, shape, extents and reference elements (a matrix's dense,
  // row-major).
  struct Val {
    std::string name;
    Kind kind;
    Shape shape;
    NodePtr node;
    uint32_t rows = 0, cols = 0;  // vector: rows is its length
    std::vector<R> ref;
    // f32: the reference is the device's value exactly (an input, what a sort moves of one, or
    // sortIndices cast to f32): what f32 sorts take as keys.
    bool exact = false;
  };
  // A u32 index vector (gather's idx) of a program whose elements are not u32.
  struct Index {
    std::string name;
    NodePtr node;
    std::vector<uint32_t> ref;
  };
  // CSR offsets (segmentedReduce's) into vectors of `target` elements.
  struct Offsets {
    std::string name;
    NodePtr node;
    std::vector<uint32_t> ref;
    uint32_t target;
  };

  // failing: with a contract that fails (an output), failure() naming it.
  explicit Program(uint32_t seed, bool failing = false) : rng_(seed), callRng_(seed ^ 0xca11ca11u) {
    static const uint32_t kN[] = {1, 7, 31, 33, 300, 1000, 1031, 4097}, kM[] = {1, 5, 17, 64, 131};
    n_ = kN[below(8)];
    // (a 4097-column matrix of 17 rows or more is slow to simulate)
    m_ = chance(20) ? std::min(n_, 1031u) : kM[below(n_ > 1031 ? 2 : 5)];
    inputs();
    const uint32_t ops =
        1 + below(failing ? 5 : std::max(1u, envOr("OBSIDIAN_ARRAY_FUZZ_OPS", 12)));
    for (uint32_t k = 0; k < ops || computed_ == 0; ++k) {
      for (int attempt = 0; attempt < 50 && !step(); ++attempt) {
      }
    }
    for (int attempt = 0; failing && attempt < 200 && failure_.empty(); ++attempt) {
      if (!contractOp(true) && attempt % 10 == 9) zip(Shape::Vector);  // (other values to try)
    }
    pickOutputs();
    // Half the programs run with other launch shapes (the same for both plans): small blocks
    // and few items make more blocks, so more values cross blocks.
    std::mt19937 o(seed ^ 0x0badc0deu);
    if (o() % 2) {
      options_.threads = 32u << (o() % 4);
      options_.items = 1u + o() % 4;
      options_.band = o() % 2 ? 0 : 1 + o() % 16;
      options_.blocks = o() % 2 ? 0 : 1 + o() % 4;
      // (lanes a CSR segment takes, loads in flight in row and column passes, whole
      // reductions' items)
      options_.segmentLanes = 1u << (o() % 6);
      options_.unroll = 1u + o() % 16;
      options_.reduceItems = 1u + o() % 16;
    }
  }

  // ---------------------------------------------------------------- running

  struct Result {
    std::string error;
    bool obsidianError = false;  // the error was an obsidian::Error
    std::map<std::string, std::vector<X>> out;
    size_t kernels = 0;
    PlanReport report;
    std::string reportText;
    double spaceBytes = 0;  // planned: the fewest bytes of a plan in the fusion space
  };

  // Runs the program on the simulator, planned with fusion or without.
  // flip: fused, with every decision of the fusion space on its other side.
  Result run(bool fuse, bool flip = false) const {
    Result r;
    std::vector<Output> outs;
    for (size_t k : outputs_) {
      std::visit([&](const auto& v) { outs.emplace_back("o_" + vals_[k].name, v); },
                 typed(vals_[k]));
    }
    try {
      PlanOptions o = options_;
      o.fuse = fuse;
      if (flip) {
        for (const auto& [name, side] : Plan(outs, o).choices()) o.choices[name] = !side;
      }
      const Plan plan(outs, o);
      r.kernels = plan.kernelCount();
      Bindings b;
      bindInputs(b);
      for (size_t k : outputs_) {
        auto& v = r.out["o_" + vals_[k].name];
        v.assign(vals_[k].ref.size(), sentinel());
        b.output("o_" + vals_[k].name, v);
      }
      try {
        r.report = plan.report(b);
        r.reportText = r.report.str();
        if (fuse) {
          r.spaceBytes = r.report.bytes;
          for (const Alternative& a : fusionSpace(outs, o, b)) {
            r.spaceBytes = std::min(r.spaceBytes, a.bytes);
          }
        }
      } catch (const std::exception& e) {
        r.reportText = std::string("report() threw: ") + e.what();
      }
      plan.run(b);
    } catch (const Error& e) {
      r.error = e.what();
      r.obsidianError = true;
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    return r;
  }

  // The program as C++ source.
  std::string text() const {
    std::ostringstream s;
    s << "// " << typeName<X>() << " elements; n = " << n_ << ", m = " << m_ << "\n";
    for (const auto& [name, m] : mats_) {
      s << "// " << name << ": " << m.rows << " x " << m.cols << ", pitch " << m.pitch << "\n";
    }
    for (const std::string& line : code_) s << line << "\n";
    s << "PlanOptions o;\no.threads = " << options_.threads << ";\no.items = " << options_.items
      << ";\no.band = " << options_.band << ";\no.blocks = " << options_.blocks
      << ";\no.segmentLanes = " << options_.segmentLanes << ";\no.unroll = " << options_.unroll
      << ";\no.reduceItems = " << options_.reduceItems << ";\n";
    s << "Plan plan({";
    for (size_t k = 0; k < outputs_.size(); ++k) {
      s << (k ? ", " : "") << "{\"o_" << vals_[outputs_[k]].name << "\", "
        << vals_[outputs_[k]].name << "}";
    }
    s << "}, o);\n";
    return s.str();
  }

  // What differs between `got` (planned with fuse or not) and the reference: empty if nothing.
  std::string compare(const Result& got, const char* which) const {
    if (!got.error.empty()) return std::string(which) + " plan threw: " + got.error + "\n";
    std::ostringstream s;
    for (size_t k : outputs_) {
      const Val& v = vals_[k];
      const std::vector<X>& out = got.out.at("o_" + v.name);
      size_t bad = 0, first = 0;
      for (size_t i = 0; i < v.ref.size(); ++i) {
        if (!same(out[i], v.ref[i])) {
          if (bad++ == 0) first = i;
        }
      }
      if (bad) {
        s << which << ": output o_" << v.name << " (" << shapeText(v) << "): " << bad << " of "
          << v.ref.size() << " elements differ; first at " << where(v, first) << ": got "
          << out[first] << ", want " << refText(v.ref[first]) << "\n";
      }
    }
    return s.str();
  }

  // The first element where the planned and unfused results differ (u32, i32: bit for bit).
  std::string compareRuns(const Result& a, const Result& b) const {
    if (!a.error.empty() || !b.error.empty()) return "";
    std::ostringstream s;
    for (size_t k : outputs_) {
      const Val& v = vals_[k];
      const std::vector<X>& x = a.out.at("o_" + v.name);
      const std::vector<X>& y = b.out.at("o_" + v.name);
      for (size_t i = 0; i < x.size(); ++i) {
        if (!std::is_floating_point_v<X> && x[i] != y[i]) {
          s << "planned vs unfused: output o_" << v.name << " first differs at " << where(v, i)
            << ": planned " << x[i] << ", unfused " << y[i] << "\n";
          break;
        }
      }
    }
    return s.str();
  }

  size_t operations() const { return code_.size(); }
  // What run() must throw (a failing contract's message): empty if nothing.
  const std::string& failure() const { return failure_; }

 private:
  // ---------------------------------------------------------------- random choices
  uint32_t below(uint32_t k) { return static_cast<uint32_t>(rng_() % k); }
  bool chance(uint32_t percent) { return below(100) < percent; }

  X randomElement(bool small) {
    if constexpr (std::is_same_v<X, float>) {
      (void)small;
      return static_cast<float>(static_cast<double>(rng_()) / 4294967296.0 * 2.0 - 1.0);
    } else if constexpr (std::is_same_v<X, int32_t>) {
      return small ? static_cast<int32_t>(below(101)) - 50 : static_cast<int32_t>(rng_());
    } else {
      return small ? below(100) : static_cast<uint32_t>(rng_());
    }
  }

  static X sentinel() {
    if constexpr (std::is_same_v<X, float>)
      return std::nanf("");
    else
      return static_cast<X>(0xdeadbeefu);
  }
  static bool same(X got, const R& want) {
    if constexpr (std::is_same_v<X, float>) {
      if (!std::isfinite(want.m) || want.m > 1e30) return true;  // overflowed: not compared
      if (std::isinf(want.v)) return double(got) == want.v;      // an identity: exact
      return std::fabs(double(got) - want.v) <= 1e-4 * want.m + 1e-30;
    } else {
      return got == want.v;
    }
  }
  static std::string refText(const R& r) {
    std::ostringstream s;
    if constexpr (std::is_same_v<X, float>)
      s << r.v << " (magnitude " << r.m << ")";
    else
      s << r.v;
    return s.str();
  }
  static std::string shapeText(const Val& v) {
    if (v.shape == Shape::Scalar) return "scalar";
    if (v.shape == Shape::Vector) return "vector[" + std::to_string(v.rows) + "]";
    return "matrix " + std::to_string(v.rows) + " x " + std::to_string(v.cols);
  }
  static std::string where(const Val& v, size_t i) {
    if (v.shape == Shape::Matrix) {
      return "(" + std::to_string(i / v.cols) + ", " + std::to_string(i % v.cols) + ")";
    }
    return "[" + std::to_string(i) + "]";
  }

  // A value index satisfying `ok`, computed ones preferred; -1 if none.
  template <class P>
  int pick(P ok, bool preferComputed = true) {
    std::vector<int> all, computed;
    for (size_t k = 0; k < vals_.size(); ++k) {
      if (!ok(vals_[k])) continue;
      all.push_back(static_cast<int>(k));
      if (vals_[k].kind == Kind::Computed) computed.push_back(static_cast<int>(k));
    }
    if (all.empty()) return -1;
    if (preferComputed && !computed.empty() && chance(60)) return computed[below(computed.size())];
    return all[below(all.size())];
  }
  int pickVector(int len = -1) {
    return pick([&](const Val& v) {
      return v.shape == Shape::Vector && (len < 0 || v.rows == static_cast<uint32_t>(len));
    });
  }
  int pickMatrix() {
    return pick([](const Val& v) { return v.shape == Shape::Matrix; });
  }
  int pickScalar() {
    return pick([](const Val& v) { return v.shape == Shape::Scalar; });
  }

  static Any typed(const Val& v) {
    if (v.shape == Shape::Scalar) return Scalar<X>(v.node);
    if (v.shape == Shape::Vector) return Vector<X>(v.node);
    return Matrix<X>(v.node);
  }
  Vector<X> vec(int k) const { return Vector<X>(vals_[k].node); }
  Matrix<X> mat(int k) const { return Matrix<X>(vals_[k].node); }
  Scalar<X> sca(int k) const { return Scalar<X>(vals_[k].node); }

  // A u32 program's input vector of indices (offsets, heads): a value other operations use.
  void addIndexInput(const std::string& name, const NodePtr& node,
                     const std::vector<uint32_t>& ref) {
    Val v;
    v.name = name;
    v.kind = Kind::Input;
    v.shape = Shape::Vector;
    v.node = node;
    v.rows = static_cast<uint32_t>(ref.size());
    for (uint32_t x : ref) v.ref.push_back(R(x));
    vals_.push_back(std::move(v));
  }

  // Adds a computed value.
  void add(const std::string& rhs, Shape shape, NodePtr node, uint32_t rows, uint32_t cols,
           std::vector<R> ref) {
    Val v;
    v.name = "t" + std::to_string(++computed_);
    v.kind = Kind::Computed;
    v.shape = shape;
    v.node = std::move(node);
    v.rows = rows;
    v.cols = cols;
    v.ref = std::move(ref);
    code_.push_back("const auto " + v.name + " = " + rhs + ";  // " + shapeText(v));
    vals_.push_back(std::move(v));
  }

  // Lengths made from lengths. The planner ties extents whatever their sizes (a zipWith its
  // operands', a rowReduce's length the rows, ...) and refuses a length defined from others (a
  // slice's and a segmentedReduce's segments: less some elements; a reshape's rows: divided; a
  // flatten's: a product) that is tied back to one it is made from: flatten(reshape(v, 4)) + v,
  // flatten(m) + column(m, 0) with m of one column, reshape(v, 1) read with v. The fuzz ties any
  // extents of one size, so it keeps which sizes are made from which (all extents of a tie have
  // one size) and draws a definition only where no size would be made from itself. (Slices and
  // segments only shrink: alone they close no cycle; with a flatten's products they could.)

  // Whether size `d` is `from` or made from it through definitions.
  bool madeFrom(uint32_t d, uint32_t from) const {
    std::vector<uint32_t> todo = {d};
    std::set<uint32_t> seen;
    while (!todo.empty()) {
      const uint32_t x = todo.back();
      todo.pop_back();
      if (x == from) return true;
      if (!seen.insert(x).second) continue;
      if (const auto it = madeFrom_.find(x); it != madeFrom_.end()) {
        todo.insert(todo.end(), it->second.begin(), it->second.end());
      }
    }
    return false;
  }
  // Records size `d` made from `sources`; false (nothing recorded) where one is d or made from it.
  bool define(uint32_t d, std::initializer_list<uint32_t> sources) {
    for (const uint32_t s : sources) {
      if (madeFrom(s, d)) return false;
    }
    madeFrom_[d].insert(sources.begin(), sources.end());
    return true;
  }

  // ---------------------------------------------------------------- inputs
  void vectorIn(const std::string& name, uint32_t len) {
    const bool small = chance(50);
    std::vector<X>& data = arrays_[name];
    Val v;
    v.name = name;
    v.kind = Kind::Input;
    v.shape = Shape::Vector;
    v.node = vectorInput<X>(name).node();
    v.rows = len;
    for (uint32_t i = 0; i < len; ++i) {
      data.push_back(randomElement(small));
      v.ref.push_back(R(data.back()));
    }
    v.exact = true;
    code_.push_back("const auto " + name + " = vectorInput<" + typeName<X>() + ">(\"" + name +
                    "\");  // " + shapeText(v));
    vals_.push_back(std::move(v));
  }
  void matrixIn(const std::string& name) {
    const bool small = chance(50);
    const uint32_t rows = m_, cols = n_, pitch = n_ + below(6);
    mats_[name] = {rows, cols, pitch};
    std::vector<X>& data = arrays_[name];
    Val v;
    v.name = name;
    v.kind = Kind::Input;
    v.shape = Shape::Matrix;
    v.node = matrixInput<X>(name).node();
    v.rows = rows;
    v.cols = cols;
    for (uint32_t r = 0; r < rows; ++r) {
      for (uint32_t c = 0; c < pitch; ++c) {
        data.push_back(randomElement(small));
        if (c < cols) v.ref.push_back(R(data.back()));
      }
    }
    v.exact = true;
    code_.push_back("const auto " + name + " = matrixInput<" + typeName<X>() + ">(\"" + name +
                    "\");  // " + shapeText(v) + ", pitch " + std::to_string(pitch));
    vals_.push_back(std::move(v));
  }
  void scalarIn(const std::string& name, bool constant) {
    Val v;
    v.name = name;
    v.kind = constant ? Kind::Constant : Kind::Input;
    v.shape = Shape::Scalar;
    X x;
    if constexpr (std::is_same_v<X, float>) {
      x = static_cast<float>(static_cast<int>(below(33)) - 16) / 8.0f;
    } else if constexpr (std::is_same_v<X, int32_t>) {
      x = static_cast<int32_t>(below(19)) - 9;
    } else {
      x = chance(30) ? static_cast<uint32_t>(rng_()) : below(10);
    }
    v.ref.push_back(R(x));
    if (constant) {
      v.node = Scalar<X>(x).node();
      code_.push_back("const Scalar<" + std::string(typeName<X>()) + "> " + name + " = " +
                      literal(x) + ";");
    } else {
      scalars_[name] = x;
      v.node = scalarInput<X>(name).node();
      code_.push_back("const auto " + name + " = scalarInput<" + typeName<X>() + ">(\"" + name +
                      "\");  // = " + literal(x));
    }
    vals_.push_back(std::move(v));
  }
  void inputs() {
    vectorIn("vn0", n_);
    if (chance(50)) vectorIn("vn1", n_);
    vectorIn("vm0", m_);
    if (chance(50)) vectorIn("vm1", m_);
    matrixIn("A");
    if (chance(30)) matrixIn("B");
    scalarIn("s0", false);
    scalarIn("c0", true);
    if (chance(50)) scalarIn("c1", true);
    // An index input: some indices past either length.
    const uint32_t len = chance(50) ? n_ : m_, top = std::max(n_, m_);
    std::vector<uint32_t>& data = indexArrays_["ix0"];
    for (uint32_t i = 0; i < len; ++i) data.push_back(below(top + top / 4 + 2));
    code_.push_back("const auto ix0 = vectorInput<uint32_t>(\"ix0\");  // vector[" +
                    std::to_string(len) + "], below " + std::to_string(top + top / 4 + 2));
    if constexpr (std::is_same_v<X, uint32_t>) {
      Val v;
      v.name = "ix0";
      v.kind = Kind::Input;
      v.shape = Shape::Vector;
      v.node = vectorInput<uint32_t>("ix0").node();
      v.rows = len;
      for (uint32_t x : data) v.ref.push_back(R(x));
      vals_.push_back(std::move(v));
    } else {
      indices_.push_back({"ix0", vectorInput<uint32_t>("ix0").node(), data});
    }
    if (chance(50)) offsetsOp();
  }
  void bindInputs(Bindings& b) const {
    for (const auto& [name, data] : arrays_) {
      if (const auto m = mats_.find(name); m != mats_.end()) {
        b.matrix(name, data, m->second.rows, m->second.cols, m->second.pitch);
      } else {
        b.vector(name, data);
      }
    }
    for (const auto& [name, data] : indexArrays_) b.vector(name, data);
    for (const auto& [name, x] : scalars_) b.scalar(name, x);
  }

  // ---------------------------------------------------------------- operations

  // One random operation; false if the one drawn does not fit the values there are.
  bool step() {
    switch (below(27)) {
      case 0:
      case 1:
      case 2: return zip(Shape::Vector);
      case 3: return zip(Shape::Matrix);
      case 4: return chance(40) ? zip(Shape::Scalar) : scale();
      case 5: return scale();
      case 6: return generateOp();
      case 7: return gatherOp();
      case 8: return outerOp();
      case 9: return transposeOp();
      case 10: return reduceOp();
      case 11: return rowColReduceOp();
      case 12: return gemvOp();
      case 13: return dotOp();
      case 14: return chance(50) ? indexOp() : reduceOp();
      case 15:
      case 16: return segReduceOp();
      case 17: return chance(35) ? scanOp() : sliceOp();
      case 18: return chance(35) ? sortOp() : sliceOp();
      case 19: return shiftOp();
      case 20: return permuteOp();
      case 21: {
        const uint32_t what = below(100);
        return what < 40 ? indicesOp() : what < 75 ? extentOp() : segmentHeadsOp();
      }
      case 22: return chance(70) ? pickOp() : matmulOp();
      // (the user's kernel drawn by a stream of its own: the programs without one are as before)
      case 23: return callRng_() % 8 == 0 ? callOp() : reshapeOp();
      case 24: return callRng_() % 8 == 0 ? callOp() : flattenOp();
      default: return contractOp(false);
    }
  }

  // An operand of a zipWith: its typed value, its elements (by flat index of the result) and
  // its source.
  struct Operand {
    Any value;
    std::function<R(size_t)> at;
    std::string text;
  };
  Operand operandOf(int k) {
    const Val& v = vals_[k];
    Operand o{typed(v), {}, v.name};
    if (v.shape == Shape::Scalar) {
      o.at = [r = v.ref[0]](size_t) { return r; };
    } else {
      o.at = [this, k](size_t i) { return vals_[k].ref[i]; };
    }
    return o;
  }

  bool zip(Shape target) {
    int first = -1;
    if (target == Shape::Vector) first = pickVector();
    if (target == Shape::Matrix) first = pickMatrix();
    if (target == Shape::Scalar) first = pickScalar();
    if (first < 0) return false;
    // Copy what the operands need: vals_ grows while they are in use.
    const uint32_t rows = vals_[first].rows, cols = vals_[first].cols;
    const size_t size = vals_[first].ref.size();
    const size_t arity = 1 + below(3);
    std::vector<Operand> ops;
    ops.push_back(operandOf(first));
    while (ops.size() < arity) {
      const uint32_t what = below(10);
      if (target != Shape::Scalar && what < 3) {
        const int s = pickScalar();
        if (s >= 0) ops.push_back(operandOf(s));
      } else if (target == Shape::Matrix && what < 5) {
        // replicateRows(v): v's length is the cols; replicateCols(u): u's is the rows.
        const bool byRows = what == 3;
        const int v = pickVector(static_cast<int>(byRows ? cols : rows));
        if (v < 0) continue;
        const std::vector<R> ref = vals_[v].ref;
        Operand o{Any(byRows ? replicateRows(vec(v)) : replicateCols(vec(v))), {}, {}};
        o.text = (byRows ? "replicateRows(" : "replicateCols(") + vals_[v].name + ")";
        if (byRows) {
          o.at = [ref, cols](size_t i) { return ref[i % cols]; };
        } else {
          o.at = [ref, cols](size_t i) { return ref[i / cols]; };
        }
        ops.push_back(std::move(o));
      } else {
        const int k = pick(
            [&](const Val& v) { return v.shape == target && v.rows == rows && v.cols == cols; });
        if (k >= 0) ops.push_back(operandOf(k));
      }
    }
    // Any order (the first operand need not be the one of the target's shape).
    for (size_t i = ops.size(); i > 1; --i) std::swap(ops[i - 1], ops[below(i)]);
    ZipFn<X> f{below(kUnOps), below(kBinOps), below(kBinOps)};
    std::vector<R> ref(size);
    for (size_t i = 0; i < size; ++i) {
      if (arity == 1)
        ref[i] = f(ops[0].at(i));
      else if (arity == 2)
        ref[i] = f(ops[0].at(i), ops[1].at(i));
      else
        ref[i] = f(ops[0].at(i), ops[1].at(i), ops[2].at(i));
    }
    const auto call = [&f](const auto&... a) -> NodePtr {
      if constexpr (oneShapeOf<decltype(a)...>()) {
        return zipWith(f, a...).node();
      } else {
        throw std::logic_error("fuzz: a vector zipped with a matrix");
      }
    };
    NodePtr node;
    if (arity == 1)
      node = std::visit(call, ops[0].value);
    else if (arity == 2)
      node = std::visit(call, ops[0].value, ops[1].value);
    else
      node = std::visit(call, ops[0].value, ops[1].value, ops[2].value);
    std::string rhs = "zipWith(" + f.text(arity);
    for (const Operand& o : ops) rhs += ", " + o.text;
    add(rhs + ")", target, node, rows, cols, std::move(ref));
    return true;
  }

  // s * v, v * s (vector or matrix v) with a scalar s: a reduction's result preferred.
  bool scale() {
    const int v = chance(75) ? pickVector() : pickMatrix();
    if (v < 0) return false;
    const uint32_t op = chance(60) ? 2 : below(2);  // *, or + -
    const bool left = chance(50), number = chance(25);
    int s = -1;
    const X lit = static_cast<X>(2 + below(5));
    if (!number && (s = pickScalar()) < 0) return false;
    const R k = number ? R(lit) : vals_[s].ref[0];
    std::vector<R> ref = vals_[v].ref;
    for (R& r : ref) r = left ? bin(op, k, r) : bin(op, r, k);
    const auto apply = [op](const auto& a, const auto& b) -> NodePtr {
      return op == 0 ? (a + b).node() : op == 1 ? (a - b).node() : (a * b).node();
    };
    const auto with = [&](const auto& x) -> NodePtr {
      if (number) return left ? apply(lit, x) : apply(x, lit);
      return left ? apply(sca(s), x) : apply(x, sca(s));
    };
    const NodePtr node = vals_[v].shape == Shape::Vector ? with(vec(v)) : with(mat(v));
    const std::string k0 = number ? literal(lit) : vals_[s].name, o = kBinName[op];
    const std::string rhs =
        left ? k0 + " " + o + " " + vals_[v].name : vals_[v].name + " " + o + " " + k0;
    add(rhs, vals_[v].shape, node, vals_[v].rows, vals_[v].cols, std::move(ref));
    return true;
  }

  // generate<X>(len, f(i)), or fill(len, s); now and then of no elements.
  bool generateOp() {
    const uint32_t len = chance(5) ? 0 : chance(50) ? n_ : m_;
    if (chance(25)) {
      const int s = pickScalar();
      if (s < 0) return false;
      add("fill(" + std::to_string(len) + "u, " + vals_[s].name + ")", Shape::Vector,
          fill(len, sca(s)).node(), len, 0, std::vector<R>(len, vals_[s].ref[0]));
      return true;
    }
    const uint32_t fn = below(kGenFns);
    std::vector<R> ref(len);
    for (uint32_t i = 0; i < len; ++i) ref[i] = R(static_cast<X>(indexFn(fn, len, i)));
    const Vector<X> g =
        generate<X>(len, [&](const EWord32& i) { return cast<X>(indexFn(fn, len, i)); });
    add("generate<" + std::string(typeName<X>()) + ">(" + std::to_string(len) +
            "u, [](EWord32 i) { return cast<" + typeName<X>() + ">(" + indexFnText(fn, len) +
            "); })",
        Shape::Vector, g.node(), len, 0, std::move(ref));
    return true;
  }

  // A u32 index vector: generate<uint32_t>(len, f(i)) (u32 programs: also x % k of a value).
  bool indexOp() {
    const uint32_t len = chance(50) ? n_ : m_;
    if constexpr (std::is_same_v<X, uint32_t>) {
      if (chance(50)) {
        const int v = pickVector();
        if (v < 0) return false;
        const uint32_t k = std::max(n_, m_) + 2;
        std::vector<R> ref = vals_[v].ref;
        for (R& r : ref) r = R(r.v % k);
        add("zipWith([](auto a) { return a % " + literal(k) + "; }, " + vals_[v].name + ")",
            Shape::Vector, zipWith([k](const EWord32& a) { return a % EWord32(k); }, vec(v)).node(),
            vals_[v].rows, 0, std::move(ref));
        return true;
      }
    }
    const uint32_t fn = below(kIndexFns);
    std::vector<uint32_t> ref(len);
    for (uint32_t i = 0; i < len; ++i) ref[i] = indexFn(fn, len, i);
    const Vector<uint32_t> g =
        generate<uint32_t>(len, [&](const EWord32& i) { return indexFn(fn, len, i); });
    const std::string rhs = "generate<uint32_t>(" + std::to_string(len) +
                            "u, [](EWord32 i) { return " + indexFnText(fn, len) + "; })";
    if constexpr (std::is_same_v<X, uint32_t>) {
      std::vector<R> r(len);
      for (uint32_t i = 0; i < len; ++i) r[i] = R(ref[i]);
      add(rhs, Shape::Vector, g.node(), len, 0, std::move(r));
    } else {
      const std::string name = "g" + std::to_string(indices_.size());
      code_.push_back("const auto " + name + " = " + rhs + ";  // vector[" + std::to_string(len) +
                      "]");
      indices_.push_back({name, g.node(), std::move(ref)});
    }
    return true;
  }

  // An index vector for gather and permute (u32 programs: any u32 vector): its node, its
  // reference and its name.
  std::tuple<NodePtr, std::vector<uint32_t>, std::string> pickIndex() {
    if constexpr (std::is_same_v<X, uint32_t>) {
      const int k = pickVector();
      std::vector<uint32_t> idx;
      for (const R& r : vals_[k].ref) idx.push_back(r.v);
      return {vals_[k].node, std::move(idx), vals_[k].name};
    } else {
      const Index& k = indices_[below(static_cast<uint32_t>(indices_.size()))];
      return {k.node, k.ref, k.name};
    }
  }

  // gather(src, idx): idx an index vector (u32 programs: any u32 vector).
  bool gatherOp() {
    const int src = pickVector();
    if (src < 0) return false;
    const auto [idxNode, idx, idxName] = pickIndex();
    const std::vector<R>& s = vals_[src].ref;
    std::vector<R> ref(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) ref[i] = idx[i] < s.size() ? s[idx[i]] : R(X(0));
    const uint32_t len = static_cast<uint32_t>(idx.size());
    add("gather(" + vals_[src].name + ", " + idxName + ")", Shape::Vector,
        gather(vec(src), Vector<uint32_t>(idxNode)).node(), len, 0, std::move(ref));
    return true;
  }

  bool outerOp() {
    const int u = pickVector(), v = pickVector();
    if (u < 0 || v < 0) return false;
    const std::vector<R>&a = vals_[u].ref, &b = vals_[v].ref;
    if (a.size() * b.size() > (1u << 18)) return false;  // (1000 x 1000 is slow to simulate)
    std::vector<R> ref;
    for (const R& x : a) {
      for (const R& y : b) ref.push_back(x * y);
    }
    add("outer(" + vals_[u].name + ", " + vals_[v].name + ")", Shape::Matrix,
        outer(vec(u), vec(v)).node(), static_cast<uint32_t>(a.size()),
        static_cast<uint32_t>(b.size()), std::move(ref));
    return true;
  }

  bool transposeOp() {
    const int k = pickMatrix();
    if (k < 0) return false;
    const uint32_t rows = vals_[k].rows, cols = vals_[k].cols;
    std::vector<R> ref(size_t{rows} * cols);
    for (uint32_t r = 0; r < rows; ++r) {
      for (uint32_t c = 0; c < cols; ++c) ref[size_t{c} * rows + r] = vals_[k].ref[r * cols + c];
    }
    add("transpose(" + vals_[k].name + ")", Shape::Matrix, transpose(mat(k)).node(), cols, rows,
        std::move(ref));
    return true;
  }

  // The identity of op (0 sum, 1 max, 2 min): what a fold of no elements is.
  static R identity(uint32_t op) {
    if constexpr (std::is_same_v<X, float>) {
      return op == 0 ? R(0.0f) : FloatRef::make(op == 1 ? -HUGE_VAL : HUGE_VAL, 0);
    } else {
      return R(op == 0   ? X(0)
               : op == 1 ? std::numeric_limits<X>::lowest()
                         : std::numeric_limits<X>::max());
    }
  }
  static R combine(uint32_t op, const R& acc, const R& x) {
    return op == 0 ? acc + x : op == 1 ? max(acc, x) : min(acc, x);
  }
  // The fold of op over ref[first + k * stride], k < count (none: the identity).
  static R fold(uint32_t op, const std::vector<R>& ref, size_t first, size_t stride, size_t count) {
    if (count == 0) return identity(op);
    R acc = ref[first];
    for (size_t k = 1; k < count; ++k) acc = combine(op, acc, ref[first + k * stride]);
    return acc;
  }
  // f(Sum{}), f(Max{}) or f(Min{}) by op.
  template <class F>
  static NodePtr withFold(uint32_t op, F f) {
    if (op == 0) return f(Sum{});
    if (op == 1) return f(Max{});
    return f(Min{});
  }
  static const char* foldName(uint32_t op) {
    return op == 0 ? "Sum{}" : op == 1 ? "Max{}" : "Min{}";
  }

  bool reduceOp() {
    const int v = pickVector();
    if (v < 0) return false;
    const uint32_t op = below(3);
    const Vector<X> x = vec(v);
    const Scalar<X> r = op == 0 ? reduce(Sum{}, x) : op == 1 ? reduce(Max{}, x) : reduce(Min{}, x);
    add(std::string("reduce(") + foldName(op) + ", " + vals_[v].name + ")", Shape::Scalar, r.node(),
        0, 0, {fold(op, vals_[v].ref, 0, 1, vals_[v].rows)});
    return true;
  }

  bool rowColReduceOp() {
    const int k = pickMatrix();
    if (k < 0) return false;
    const uint32_t op = below(3);
    const bool rowWise = chance(50);
    const uint32_t rows = vals_[k].rows, cols = vals_[k].cols;
    std::vector<R> ref;
    if (rowWise) {
      for (uint32_t r = 0; r < rows; ++r) ref.push_back(fold(op, vals_[k].ref, r * cols, 1, cols));
    } else {
      for (uint32_t c = 0; c < cols; ++c) ref.push_back(fold(op, vals_[k].ref, c, cols, rows));
    }
    const Matrix<X> a = mat(k);
    const Vector<X> r = rowWise ? (op == 0   ? rowReduce(Sum{}, a)
                                   : op == 1 ? rowReduce(Max{}, a)
                                             : rowReduce(Min{}, a))
                                : (op == 0   ? colReduce(Sum{}, a)
                                   : op == 1 ? colReduce(Max{}, a)
                                             : colReduce(Min{}, a));
    add(std::string(rowWise ? "rowReduce(" : "colReduce(") + foldName(op) + ", " + vals_[k].name +
            ")",
        Shape::Vector, r.node(), rowWise ? rows : cols, 0, std::move(ref));
    return true;
  }

  bool gemvOp() {
    const int k = pickMatrix();
    if (k < 0) return false;
    const bool trans = chance(50);
    const uint32_t rows = vals_[k].rows, cols = vals_[k].cols;
    const int v = pickVector(static_cast<int>(trans ? rows : cols));
    if (v < 0) return false;
    const std::vector<R>&a = vals_[k].ref, &x = vals_[v].ref;
    std::vector<R> ref(trans ? cols : rows);
    for (uint32_t r = 0; r < rows; ++r) {
      for (uint32_t c = 0; c < cols; ++c) {
        R& acc = ref[trans ? c : r];
        const R t = a[r * cols + c] * x[trans ? r : c];
        acc = (trans ? r : c) == 0 ? t : acc + t;
      }
    }
    const NodePtr node = trans ? gemvT(mat(k), vec(v)).node() : gemv(mat(k), vec(v)).node();
    add(std::string(trans ? "gemvT(" : "gemv(") + vals_[k].name + ", " + vals_[v].name + ")",
        Shape::Vector, node, trans ? cols : rows, 0, std::move(ref));
    return true;
  }

  // An index k for row, column and at: a number, now and then past the end (u32 programs:
  // also a scalar of the program).
  std::pair<Scalar<uint32_t>, uint32_t> pickPlace(uint32_t extent, std::string& text) {
    if constexpr (std::is_same_v<X, uint32_t>) {
      const int s = chance(40) ? pickScalar() : -1;
      if (s >= 0) {
        text = vals_[s].name;
        return {sca(s), vals_[s].ref[0].v};
      }
    }
    const uint32_t k = chance(15) ? extent + below(3) : below(std::max(extent, 1u));
    text = literal(k);
    return {Scalar<uint32_t>(k), k};
  }

  // row(m, k), column(m, k), diagonal(m) (m square) or at(v, k): reads at a computed place.
  bool pickOp() {
    const uint32_t what = below(4);
    if (what == 3) {
      const int v = pickVector();
      if (v < 0) return false;
      std::string text;
      const auto [k, kv] = pickPlace(vals_[v].rows, text);
      const R x = kv < vals_[v].rows ? vals_[v].ref[kv] : R(X(0));
      add("at(" + vals_[v].name + ", " + text + ")", Shape::Scalar, at(vec(v), k).node(), 0, 0,
          {x});
      return true;
    }
    const int m = pickMatrix();
    if (m < 0) return false;
    const uint32_t rows = vals_[m].rows, cols = vals_[m].cols;
    const std::vector<R>& a = vals_[m].ref;
    if (what == 2) {
      if (rows != cols) return false;
      std::vector<R> ref(rows);
      for (uint32_t i = 0; i < rows; ++i) ref[i] = a[size_t{i} * cols + i];
      add("diagonal(" + vals_[m].name + ")", Shape::Vector, diagonal(mat(m)).node(), rows, 0,
          std::move(ref));
      return true;
    }
    const bool byRow = what == 0;
    std::string text;
    const auto [k, kv] = pickPlace(byRow ? rows : cols, text);
    std::vector<R> ref(byRow ? cols : rows, R(X(0)));
    for (uint32_t j = 0; j < ref.size() && kv < (byRow ? rows : cols); ++j) {
      ref[j] = byRow ? a[size_t{kv} * cols + j] : a[size_t{j} * cols + kv];
    }
    add(std::string(byRow ? "row(" : "column(") + vals_[m].name + ", " + text + ")", Shape::Vector,
        byRow ? row(mat(m), k).node() : column(mat(m), k).node(), byRow ? cols : rows, 0,
        std::move(ref));
    return true;
  }

  // matmul(a, b), b's rows a's cols (small: a loop a thread an element).
  bool matmulOp() {
    const int a = pickMatrix();
    if (a < 0) return false;
    const uint32_t rows = vals_[a].rows, inner = vals_[a].cols;
    const int b = pick([&](const Val& v) { return v.shape == Shape::Matrix && v.rows == inner; });
    if (b < 0) return false;
    const uint32_t cols = vals_[b].cols;
    if (uint64_t{rows} * inner * cols > (1u << 16)) return false;  // (slow to simulate)
    const std::vector<R>&x = vals_[a].ref, &y = vals_[b].ref;
    std::vector<R> ref(size_t{rows} * cols);
    for (uint32_t r = 0; r < rows; ++r) {
      for (uint32_t c = 0; c < cols; ++c) {
        R acc = x[size_t{r} * inner] * y[c];
        for (uint32_t k = 1; k < inner; ++k)
          acc = acc + x[size_t{r} * inner + k] * y[size_t{k} * cols + c];
        ref[size_t{r} * cols + c] = acc;
      }
    }
    add("matmul(" + vals_[a].name + ", " + vals_[b].name + ")", Shape::Matrix,
        matmul(mat(a), mat(b)).node(), rows, cols, std::move(ref));
    return true;
  }

  bool dotOp() {
    const int a = pickVector();
    if (a < 0) return false;
    const int b = pickVector(static_cast<int>(vals_[a].rows));
    const std::vector<R>&x = vals_[a].ref, &y = vals_[b].ref;
    R acc = x.empty() ? R(X(0)) : x[0] * y[0];
    for (size_t i = 1; i < x.size(); ++i) acc = acc + x[i] * y[i];
    add("dot(" + vals_[a].name + ", " + vals_[b].name + ")", Shape::Scalar,
        dot(vec(a), vec(b)).node(), 0, 0, {acc});
    return true;
  }

  // ---------------------------------------------------------------- the newer operations

  // Non-decreasing offsets into a vector of `target` elements: some segments empty, sometimes
  // none at all, the first offset sometimes past 0 and the last short of the end.
  std::vector<uint32_t> drawOffsets(uint32_t target) {
    static const uint32_t kSegments[] = {0, 1, 2, 31};
    const uint32_t what = below(6);
    const uint32_t segments = what < 4 ? kSegments[what] : what == 4 ? n_ : m_;
    const uint32_t end = chance(30) ? below(target + 1) : target;
    std::vector<uint32_t> o(segments + 1);
    for (uint32_t& x : o) x = below(end + 1);
    std::sort(o.begin(), o.end());
    if (chance(70)) o.front() = 0;
    if (chance(70)) o.back() = end;
    if (chance(30)) {  // runs of empty segments
      for (size_t i = 1; i < o.size(); ++i) {
        if (chance(40)) o[i] = o[i - 1];
      }
    }
    return o;
  }

  // CSR offsets for vectors of an existing length: an input, or the exclusive scan of a counts
  // input (offsets made by a scan kernel).
  bool offsetsOp() {
    const int v = pickVector();
    if (v < 0) return false;
    const uint32_t target = vals_[v].rows;
    std::vector<uint32_t> o = drawOffsets(target);
    const std::string k = std::to_string(offsets_.size());
    const std::string name = "off" + k;
    NodePtr node;
    // (a scan kernel's look-back state takes the simulator ~0.1 s a run: scans are drawn rarely)
    if (chance(93)) {
      indexArrays_[name] = o;
      node = vectorInput<uint32_t>(name).node();
      code_.push_back("const auto " + name + " = vectorInput<uint32_t>(\"" + name +
                      "\");  // offsets[" + std::to_string(o.size()) + "] into " +
                      std::to_string(target));
    } else {
      const std::string counts = "cnt" + k;
      std::vector<uint32_t>& c = indexArrays_[counts];
      for (size_t i = 0; i + 1 < o.size(); ++i) c.push_back(o[i + 1] - o[i]);
      c.push_back(below(1000));         // (the last count is in no offset)
      const uint32_t base = o.front();  // (an exclusive scan starts at 0)
      for (uint32_t& x : o) x -= base;
      node = exclusiveScan(Sum{}, vectorInput<uint32_t>(counts)).node();
      code_.push_back("const auto " + name + " = exclusiveScan(Sum{}, vectorInput<uint32_t>(\"" +
                      counts + "\"));  // offsets[" + std::to_string(o.size()) + "] into " +
                      std::to_string(target));
    }
    if constexpr (std::is_same_v<X, uint32_t>) addIndexInput(name, node, o);
    offsets_.push_back({name, node, std::move(o), target});
    return true;
  }

  // segmentedReduce(op, v, offsets): v of the offsets' target length (one length per offsets
  // array, as the planner requires).
  bool segReduceOp() {
    if (offsets_.empty() || chance(15)) return offsetsOp();
    const Offsets& o = offsets_[below(static_cast<uint32_t>(offsets_.size()))];
    const int v = pickVector(static_cast<int>(o.target));
    if (v < 0) return false;
    const uint32_t op = below(3), segments = static_cast<uint32_t>(o.ref.size()) - 1;
    if (!define(segments, {segments + 1})) return false;
    std::vector<R> ref;
    for (uint32_t r = 0; r < segments; ++r) {
      const uint32_t a = std::min(o.ref[r], o.target), b = std::min(o.ref[r + 1], o.target);
      ref.push_back(fold(op, vals_[v].ref, a, 1, b - a));
    }
    const Vector<uint32_t> offsets(o.node);
    const NodePtr node =
        withFold(op, [&](auto f) { return segmentedReduce(f, vec(v), offsets).node(); });
    add(std::string("segmentedReduce(") + foldName(op) + ", " + vals_[v].name + ", " + o.name + ")",
        Shape::Vector, node, segments, 0, std::move(ref));
    return true;
  }

  // Head flags for vector k (a segmented scan's heads, of k's length): element i is nonzero
  // where a segment starts.
  struct Heads {
    NodePtr node;
    std::vector<uint32_t> ref;
    std::string text;
  };
  // segmentHeads(offsets, k): offsets drawn for segmented reductions (of any target length:
  // those at or past k's length are dropped), or any index vector (u32 programs: any u32 vector).
  Heads segmentHeadsOf(int k) {
    NodePtr node;
    std::vector<uint32_t> offsets;
    std::string name;
    if (!offsets_.empty() && chance(60)) {
      const Offsets& o = offsets_[below(static_cast<uint32_t>(offsets_.size()))];
      std::tie(node, offsets, name) = std::make_tuple(o.node, o.ref, o.name);
    } else {
      std::tie(node, offsets, name) = pickIndex();
    }
    const uint32_t len = vals_[k].rows;
    std::vector<uint32_t> ref(len, 0u);
    for (const uint32_t o : offsets) {
      if (o < len) ref[o] = 1u;
    }
    return {segmentHeads(Vector<uint32_t>(node), vec(k)).node(), std::move(ref),
            "segmentHeads(" + name + ", " + vals_[k].name + ")"};
  }
  // Heads for vector k: segmentHeads, an input (no heads, a few, many or all; any nonzero value
  // is a head), a function of the index (fused into the scan's loads), or (u32 programs) any u32
  // value of k's length, (others) an index vector of it.
  Heads drawHeads(int k) {
    const uint32_t len = vals_[k].rows, what = below(10);
    if (what < 4) return segmentHeadsOf(k);
    if (what < 7) {
      const uint32_t p = 1 + below(40), q = below(p);
      std::vector<uint32_t> ref(len);
      for (uint32_t i = 0; i < len; ++i) ref[i] = i % p == q ? 1u : 0u;
      const auto flag = [p, q](const EWord32& i) {
        return ifThenElse(i % p == q, EWord32(1u), EWord32(0u));
      };
      return {zipWith(flag, indices(vec(k))).node(), std::move(ref),
              "zipWith([](EWord32 i) { return ifThenElse(i % " + literal(p) + " == " + literal(q) +
                  ", EWord32(1u), EWord32(0u)); }, indices(" + vals_[k].name + "))"};
    }
    if (what < 9) {
      if constexpr (std::is_same_v<X, uint32_t>) {
        const int h = pickVector(static_cast<int>(len));  // (k itself at least)
        std::vector<uint32_t> ref;
        for (const R& r : vals_[h].ref) ref.push_back(r.v);
        return {vals_[h].node, std::move(ref), vals_[h].name};
      } else {
        std::vector<int> fit;
        for (size_t i = 0; i < indices_.size(); ++i) {
          if (indices_[i].ref.size() == len) fit.push_back(static_cast<int>(i));
        }
        if (!fit.empty()) {
          const Index& h = indices_[fit[below(static_cast<uint32_t>(fit.size()))]];
          return {h.node, h.ref, h.name};
        }
      }
    }
    static const uint32_t kEvery[] = {0, 64, 8, 2, 1};  // (0: no heads)
    const uint32_t every = kEvery[below(5)];
    const std::string name = "hd" + std::to_string(heads_++);
    std::vector<uint32_t>& data = indexArrays_[name];
    for (uint32_t i = 0; i < len; ++i) {
      const bool head = every != 0 && below(every) == 0;
      data.push_back(!head ? 0u : chance(50) ? 1u : std::max(1u, static_cast<uint32_t>(rng_())));
    }
    const NodePtr node = vectorInput<uint32_t>(name).node();
    code_.push_back("const auto " + name + " = vectorInput<uint32_t>(\"" + name +
                    "\");  // heads[" + std::to_string(len) + "], " +
                    (every ? "one in " + std::to_string(every) + " set" : "none set"));
    const std::vector<uint32_t> ref = data;
    if constexpr (std::is_same_v<X, uint32_t>) {
      addIndexInput(name, node, ref);
    } else {
      indices_.push_back({name, node, ref});
    }
    return {node, ref, name};
  }

  // segmentHeads(offsets, v): a u32 value (u32 programs), an index vector, or cast to X.
  bool segmentHeadsOp() {
    const int k = pickVector();
    if (k < 0) return false;
    Heads h = segmentHeadsOf(k);
    const uint32_t len = vals_[k].rows;
    if constexpr (std::is_same_v<X, uint32_t>) {
      std::vector<R> ref;
      for (uint32_t x : h.ref) ref.push_back(R(x));
      add(h.text, Shape::Vector, h.node, len, 0, std::move(ref));
    } else {
      if (chance(50)) {
        const std::string name = "g" + std::to_string(indices_.size());
        code_.push_back("const auto " + name + " = " + h.text + ";  // vector[" +
                        std::to_string(len) + "]");
        indices_.push_back({name, h.node, std::move(h.ref)});
        return true;
      }
      std::vector<R> ref;
      for (uint32_t x : h.ref) ref.push_back(R(static_cast<X>(x)));
      add("zipWith([](EWord32 h) { return cast<" + std::string(typeName<X>()) + ">(h); }, " +
              h.text + ")",
          Shape::Vector,
          zipWith([](const EWord32& x) { return cast<X>(x); }, Vector<uint32_t>(h.node)).node(),
          len, 0, std::move(ref));
    }
    return true;
  }

  // inclusiveScan / exclusiveScan (Sum, Max, Min), one in five segmented: restarting at every
  // head (drawHeads), a head's exclusive element the identity. (A segmented scan, a scan of
  // 64-bit (head, element) pairs, takes the simulator ~1 s a program to plan and run, ten times
  // a plain scan: they are drawn rarely.)
  bool scanOp() {
    const int v = pickVector();
    if (v < 0) return false;
    const uint32_t op = below(3);
    const bool exclusive = chance(50), segmented = chance(20);
    Heads h;
    if (segmented) h = drawHeads(v);  // (may add an input to vals_)
    const std::vector<R>& x = vals_[v].ref;
    std::vector<R> ref;
    R acc = identity(op);
    for (size_t i = 0; i < x.size(); ++i) {
      if (segmented && h.ref[i] != 0) acc = identity(op);
      if (exclusive) ref.push_back(acc);
      acc = combine(op, acc, x[i]);
      if (!exclusive) ref.push_back(acc);
    }
    const NodePtr node = withFold(op, [&](auto f) {
      if (segmented) {
        const Vector<uint32_t> heads(h.node);
        return exclusive ? exclusiveScan(f, vec(v), heads).node()
                         : inclusiveScan(f, vec(v), heads).node();
      }
      return exclusive ? exclusiveScan(f, vec(v)).node() : inclusiveScan(f, vec(v)).node();
    });
    add(std::string(exclusive ? "exclusiveScan(" : "inclusiveScan(") + foldName(op) + ", " +
            vals_[v].name + (segmented ? ", " + h.text : "") + ")",
        Shape::Vector, node, vals_[v].rows, 0, std::move(ref));
    return true;
  }

  // sort(k, o), sortByKey(k, v, o) or sortIndices(k, o), ascending or descending: the reference
  // is the stable sort of k's indices by the keys' order words (testing::orderBits: integers by
  // value, floats by their bits made order-preserving; descending all bits inverted). The keys
  // are a vector of X or (i32 and f32 programs, now and then) an index vector. f32 keys are
  // only values whose reference is exact (inputs, and what sorts move of them): a key computed
  // in f32 may round otherwise than its double reference, which would swap keys nearly equal and
  // move whole elements, far past any tolerance. (sortByKey's values may be any: they are only
  // moved.) (A sort is ~6 simulated kernels, a histogram, the digits' starts and a pass a digit:
  // drawn about as rarely as scans.)
  bool sortOp() {
    const uint32_t what = below(3);  // sort, sortByKey, sortIndices
    const bool descending = chance(50);
    const Order order = descending ? Order::Descending : Order::Ascending;
    const std::string orderText = descending ? ", Order::Descending)" : ")";
    // The keys: their node, name and order words, and (X keys) their value.
    int k = -1;
    NodePtr keys;
    std::string keyName;
    std::vector<uint64_t> words;
    std::vector<uint32_t> indexKeys;  // (index vector keys: their elements)
    if constexpr (!std::is_same_v<X, uint32_t>) {
      if (chance(25)) {
        const Index& i = indices_[below(static_cast<uint32_t>(indices_.size()))];
        std::tie(keys, keyName, indexKeys) = std::make_tuple(i.node, i.name, i.ref);
        for (const uint32_t x : indexKeys) words.push_back(::testing::orderBits(x, descending));
      }
    }
    if (!keys) {
      k = pick([](const Val& v) {
        return v.shape == Shape::Vector && (!std::is_floating_point_v<X> || v.exact);
      });
      if (k < 0) return false;
      std::tie(keys, keyName) = std::make_tuple(vals_[k].node, vals_[k].name);
      for (const R& r : vals_[k].ref) {
        words.push_back(::testing::orderBits(static_cast<X>(r.v), descending));
      }
    }
    const uint32_t len = static_cast<uint32_t>(words.size());
    std::vector<uint32_t> perm(len);
    std::iota(perm.begin(), perm.end(), 0u);
    std::stable_sort(perm.begin(), perm.end(),
                     [&](uint32_t a, uint32_t b) { return words[a] < words[b]; });
    if (what == 1) {
      const int v = pickVector(static_cast<int>(len));  // (X keys: k itself at least)
      if (v < 0) return false;
      std::vector<R> ref;
      for (const uint32_t i : perm) ref.push_back(vals_[v].ref[i]);
      const NodePtr node = k < 0 ? sortByKey(Vector<uint32_t>(keys), vec(v), order).node()
                                 : sortByKey(vec(k), vec(v), order).node();
      const bool exact = vals_[v].exact;
      add("sortByKey(" + keyName + ", " + vals_[v].name + orderText, Shape::Vector, node, len, 0,
          std::move(ref));
      vals_.back().exact = exact;
      return true;
    }
    // sort: X keys make a value, index vector keys an index vector.
    if (what == 0 && k >= 0) {
      std::vector<R> ref;
      for (const uint32_t i : perm) ref.push_back(vals_[k].ref[i]);
      const bool exact = vals_[k].exact;
      add("sort(" + keyName + orderText, Shape::Vector, sort(vec(k), order).node(), len, 0,
          std::move(ref));
      vals_.back().exact = exact;
      return true;
    }
    // a u32 vector: the sorted index vector, or sortIndices: a u32 value (u32 programs), an
    // index vector, or cast to X (exact: below 2^24).
    const std::string text = (what == 0 ? "sort(" : "sortIndices(") + keyName + orderText;
    const NodePtr node = k >= 0      ? sortIndices(vec(k), order).node()
                         : what == 0 ? sort(Vector<uint32_t>(keys), order).node()
                                     : sortIndices(Vector<uint32_t>(keys), order).node();
    std::vector<uint32_t> out(perm);
    if (what == 0) {
      for (uint32_t& x : out) x = indexKeys[x];
    }
    if constexpr (std::is_same_v<X, uint32_t>) {
      std::vector<R> ref;
      for (const uint32_t x : out) ref.push_back(R(x));
      add(text, Shape::Vector, node, len, 0, std::move(ref));
    } else {
      if (what == 0 || chance(50)) {
        const std::string name = "g" + std::to_string(indices_.size());
        code_.push_back("const auto " + name + " = " + text + ";  // vector[" +
                        std::to_string(len) + "]");
        indices_.push_back({name, node, std::move(out)});
        return true;
      }
      std::vector<R> ref;
      for (const uint32_t x : out) ref.push_back(R(static_cast<X>(x)));
      add("zipWith([](EWord32 i) { return cast<" + std::string(typeName<X>()) + ">(i); }, " + text +
              ")",
          Shape::Vector,
          zipWith([](const EWord32& x) { return cast<X>(x); }, Vector<uint32_t>(node)).node(), len,
          0, std::move(ref));
      vals_.back().exact = true;
    }
    return true;
  }

  // slice(v, from, trim): narrow windows, whole, empty, or anywhere.
  bool sliceOp() {
    const int v = pickVector();
    if (v < 0) return false;
    const uint32_t len = vals_[v].rows;
    uint32_t from = 0, trim = 0;
    switch (below(4)) {
      case 0:
        from = std::min(len, below(3));
        trim = std::min(len - from, below(3));
        break;
      case 1:
        from = below(len + 1);
        trim = len - from;
        break;
      case 2: break;
      default:
        from = below(len + 1);
        trim = below(len - from + 1);
        break;
    }
    if (from + trim > 0 && !define(len - from - trim, {len})) return false;
    const std::vector<R> ref(vals_[v].ref.begin() + from, vals_[v].ref.end() - trim);
    add("slice(" + vals_[v].name + ", " + std::to_string(from) + "u, " + std::to_string(trim) +
            "u)",
        Shape::Vector, slice(vec(v), from, trim).node(), len - from - trim, 0, ref);
    return true;
  }

  // A shift: near, past either edge, or as far as an int32_t goes.
  int32_t drawShift(uint32_t len) {
    switch (below(6)) {
      case 0:
      case 1: return static_cast<int32_t>(below(7)) - 3;
      case 2: return static_cast<int32_t>(len + below(3));
      case 3: return -static_cast<int32_t>(len + below(3));
      case 4:
        return chance(50) ? std::numeric_limits<int32_t>::max()
                          : std::numeric_limits<int32_t>::min();
      default: return chance(50) ? 1 : -1;
    }
  }
  static uint32_t clamped(uint32_t i, int32_t d, uint32_t len) {
    const int64_t j = int64_t{i} + d;
    return static_cast<uint32_t>(std::clamp<int64_t>(j, 0, int64_t{len} - 1));
  }

  // shift(v, d) or shift(m, dr, dc).
  bool shiftOp() {
    const bool matrix = chance(35);
    const int k = matrix ? pickMatrix() : pickVector();
    if (k < 0) return false;
    const uint32_t rows = vals_[k].rows, cols = vals_[k].cols;
    const std::vector<R>& a = vals_[k].ref;
    std::vector<R> ref(a.size());
    if (!matrix) {
      const int32_t d = drawShift(rows);
      for (uint32_t i = 0; i < rows; ++i) ref[i] = a[clamped(i, d, rows)];
      add("shift(" + vals_[k].name + ", " + std::to_string(d) + ")", Shape::Vector,
          shift(vec(k), d).node(), rows, 0, std::move(ref));
      return true;
    }
    const int32_t dr = drawShift(rows), dc = drawShift(cols);
    for (uint32_t r = 0; r < rows; ++r) {
      for (uint32_t c = 0; c < cols; ++c) {
        ref[size_t{r} * cols + c] = a[size_t{clamped(r, dr, rows)} * cols + clamped(c, dc, cols)];
      }
    }
    add("shift(" + vals_[k].name + ", " + std::to_string(dr) + ", " + std::to_string(dc) + ")",
        Shape::Matrix, shift(mat(k), dr, dc).node(), rows, cols, std::move(ref));
    return true;
  }

  // permute(op, defaults, idx, values): idx an index vector (u32 programs: any u32 vector),
  // values of its length.
  bool permuteOp() {
    const int d = pickVector();
    if (d < 0) return false;
    const auto [idxNode, idx, idxName] = pickIndex();
    const int v = pickVector(static_cast<int>(idx.size()));
    if (v < 0) return false;
    constexpr bool integer = std::is_integral_v<X>;
    static const char* const kNames[] = {"Sum{}",    "Min{}",   "Max{}",
                                         "BitAnd{}", "BitOr{}", "BitXor{}"};
    const uint32_t op = integer && chance(60) ? 1 + below(5) : 0;
    std::vector<R> ref = vals_[d].ref;
    for (size_t i = 0; i < idx.size(); ++i) {
      if (idx[i] >= ref.size()) continue;  // dropped
      R& x = ref[idx[i]];
      const R& y = vals_[v].ref[i];
      if constexpr (integer) {
        x = op == 0   ? x + y
            : op == 1 ? min(x, y)
            : op == 2 ? max(x, y)
            : op == 3 ? (x & y)
            : op == 4 ? (x | y)
                      : (x ^ y);
      } else {
        x = x + y;
      }
    }
    const Vector<uint32_t> I(idxNode);
    NodePtr node;
    if constexpr (integer) {
      switch (op) {
        case 0: node = permute(Sum{}, vec(d), I, vec(v)).node(); break;
        case 1: node = permute(Min{}, vec(d), I, vec(v)).node(); break;
        case 2: node = permute(Max{}, vec(d), I, vec(v)).node(); break;
        case 3: node = permute(BitAnd{}, vec(d), I, vec(v)).node(); break;
        case 4: node = permute(BitOr{}, vec(d), I, vec(v)).node(); break;
        default: node = permute(BitXor{}, vec(d), I, vec(v)).node(); break;
      }
    } else {
      node = permute(Sum{}, vec(d), I, vec(v)).node();
    }
    add(std::string("permute(") + kNames[op] + ", " + vals_[d].name + ", " + idxName + ", " +
            vals_[v].name + ")",
        Shape::Vector, node, vals_[d].rows, 0, std::move(ref));
    return true;
  }

  // reshape(v, cols): v's elements as rows of `cols` (a divisor of len(v), a proper one
  // preferred; for an empty v any number): a matrix of a new shape, len(v) / cols x cols, which
  // the rest of the program reads as any other. Where its rows would be tied back to the length
  // they are made from (cols 1, an empty v, or v's length made from such rows: see define), its
  // columns are reduced at once instead (colReduce, of a length tied to cols only).
  bool reshapeOp() {
    const int k = pickVector();
    if (k < 0) return false;
    const uint32_t len = vals_[k].rows;
    uint32_t cols = 0;
    if (len == 0) {
      static const uint32_t kCols[] = {1, 2, 7, 64, 1000};
      cols = kCols[below(5)];
    } else {
      std::vector<uint32_t> all, proper;
      for (uint32_t d = 1; uint64_t{d} * d <= len; ++d) {
        if (len % d != 0) continue;
        all.push_back(d);
        if (d != len / d) all.push_back(len / d);
      }
      for (const uint32_t d : all) {
        if (d > 1 && d < len) proper.push_back(d);
      }
      const std::vector<uint32_t>& from = !proper.empty() && chance(75) ? proper : all;
      cols = from[below(static_cast<uint32_t>(from.size()))];
    }
    const uint32_t rows = len / cols;
    const std::vector<R>& a = vals_[k].ref;
    const std::string text = "reshape(" + vals_[k].name + ", " + literal(cols) + ")";
    const Matrix<X> m = reshape(vec(k), cols);
    if (define(rows, {len})) {
      std::vector<R> ref(a.size());  // element (r, c) = v[r * cols + c]
      for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < cols; ++c) ref[size_t{r} * cols + c] = a[size_t{r} * cols + c];
      }
      const bool exact = vals_[k].exact;
      add(text, Shape::Matrix, m.node(), rows, cols, std::move(ref));
      vals_.back().exact = exact;
      return true;
    }
    const uint32_t op = below(3);
    std::vector<R> ref;
    for (uint32_t c = 0; c < cols; ++c) ref.push_back(fold(op, a, c, cols, rows));
    add(std::string("colReduce(") + foldName(op) + ", " + text + ")", Shape::Vector,
        withFold(op, [&](auto f) { return colReduce(f, m).node(); }), cols, 0, std::move(ref));
    return true;
  }

  // flatten(m): m's elements row by row (a pitched input's padding skipped), a vector of rows x
  // cols elements. Where that length would be tied back to an extent it is made from (m of one
  // row or column, or none, or m's extents made from such a length: see define), or is long
  // (over 2^14 elements: scans and sorts of it are slow to simulate), it is reduced at once
  // instead.
  bool flattenOp() {
    const int k = pickMatrix();
    if (k < 0) return false;
    const uint32_t rows = vals_[k].rows, cols = vals_[k].cols, len = rows * cols;
    const std::vector<R>& a = vals_[k].ref;
    std::vector<R> ref(len);  // element i = m(i / cols, i % cols)
    for (uint32_t i = 0; i < len; ++i) ref[i] = a[size_t{i / cols} * cols + i % cols];
    const std::string text = "flatten(" + vals_[k].name + ")";
    const Vector<X> v = flatten(mat(k));
    if (len <= (1u << 14) && define(len, {rows, cols})) {
      const bool exact = vals_[k].exact;
      add(text, Shape::Vector, v.node(), len, 0, std::move(ref));
      vals_.back().exact = exact;
      return true;
    }
    const uint32_t op = below(3);
    add(std::string("reduce(") + foldName(op) + ", " + text + ")", Shape::Scalar,
        withFold(op, [&](auto f) { return reduce(f, v).node(); }), 0, 0,
        {fold(op, ref, 0, 1, len)});
    return true;
  }

  // The user's own kernel as an operation: callElementwise<X>(userAxpy<X>(), alpha, x, y), alpha
  // a scalar input or a number (a constant of the program or a literal), x and y of one length;
  // or call<X>(userReverse<X>(), len(v), v), len(v) a number.
  bool callOp() {
    const int x = pickVector();
    if (x < 0) return false;
    const std::string type = typeName<X>();
    if (chance(50)) {
      const uint32_t len = vals_[x].rows;
      std::vector<R> ref(vals_[x].ref.rbegin(), vals_[x].ref.rend());
      const bool exact = vals_[x].exact;
      code_.push_back("// userReverse<" + type + ">(): capture(\"userReverse_" + type +
                      "\", 64, [](DPull<Exp<" + type +
                      ">> x) { return push<Grid>(ixMap([n = len(x)](EWord32 i) { return n - 1u - "
                      "i; }, x)); })");
      add("call<" + type + ">(userReverse<" + type + ">(), " + literal(len) + ", " + vals_[x].name +
              ")",
          Shape::Vector, call<X>(userReverse<X>(), len, vec(x)).node(), len, 0, std::move(ref));
      vals_.back().exact = exact;
      return true;
    }
    const int y = pickVector(static_cast<int>(vals_[x].rows));
    if (y < 0) return false;
    const int a =
        chance(70)
            ? pick(
                  [](const Val& v) { return v.shape == Shape::Scalar && v.kind != Kind::Computed; },
                  false)
            : -1;
    const X lit = static_cast<X>(2 + below(5));
    const R alpha = a >= 0 ? vals_[a].ref[0] : R(lit);
    const Scalar<X> alphaValue = a >= 0 ? sca(a) : Scalar<X>(lit);
    const std::string alphaText =
        a >= 0 ? vals_[a].name : "Scalar<" + type + ">(" + literal(lit) + ")";
    std::vector<R> ref(vals_[x].rows);
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = alpha * vals_[x].ref[i] + vals_[y].ref[i];
    code_.push_back(
        "// userAxpy<" + type + ">(): capture(\"userAxpy_" + type + "\", 128, [](Exp<" + type +
        "> alpha, DPull<Exp<" + type + ">> x, DPull<Exp<" + type +
        ">> y) { return push<Grid>(zipWith([alpha](auto a, auto b) { return alpha * a + b; }, x, "
        "y)); })");
    add("callElementwise<" + type + ">(userAxpy<" + type + ">(), " + alphaText + ", " +
            vals_[x].name + ", " + vals_[y].name + ")",
        Shape::Vector, callElementwise<X>(userAxpy<X>(), alphaValue, vec(x), vec(y)).node(),
        vals_[x].rows, 0, std::move(ref));
    return true;
  }

  // indices(v): a u32 value (u32 programs), an index vector, or cast to X.
  bool indicesOp() {
    const bool matrix = chance(30);
    const int k = matrix ? pickMatrix() : pickVector();
    if (k < 0) return false;
    const Val& v = vals_[k];
    const size_t size = v.ref.size();
    const NodePtr iota = matrix ? indices(mat(k)).node() : indices(vec(k)).node();
    const std::string text = "indices(" + v.name + ")";
    const uint32_t rows = v.rows, cols = v.cols;
    std::vector<R> ref(size);
    for (size_t i = 0; i < size; ++i) ref[i] = R(static_cast<X>(i));
    if constexpr (std::is_same_v<X, uint32_t>) {
      add(text, v.shape, iota, rows, cols, std::move(ref));
    } else {
      if (!matrix && chance(50)) {
        const std::string name = "g" + std::to_string(indices_.size());
        code_.push_back("const auto " + name + " = " + text + ";  // vector[" +
                        std::to_string(size) + "]");
        std::vector<uint32_t> idx(size);
        std::iota(idx.begin(), idx.end(), 0u);
        indices_.push_back({name, iota, std::move(idx)});
        return true;
      }
      const auto toX = [](const EWord32& i) { return cast<X>(i); };
      const NodePtr node = matrix ? zipWith(toX, Matrix<uint32_t>(iota)).node()
                                  : zipWith(toX, Vector<uint32_t>(iota)).node();
      add("zipWith([](EWord32 i) { return cast<" + std::string(typeName<X>()) + ">(i); }, " + text +
              ")",
          matrix ? Shape::Matrix : Shape::Vector, node, rows, cols, std::move(ref));
    }
    return true;
  }

  // len(v), rows(m) or cols(m): a u32 scalar (cast to X in other programs).
  bool extentOp() {
    const bool matrix = chance(40);
    const int k = matrix ? pickMatrix() : pickVector();
    if (k < 0) return false;
    const uint32_t which = matrix ? 1 + below(2) : 0;
    const Val& v = vals_[k];
    const uint32_t n = which == 2 ? v.cols : v.rows;
    const char* fn = which == 0 ? "len(" : which == 1 ? "rows(" : "cols(";
    const NodePtr e = which == 0   ? len(vec(k)).node()
                      : which == 1 ? rows(mat(k)).node()
                                   : cols(mat(k)).node();
    if constexpr (std::is_same_v<X, uint32_t>) {
      add(fn + v.name + ")", Shape::Scalar, e, 0, 0, {R(n)});
    } else {
      add("zipWith([](EWord32 n) { return cast<" + std::string(typeName<X>()) + ">(n); }, " + fn +
              v.name + "))",
          Shape::Scalar,
          zipWith([](const EWord32& x) { return cast<X>(x); }, Scalar<uint32_t>(e)).node(), 0, 0,
          {R(static_cast<X>(n))});
    }
    return true;
  }

  // A contract's predicate: x <= bound, x >= bound or x != bound.
  struct Predicate {
    uint32_t kind = 0;
    X bound{};
    EBool operator()(const Exp<X>& x) const {
      return kind == 0 ? x <= Exp<X>(bound) : kind == 1 ? x >= Exp<X>(bound) : x != Exp<X>(bound);
    }
    bool holds(double x) const {
      const double b = static_cast<double>(bound);
      return kind == 0 ? x <= b : kind == 1 ? x >= b : x != b;
    }
    std::string text() const {
      return std::string("[](auto x) { return x ") +
             (kind == 0   ? "<="
              : kind == 1 ? ">="
                          : "!=") +
             " " + literal(bound) + "; }";
    }
  };
  // How far an element's f32 result may be from its reference (0 on integers); -1 where it is
  // not compared (overflowed, NaN or infinite).
  static double tolerance(const R& r) {
    if constexpr (std::is_same_v<X, float>) {
      if (!std::isfinite(r.m) || r.m > 1e30 || std::isinf(r.v)) return -1;
      return 1e-3 * r.m + 1e-6;  // (ten times what same() allows)
    } else {
      (void)r;
      return 0;
    }
  }
  static double valueOf(const R& r) { return static_cast<double>(r.v); }

  // require(v, f, message) or ensure(v, f, message) with f holding on every element, or (failing)
  // failing first at an element that is certain whatever the rounding: `failure_` then holds the
  // message run() must throw.
  bool contractOp(bool failing) {
    const uint32_t what = below(10);
    const int k = what < 6 ? pickVector() : what < 8 ? pickMatrix() : pickScalar();
    if (k < 0) return false;
    const Val& v = vals_[k];
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    for (const R& r : v.ref) {
      const double t = tolerance(r);
      if (t < 0) return false;
      lo = std::min(lo, valueOf(r) - t);
      hi = std::max(hi, valueOf(r) + t);
    }
    constexpr bool integer = std::is_integral_v<X>;
    Predicate f;
    if (!failing) {
      f.kind = below(integer ? 3 : 2);
      if (v.ref.empty()) {
        f.bound = randomElement(true);
      } else if (f.kind == 0) {
        f.bound = static_cast<X>(hi);
        if constexpr (!integer) f.bound = std::nextafter(f.bound, HUGE_VALF);
      } else if (f.kind == 1) {
        f.bound = static_cast<X>(lo);
        if constexpr (!integer) f.bound = std::nextafter(f.bound, -HUGE_VALF);
      } else {
        f.bound = randomElement(true);
        for (const R& r : v.ref) {
          if (r.v == f.bound) return false;
        }
      }
    } else {
      if (v.ref.empty()) return false;
      // The bound: an element's value (integers), or the midpoint of a gap between elements
      // wider than their tolerances (floats); the contract fails at the first element on the
      // other side of it.
      const R& pivot = v.ref[below(static_cast<uint32_t>(v.ref.size()))];
      f.kind = below(integer ? 3 : 2);
      if constexpr (integer) {
        f.bound = pivot.v;
        if (f.kind == 0 && valueOf(pivot) >= hi) f.kind = 2;
        if (f.kind == 1 && valueOf(pivot) <= lo) f.kind = 2;
      } else {
        // nearest values above and below the pivot (their tolerances included)
        const double t = tolerance(pivot), x = valueOf(pivot);
        double above = HUGE_VAL;
        for (const R& r : v.ref) {
          if (valueOf(r) > x) above = std::min(above, valueOf(r) - tolerance(r));
        }
        if (above == HUGE_VAL || above - (x + t) < 1e-5 * (1 + std::fabs(x))) return false;
        f.bound = static_cast<float>((x + t + above) / 2);
        for (const R& r : v.ref) {
          if (std::fabs(valueOf(r) - double(f.bound)) <= tolerance(r)) return false;
        }
        f.kind = chance(50) ? 0 : 1;
      }
    }
    size_t first = v.ref.size();
    for (size_t i = 0; i < v.ref.size() && first == v.ref.size(); ++i) {
      if (!f.holds(valueOf(v.ref[i]))) first = i;
    }
    if (failing == (first == v.ref.size())) return false;
    const bool pre = chance(50);
    const std::string message = "fuzz contract " + std::to_string(computed_ + 1);
    const auto make = [&](const auto& x) -> NodePtr {
      return pre ? require(x, f, message).node() : ensure(x, f, message).node();
    };
    const NodePtr node = v.shape == Shape::Scalar   ? make(sca(k))
                         : v.shape == Shape::Vector ? make(vec(k))
                                                    : make(mat(k));
    if (failing) {
      failure_ = "\"" + message + "\") fails";
      if (v.shape != Shape::Scalar) failure_ += " at element " + std::to_string(first);
    }
    const std::vector<R> ref = v.ref;
    add(std::string(pre ? "require(" : "ensure(") + v.name + ", " + f.text() + ", \"" + message +
            "\")",
        v.shape, node, v.rows, v.cols, ref);
    return true;
  }

  // 1-3 outputs: the last value computed, and others (inputs rarely; constants never).
  void pickOutputs() {
    int last = -1;
    for (size_t k = 0; k < vals_.size(); ++k) {
      if (vals_[k].kind == Kind::Computed) last = static_cast<int>(k);
    }
    if (last >= 0) outputs_.push_back(static_cast<size_t>(last));
    const uint32_t more = below(3);
    for (uint32_t t = 0; t < 10 && outputs_.size() < 1 + more; ++t) {
      const bool inputsToo = chance(10);
      const int k = pick(
          [&](const Val& v) {
            return v.kind == Kind::Computed || (inputsToo && v.kind == Kind::Input);
          },
          false);
      if (k < 0) continue;
      if (std::find(outputs_.begin(), outputs_.end(), static_cast<size_t>(k)) != outputs_.end()) {
        continue;
      }
      outputs_.push_back(static_cast<size_t>(k));
    }
  }

  std::mt19937 rng_;
  std::mt19937 callRng_;  // (whether a reshape's or flatten's draw is a call instead)
  uint32_t n_ = 0, m_ = 0;
  uint32_t computed_ = 0;
  std::vector<Val> vals_;
  std::vector<Index> indices_;
  std::vector<Offsets> offsets_;
  uint32_t heads_ = 0;  // head flag inputs drawn
  std::string failure_;
  std::vector<std::string> code_;
  struct MatShape {
    uint32_t rows, cols, pitch;
  };
  std::map<std::string, std::vector<X>> arrays_;
  std::map<std::string, MatShape> mats_;
  std::map<std::string, std::vector<uint32_t>> indexArrays_;
  std::map<std::string, X> scalars_;
  std::vector<size_t> outputs_;
  std::map<uint32_t, std::set<uint32_t>> madeFrom_;  // (define: the sizes a size is made from)
  PlanOptions options_;
};

// Runs program `index` (of element type X, from `seed`): the failures' text, empty if none.
template <class X>
std::string check(uint32_t index, uint32_t seed) {
  const Program<X> p(seed);
  if (std::getenv("OBSIDIAN_ARRAY_FUZZ_PRINT")) MESSAGE("program " << index << ":\n" << p.text());
  const auto fused = p.run(true);
  const auto unfused = p.run(false);
  std::string bad =
      p.compare(fused, "planned") + p.compare(unfused, "unfused") + p.compareRuns(fused, unfused);
  if (std::getenv("OBSIDIAN_ARRAY_FUZZ_FLIP")) bad += p.compare(p.run(true, true), "flipped");
  if (fused.error.empty() && unfused.error.empty()) {
    std::ostringstream s;
    if (fused.kernels > unfused.kernels) {
      s << "the planned plan has " << fused.kernels << " kernels, the unfused " << unfused.kernels
        << "\n";
    }
    // The rules do not see shapes (a tile pass on a one-column matrix moves more than two
    // passes); the fusion space, predicted at the data's sizes, must hold a plan that moves no
    // more than the unfused one.
    if (fused.spaceBytes > fused.report.unfusedBytes) {
      s << "fusionSpace: the fewest bytes " << fused.spaceBytes << " > unfusedBytes "
        << fused.report.unfusedBytes << " (the rules' plan: " << fused.report.bytes << ")\n";
    }
    bad += s.str();
  }
  if (bad.empty()) return "";
  std::ostringstream s;
  s << "array fuzz program " << index << " (seed " << seed << "), " << p.operations() << " lines:\n"
    << p.text() << "\n"
    << bad << "\nthe planned plan's report:\n"
    << fused.reportText << "\n"
    << "the unfused plan: " << unfused.kernels << " kernels\n";
  return s.str();
}

// Runs program `index` with a failing contract: the failures' text, empty if none; `drawn`
// counts the programs that had a value to fail on.
template <class X>
std::string checkFailing(uint32_t index, uint32_t seed, uint32_t& drawn) {
  const Program<X> p(seed, true);
  if (std::getenv("OBSIDIAN_ARRAY_FUZZ_PRINT")) MESSAGE("program " << index << ":\n" << p.text());
  if (p.failure().empty()) return "";
  ++drawn;
  std::string bad;
  for (const bool fuse : {true, false}) {
    const auto r = p.run(fuse);
    if (!r.obsidianError || r.error.find(p.failure()) == std::string::npos) {
      bad += std::string(fuse ? "planned" : "unfused") + ": want an obsidian::Error naming '" +
             p.failure() + "'; got " + (r.error.empty() ? "none" : "'" + r.error + "'") + "\n";
    }
  }
  if (bad.empty()) return "";
  return "array fuzz failing-contract program " + std::to_string(index) + " (seed " +
         std::to_string(seed) + "):\n" + p.text() + "\n" + bad;
}

}  // namespace

TEST_CASE("array fuzz: random programs, planned == unfused == plain C++") {
  const uint32_t first = envOr("OBSIDIAN_ARRAY_FUZZ_FIRST", 0);
  const uint32_t count = envOr("OBSIDIAN_ARRAY_FUZZ_COUNT", 150);
  std::vector<uint32_t> indices;
  if (const char* list = std::getenv("OBSIDIAN_ARRAY_FUZZ_PROGRAMS")) {
    std::istringstream s(list);
    for (std::string k; std::getline(s, k, ',');) indices.push_back(std::stoul(k));
  } else {
    for (uint32_t index = first; index < first + count; ++index) indices.push_back(index);
  }
  std::vector<uint32_t> failed;
  for (const uint32_t index : indices) {
    const uint32_t seed = 0x5eed0000u + index;
    // 70% u32, 20% i32, 10% f32.
    const uint32_t kind = std::mt19937(seed ^ 0x9e3779b9u)() % 10;
    const auto start = std::chrono::steady_clock::now();
    const std::string bad = kind < 7   ? check<uint32_t>(index, seed)
                            : kind < 9 ? check<int32_t>(index, seed)
                                       : check<float>(index, seed);
    if (std::getenv("OBSIDIAN_ARRAY_FUZZ_TIME")) {
      MESSAGE("program "
              << index << ": "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
              << " s");
    }
    if (!bad.empty()) {
      failed.push_back(index);
      FAIL_CHECK(bad);
    }
  }
  std::ostringstream list;
  for (uint32_t k : failed) list << " " << k;
  CHECK_MESSAGE(failed.empty(), "failing programs:" << list.str());
}

TEST_CASE("array fuzz: failing contracts and illegal extents throw obsidian::Error") {
  const uint32_t count = envOr("OBSIDIAN_ARRAY_FUZZ_COUNT", 150) / 10;
  uint32_t drawn = 0;
  std::vector<uint32_t> failed;
  for (uint32_t index = 0; index < count; ++index) {
    const uint32_t seed = 0xfa110000u + index;
    const uint32_t kind = std::mt19937(seed ^ 0x9e3779b9u)() % 10;
    const std::string bad = kind < 5   ? checkFailing<uint32_t>(index, seed, drawn)
                            : kind < 8 ? checkFailing<int32_t>(index, seed, drawn)
                                       : checkFailing<float>(index, seed, drawn);
    if (!bad.empty()) {
      failed.push_back(index);
      FAIL_CHECK(bad);
    }
  }
  CHECK(failed.empty());
  CHECK(drawn * 4 >= count * 3);  // (most programs have a value a contract can fail on)
  // A slice longer than its vector, segmented reductions of one offsets array over two lengths,
  // and a reshape of a vector that is not whole rows: the planner must refuse them at run (an
  // Error, never a crash).
  std::mt19937 g(7);
  for (int k = 0; k < 8; ++k) {
    static const uint32_t kLen[] = {1, 31, 33, 1000};
    const uint32_t n = kLen[g() % 4], from = g() % (n + 2);
    const uint32_t trim = (from > n ? 0 : n - from) + 1 + g() % 3;
    std::vector<uint32_t> v(n, 1), out(n + 8), total(1), o = {0, 1, 1};
    const auto V = vectorInput<uint32_t>("v");
    for (const bool fuse : {true, false}) {
      PlanOptions opt;
      opt.fuse = fuse;
      const Plan plan({{"s", slice(V * 2u, from, trim) + 1u}, {"t", sum(V)}}, opt);
      Bindings b;
      b.vector("v", v).output("s", out).output("t", total);
      CHECK_THROWS_WITH_AS(plan.run(b), doctest::Contains("needs at least"), Error);
      const auto W = vectorInput<uint32_t>("w"), O = vectorInput<uint32_t>("o");
      const Plan two({{"a", segmentedReduce(Sum{}, V, O)}, {"b", segmentedReduce(Max{}, W, O)}},
                     opt);
      std::vector<uint32_t> w(n + 1 + g() % 5, 2), a(2), bo(2);
      Bindings c;
      c.vector("v", v).vector("w", w).vector("o", o).output("a", a).output("b", bo);
      CHECK_THROWS_WITH_AS(two.run(c), doctest::Contains("ties"), Error);
      std::vector<uint32_t> none;  // no offsets: -1 segments
      Bindings d;
      d.vector("v", v).vector("w", v).vector("o", none).output("a", a).output("b", bo);
      CHECK_THROWS_WITH_AS(two.run(d), doctest::Contains("needs at least 1"), Error);
      uint32_t cols = 2 + static_cast<uint32_t>(k);  // (not a divisor of n)
      while (n % cols == 0) ++cols;
      const Plan rs(
          {{"r", rowReduce(Sum{}, reshape(V * 2u, cols))}, {"f", flatten(reshape(V, cols)) + 1u}},
          opt);
      std::vector<uint32_t> r(n / cols), f(n / cols * cols);
      Bindings e;
      e.vector("v", v).output("r", r).output("f", f);
      const std::string want = "reshape(v, " + std::to_string(cols) + "): v's " +
                               std::to_string(n) + " elements are not whole rows of " +
                               std::to_string(cols);
      CHECK_THROWS_WITH_AS(rs.run(e), doctest::Contains(want.c_str()), Error);
    }
  }
  // A segmented scan's heads of another length than its vector (one plan: a segmented scan
  // takes the simulator ~0.3 s to plan).
  const auto V = vectorInput<uint32_t>("v"), H = vectorInput<uint32_t>("h");
  const Plan scan({{"s", exclusiveScan(Sum{}, V * 3u, H)}});
  for (const uint32_t heads : {32u, 34u}) {
    std::vector<uint32_t> v(33, 1), h(heads, 1), out(33);
    Bindings b;
    b.vector("v", v).vector("h", h).output("s", out);
    CHECK_THROWS_WITH_AS(scan.run(b), doctest::Contains("ties 'v' (its length, 33) to 'h'"), Error);
  }
}
