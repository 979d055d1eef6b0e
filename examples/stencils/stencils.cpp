// The stencils example: Barracuda's stencil programs (seed 000, Chapter 4; stencils.hpp) with
// their neighbours read from global memory and from a shared-memory halo tile, on random data
// of odd sizes, each checked against its C++ reference, on the GPU when there is one and on
// the simulator otherwise. It prints each kernel's shared memory, barriers and registers, and
// on the GPU its time and GB/s (input read once, output written once).
//
//   obsidian-stencils [--n N] [--rows R --cols C] [--cuda] [--simulate | --gpu] [--quick]
//                     [--runs N] [--profile]
#include "stencils.hpp"

#include <cmath>
#include <iostream>

#include "../common/runner.hpp"

namespace {

using namespace examples;

// Whether every element of `got` is within float rounding of `want` (the kernels may contract
// a multiply and an add into an FMA; the reference does not).
bool close(const std::vector<float>& got, const std::vector<float>& want, std::string& where) {
  if (got.size() != want.size()) {
    where = "sizes differ";
    return false;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= 1e-5f * (1.0f + std::fabs(want[i])))) {
      where = "element " + std::to_string(i) + ": " + std::to_string(got[i]) + ", want " +
              std::to_string(want[i]);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Barracuda's stencils: neighbours from global memory against a shared halo tile"};
  uint32_t n = 0, rows = 0, cols = 0;
  app.add_option("--n", n, "elements of the 1-D input (default: 2^26 + 5 on the GPU)");
  app.add_option("--rows", rows, "rows of the 2-D input (default: 8191 on the GPU)");
  app.add_option("--cols", cols, "cols of the 2-D input (default: 4097 on the GPU)");
  const Options o = parse(app, argc, argv);
  if (n == 0) n = o.quick ? 10007 : o.gpu() ? (1u << 26) + 5 : (1u << 16) + 5;
  if (rows == 0) rows = o.quick ? 67 : o.gpu() ? 8191 : 300;
  if (cols == 0) cols = o.quick ? 101 : o.gpu() ? 4097 : 257;
  if (n < 15) {  // the moving average's window
    std::cerr << "error: --n must be at least 15 (a window of the moving average); got " << n
              << "\n";
    return 1;
  }
  try {
    std::cout << "Stencils on " << backendName(o) << "\n";
    bool pass = true;
    const auto check = [&](const Kernel& k, const std::vector<float>& got,
                           const std::vector<float>& want) {
      std::string where;
      const bool ok = close(got, want, where);
      if (!ok) std::cout << k.name() << ": WRONG at " << where << "\n";
      pass = pass && ok;
      return ok;
    };

    const std::vector<float> vec = randomFloats(n, 1);
    Table windows("1-D stencils, n = " + std::to_string(n) +
                  " (GB/s: the input read once, the output written once)");
    const auto runWindow = [&](const Kernel& k, uint32_t width, const auto& f, uint32_t tile) {
      if (o.cuda) std::cout << "\n// ---- " << k.name() << "\n" << k.cuda();
      std::vector<float> out(n - width + 1);
      Args args;
      args.in(vec).out(out);
      const double ms = run(k, args, o);
      const bool ok = check(k, out, stencils::windowReference(vec, width, f));
      windows.add(k.name(), k, tile, n, ok, ms, 4.0 * n + 4.0 * out.size());
    };
    for (stencils::Memory m : {stencils::Memory::Global, stencils::Memory::Shared}) {
      const stencils::Window shape{2};
      runWindow(stencils::forwardDifference(m, shape), 2, stencils::kDifference, shape.tile);
    }
    for (stencils::Memory m : {stencils::Memory::Global, stencils::Memory::Shared}) {
      const stencils::Window shape{15};
      runWindow(stencils::movingAverage(m, shape), 15, stencils::kMovingAverage, shape.tile);
    }
    windows.print();

    const std::vector<float> mat = randomFloats(size_t{rows} * cols, 2);
    Table grids("2-D stencils, " + std::to_string(rows) + " x " + std::to_string(cols) +
                " (GB/s: the input read once, the output written once)");
    const auto runStencil = [&](const Kernel& k, const auto& f, const stencils::Stencil2& shape) {
      if (o.cuda) std::cout << "\n// ---- " << k.name() << "\n" << k.cuda();
      std::vector<float> out(mat.size());
      Args args;
      args.in(mat).scalar(rows).scalar(cols).scalar(cols).out(out);  // pitch: the cols
      const double ms = run(k, args, o);
      const bool ok = check(k, out, stencils::stencilReference(mat, rows, cols, f));
      const stencils::Tile tile = stencils::tileFor(shape.radius);
      grids.add(k.name(), k, tile.rows * tile.cols, mat.size(), ok, ms, 8.0 * mat.size());
    };
    for (stencils::Memory m : {stencils::Memory::Global, stencils::Memory::Shared}) {
      runStencil(stencils::jacobi(m), stencils::kJacobi, {1});
      runStencil(stencils::blur<1>(m), stencils::kBlur<1>, {1});
      runStencil(stencils::blur<2>(m), stencils::kBlur<2>, {2});
    }
    grids.print();

    // RMSE, fused into one pass and unfused (three kernels, two intermediate arrays).
    const std::vector<float> x = randomFloats(n, 3), y = randomFloats(n, 4);
    const double want = stencils::rmseReference(x, y);
    const bool gpu = o.gpu();
    const uint32_t blocks =
        gpu ? gpu::occupancyBlocks(stencils::rmseFused(1)) : kSimulatedReduceBlocks;
    Table fusion("RMSE, n = " + std::to_string(n) +
                 " (GB/s: x and y read once, 8 bytes per element, for both)");
    const auto checkRmse = [&](const std::string& what, float got) {
      const bool ok = std::fabs(got - want) <= 1e-4 * want;
      std::cout << what << " = " << got << " (reference " << want << ")" << (ok ? "" : ": WRONG")
                << "\n";
      pass = pass && ok;
      return ok;
    };
    {
      const Kernel fused = stencils::rmseFused(blocks);
      if (o.cuda) std::cout << "\n// ---- " << fused.name() << "\n" << fused.cuda();
      std::vector<float> r(1);
      Args args;
      args.in(x).in(y).out(r);
      const double ms = run(fused, args, o);
      fusion.add("rmseFused", fused, 0, n, checkRmse("rmseFused", r[0]), ms, 8.0 * n);
    }
    {
      const uint32_t sumBlocks =
          gpu ? gpu::occupancyBlocks(reduceKernel<float>(Sum{}, 0.0f, reducePolicy(), 1))
              : kSimulatedReduceBlocks;
      const stencils::RmseUnfused u = stencils::rmseUnfused(sumBlocks);
      if (o.cuda) {
        for (const Kernel* k : {&u.difference, &u.square, &u.sum})
          std::cout << "\n// ---- " << k->name() << "\n" << k->cuda();
      }
      std::vector<float> d(n), sq(n), sum(1);
      double ms = std::nan("");
      if (gpu) {
        const gpu::DeviceBuffer<float> dx(x), dy(y);
        gpu::DeviceBuffer<float> dd(n), ds(n), dsum(1);
        gpu::LaunchOptions async;
        async.synchronize = false;
        const auto launches = [&] {
          gpu::launch(u.difference, {dx, dy, dd}, async);
          gpu::launch(u.square, {dd, ds}, async);
          gpu::launch(u.sum, {ds, dsum}, async);
        };
        launches();
        gpu::Device::get().synchronize();
        dsum.download(std::span<float>(sum));
        ms = timeOnGpu(launches, o);
      } else {
        simulate(u.difference, {x, y, d});
        simulate(u.square, {d, sq});
        simulate(u.sum, {sq, sum});
      }
      const float got = std::sqrt(sum[0] / float(n));
      fusion.add("rmseUnfused (3 kernels)", u.sum, 0, n, checkRmse("rmseUnfused", got), ms,
                 8.0 * n);
    }
    fusion.print();
    std::cout << (pass ? "PASS" : "FAIL") << "\n";
    return pass ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
