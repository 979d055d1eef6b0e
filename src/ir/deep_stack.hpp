// Deep expressions: the compiler's walks over expressions (printers, rewrites, the simulator's
// compiler and evaluator) recurse once per level, and an expression may be kMaxExpDepth deep
// (a fold over a long static array), far more than a thread's usual stack holds. Entry points
// that walk a kernel (lowering, simulate, export, report, launch checks) run through
// withStackFor, which gives the walk a stack sized for the depth it will meet.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <type_traits>

namespace obsidian::ir {

// Runs f on the calling thread when `depth` is small; otherwise on a helper thread with a stack
// large enough for `depth` levels of any walk, waiting for it. Exceptions propagate.
void runWithStackFor(uint32_t depth, const std::function<void()>& f);

template <class F>
auto withStackFor(uint32_t depth, F&& f) -> std::invoke_result_t<F> {
  using R = std::invoke_result_t<F>;
  if constexpr (std::is_void_v<R>) {
    runWithStackFor(depth, f);
  } else {
    std::optional<R> result;
    runWithStackFor(depth, [&] { result.emplace(f()); });
    return std::move(*result);
  }
}

}  // namespace obsidian::ir
