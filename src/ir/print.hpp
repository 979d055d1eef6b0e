// Printing IR: expressions in CUDA C++ syntax (shared by the CUDA emitter and the IR dump),
// and the whole Program IR as readable pseudo-code for OBSIDIAN_DUMP_IR.
#pragma once

#include <string>
#include <vector>

#include "ir/pipeline_state.hpp"
#include "obsidian/ir.hpp"

namespace obsidian::ir {

// e as a CUDA expression; arrays are printed by their names in `arrays`. For people (messages,
// reports, the IR dump): conversions between f32 and f64 are plain casts.
std::string printExp(const ExpPtr& e, const std::vector<ArrayDecl>& arrays);
// e as the kernel's CUDA (emitCuda): conversions between f32 and f64 are inline PTX, which the
// CUDA compiler cannot fold or narrow (it would fold (float)(double)x to x and turn f64
// arithmetic on widened f32 values into f32 arithmetic, making other NaN bits than the
// simulator, which runs the conversions written).
std::string printCudaExp(const ExpPtr& e, const std::vector<ArrayDecl>& arrays);
// e as host C++ for an exported launcher, which evaluates preconditions, lengths and the grid
// before it launches: integer division and remainder (by anything but a literal; and by -1 for
// signed types), shifts by a variable amount and float -> integer conversions call the
// obsidian_host helpers of printHostArithmetic(), which compute what the GPU and the library
// compute without trapping; a zero divisor sets the bool named `zeroFlag`. `divides` (if
// given) tells whether a checked division was printed.
std::string printHostExp(const ExpPtr& e, const std::vector<ArrayDecl>& arrays,
                         const std::string& zeroFlag, bool* divides = nullptr);
// The obsidian_host helpers printHostExp calls (C++17; needs <limits> and <type_traits>).
std::string printHostArithmetic();
// e as the left (right: the right) operand of `op` in the kernel's CUDA (as printCudaExp), for
// text that prints the operator itself
// (`i < bound` in a loop header): parenthesized where C precedence needs it, so that a bound
// `c ? a : b` prints as `i < (c ? a : b)`, not `(i < c) ? a : b`.
std::string printOperand(BinOp op, bool right, const ExpPtr& e,
                         const std::vector<ArrayDecl>& arrays);
// The small floats' types and helpers that printed expressions call (obsidian_half ...,
// obsidian_to_float, obsidian_to_half, obsidian_odd, obsidian_bits, obsidian_make_half): own
// structs under NVRTC (no headers), CUDA's __half, __nv_bfloat16, __nv_fp8_e4m3 and
// __nv_fp8_e5m2 under nvcc (exported headers), converted by PTX either way. Guarded, for several
// exported headers in one translation unit.
std::string printSmallFloatPrelude();
// A literal of type t in CUDA syntax (e.g. 256u, 1.5f, 7ull).
std::string printLiteral(const ExpNode& e);

// The kernel's IR, one statement per line, nested bodies indented; with the shared bytes and
// each placed shared array's offset where `memory` (the memory map's result) has them.
std::string printIr(const KernelIR& k, const MemoryMap& memory = {});

}  // namespace obsidian::ir
