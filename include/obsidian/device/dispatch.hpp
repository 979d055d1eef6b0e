/// What the device-wide calls share (device/reduce.hpp, device/scan.hpp, ...): the kernels they
/// capture, kept by key so that a second call with the same operator type, element type, policy
/// and device reuses its Kernel (capture is the costly host part of a call; the runtime's kernel
/// cache then finds the compiled binary), and running one launch on the GPU or the simulator.
/// @file
#pragma once

#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "obsidian/device/policy.hpp"
#include "obsidian/kernel.hpp"
#include "obsidian/runtime.hpp"
#include "obsidian/sim.hpp"

namespace obsidian::device::detail {

// The kernel kept under `key`, made by `make` on first use (thread-safe). An empty key makes a
// new kernel every time: an operator with state cannot be told apart by its type.
Kernel memoKernel(const std::string& key, const std::function<Kernel()>& make);

// The part of a key that names operator Op: its type when it is stateless (an empty class:
// cub-style functors, lambdas without captures); "" otherwise.
template <class Op>
std::string operatorKey() {
  if constexpr (std::is_empty_v<Op>) {
    return typeid(Op).name();
  } else {
    return "";
  }
}

// An element type and a value in a key (the value bit-exact: two float identities that print
// alike are still two kernels).
template <class X>
std::string typeKey() {
  return std::string(cudaTypeName(scalarTypeOf<X>));
}
template <class X>
std::string valueKey(const X& v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(X));
  return std::to_string(bits);
}

// key(parts...): the parts joined, or "" when the operator's part is "".
std::string joinKey(const std::string& op, const std::vector<std::string>& parts);

// The default identity of Op for X (the obsidian/operators.hpp functors have one).
template <class Op, class X>
concept HasIdentity = requires {
  { Op::template identity<X>() } -> std::convertible_to<X>;
};

}  // namespace obsidian::device::detail
