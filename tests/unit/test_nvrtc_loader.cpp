// Loading NVRTC with dlopen (src/runtime/nvrtc_loader.hpp): where it is looked for, what the
// error says when it is not found or not usable, and that the process's NVRTC is the one
// found. (tests/nvrtc_missing/ runs a whole program without NVRTC.)
#include <doctest/doctest.h>

#include <obsidian/error.hpp>
#include <obsidian/nvrtc.hpp>

#include "runtime/nvrtc_loader.hpp"

namespace nvrtc = obsidian::nvrtc;

TEST_CASE("nvrtc loader: the toolkit's soname, then libnvrtc.so, then the toolkit's directory") {
  const std::vector<std::string> c = nvrtc::candidates(nullptr);
  REQUIRE(c.size() == 3);
  CHECK(c[0].rfind("libnvrtc.so.", 0) == 0);
  CHECK(c[0].size() > std::string("libnvrtc.so.").size());
  CHECK(c[1] == "libnvrtc.so");
  CHECK(c[2].front() == '/');
  CHECK(c[2].size() > c[0].size());
  CHECK(c[2].compare(c[2].size() - c[0].size(), c[0].size(), c[0]) == 0);
  CHECK(nvrtc::candidates("") == c);  // an empty variable is unset
  // The variable names the library alone: a wrong path is reported, not silently replaced.
  CHECK(nvrtc::candidates("/opt/x/libnvrtc.so.13") ==
        std::vector<std::string>{"/opt/x/libnvrtc.so.13"});
}

TEST_CASE("nvrtc loader: absent, it names what it tried and how to fix it") {
  CHECK_THROWS_WITH_AS(
      nvrtc::load({"/nonexistent/libnvrtc.so.13", "/nonexistent/libnvrtc.so"}),
      "NVRTC not found: tried /nonexistent/libnvrtc.so.13, /nonexistent/libnvrtc.so; install "
      "the CUDA toolkit's NVRTC or set OBSIDIAN_NVRTC_LIBRARY to its path",
      obsidian::Error);
  CHECK_THROWS_WITH_AS(nvrtc::load({}), doctest::Contains("NVRTC not found: tried ;"),
                       obsidian::Error);
}

TEST_CASE("nvrtc loader: a library that is not NVRTC is reported with what it lacks") {
  // libc loads (it is in every process) but has no NVRTC function; then NVRTC proper is found.
  const nvrtc::Api api = nvrtc::load({"libc.so.6", "libnvrtc.so"});
  CHECK(static_cast<bool>(api.nvrtcCompileProgram));
  CHECK_THROWS_WITH_AS(nvrtc::load({"libc.so.6"}),
                       "NVRTC not found: tried libc.so.6 (lacks nvrtcVersion); install the CUDA "
                       "toolkit's NVRTC or set OBSIDIAN_NVRTC_LIBRARY to its path",
                       obsidian::Error);
}

TEST_CASE("nvrtc loader: the process's NVRTC is found and has every function") {
  const nvrtc::Api& api = nvrtc::api();
#define OBSIDIAN_NVRTC_FUNCTION(name) CHECK_MESSAGE(static_cast<bool>(api.name), #name);
#include "runtime/nvrtc_functions.inc"
#undef OBSIDIAN_NVRTC_FUNCTION
  int major = 0, minor = 0;
  REQUIRE(api.nvrtcVersion(&major, &minor) == NVRTC_SUCCESS);
  CHECK(obsidian::nvrtcVersion() == major * 1000 + minor * 10);
  // The loaded library is the toolkit's major version (the first candidate), here where it is
  // installed.
  CHECK(nvrtc::candidates(nullptr)[0] == "libnvrtc.so." + std::to_string(major));
}
