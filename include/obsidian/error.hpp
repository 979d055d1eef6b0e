/// Errors: user mistakes throw obsidian::Error (message names the construct and the rule);
/// broken internal invariants throw obsidian::InternalError through OBSIDIAN_ASSERT.
/// @file
#pragma once

#include <stdexcept>
#include <string>

namespace obsidian {

/// A mistake in how the library was used: bad lengths, bad arguments, limits exceeded.
class Error : public std::runtime_error {
 public:
  /// An Error whose what() is `message`.
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// NVRTC rejected generated or user-written CUDA; the message holds the log and numbered source.
class CompileError : public Error {
 public:
  /// A CompileError whose what() is `message` (the NVRTC log and the numbered source).
  explicit CompileError(const std::string& message) : Error(message) {}
};

/// A bug in obsidian itself: an invariant between passes does not hold.
class InternalError : public std::logic_error {
 public:
  /// An InternalError whose what() is `message`.
  explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

namespace detail {
[[noreturn]] void internalFailure(const char* condition, const char* file, int line,
                                  const std::string& message);
}  // namespace detail

}  // namespace obsidian

/// Checks an invariant of obsidian itself: when `cond` is false, throws InternalError with the
/// condition, the file and line, and `msg`.
#define OBSIDIAN_ASSERT(cond, msg)                                                    \
  do {                                                                                \
    if (!(cond)) ::obsidian::detail::internalFailure(#cond, __FILE__, __LINE__, msg); \
  } while (0)
