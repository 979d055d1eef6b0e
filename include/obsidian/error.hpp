// Errors: user mistakes throw obsidian::Error (message names the construct and the rule);
// broken internal invariants throw obsidian::InternalError through OBSIDIAN_ASSERT.
#pragma once

#include <stdexcept>
#include <string>

namespace obsidian {

// A mistake in how the library was used: bad lengths, bad arguments, limits exceeded.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// NVRTC rejected generated or user-written CUDA; the message holds the log and numbered source.
class CompileError : public Error {
 public:
  explicit CompileError(const std::string& message) : Error(message) {}
};

// A bug in obsidian itself: an invariant between passes does not hold.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

namespace detail {
[[noreturn]] void internalFailure(const char* condition, const char* file, int line,
                                  const std::string& message);
}  // namespace detail

}  // namespace obsidian

#define OBSIDIAN_ASSERT(cond, msg)                                                    \
  do {                                                                                \
    if (!(cond)) ::obsidian::detail::internalFailure(#cond, __FILE__, __LINE__, msg); \
  } while (0)
