// Whole-array programs (obsidian/array.hpp), fuzzed differentially on the simulator: random
// programs (DAGs of up to 12 operations over vectors of two length classes, a pitched matrix,
// scalars and constants, with values shared between operations) planned with fusion, planned
// without it, and evaluated by plain C++ alongside their construction must agree: bit for bit on
// u32 and i32 elements (wrap-around arithmetic, so the order of summation does not matter), within
// 1e-4 of the sum of magnitudes on f32. A simulated race or out-of-bounds access (an Error), a
// mismatch, or a fused plan with more kernels or bytes than the unfused one fails the test with
// the program printed as C++ and the fused plan's report.
// OBSIDIAN_ARRAY_FUZZ_FIRST and OBSIDIAN_ARRAY_FUZZ_COUNT choose other programs (by index; 0 and
// 150 by default), OBSIDIAN_ARRAY_FUZZ_PROGRAMS a list of them ("4,568"), and
// OBSIDIAN_ARRAY_FUZZ_TIME prints each program's time, OBSIDIAN_ARRAY_FUZZ_PRINT each program.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <obsidian/array.hpp>
#include <random>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

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
};

// A float element of the reference: its value in double and the sum of the magnitudes that made
// it (the scale of the rounding error any order of evaluation in f32 may make).
struct FloatRef {
  double v = 0, m = 0;
  FloatRef() = default;
  explicit FloatRef(float x) : v(x), m(std::fabs(double(x))) {}
  static FloatRef make(double v, double m) {
    FloatRef r;
    r.v = v;
    r.m = m;
    return r;
  }
  friend FloatRef operator+(FloatRef a, FloatRef b) { return make(a.v + b.v, a.m + b.m); }
  friend FloatRef operator-(FloatRef a, FloatRef b) { return make(a.v - b.v, a.m + b.m); }
  friend FloatRef operator*(FloatRef a, FloatRef b) { return make(a.v * b.v, a.m * b.m); }
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

template <class... A>
constexpr bool oneShapeOf() {
  bool v = false, m = false;
  ((v = v || std::remove_cvref_t<A>::shape == Shape::Vector,
    m = m || std::remove_cvref_t<A>::shape == Shape::Matrix),
   ...);
  return !(v && m);
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
  };
  // A u32 index vector (gather's idx) of a program whose elements are not u32.
  struct Index {
    std::string name;
    NodePtr node;
    std::vector<uint32_t> ref;
  };

  explicit Program(uint32_t seed) : rng_(seed) {
    static const uint32_t kN[] = {1, 7, 33, 300, 1031}, kM[] = {1, 5, 17, 64, 131};
    n_ = kN[below(5)];
    m_ = chance(20) ? n_ : kM[below(5)];
    inputs();
    const uint32_t ops = 1 + below(12);
    for (uint32_t k = 0; k < ops || computed_ == 0; ++k) {
      for (int attempt = 0; attempt < 50 && !step(); ++attempt) {
      }
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
    }
  }

  // ---------------------------------------------------------------- running

  struct Result {
    std::string error;
    std::map<std::string, std::vector<X>> out;
    size_t kernels = 0;
    PlanReport report;
    std::string reportText;
    double spaceBytes = 0;  // planned: the fewest bytes of a plan in the fusion space
  };

  // Runs the program on the simulator, planned with fusion or without.
  Result run(bool fuse) const {
    Result r;
    std::vector<Output> outs;
    for (size_t k : outputs_) {
      std::visit([&](const auto& v) { outs.emplace_back("o_" + vals_[k].name, v); },
                 typed(vals_[k]));
    }
    try {
      PlanOptions o = options_;
      o.fuse = fuse;
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
      << ";\no.band = " << options_.band << ";\no.blocks = " << options_.blocks << ";\n";
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
    switch (below(15)) {
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
      default: return chance(50) ? indexOp() : reduceOp();
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

  // generate<X>(len, f(i)), or fill(len, s).
  bool generateOp() {
    const uint32_t len = chance(50) ? n_ : m_;
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

  // gather(src, idx): idx an index vector (u32 programs: any u32 vector).
  bool gatherOp() {
    const int src = pickVector();
    if (src < 0) return false;
    NodePtr idxNode;
    std::vector<uint32_t> idx;
    std::string idxName;
    if constexpr (std::is_same_v<X, uint32_t>) {
      const int k = pickVector();
      idxNode = vals_[k].node;
      for (const R& r : vals_[k].ref) idx.push_back(r.v);
      idxName = vals_[k].name;
    } else {
      const Index& k = indices_[below(indices_.size())];
      idxNode = k.node;
      idx = k.ref;
      idxName = k.name;
    }
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

  // The fold of op (0 sum, 1 max, 2 min) over ref[first + k * stride], k < count.
  static R fold(uint32_t op, const std::vector<R>& ref, size_t first, size_t stride, size_t count) {
    R acc = ref[first];
    for (size_t k = 1; k < count; ++k) {
      const R& x = ref[first + k * stride];
      acc = op == 0 ? acc + x : op == 1 ? max(acc, x) : min(acc, x);
    }
    return acc;
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

  bool dotOp() {
    const int a = pickVector();
    if (a < 0) return false;
    const int b = pickVector(static_cast<int>(vals_[a].rows));
    const std::vector<R>&x = vals_[a].ref, &y = vals_[b].ref;
    R acc = x[0] * y[0];
    for (size_t i = 1; i < x.size(); ++i) acc = acc + x[i] * y[i];
    add("dot(" + vals_[a].name + ", " + vals_[b].name + ")", Shape::Scalar,
        dot(vec(a), vec(b)).node(), 0, 0, {acc});
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
  uint32_t n_ = 0, m_ = 0;
  uint32_t computed_ = 0;
  std::vector<Val> vals_;
  std::vector<Index> indices_;
  std::vector<std::string> code_;
  struct MatShape {
    uint32_t rows, cols, pitch;
  };
  std::map<std::string, std::vector<X>> arrays_;
  std::map<std::string, MatShape> mats_;
  std::map<std::string, std::vector<uint32_t>> indexArrays_;
  std::map<std::string, X> scalars_;
  std::vector<size_t> outputs_;
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

uint32_t envOr(const char* name, uint32_t fallback) {
  const char* v = std::getenv(name);
  return v ? static_cast<uint32_t>(std::strtoul(v, nullptr, 10)) : fallback;
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
