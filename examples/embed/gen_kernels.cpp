// The embed example's generator: run at build time (obsidian_add_kernels), it writes the
// exported headers the CUDA application includes, plus PTX/CUBIN with JSON sidecars for
// driver-API and CuPy users. Usage: obsidian-embed-gen <output directory>
#include <iostream>
#include <obsidian/obsidian.hpp>

#include "../increment/increment.hpp"
#include "../mandelbrot/mandelbrot.hpp"
#include "../reduce/reduce.hpp"
#include "../scan/scan.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " <output directory>\n";
    return 2;
  }
  const std::filesystem::path out = argv[1];
  try {
    using namespace obsidian;
    // The large reduction: its kernel and one host function for the whole pipeline.
    const Kernel partial = paper::partialSums(4096, 256, 8);
    writeHeader(out / "reduce.cuh", {partial},
                {"embed::reduce", exportReducePipeline(partial, 4096, "sum")});
    // A block reduction (one sum per 512 elements), also as PTX/CUBIN + JSON.
    const Kernel red5 = paper::reduceKernel<uint32_t>(paper::Variant::Red5, paper::plus, 512, 128);
    writeHeader(out / "blocksums.cuh", {red5}, {"embed::blocksums", ""});
    exportBinary(red5, out);
    // The large scan (sklansky2 over chunks of 1024, 256 threads): three kernels, one function.
    const LargeScan scan =
        largeScanKernels<uint32_t>(paper::ScanVariant::Sklansky2, 1u << 10, 256, paper::plus, 0u);
    writeHeader(out / "scan.cuh", {scan.inclusive, scan.exclusive, scan.addBack},
                {"embed::scan", exportScanPipeline(scan.inclusive, scan.exclusive, scan.addBack,
                                                   scan.chunk, "scan")});
    // Mandelbrot rows of 256 pixels; the app chooses the height.
    writeHeader(out / "mandel.cuh", {paper::mandelKernel(256, 128)}, {"embed::mandel", ""});
    // Every other example kernel, so that a test compiles each export with nvcc.
    writeHeader(out / "increment.cuh", {paper::incrementKernel(), paper::increment2Kernel()},
                {"embed::increment", ""});
    writeHeader(out / "agnostic.cuh", {paper::agnosticBlockKernel(), paper::agnosticWarpKernel()},
                {"embed::agnostic", ""});
    std::vector<Kernel> reductions;
    for (paper::Variant v :
         {paper::Variant::Red1, paper::Variant::Red2, paper::Variant::Red3, paper::Variant::Red4,
          paper::Variant::Red5, paper::Variant::Red6, paper::Variant::Red7}) {
      reductions.push_back(paper::reduceKernel<float>(
          v, [](const EFloat& a, const EFloat& b) { return a + b; }, 4096, 256));
    }
    writeHeader(out / "reductions.cuh", reductions, {"embed::reductions", ""});
    // Kernels named like the launchers' parameters and locals (e: over 48 KB of shared memory,
    // so its launcher raises the limit) and a pipeline's kernel named like the pipeline's
    // locals: host code names a kernel only as ::ns::k, so this compiles (a test runs nvcc).
    auto plusOne = [](DPull<EWord32> in) {
      return push<Grid>(fmap([](const EWord32& x) { return x + 1u; }, in));
    };
    std::vector<Kernel> names;
    for (const char* name : {"blocks", "stream", "in0", "n0", "out0", "count"}) {
      names.push_back(capture(name, 32, plusOne));
    }
    names.push_back(capture("e", 1024, [](DPull<EWord32> in) {
      return pConcat(fmap(
          [](const SPull<EWord32>& c) {
            return exec<Block>(
                [c](const Program<Block>& p) { return push<Block>(forcePull(p, c)); });
          },
          splitUp(16384, in)));
    }));
    const Kernel src =
        partialReduceWith<uint32_t>([](const Program<Block>& p, auto f,
                                       const SPull<EWord32>& c) { return obsidian::red5(p, f, c); },
                                    paper::plus, 0u, 512, 256, "src");
    names.push_back(src);
    writeHeader(out / "names.cuh", names, {"embed::names", exportReducePipeline(src, 512, "dst")});
    // An effect-only kernel (no output array): each block of 256 counts its elements modulo 16
    // in shared memory and adds the counts into the global `bins`.
    const Kernel counts =
        capture("countMod16", 256, [](DPull<EWord32> in, DMutable<uint32_t> bins) {
          return forEachBlock(splitUp(256, in),
                              [bins](const Program<Block>& p, const SPull<EWord32>& c) {
                                const SMutable<uint32_t> local = newShared<uint32_t>(p, 16);
                                p.forAll(16u, [&](const Program<Thread>& t, const EWord32& i) {
                                  write(t, local, i, 0u);
                                });
                                p.sync();
                                p.forAll(256u, [&](const Program<Thread>& t, const EWord32& i) {
                                  atomicAdd(t, local, c[i] % 16u, 1u);
                                });
                                p.sync();
                                p.forAll(16u, [&](const Program<Thread>& t, const EWord32& i) {
                                  atomicAdd(t, bins, i, local[i]);
                                });
                              });
        });
    writeHeader(out / "effects.cuh", {counts}, {"embed::effects", ""});
    // The same kernel exported twice, into two namespaces: a translation unit includes both.
    writeHeader(out / "dup_a.cuh", {red5}, {"embed::a", ""});
    writeHeader(out / "dup_b.cuh", {red5}, {"embed::b", ""});
  } catch (const obsidian::Error& e) {
    std::cerr << "obsidian-embed-gen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
