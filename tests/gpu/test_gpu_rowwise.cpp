// GPU tests of the row-wise operations (label gpu): softmax, layerNorm and rmsNorm of float,
// Half and BFloat16 rows on the device match a double reference, for rows held in registers
// (every vector width, one warp to 1024 threads), streamed rows, and odd lengths.
#include <doctest/doctest.h>

#include <obsidian/device/rowwise.hpp>

#include "../rowwise_reference.hpp"

using namespace obsidian;
using namespace obsidian::testing;

namespace {

template <class X>
void checkOnGpu(RowOp op, uint32_t rows, uint32_t cols) {
  const size_t n = size_t{rows} * cols;
  const std::vector<X> in =
      randomRows<X>(n, rows * 31u + cols, op == RowOp::LayerNorm ? 3.0f : 0.0f);
  const std::vector<X> gamma = randomRows<X>(cols, cols, 1.0f, 0.5f);
  const std::vector<X> beta = randomRows<X>(cols, cols + 1, 0.0f, 1.0f);
  gpu::DeviceBuffer<X> din(in), dg(gamma), db(beta), out(n);
  switch (op) {
    case RowOp::Softmax: device::softmax(din, out, rows, cols); break;
    case RowOp::LayerNorm: device::layerNorm(din, dg, db, out, rows, cols); break;
    case RowOp::RmsNorm: device::rmsNorm(din, dg, out, rows, cols); break;
  }
  const double eps = op == RowOp::LayerNorm ? 1e-5 : 1e-6;
  const std::vector<X> got = out.download();
  const std::vector<double> want = rowwiseReference(op, in, gamma, beta, rows, cols, eps);
  const long long far = firstFar(op, got, want);
  CHECK_MESSAGE(far < 0, name(op) << " " << cudaTypeName(scalarTypeOf<X>) << " " << rows << " x "
                                  << cols << ": element " << far << " is "
                                  << (far < 0 ? 0.0 : asDouble(got[far])) << ", want "
                                  << (far < 0 ? 0.0 : want[far]));
}

}  // namespace

TEST_CASE("gpu: softmax, layerNorm and rmsNorm of float, Half and BFloat16 rows") {
  const std::vector<std::pair<uint32_t, uint32_t>> shapes = {
      {1000, 1}, {513, 37}, {300, 1000}, {257, 4096}, {64, 1002}, {40, 32768}, {9, 70000}};
  for (RowOp op : {RowOp::Softmax, RowOp::LayerNorm, RowOp::RmsNorm}) {
    for (const auto& [rows, cols] : shapes) {
      checkOnGpu<float>(op, rows, cols);
      checkOnGpu<Half>(op, rows, cols);
      checkOnGpu<BFloat16>(op, rows, cols);
    }
  }
}
