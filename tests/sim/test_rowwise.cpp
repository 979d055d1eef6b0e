// The row-wise operations (device/rowwise.hpp) on the simulator: softmax, layerNorm and
// rmsNorm of float, Half and BFloat16 rows of awkward lengths (odd, every vector width, rows held
// in registers and rows streamed) against a double reference; the plan of a row length; the
// kernel's shape (one read of the input, vector loads and stores, two barriers a statistic);
// and the errors for bad shapes and policies.
#include <doctest/doctest.h>

#include <obsidian/device/rowwise.hpp>

#include "../rowwise_reference.hpp"
#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::testing;
using ::testing::errorOf;
using ::testing::has;

namespace {

template <class X>
void checkRows(RowOp op, uint32_t rows, uint32_t cols, const device::Options& options = {}) {
  const size_t n = size_t{rows} * cols;
  const std::vector<X> in =
      randomRows<X>(n, rows * 7919u + cols, op == RowOp::LayerNorm ? 3.0f : 0.0f);
  const std::vector<X> gamma = randomRows<X>(cols, cols, 1.0f, 0.5f);
  const std::vector<X> beta = randomRows<X>(cols, cols + 1, 0.0f, 1.0f);
  std::vector<X> out(n, X(12345.0f));
  switch (op) {
    case RowOp::Softmax: device::softmax(in, out, rows, cols, options); break;
    case RowOp::LayerNorm:
      device::layerNorm(in, gamma, beta, out, rows, cols, 1e-5f, options);
      break;
    case RowOp::RmsNorm: device::rmsNorm(in, gamma, out, rows, cols, 1e-6f, options); break;
  }
  const double eps = op == RowOp::LayerNorm ? 1e-5 : 1e-6;
  const std::vector<double> want = rowwiseReference(op, in, gamma, beta, rows, cols, eps);
  const long long far = firstFar(op, out, want);
  CHECK_MESSAGE(far < 0, name(op) << " " << cudaTypeName(scalarTypeOf<X>) << " " << rows << " x "
                                  << cols << ": element " << far << " is "
                                  << (far < 0 ? 0.0 : asDouble(out[far])) << ", want "
                                  << (far < 0 ? 0.0 : want[far]));
}

template <class X>
void checkShapes(RowOp op) {
  // Odd rows (vectors of 1), 2, 4 and 8 elements; one warp, several warps, a full block.
  for (const auto& [rows, cols] : std::vector<std::pair<uint32_t, uint32_t>>{
           {3, 1}, {2, 37}, {5, 6}, {3, 100}, {2, 1000}, {1, 4096}, {2, 3000}}) {
    checkRows<X>(op, rows, cols);
  }
}

}  // namespace

TEST_CASE("rowwise: softmax, layerNorm and rmsNorm of float rows match a double reference") {
  for (RowOp op : {RowOp::Softmax, RowOp::LayerNorm, RowOp::RmsNorm}) checkShapes<float>(op);
}

TEST_CASE("rowwise: Half and BFloat16 rows, f32 math, rounded once") {
  for (RowOp op : {RowOp::Softmax, RowOp::LayerNorm, RowOp::RmsNorm}) {
    checkShapes<Half>(op);
    checkShapes<BFloat16>(op);
  }
}

TEST_CASE("rowwise: rows too long for registers are streamed, with the same results") {
  // held 4: a thread holds at most 4 values, so 1000 floats in 32..256 threads do not fit.
  device::Options small;
  small.policy = {{"held", "4"}, {"threads", "64"}};
  const RowPlan plan = device::rowwisePlanFor<float>(device::Target::simulator(), 1000, small);
  CHECK(plan.vectors == 0);
  CHECK(plan.threads == 64);
  for (RowOp op : {RowOp::Softmax, RowOp::LayerNorm, RowOp::RmsNorm}) {
    checkRows<float>(op, 3, 1000, small);
    checkRows<Half>(op, 2, 998, small);
    checkRows<BFloat16>(op, 2, 77, small);
  }
}

TEST_CASE("rowwise: the plan of a row length") {
  const device::Target sim = device::Target::simulator();
  // 4096 floats: vectors of 4, 1024 of them, 4 a thread: 256 threads.
  RowPlan p = device::rowwisePlanFor<float>(sim, 4096);
  CHECK(p.width == 4);
  CHECK(p.threads == 256);
  CHECK(p.vectors == 4);
  // 4096 halves: vectors of 8: 512 of them: 128 threads.
  p = device::rowwisePlanFor<Half>(sim, 4096);
  CHECK(p.width == 8);
  CHECK(p.threads == 128);
  CHECK(p.vectors == 4);
  // 1000 = 8 x 125: float vectors of 4 (250 of them), half vectors of 8 (125).
  CHECK(device::rowwisePlanFor<float>(sim, 1000).width == 4);
  CHECK(device::rowwisePlanFor<BFloat16>(sim, 1000).width == 8);
  CHECK(device::rowwisePlanFor<float>(sim, 1001).width == 1);
  CHECK(device::rowwisePlanFor<float>(sim, 1002).width == 2);
  // Short rows get a warp; long ones the most threads, then the stream.
  CHECK(device::rowwisePlanFor<float>(sim, 8).threads == 32);
  p = device::rowwisePlanFor<float>(sim, 32768);
  CHECK(p.threads == 1024);
  CHECK(p.vectors == 8);
  CHECK(device::rowwisePlanFor<float>(sim, 65536).vectors == 0);
}

TEST_CASE("rowwise: the kernel reads each element once, with vector loads and stores") {
  const RowPlan plan = device::rowwisePlanFor<BFloat16>(device::Target::simulator(), 4096);
  const Kernel k = obsidian::detail::rowwiseKernelFor<BFloat16>(RowOp::Softmax, plan);
  const std::string cuda = k.cuda();
  CHECK(has(cuda, "((const uint4*)in0)["));  // 8 bf16 a load
  CHECK(has(cuda, "((uint4*)out0)["));       // 8 bf16 a store
  // Two statistics, two barriers each; one more ends each row (the block's loop over rows
  // reuses its shared memory).
  size_t barriers = 0;
  for (size_t at = cuda.find("__syncthreads()"); at != std::string::npos;
       at = cuda.find("__syncthreads()", at + 1)) {
    ++barriers;
  }
  CHECK(barriers == 5);
  // The simulator's traffic: every input element read once (a 16-byte load a vector), every
  // output element written once.
  const uint32_t rows = 3, cols = 4096;
  const std::vector<BFloat16> in = randomRows<BFloat16>(size_t{rows} * cols, 1);
  std::vector<BFloat16> out(in.size());
  SimStats stats;
  device::Options o;
  o.simulated = &stats;
  device::softmax(in, out, rows, cols, o);
  const auto traffic = [&](const std::string& a) {
    for (const SimTraffic& t : stats.traffic) {
      if (t.array == a) return t;
    }
    FAIL("no array " << a);
    return SimTraffic{};
  };
  CHECK(traffic("in0").loads == in.size());
  CHECK(traffic("out0").stores == in.size());
}

TEST_CASE("rowwise: errors name the operation and the rule") {
  std::vector<float> in(12), out(12), gamma(4), beta(3);
  CHECK(errorOf([&] { device::softmax(in, out, 3, 5); }) ==
        "softmax: the input holds 12 elements; a 3 x 5 matrix has 15");
  std::vector<float> shortOut(11);
  CHECK(errorOf([&] { device::softmax(in, shortOut, 3, 4); }) ==
        "softmax: the output holds 11 elements; the 3 x 4 result has 12");
  CHECK(errorOf([&] { device::layerNorm(in, gamma, beta, out, 3, 4); }) ==
        "layerNorm: beta holds 3 elements; a row has 4");
  CHECK(errorOf([&] { device::rmsNorm(in, beta, out, 3, 4); }) ==
        "rmsNorm: the weight holds 3 elements; a row has 4");
  CHECK(errorOf([&] { device::rmsNorm(in, gamma, out, 3, 4, -1.0f); }) ==
        "rmsNorm: eps must be finite and at least 0; got -1.000000");
  device::Options bad;
  bad.policy = {{"threads", "100"}};
  CHECK(errorOf([&] { device::softmax(in, out, 3, 4, bad); }) ==
        "RowwisePolicy: threads must be a power of two from 32 to 1024; got 100");
  std::vector<float> none;
  device::softmax(none, none, 0, 7);  // nothing to do
  device::softmax(none, none, 5, 0);
}
