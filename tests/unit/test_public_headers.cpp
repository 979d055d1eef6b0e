// What the public headers bring into a user's translation unit: the whole front end and the
// runtime, but not the pass pipeline's types and not nlohmann/json (only report_json.hpp
// includes it). This file includes nothing else from the library, so it compiles only while
// that holds.
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>
#include <type_traits>

#ifdef INCLUDE_NLOHMANN_JSON_HPP_
#error "obsidian/obsidian.hpp must not include nlohmann/json (include obsidian/report_json.hpp)"
#endif

namespace {
// Complete types have a size; the pipeline's result is only declared in the public headers.
template <class T, class = void>
struct IsComplete : std::false_type {};
template <class T>
struct IsComplete<T, std::void_t<decltype(sizeof(T))>> : std::true_type {};
}  // namespace

TEST_CASE("public headers: the pipeline's types stay inside the library") {
  static_assert(!IsComplete<obsidian::LoweredKernel>::value,
                "LoweredKernel is internal (src/codegen/lower.hpp)");
  // The report is plain data a user reads without JSON.
  const obsidian::Kernel k = obsidian::capture(
      "headers", 32,
      [](obsidian::DPull<obsidian::EWord32> in) { return obsidian::push<obsidian::Grid>(in); });
  const obsidian::KernelReport r = k.report();
  CHECK(r.name == "headers");
  CHECK(r.params.size() == 3);
  CHECK(r.params[0].kind == "input");
  CHECK(r.params[1].kind == "length");
  CHECK(r.params[2].kind == "output");
  CHECK_FALSE(r.compiled.has_value());
}
