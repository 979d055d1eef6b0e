// NaN bits (issue 40): the simulator keeps every f32 and f64 bit pattern through loads,
// stores, selects, bit casts and scalar arguments (signalling NaNs included), computes NaN
// results as the GPU does (tests/nan_kernels.hpp spells the measured rules out), and literals
// print with their bits, so a folded NaN constant is the same NaN on the GPU.
#include <doctest/doctest.h>

#include <obsidian/sim.hpp>
#include <sstream>

#include "../nan_kernels.hpp"
#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::testing;

namespace {
template <class B>
std::string firstDifference(const std::vector<B>& got, const std::vector<B>& want, uint32_t ops) {
  if (got.size() != want.size()) return "sizes differ";
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      std::ostringstream s;
      s << "pair " << i / ops << ", op " << i % ops << ": got 0x" << std::hex << got[i]
        << ", want 0x" << want[i];
      return s.str();
    }
  }
  return "";
}
}  // namespace

TEST_CASE("nan bits: f32 patterns through the simulator, bit for bit as the GPU") {
  std::vector<uint32_t> a, b;
  allPairs(f32Patterns(), a, b);
  const std::vector<float> x = floatsOf<float>(a), y = floatsOf<float>(b);
  const uint32_t s = 0x7fa00005u;  // a signalling NaN as the scalar argument
  std::vector<uint32_t> out(a.size() * kF32NanOps);
  simulate(f32NanKernel(), {x, y, std::bit_cast<float>(s), out});
  CHECK(firstDifference(out, f32NanReference(a, b, s), kF32NanOps) == "");
}

TEST_CASE("nan bits: f64 patterns through the simulator, bit for bit as the GPU") {
  std::vector<uint64_t> a, b;
  allPairs(f64Patterns(), a, b);
  const std::vector<double> x = floatsOf<double>(a), y = floatsOf<double>(b);
  const uint64_t s = 0xfff4000000000007ull;
  std::vector<uint64_t> out(a.size() * kF64NanOps);
  simulate(f64NanKernel(), {x, y, std::bit_cast<double>(s), out});
  CHECK(firstDifference(out, f64NanReference(a, b, s), kF64NanOps) == "");
}

TEST_CASE("nan bits: a NaN constant keeps its bits when folded and printed") {
  // bitcast of a literal folds to a literal, NaN * 1.0f folds as the GPU computes it, and the
  // printed CUDA writes each NaN constant's exact bits.
  const Kernel k = nanConstantKernel();
  CHECK(k.cuda().find("__int_as_float(0x7fa00001)") != std::string::npos);
  CHECK(k.cuda().find("__int_as_float(0x7fffffff)") != std::string::npos);
  CHECK(k.cuda().find("__longlong_as_double(0xfff4000000000003ll)") != std::string::npos);
  std::vector<uint32_t> in = {0, 1, 2, 3, 4, 5}, out(6);
  simulate(k, {in, out});
  CHECK(out == nanConstantReference());
}

TEST_CASE(
    "nan bits: an f64 NaN constant whose low word is an f32 signalling NaN is built from "
    "its words") {
  // ptxas quieted such a word in an f64 immediate (fuzz/RESULTS.md, finding 5): the CUDA writes
  // the two words in inline PTX; other NaN constants stay literals.
  for (const bool share : {true, false}) {
    CAPTURE(share);
    const Kernel k = nanLowWordKernel(share);
    CHECK(k.cuda().find("asm(\"mov.b64 %0, {%1, %2};\" : \"=d\"(r) : \"r\"(0x7fa9e863u), "
                        "\"r\"(0x7ff00000u))") != std::string::npos);
    CHECK(k.cuda().find("\"r\"(0x7ff80000u)") != std::string::npos);  // the quieted one
    CHECK(k.cuda().find("0x7ff000007fa9e863") == std::string::npos);
    std::vector<uint32_t> in(8), out(8);
    for (uint32_t i = 0; i < 8; ++i) in[i] = i;
    simulate(k, {in, out});
    CHECK(out == nanLowWordReference());
  }
  CHECK(nanConstantKernel().cuda().find("__longlong_as_double(0xfff4000000000003ll)") !=
        std::string::npos);
}
