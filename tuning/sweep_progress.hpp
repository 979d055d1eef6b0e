// The sweep's progress bar on stderr (sweep_progress.cpp): points done of all, their statuses,
// the time so far and the time left; messages on lines of their own.
#pragma once

#include <cstddef>
#include <string>

#include "sweep.hpp"
#include "sweep_common.hpp"

namespace tuning::detail {

// The bar of `total` points, drawn when `on` (messages are printed either way).
class Progress {
 public:
  Progress(bool on, size_t total) : on_(on), total_(total), start_(Clock::now()) {}
  void update(size_t done, const SweepSummary& s);
  void finish();
  // A message on its own line, the bar redrawn by the next update.
  void say(const std::string& text);

 private:
  bool on_;
  size_t total_;
  Clock::time_point start_;
};

}  // namespace tuning::detail
