// Checking a kernel's postconditions (ensure) after it ran, the same way wherever it ran: the
// simulator and checked GPU launches run each check kernel (Kernel::postconditions) on the
// kernel's arguments and report the first failing element with one message.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "obsidian/arguments.hpp"
#include "obsidian/kernel.hpp"

namespace obsidian {

// Runs kernel k's postcondition checks after a run of k on `args`; throws Error for the first
// that fails, naming `who` ("simulate(kernel k)"), the contract and the element. `run(check)`
// runs a check kernel on args and a one-element result array holding 0xffffffff, and returns
// what the check left there: the first failing index, or 0xffffffff; `element(array, index)`
// prints one element of an array argument.
void checkPostconditions(
    const Kernel& k, const std::vector<KernelArg>& args, const std::string& who,
    const std::function<uint32_t(const Kernel& check)>& run,
    const std::function<std::string(const KernelArg& array, uint32_t index)>& element);

// One element of a host array argument, printed ("-3.5", "17", "true").
std::string hostElement(const KernelArg& array, uint32_t index);

// A scalar of type t held in `bytes`, printed.
std::string formatScalar(ScalarType t, const void* bytes);

}  // namespace obsidian
