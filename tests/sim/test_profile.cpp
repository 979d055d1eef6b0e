// The simulator's performance counters (SimOptions::profile): global sectors and requests,
// shared-memory wavefronts and bank conflicts, divergence, barriers, shuffles and atomics,
// per statement with its line of CUDA, against counts worked out by hand and against Nsight
// Compute's on the H100 (bench/RESULTS.md, "Simulator counters"); the JSON and the cost model.
#include <doctest/doctest.h>

#include <map>
#include <obsidian/device/tiled.hpp>
#include <obsidian/matrix.hpp>
#include <obsidian/report_json.hpp>
#include <obsidian/sim.hpp>
#include <sstream>

#include "../../examples/increment/increment.hpp"
#include "../kernels.hpp"
#include "../matrix_kernels.hpp"
#include "../support.hpp"

using namespace obsidian;
using ::testing::errorOf;
using ::testing::randomWords;

namespace {

SimStats profiled(const Kernel& k, const std::vector<KernelArg>& args) {
  SimOptions o;
  o.profile = true;
  return simulate(k, args, o);
}

uint64_t count(const SimStats& s, Counter c) { return s.profile.total[c]; }

// The line `line` (from 1) of the kernel's CUDA.
std::string cudaLine(const Kernel& k, uint32_t line) {
  std::istringstream in(k.cuda());
  std::string text;
  for (uint32_t i = 0; i < line && std::getline(in, text); ++i) {
  }
  return text;
}

}  // namespace

TEST_CASE("profile: a coalesced map moves four sectors per warp request, each first touched once") {
  const Kernel k = paper::incrementKernel();  // 256 threads, one block per 256 elements
  const std::vector<uint32_t> in = randomWords(256 * 3, 1);
  std::vector<uint32_t> out(in.size());
  const SimStats s = profiled(k, {in, out});
  REQUIRE(s.profile.enabled);
  CHECK(s.profile.blocks == 3);
  CHECK(s.profile.threadsPerBlock == 256);
  const uint64_t warps = 3 * 8;
  CHECK(count(s, Counter::GlobalLoadRequests) == warps);
  CHECK(count(s, Counter::GlobalLoadSectors) == 4 * warps);
  CHECK(count(s, Counter::GlobalLoadIdealSectors) == 4 * warps);
  CHECK(count(s, Counter::GlobalStoreRequests) == warps);
  CHECK(count(s, Counter::GlobalStoreSectors) == 4 * warps);
  CHECK(count(s, Counter::GlobalFirstTouchSectors) == 8 * warps);
  CHECK(count(s, Counter::GlobalBlockFirstTouchSectors) == 8 * warps);
  CHECK(s.profile.total.globalLoadEfficiency() == 1.0);
  CHECK(count(s, Counter::DivergentBranches) == 0);
  CHECK(s.profile.total.simtEfficiency() == 1.0);
  for (uint32_t i = 0; i < in.size(); ++i) REQUIRE(out[i] == in[i] + 1);

  // The statement that loads names its line of the kernel's CUDA.
  size_t loading = 0;
  for (const SimStatementProfile& st : s.profile.statements) {
    if (st.counters[Counter::GlobalLoadRequests] == 0) continue;
    ++loading;
    CHECK(st.counters[Counter::GlobalLoadRequests] == warps);
    CHECK(cudaLine(k, st.cudaLine).find("in0[") != std::string::npos);
    CHECK(st.text.find("in0[") != std::string::npos);
  }
  CHECK(loading == 1);
}

TEST_CASE("profile: strided and broadcast reads, and the coalescing efficiency") {
  // Each block reads every 8th of its 2048 elements: a warp's 32 lanes touch 32 sectors.
  const Kernel strided = capture("strided", 256, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return push<Block>(mkPull(256u, [c](const EWord32& i) { return c[i * 8u]; }));
        },
        splitUp(2048, in)));
  });
  const std::vector<uint32_t> in = randomWords(2048 * 2, 2);
  std::vector<uint32_t> out(512);
  SimStats s = profiled(strided, {in, out});
  CHECK(count(s, Counter::GlobalLoadRequests) == 16);
  CHECK(count(s, Counter::GlobalLoadSectors) == 16 * 32);
  CHECK(count(s, Counter::GlobalLoadIdealSectors) == 16 * 4);
  CHECK(s.profile.total.globalLoadEfficiency() == doctest::Approx(0.125));
  CHECK(out[5] == in[40]);

  // Every lane of a block reads the block's first element: one sector per request.
  const Kernel broadcast = capture("broadcast", 64, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return push<Block>(mkPull(64u, [c](const EWord32& i) { return c[0u] + i; }));
        },
        splitUp(64, in)));
  });
  std::vector<uint32_t> out2(128);
  s = profiled(broadcast, {std::vector<uint32_t>(in.begin(), in.begin() + 128), out2});
  CHECK(count(s, Counter::GlobalLoadRequests) == 4);
  CHECK(count(s, Counter::GlobalLoadSectors) == 4);
  CHECK(count(s, Counter::GlobalLoadIdealSectors) == 4);
  CHECK(count(s, Counter::GlobalFirstTouchSectors) == 2 + 16);  // the two loads, the stores
}

TEST_CASE("profile: an unpadded shared tile read down its columns has 32-way bank conflicts") {
  const uint32_t side = 64;
  const std::vector<float> in = obsidian::testing::randomMatrix(side, side, 3);
  std::map<Padding, SimStats> runs;
  for (Padding pad : {Padding::None, Padding::Auto}) {
    std::vector<float> out(side * side);
    // The tile staged element by element (force2 of push2<Block>): one store per element.
    runs[pad] =
        profiled(obsidian::testing::transpose2d(256, 32, pad, true), {in, side, side, side, out});
    for (uint32_t r = 0; r < side; ++r)
      for (uint32_t c = 0; c < side; ++c) REQUIRE(out[c * side + r] == in[r * side + c]);
  }
  const SimStats& unpadded = runs[Padding::None];
  const SimStats& padded = runs[Padding::Auto];
  // Four tiles of 32 x 32: 128 warp requests each way.
  for (const SimStats* s : {&unpadded, &padded}) {
    CHECK(count(*s, Counter::SharedLoadRequests) == 128);
    CHECK(count(*s, Counter::SharedStoreRequests) == 128);
    CHECK(count(*s, Counter::SharedStoreWavefronts) == 128);
    CHECK(count(*s, Counter::GlobalLoadSectors) == 512);
    CHECK(count(*s, Counter::GlobalStoreSectors) == 512);
    CHECK(count(*s, Counter::Barriers) == 2 * 4 * 8);  // two per tile, per warp
  }
  CHECK(count(unpadded, Counter::SharedLoadWavefronts) == 128 * 32);
  CHECK(count(unpadded, Counter::SharedLoadConflicts) == 128 * 31);
  CHECK(unpadded.profile.total.sharedLoadWavefrontsPerRequest() == 32.0);
  CHECK(count(padded, Counter::SharedLoadWavefronts) == 128);
  CHECK(count(padded, Counter::SharedLoadConflicts) == 0);
}

// Nsight Compute's counts on the H100 for these kernels (bench/counters, n = 2^20, 256
// blocks of 4096 elements; bench/RESULTS.md), per block, where the hardware is deterministic.
TEST_CASE("profile: the paper's reductions count what Nsight Compute measured on the H100") {
  struct Measured {
    BlockReduceAlgorithm a;
    uint64_t loads, loadSectors, sharedLoads, sharedLoadWavefronts, sharedStores;
  };
  const Measured measured[] = {
      {BlockReduceAlgorithm::Red1, 128, 1024, 69, 132, 132},
      {BlockReduceAlgorithm::Red2, 128, 512, 136, 136, 132},
      {BlockReduceAlgorithm::Red3, 128, 512, 135, 135, 131},
      {BlockReduceAlgorithm::Red4, 128, 4096, 39, 39, 35},
      {BlockReduceAlgorithm::Red5, 128, 512, 39, 39, 35},
      {BlockReduceAlgorithm::Red6, 128, 512, 23, 23, 19},
      {BlockReduceAlgorithm::Red7, 128, 512, 15, 15, 11},
      {BlockReduceAlgorithm::WarpShuffle, 128, 512, 10, 10, 17},
  };
  const uint64_t blocks = 3;
  const std::vector<uint32_t> in = randomWords(4096 * blocks, 4, 1000);
  for (const Measured& m : measured) {
    CAPTURE(name(m.a));
    const Kernel k = tileReduceKernel<uint32_t>(m.a, Sum{}, 4096, 256);
    std::vector<uint32_t> out(blocks);
    const SimStats s = profiled(k, {in, out});
    CHECK(count(s, Counter::GlobalLoadRequests) == m.loads * blocks);
    CHECK(count(s, Counter::GlobalLoadSectors) == m.loadSectors * blocks);
    CHECK(count(s, Counter::GlobalStoreRequests) == blocks);
    CHECK(count(s, Counter::GlobalStoreSectors) == blocks);
    CHECK(count(s, Counter::SharedLoadRequests) == m.sharedLoads * blocks);
    CHECK(count(s, Counter::SharedLoadWavefronts) == m.sharedLoadWavefronts * blocks);
    CHECK(count(s, Counter::SharedStoreRequests) == m.sharedStores * blocks);
    CHECK(count(s, Counter::SharedStoreWavefronts) == m.sharedStores * blocks);
    // Each __syncthreads of the code runs once per block (no loop around it), in every warp.
    CHECK(count(s, Counter::Barriers) == uint64_t{k.report().barriers.block} * 8 * blocks);
  }
}

TEST_CASE("profile: the Sklansky scans' global traffic as Nsight Compute measured it") {
  const uint64_t blocks = 3;  // of 512 elements, 256 threads: 8 warps
  const std::vector<uint32_t> in = randomWords(512 * blocks, 5, 1000);
  // Sklansky's first level reads in[i] on both sides of its select, in[i / 2 * 2] on one: one
  // load each, 2 a warp (Nsight Compute: 65,536 for 2048 blocks). Before the index of the
  // second side simplified to i (and the two reads became one value), both counted 3.
  for (auto [a, loads] : {std::pair{BlockScanAlgorithm::Sklansky, 32u},
                          std::pair{BlockScanAlgorithm::Sklansky3, 16u}}) {
    CAPTURE(name(a));
    std::vector<uint32_t> out(in.size());
    const SimStats s = profiled(tileScanKernel<uint32_t>(a, Sum{}, 512, 256), {in, out});
    CHECK(count(s, Counter::GlobalLoadRequests) == loads * blocks);
    CHECK(count(s, Counter::GlobalLoadSectors) == 4 * loads * blocks);
    CHECK(count(s, Counter::GlobalStoreRequests) == 16 * blocks);
    CHECK(count(s, Counter::GlobalStoreSectors) == 64 * blocks);
  }
}

TEST_CASE("profile: divergent branches, shuffles and contended atomics") {
  // red5's tree: `if (threadIdx.x < 16)` and below split warp 0; 128, 64 and 32 do not.
  const std::vector<uint32_t> in = randomWords(4096 * 2, 6, 1000);
  std::vector<uint32_t> out(2);
  SimStats s =
      profiled(tileReduceKernel<uint32_t>(BlockReduceAlgorithm::Red5, Sum{}, 4096, 256), {in, out});
  CHECK(count(s, Counter::DivergentBranches) == 5 * 2);
  CHECK(s.profile.total.simtEfficiency() < 1.0);

  // warpShuffle: each of the 8 warps reduces its 32 values with 5 butterfly shuffles and
  // broadcasts lane 0's; then the first warp reduces the 8 sums with 3 and broadcasts.
  s = profiled(tileReduceKernel<uint32_t>(BlockReduceAlgorithm::WarpShuffle, Sum{}, 4096, 256),
               {in, out});
  CHECK(count(s, Counter::Shuffles) == 2 * (8 * 6 + 4));

  // One value everywhere: every lane of a shared atomic hits one bin (32 lanes, 1 address),
  // then 16 lanes add the 16 bins into 16 global ones.
  const Kernel h = obsidian::testing::histogramKernel("hist", 64, 128);
  const std::vector<uint32_t> same(128 * 2, 7);
  std::vector<uint32_t> bins(16, 0), copy(same.size());
  s = profiled(h, {same, bins, copy});
  CHECK(bins[7] == 256);
  CHECK(count(s, Counter::SharedAtomicRequests) == 2 * 2 * 2);  // 2 blocks x 2 rounds x 2 warps
  CHECK(count(s, Counter::GlobalAtomicRequests) == 2);
  CHECK(count(s, Counter::AtomicLanes) == 256 + 2 * 16);
  CHECK(count(s, Counter::AtomicAddresses) == 8 + 2 * 16);
}

TEST_CASE("profile: off, nothing is counted; the JSON; the cost model") {
  const Kernel k = paper::incrementKernel();
  const std::vector<uint32_t> in = randomWords(256 * 4, 7);
  std::vector<uint32_t> out(in.size());
  const SimStats off = simulate(k, {in, out});
  CHECK(!off.profile.enabled);
  CHECK(off.profile.statements.empty());
  CHECK(errorOf([&] { predictTime(off.profile); }) ==
        "predictTime: the run was not profiled (set SimOptions::profile)");
  CHECK(errorOf([&] { profileSummary(off.profile); }) ==
        "profileSummary: the run was not profiled (set SimOptions::profile)");

  const SimStats on = profiled(k, {in, out});
  CHECK(profileSummary(on.profile).find("predicted on H100 SXM") != std::string::npos);
  const nlohmann::json j = toJson(on.profile);
  CHECK(j["blocks"] == 4);
  CHECK(j["total"]["globalLoadRequests"] == 32);
  CHECK(j["total"]["globalLoadEfficiency"] == 1.0);
  CHECK(j["total"].size() == kCounterCount + 5);  // every counter, and the five ratios
  REQUIRE(!j["statements"].empty());
  CHECK(j["statements"][0].contains("cudaLine"));
  const nlohmann::json r = toJson(k.report(), on.profile);
  CHECK(r["name"] == "increment");
  CHECK(r["profile"]["total"]["globalStoreRequests"] == 32);
  CHECK(r["predicted"]["microseconds"].get<double>() > 0);

  // 2^20 times the work: the DRAM time of its bytes, and 4M blocks of 256 elements to start
  // (bound by block dispatch, as the H100's 256-element reductions are); without dispatch
  // costs, bound by DRAM.
  const CostEstimate small = predictTime(on.profile);
  const CostEstimate large = predictTime(on.profile, {}, 1 << 20);
  CHECK(large.dramUs == doctest::Approx(1024.0 * 4 * 2 * (1 << 20) / 2990e3));
  CHECK(large.bound == "blocks");
  CHECK(large.microseconds > small.microseconds);
  DeviceModel noDispatch;
  noDispatch.blockDispatchClocks = 0;
  CHECK(predictTime(on.profile, noDispatch, 1 << 20).bound == "dram");
  CHECK(errorOf([&] { predictTime(on.profile, {}, 0.5); }) ==
        "predictTime: scale must be at least 1; got 0.500000");
  // The device model is data: a slower DRAM predicts a proportionally slower copy.
  DeviceModel slow;
  slow.dramGBps /= 2;
  CHECK(predictTime(on.profile, slow, 1 << 20).dramUs == doctest::Approx(2 * large.dramUs));
}
