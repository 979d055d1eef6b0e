// GPU tests of packed pairs of 16-bit floats (label gpu): every operation of Half2 and
// BFloat162 on 2^20 random words (NaNs, infinities, zeros, subnormals, ties) bit for bit against
// the simulator and the independent reference (tests/pair_kernels.hpp); pairs through shared
// memory, vector loads and stores and shuffles; atomicAdd of pairs. What the device confirms here:
// the NaN rules of min.f16x2/bf16x2 (one NaN gives the other lane, two the canonical 0x7fff), -0
// below +0, the canonical NaN of add/sub/mul/fma.rn .f16x2/.bf16x2, subnormals kept (no flush).
#include <doctest/doctest.h>

#include <obsidian/obsidian.hpp>

#include "../half_kernels.hpp"
#include "../pair_kernels.hpp"

using namespace obsidian;
using namespace obsidian::testing;

namespace {

template <class P>
void opsOnGpu(uint32_t seed) {
  const size_t n = size_t{1} << 20;
  const std::vector<P> a = randomPairs<P>(n, seed), b = randomPairs<P>(n, seed + 1),
                       c = randomPairs<P>(n, seed + 2);
  const Kernel k = pairOpsKernel<P>();
  gpu::DeviceBuffer<P> da(a), db(b), dc(c);
  std::vector<gpu::DeviceBuffer<P>> outs;
  for (size_t i = 0; i < PairResults<P>::kOps; ++i) outs.emplace_back(n);
  gpu::launch(k, {da, db, dc, outs[0], outs[1], outs[2], outs[3], outs[4], outs[5], outs[6],
                  outs[7], outs[8], outs[9], outs[10]});
  PairResults<P> got;
  for (size_t i = 0; i < PairResults<P>::kOps; ++i) got.out[i] = outs[i].download();
  PairResults<P> sim(n);
  auto& o = sim.out;
  simulate(k, {a, b, c, o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], o[8], o[9], o[10]});
  const std::string vsSimulator = differingPairs(got, sim, a, b, c);
  CHECK_MESSAGE(vsSimulator.empty(), "GPU vs simulator: " << vsSimulator);
  const std::string vsReference = differingPairs(got, pairOpsReference(a, b, c), a, b, c);
  CHECK_MESSAGE(vsReference.empty(), "GPU vs reference: " << vsReference);
}

template <class P, uint32_t W>
void memoryOnGpu() {
  const size_t n = 64 * 1001;
  const std::vector<P> in = randomPairs<P>(n, 9);
  const Kernel k = pairMemoryKernel<P, W>();
  gpu::DeviceBuffer<P> din(in), dr(n), dc(n);
  gpu::launch(k, {din, dr, dc});
  std::vector<P> reversed(n), copy(n);
  simulate(k, {in, reversed, copy});
  CHECK(dr.download() == reversed);
  CHECK(dc.download() == copy);
  CHECK(copy == in);
}

template <class P>
void atomicsOnGpu() {
  // 60 blocks: 240 values on each of the 16 bins (integerPairs: exact in any order).
  const std::vector<P> values = integerPairs<P>(64 * 60, 5);
  const std::vector<P> bins = integerPairs<P>(16, 6);
  const Kernel k = pairAtomicKernel<P>();
  gpu::DeviceBuffer<P> dv(values), db(bins), dcopy(values.size());
  gpu::launch(k, {dv, db, dcopy});
  CHECK(db.download() == pairAtomicReference(values, bins));
  std::vector<P> simBins = bins, copy(values.size());
  simulate(k, {values, simBins, copy});
  CHECK(db.download() == simBins);
  // permuteInto with Sum (many threads on each of 16 words).
  gpu::DeviceBuffer<P> scattered(bins);
  gpu::launch(pairScatterAddKernel<P>(), {dv, scattered});
  CHECK(scattered.download() == pairSumReference(values, bins, values.size()));
}

}  // namespace

TEST_CASE("gpu: every operation of Half2 on 2^20 pairs, bit for bit") { opsOnGpu<Half2>(100); }

TEST_CASE("gpu: every operation of BFloat162 on 2^20 pairs, bit for bit") {
  opsOnGpu<BFloat162>(200);
}

TEST_CASE("gpu: pairs through shared memory, vectors<W> and unvectors<W>") {
  memoryOnGpu<Half2, 2>();
  memoryOnGpu<Half2, 4>();
  memoryOnGpu<BFloat162, 4>();
}

TEST_CASE("gpu: register arrays of pairs moved by shuffles, matchAny by their bits") {
  const std::vector<BFloat162> in = randomPairs<BFloat162>(64 * 512, 8);
  const Kernel k = smallShuffleKernel<BFloat162>();
  gpu::DeviceBuffer<BFloat162> din(in), dout(in.size());
  gpu::DeviceBuffer<uint32_t> dmatch(in.size());
  gpu::launch(k, {din, dout, dmatch});
  std::vector<BFloat162> out(in.size());
  std::vector<uint32_t> match(in.size());
  simulate(k, {in, out, match});
  CHECK(dout.download() == out);
  CHECK(dmatch.download() == match);
  CHECK(out == pairShuffleReference(in));
}

TEST_CASE("gpu: pairs in grid state, and device::inclusiveScan of BFloat162 with Max") {
  const std::vector<Half2> in = randomPairs<Half2>(64, 12);
  gpu::DeviceBuffer<Half2> din(in), dout(64);
  gpu::launch(pairGridStateKernel(), {din, dout});
  const std::vector<Half2> out = dout.download();
  for (size_t i = 0; i < 64; ++i) CHECK(out[i] == in[63 - i]);
  const std::vector<BFloat162> values = randomPairs<BFloat162>(1 << 20, 3);
  gpu::DeviceBuffer<BFloat162> dv(values), ds(values.size());
  device::inclusiveScan(dv, ds, Max{});
  CHECK(ds.download() == device::inclusiveScan(values, Max{}));
}

TEST_CASE("gpu: atomicAdd of Half2 and BFloat162, lane by lane") {
  atomicsOnGpu<Half2>();
  atomicsOnGpu<BFloat162>();
}
