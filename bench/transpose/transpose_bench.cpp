// The transpose benchmark (issue 15: the algorithm layer). In one run, on the same random data:
// our transpose (include/obsidian/device/transpose.hpp) against a hand-written tiled CUDA
// transpose, with a 16-byte copy kernel over as many bytes as the roofline (read + written), at
// 8192 x 8192, 1000 x 777 and 8191 x 4097 u32. Matrices smaller than the 50 MB L2 are rotated
// over disjoint slices of the buffers; every slice's output, ours and the CUDA one's, is checked
// against a CPU transpose first.
//
// Usage: obsidian-bench-transpose [--quick] [--runs N] [--json FILE]
//        [--threads T --tile S --aligned-writes] [--matrix-api]
#include <iostream>
#include <nlohmann/json.hpp>
#include <obsidian/device/transpose.hpp>

#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cuda_transpose.hpp"

namespace {

using namespace obsidian;
using bench::gbps;
using bench::Row;
using nlohmann::json;

struct Shape {
  uint32_t rows, cols;
};

bool transposed(const std::vector<uint32_t>& in, size_t from, Shape s,
                const std::vector<uint32_t>& out) {
  for (uint32_t r = 0; r < s.rows; ++r)
    for (uint32_t c = 0; c < s.cols; ++c)
      if (out[size_t{c} * s.rows + r] != in[from + size_t{r} * s.cols + c]) return false;
  return true;
}

std::vector<size_t> slicesOf(size_t n, size_t total) {
  const size_t step = (n + 63) / 64 * 64;  // 256-byte aligned slices
  const size_t count = std::max<size_t>(1, std::min<size_t>(16, total / step));
  std::vector<size_t> s;
  for (size_t i = 0; i < count; ++i) s.push_back(i * step);
  return s;
}

bool alignedWrites = false;  // --aligned-writes
bool matrixApi = false;      // --matrix-api

// The transpose as a user writes it with obsidian/matrix.hpp: tile (i, j) of the result is the
// transposed view of the input's tile (j, i), staged in a padded shared tile.
Kernel matrixTranspose(const TransposePolicy& policy) {
  const uint32_t tile = policy.tile;
  return capture("matrixTranspose", policy.threads, [tile](DPull2<EWord32> in) {
    return pConcat2(fmap(
                        [](const SPull2<EWord32>& t) {
                          return exec<Block>([t](const Program<Block>& p) {
                            return push2<Block>(transpose(force2(p, t)));
                          });
                        },
                        transpose(tiles(tile, tile, in))),
                    in.cols(), in.rows());
  });
}

Row run(const bench::Data<uint32_t>& in, gpu::DeviceBuffer<uint32_t>& out, Shape s,
        const TransposePolicy& policy, int runs) {
  const size_t n = size_t{s.rows} * s.cols;
  const bool aligned = alignedWrites && transposeAlignsWrites<uint32_t>(s.rows);
  Row row{std::to_string(s.rows) + " x " + std::to_string(s.cols),
          "u32",
          n,
          {},
          {},
          {},
          true,
          true,
          "threads " + std::to_string(policy.threads) + ", tile " + std::to_string(policy.tile)};
  const std::vector<size_t> from = slicesOf(n, in.host.size());
  const Kernel k = matrixApi ? matrixTranspose(policy) : transposeKernel<uint32_t>(policy, aligned);
  gpu::LaunchOptions async;
  async.synchronize = false;
  const auto inAt = [&](size_t f) { return in.device.address() + f * 4; };
  const auto outAt = [&](size_t f) { return out.address() + f * 4; };
  const auto launchOurs = [&](size_t f, const gpu::LaunchOptions& o) {
    const KernelArg src = KernelArg::deviceArray(ScalarType::U32, inAt(f), n, false);
    const KernelArg dst = KernelArg::deviceArray(ScalarType::U32, outAt(f), n, true);
    if (matrixApi) {
      gpu::launch(k, {src, s.rows, s.cols, s.cols, dst}, o);  // pitch: the cols
    } else {
      gpu::launch(k, {src, s.rows, s.cols, dst}, o);
    }
  };
  const auto launchCuda = [&](size_t f) {
    bench::cudaTranspose(reinterpret_cast<const uint32_t*>(inAt(f)),
                         reinterpret_cast<uint32_t*>(outAt(f)), s.rows, s.cols);
  };
  std::vector<uint32_t> got(n);
  for (size_t f : from) {
    bench::checkCuda("before");
    out.fill(0xFFFFFFFFu, f, n);
    launchOurs(f, {});
    bench::download(got.data(), bench::ptr(outAt(f)), n * 4);
    row.oursOk = row.oursOk && transposed(in.host, f, s, got);
    out.fill(0xFFFFFFFFu, f, n);
    launchCuda(f);
    bench::checkCuda("cudaTranspose");
    bench::download(got.data(), bench::ptr(outAt(f)), n * 4);
    row.cubOk = row.cubOk && transposed(in.host, f, s, got);
  }
  row.ours = bench::timeGpu([&](int r) { launchOurs(from[r % from.size()], async); }, runs);
  row.cub = bench::timeGpu([&](int r) { launchCuda(from[r % from.size()]); }, runs);
  row.roof = bench::timeGpu(
      [&](int r) {
        const size_t f = from[r % from.size()];
        bench::copyKernel(bench::ptr(inAt(f)), bench::mutablePtr(outAt(f)), n * 4);
      },
      runs);
  return row;
}

const bench::Table kTable{
    "shape           type           n   ours us   CUDA us ours/CUDA ours GB/s copy GB/s %copy  "
    "check\n",
    15, 8, "copy"};

// Each row against its own copy kernel's GB/s (the same bytes, the same slices).
void print(const Row& r) { bench::print(kTable, r, gbps(r.n * 8, r.roof.medianMs)); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian's transpose against a hand-written CUDA one on the GPU"};
  bench::CommonOptions common;
  bench::addCommonOptions(app, common);
  TransposePolicy chosen{0, 0};
  app.add_option("--threads", chosen.threads, "threads per block (default: the policy table's)");
  app.add_option("--tile", chosen.tile, "the tile's side");
  app.add_flag("--aligned-writes", alignedWrites,
               "sector-aligned writes where rows is not a multiple of 8 (measured slower)");
  app.add_flag("--matrix-api", matrixApi,
               "ours written with obsidian/matrix.hpp (tiles, force2, pConcat2) instead of the "
               "device layer's transpose");
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  if (!bench::deviceOrSkip()) return bench::kSkipped;

  // The policy of each shape: the table's (by the shape, as transpose chooses), or --threads and
  // --tile for every shape.
  const auto policyFor = [&](Shape s) {
    TransposePolicy policy =
        device::transposePolicyFor<uint32_t>(device::Target::onGpu(), s.rows, s.cols);
    if (chosen.threads) policy.threads = chosen.threads;
    if (chosen.tile) policy.tile = chosen.tile;
    return policy;
  };

  const size_t total = size_t{1} << 26;  // 8192 x 8192
  bench::Data<uint32_t> in(total, 1);
  gpu::DeviceBuffer<uint32_t> out(total);
  std::vector<Shape> shapes = {{8192, 8192}, {1000, 777}, {8191, 4097}};
  if (common.quick) shapes = {{1000, 777}, {2048, 1023}};
  json rows = json::array();

  std::cout << "\n" << kTable.header;
  for (Shape s : shapes) {
    const TransposePolicy policy = policyFor(s);
    const Row r = run(in, out, s, policy, common.runs);
    print(r);
    std::cout << "  (threads " << policy.threads << ", tile " << policy.tile << ")\n";
    rows.push_back(bench::toJson(kTable, r));
  }
  return bench::finish(common, 0, rows);
}
