// The length checks the array library shares (declared in obsidian/library.hpp): a static
// length is checked now and throws Error; a dynamic one becomes a launch precondition of the
// capture running on this thread.
#include "obsidian/library.hpp"

namespace obsidian::detail {

void checkDivisible(const char* what, uint32_t n, uint32_t length) {
  const std::string call = std::string(what) + "(" + std::to_string(n) + ")";
  if (n == 0) throw Error(call + " needs a chunk size of at least 1");
  if (length % n != 0) {
    throw Error(call + " needs a length divisible by " + std::to_string(n) + "; got " +
                std::to_string(length));
  }
}

void checkDivisible(const char* what, uint32_t n, const EWord32& length) {
  const std::string call = std::string(what) + "(" + std::to_string(n) + ")";
  if (n == 0) throw Error(call + " needs a chunk size of at least 1");
  requireLength(length % n == 0u, call + " needs a length divisible by " + std::to_string(n));
}

namespace {
constexpr uint64_t kMaxLength = 0xffffffffu;
std::string tooLong(const char* what) {
  return std::string(what) +
         ": the result's length must be at most 4294967295 (lengths are "
         "32-bit)";
}
}  // namespace

uint32_t lenMul(const char* what, uint32_t a, uint32_t b) {
  const uint64_t r = uint64_t{a} * b;
  if (r > kMaxLength) {
    throw Error(tooLong(what) + "; got " + std::to_string(a) + " x " + std::to_string(b) + " = " +
                std::to_string(r));
  }
  return static_cast<uint32_t>(r);
}

EWord32 lenMul(const char* what, const EWord32& a, const EWord32& b) {
  // Known to fit from the lengths' shapes (e.g. (n / 512) * 512): no precondition.
  if (ir::upperBound(a.node()) * ir::upperBound(b.node()) > kMaxLength) {
    requireLength(cast<uint64_t>(a) * cast<uint64_t>(b) <= EWord64(kMaxLength), tooLong(what));
  }
  return a * b;
}

uint32_t lenAdd(const char* what, uint32_t a, uint32_t b) {
  const uint64_t r = uint64_t{a} + b;
  if (r > kMaxLength) {
    throw Error(tooLong(what) + "; got " + std::to_string(a) + " + " + std::to_string(b) + " = " +
                std::to_string(r));
  }
  return static_cast<uint32_t>(r);
}

EWord32 lenAdd(const char* what, const EWord32& a, const EWord32& b) {
  if (ir::upperBound(a.node()) + ir::upperBound(b.node()) > kMaxLength) {
    requireLength(cast<uint64_t>(a) + cast<uint64_t>(b) <= EWord64(kMaxLength), tooLong(what));
  }
  return a + b;
}

void checkAtMost(const char* what, uint32_t k, uint32_t length) {
  if (k > length) {
    throw Error(std::string(what) + "(" + std::to_string(k) + ") needs a length of at least " +
                std::to_string(k) + "; got " + std::to_string(length));
  }
}

void checkAtMost(const char* what, uint32_t k, const EWord32& length) {
  requireLength(EWord32(k) <= length, std::string(what) + "(" + std::to_string(k) +
                                          ") needs a length of at least " + std::to_string(k));
}

void checkNonEmpty(const char* what, uint32_t length) {
  if (length == 0) throw Error(std::string(what) + " needs a non-empty array; got length 0");
}

void checkNonEmpty(const char* what, const EWord32& length) {
  requireLength(length != 0u, std::string(what) + " needs a non-empty array");
}

}  // namespace obsidian::detail
