/// A kernel report as JSON, for tools and scripts (the tuner's results, the examples' tables,
/// export's side files). Including this header is what brings nlohmann/json in.
/// @file
#pragma once

#include <nlohmann/json.hpp>

#include "obsidian/profile.hpp"
#include "obsidian/report.hpp"

namespace obsidian {

namespace detail {
// Text as valid UTF-8 (what JSON holds): bytes that begin no well-formed sequence (Latin-1 in
// a require message, say) become U+FFFD. toJson passes the user's free text through it.
std::string utf8Text(const std::string& s);
std::vector<std::string> utf8Text(const std::vector<std::string>& v);
}  // namespace detail

/// Keys: name, threadsPerBlock, sharedBytes, gridBlocks, params, preconditions,
/// postconditions, sharedArrays, localArrays, traffic [{array, type, loads, stores, atomics}],
/// gridPasses, barriers {block, warp}, nvrtcOptions, timingsMs {pass: ms, compile once
/// compiled}; registers, spillStoreBytes, spillLoadBytes and stackBytes (null until compiled)
/// and arch (once compiled).
nlohmann::json toJson(const KernelReport& r);

/// A simulated run's counters (SimOptions::profile): blocks, threadsPerBlock, sharedBytes, total
/// {counter: count, ..., and the ratios globalLoadEfficiency, globalStoreEfficiency,
/// sharedLoadWavefrontsPerRequest, sharedStoreWavefrontsPerRequest, simtEfficiency},
/// statements [{statement, cudaLine, text, loops, unrolled, counters {non-zero counters}}].
nlohmann::json toJson(const SimProfile& p);
/// The cost model's prediction: microseconds, bound, each part (dramUs, l2Us, l1Us, issueUs,
/// sharedUs, blocksUs, latencyUs) and the latency term's (waves, residentWarps, loadRounds,
/// barriers, instructions).
nlohmann::json toJson(const CostEstimate& e);
/// The report with the counters of a simulated run and their predicted time beside it: keys
/// "profile" and "predicted" added to toJson(r).
nlohmann::json toJson(const KernelReport& r, const SimProfile& p, const DeviceModel& m = {});

}  // namespace obsidian
