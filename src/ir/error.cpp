// Out-of-line failure path for OBSIDIAN_ASSERT, kept out of the macro so asserts stay cheap.
#include "obsidian/error.hpp"

#include <string>

namespace obsidian::detail {

void internalFailure(const char* condition, const char* file, int line,
                     const std::string& message) {
  throw InternalError("obsidian internal error: " + message + " (" + condition + " at " + file +
                      ":" + std::to_string(line) + ")");
}

}  // namespace obsidian::detail
