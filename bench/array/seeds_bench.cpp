// The seeds' programs as whole-array programs (examples/array/seeds.hpp), planned by array::Plan,
// against the same programs written by hand, in one run on the same random data (never zeros):
//  - Accelerate (seed 004): dotp, SAXPY, Black-Scholes, SMVM; hand: examples/accelerate's
//    kernels; vendor: cublasSdot, cublasSaxpy, the CUDA samples' Black-Scholes, cuSPARSE's SpMV;
//  - Barracuda (seed 000): the forward difference, Spencer's moving average, the Jacobi step, the
//    3 x 3 and 5 x 5 blurs, RMSE; hand: examples/stencils's kernels (the faster of its global
//    and shared-tile forms); vendor: bench/stencils's hand CUDA (the faster of naive and tiled;
//    the fused RMSE);
//  - SafeGPU (seed 003): vector addition, component-wise division, transposition, without
//    contracts; hand: examples/safegpu's kernels captured without them; and vector addition
//    with its postcondition, planned (a reduction fused into the pass, read after the run)
//    against the hand kernel's checked launch (LaunchOptions::checked: a check kernel after it);
//    and multiply (vendor: cublasSgemm), gauss_determinant's n - 1 elimination steps and the
//    sorting network's steps, a planned step against a hand launch each, the host looping.
// Vectors of 2^26 floats, 8192 x 8192 matrices, a 2^22-row CSR matrix of 16 uniform columns a
// row (all larger than the 50 MB L2). Every output, planned, hand and vendor, is poisoned
// (NaN), computed and checked against the examples' C++ references before anything is timed;
// times are medians of --runs runs. The copy kernel over each program's bytes is the roofline.
//
// Usage: obsidian-bench-array-seeds [--quick] [--runs N] [--only PROGRAM] [--json FILE]
#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "../../examples/accelerate/spmv.hpp"
#include "../../examples/array/seeds.hpp"
#include "../../examples/safegpu/safegpu.hpp"
#include "../accelerate/cuda_accelerate.hpp"
#include "../accelerate/cuda_spmv.hpp"
#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "../stencils/cuda_stencils.hpp"

namespace {

using namespace obsidian;
using nlohmann::json;
using Buffer = gpu::DeviceBuffer<float>;

const float kNan = std::bit_cast<float>(0xFFFFFFFFu);

const float* fptr(const Buffer& b) { return reinterpret_cast<const float*>(b.address()); }
float* mptr(Buffer& b) { return reinterpret_cast<float*>(b.address()); }
KernelArg arg(const Buffer& b, bool writable) {
  return KernelArg::deviceArray(ScalarType::F32, b.address(), b.size(), writable);
}
template <class T>
KernelArg arg(const gpu::DeviceBuffer<T>& b) {
  return KernelArg::deviceArray(scalarTypeOf<T>, b.address(), b.size(), false);
}

using bench::randomFloats;

// The first element of got off want by more than tolerance * (1 + |want|) (or absolute, with
// `absolute`), as "out[17]: got 1.5, want 1.25"; empty when all agree.
std::string firstMismatch(const std::vector<float>& got, const std::vector<float>& want,
                          double tolerance, bool absolute = false) {
  if (got.size() != want.size()) return "sizes differ";
  for (size_t i = 0; i < want.size(); ++i) {
    const double bound = absolute ? tolerance : tolerance * (1 + std::fabs(double(want[i])));
    if (!(std::fabs(double(got[i]) - double(want[i])) <= bound)) {
      return "[" + std::to_string(i) + "]: got " + std::to_string(got[i]) + ", want " +
             std::to_string(want[i]);
    }
  }
  return {};
}

// One row: a program planned, by hand (obsidian), and by the vendor or hand CUDA.
struct Row {
  Row(std::string s, std::string p, std::string sh, std::string v, double b, size_t k)
      : seed(std::move(s)),
        program(std::move(p)),
        shape(std::move(sh)),
        vendor(std::move(v)),
        bytes(b),
        kernels(k) {}
  std::string seed, program, shape, vendor;
  double bytes = 0;  // each array read or written once
  size_t kernels = 0;
  bench::Timing planned = {}, hand = {}, base = {}, copy = {};
  std::string bad = {};  // the first failed check, empty when every result was right
};

// An implementation: its launches (enqueued, not synchronized), empty for none.
using Launch = std::function<void()>;

struct Race {
  Launch planned;
  std::vector<Launch> hand;            // the faster is the row's
  std::vector<Launch> vendor;          // the faster is the row's
  Launch poison;                       // the outputs made NaN
  std::function<std::string()> check;  // downloads and compares; "" when right
  Launch restore = {};                 // between checks (an in-place vendor call's input)
};

bench::Timing fastest(const std::vector<Launch>& ls, int runs) {
  bench::Timing best;
  for (const Launch& l : ls) {
    const bench::Timing t = bench::timeGpu([&](int) { l(); }, runs);
    if (best.runs == 0 || t.medianMs < best.medianMs) best = t;
  }
  return best;
}

// --only: the rows of programs whose name holds it (for a profiler); all when empty.
std::string onlyPrograms;

void run(Row& row, const Race& race, int runs, json& rows) {
  if (row.program.find(onlyPrograms) == std::string::npos) return;
  const auto checked = [&](const Launch& l, const std::string& who) {
    if (race.restore) race.restore();
    race.poison();
    l();
    bench::checkCuda(row.program + " (" + who + ")");
    const std::string bad = race.check();
    if (!bad.empty() && row.bad.empty()) row.bad = who + " " + bad;
  };
  checked(race.planned, "planned");
  for (const Launch& l : race.hand) checked(l, "hand");
  for (const Launch& l : race.vendor) checked(l, "vendor");
  row.planned = bench::timeGpu([&](int) { race.planned(); }, runs);
  row.hand = fastest(race.hand, runs);
  if (!race.vendor.empty()) row.base = fastest(race.vendor, runs);
  const double gbps = bench::gbps(size_t(row.bytes), row.planned.medianMs);
  const double roof = bench::gbps(size_t(row.bytes), row.copy.medianMs);
  std::cout << std::left << std::setw(11) << row.seed << std::setw(22) << row.program
            << std::setw(14) << row.shape << std::right << std::setw(3) << row.kernels << std::fixed
            << std::setprecision(1) << std::setw(10) << row.planned.medianMs * 1e3 << std::setw(10)
            << row.hand.medianMs * 1e3 << std::setprecision(3) << std::setw(8)
            << row.planned.medianMs / row.hand.medianMs;
  if (row.base.runs) {
    std::cout << std::setprecision(1) << std::setw(10) << row.base.medianMs * 1e3
              << std::setprecision(3) << std::setw(8) << row.planned.medianMs / row.base.medianMs;
  } else {
    std::cout << std::setw(10) << "-" << std::setw(8) << "-";
  }
  std::cout << std::setprecision(0) << std::setw(8) << gbps << std::setw(6) << 100 * gbps / roof
            << "%  " << (row.bad.empty() ? "ok" : "WRONG " + row.bad) << std::endl;
  json j = {{"seed", row.seed},
            {"program", row.program},
            {"shape", row.shape},
            {"vendor", row.vendor},
            {"kernels", row.kernels},
            {"bytes", row.bytes},
            {"planned", bench::timingJson(row.planned)},
            {"hand", bench::timingJson(row.hand)},
            {"planned_over_hand", row.planned.medianMs / row.hand.medianMs},
            {"planned_gbps", gbps},
            {"roofline_gbps", roof},
            {"ok", row.bad.empty()}};
  if (row.base.runs) {
    j["base"] = bench::timingJson(row.base);
    j["planned_over_base"] = row.planned.medianMs / row.base.medianMs;
  }
  rows.push_back(j);
}

// The copy kernel over `bytes` (half read, half written) from scratch buffers.
bench::Timing copyTime(double bytes, int runs) {
  const size_t half = size_t(bytes / 2) / 16 * 16;
  Buffer a(half / 4), b(half / 4);
  a.fill(1.0f);
  return bench::timeGpu([&](int) { bench::copyKernel(fptr(a), mptr(b), half); }, runs);
}

struct Setup {
  array::PlanOptions options;
  gpu::LaunchOptions async;
  int runs = 20;
  json rows = json::array();
  uint32_t n = 1u << 26;  // vectors
  uint32_t side = 8192;   // matrices
  uint32_t csrRows = 1u << 22;
  uint32_t product = 2048;  // multiply's matrices (one thread an element: n^3 multiply-adds)
  uint32_t gauss = 2048;    // Gaussian elimination's matrix (the C++ reference: n^3 / 2)
  uint32_t sorted = 1u << 24;
};

std::string shapeOf(uint32_t n) { return std::to_string(n); }
std::string shapeOf(uint32_t r, uint32_t c) { return std::to_string(r) + "x" + std::to_string(c); }

// ---------------------------------------------------------------- Accelerate
void accelerateRows(Setup& c) {
  const uint32_t n = c.n;
  const std::vector<float> hx = randomFloats(n, 1), hy = randomFloats(n, 2);
  Buffer x(n), y(n), z(n), w(n), one(1);
  x.upload(hx);
  y.upload(hy);
  {
    const array::Plan plan(seeds::dotp(), c.options);
    const array::Bindings bound =
        array::Bindings().vector("x", x).vector("y", y).output("dot", one);
    const Kernel hand = accelerate::dotp(gpu::occupancyBlocks(accelerate::dotp(1)));
    const double want = accelerate::dotReference(hx, hy);
    Row row("Accelerate", "dotp", shapeOf(n), "cublasSdot", 8.0 * n, plan.kernelCount());
    row.copy = copyTime(row.bytes, c.runs);
    array::RunOptions ro;
    ro.synchronize = false;
    run(row,
        {[&] { plan.run(bound, ro); },
         {[&] {
           gpu::launch(hand, {arg(x, false), arg(y, false), arg(one, true)}, c.async);
         }},
         {[&] { bench::vendorDot(fptr(x), fptr(y), n, mptr(one)); }},
         [&] { one.fill(kNan); },
         [&] {
           const float got = one.download()[0];
           return std::fabs(got - want) <= 1e-4 * (1 + std::fabs(want)) + 1e-6 * n
                      ? std::string()
                      : "dot " + std::to_string(got) + ", want " + std::to_string(want);
         }},
        c.runs, c.rows);
  }
  {
    const float alpha = 0.75f;
    const array::Plan plan(seeds::saxpy(), c.options);
    const array::Bindings bound =
        array::Bindings().scalar("alpha", alpha).vector("x", x).vector("y", y).output("z", z);
    const Kernel hand = accelerate::saxpy();
    std::vector<float> want(n);
    for (uint32_t i = 0; i < n; ++i) want[i] = alpha * hx[i] + hy[i];
    Row row("Accelerate", "saxpy", shapeOf(n), "cublasSaxpy", 12.0 * n, plan.kernelCount());
    row.copy = copyTime(row.bytes, c.runs);
    array::RunOptions ro;
    ro.synchronize = false;
    bool vendorRan = false;  // cublasSaxpy works in place on w, a copy of y
    run(row,
        {[&] { plan.run(bound, ro); },
         {[&] {
           gpu::launch(hand, {alpha, arg(x, false), arg(y, false), arg(z, true)}, c.async);
         }},
         {[&] {
           vendorRan = true;
           bench::vendorSaxpy(alpha, fptr(x), mptr(w), n);
         }},
         [&] {
           z.fill(kNan);
           vendorRan = false;
         },
         [&] { return firstMismatch(vendorRan ? w.download() : z.download(), want, 1e-6); },
         [&] { w.upload(hy); }},
        c.runs, c.rows);
  }
  {
    const accelerate::Options o = accelerate::randomOptions(n, 7);
    Buffer s(n), k(n), t(n);
    s.upload(o.s);
    k.upload(o.x);
    t.upload(o.t);
    std::vector<float> wantCall(n), wantPut(n);
    for (uint32_t i = 0; i < n; ++i) {
      std::tie(wantCall[i], wantPut[i]) = accelerate::blackScholesBody(o.s[i], o.x[i], o.t[i]);
    }
    const array::Plan plan(seeds::blackScholes(), c.options);
    const array::Bindings bound =
        array::Bindings().vector("s", s).vector("x", k).vector("t", t).output("call", z).output(
            "put", w);
    const Kernel hand = accelerate::blackScholes();
    gpu::LaunchOptions filled = c.async;
    filled.fillDevice = true;
    const auto handLaunch = [&](const gpu::LaunchOptions& lo) {
      gpu::launch(hand, {arg(s, false), arg(k, false), arg(t, false), arg(z, true), arg(w, true)},
                  lo);
    };
    Row row("Accelerate", "blackScholes", shapeOf(n), "CUDA samples", 20.0 * n, plan.kernelCount());
    row.copy = copyTime(row.bytes, c.runs);
    array::RunOptions ro;
    ro.synchronize = false;
    run(row,
        {[&] { plan.run(bound, ro); },
         {[&] { handLaunch(c.async); }, [&] { handLaunch(filled); }},
         {[&] { bench::cudaBlackScholes(fptr(s), fptr(k), fptr(t), mptr(z), mptr(w), n); }},
         [&] {
           z.fill(kNan);
           w.fill(kNan);
         },
         [&] {
           std::string bad = firstMismatch(z.download(), wantCall, 1e-4);
           return bad.empty() ? firstMismatch(w.download(), wantPut, 1e-4) : "call" + bad;
         }},
        c.runs, c.rows);
  }
  {
    const accelerate::Csr a = accelerate::uniformMatrix(c.csrRows, c.csrRows, 16, 11);
    const std::vector<float> hv = randomFloats(a.cols, 12);
    gpu::DeviceBuffer<uint32_t> offsets(a.rowOffsets.size()), columns(a.columns.size());
    offsets.upload(a.rowOffsets);
    columns.upload(a.columns);
    Buffer values(a.values.size()), v(a.cols), out(a.rows);
    values.upload(a.values);
    v.upload(hv);
    const std::vector<float> want = accelerate::spmvReference(a, hv);
    const array::Plan plan(seeds::smvm(), c.options);
    const array::Bindings bound = array::Bindings()
                                      .vector("values", values)
                                      .vector("columns", columns)
                                      .vector("rowOffsets", offsets)
                                      .vector("x", v)
                                      .output("y", out);
    const Kernel hand = accelerate::spmv(accelerate::spmvThreadsPerRow(a));
    const bench::VendorSpmv vendor(1, a.rows, a.cols, uint32_t(a.columns.size()),
                                   reinterpret_cast<const uint32_t*>(offsets.address()),
                                   reinterpret_cast<const uint32_t*>(columns.address()),
                                   fptr(values), fptr(v), mptr(out));
    const double nnz = double(a.columns.size());
    Row row("Accelerate", "smvm (uniform 16/row)", shapeOf(a.rows, a.cols), "cuSPARSE",
            nnz * 8 + (a.rows + 1) * 4.0 + a.cols * 4.0 + a.rows * 4.0, plan.kernelCount());
    row.copy = copyTime(row.bytes, c.runs);
    array::RunOptions ro;
    ro.synchronize = false;
    run(row,
        {[&] { plan.run(bound, ro); },
         {[&] {
           gpu::launch(
               hand,
               {arg(offsets), arg(columns), arg(values, false), arg(v, false), arg(out, true)},
               c.async);
         }},
         {[&] { vendor(); }},
         [&] { out.fill(kNan); },
         [&] {
           const std::vector<float> got = out.download();
           for (uint32_t r = 0; r < a.rows; ++r) {
             if (!(std::fabs(got[r] - want[r]) <= accelerate::spmvTolerance(a, hv, r))) {
               return "y[" + std::to_string(r) + "]: got " + std::to_string(got[r]) + ", want " +
                      std::to_string(want[r]);
             }
           }
           return std::string();
         }},
        c.runs, c.rows);
  }
}

// ---------------------------------------------------------------- Barracuda
void barracudaRows(Setup& c) {
  const uint32_t n = c.n;
  const std::vector<float> hin = randomFloats(n, 21);
  Buffer in(n), out(n);
  in.upload(hin);
  array::RunOptions ro;
  ro.synchronize = false;
  struct Window {
    const char* name;
    seeds::Program program;
    uint32_t width;
    Kernel global, shared;
    bench::Stencil1 cuda;
    std::function<std::vector<float>(const std::vector<float>&)> reference;
  };
  const Window windows[] = {
      {"forwardDifference", seeds::forwardDifference(), 2,
       stencils::forwardDifference(stencils::Memory::Global),
       stencils::forwardDifference(stencils::Memory::Shared), bench::Stencil1::Difference,
       [](const std::vector<float>& v) {
         return stencils::windowReference(v, 2, stencils::kDifference);
       }},
      {"movingAverage", seeds::movingAverage(), 15,
       stencils::movingAverage(stencils::Memory::Global),
       stencils::movingAverage(stencils::Memory::Shared), bench::Stencil1::Spencer,
       [](const std::vector<float>& v) {
         return stencils::windowReference(v, 15, stencils::kMovingAverage);
       }}};
  for (const Window& s : windows) {
    const uint32_t m = n - s.width + 1;
    const array::Plan plan(s.program, c.options);
    const array::Bindings bound = array::Bindings().vector("in", in).output("out", out);
    const std::vector<float> want = s.reference(hin);
    const KernelArg o = KernelArg::deviceArray(ScalarType::F32, out.address(), m, true);
    Row row("Barracuda", s.name, shapeOf(n), "hand CUDA", 8.0 * n, plan.kernelCount());
    row.copy = copyTime(row.bytes, c.runs);
    run(row,
        {[&] { plan.run(bound, ro); },
         {[&] {
            gpu::launch(s.global, {arg(in, false), o}, c.async);
          },
          [&] {
            gpu::launch(s.shared, {arg(in, false), o}, c.async);
          }},
         {[&] { bench::cudaStencil1(s.cuda, false, fptr(in), mptr(out), n); },
          [&] { bench::cudaStencil1(s.cuda, true, fptr(in), mptr(out), n); }},
         [&] { out.fill(kNan); },
         [&] {
           std::vector<float> got = out.download();
           got.resize(m);
           return firstMismatch(got, want, 1e-5);
         }},
        c.runs, c.rows);
  }
  {
    const uint32_t side = c.side, cells = side * side;
    const std::vector<float> hm(hin.begin(), hin.begin() + cells);
    struct Stencil {
      const char* name;
      seeds::Program program;
      Kernel global, shared;
      bench::Stencil2 cuda;
      std::function<std::vector<float>(const std::vector<float>&, uint32_t, uint32_t)> reference;
    };
    const Stencil stencils2[] = {
        {"jacobi", seeds::jacobi(), stencils::jacobi(stencils::Memory::Global),
         stencils::jacobi(stencils::Memory::Shared), bench::Stencil2::Jacobi,
         [](const std::vector<float>& v, uint32_t r, uint32_t k) {
           return stencils::stencilReference(v, r, k, stencils::kJacobi);
         }},
        {"blur3x3", seeds::blur<1>(), stencils::blur<1>(stencils::Memory::Global),
         stencils::blur<1>(stencils::Memory::Shared), bench::Stencil2::Blur3,
         [](const std::vector<float>& v, uint32_t r, uint32_t k) {
           return stencils::stencilReference(v, r, k, stencils::kBlur<1>);
         }},
        {"blur5x5", seeds::blur<2>(), stencils::blur<2>(stencils::Memory::Global),
         stencils::blur<2>(stencils::Memory::Shared), bench::Stencil2::Blur5,
         [](const std::vector<float>& v, uint32_t r, uint32_t k) {
           return stencils::stencilReference(v, r, k, stencils::kBlur<2>);
         }}};
    const KernelArg mIn = KernelArg::deviceArray(ScalarType::F32, in.address(), cells, false);
    const KernelArg mOut = KernelArg::deviceArray(ScalarType::F32, out.address(), cells, true);
    for (const Stencil& s : stencils2) {
      const array::Plan plan(s.program, c.options);
      const array::Bindings bound =
          array::Bindings().matrix("in", in, side, side, side).output("out", out);
      const std::vector<float> want = s.reference(hm, side, side);
      Row row("Barracuda", s.name, shapeOf(side, side), "hand CUDA", 8.0 * cells,
              plan.kernelCount());
      row.copy = copyTime(row.bytes, c.runs);
      run(row,
          {[&] { plan.run(bound, ro); },
           {[&] {
              gpu::launch(s.global, {mIn, side, side, side, mOut}, c.async);
            },
            [&] {
              gpu::launch(s.shared, {mIn, side, side, side, mOut}, c.async);
            }},
           {[&] { bench::cudaStencil2(s.cuda, false, fptr(in), mptr(out), side, side); },
            [&] { bench::cudaStencil2(s.cuda, true, fptr(in), mptr(out), side, side); }},
           [&] { out.fill(kNan); },
           [&] {
             std::vector<float> got = out.download();
             got.resize(cells);
             return firstMismatch(got, want, 1e-5);
           }},
          c.runs, c.rows);
    }
  }
  {
    const std::vector<float> hy = randomFloats(n, 22);
    Buffer y(n), result(1);
    y.upload(hy);
    gpu::DeviceBuffer<uint32_t> state(std::vector<uint32_t>{0, 0});
    const double want = stencils::rmseReference(hin, hy);
    const array::Plan plan(seeds::rmse(), c.options);
    const array::Bindings bound =
        array::Bindings().vector("x", in).vector("y", y).output("rmse", result);
    const Kernel hand = stencils::rmseFused(gpu::occupancyBlocks(stencils::rmseFused(1)));
    const uint32_t cudaBlocks = bench::cudaRmseBlocks();
    Row row("Barracuda", "rmse", shapeOf(n), "hand CUDA", 8.0 * n, plan.kernelCount());
    row.copy = copyTime(row.bytes, c.runs);
    run(row,
        {[&] { plan.run(bound, ro); },
         {[&] {
           gpu::launch(hand, {arg(in, false), arg(y, false), arg(result, true)}, c.async);
         }},
         {[&] {
           bench::cudaRmse(fptr(in), fptr(y), n, mptr(result),
                           reinterpret_cast<uint32_t*>(state.address()), cudaBlocks);
         }},
         [&] { result.fill(kNan); },
         [&] {
           const float got = result.download()[0];
           return std::fabs(got - want) <= 1e-4 * want
                      ? std::string()
                      : "rmse " + std::to_string(got) + ", want " + std::to_string(want);
         }},
        c.runs, c.rows);
  }
}

// ---------------------------------------------------------------- SafeGPU
// The SafeGPU programs with their contracts dropped (a contract's check is a reduction the
// planned run reads back: with it, the row is the contracts' cost, measured below).
std::vector<array::Output> withoutContracts(const std::string& name) {
  using namespace obsidian::array;
  const auto a = vectorInput<float>("current"), b = vectorInput<float>("other");
  if (name == "vectorAddition") return {{"result", a + b}};
  return {{"result", a / b}};
}

void safegpuRows(Setup& c) {
  const uint32_t n = c.n;
  const std::vector<float> ha = randomFloats(n, 31), hb = randomFloats(n, 32);
  Buffer a(n), b(n), out(n);
  a.upload(ha);
  b.upload(hb);
  array::RunOptions ro;
  ro.synchronize = false;
  for (const std::string name : {"vectorAddition", "compwiseDivide"}) {
    const bool add = name == "vectorAddition";
    const array::Plan plan(withoutContracts(name), c.options);
    const array::Bindings bound =
        array::Bindings().vector("current", a).vector("other", b).output("result", out);
    const Kernel hand = add ? safegpu::plus(false) : safegpu::compwiseDivide(false);
    const std::vector<float> want =
        add ? safegpu::reference::plus(ha, hb) : safegpu::reference::compwiseDivide(ha, hb);
    Row row("SafeGPU", name, shapeOf(n), "", 12.0 * n, plan.kernelCount());
    row.copy = copyTime(row.bytes, c.runs);
    run(row,
        {[&] { plan.run(bound, ro); },
         {[&] {
           gpu::launch(hand, {arg(a, false), arg(b, false), arg(out, true)}, c.async);
         }},
         std::vector<Launch>{},
         [&] { out.fill(kNan); },
         [&] { return firstMismatch(out.download(), want, 0); },
         {}},
        c.runs, c.rows);
  }
  {  // With "Result is finite" (planned) against the hand kernel's checked launch of its
     // postcondition ("other.count = count" is its precondition; the planned run checks lengths
     // too). Both wait for the check's result, as a run with contracts must.
    const array::Plan plan(seeds::vectorAddition(), c.options);
    const array::Bindings bound =
        array::Bindings().vector("current", a).vector("other", b).output("result", out);
    const Kernel hand =
        capture("plusFinite", safegpu::kThreads,
                [](DPull<EFloat> current, DPull<EFloat> other) {
                  require(len(other) == len(current), "other.count = count");
                  return ensure(
                      push<Grid>(zipWith([](const EFloat& x, const EFloat& y) { return x + y; },
                                         current, other)),
                      [](const DPull<EFloat>& r, const EWord32& i) { return seeds::finite(r[i]); },
                      "Result is finite");
                },
                {.names = {"current", "other"}, .outputNames = {"result"}});
    gpu::LaunchOptions checked;
    checked.checked = true;
    const std::vector<float> want = safegpu::reference::plus(ha, hb);
    Row row("SafeGPU", "vectorAddition+ensure", shapeOf(n), "", 12.0 * n, plan.kernelCount());
    row.copy = copyTime(row.bytes, c.runs);
    run(row,
        {[&] { plan.run(bound); },
         {[&] {
           gpu::launch(hand, {arg(a, false), arg(b, false), arg(out, true)}, checked);
         }},
         std::vector<Launch>{},
         [&] { out.fill(kNan); },
         [&] { return firstMismatch(out.download(), want, 0); },
         {}},
        c.runs, c.rows);
  }
  {
    const uint32_t side = c.side, cells = side * side;
    const array::Plan plan(seeds::transposition(), c.options);
    const array::Bindings bound =
        array::Bindings().matrix("m", a, side, side, side).output("result", out);
    const Kernel hand = safegpu::transpose(false);
    std::vector<float> want(cells);
    for (uint32_t r = 0; r < side; ++r) {
      for (uint32_t k = 0; k < side; ++k) want[size_t{k} * side + r] = ha[size_t{r} * side + k];
    }
    const KernelArg mIn = KernelArg::deviceArray(ScalarType::F32, a.address(), cells, false);
    const KernelArg mOut = KernelArg::deviceArray(ScalarType::F32, out.address(), cells, true);
    Row row("SafeGPU", "transposition", shapeOf(side, side), "", 8.0 * cells, plan.kernelCount());
    row.copy = copyTime(row.bytes, c.runs);
    run(row,
        {[&] { plan.run(bound, ro); },
         {[&] {
           gpu::launch(hand, {mIn, side, side, side, mOut}, c.async);
         }},
         std::vector<Launch>{},
         [&] { out.fill(kNan); },
         [&] {
           std::vector<float> got = out.download();
           got.resize(cells);
           return firstMismatch(got, want, 0);
         }},
        c.runs, c.rows);
  }
}

// `steps` planned steps from `first` into x and y in turn (as the hand programs ping-pong):
// step s's bindings from its source (first, then the last step's result) and its result.
void pingPong(const array::Plan& plan, size_t steps, const Buffer& first, Buffer& x, Buffer& y,
              const std::function<array::Bindings(size_t, const Buffer&, Buffer&)>& bind,
              const array::RunOptions& ro) {
  Buffer* to = &x;
  Buffer* from = &y;
  for (size_t s = 0; s < steps; ++s) {
    plan.run(bind(s, s == 0 ? first : *from, *to), ro);
    std::swap(to, from);
  }
}

// SafeGPU's multiply, gauss_determinant and sort: the hand programs' kernels (without contracts)
// against the planned steps; the host loops over the steps for both, and the planned ones build
// their bindings every step, as a user's loop would (the plan cached: nothing is planned).
void safegpuSteps(Setup& c) {
  array::RunOptions ro;
  ro.synchronize = false;
  {
    const uint32_t n = c.product;
    const size_t cells = size_t{n} * n;
    const std::vector<float> ha = randomFloats(cells, 41), hb = randomFloats(cells, 42);
    Buffer a(cells), b(cells), out(cells);
    a.upload(ha);
    b.upload(hb);
    const array::Plan plan(seeds::matrixMultiplication(), c.options);
    const array::Bindings bound = array::Bindings()
                                      .matrix("current", a, n, n, n)
                                      .matrix("other", b, n, n, n)
                                      .output("result", out);
    const Kernel hand = safegpu::multiply(false);
    Row row("SafeGPU", "matrixMultiplication", shapeOf(n, n), "cublasSgemm", 12.0 * cells,
            plan.kernelCount());
    row.copy = copyTime(row.bytes, c.runs);
    run(row,
        {[&] { plan.run(bound, ro); },
         {[&] {
           gpu::launch(hand, {arg(a, false), n, n, n, arg(b, false), n, n, n, arg(out, true)},
                       c.async);
         }},
         {[&] { bench::vendorSgemm(fptr(a), fptr(b), mptr(out), n); }},
         [&] { out.fill(kNan); },
         [&] {
           // 64 random rows against double sums (the whole product would take minutes)
           const std::vector<float> got = out.download();
           std::mt19937 rng(n);
           for (int s = 0; s < 64; ++s) {
             const size_t i = rng() % n;
             const std::vector<float> r(ha.begin() + i * n, ha.begin() + (i + 1) * n);
             const auto want = safegpu::reference::multiply(r, 1, n, n, hb, n, n);
             for (size_t j = 0; j < n; ++j) {
               if (!safegpu::agrees(got[i * n + j], want[j], 1e-4)) {
                 return "(" + std::to_string(i) + ", " + std::to_string(j) + "): got " +
                        std::to_string(got[i * n + j]) + ", want " + std::to_string(want[j].value);
               }
             }
           }
           return std::string();
         }},
        c.runs, c.rows);
  }
  {
    const uint32_t n = c.gauss, steps = safegpu::Gauss::steps(n);
    const size_t cells = size_t{n} * n;
    std::vector<float> hm = randomFloats(cells, 43);
    for (uint32_t i = 0; i < n; ++i) hm[size_t{i} * n + i] += float(n);  // (no zero pivot)
    const std::vector<float> want = safegpu::reference::gauss(hm, n);
    Buffer m(cells), x(cells), y(cells);
    m.upload(hm);
    const array::Plan plan(seeds::gaussStep(false), c.options);
    const safegpu::Gauss hand(false);
    const safegpu::Gpu onGpu{c.async};
    // Both ping-pong x and y from m, so after `steps` steps the same one holds the result.
    const Buffer& result = steps % 2 ? x : y;
    Row row("SafeGPU", "gaussStep x " + std::to_string(steps), shapeOf(n, n), "",
            8.0 * cells * steps, plan.kernelCount() * steps);
    row.copy = copyTime(8.0 * cells, c.runs);
    row.copy.medianMs *= steps;
    run(row,
        {[&] {
           pingPong(
               plan, steps, m, x, y,
               [&](size_t s, const Buffer& from, Buffer& to) {
                 return array::Bindings()
                     .matrix("matrix", from, n, n, n)
                     .scalar("step", static_cast<uint32_t>(s))
                     .output("result", to);
               },
               ro);
         },
         {[&] { hand(onGpu, std::as_const(m), n, x, y); }},
         std::vector<Launch>{},
         [&] {
           x.fill(kNan);
           y.fill(kNan);
         },
         [&] { return firstMismatch(result.download(), want, 1e-3); }},
        c.runs, c.rows);
  }
  {
    const uint32_t n = c.sorted;
    const std::vector<uint32_t> masks = safegpu::sortMasks(n);
    const std::vector<float> ha = randomFloats(n, 44);
    const std::vector<float> want = safegpu::reference::sorted(ha);
    Buffer a(n), x(n), y(n);
    a.upload(ha);
    const array::Plan plan(seeds::sortStep(), c.options);
    const safegpu::Sort hand(false);
    const safegpu::Gpu onGpu{c.async};
    const Buffer& result = masks.size() % 2 ? x : y;
    Row row("SafeGPU", "sortStep x " + std::to_string(masks.size()), shapeOf(n), "",
            8.0 * n * masks.size(), plan.kernelCount() * masks.size());
    row.copy = copyTime(8.0 * n, c.runs);
    row.copy.medianMs *= masks.size();
    run(row,
        {[&] {
           pingPong(
               plan, masks.size(), a, x, y,
               [&](size_t s, const Buffer& from, Buffer& to) {
                 return array::Bindings()
                     .vector("a", from)
                     .scalar("mask", masks[s])
                     .output("result", to);
               },
               ro);
         },
         {[&] { hand(onGpu, std::as_const(a), x, y, masks); }},
         std::vector<Launch>{},
         [&] {
           x.fill(kNan);
           y.fill(kNan);
         },
         [&] { return firstMismatch(result.download(), want, 0); }},
        c.runs, c.rows);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The seeds' programs planned as whole-array programs, against their hand kernels"};
  bench::CommonOptions common;
  app.add_flag("--quick", common.quick, "small sizes only");
  app.add_option("--runs", common.runs, "timed runs per measurement (at least 20)")
      ->check(CLI::Range(20, 10000));
  app.add_option("--only", onlyPrograms, "the rows of programs whose name holds this text");
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  if (!bench::deviceOrSkip()) return bench::kSkipped;

  Setup c;
  c.runs = common.runs;
  c.options.target = device::Target::onGpu();
  c.async.synchronize = false;
  if (common.quick) {
    c.n = 1000003;
    c.side = 997;  // (997^2 within the vectors)
    c.product = c.gauss = 257;
    c.sorted = 100003;
    c.csrRows = 100003;
  }
  std::cout << "\nseed       program               shape         K  plan us   hand us  p/hand "
               " base us  p/base    GB/s  roof  check\n(K: the plan's kernels; hand: the "
               "faster hand form; base: the vendor or hand CUDA, the faster form; GB/s: the "
               "plan's, each array once; roof: the copy kernel)\n";
  try {
    accelerateRows(c);
    barracudaRows(c);
    safegpuRows(c);
    safegpuSteps(c);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  bool ok = true;
  for (const json& r : c.rows) ok = ok && r.at("ok").get<bool>();
  if (!common.jsonPath.empty()) {
    std::ofstream(common.jsonPath)
        << json{{"device", bench::deviceName()}, {"rows", c.rows}}.dump(2) << "\n";
  }
  return ok ? 0 : 1;
}
