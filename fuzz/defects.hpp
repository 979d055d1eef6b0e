// The defect classes of issue 14, checked on every fuzzed program after its results are: the
// launch checks must refuse what would wrap or overlap, and captures must refuse what another
// capture made. (Deep expressions come from the generator itself: see generate().)
#pragma once

#include <obsidian/obsidian.hpp>
#include <random>
#include <string>
#include <vector>

#include "recipe.hpp"

namespace fuzz {

// Empty when k, the kernel of recipe r, passes every check; otherwise what slipped through:
// - aliased buffers: an output overlapping the input must be refused by simulate;
// - lengths near and past 2^32 (a DPull input of 2^32 - 1 elements and other sizes, or matrices
//   of rows x cols near and past 2^32 elements, bound to made-up device addresses, so nothing
//   runs): either the launch checks refuse the launch, or
//   every array length they derive equals the exact (unwrapped) value of its expression and
//   fits in 32 bits, and the grid stays within maxRealBlocks;
// - leaked captures: a value, length, array or mutable array of one capture used in another
//   must be refused with an Error that says so;
// - a divisor parameter of 0 (Recipe::divisor, issue 40): where a length or an unguarded
//   precondition divides by it, simulate must refuse the launch with the Error that the launch
//   checks (bindArguments, what a GPU launch runs) give, naming the kernel and saying that it
//   divides by zero (a precondition's own form: "<message> (<condition> fails with ...; it
//   divides by zero: s1 is 0)"); where a guard (||, a select) keeps the division from running,
//   the launch must run and give the reference's results;
// - a misaligned vector-store output (Recipe::store, forms that store vectors): the output
//   passed one element past an aligned address must be refused, the message naming the
//   vector's size in bytes.
// What the checks above have tried so far in this process (printed by the fuzzer).
struct DefectStats {
  uint64_t aliased = 0;      // aliased launches refused
  uint64_t hugeLengths = 0;  // binds near 2^32
  uint64_t leaks = 0;        // leaked values refused
  uint64_t zeroRefused = 0;  // launches with a divisor parameter of 0 refused
  uint64_t zeroRan = 0;      // launches with a divisor of 0 that a guard let run
  uint64_t misaligned = 0;   // launches with a misaligned vector-store output refused
};
const DefectStats& defectStats();

std::string checkDefectClasses(const Recipe& r, const obsidian::Kernel& k,
                               const std::vector<uint32_t>& in,
                               const std::vector<std::vector<uint32_t>>& expected,
                               std::mt19937_64& rng);

}  // namespace fuzz
