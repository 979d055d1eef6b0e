// Golden tests: the CUDA generated for the paper's programs is pinned in tests/golden/*.cu.
// Set OBSIDIAN_UPDATE_GOLDEN=1 to rewrite the files after an intended change (then review the
// diff). Every kernel here also compiles with NVRTC for sm_90.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include "../../examples/increment/increment.hpp"
#include "../../examples/reduce/reduce.hpp"
#include "../support.hpp"

namespace {

using obsidian::Kernel;

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using ::testing::count;

void checkGolden(const Kernel& k) {
  const std::string path = std::string(OBSIDIAN_GOLDEN_DIR) + "/" + k.name() + ".cu";
  const char* update = std::getenv("OBSIDIAN_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path) << k.cuda();
  }
  const std::string expected = readFile(path);
  INFO("golden file: " << path << " (OBSIDIAN_UPDATE_GOLDEN=1 rewrites it)");
  CHECK(k.cuda() == expected);
  // The printed code is what NVRTC accepts.
  const obsidian::CompileResult& r = k.compile();
  CHECK(r.registers > 0);
  CHECK(r.cubin.size() > 0);
}

}  // namespace

TEST_CASE("golden: increment (paper Figure 12)") {
  const Kernel k = paper::incrementKernel();
  checkGolden(k);
  CHECK(k.sharedBytes() == 0);
  // The element index is computed once (the share pass) and indexes both arrays.
  CHECK(count(k.cuda(), "const uint32_t t0 = bid0 * 256u + threadIdx.x;") == 1);
  CHECK(count(k.cuda(), "out0[t0] = in0[t0] + 1u;") == 1);
}

TEST_CASE("golden: increment2 (paper Figure 13), a sequential loop inside each thread") {
  const Kernel k = paper::increment2Kernel();
  checkGolden(k);
  CHECK(count(k.cuda(), "for (uint32_t s0 = 0u; s0 < 32u; ++s0)") == 1);
}

TEST_CASE("golden: sumUp' in three forced stages") {
  const Kernel k = paper::sumUpKernel();
  checkGolden(k);
  CHECK(k.report().sharedArrays.size() == 3);
  CHECK(count(k.cuda(), "__syncthreads();") == 4);  // three stages + reuse across blocks
}

TEST_CASE("golden: agnostic at Block level has a barrier between stages") {
  const Kernel k = paper::agnosticBlockKernel();
  checkGolden(k);
  CHECK(count(k.cuda(), "__syncthreads();") >= 3);
  CHECK(count(k.cuda(), "__syncwarp()") == 0);
}

TEST_CASE("golden: agnostic at Warp level uses __syncwarp, never __syncthreads") {
  const Kernel k = paper::agnosticWarpKernel();
  checkGolden(k);
  CHECK(count(k.cuda(), "__syncwarp();") >= 3);
  CHECK(count(k.cuda(), "__syncthreads") == 0);
  CHECK(k.report().barriers.block == 0);
}

TEST_CASE("golden: red3 reduction reuses shared memory between stages") {
  const Kernel k = paper::red3Kernel();
  checkGolden(k);
  // 512 elements: the first stage writes 256 words; ping-pong keeps the peak at 256 + 128.
  CHECK(k.sharedBytes() == (256 + 128) * 4);
}

TEST_CASE("golden: red5 (coalesce + seqReduce, then red3)") {
  const Kernel k = paper::red5Kernel();
  checkGolden(k);
  CHECK(count(k.cuda(), "for (uint32_t s0 = 0u; s0 < 7u; ++s0)") == 1);
}
