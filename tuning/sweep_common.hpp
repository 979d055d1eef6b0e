// The sweep's shared small helpers (sweep*.cpp): the clock its times are measured with, a number
// as text with fixed digits, and a mode's name as results lines write it.
#pragma once

#include <chrono>
#include <iomanip>
#include <sstream>
#include <string>

namespace tuning::detail {

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

inline std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

// A results line's "mode": "simulate" or "gpu".
inline std::string mode(bool simulate) { return simulate ? "simulate" : "gpu"; }

}  // namespace tuning::detail
