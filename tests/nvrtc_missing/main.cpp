// A program built with obsidian on a machine without NVRTC (OBSIDIAN_NVRTC_LIBRARY names a
// file that does not exist; CTest test nvrtc.missing): it starts (NVRTC is not linked, so not
// mapped at start), generates CUDA and simulates without NVRTC, and every compile throws an
// Error naming what was looked for and how to fix it. Exit code 0 only if all of that holds.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <obsidian/obsidian.hpp>
#include <obsidian/sim.hpp>
#include <sstream>

using namespace obsidian;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::cout << (ok ? "ok: " : "FAILED: ") << what << "\n";
  if (!ok) ++failures;
}

// Does the process map a file whose name contains `name`?
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find(name) != std::string::npos;
}

// The message of the Error that f throws ("" if it throws none).
template <class F>
std::string errorOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

int main() {
  const char* path = std::getenv("OBSIDIAN_NVRTC_LIBRARY");
  if (path == nullptr || *path == '\0') {
    std::cout << "FAILED: run with OBSIDIAN_NVRTC_LIBRARY naming a missing file\n";
    return 1;
  }
  expect(!mapped("libnvrtc"), "NVRTC is not loaded at start");

  const Kernel k = capture("inc", 256, [](DPull<EWord32> in) {
    return push<Grid>(fmap([](EWord32 x) { return x + 1u; }, in));
  });
  expect(k.cuda().find("__global__") != std::string::npos, "CUDA is generated without NVRTC");
  std::vector<uint32_t> in(1000, 41), out(1000);
  simulate(k, {in, out});
  expect(out == std::vector<uint32_t>(1000, 42), "the simulator runs without NVRTC");

  const std::string expected = std::string("NVRTC not found: tried ") + path +
                               "; install the CUDA toolkit's NVRTC or set "
                               "OBSIDIAN_NVRTC_LIBRARY to its path";
  const std::string compileError = errorOf([&] { compileCuda(k.cuda(), "inc"); });
  std::cout << "compileCuda: " << compileError << "\n";
  expect(compileError == expected, "compileCuda throws Error naming what was tried and the fix");
  expect(errorOf([] { nvrtcVersion(); }) == expected, "so does nvrtcVersion, every time");
  expect(!mapped("libnvrtc"), "nothing else loaded NVRTC");
  return failures == 0 ? 0 : 1;
}
