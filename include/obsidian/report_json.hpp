// A kernel report as JSON, for tools and scripts (the tuner's results, the examples' tables,
// export's side files). Including this header is what brings nlohmann/json in.
#pragma once

#include <nlohmann/json.hpp>

#include "obsidian/report.hpp"

namespace obsidian {

// Keys: name, threadsPerBlock, sharedBytes, gridBlocks, params, preconditions,
// postconditions, sharedArrays, localArrays, traffic [{array, type, loads, stores, atomics}],
// gridPasses, barriers {block, warp}, nvrtcOptions, timingsMs {pass: ms, compile once
// compiled}; registers, spillStoreBytes, spillLoadBytes and stackBytes (null until compiled)
// and arch (once compiled).
nlohmann::json toJson(const KernelReport& r);

}  // namespace obsidian
