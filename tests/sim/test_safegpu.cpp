// SafeGPU's operations with their contracts (examples/safegpu/safegpu.hpp, seed 003) on the
// simulator: results against the C++ reference on odd sizes, every precondition refusing a
// launch with its message before anything runs, every postcondition reporting the first failing
// element, and the same kernels captured without contracts reporting nothing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <obsidian/sim.hpp>

#include "../../examples/safegpu/safegpu.hpp"
#include "../support.hpp"

using namespace obsidian;
using ::testing::errorOf;
namespace sg = safegpu;
namespace reference = safegpu::reference;

namespace {

// Random floats in [-1, 1) (multiples of 2^-10, none of them 0), reproducible from `seed`.
std::vector<float> randomFloats(size_t n, uint32_t seed) {
  const std::vector<uint32_t> w = ::testing::randomWords(n, seed, 2048);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (static_cast<float>(w[i]) - 1024.0f + 0.5f) / 1024.0f;
  return v;
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

const sg::Sim sim;

}  // namespace

TEST_CASE("safegpu: vector operations and queries agree with the reference") {
  const size_t n = 9001;  // 3 chunks of a reduction, the last short; no multiple of a block
  const std::vector<float> a = randomFloats(n, 1), b = randomFloats(n, 2);
  std::vector<float> r(n);
  sim(sg::plus(), {a, b, r});
  CHECK(r == reference::plus(a, b));
  sim(sg::compwiseDivide(), {a, b, r});
  CHECK(r == reference::compwiseDivide(a, b));

  std::vector<float> part(sg::partialCount(n)), one(1);
  REQUIRE(part.size() == 3);
  sg::dot()(sim, {a, b}, part, one);
  CHECK(sg::agrees(one[0], reference::dot(a, b)));
  sg::sum()(sim, {a}, part, one);
  CHECK(sg::agrees(one[0], reference::sum(a)));
  sg::minimum()(sim, {a}, part, one);
  CHECK(one[0] == reference::min(a));
  sg::maximum()(sim, {a}, part, one);
  CHECK(one[0] == reference::max(a));

  std::vector<uint32_t> flags(sg::partialCount(n)), answer(1);
  sg::forAllNonZero()(sim, {b}, flags, answer);
  CHECK(answer[0] != 0);
  std::vector<float> withZero = b;
  withZero[n - 1] = 0.0f;  // in the short last chunk
  sg::forAllNonZero()(sim, {withZero}, flags, answer);
  CHECK(answer[0] == 0);
  for (float bound : {-0.999f, -1.5f}) {
    sg::existsBelow()(sim, {a, bound}, flags, answer);
    CHECK((answer[0] != 0) == reference::existsBelow(a, bound));
  }
  const std::vector<float> sorted = reference::sorted(a);
  sg::isSorted()(sim, {sorted}, flags, answer);
  CHECK(answer[0] != 0);
  std::vector<float> almost = sorted;
  almost[4096] = -2.0f;  // below its predecessor, the first of the second chunk
  sg::isSorted()(sim, {almost}, flags, answer);
  CHECK(answer[0] == 0);
}

TEST_CASE("safegpu: the sort sorts any length, the last step ensuring it") {
  // The flip form of the bitonic network: log2(n) (log2(n) + 1) / 2 steps for a power of two.
  CHECK(sg::sortMasks(1) == std::vector<uint32_t>{0});
  CHECK(sg::sortMasks(2) == std::vector<uint32_t>{1});
  CHECK(sg::sortMasks(5) == std::vector<uint32_t>{1, 3, 1, 7, 2, 1});
  CHECK(sg::sortMasks(1024).size() == 55);
  const sg::Sort sort;
  REQUIRE(sort.last.postconditions().size() == 1);
  CHECK(sort.step.postconditions().empty());
  for (size_t n : {size_t{1}, size_t{2}, size_t{3}, size_t{1000}, size_t{1025}}) {
    std::vector<float> v = randomFloats(n, static_cast<uint32_t>(n));
    if (n == 1000) v[17] = v[900] = v[901];  // equal elements
    std::vector<float> x(n), y(n);
    const std::vector<float>& got = sort(sim, v, x, y);
    CHECK_MESSAGE(got == reference::sorted(v), "n = " << n);
  }
}

TEST_CASE("safegpu: matrix operations agree with the reference") {
  const uint32_t rows = 45, cols = 71, pitch = 74;  // tiles of 32 x 32 cover neither side
  const std::vector<float> m = randomFloats(size_t{rows} * pitch, 3);
  std::vector<float> t(size_t{rows} * cols);
  sim(sg::transpose(), {m, rows, cols, pitch, t});
  CHECK(t == reference::transpose(m, rows, cols, pitch));

  const std::vector<float> v = randomFloats(rows, 4);
  std::vector<float> mv(cols);
  sim(sg::transposeRightMultiply(), {m, rows, cols, pitch, v, mv});
  const auto want = reference::transposeRightMultiply(m, rows, cols, pitch, v);
  for (uint32_t c = 0; c < cols; ++c) REQUIRE_MESSAGE(sg::agrees(mv[c], want[c]), "c = " << c);

  const uint32_t inner = 13, right = 33;
  const std::vector<float> x = randomFloats(size_t{rows} * inner, 5),
                           y = randomFloats(size_t{inner} * right, 6);
  std::vector<float> xy(size_t{rows} * right);
  sim(sg::multiply(), {x, rows, inner, inner, y, inner, right, right, xy});
  const auto product = reference::multiply(x, rows, inner, inner, y, right, right);
  for (size_t i = 0; i < xy.size(); ++i) REQUIRE_MESSAGE(sg::agrees(xy[i], product[i]), i);

  // Gaussian elimination: upper triangular, as the reference computes it (same operations).
  const uint32_t n = 23;
  std::vector<float> g = randomFloats(size_t{n} * n, 7);
  for (uint32_t i = 0; i < n; ++i) g[size_t{i} * n + i] += static_cast<float>(n);
  std::vector<float> gx(g.size()), gy(g.size());
  // The functor is named: GCC 13 calls a reference returned by a temporary's call dangling.
  const sg::Gauss gauss;
  const std::vector<float>& upper = gauss(sim, g, n, gx, gy);
  CHECK(upper == reference::gauss(g, n));
  for (uint32_t r = 1; r < n; ++r) CHECK(upper[size_t{r} * n] == 0.0f);
}

TEST_CASE("safegpu: preconditions refuse the launch with their message") {
  std::vector<float> a = randomFloats(1001, 8), shorter = randomFloats(1000, 9), r(1001, 7.0f);
  CHECK(errorOf([&] {
          sim(sg::plus(), {a, shorter, r});
        }) ==
        "launch of kernel plus: other.count = count (otherLen == currentLen fails with "
        "currentLen = 1001, otherLen = 1000)");
  CHECK(r == std::vector<float>(1001, 7.0f));  // nothing ran
  CHECK(errorOf([&] {
          sim(sg::compwiseDivide(), {a, shorter, r});
        }).starts_with("launch of kernel compwiseDivide: other.count = count ("));
  std::vector<float> part(1), one(1);
  CHECK(errorOf([&] {
          sg::dot()(sim, {a, shorter}, part, one);
        }) ==
        "launch of kernel dotPartials: a.count = b.count (aLen == bLen fails with aLen = 1001, "
        "bLen = 1000)");
  const std::vector<float> empty;
  std::vector<float> none;
  CHECK(errorOf([&] { sg::maximum()(sim, {empty}, none, one); }) ==
        "launch of kernel maxPartials: count > 0 (currentLen > 0u fails with currentLen = 0)");
  CHECK(errorOf([&] { sg::Sort()(sim, empty, none, none); }) ==
        "launch of kernel sortLastStep: a.count > 0 (aLen > 0u fails with aLen = 0)");

  std::vector<float> m(12 * 10), v(11), mv(10);
  CHECK(errorOf([&] {
          sim(sg::transposeRightMultiply(), {m, 12u, 10u, 10u, v, mv});
        }) ==
        "launch of kernel transposeRightMultiply: matrix.rows = vector.count (matrixRows == "
        "vectorLen fails with matrixRows = 12, vectorLen = 11)");
  std::vector<float> x(6 * 7), y(6 * 5), xy(6 * 5);
  CHECK(errorOf([&] {
          sim(sg::multiply(), {x, 6u, 7u, 7u, y, 6u, 5u, 5u, xy});
        }) ==
        "launch of kernel multiply: other.rows = columns (otherRows == currentCols fails with "
        "currentCols = 7, otherRows = 6)");
  std::vector<float> g(12), h(12);
  CHECK(errorOf([&] {
          sim(sg::gaussStep(), {g, 3u, 4u, 4u, 0u, h});
        }) ==
        "launch of kernel gaussStep: matrix.rows = matrix.columns (matrixRows == matrixCols "
        "fails with matrixCols = 4, matrixRows = 3)");
  std::vector<float> sq(9), sq2(9);
  CHECK(errorOf([&] {
          sim(sg::gaussStep(), {sq, 3u, 3u, 3u, 3u, sq2});
        }) ==
        "launch of kernel gaussStep: step < matrix.rows (step < matrixRows fails with "
        "matrixRows = 3, step = 3)");
  // Without contracts there is nothing to refuse (zipWith takes the shorter length).
  std::vector<float> r1000(1000);
  CHECK(errorOf([&] { sim(sg::plus(false), {a, shorter, r1000}); }) == "no error");
  CHECK(sg::plus(false).report().preconditions.empty());
}

TEST_CASE("safegpu: postconditions report the first failing element") {
  const size_t n = 5000;
  const std::vector<float> a = randomFloats(n, 10);
  std::vector<float> b = randomFloats(n, 11), q(n);
  b[3001] = 0.0f;
  b[4002] = 0.0f;
  const std::string fails = errorOf([&] { sim(sg::compwiseDivide(), {a, b, q}); });
  CHECK(
      fails.starts_with("simulate(kernel compwiseDivide): postcondition \"Result * other = "
                        "Current\" fails: result[3001] = "));
  CHECK(contains(fails, "(the first failing element of result;"));
  // Without contracts the same division passes, inf or NaN in the result.
  CHECK(errorOf([&] { sim(sg::compwiseDivide(false), {a, b, q}); }) == "no error");
  CHECK(!std::isfinite(q[3001]));
  CHECK(sg::compwiseDivide(false).postconditions().empty());

  // A sort with a defect: its first step left out.
  const std::vector<float> v = randomFloats(777, 12);
  std::vector<float> x(777), y(777);
  std::vector<uint32_t> masks = sg::sortMasks(777);
  masks.erase(masks.begin());
  CHECK(errorOf([&] { sg::Sort()(sim, v, x, y, masks); })
            .starts_with("simulate(kernel sortLastStep): postcondition \"Result.is_sorted\" fails: "
                         "result["));
  const sg::Sort uncontracted(false);  // named, as gauss above
  const std::vector<float>& unsorted = uncontracted(sim, v, x, y, masks);
  CHECK(!std::is_sorted(unsorted.begin(), unsorted.end()));

  // A zero pivot: step 0 divides the rows below by it.
  const uint32_t n2 = 9;
  std::vector<float> g = randomFloats(size_t{n2} * n2, 13), gx(g.size()), gy(g.size());
  g[0] = 0.0f;
  CHECK(errorOf([&] { sg::Gauss()(sim, g, n2, gx, gy); })
            .starts_with(
                "simulate(kernel gaussStep): postcondition \"pivot /= 0: no element is "
                "inf or NaN\" fails: result[10] = "));  // (row 1, column 1): column 0 is zeroed

  // The transpose's range postcondition, run as the check kernel it is (the kernel's
  // arguments, then the index of the first failing element): it holds for the transpose and
  // finds the first element of a result that is not one.
  const Kernel t = sg::transpose();
  REQUIRE(t.postconditions().size() == 1);
  CHECK(t.report().postconditions[0].message == "Result.item(j, i) = item(i, j)");
  const uint32_t rows = 40, cols = 33, pitch = 35;
  const std::vector<float> m = randomFloats(size_t{rows} * pitch, 14);
  std::vector<float> tm = reference::transpose(m, rows, cols, pitch);
  std::vector<uint32_t> first = {0xffffffffu};
  simulate(t.postconditions()[0].check, {m, rows, cols, pitch, tm, first});
  CHECK(first[0] == 0xffffffffu);
  std::swap(tm[700], tm[1000]);
  simulate(t.postconditions()[0].check, {m, rows, cols, pitch, tm, first});
  CHECK(first[0] == 700);
}
