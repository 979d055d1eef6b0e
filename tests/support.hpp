// What several test files share: random inputs, a host scan, finding and counting in generated
// text, the
// message of an expected Error, and what a simulated run moved.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <obsidian/error.hpp>
#include <obsidian/sim.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace testing {

// The inclusive (or exclusive: identity first) f-scan of `in`, in order, on the host.
template <class X, class F>
std::vector<X> hostScan(const std::vector<X>& in, F f, bool inclusive, X identity) {
  std::vector<X> out(in.size());
  X acc = identity;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!inclusive) out[i] = acc;
    acc = f(acc, in[i]);
    if (inclusive) out[i] = acc;
  }
  return out;
}

// Whether `text` (generated code, a report) contains `what`.
inline bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// The lines of `text` (PTX, say) that contain `what` ("ld.global", "st.global").
inline std::vector<std::string> linesWith(const std::string& text, const std::string& what) {
  std::vector<std::string> found;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (has(line, what)) found.push_back(line);
  }
  return found;
}

// n random words below `below` (0: over the whole range), reproducible from `seed`.
inline std::vector<uint32_t> randomWords(size_t n, uint32_t seed, uint32_t below = 0) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) x = below ? rng() % below : rng();
  return v;
}

// How many times `what` occurs in `text` (overlapping occurrences counted).
inline size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The message of the obsidian::Error that f throws, or "no error".
inline std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const obsidian::Error& e) {
    return e.what();
  }
  return "no error";
}

// The global traffic of `array` in a simulated run (SimStats::traffic).
inline const obsidian::SimTraffic& moved(const obsidian::SimStats& s, const std::string& array) {
  for (const obsidian::SimTraffic& t : s.traffic) {
    if (t.array == array) return t;
  }
  FAIL("no traffic for " << array);
  return s.traffic.front();
}

}  // namespace testing
