// The kernel-fusion BLAS seed's eleven sequences as whole-array programs (obsidian/array.hpp),
// a few lines each, as the seed's Listing 1 writes them: what blas::sequence plans by hand
// (blas.hpp), left to array::Plan to fuse. script(name) is the program's outputs, with the
// names and constants (kAlpha, kBeta) of blas::sequence(name, ..); bindings(name, pr, b) binds
// the buffers blas::randomInputs (host, the simulator) or blas::upload (device, the GPU) made
// for blas::sequence(name, pr), so blas::reference and blas::mismatch check a planned run as
// they check the hand-planned one (tests/sim/test_array_blas.cpp, bench/blas).
#pragma once

#include <obsidian/array.hpp>
#include <string>
#include <utility>
#include <vector>

#include "blas.hpp"

namespace blas {

// The outputs of sequence `name` (blas::sequenceNames()) as an array program. An Error for an
// unknown name.
inline std::vector<obsidian::array::Output> script(const std::string& name) {
  using obsidian::array::matrixInput, obsidian::array::vectorInput;
  const float alpha = kAlpha, beta = kBeta;
  if (name == "AXPYDOT") {
    const auto w = vectorInput<float>("w"), v = vectorInput<float>("v"),
               u = vectorInput<float>("u");
    const auto z = w - alpha * v;
    return {{"z", z}, {"r", dot(z, u)}};
  }
  if (name == "SSCAL") {
    const auto x = vectorInput<float>("x");
    return {{"y", alpha * x}};
  }
  if (name == "WAXPBY") {
    const auto x = vectorInput<float>("x"), y = vectorInput<float>("y");
    return {{"w", alpha * x + beta * y}};
  }
  if (name == "VADD") {
    const auto w = vectorInput<float>("w"), y = vectorInput<float>("y"),
               z = vectorInput<float>("z");
    return {{"x", w + y + z}};
  }
  if (name == "MADD") {
    const auto A = matrixInput<float>("A"), B = matrixInput<float>("B");
    return {{"C", A + B}};
  }
  if (name == "SGEMV") {
    const auto A = matrixInput<float>("A");
    const auto x = vectorInput<float>("x"), y = vectorInput<float>("y");
    return {{"z", alpha * gemv(A, x) + beta * y}};
  }
  if (name == "GESUMMV") {
    // y = alpha A x + beta B x, written as the fused form computes it: one row pass over
    // alpha A + beta B (each element of both matrices read once, x once) rather than two gemvs
    // added. Exact arithmetic agrees; the float roundings differ by a few ulps of the terms,
    // within blas::reference's tolerance.
    const auto A = matrixInput<float>("A"), B = matrixInput<float>("B");
    const auto x = vectorInput<float>("x");
    return {{"y", gemv(alpha * A + beta * B, x)}};
  }
  if (name == "ATAX") {
    const auto A = matrixInput<float>("A");
    const auto x = vectorInput<float>("x");
    return {{"y", gemvT(A, gemv(A, x))}};
  }
  if (name == "SGEMVT") {
    const auto A = matrixInput<float>("A");
    const auto y = vectorInput<float>("y"), z = vectorInput<float>("z");
    const auto x = beta * gemvT(A, y) + z;
    return {{"x", x}, {"w", alpha * gemv(A, x)}};
  }
  if (name == "GEMVER") {
    const auto A = matrixInput<float>("A");
    const auto u1 = vectorInput<float>("u1"), v1 = vectorInput<float>("v1"),
               u2 = vectorInput<float>("u2"), v2 = vectorInput<float>("v2"),
               y = vectorInput<float>("y"), z = vectorInput<float>("z");
    const auto B = ger2(A, u1, v1, u2, v2);
    const auto x = beta * gemvT(B, y) + z;
    return {{"B", B}, {"x", x}, {"w", alpha * gemv(B, x)}};
  }
  if (name == "BiCGK") {
    const auto A = matrixInput<float>("A");
    const auto p = vectorInput<float>("p"), r = vectorInput<float>("r");
    return {{"q", gemv(A, p)}, {"s", gemvT(A, r)}};
  }
  throw Error("blas::script: no sequence named '" + name +
              "' (AXPYDOT, ATAX, BiCGK, SGEMV, SGEMVT, SSCAL, GEMVER, GESUMMV, MADD, VADD, "
              "WAXPBY)");
}

namespace detail {
// Whether input `name` of a sequence is a matrix (A, and B where it is an input: MADD,
// GESUMMV; GEMVER's B is a dense output).
inline bool isMatrixInput(const std::string& name) { return name == "A" || name == "B"; }

// Every input and output of blas::sequence(name, pr), each buffer found by `data(name)`.
template <class Lookup>
obsidian::array::Bindings bindAll(const std::string& name, const Problem& pr, Lookup data) {
  const Sequence q = sequence(name, pr);
  obsidian::array::Bindings bound;
  for (const auto& [in, size] : q.inputs) {
    if (isMatrixInput(in)) {
      bound.matrix(in, std::as_const(data(in)), pr.rows, pr.cols, pr.pitch);
    } else {
      bound.vector(in, std::as_const(data(in)));
    }
  }
  for (const auto& [out, size] : q.outputs) bound.output(out, data(out));
  return bound;
}
}  // namespace detail

// The host buffers of sequence `name` (blas::randomInputs(blas::sequence(name, pr), ..)) bound
// for a planned run on the simulator: matrix inputs rows x cols with pr's pitch; outputs (MADD's
// C and GEMVER's B dense, rows x cols) written in place. `b` must outlive the bindings.
inline obsidian::array::Bindings bindings(const std::string& name, const Problem& pr, Buffers& b) {
  return detail::bindAll(name, pr,
                         [&](const std::string& k) -> std::vector<float>& { return b.at(k); });
}

// The same on the device (blas::upload's buffers), for a planned run on the GPU.
inline obsidian::array::Bindings bindings(const std::string& name, const Problem& pr,
                                          DeviceBuffers& d) {
  return detail::bindAll(
      name, pr, [&](const std::string& k) -> gpu::DeviceBuffer<float>& { return d.at(k); });
}

}  // namespace blas
