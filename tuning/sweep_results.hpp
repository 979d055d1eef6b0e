// The results file, one JSON line per point (sweep_results.cpp): readResults, writeFile and
// checkWritable (sweep.hpp); here what a sweep resumes from it, and the file opened for
// appending, each point's line written whole as soon as the point is done.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "sweep_prune.hpp"

namespace tuning::detail {

// What a previous run left in the results file: the points not to run again (all but those
// that ended in an error, which may have been transient) and the best time of every group
// (for pruning).
struct Resumed {
  std::set<std::string> done;
  std::map<std::string, GroupBest> best;  // by family + group
};
Resumed resume(const std::string& path, const std::string& wantMode);

// The results file opened for appending after whatever is there, on a line of its own; its
// directory made.
std::ofstream openResults(const std::string& path);

// Appends a point's line, flushed: a sweep stopped at any moment leaves whole lines (and at
// most the one being written cut short). A failed write (a full disk) stops the sweep.
void appendLine(std::ofstream& out, const nlohmann::json& line, const std::string& path);

}  // namespace tuning::detail
