// The stencils benchmark (issue 18, Barracuda's stencils: seed 000, Chapter 4). In one run, on
// the same random data: obsidian's stencils (examples/stencils/stencils.hpp) with neighbours
// from global memory and from a shared halo tile, against hand-written CUDA in the thesis's two
// designs (cuda_stencils.cu: naive and tiled), with a 16-byte copy kernel over the input's
// bytes (read + written) as the roofline. 1-D: the forward difference and Spencer's 15-point
// moving average at 2^26 and 100000007 floats; 2-D: a Jacobi step and 3 x 3 and 5 x 5 blurs at
// 8192 x 8192 and 8191 x 4097. And the thesis's fusion benchmark, the RMSE of two vectors:
// ours fused (one launch), ours unfused (three kernels), against a hand-written fused CUDA
// kernel, with the read roofline (16-byte loads) over x and y. Every input is larger than the
// 50 MB L2; every output, ours and CUDA's, is checked against the C++ reference first.
//
// Usage: obsidian-bench-stencils [--quick] [--only N] [--runs N] [--json FILE]
//        [--tile-rows R --tile-cols C] [--tile T] [--2d-only]
#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "../../examples/stencils/stencils.hpp"
#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cuda_stencils.hpp"

namespace {

using namespace obsidian;
using nlohmann::json;

// The four implementations of one stencil, timed on one input, and the copy of the input.
struct Result {
  std::string program, shape;
  size_t n = 0, bytes = 0;  // elements of the input; bytes read once and written once
  bench::Timing global = {}, shared = {}, naive = {}, tiled = {}, copy = {};
  bool ok[4] = {true, true, true, true};
};

bool close(const std::vector<float>& got, const std::vector<float>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= 1e-5f * (1.0f + std::fabs(want[i])))) return false;
  }
  return true;
}

// Runs `launches[k]` once into a poisoned output, checks it, then times each of them.
Result measure(Result r, const std::vector<float>& want, gpu::DeviceBuffer<float>& out,
               const std::vector<std::function<void()>>& launches, const float* in, int runs) {
  std::vector<float> got(want.size());
  for (size_t k = 0; k < 4; ++k) {
    out.fill(std::bit_cast<float>(0xFFFFFFFFu), 0, want.size());
    launches[k]();
    bench::checkCuda(r.program);
    bench::download(got.data(), bench::ptr(out.address()), want.size() * 4);
    r.ok[k] = close(got, want);
  }
  bench::Timing* slots[4] = {&r.global, &r.shared, &r.naive, &r.tiled};
  for (size_t k = 0; k < 4; ++k) *slots[k] = bench::timeGpu([&](int) { launches[k](); }, runs);
  r.copy = bench::timeGpu(
      [&](int) { bench::copyKernel(in, bench::mutablePtr(out.address()), r.n * 4 / 16 * 16); },
      runs);
  return r;
}

double gbps(const Result& r, const bench::Timing& t) { return bench::gbps(r.bytes, t.medianMs); }

void print(const Result& r) {
  const double copy = bench::gbps(r.n * 8 / 16 * 16, r.copy.medianMs);
  std::cout << std::left << std::setw(18) << r.program << std::setw(13) << r.shape << std::right
            << std::fixed << std::setprecision(1) << std::setw(9) << r.global.medianMs * 1e3
            << std::setw(9) << r.shared.medianMs * 1e3 << std::setw(9) << r.naive.medianMs * 1e3
            << std::setw(9) << r.tiled.medianMs * 1e3 << std::setprecision(3) << std::setw(11)
            << r.shared.medianMs / r.tiled.medianMs << std::setprecision(0) << std::setw(9)
            << gbps(r, r.shared) << std::setw(9) << copy << std::setw(7) << std::setprecision(1)
            << 100 * gbps(r, r.shared) / copy << "  "
            << (r.ok[0] && r.ok[1] && r.ok[2] && r.ok[3] ? "ok" : "WRONG") << std::endl;
}

json toJson(const Result& r) {
  return json{{"program", r.program},
              {"shape", r.shape},
              {"n", r.n},
              {"bytes", r.bytes},
              {"ours_global", bench::timingJson(r.global)},
              {"ours_shared", bench::timingJson(r.shared)},
              {"cuda_naive", bench::timingJson(r.naive)},
              {"cuda_tiled", bench::timingJson(r.tiled)},
              {"copy", bench::timingJson(r.copy)},
              {"ours_over_tiled", r.shared.medianMs / r.tiled.medianMs},
              {"ours_gbps", gbps(r, r.shared)},
              {"copy_gbps", bench::gbps(r.n * 8 / 16 * 16, r.copy.medianMs)},
              {"ok", r.ok[0] && r.ok[1] && r.ok[2] && r.ok[3]}};
}

// Writes the JSON (with --json) and returns 0 when every result was right.
int finish(const bench::CommonOptions& common, const json& results) {
  if (!common.jsonPath.empty()) {
    std::ofstream(common.jsonPath)
        << json{{"device", bench::deviceName()}, {"rows", results}}.dump(2) << "\n";
  }
  bool ok = true;
  for (const json& r : results) ok = ok && r.at("ok").get<bool>();
  return ok ? 0 : 1;
}

KernelArg array(const gpu::DeviceBuffer<float>& b, size_t n, bool writable) {
  return KernelArg::deviceArray(ScalarType::F32, b.address(), n, writable);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian's stencils against hand-written CUDA (naive and tiled) on the GPU"};
  bench::CommonOptions common;
  bench::addCommonOptions(app, common);
  stencils::Stencil2 tile2{0};
  stencils::Window tile1{0};
  bool only2d = false;
  app.add_option("--tile-rows", tile2.tileRows, "rows of our 2-D stencils' tiles");
  app.add_option("--tile-cols", tile2.tileCols, "cols of our 2-D stencils' tiles");
  app.add_option("--tile", tile1.tile, "outputs of our 1-D stencils' tiles");
  app.add_flag("--2d-only", only2d, "the 2-D stencils alone");
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  // The 1-D stencils need a whole window (15 elements), the RMSE kernels' sizes fit an int.
  if (common.only != 0 && (common.only < 15 || common.only > INT32_MAX)) {
    std::cerr << "--only: 15 to 2^31 - 1 elements; got " << common.only << "\n";
    return 2;
  }
  if ((tile1.tile == 0) || (tile2.tileRows == 0) != (tile2.tileCols == 0)) {
    std::cerr << "--tile must be at least 1, and --tile-rows and --tile-cols given together\n";
    return 2;
  }
  if (!bench::deviceOrSkip()) return bench::kSkipped;

  std::vector<uint32_t> lengths = {1u << 26, 100000007};
  std::vector<std::pair<uint32_t, uint32_t>> shapes = {{8192, 8192}, {8191, 4097}};
  if (common.quick) {
    lengths = {1000003};
    shapes = {{1000, 777}};
  }
  if (common.only) lengths = {static_cast<uint32_t>(common.only)};  // the 1-D and RMSE size
  size_t most = 0;
  for (uint32_t n : lengths) most = std::max<size_t>(most, n);
  for (auto [r, c] : shapes) most = std::max<size_t>(most, size_t{r} * c);
  for (uint32_t n : lengths) most = std::max<size_t>(most, size_t{n} * 2 + 4);  // RMSE's x, y
  bench::Data<float> in(most, 1);
  gpu::DeviceBuffer<float> out(most);
  const float* din = static_cast<const float*>(bench::ptr(in.device.address()));
  float* dout = static_cast<float*>(bench::mutablePtr(out.address()));
  gpu::LaunchOptions async;
  async.synchronize = false;
  json results = json::array();

  std::cout << "\nprogram           shape        ours-gl  ours-sh   naive    tiled  "
               "ours/tiled  ours GB/s copy GB/s %copy  check\n"
               "(median us; ours = obsidian with the shared halo tile; tiled = hand-written "
               "CUDA with shared memory; GB/s = input read once + output written once)\n";
  struct Program1 {
    const char* name;
    bench::Stencil1 cuda;
    uint32_t width;
    Kernel global, shared;
    std::function<std::vector<float>(const std::vector<float>&)> reference;
  };
  const std::vector<Program1> programs1 = {
      {"forwardDifference", bench::Stencil1::Difference, 2,
       stencils::forwardDifference(stencils::Memory::Global, tile1),
       stencils::forwardDifference(stencils::Memory::Shared, tile1),
       [](const std::vector<float>& v) {
         return stencils::windowReference(v, 2, stencils::kDifference);
       }},
      {"movingAverage", bench::Stencil1::Spencer, 15,
       stencils::movingAverage(stencils::Memory::Global, tile1),
       stencils::movingAverage(stencils::Memory::Shared, tile1), [](const std::vector<float>& v) {
         return stencils::windowReference(v, 15, stencils::kMovingAverage);
       }}};
  for (const Program1& p : programs1) {
    if (only2d) break;
    for (uint32_t n : lengths) {
      const std::vector<float> host(in.host.begin(), in.host.begin() + n);
      const std::vector<float> want = p.reference(host);
      const auto ours = [&](const Kernel& k) {
        return [&, n] {
          gpu::launch(k, {array(in.device, n, false), array(out, n - p.width + 1, true)}, async);
        };
      };
      Result r{p.name, std::to_string(n), n, size_t{n} * 4 + want.size() * 4};
      r = measure(r, want, out,
                  {ours(p.global), ours(p.shared),
                   [&, n] { bench::cudaStencil1(p.cuda, false, din, dout, n); },
                   [&, n] { bench::cudaStencil1(p.cuda, true, din, dout, n); }},
                  din, common.runs);
      print(r);
      results.push_back(toJson(r));
    }
  }

  struct Program2 {
    const char* name;
    bench::Stencil2 cuda;
    Kernel global, shared;
    std::function<std::vector<float>(const std::vector<float>&, uint32_t, uint32_t)> reference;
  };
  const std::vector<Program2> programs2 = {
      {"jacobi", bench::Stencil2::Jacobi, stencils::jacobi(stencils::Memory::Global, tile2),
       stencils::jacobi(stencils::Memory::Shared, tile2),
       [](const std::vector<float>& v, uint32_t rows, uint32_t cols) {
         return stencils::stencilReference(v, rows, cols, stencils::kJacobi);
       }},
      {"blur3x3", bench::Stencil2::Blur3, stencils::blur<1>(stencils::Memory::Global, tile2),
       stencils::blur<1>(stencils::Memory::Shared, tile2),
       [](const std::vector<float>& v, uint32_t rows, uint32_t cols) {
         return stencils::stencilReference(v, rows, cols, stencils::kBlur<1>);
       }},
      {"blur5x5", bench::Stencil2::Blur5, stencils::blur<2>(stencils::Memory::Global, tile2),
       stencils::blur<2>(stencils::Memory::Shared, tile2),
       [](const std::vector<float>& v, uint32_t rows, uint32_t cols) {
         return stencils::stencilReference(v, rows, cols, stencils::kBlur<2>);
       }}};
  for (const Program2& p : programs2) {
    for (auto [rows, cols] : shapes) {
      const size_t n = size_t{rows} * cols;
      const std::vector<float> host(in.host.begin(), in.host.begin() + n);
      const std::vector<float> want = p.reference(host, rows, cols);
      const auto ours = [&](const Kernel& k) {
        return [&, rows, cols, n] {
          gpu::launch(k, {array(in.device, n, false), rows, cols, cols, array(out, n, true)},
                      async);
        };
      };
      Result r{p.name, std::to_string(rows) + "x" + std::to_string(cols), n, n * 8};
      r = measure(r, want, out,
                  {ours(p.global), ours(p.shared),
                   [&, rows, cols] { bench::cudaStencil2(p.cuda, false, din, dout, rows, cols); },
                   [&, rows, cols] { bench::cudaStencil2(p.cuda, true, din, dout, rows, cols); }},
                  din, common.runs);
      print(r);
      results.push_back(toJson(r));
    }
  }

  if (only2d) return finish(common, results);
  // RMSE: x = in[0, n), y from the next multiple of 4 elements (16-byte aligned, as the
  // kernels' vector loads need).
  std::cout << "\nRMSE          n   fused us unfused us   CUDA us fused/CUDA fused GB/s read GB/s "
               "%read  check\n(fused: one launch; unfused: d = x - y, s = d^2, sum(s), each a "
               "kernel; GB/s: x and y read once)\n";
  const uint32_t fusedBlocks = gpu::occupancyBlocks(stencils::rmseFused(1));
  const Kernel fused = stencils::rmseFused(fusedBlocks);
  const stencils::RmseUnfused unfused = stencils::rmseUnfused(
      gpu::occupancyBlocks(reduceKernel<float>(Sum{}, 0.0f, reducePolicy(), 1)));
  const uint32_t cudaBlocks = bench::cudaRmseBlocks();
  gpu::DeviceBuffer<float> scratch(*std::max_element(lengths.begin(), lengths.end()));
  gpu::DeviceBuffer<float> result(1);
  gpu::DeviceBuffer<uint32_t> state(
      std::vector<uint32_t>{0, 0, 0});  // RMSE state, the read kernel's sink
  for (uint32_t n : lengths) {
    const std::vector<float> x(in.host.begin(), in.host.begin() + n);
    const size_t yAt = (size_t{n} + 3) / 4 * 4;
    const std::vector<float> y(in.host.begin() + yAt, in.host.begin() + yAt + n);
    const double want = stencils::rmseReference(x, y);
    const KernelArg dx = array(in.device, n, false);
    const KernelArg dy =
        KernelArg::deviceArray(ScalarType::F32, in.device.address() + yAt * 4, n, false);
    const KernelArg dd = array(out, n, true), ds = array(scratch, n, true);
    const std::function<void()> launches[3] = {
        [&] {
          gpu::launch(fused, {dx, dy, array(result, 1, true)}, async);
        },
        [&] {
          gpu::launch(unfused.difference, {dx, dy, dd}, async);
          gpu::launch(unfused.square, {array(out, n, false), ds}, async);
          gpu::launch(unfused.sum, {array(scratch, n, false), array(result, 1, true)}, async);
        },
        [&] {
          bench::cudaRmse(din, din + yAt, n,
                          static_cast<float*>(bench::mutablePtr(result.address())),
                          static_cast<uint32_t*>(bench::mutablePtr(state.address())), cudaBlocks);
        }};
    bool ok = true;
    bench::Timing t[3];
    for (int k = 0; k < 3; ++k) {
      const float poison = std::nanf("");  // a launch that writes nothing fails the check
      bench::upload(bench::mutablePtr(result.address()), &poison, 4);
      launches[k]();
      bench::checkCuda("rmse");
      float got = 0;
      bench::download(&got, bench::ptr(result.address()), 4);
      if (k == 1) got = std::sqrt(got / float(n));  // unfused: the host's last step
      ok = ok && std::fabs(got - want) <= 1e-4 * want;
      t[k] = bench::timeGpu([&](int) { launches[k](); }, common.runs);
    }
    const bench::Timing read = bench::timeGpu(
        [&](int) {
          bench::readKernel(din, size_t{n} * 8 / 16 * 16,
                            static_cast<uint32_t*>(bench::mutablePtr(state.address())) + 2);
        },
        common.runs);
    const double fusedGbps = bench::gbps(size_t{n} * 8, t[0].medianMs);
    const double readGbps = bench::gbps(size_t{n} * 8 / 16 * 16, read.medianMs);
    std::cout << std::setw(10) << n << std::fixed << std::setprecision(1) << std::setw(11)
              << t[0].medianMs * 1e3 << std::setw(11) << t[1].medianMs * 1e3 << std::setw(10)
              << t[2].medianMs * 1e3 << std::setprecision(3) << std::setw(11)
              << t[0].medianMs / t[2].medianMs << std::setprecision(0) << std::setw(11) << fusedGbps
              << std::setw(10) << readGbps << std::setprecision(1) << std::setw(6)
              << 100 * fusedGbps / readGbps << "  " << (ok ? "ok" : "WRONG") << std::endl;
    results.push_back(json{{"program", "rmse"},
                           {"n", n},
                           {"ours_fused", bench::timingJson(t[0])},
                           {"ours_unfused", bench::timingJson(t[1])},
                           {"cuda_fused", bench::timingJson(t[2])},
                           {"fused_over_cuda", t[0].medianMs / t[2].medianMs},
                           {"fused_gbps", fusedGbps},
                           {"read_gbps", readGbps},
                           {"ok", ok}});
  }
  return finish(common, results);
}
