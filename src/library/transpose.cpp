// The parts of the device transpose (include/obsidian/device/transpose.hpp) that need no
// template: the checks of a policy and of a matrix's shape.
#include "obsidian/device/transpose.hpp"

namespace obsidian::detail {

void checkTransposePolicy(const TransposePolicy& p) {
  if (p.tile < 8 || p.tile > 128 || (p.tile & (p.tile - 1)) != 0) {
    throw Error("TransposePolicy: the tile's side must be a power of two from 8 to 128; got " +
                std::to_string(p.tile));
  }
  if (p.threads == 0 || p.threads % 32 != 0 || p.threads > 1024 ||
      (p.tile * p.tile) % p.threads != 0) {
    throw Error(
        "TransposePolicy: threads must be a multiple of 32 up to 1024 that divides tile "
        "x tile (" +
        std::to_string(p.tile * p.tile) + "); got " + std::to_string(p.threads));
  }
}

void checkTransposeShape(uint64_t rows, uint64_t cols, size_t in, size_t out) {
  const uint64_t n = rows * cols;  // both below 2^32: no overflow in 64 bits
  if (n > UINT32_MAX) {
    throw Error("transpose: a " + std::to_string(rows) + " x " + std::to_string(cols) +
                " matrix has " + std::to_string(n) + " elements; at most 2^32 - 1");
  }
  if (in != n) {
    throw Error("transpose: the input holds " + std::to_string(in) + " elements; a " +
                std::to_string(rows) + " x " + std::to_string(cols) + " matrix has " +
                std::to_string(n));
  }
  if (out != n) {
    throw Error("transpose: the output holds " + std::to_string(out) + " elements; the " +
                std::to_string(cols) + " x " + std::to_string(rows) + " transpose has " +
                std::to_string(n));
  }
}

}  // namespace obsidian::detail
