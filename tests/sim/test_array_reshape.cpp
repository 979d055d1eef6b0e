// Whole-array programs' reshapes on the simulator: reshape(v, cols) (a vector's elements as
// rows) and flatten(m) (a matrix's elements row by row, a pitched input's padding skipped) read
// through by every pass kind, fused and unfused, against plain C++; the extents they tie (rows
// = len / cols, len = rows x cols) and their errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <obsidian/array.hpp>
#include <random>

#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::array;
using ::testing::errorOf;

namespace {
std::vector<uint32_t> words(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) x = g() % 1000;
  return v;
}
}  // namespace

TEST_CASE("array programs: reshape and flatten read through every pass kind") {
  const uint32_t cols = 13, rows = 77, n = cols * rows;
  const uint32_t mr = 28, mc = 30, pitch = 35, k = 40;  // (28 x 30 = 21 rows of 40)
  const std::vector<uint32_t> v = words(n, 1), x = words(cols, 2), m = words(size_t{mr} * pitch, 3);
  const auto V = vectorInput<uint32_t>("v"), X = vectorInput<uint32_t>("x");
  const auto M = matrixInput<uint32_t>("m");
  const auto R = reshape(V * 3u, cols);  // (a map of v, read as rows)
  const std::vector<Output> program = {
      {"rowSums", rowReduce(Sum{}, R)},              // a row pass
      {"colMax", colReduce(Max{}, R)},               // a column pass
      {"ax", gemv(R, X)},                            // rows times x
      {"t", transpose(R) + 1u},                      // a staged transpose
      {"flat", flatten(M) * 2u},                     // a vector pass over a pitched matrix
      {"total", sum(flatten(M))},                    // a whole reduction of it
      {"prefix", inclusiveScan(Sum{}, flatten(M))},  // a scan of it
      {"back", reshape(flatten(M), k) + 5u},         // a matrix as another shape
      {"rowsOf", len(rowReduce(Sum{}, R))},          // rows = len / cols, at run
  };
  std::vector<uint32_t> want(n);
  for (uint32_t i = 0; i < n; ++i) want[i] = 3u * v[i];
  for (const bool fuse : {true, false}) {
    CAPTURE(fuse);
    PlanOptions o;
    o.fuse = fuse;
    const Plan plan(program, o);
    std::vector<uint32_t> rowSums(rows), colMax(cols), ax(rows), t(n), flat(mr * mc), total(1),
        prefix(mr * mc), back(mr * mc), rowsOf(1);
    plan.run(Bindings()
                 .vector("v", v)
                 .vector("x", x)
                 .matrix("m", m, mr, mc, pitch)
                 .output("rowSums", rowSums)
                 .output("colMax", colMax)
                 .output("ax", ax)
                 .output("t", t)
                 .output("flat", flat)
                 .output("total", total)
                 .output("prefix", prefix)
                 .output("back", back)
                 .output("rowsOf", rowsOf));
    size_t bad = 0;
    for (uint32_t r = 0; r < rows; ++r) {
      uint32_t s = 0, d = 0;
      for (uint32_t c = 0; c < cols; ++c) {
        s += want[r * cols + c];
        d += want[r * cols + c] * x[c];
        bad += t[c * rows + r] != want[r * cols + c] + 1u;
      }
      bad += rowSums[r] != s;
      bad += ax[r] != d;
    }
    for (uint32_t c = 0; c < cols; ++c) {
      uint32_t most = 0;
      for (uint32_t r = 0; r < rows; ++r) most = std::max(most, want[r * cols + c]);
      bad += colMax[c] != most;
    }
    uint32_t s = 0;
    for (uint32_t i = 0; i < mr * mc; ++i) {
      const uint32_t e = m[size_t{i / mc} * pitch + i % mc];
      s += e;
      bad += flat[i] != 2u * e;
      bad += prefix[i] != s;
      bad += back[i] != e + 5u;  // (row i / 40, column i % 40 of the 21 x 40 view)
    }
    CHECK(bad == 0);
    CHECK(total[0] == s);
    CHECK(rowsOf[0] == rows);
  }
  // The planner: the map read as rows is recomputed (one array), and the row, column and gemv
  // reductions of R are siblings over one matrix space.
  const Plan fused(program);
  CHECK(fused.kernelCount() < Plan(program, PlanOptions{.fuse = false}).kernelCount());
}

TEST_CASE("array programs: reshape and flatten's extents and errors") {
  const auto V = vectorInput<float>("v");
  const auto M = matrixInput<float>("m");
  // cols >= 1
  CHECK(errorOf([&] { reshape(V, 0); }).find("reshape(v, cols): a row holds at least one") == 0);
  // len(v) a multiple of cols, at run
  const Plan rows({{"r", rowReduce(Sum{}, reshape(V, 8))}});
  std::vector<float> v(100, 1.0f), r(13);
  CHECK(errorOf([&] {
          rows.run(Bindings().vector("v", v).output("r", r));
        }).find("reshape(v, 8): v's 100 elements are not whole rows of 8") != std::string::npos);
  v.assign(104, 1.0f);
  rows.run(Bindings().vector("v", v).output("r", r));
  CHECK(r == std::vector<float>(13, 8.0f));
  // flatten(m)'s length is rows x cols: tied to a vector's length
  const Plan tied({{"s", flatten(M) + V}});
  std::vector<float> m(6 * 5, 2.0f), s(30), shortV(29, 1.0f), goodV(30, 1.0f);
  CHECK(errorOf([&] {
          tied.run(Bindings().matrix("m", m, 6, 5, 5).vector("v", shortV).output("s", s));
        }).find("a flatten's length (30)") != std::string::npos);
  tied.run(Bindings().matrix("m", m, 6, 5, 5).vector("v", goodV).output("s", s));
  CHECK(s == std::vector<float>(30, 3.0f));
  // a flatten tied to one of its own extents cannot agree: refused when planned
  CHECK(errorOf([&] {
          Plan({{"c", flatten(M) + column(M, 0u)}});
        }).find("is tied to a length it is made from") != std::string::npos);
  // exported: the extents checked in the host function
  PlanOptions gpu;
  gpu.target = device::Target{true, 90, 132};
  const std::string header =
      Plan({{"r", rowReduce(Sum{}, reshape(V, 8))}}, gpu).exportHeader("f", "ns");
  CHECK(header.find("% 8ull != 0) return cudaErrorInvalidValue") != std::string::npos);
}
