// The reduction case study (paper Section 5.2): the paper's first program, sumUp, and the names
// the case study's driver uses. The variants themselves, red1..red7, are the library's block
// reductions (obsidian/block/reduce.hpp, named by BlockReduceAlgorithm), each body the paper's
// line for line (see README.md); the kernels the paper measures (one block per chunk, mapRed)
// are obsidian/device/tiled.hpp's, and the large reduction of any length is the multi-kernel
// pipeline of obsidian/device/pipeline.hpp.
#pragma once

#include <obsidian/obsidian.hpp>

namespace paper {

using namespace obsidian;

inline EWord32 plus(const EWord32& a, const EWord32& b) { return a + b; }

// sumUp' arr: halve and add, forcing each stage, until one element is left.
inline EWord32 sumUp(const Program<Block>& p, SPull<EWord32> arr) {
  while (len(arr) > 1) {
    auto [a1, a2] = halve(arr);
    arr = forcePull(p, zipWith(plus, a1, a2));
  }
  return arr[0u];
}

inline Kernel sumUpKernel() {
  return capture("sumUp", 4, [](DPull<EWord32> in) {
    return mapRed<EWord32>(
        8, [](const Program<Block>& p, const SPull<EWord32>& c) { return sumUp(p, c); }, in);
  });
}

// The paper's names for the library's.
using Variant = BlockReduceAlgorithm;
inline std::string variantName(Variant v) { return name(v); }

// mapRed with variant v: one partial result per `chunk` elements (the input length must be a
// multiple of chunk).
template <class T, class Op>
Kernel reduceKernel(Variant v, Op f, uint32_t chunk, uint32_t threads) {
  return tileReduceKernel<T>(v, f, chunk, threads);
}

inline Kernel red3Kernel(uint32_t chunk = 512, uint32_t threads = 256) {
  return reduceKernel<uint32_t>(Variant::Red3, plus, chunk, threads);
}

inline Kernel red5Kernel(uint32_t chunk = 4096, uint32_t threads = 512) {
  return reduceKernel<uint32_t>(Variant::Red5, plus, chunk, threads);
}

// The large reduction's kernel (Section 6.1): partial sums of chunks with red5'.
inline Kernel partialSums(uint32_t chunk = 4096, uint32_t threads = 256, uint32_t seq = 8) {
  return partialReduce<uint32_t>(plus, 0u, chunk, threads, seq);
}

}  // namespace paper
