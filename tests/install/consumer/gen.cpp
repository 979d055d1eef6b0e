// Writes inc.cuh into the directory it is given (run by obsidian_add_kernels at build time).
#include <obsidian/obsidian.hpp>
using namespace obsidian;
int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const Kernel k = capture("inc", 256, [](DPull<EWord32> in) {
    return push<Grid>(fmap([](EWord32 x) { return x + 1u; }, in));
  });
  writeHeader(std::filesystem::path(argv[1]) / "inc.cuh", {k}, ExportOptions{"consumer", ""});
  return 0;
}
