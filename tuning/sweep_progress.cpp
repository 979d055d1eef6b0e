// The sweep's progress bar (see sweep_progress.hpp).
#include "sweep_progress.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace tuning::detail {

namespace {

std::string clockText(double seconds) {
  const long s = std::lround(std::max(seconds, 0.0));
  std::ostringstream o;
  o << s / 60 << ":" << std::setw(2) << std::setfill('0') << s % 60;
  return o.str();
}

}  // namespace

void Progress::update(size_t done, const SweepSummary& s) {
  if (!on_) return;
  const double elapsed = secondsSince(start_);
  const int width = 30;
  const int filled = total_ ? static_cast<int>(width * done / total_) : width;
  std::ostringstream line;
  line << "\r[" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << done
       << "/" << total_ << "  ok " << s.ok << " wrong " << s.wrong << " skipped " << s.skipped
       << " pruned " << s.pruned << "  " << clockText(elapsed);
  if (done > 0 && done < total_) {
    line << "  ETA " << clockText(elapsed / static_cast<double>(done) * (total_ - done));
  }
  line << "   ";
  std::cerr << line.str() << std::flush;
}

void Progress::finish() {
  if (on_) std::cerr << "\n";
}

void Progress::say(const std::string& text) {
  if (on_) std::cerr << "\r" << std::string(100, ' ') << "\r";
  std::cerr << text << "\n";
}

}  // namespace tuning::detail
