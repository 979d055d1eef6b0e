// The scan case study (paper Section 5.3): the names its driver uses. The scans themselves
// (sklansky, sklansky2, sklansky3, Kogge-Stone, each the paper's line for line; see README.md)
// are the library's block scans (obsidian/block/scan.hpp, named by BlockScanAlgorithm); the
// kernels the paper measures (one block per chunk, mapScan) are obsidian/device/tiled.hpp's,
// and the scan of any length from three kernels is obsidian/device/pipeline.hpp's.
#pragma once

#include <algorithm>
#include <obsidian/obsidian.hpp>

namespace paper {

using namespace obsidian;

using ScanVariant = BlockScanAlgorithm;
// The paper's four (the library adds the thread-sequential scan).
inline constexpr ScanVariant scanVariants[] = {ScanVariant::Sklansky, ScanVariant::Sklansky2,
                                               ScanVariant::Sklansky3, ScanVariant::KoggeStone};

// Threads per block that give every thread its own element(s) of a 2^log chunk, at most 1024.
inline uint32_t naturalThreads(ScanVariant v, uint32_t log) {
  return std::max(1u, std::min(1024u, (1u << log) / elementsPerThread(v)));
}

}  // namespace paper
