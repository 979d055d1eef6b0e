// Accelerate's CSR sparse-matrix vector product (examples/accelerate/spmv.hpp) on the simulator:
// every lane-group width on matrices with empty rows, rows of thousands and a row count that no
// block divides, checked against the C++ reference; the clamped reads of malformed matrices;
// its preconditions and its argument errors by message.
#include <doctest/doctest.h>

#include <obsidian/sim.hpp>

#include "../../examples/accelerate/spmv.hpp"
#include "../support.hpp"

using namespace obsidian;
using ::testing::errorOf;

namespace {

std::vector<float> run(const Kernel& k, const accelerate::Csr& a, const std::vector<float>& x) {
  std::vector<float> y(a.rows, -7.0f);  // a row left unwritten keeps -7 and fails the check
  simulate(k, {a.rowOffsets, a.columns, a.values, x, y});
  return y;
}

void checkAgainstReference(const accelerate::Csr& a, const std::vector<float>& x,
                           const std::vector<float>& y) {
  const std::vector<float> want = accelerate::spmvReference(a, x);
  for (uint32_t r = 0; r < a.rows; ++r) {
    INFO("row " << r << " of length " << a.rowOffsets[r + 1] - a.rowOffsets[r]);
    REQUIRE(std::fabs(y[r] - want[r]) <= accelerate::spmvTolerance(a, x, r));
  }
}

std::vector<float> randomVector(uint32_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = d(rng);
  return x;
}

}  // namespace

TEST_CASE("spmv: every lane-group width on rows of every kind") {
  // 1003 rows (a prime: no block divides them): a sixth empty, a few in the thousands.
  const accelerate::Csr a = accelerate::powerLawMatrix(1003, 700, 16, 3000, 5);
  // Both extremes are there.
  uint32_t empty = 0;
  for (uint32_t r = 0; r < a.rows; ++r) empty += a.rowOffsets[r] == a.rowOffsets[r + 1];
  CHECK(empty > 50);
  CHECK(a.longestRow() >= 1000);
  const std::vector<float> x = randomVector(a.cols, 9);
  for (uint32_t w : {1u, 2u, 4u, 8u, 16u, 32u}) {
    INFO("threadsPerRow " << w);
    checkAgainstReference(a, x, run(accelerate::spmv(w, 128), a, x));
  }
  for (uint32_t w : {1u, 8u, 32u}) {  // three products in flight a lane, and the tails
    INFO("threadsPerRow " << w << ", unroll 3");
    checkAgainstReference(a, x, run(accelerate::spmv(w, 64, 3), a, x));
  }
}

TEST_CASE("spmv: banded and uniform matrices, and one row") {
  const accelerate::Csr banded = accelerate::bandedMatrix(333, 4, 1);
  CHECK(banded.rowOffsets.back() == 333 * 9 - 2 * (1 + 2 + 3 + 4));
  const std::vector<float> x = randomVector(333, 2);
  checkAgainstReference(banded, x, run(accelerate::spmv(8), banded, x));
  const accelerate::Csr uniform = accelerate::uniformMatrix(257, 100, 5, 3);
  const std::vector<float> x2 = randomVector(100, 4);
  checkAgainstReference(uniform, x2, run(accelerate::spmv(4, 64), uniform, x2));
  const accelerate::Csr one = accelerate::uniformMatrix(1, 50, 40, 6);
  const std::vector<float> x3 = randomVector(50, 7);
  checkAgainstReference(one, x3, run(accelerate::spmv(32), one, x3));
}

TEST_CASE("spmv: a matrix without rows writes nothing") {
  const accelerate::Csr none;
  std::vector<float> y;
  simulate(accelerate::spmv(4),
           {none.rowOffsets, none.columns, none.values, std::vector<float>(3, 1.0f), y});
  CHECK(y.empty());
}

TEST_CASE("spmv: a malformed matrix reads nothing out of bounds") {
  // Row 0 runs past nnz, row 1 runs backwards, row 2 names a column past x.
  const std::vector<uint32_t> offsets = {0, 9, 2, 4};
  const std::vector<uint32_t> columns = {0, 1, 2, 50};
  const std::vector<float> values = {1, 2, 3, 4}, x = {1, 10, 100};
  std::vector<float> y(3);
  simulate(accelerate::spmv(2, 32), {offsets, columns, values, x, y});
  CHECK(y[0] == 1 + 20 + 300 + 0);  // cut to [0, 4), column 50 reads 0
  CHECK(y[1] == 0);                 // [9, 2) cut to [4, 4): empty
  CHECK(y[2] == 300);               // [2, 4): 3 * 100 + 4 * 0
}

TEST_CASE("spmv: its preconditions and arguments, by message") {
  std::vector<float> y(1);
  CHECK(errorOf([&] {
          simulate(accelerate::spmv(4), {std::vector<uint32_t>(), std::vector<uint32_t>(),
                                         std::vector<float>(), std::vector<float>(1), y});
        }).find("the row offsets hold rows + 1 entries") != std::string::npos);
  CHECK(errorOf([&] {
          simulate(accelerate::spmv(4), {std::vector<uint32_t>{0, 2}, std::vector<uint32_t>(2),
                                         std::vector<float>(3), std::vector<float>(1), y});
        }).find("the columns and values have one length") != std::string::npos);
  CHECK(errorOf([] { accelerate::spmv(3); }) ==
        "spmv needs threadsPerRow a power of two of at most 32; got 3");
  CHECK(errorOf([] { accelerate::spmv(64); }).find("got 64") != std::string::npos);
  CHECK(errorOf([] { accelerate::spmv(4, 100); }) ==
        "spmv needs threads a multiple of 32 of at most 1024; got 100");
}

TEST_CASE("spmv: the generators refuse nonzeros without columns") {
  CHECK(errorOf([] { accelerate::uniformMatrix(4, 0, 2, 1); }) ==
        "uniformMatrix needs at least one column for its nonzeros; got 0");
  CHECK(errorOf([] { accelerate::powerLawMatrix(4, 0, 16, 100, 1); }) ==
        "powerLawMatrix needs at least one column for its nonzeros; got 0");
  CHECK(accelerate::uniformMatrix(4, 0, 0, 1).rowOffsets == std::vector<uint32_t>(5, 0));
  // A band reaching past 2^32 - 1 stops at the last column.
  const accelerate::Csr tiny = accelerate::bandedMatrix(3, 0xFFFFFFFFu, 1);
  CHECK(tiny.rowOffsets == std::vector<uint32_t>{0, 3, 6, 9});
}

TEST_CASE("spmv: the lane group follows the mean row length and the columns' spread") {
  // Scattered columns: the power of two at or above the mean, 2 to 32.
  CHECK(accelerate::spmvThreadsPerRow(0, 5000) == 2);
  CHECK(accelerate::spmvThreadsPerRow(2, 5000) == 2);
  CHECK(accelerate::spmvThreadsPerRow(2.5, 5000) == 4);
  CHECK(accelerate::spmvThreadsPerRow(9, 5000) == 16);
  CHECK(accelerate::spmvThreadsPerRow(16, 5000) == 16);
  CHECK(accelerate::spmvThreadsPerRow(5000, 5000) == 32);
  // Columns near the diagonal: the power of two at or below a quarter of the mean, 1 to 32.
  CHECK(accelerate::spmvThreadsPerRow(3, 4) == 1);
  CHECK(accelerate::spmvThreadsPerRow(9, 4) == 2);
  CHECK(accelerate::spmvThreadsPerRow(16, 1024) == 4);
  CHECK(accelerate::spmvThreadsPerRow(1000, 10) == 32);
  // From the matrices: banded rows lie on the diagonal, uniform ones all over.
  const accelerate::Csr banded = accelerate::bandedMatrix(4096, 4, 1);
  CHECK(banded.meanDiagonalDistance() < 3);
  CHECK(accelerate::spmvThreadsPerRow(banded) == 2);
  const accelerate::Csr uniform = accelerate::uniformMatrix(4096, 4096, 16, 2);
  CHECK(uniform.meanDiagonalDistance() > 1024);
  CHECK(accelerate::spmvThreadsPerRow(uniform) == 16);
}
