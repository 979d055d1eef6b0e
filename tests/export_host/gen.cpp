// Writes the kernels whose exported launchers tests/export_host/checks.cu calls with
// arguments that make their launch-time arithmetic divide by zero, overflow or shift too far.
// Usage: obsidian-export-host-gen <output directory>
#include <iostream>
#include <obsidian/obsidian.hpp>

#include "../contract_kernels.hpp"
#include "../half_kernels.hpp"

using namespace obsidian;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " <output directory>\n";
    return 2;
  }
  try {
    // The first element of each group of g: an output of len(in) / g elements.
    const Kernel groups = obsidian::testing::groupsKernel();
    // A precondition that divides by a scalar, a signed division that overflows on the host
    // (INT_MIN / -1) and a shift by a scalar amount.
    const Kernel guarded =
        capture("guarded", 32,
                [](DPull<EWord32> in, EWord32 g, EInt32 s, EInt32 d, EWord32 sh) {
                  require(len(in) / g >= 1u, "at least one group");
                  require(s / d == 0, "s / d is 0");
                  require((len(in) << sh) != 0u, "the shifted length is not 0");
                  return push<Grid>(in);
                },
                {.names = {"in", "g", "s", "d", "sh"}});
    // Half precision and fp8 kernels: the header compiles with nvcc, where obsidian_half and
    // kin are CUDA's own __half, __nv_bfloat16, __nv_fp8_e4m3 and __nv_fp8_e5m2.
    using namespace obsidian::testing;
    writeHeader(std::filesystem::path(argv[1]) / "division.cuh",
                {groups, guarded, smallBinaryKernel<Half>(), scaledKernel<BFloat16>(),
                 smallUnaryKernel<BFloat16>(UnOp::Exp), convertKernel<Fp8E4M3, double>("d2e4"),
                 convertKernel<float, Fp8E5M2>("e52f"), smallVectorKernel<Half, 8>()},
                {"hostcheck", ""});
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
