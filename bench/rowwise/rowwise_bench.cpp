// The row-wise benchmark (issue 42's proof): obsidian's softmax, layerNorm and rmsNorm
// (include/obsidian/device/rowwise.hpp) against hand-written CUDA kernels (cuda_rowwise.cu: a
// block per row, the row in registers, warp shuffles), with a 16-byte copy kernel over as many
// bytes (read + written) as the roofline, for f32, f16 and bf16 rows of 16384 x 4096 and
// 65536 x 1024 (every input larger than the 50 MB L2). Every result, ours and the hand
// kernel's, is checked against a double reference (tests/rowwise_reference.hpp) on a sample of
// rows first.
// torch's times on the same shapes come from torch_rowwise.py, run beside it.
//
// Usage: obsidian-bench-rowwise [--quick] [--runs N] [--json FILE]
//        [--threads T --vectors V --held H] (the policy, instead of the table's)
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <obsidian/device/rowwise.hpp>

#include "../../tests/rowwise_reference.hpp"
#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cuda_rowwise.hpp"

namespace {

using namespace obsidian;

device::Options chosen;  // --threads, --vectors, --held: the policy's fields
using bench::gbps;
using bench::Row;
using nlohmann::json;

struct Shape {
  uint32_t rows, cols;
};

// Whether rows 0, 97, 194, ... of `got` are as close to a double reference as X allows.
template <class X>
bool rowsRight(RowOp op, const std::vector<X>& in, const std::vector<X>& gamma,
               const std::vector<X>& beta, const std::vector<X>& got, Shape s, float eps) {
  std::vector<double> want(s.cols);
  for (uint32_t r = 0; r < s.rows; r += 97) {
    testing::referenceRow(op, in.data() + size_t{r} * s.cols, gamma, beta, s.cols, eps,
                          want.data());
    for (uint32_t c = 0; c < s.cols; ++c) {
      if (!testing::closeEnough(op, got[size_t{r} * s.cols + c], want[c])) return false;
    }
  }
  return true;
}

template <class X>
bench::HandType handType() {
  if constexpr (std::is_same_v<X, float>) {
    return bench::HandType::F32;
  } else if constexpr (std::is_same_v<X, Half>) {
    return bench::HandType::F16;
  } else {
    return bench::HandType::BF16;
  }
}

template <class X>
Row run(RowOp op, Shape s, int runs) {
  const size_t n = size_t{s.rows} * s.cols;
  const float eps = op == RowOp::RmsNorm ? 1e-6f : 1e-5f;
  const std::vector<X> in =
      testing::randomRows<X>(n, s.cols, op == RowOp::LayerNorm ? 3.0f : 0.0f, 2.0f);
  const std::vector<X> gamma = testing::randomRows<X>(s.cols, 5, 1.0f, 0.5f);
  const std::vector<X> beta = testing::randomRows<X>(s.cols, 6, 0.0f, 1.0f);
  gpu::DeviceBuffer<X> din(in), dg(gamma), db(beta), out(n);
  const RowPlan plan = device::rowwisePlanFor<X>(device::Target::onGpu(), s.cols, chosen);
  Row row{name(op) + " " + std::to_string(s.rows) + " x " + std::to_string(s.cols),
          std::is_same_v<X, float>  ? "f32"
          : std::is_same_v<X, Half> ? "f16"
                                    : "bf16",
          n,
          {},
          {},
          {},
          true,
          true,
          "width " + std::to_string(plan.width) + ", threads " + std::to_string(plan.threads) +
              ", vectors " + std::to_string(plan.vectors)};
  device::Options async = chosen;
  async.synchronize = false;
  const auto ours = [&](const device::Options& o) {
    switch (op) {
      case RowOp::Softmax: device::softmax(din, out, s.rows, s.cols, o); break;
      case RowOp::LayerNorm: device::layerNorm(din, dg, db, out, s.rows, s.cols, eps, o); break;
      case RowOp::RmsNorm: device::rmsNorm(din, dg, out, s.rows, s.cols, eps, o); break;
    }
  };
  const auto ptr = [](const gpu::DeviceBuffer<X>& b) { return bench::ptr(b.address()); };
  const auto hand = [&] {
    return bench::handRowwise(op == RowOp::Softmax     ? bench::HandOp::Softmax
                              : op == RowOp::LayerNorm ? bench::HandOp::LayerNorm
                                                       : bench::HandOp::RmsNorm,
                              handType<X>(), ptr(din), op == RowOp::Softmax ? nullptr : ptr(dg),
                              op == RowOp::LayerNorm ? ptr(db) : nullptr,
                              bench::mutablePtr(out.address()), s.rows, s.cols, eps);
  };
  ours(chosen);
  row.oursOk = rowsRight(op, in, gamma, beta, out.download(), s, eps);
  out.zero();
  row.cubOk = hand();
  bench::checkCuda("handRowwise");
  row.cubOk = row.cubOk && rowsRight(op, in, gamma, beta, out.download(), s, eps);
  row.ours = bench::timeGpu([&](int) { ours(async); }, runs);
  row.cub = bench::timeGpu([&](int) { hand(); }, runs);
  row.roof = bench::timeGpu(
      [&](int) { bench::copyKernel(ptr(din), bench::mutablePtr(out.address()), n * sizeof(X)); },
      runs);
  return row;
}

const bench::Table kWide{
    "row                    type           n   ours us   hand us ours/hand ours GB/s copy GB/s "
    "%copy  check\n",
    22, 8, "copy"};
const bench::Table kNarrow{kWide.header, 22, 4, "copy"};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian's softmax, layerNorm and rmsNorm against hand-written CUDA on the GPU"};
  bench::CommonOptions common;
  bench::addCommonOptions(app, common);
  std::string threads, vectors, held;
  app.add_option("--threads", threads, "the most threads a row's block has");
  app.add_option("--vectors", vectors, "vectors per thread the block is sized for");
  app.add_option("--held", held, "the most f32 values a thread holds");
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  if (!threads.empty()) chosen.policy.push_back({"threads", threads});
  if (!vectors.empty()) chosen.policy.push_back({"vectors", vectors});
  if (!held.empty()) chosen.policy.push_back({"held", held});
  if (!bench::deviceOrSkip()) return bench::kSkipped;

  std::vector<Shape> shapes = {{16384, 4096}, {65536, 1024}};
  if (common.quick) shapes = {{1024, 4096}, {333, 1000}};
  json rows = json::array();
  std::cout << "\n" << kWide.header;
  for (RowOp op : {RowOp::Softmax, RowOp::LayerNorm, RowOp::RmsNorm}) {
    for (Shape s : shapes) {
      const Row f = run<float>(op, s, common.runs);
      bench::print(kWide, f, gbps(f.n * 8, f.roof.medianMs));
      rows.push_back(bench::toJson(kWide, f));
      const Row h = run<Half>(op, s, common.runs);
      bench::print(kNarrow, h, gbps(h.n * 4, h.roof.medianMs));
      rows.push_back(bench::toJson(kNarrow, h));
      const Row b = run<BFloat16>(op, s, common.runs);
      bench::print(kNarrow, b, gbps(b.n * 4, b.roof.medianMs));
      rows.push_back(bench::toJson(kNarrow, b));
    }
  }
  return bench::finish(common, 0, rows);
}
