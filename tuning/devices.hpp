// obsidian-tune --devices: a sweep spread over the GPUs of one host. One worker process per
// device (CUDA_VISIBLE_DEVICES names it: a context and a timing thread of its own, nothing
// shared with the others but the disk caches), each running a contiguous shard of the points
// (as --shard does: points that share inputs stay together) into its own results file, with
// the host's cores divided between their compile threads; the files are then merged into the
// output (as --merge does), so the results are those of a one-device sweep, line for line.
#pragma once

#include <string>
#include <vector>

#include "sweep.hpp"

namespace tuning {

// The devices of `spec`: "all" (every device of the host), or ordinals "0,1,3"; throws
// obsidian::Error for a malformed list, a repeated ordinal, no device at all (`whyNone` says
// why) or one the host does not have (`available`: its device count).
std::vector<int> parseDevices(const std::string& spec, int available,
                              const std::string& whyNone = "");

// Sweeps `spacePath` with options `o` on `devices` (one worker each, running `tool` with the
// options a worker needs), merges the workers' files into o.output and prints the summary.
// Returns what a sweep returns: the summary of all points (each device's times added up, the
// wall time the whole run's).
SweepSummary runOnDevices(const std::string& tool, const std::string& spacePath,
                          const SweepOptions& o, const std::vector<int>& devices,
                          const std::vector<Point>& points);

}  // namespace tuning
