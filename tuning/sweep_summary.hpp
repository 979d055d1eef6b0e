// The sweep's summary (sweep_summary.cpp): printed at the end of a sweep and written as JSON
// where --summary says (toJson, sweep.hpp).
#pragma once

#include <string>

#include "sweep.hpp"

namespace tuning::detail {

// Prints the sweep's summary and writes it as JSON where options.summary says.
void summarize(const SweepSummary& s, const SweepOptions& options, const std::string& m,
               const std::string& device);

}  // namespace tuning::detail
