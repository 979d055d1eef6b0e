// The seeds' benchmark programs as whole-array programs (obsidian/array.hpp), each a few lines as
// its paper writes it, left to array::Plan to fuse: Accelerate's dotp, SAXPY, Black-Scholes and
// SMVM (seed 004, Section 6), Barracuda's window and 2-D stencils and RMSE (seed 000, Chapter 4),
// and the SafeGPU benchmarks (seed 003, Section 6.3) that are array programs: vector addition,
// the dot product, component-wise division and transposition, with SafeGPU's contracts. The
// element functions are the hand kernels' own (examples/accelerate, examples/stencils), so a
// planned program computes what its hand-written kernel computes: tests/sim/test_array_seeds.cpp
// checks them against the examples' C++ references, bench/array/seeds_bench.cpp races them
// against the hand-written kernels on the GPU.
//
// SafeGPU's matrix multiplication, Gaussian elimination and sort are here as the hand
// kernels of examples/safegpu compute them: the product (matmul), one elimination step (a
// pivot row and column read through row, column and at), one step of the sorting network
// (the partner read through gather); the host loops over steps as the hand programs do, and
// the plan cache makes every step after the first plan and compile nothing.
#pragma once

#include <obsidian/array.hpp>
#include <string>
#include <vector>

#include "../accelerate/accelerate.hpp"
#include "../stencils/stencils.hpp"

namespace seeds {

using namespace obsidian;
using namespace obsidian::array;
using Program = std::vector<Output>;

// ---------------------------------------------------------------- Accelerate (seed 004)
// dotp xs ys = fold (+) 0 (zipWith (*) xs ys)
inline Program dotp() {
  const auto x = vectorInput<float>("x"), y = vectorInput<float>("y");
  return {{"dot", dot(x, y)}};
}
// saxpy alpha xs ys = zipWith (\x y -> alpha * x + y) xs ys
inline Program saxpy() {
  const auto alpha = scalarInput<float>("alpha");
  const auto x = vectorInput<float>("x"), y = vectorInput<float>("y");
  return {{"z", alpha * x + y}};
}
// Both prices of every option: two maps over (s, x, t) that the planner fuses into one pass,
// sharing d1, d2 and the CNDs as the hand kernel does.
inline Program blackScholes() {
  const auto s = vectorInput<float>("s"), x = vectorInput<float>("x"), t = vectorInput<float>("t");
  const auto call =
      zipWith([](const EFloat& a, const EFloat& b,
                 const EFloat& c) { return accelerate::blackScholesBody(a, b, c).first; },
              s, x, t);
  const auto put =
      zipWith([](const EFloat& a, const EFloat& b,
                 const EFloat& c) { return accelerate::blackScholesBody(a, b, c).second; },
              s, x, t);
  return {{"call", call}, {"put", put}};
}
// smvm (CSR): y = A x, the products' gather fused into the segmented reduction.
inline Program smvm() {
  const auto values = vectorInput<float>("values"), x = vectorInput<float>("x");
  const auto columns = vectorInput<uint32_t>("columns"),
             offsets = vectorInput<uint32_t>("rowOffsets");
  return {{"y", spmv(values, columns, offsets, x)}};
}

// ---------------------------------------------------------------- Barracuda (seed 000)
// The window stencils: out[i] = f(in[i .. i + width)), f the hand kernels' own.
inline Program forwardDifference() {
  return {{"out", window(vectorInput<float>("in"), 2, stencils::kDifference)}};
}
inline Program movingAverage() {
  return {{"out", window(vectorInput<float>("in"), 15, stencils::kMovingAverage)}};
}
// The clamped 2-D stencils.
inline Program jacobi() { return {{"out", stencil(matrixInput<float>("in"), stencils::kJacobi)}}; }
template <uint32_t Radius>
Program blur() {
  return {{"out", stencil(matrixInput<float>("in"), stencils::kBlur<Radius>)}};
}
// rmse x y = sqrt (sum ((x - y)^2) / len x) (Barracuda's Listing 4.1).
inline Program rmse() {
  const auto x = vectorInput<float>("x"), y = vectorInput<float>("y");
  const auto total = sum(zipWith(stencils::kSquaredDifference, x, y));
  return {
      {"rmse", zipWith([](const EFloat& s, const EWord32& n) { return sqrt(s / cast<float>(n)); },
                       total, len(x))}};
}

// ---------------------------------------------------------------- SafeGPU (seed 003)
// x is a finite float (not inf, not NaN: NaN compares false).
inline EBool finite(const EFloat& v) { return fabs(v) <= std::numeric_limits<float>::max(); }

// plus: result = current + other, ensure every element finite (an overflow is a violation).
inline Program vectorAddition() {
  const auto current = vectorInput<float>("current"), other = vectorInput<float>("other");
  return {{"result", ensure(current + other, finite, "Result is finite")}};
}
// The dot product.
inline Program dotProduct() {
  const auto current = vectorInput<float>("current"), other = vectorInput<float>("other");
  return {{"dot", dot(current, other)}};
}
// compwise_divide (SafeGPU's Listing 2): require other.for_all (el /= 0), which an array
// program can check element by element (a kernel's precondition reads only lengths).
inline Program compwiseDivide() {
  const auto current = vectorInput<float>("current");
  const auto other = require(
      vectorInput<float>("other"), [](const EFloat& v) { return v != 0.0f; },
      "other.for_all (el /= 0)");
  return {{"result", current / other}};
}
// transpose: the cols x rows matrix (a transposed view, made manifest).
inline Program transposition() { return {{"result", transpose(matrixInput<float>("m"))}}; }
// multiply: the rows(current) x cols(other) product (SafeGPU requires other.rows = columns:
// the planner ties the two extents and refuses a run where they differ).
inline Program matrixMultiplication() {
  return {{"result", matmul(matrixInput<float>("current"), matrixInput<float>("other"))}};
}
// One step of gauss_determinant (Listing 5): every row below `step` less its multiple that
// zeroes its element in column `step`, as the hand kernel (safegpu::gaussStep) computes it;
// with `ensureFinite`, its postcondition (a zero pivot makes the rows below inf or NaN).
inline Program gaussStep(bool ensureFinite = true) {
  const auto m = matrixInput<float>("matrix");
  const auto step = scalarInput<uint32_t>("step");
  const auto pivotRow = row(m, step), pivotColumn = column(m, step);
  const auto r = replicateCols(indices(pivotColumn)), c = replicateRows(indices(pivotRow));
  const auto next = zipWith(
      [](const EWord32& i, const EWord32& j, const EWord32& k, const EFloat& x, const EFloat& xik,
         const EFloat& pivot, const EFloat& xkj) {
        const EFloat eliminated = x - xik / pivot * xkj;
        return ifThenElse(i > k, ifThenElse(j == k, EFloat(0.0f), eliminated), x);
      },
      r, c, step, m, replicateCols(pivotColumn), at(pivotRow, step), replicateRows(pivotRow));
  if (!ensureFinite) return {{"result", next}};
  return {{"result", ensure(next, finite, "pivot /= 0: no element is inf or NaN")}};
}
// log |det| of an upper triangular matrix (the eliminated one): the sum of its diagonal's
// log |d|, which does not overflow where the product would.
inline Program logAbsDeterminant() {
  const auto d = diagonal(matrixInput<float>("matrix"));
  return {{"logAbs", sum(map([](const EFloat& x) { return log(fabs(x)); }, d))}};
}
// One step of the sorting network of examples/safegpu (sortMasks: a bitonic network, one
// launch a step): element i against i ^ mask, the smaller kept at the lower index; a partner
// past the end leaves i as it is.
inline Program sortStep() {
  const auto a = vectorInput<float>("a");
  const auto i = indices(a);
  const auto partner = zipWith([](const EWord32& k, const EWord32& mask) { return k ^ mask; }, i,
                               scalarInput<uint32_t>("mask"));
  return {{"result", zipWith(
                         [](const EWord32& k, const EWord32& p, const EWord32& n, const EFloat& x,
                            const EFloat& y) {
                           return ifThenElse(p < n, ifThenElse(k < p, min(x, y), max(x, y)), x);
                         },
                         i, partner, len(a), a, gather(a, partner))}};
}

}  // namespace seeds
