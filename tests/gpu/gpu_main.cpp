// The GPU tests' main: where no CUDA device can be used, it says so and exits with 77, which
// CTest reports as "Skipped" (SKIP_RETURN_CODE), never as a silent pass.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstring>
#include <iostream>
#include <obsidian/runtime.hpp>

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) {
    listing =
        listing || std::strncmp(argv[i], "--list", 6) == 0 || std::strncmp(argv[i], "-ltc", 4) == 0;
  }
  if (!listing && !obsidian::gpu::available()) {
    std::cout << "SKIPPED: no CUDA device (" << obsidian::gpu::unavailableReason() << ")\n";
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
