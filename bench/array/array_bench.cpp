// The whole-array benchmark (obsidian/array.hpp: array::Plan fusing lazy vectors, matrices and
// scalars into kernels). In one run, on the same random data (never zeros), against what a
// library user writes without fusion:
//  1. one conjugate-gradient iteration over a random CSR matrix (n x n, 16 nonzeros a row at
//     uniform columns; n = 2^20 and 2^22): q = A p; alpha = rho / (p . q); x1 = x + alpha p;
//     r1 = r - alpha q; rho1 = r1 . r1, planned, against cuSPARSE's SpMV (CSR ALG1) and cuBLAS
//     (cuda_array.cu: Sdot, a tiny kernel for alpha, two copies for the in-place Saxpy, two
//     Saxpy, Sdot; every scalar on the device);
//  2. a row softmax followed by a GEMV, y = softmax_rows(A) x (16384 x 4096, 4096 x 16384,
//     65536 x 1024 floats), planned, against the natural unfused hand-written CUDA (two kernels,
//     one warp a row: the row's max, then the exp-sum and the dot);
//  3. what planning and first compiles cost, as seed 004's Table 3 reports it, for these two
//     programs and the eleven BLAS scripts (examples/blas/scripts.hpp): the first Plan
//     (report().planMilliseconds), NVRTC over its kernels (compileCuda, uncached, summed), the
//     first run less a later run (the runtime's compile through the kernel cache, or its load
//     from the disk cache: the row says which), and the same Plan made again (from the plan
//     cache; it must be well under 1 ms). Measured first, before any other plan of this process
//     exists, on small data; printed last.
// Every output, ours and the baseline's, is poisoned (NaN) and then checked against a plain C++
// double reference before anything is timed; times are the median of --runs (at least 20)
// runs. The copy kernel over 2^26 floats is the roofline: "GB/s" is the plan's bytes
// (plan.report(bindings).bytes: each array its kernels touch, once) over our time.
//
// Usage: obsidian-bench-array [--quick] [--runs N] [--section all|cg|softmax] [--json FILE]
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <obsidian/array.hpp>
#include <obsidian/cache.hpp>
#include <obsidian/nvrtc.hpp>
#include <random>
#include <sstream>

#include "../../examples/accelerate/spmv.hpp"
#include "../../examples/blas/scripts.hpp"
#include "../accelerate/cuda_spmv.hpp"
#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cuda_array.hpp"

namespace {

using namespace obsidian;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void poison(gpu::DeviceBuffer<float>& b) { b.fill(std::bit_cast<float>(0xFFFFFFFFu)); }

const float* fptr(const gpu::DeviceBuffer<float>& b) {
  return reinterpret_cast<const float*>(b.address());
}
float* mptr(gpu::DeviceBuffer<float>& b) { return reinterpret_cast<float*>(b.address()); }
const uint32_t* uptr(const gpu::DeviceBuffer<uint32_t>& b) {
  return reinterpret_cast<const uint32_t*>(b.address());
}

using bench::randomFloats;

// The first element of `got` off `want` by more than tolerance * scale, as "x1[17]: got 1.5,
// want 1.25"; empty when all agree.
std::string mismatch(const std::string& name, const std::vector<float>& got,
                     const std::vector<double>& want, const std::vector<double>& scale,
                     double tolerance) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(double(got[i]) - want[i]) <= tolerance * scale[i] + 1e-30)) {
      std::ostringstream o;
      o << name << "[" << i << "]: got " << got[i] << ", want " << want[i];
      return o.str();
    }
  }
  return {};
}

// The relative tolerance of the checks, over the sum of the magnitudes of each output's terms:
// float rounding in any order stays orders of magnitude below it, a wrong result does not.
constexpr double kTolerance = 1e-4;

// ------------------------------------------------------------ the programs
std::vector<array::Output> cgProgram() {
  using namespace obsidian::array;
  const auto V = vectorInput<float>("values");
  const auto C = vectorInput<uint32_t>("columns"), O = vectorInput<uint32_t>("offsets");
  const auto P = vectorInput<float>("p"), X = vectorInput<float>("x"), R = vectorInput<float>("r");
  const auto rho = scalarInput<float>("rho");
  const auto q = spmv(V, C, O, P);
  const auto alpha = rho / dot(P, q);
  const auto x1 = X + alpha * P;
  const auto r1 = R - alpha * q;
  const auto rho1 = dot(r1, r1);
  return {{"x1", x1}, {"r1", r1}, {"rho1", rho1}};
}

std::vector<array::Output> softmaxProgram() {
  using namespace obsidian::array;
  const auto A = matrixInput<float>("A");
  const auto x = vectorInput<float>("x");
  const auto m = rowReduce(Max{}, A);
  const auto e = map([](const EFloat& v) { return exp(v); }, A - replicateCols(m));
  const auto y = gemv(e, x) / rowReduce(Sum{}, e);
  return {{"y", y}};
}

// ------------------------------------------------------------ the CG iteration's data
// A random n x n CSR matrix (16 nonzeros a row, uniform columns, values in [0.5, 1.5)), p in
// [0.5, 1.5) (so p . Ap, alpha's denominator, sums positive terms: no cancellation), x and r
// in +-[0.25, 1.25), rho = r . r; on the host and the device, bound for the plan, with the
// baseline's buffers and the reference.
struct CgData {
  uint32_t n;
  accelerate::Csr a;
  std::vector<float> p, x, r;
  float rho;
  gpu::DeviceBuffer<uint32_t> offsets, columns;
  gpu::DeviceBuffer<float> values, dp, dx, dr, x1, r1, rho1;
  gpu::DeviceBuffer<float> q, scalars, drho;  // the baseline's
  array::Bindings bound;
  std::vector<double> x1Want, x1Scale, r1Want, r1Scale;
  double rho1Want = 0, rho1Scale = 0;

  CgData(uint32_t size, uint32_t seed)
      : n(size),
        a(withValues(accelerate::uniformMatrix(size, size, 16, seed), seed + 1)),
        p(randomFloats(size, seed + 2, 0.5f, 1.5f, false)),
        x(randomFloats(size, seed + 3, 0.25f, 1.25f, true)),
        r(randomFloats(size, seed + 4, 0.25f, 1.25f, true)),
        rho(static_cast<float>(dotOf(r, r))),
        offsets(a.rowOffsets),
        columns(a.columns),
        values(a.values),
        dp(p),
        dx(x),
        dr(r),
        x1(size),
        r1(size),
        rho1(1),
        q(size),
        scalars(3),
        drho(std::vector<float>{rho}) {
    bound.vector("values", values).vector("columns", columns).vector("offsets", offsets);
    bound.vector("p", dp).vector("x", dx).vector("r", dr).scalar("rho", rho);
    bound.output("x1", x1).output("r1", r1).output("rho1", rho1);
    reference();
  }
  CgData(const CgData&) = delete;
  CgData& operator=(const CgData&) = delete;

  uint32_t nnz() const { return static_cast<uint32_t>(a.values.size()); }

  void poisonOutputs() {
    poison(x1);
    poison(r1);
    poison(rho1);
  }

  // The outputs against the reference: empty when right, else the first wrong element.
  std::string check(const std::string& who) const {
    bench::checkCuda(who);
    std::string bad = mismatch("x1", x1.download(), x1Want, x1Scale, kTolerance);
    if (bad.empty()) bad = mismatch("r1", r1.download(), r1Want, r1Scale, kTolerance);
    if (bad.empty()) bad = mismatch("rho1", rho1.download(), {rho1Want}, {rho1Scale}, kTolerance);
    return bad;
  }

  bench::VendorCgBuffers vendorBuffers() {
    bench::VendorCgBuffers b;
    b.n = n;
    b.p = fptr(dp);
    b.x = fptr(dx);
    b.r = fptr(dr);
    b.rho = fptr(drho);
    b.q = mptr(q);
    b.x1 = mptr(x1);
    b.r1 = mptr(r1);
    b.rho1 = mptr(rho1);
    b.scalars = mptr(scalars);
    return b;
  }

 private:
  static accelerate::Csr withValues(accelerate::Csr m, uint32_t seed) {
    m.values = randomFloats(m.values.size(), seed, 0.5f, 1.5f, false);
    return m;
  }
  static double dotOf(const std::vector<float>& u, const std::vector<float>& v) {
    double s = 0;
    for (size_t i = 0; i < u.size(); ++i) s += double(u[i]) * v[i];
    return s;
  }
  // In double, from the float inputs (rho as the plan and the baseline get it, a float).
  void reference() {
    std::vector<double> qw(n), qs(n);
    double pq = 0;
    for (uint32_t i = 0; i < n; ++i) {
      double s = 0, m = 0;
      for (uint32_t k = a.rowOffsets[i]; k < a.rowOffsets[i + 1]; ++k) {
        const double t = double(a.values[k]) * p[a.columns[k]];
        s += t;
        m += std::fabs(t);
      }
      qw[i] = s;
      qs[i] = m;
      pq += double(p[i]) * s;
    }
    const double alpha = double(rho) / pq;
    x1Want.resize(n);
    x1Scale.resize(n);
    r1Want.resize(n);
    r1Scale.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      x1Want[i] = x[i] + alpha * p[i];
      x1Scale[i] = std::fabs(x[i]) + std::fabs(alpha * p[i]);
      r1Want[i] = r[i] - alpha * qw[i];
      r1Scale[i] = std::fabs(r[i]) + std::fabs(alpha) * qs[i];
      rho1Want += r1Want[i] * r1Want[i];
      rho1Scale += r1Scale[i] * r1Scale[i];
    }
  }
};

// ------------------------------------------------------------ the softmax-GEMV's data
// A dense rows x cols matrix in +-[0.01, 4) and x in +-[0.25, 1.25), on the host and the
// device, bound for the plan, with the baseline's row maxima and the reference.
struct SoftmaxData {
  uint32_t rows, cols;
  std::vector<float> a, x;
  gpu::DeviceBuffer<float> da, dx, y, m;
  array::Bindings bound;
  std::vector<double> want, scale;

  SoftmaxData(uint32_t r, uint32_t c, uint32_t seed)
      : rows(r),
        cols(c),
        a(randomFloats(size_t{r} * c, seed, 0.01f, 4.0f, true)),
        x(randomFloats(c, seed + 1, 0.25f, 1.25f, true)),
        da(a),
        dx(x),
        y(r),
        m(r),
        want(r),
        scale(r) {
    bound.matrix("A", da, rows, cols, cols).vector("x", dx).output("y", y);
    for (uint32_t i = 0; i < rows; ++i) {
      const float* row = a.data() + size_t{i} * cols;
      double mx = -INFINITY;
      for (uint32_t k = 0; k < cols; ++k) mx = std::max(mx, double(row[k]));
      double s = 0, d = 0, ds = 0;
      for (uint32_t k = 0; k < cols; ++k) {
        const double e = std::exp(double(row[k]) - mx);
        s += e;
        d += e * x[k];
        ds += e * std::fabs(x[k]);
      }
      want[i] = d / s;
      scale[i] = ds / s;
    }
  }
  SoftmaxData(const SoftmaxData&) = delete;
  SoftmaxData& operator=(const SoftmaxData&) = delete;

  std::string check(const std::string& who) const {
    bench::checkCuda(who);
    return mismatch("y", y.download(), want, scale, kTolerance);
  }
};

// ------------------------------------------------------------ Table 3
struct PlanCost {
  std::string program;
  size_t kernels = 0;
  double planMs = 0;          // report().planMilliseconds of the first Plan
  double planWallMs = 0;      // the first Plan's constructor, wall
  double nvrtcMs = 0;         // compileCuda over every kernel, uncached, summed
  double firstRunMs = 0;      // the first run (synchronized), wall
  double laterRunMs = 0;      // the median of 5 later runs, wall
  uint64_t compiled = 0;      // kernels the first run compiled (kernel cache misses)
  uint64_t loaded = 0;        // ... and loaded from the disk cache
  double replanUs = 0;        // the second Plan's constructor (cached), wall
  double replanMedianUs = 0;  // the median of 10 more
  bool replanCached = false;
  std::string firstRunBad;  // the first run's outputs against the reference
  json kernelsJson = json::array();
};

PlanCost planCost(const std::string& label,
                  const std::function<std::vector<array::Output>()>& program,
                  const array::PlanOptions& options, const array::Bindings& bound,
                  const std::function<void()>& poisonOutputs,
                  const std::function<std::string()>& check) {
  PlanCost c;
  c.program = label;
  std::vector<array::Output> outputs = program();
  Clock::time_point start = Clock::now();
  const array::Plan plan(std::move(outputs), options);
  c.planWallMs = msSince(start);
  if (plan.cached()) throw Error("Table 3: the plan of " + label + " was planned before");
  c.planMs = plan.report(bound).planMilliseconds;
  c.kernels = plan.kernelCount();
  CompileOptions arch;
  arch.arch = gpu::Device::get().info().arch();
  for (const Kernel& k : plan.kernels()) {
    const CompileResult r = compileCuda(k.cuda(), k.name(), k.compileOptions(arch));
    c.nvrtcMs += r.seconds * 1e3;
    c.kernelsJson.push_back(json{{"name", k.name()},
                                 {"nvrtc_ms", r.seconds * 1e3},
                                 {"registers", r.registers},
                                 {"cuda_bytes", k.cuda().size()}});
  }
  const KernelCache::Stats before = KernelCache::global().stats();
  poisonOutputs();
  start = Clock::now();
  plan.run(bound);  // synchronized
  c.firstRunMs = msSince(start);
  const KernelCache::Stats after = KernelCache::global().stats();
  c.compiled = after.misses - before.misses;
  c.loaded = after.diskHits - before.diskHits;
  c.firstRunBad = check();
  std::vector<double> later;
  for (int i = 0; i < 5; ++i) {
    start = Clock::now();
    plan.run(bound);
    later.push_back(msSince(start));
  }
  c.laterRunMs = median(later);
  std::vector<array::Output> again = program();
  start = Clock::now();
  const array::Plan second(std::move(again), options);
  c.replanUs = msSince(start) * 1e3;
  c.replanCached = second.cached();
  std::vector<double> replans;
  for (int i = 0; i < 10; ++i) {
    std::vector<array::Output> o = program();
    start = Clock::now();
    const array::Plan p(std::move(o), options);
    replans.push_back(msSince(start) * 1e3);
  }
  c.replanMedianUs = median(replans);
  return c;
}

void print(const PlanCost& c) {
  std::cout << std::left << std::setw(14) << c.program << std::right << std::setw(8) << c.kernels
            << std::fixed << std::setprecision(3) << std::setw(10) << c.planMs
            << std::setprecision(1) << std::setw(10) << c.nvrtcMs << std::setw(17)
            << c.firstRunMs - c.laterRunMs << std::setw(10)
            << (std::to_string(c.compiled) + "/" + std::to_string(c.loaded)) << std::setprecision(2)
            << std::setw(11) << c.replanUs << std::setw(12) << c.replanMedianUs << "  "
            << (c.replanCached ? "" : "NOT CACHED ") << (c.replanUs < 1000 ? "" : "SLOW REPLAN ")
            << (c.firstRunBad.empty() ? "ok" : "WRONG " + c.firstRunBad) << std::endl;
}

json toJson(const PlanCost& c) {
  return json{{"program", c.program},
              {"kernels", c.kernels},
              {"plan_ms", c.planMs},
              {"plan_wall_ms", c.planWallMs},
              {"nvrtc_ms", c.nvrtcMs},
              {"first_run_ms", c.firstRunMs},
              {"later_run_ms", c.laterRunMs},
              {"first_run_over_later_ms", c.firstRunMs - c.laterRunMs},
              {"first_run_compiled", c.compiled},
              {"first_run_loaded_from_disk", c.loaded},
              {"replan_us", c.replanUs},
              {"replan_median_us", c.replanMedianUs},
              {"replan_cached", c.replanCached},
              {"first_run_ok", c.firstRunBad.empty()},
              {"kernel_compiles", c.kernelsJson}};
}

// Right and cached (a slow replan is flagged in the table, not failed: it is a time).
bool fine(const PlanCost& c) { return c.firstRunBad.empty() && c.replanCached; }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Whole-array programs (array::Plan) against cuBLAS + cuSPARSE and hand CUDA"};
  bench::CommonOptions common;
  app.add_flag("--quick", common.quick, "small sizes only");
  app.add_option("--runs", common.runs, "timed runs per measurement (at least 20)")
      ->check(CLI::Range(20, 10000));
  array::PlanOptions onGpu;  // the plans' knobs (defaults: PlanOptions's)
  app.add_option("--plan-segment-lanes", onGpu.segmentLanes, "lanes a CSR segment takes");
  app.add_option("--plan-unroll", onGpu.unroll, "elements a lane reads before it folds them");
  std::string section = "all";
  uint32_t softmaxRows = 0;
  app.add_option("--softmax-rows", softmaxRows, "the softmax rows of this many matrix rows alone");
  app.add_option("--section", section, "all, or one program's rows alone (for a profiler)")
      ->check(CLI::IsMember({"all", "cg", "softmax"}));
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  if (!bench::deviceOrSkip()) return bench::kSkipped;

  std::vector<uint32_t> cgSizes = {1u << 20, 1u << 22};
  std::vector<std::pair<uint32_t, uint32_t>> softmaxSizes = {
      {16384, 4096}, {4096, 16384}, {65536, 1024}};
  if (common.quick) {
    cgSizes = {100003};
    softmaxSizes = {{1031, 1543}, {515, 4096}};
  }
  if (section == "cg") softmaxSizes.clear();
  if (section == "softmax") cgSizes.clear();
  if (softmaxRows)
    std::erase_if(softmaxSizes, [&](const auto& s) { return s.first != softmaxRows; });
  onGpu.target = device::Target::onGpu();
  array::RunOptions async;
  async.synchronize = false;
  bool allOk = true;
  json rows = json::array(), planning = json::array();

  try {
    // 3 (measured first: no plan of these programs exists yet in this process), on small data.
    // NVRTC loaded and used once first (its dlopen and first-use setup), so no row pays that.
    {
      CompileOptions arch;
      arch.arch = gpu::Device::get().info().arch();
      compileCuda("extern \"C\" __global__ void warmUp(float* x) { x[0] = 1.0f; }\n", "warmUp",
                  arch);
    }
    std::vector<PlanCost> costs;
    if (section == "all") {
      CgData cg(100003, 31);
      costs.push_back(planCost(
          "CG iteration", cgProgram, onGpu, cg.bound, [&] { cg.poisonOutputs(); },
          [&] { return cg.check("CG (Table 3)"); }));
      SoftmaxData sm(1031, 1543, 41);
      costs.push_back(planCost(
          "softmax-GEMV", softmaxProgram, onGpu, sm.bound, [&] { poison(sm.y); },
          [&] { return sm.check("softmax-GEMV (Table 3)"); }));
    }
    for (const std::string& name : blas::sequenceNames()) {
      if (section != "all") break;
      const blas::Problem pr = blas::isVectorSequence(name) ? blas::Problem{1000003}
                                                            : blas::Problem{0, 1031, 1543, 1543};
      const blas::Sequence q = blas::sequence(name, pr);
      blas::Buffers b = blas::randomInputs(q, 5);
      const auto want = blas::reference(name, pr, b);
      blas::DeviceBuffers d = blas::upload(q, b);
      const array::Bindings bound = blas::bindings(name, pr, d);
      costs.push_back(planCost(
          name, [&] { return blas::script(name); }, onGpu, bound,
          [&] {
            for (const auto& [out, size] : q.outputs) poison(d.at(out));
          },
          [&] {
            bench::checkCuda(name);
            blas::download(q, d, b);
            return blas::mismatch(want, b);
          }));
    }

    // The copy roofline: 2^26 floats read and written.
    const size_t copyFloats = size_t{1} << 26;
    gpu::DeviceBuffer<float> copySrc(copyFloats), copyDst(copyFloats);
    copySrc.fill(std::bit_cast<float>(0x3F3F3F3Fu));
    const bench::Timing copy = bench::timeGpu(
        [&](int) { bench::copyKernel(fptr(copySrc), mptr(copyDst), copyFloats * 4); }, common.runs);
    const double roof = bench::gbps(copyFloats * 8, copy.medianMs);
    std::cout << "copy roofline: " << std::fixed << std::setprecision(0) << roof << " GB/s\n";

    // 1. One CG iteration.
    const array::Plan cgPlan(cgProgram(), onGpu);
    std::cout << "\n1. One conjugate-gradient iteration (q = A p; alpha = rho / p.q; x1 = x + "
                 "alpha p; r1 = r - alpha q; rho1 = r1.r1) against cuSPARSE SpMV (CSR ALG1) + "
                 "cuBLAS\n(kernels: the plan's / the vendor's calls, copies included; GB/s: the "
                 "plan's bytes over our time)\n\n"
              << "       n        nnz  kernels  ours us  vendor us  vendor/ours    MB  ours GB/s  "
                 "%roof  check\n";
    bool shown = false;
    for (uint32_t n : cgSizes) {
      CgData cg(n, 7);
      const bench::VendorSpmv spmv(1, n, n, cg.nnz(), uptr(cg.offsets), uptr(cg.columns),
                                   fptr(cg.values), fptr(cg.dp), mptr(cg.q));
      const bench::VendorCgBuffers vb = cg.vendorBuffers();
      const auto ours = [&] { cgPlan.run(cg.bound, async); };
      const auto theirs = [&] { bench::vendorCgIteration(spmv, vb); };
      cg.poisonOutputs();
      ours();
      const std::string oursBad = cg.check("CG (plan)");
      cg.poisonOutputs();
      theirs();
      const std::string theirsBad = cg.check("CG (cuBLAS + cuSPARSE)");
      const bench::Timing t1 = bench::timeGpu([&](int) { ours(); }, common.runs);
      const bench::Timing t2 = bench::timeGpu([&](int) { theirs(); }, common.runs);
      const array::PlanReport report = cgPlan.report(cg.bound);
      const double gbps = report.bytes / (t1.medianMs * 1e-3) / 1e9;
      const bool ok = oursBad.empty() && theirsBad.empty();
      allOk = allOk && ok;
      std::cout << std::right << std::setw(8) << n << std::setw(11) << cg.nnz() << std::setw(9)
                << (std::to_string(cgPlan.kernelCount()) + "/" +
                    std::to_string(bench::kVendorCgCalls))
                << std::fixed << std::setprecision(1) << std::setw(9) << t1.medianMs * 1e3
                << std::setw(11) << t2.medianMs * 1e3 << std::setprecision(3) << std::setw(13)
                << t2.medianMs / t1.medianMs << std::setprecision(0) << std::setw(6)
                << report.bytes / 1e6 << std::setw(11) << gbps << std::setprecision(1)
                << std::setw(7) << 100 * gbps / roof << "  "
                << (ok ? "ok" : "WRONG " + oursBad + " / " + theirsBad) << std::endl;
      if (!shown) {
        std::cout << report.str();
        shown = true;
      }
      rows.push_back(json{{"program", "cg"},
                          {"n", n},
                          {"nnz", cg.nnz()},
                          {"kernels", cgPlan.kernelCount()},
                          {"vendor_calls", bench::kVendorCgCalls},
                          {"ours", bench::timingJson(t1)},
                          {"vendor", bench::timingJson(t2)},
                          {"vendor_over_ours", t2.medianMs / t1.medianMs},
                          {"bytes", report.bytes},
                          {"unfused_bytes", report.unfusedBytes},
                          {"unfused_kernels", report.unfusedKernels},
                          {"ours_gbps", gbps},
                          {"roofline_gbps", roof},
                          {"percent_roof", 100 * gbps / roof},
                          {"ours_ok", oursBad.empty()},
                          {"vendor_ok", theirsBad.empty()},
                          {"plan", report.str()}});
    }

    // 2. A row softmax followed by a GEMV.
    const array::Plan smPlan(softmaxProgram(), onGpu);
    std::cout << "\n2. A row softmax followed by a GEMV (y = softmax_rows(A) x) against hand "
                 "CUDA (two kernels, one warp a row)\n\n"
              << "  rows x cols    kernels  ours us  hand us  ours/hand    MB  ours GB/s  %roof  "
                 "check\n";
    shown = false;
    for (const auto& [r, c] : softmaxSizes) {
      SoftmaxData sm(r, c, 13);
      const auto ours = [&] { smPlan.run(sm.bound, async); };
      const auto theirs = [&] {
        bench::handSoftmaxGemv(fptr(sm.da), sm.rows, sm.cols, sm.cols, fptr(sm.dx), mptr(sm.m),
                               mptr(sm.y));
      };
      poison(sm.y);
      ours();
      const std::string oursBad = sm.check("softmax-GEMV (plan)");
      poison(sm.y);
      theirs();
      const std::string theirsBad = sm.check("softmax-GEMV (hand CUDA)");
      const bench::Timing t1 = bench::timeGpu([&](int) { ours(); }, common.runs);
      const bench::Timing t2 = bench::timeGpu([&](int) { theirs(); }, common.runs);
      const array::PlanReport report = smPlan.report(sm.bound);
      const double gbps = report.bytes / (t1.medianMs * 1e-3) / 1e9;
      const bool ok = oursBad.empty() && theirsBad.empty();
      allOk = allOk && ok;
      std::cout << std::right << std::setw(6) << r << " x " << std::left << std::setw(6) << c
                << std::right << std::setw(9)
                << (std::to_string(smPlan.kernelCount()) + "/" +
                    std::to_string(bench::kHandSoftmaxKernels))
                << std::fixed << std::setprecision(1) << std::setw(9) << t1.medianMs * 1e3
                << std::setw(9) << t2.medianMs * 1e3 << std::setprecision(3) << std::setw(11)
                << t1.medianMs / t2.medianMs << std::setprecision(0) << std::setw(6)
                << report.bytes / 1e6 << std::setw(11) << gbps << std::setprecision(1)
                << std::setw(7) << 100 * gbps / roof << "  "
                << (ok ? "ok" : "WRONG " + oursBad + " / " + theirsBad) << std::endl;
      if (!shown) {
        std::cout << report.str();
        shown = true;
      }
      rows.push_back(json{{"program", "softmax_gemv"},
                          {"rows", r},
                          {"cols", c},
                          {"kernels", smPlan.kernelCount()},
                          {"hand_kernels", bench::kHandSoftmaxKernels},
                          {"ours", bench::timingJson(t1)},
                          {"hand", bench::timingJson(t2)},
                          {"ours_over_hand", t1.medianMs / t2.medianMs},
                          {"bytes", report.bytes},
                          {"unfused_bytes", report.unfusedBytes},
                          {"unfused_kernels", report.unfusedKernels},
                          {"ours_gbps", gbps},
                          {"roofline_gbps", roof},
                          {"percent_roof", 100 * gbps / roof},
                          {"ours_ok", oursBad.empty()},
                          {"hand_ok", theirsBad.empty()},
                          {"plan", report.str()}});
    }

    // 3. Printed last.
    std::cout << "\n3. Planning and first compiles (seed 004's Table 3; measured first, on small "
                 "data)\n(plan ms: the first Plan; NVRTC ms: its kernels, uncached, summed; "
                 "first-run ms: the first run less a later one,\nthe runtime compiling (c) or "
                 "loading from the disk cache (d) the kernels; replan us: the same Plan again, "
                 "then the median of 10 more)\n\n"
              << "program        kernels   plan ms  NVRTC ms  first-run ms     c/d  replan us  "
                 "median us  check\n";
    for (const PlanCost& c : costs) {
      print(c);
      allOk = allOk && fine(c);
      planning.push_back(toJson(c));
    }
    if (!common.jsonPath.empty()) {
      std::ofstream(common.jsonPath) << json{{"device", bench::deviceName()},
                                             {"roofline_gbps", roof},
                                             {"runs", common.runs},
                                             {"rows", rows},
                                             {"planning", planning}}
                                            .dump(2)
                                     << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "obsidian-bench-array: " << e.what() << "\n";
    return 1;
  }
  return allOk ? 0 : 1;
}
