// The embed example's generator: run at build time (obsidian_add_kernels), it writes the
// exported headers the CUDA application includes, plus PTX/CUBIN with JSON sidecars for
// driver-API and CuPy users. Usage: obsidian-embed-gen <output directory>
#include <iostream>
#include <obsidian/obsidian.hpp>

#include "../reduce/large_reduce.hpp"

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
    // The same kernel exported twice, into two namespaces: a translation unit includes both.
    writeHeader(out / "dup_a.cuh", {red5}, {"embed::a", ""});
    writeHeader(out / "dup_b.cuh", {red5}, {"embed::b", ""});
  } catch (const obsidian::Error& e) {
    std::cerr << "obsidian-embed-gen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
