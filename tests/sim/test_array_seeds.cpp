// The seeds' programs as array programs (examples/array/seeds.hpp) on the simulator: each, planned
// by array::Plan, against the examples' C++ references on odd sizes (a pitch past the columns for
// matrices), in as many kernels as the hand-written version launches (the fusion the seeds'
// systems make), and SafeGPU's contracts failing where they should.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "../../examples/accelerate/spmv.hpp"
#include "../../examples/array/seeds.hpp"
#include "../../examples/safegpu/safegpu.hpp"
#include "../support.hpp"

using namespace obsidian;
using ::testing::errorOf;

namespace {

std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Every element of got within tolerance * (1 + |want|) of want (and as many).
bool close(const std::vector<float>& got, const std::vector<float>& want, float tolerance) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tolerance * (1 + std::fabs(want[i])))) {
      MESSAGE("element " << i << ": got " << got[i] << ", want " << want[i]);
      return false;
    }
  }
  return true;
}

const float kNan = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST_CASE("array seeds: Accelerate's dotp, SAXPY, Black-Scholes and SMVM") {
  for (uint32_t n : {1u, 1003u, 70001u}) {
    CAPTURE(n);
    const auto x = randomFloats(n, 1), y = randomFloats(n, 2);
    {
      const array::Plan plan(seeds::dotp());
      CHECK(plan.kernelCount() == 1);
      std::vector<float> dot(1, kNan);
      plan.run(array::Bindings().vector("x", x).vector("y", y).output("dot", dot));
      const double want = accelerate::dotReference(x, y);
      CHECK(std::fabs(dot[0] - want) <= 1e-5 * (1 + n));
    }
    {
      const array::Plan plan(seeds::saxpy());
      CHECK(plan.kernelCount() == 1);
      std::vector<float> z(n, kNan), want(n);
      for (uint32_t i = 0; i < n; ++i) want[i] = 0.75f * x[i] + y[i];
      plan.run(
          array::Bindings().scalar("alpha", 0.75f).vector("x", x).vector("y", y).output("z", z));
      CHECK(close(z, want, 1e-6f));
    }
    {
      const array::Plan plan(seeds::blackScholes());
      CHECK(plan.kernelCount() == 1);  // both prices in one pass
      const accelerate::Options o = accelerate::randomOptions(n, 3);
      std::vector<float> call(n, kNan), put(n, kNan), wantCall(n), wantPut(n);
      for (uint32_t i = 0; i < n; ++i) {
        std::tie(wantCall[i], wantPut[i]) = accelerate::blackScholesBody(o.s[i], o.x[i], o.t[i]);
      }
      plan.run(array::Bindings()
                   .vector("s", o.s)
                   .vector("x", o.x)
                   .vector("t", o.t)
                   .output("call", call)
                   .output("put", put));
      CHECK(close(call, wantCall, 1e-4f));
      CHECK(close(put, wantPut, 1e-4f));
    }
  }
  // SMVM over uneven rows (empty ones and long ones) and a banded matrix.
  for (const accelerate::Csr& a :
       {accelerate::powerLawMatrix(517, 300, 6.0, 200, 5), accelerate::bandedMatrix(1000, 4, 6)}) {
    CAPTURE(a.rows);
    const array::Plan plan(seeds::smvm());
    CHECK(plan.kernelCount() == 1);
    const auto x = randomFloats(a.cols, 4);
    std::vector<float> y(a.rows, kNan);
    plan.run(array::Bindings()
                 .vector("values", a.values)
                 .vector("columns", a.columns)
                 .vector("rowOffsets", a.rowOffsets)
                 .vector("x", x)
                 .output("y", y));
    const std::vector<float> want = accelerate::spmvReference(a, x);
    for (uint32_t r = 0; r < a.rows; ++r) {
      CHECK_MESSAGE(std::fabs(y[r] - want[r]) <= accelerate::spmvTolerance(a, x, r), "row ", r);
    }
  }
}

TEST_CASE("array seeds: Barracuda's window and 2-D stencils, in one kernel each") {
  for (uint32_t n : {15u, 16u, 4099u}) {
    CAPTURE(n);
    const auto in = randomFloats(n, 5);
    // (a window of three or more neighbours is staged in shared memory with its halo)
    const auto check = [&](const seeds::Program& p, uint32_t width, auto f) {
      const array::Plan plan(p);
      CHECK(plan.kernelCount() == 1);
      CHECK((plan.kernels()[0].sharedBytes() > 0) == (width >= 3));
      std::vector<float> out(n + 1 - width, kNan);
      plan.run(array::Bindings().vector("in", in).output("out", out));
      CHECK(close(out, stencils::windowReference(in, width, f), 1e-5f));
    };
    check(seeds::forwardDifference(), 2, stencils::kDifference);
    check(seeds::movingAverage(), 15, stencils::kMovingAverage);
    // Other block sizes: the staged tile is 16 elements a thread at 32 threads, 4 at 1024.
    for (uint32_t threads : {32u, 1024u}) {
      array::PlanOptions o;
      o.threads = threads;
      const array::Plan plan(seeds::movingAverage(), o);
      std::vector<float> out(n - 14, kNan);
      plan.run(array::Bindings().vector("in", in).output("out", out));
      CHECK(close(out, stencils::windowReference(in, 15, stencils::kMovingAverage), 1e-5f));
    }
  }
  struct Shape {
    uint32_t rows, cols, pitch;
  };
  for (const Shape s : {Shape{1, 1, 1}, Shape{37, 45, 48}, Shape{70, 131, 136}}) {
    CAPTURE(s.rows);
    CAPTURE(s.cols);
    const auto pitched = randomFloats(size_t{s.rows} * s.pitch, 6);
    std::vector<float> dense(size_t{s.rows} * s.cols);
    for (uint32_t r = 0; r < s.rows; ++r) {
      for (uint32_t c = 0; c < s.cols; ++c) dense[r * s.cols + c] = pitched[r * s.pitch + c];
    }
    const auto check = [&](const seeds::Program& p, auto f) {
      const array::Plan plan(p);
      CHECK(plan.kernelCount() == 1);
      CHECK(plan.kernels()[0].sharedBytes() > 0);  // the tile and its halo
      std::vector<float> out(dense.size(), kNan);
      plan.run(array::Bindings().matrix("in", pitched, s.rows, s.cols, s.pitch).output("out", out));
      CHECK(close(out, stencils::stencilReference(dense, s.rows, s.cols, f), 1e-5f));
    };
    check(seeds::jacobi(), stencils::kJacobi);
    check(seeds::blur<1>(), stencils::kBlur<1>);
    check(seeds::blur<2>(), stencils::kBlur<2>);
  }
}

TEST_CASE("array seeds: Barracuda's RMSE fuses into one kernel") {
  for (uint32_t n : {1u, 1000u, 100003u}) {
    CAPTURE(n);
    const auto x = randomFloats(n, 7), y = randomFloats(n, 8);
    const array::Plan plan(seeds::rmse());
    CHECK(plan.kernelCount() == 1);
    std::vector<float> got(1, kNan);
    plan.run(array::Bindings().vector("x", x).vector("y", y).output("rmse", got));
    const double want = stencils::rmseReference(x, y);
    CHECK(std::fabs(got[0] - want) <= 1e-5 * (1 + want));
  }
}

TEST_CASE("array seeds: SafeGPU's array programs and their contracts") {
  const uint32_t n = 5003;
  const auto a = randomFloats(n, 9), b = randomFloats(n, 10, 0.5f, 2.0f);
  {
    const array::Plan plan(seeds::vectorAddition());
    CHECK(plan.kernelCount() == 1);  // the postcondition folds in the same pass
    std::vector<float> got(n, kNan);
    plan.run(array::Bindings().vector("current", a).vector("other", b).output("result", got));
    CHECK(close(got, safegpu::reference::plus(a, b), 0));
    // An overflow breaks "Result is finite", naming the first element where it does.
    auto big = a;
    big[4001] = big[4002] = 3e38f;
    auto other = b;
    other[4001] = other[4002] = 3e38f;
    const std::string e = errorOf([&] {
      plan.run(
          array::Bindings().vector("current", big).vector("other", other).output("result", got));
    });
    CHECK(e.find("Result is finite") != std::string::npos);
    CHECK(e.find("4001") != std::string::npos);
  }
  {
    const array::Plan plan(seeds::dotProduct());
    std::vector<float> got(1, kNan);
    plan.run(array::Bindings().vector("current", a).vector("other", b).output("dot", got));
    CHECK(safegpu::agrees(got[0], safegpu::reference::dot(a, b)));
  }
  {
    const array::Plan plan(seeds::compwiseDivide());
    CHECK(plan.kernelCount() == 1);
    std::vector<float> got(n, kNan);
    plan.run(array::Bindings().vector("current", a).vector("other", b).output("result", got));
    CHECK(close(got, safegpu::reference::compwiseDivide(a, b), 0));
    auto zero = b;
    zero[17] = 0.0f;
    const std::string e = errorOf([&] {
      plan.run(array::Bindings().vector("current", a).vector("other", zero).output("result", got));
    });
    CHECK(e.find("other.for_all (el /= 0)") != std::string::npos);
    CHECK(e.find("17") != std::string::npos);
  }
  {
    const uint32_t rows = 67, cols = 131, pitch = 136;
    const auto m = randomFloats(size_t{rows} * pitch, 11);
    const array::Plan plan(seeds::transposition());
    CHECK(plan.kernelCount() == 1);
    std::vector<float> got(size_t{rows} * cols, kNan), want(got.size());
    for (uint32_t r = 0; r < rows; ++r) {
      for (uint32_t c = 0; c < cols; ++c) want[size_t{c} * rows + r] = m[size_t{r} * pitch + c];
    }
    plan.run(array::Bindings().matrix("m", m, rows, cols, pitch).output("result", got));
    CHECK(got == want);
  }
}

TEST_CASE("array seeds: SafeGPU's product, Gaussian elimination and sort, a kernel a step") {
  {
    // matmul: one thread an element, a and b read in place (pitches past their columns)
    const uint32_t rows = 37, inner = 45, cols = 29, ap = 48, bp = 31;
    const auto a = randomFloats(size_t{rows} * ap, 21), b = randomFloats(size_t{inner} * bp, 22);
    const array::Plan plan(seeds::matrixMultiplication());
    CHECK(plan.kernelCount() == 1);
    std::vector<float> got(size_t{rows} * cols, kNan);
    plan.run(array::Bindings()
                 .matrix("current", a, rows, inner, ap)
                 .matrix("other", b, inner, cols, bp)
                 .output("result", got));
    const auto want = safegpu::reference::multiply(a, rows, inner, ap, b, cols, bp);
    for (size_t i = 0; i < want.size(); ++i) {
      if (!safegpu::agrees(got[i], want[i])) FAIL("product element " << i << ": " << got[i]);
    }
    // SafeGPU's require other.rows = columns: the planner ties the extents
    const std::string e = errorOf([&] {
      plan.run(array::Bindings()
                   .matrix("current", a, rows, inner, ap)
                   .matrix("other", b, inner - 1, cols, bp)
                   .output("result", got));
    });
    CHECK(e.find("current") != std::string::npos);
    CHECK(e.find("other") != std::string::npos);
  }
  {
    // gauss_determinant: n - 1 steps of one plan, each reading its pivot row and column
    const uint32_t n = 23;
    auto m = randomFloats(size_t{n} * n, 23);
    for (uint32_t i = 0; i < n; ++i) m[size_t{i} * n + i] += float(n);  // (no zero pivot)
    const array::Plan step(seeds::gaussStep());
    // (unchecked, one kernel a step; the postcondition's first failing element is folded per
    // row, then over the rows: a second kernel)
    CHECK(array::Plan(seeds::gaussStep(false)).kernelCount() == 1);
    CHECK(step.kernelCount() == 2);
    std::vector<float> x = m, y(m.size(), kNan);
    for (uint32_t s = 0; s + 1 < n; ++s) {
      std::fill(y.begin(), y.end(), kNan);
      step.run(
          array::Bindings().matrix("matrix", x, n, n, n).scalar("step", s).output("result", y));
      std::swap(x, y);
    }
    const auto want = safegpu::reference::gauss(m, n);
    CHECK(close(x, want, 1e-5f));
    const array::Plan det(seeds::logAbsDeterminant());
    std::vector<float> logAbs(1, kNan);
    det.run(array::Bindings().matrix("matrix", x, n, n, n).output("logAbs", logAbs));
    CHECK(std::fabs(logAbs[0] - safegpu::reference::logDeterminant(want, n).logAbs) < 1e-4);
    // A zero pivot breaks the postcondition; a non-square matrix has no diagonal.
    auto singular = m;
    singular[0] = 0.0f;
    const std::string e = errorOf([&] {
      step.run(array::Bindings()
                   .matrix("matrix", singular, n, n, n)
                   .scalar("step", 0u)
                   .output("result", y));
    });
    CHECK(e.find("pivot /= 0") != std::string::npos);
    const std::string d = errorOf([&] {
      det.run(array::Bindings().matrix("matrix", m, n, n - 1, n).output("logAbs", logAbs));
    });
    CHECK(d.find("matrix") != std::string::npos);
  }
  {
    // the sorting network, one plan for every step (the mask an input)
    const uint32_t n = 1000;
    const auto a = randomFloats(n, 24);
    const array::Plan step(seeds::sortStep());
    CHECK(step.kernelCount() == 1);
    std::vector<float> x = a, y(n, kNan);
    for (uint32_t mask : safegpu::sortMasks(n)) {
      step.run(array::Bindings().vector("a", x).scalar("mask", mask).output("result", y));
      std::swap(x, y);
    }
    CHECK(x == safegpu::reference::sorted(a));
  }
}

TEST_CASE("array: row, column, diagonal and at read a matrix at computed places") {
  using namespace obsidian::array;
  const uint32_t rows = 5, cols = 7, pitch = 9;
  std::vector<float> m(size_t{rows} * pitch);
  for (size_t i = 0; i < m.size(); ++i) m[i] = float(i) + 0.5f;
  const auto a = matrixInput<float>("a");
  const auto k = scalarInput<uint32_t>("k");
  // row k and column k, and at past the end (0)
  const Plan plan({{"r", row(a, k)},
                   {"c", column(a, k)},
                   {"e", at(row(a, k), 3u) + at(column(a, 2u), k)},
                   {"past", at(row(a, k), cols)}});
  for (uint32_t kk : {0u, 3u, 4u, 6u, 9u}) {
    std::vector<float> r(cols, kNan), c(rows, kNan), e(1, kNan), past(1, kNan);
    plan.run(Bindings()
                 .matrix("a", m, rows, cols, pitch)
                 .scalar("k", kk)
                 .output("r", r)
                 .output("c", c)
                 .output("e", e)
                 .output("past", past));
    for (uint32_t j = 0; j < cols; ++j) {
      CHECK(r[j] == (kk < rows ? m[size_t{kk} * pitch + j] : 0.0f));
    }
    for (uint32_t i = 0; i < rows; ++i) {
      CHECK(c[i] == (kk < cols ? m[size_t{i} * pitch + kk] : 0.0f));
    }
    const float want = (kk < rows ? m[size_t{kk} * pitch + 3] : 0.0f) +
                       (kk < rows ? m[size_t{kk} * pitch + 2] : 0.0f);
    CHECK(e[0] == want);
    CHECK(past[0] == 0.0f);
  }
  // The diagonal of a stored product (read at other indices: a kernel after the product's).
  const Plan diag({{"d", diagonal(matmul(a, transpose(a)))}});
  CHECK(diag.kernelCount() == 2);
  std::vector<float> d(rows, kNan);
  diag.run(Bindings().matrix("a", m, rows, cols, pitch).output("d", d));
  for (uint32_t i = 0; i < rows; ++i) {
    double s = 0;
    for (uint32_t j = 0; j < cols; ++j) s += double(m[i * pitch + j]) * m[i * pitch + j];
    CHECK(std::fabs(d[i] - s) <= 1e-5 * s);
  }
  // Errors name the operation and the rule.
  CHECK(errorOf([&] { (void)row(a, scalarInput<float>("x")); }).find("row(m, k)") !=
        std::string::npos);
  CHECK(errorOf([&] {
          (void)at(vectorInput<float>("v"), scalarInput<int32_t>("i"));
        }).find("Scalar<uint32_t>") != std::string::npos);
}
