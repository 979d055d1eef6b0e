// The parts of the row-wise operations (include/obsidian/device/rowwise.hpp) that need no
// template: the plan of a row length, and the checks of a policy and of the shapes.
#include "obsidian/device/rowwise.hpp"

#include <bit>
#include <cmath>

namespace obsidian {

std::string name(RowOp op) {
  switch (op) {
    case RowOp::Softmax: return "softmax";
    case RowOp::LayerNorm: return "layerNorm";
    case RowOp::RmsNorm: return "rmsNorm";
  }
  return "?";
}

namespace detail {

RowPlan rowPlan(const RowwisePolicy& policy, uint32_t cols, uint32_t elementBytes) {
  if (policy.threads < 32 || policy.threads > 1024 || !std::has_single_bit(policy.threads)) {
    throw Error("RowwisePolicy: threads must be a power of two from 32 to 1024; got " +
                std::to_string(policy.threads));
  }
  if (policy.vectors == 0 || policy.held == 0) {
    throw Error("RowwisePolicy: vectors and held must be at least 1");
  }
  OBSIDIAN_ASSERT(cols > 0 && elementBytes > 0 && elementBytes <= 16, "a row of elements");
  RowPlan plan;
  // The widest vector (at most 16 bytes) whose width divides cols: rows start aligned.
  plan.width = std::min<uint32_t>(16 / elementBytes, cols & (~cols + 1));
  const uint32_t vcols = cols / plan.width;
  const uint32_t wanted = (vcols + policy.vectors - 1) / policy.vectors;
  plan.threads = std::min(policy.threads, std::max(32u, std::bit_ceil(wanted)));
  const uint32_t each = (vcols + plan.threads - 1) / plan.threads;
  plan.vectors = uint64_t{each} * plan.width <= policy.held ? each : 0;
  return plan;
}

void checkRowwiseShape(RowOp op, uint64_t rows, uint64_t cols, size_t in, size_t out,
                       const std::vector<size_t>& columnArrays, float eps) {
  const std::string what = name(op);
  const uint64_t n = rows * cols;  // both below 2^32: no overflow in 64 bits
  if (n > UINT32_MAX) {
    throw Error(what + ": a " + std::to_string(rows) + " x " + std::to_string(cols) +
                " matrix has " + std::to_string(n) + " elements; at most 2^32 - 1");
  }
  if (in != n) {
    throw Error(what + ": the input holds " + std::to_string(in) + " elements; a " +
                std::to_string(rows) + " x " + std::to_string(cols) + " matrix has " +
                std::to_string(n));
  }
  if (out != n) {
    throw Error(what + ": the output holds " + std::to_string(out) + " elements; the " +
                std::to_string(rows) + " x " + std::to_string(cols) + " result has " +
                std::to_string(n));
  }
  static const char* const names[] = {"gamma", "beta"};
  for (size_t a = 0; a < columnArrays.size(); ++a) {
    if (columnArrays[a] != cols) {
      throw Error(what + ": " + (op == RowOp::RmsNorm ? "the weight" : names[a]) + " holds " +
                  std::to_string(columnArrays[a]) + " elements; a row has " + std::to_string(cols));
    }
  }
  if (op != RowOp::Softmax && !(eps >= 0 && std::isfinite(eps))) {
    throw Error(what + ": eps must be finite and at least 0; got " + std::to_string(eps));
  }
}

}  // namespace detail
}  // namespace obsidian
