// The device layer, reductions: a whole array to one value in one launch (reduceAll), and one
// value per segment of consecutive elements (segmentedReduce), each built on the block layer
// (block/reduce.hpp) and usable two ways: as Push<Grid> arrays inside a user's own kernel, and
// as ready calls (obsidian::device::reduce, ::segmentedReduce) that capture with the tuned
// policy, keep the kernel, and launch on the GPU or run on the simulator.
#pragma once

#include <boost/hana/for_each.hpp>
#include <boost/hana/transform.hpp>
#include <boost/hana/unpack.hpp>

#include "obsidian/atomic.hpp"
#include "obsidian/block/reduce.hpp"
#include "obsidian/capture.hpp"
#include "obsidian/device/dispatch.hpp"
#include "obsidian/operators.hpp"

namespace obsidian {

// ---------------------------------------------------------------- policies
// How reduceAll spreads its work (the grid itself is what the device holds at once).
struct ReducePolicy {
  uint32_t threads = 256;
  uint32_t unroll = 4;  // 16-byte vectors in flight per thread
  // Fewer blocks for short inputs, so that each thread folds at least this many vectors (fewer
  // partial results to publish and fold); 0 always runs every block.
  uint32_t minVectorsPerThread = 4;
  // Tiles of unroll x threads consecutive vectors, dealt to the blocks in turn (each block reads
  // contiguous memory), instead of a grid-strided sweep.
  bool tiles = true;
};
inline constexpr Tuned<ReducePolicy> kReducePolicies[] = {
    {0,
     {256, 4, 4, true},
     "(fallback)",
     "not measured: sm_90's shape with 256 threads, which every architecture since sm_50 holds "
     "at full occupancy"},
    {90,
     {512, 4, 4, true},
     "obsidian-tune tuning/spaces/device_reduce.json",
     "H100, 2026-11-23: 2^28 u32 346.8 us, f32 347.9 us; every policy of the 72 points within "
     "345.2..364.6 us, the best 345.3 (1024 x 2): 512 x 4 tiles is within 0.5% at both types "
     "and sizes (tuning/RESULTS.md, 'Device layer policies')"},
};
inline ReducePolicy reducePolicy(SmVersion sm = currentSm()) {
  return tunedFor(kReducePolicies, sm).policy;
}

// segmentedReduce: one block per segment.
struct SegmentedReducePolicy {
  uint32_t threads = 256;
};
inline constexpr Tuned<SegmentedReducePolicy> kSegmentedReducePolicies[] = {
    {0, {256}, "(fallback)", "not measured: as sm_90"},
    {90,
     {256},
     "obsidian-tune tuning/spaces/device_segmented_reduce.json",
     "H100, 2026-11-23: 4096-element segments of 2^28 u32 339.3 us (512 threads 338.8, 128 "
     "342.1, 1024 439.8), f32 340.4 us (tuning/RESULTS.md, 'Device layer policies')"},
};
inline SegmentedReducePolicy segmentedReducePolicy(SmVersion sm = currentSm()) {
  return tunedFor(kSegmentedReducePolicies, sm).policy;
}

// ---------------------------------------------------------------- vectors of any element type
namespace detail {
// Elements per 16-byte load: 4 of 4 bytes, 2 of 8; 1-byte types are read one by one.
template <class X>
inline constexpr uint32_t kVectorWidth = sizeof(X) == 4   ? 4
                                         : sizeof(X) == 8 ? 2
                                                          : 1;

// The array as whole vectors (kVectorWidth<X> elements each; the last len % width elements
// are not in it), and the f-fold of one vector.
template <class X, class Len>
auto asVectors(const Pull<Len, Exp<X>>& in) {
  if constexpr (kVectorWidth<X> == 1) {
    return in;
  } else {
    return vectors<kVectorWidth<X>>(in);
  }
}
template <class X, class Op, class V>
Exp<X> foldLanes(Op f, const V& v) {
  if constexpr (kVectorWidth<X> == 1) {
    return v;
  } else if constexpr (kVectorWidth<X> == 2) {
    return f(hana::at_c<0>(v), hana::at_c<1>(v));
  } else {
    return foldVector<X>(f, v);
  }
}

// The first n elements of a static-length array, as a dynamic-length one.
template <class T>
DPull<T> takeActive(const SPull<T>& arr, const EWord32& n) {
  return DPull<T>(n, [arr](const EWord32& i) { return arr[i]; });
}
}  // namespace detail

// ---------------------------------------------------------------- reduceAll
// reduceAll<X>(f, identity, in, policy, blocks): the f-fold of every element of `in` (identity
// for none) as a one-element Push<Grid>, in one launch. Up to `blocks` blocks (what the device
// holds at once: gpu::occupancyBlocks) each fold a share of 16-byte vectors, publish the result
// in grid state, and the last block to take a ticket (atomicInc) folds them; the last len %
// width elements are folded by the first threads. f must be associative and commutative with
// identity `identity`. Launches of one such kernel must not overlap (its grid state is one per
// kernel, as CUB's temporary storage).
// Cost: two block reductions (block/reduce.hpp) per block; blocks + 1 words of grid state.
template <class X, class Op>
Push<Grid, uint32_t, Exp<X>> reduceAll(Op f, X identity, const DPull<Exp<X>>& in,
                                       const ReducePolicy& policy, uint32_t blocks) {
  return transformReduceAll<X>(
      f, identity, [](const Exp<X>& x) { return x; }, policy, blocks, in);
}

namespace detail {
// Lane L of a vector of W elements (W == 1: the element itself).
template <uint32_t W, size_t L, class V>
auto lane(const V& v) {
  if constexpr (W == 1) {
    return v;
  } else {
    return hana::at_c<L>(v);
  }
}
// The f-fold (in foldLanes' order) of m applied to the lanes of one vector of each input.
template <class X, uint32_t W, class Op, class Map, class Vs, size_t... L>
Exp<X> foldMappedLanes(Op f, Map m, const Vs& vs, std::index_sequence<L...>) {
  const auto mapped = [&](auto l) {
    return hana::unpack(vs, [&](const auto&... v) { return Exp<X>(m(lane<W, l>(v)...)); });
  };
  if constexpr (W == 1) {
    return mapped(std::integral_constant<size_t, 0>());
  } else {
    return foldLanes<X>(f, hana::make_tuple(mapped(std::integral_constant<size_t, L>())...));
  }
}
}  // namespace detail

// transformReduceAll<X>(f, identity, m, policy, blocks, ins...): the f-fold of m(a[i], b[i],
// ...) over the elements i of the inputs ins = a, b, ... (one length: a launch precondition),
// computed as the elements are loaded: reduceAll of the mapped array without making it
// manifest (CUB's TransformReduce; Barracuda's fused RMSE, examples/stencils). Every input is
// read with 16-byte vectors, so each must be a direct read of a global array.
template <class X, class Op, class Map, class... In>
Push<Grid, uint32_t, Exp<X>> transformReduceAll(Op f, X identity, Map m, const ReducePolicy& policy,
                                                uint32_t blocks, const DPull<Exp<In>>&... ins) {
  static_assert(sizeof...(In) >= 1, "transformReduceAll needs at least one input");
  static_assert((std::is_same_v<In, X> && ...),
                "transformReduceAll: every input has the result's element type");
  static_assert(std::is_invocable_r_v<Exp<X>, Map, const Exp<In>&...>,
                "transformReduceAll: m takes one element of each input and returns an Exp<X>");
  if (blocks == 0) throw Error("reduceAll needs at least one block; got 0");
  if (policy.unroll == 0) throw Error("reduceAll needs an unroll of at least 1; got 0");
  const auto inputs = hana::make_tuple(ins...);
  const DPull<Exp<X>> in = hana::at_c<0>(inputs);
  hana::for_each(inputs, [&](const DPull<Exp<X>>& other) {
    if (!ir::equal(len(other).node(), len(in).node())) {
      require(len(other) == len(in), "transformReduceAll: the inputs have one length");
    }
  });
  constexpr uint32_t width = detail::kVectorWidth<X>;
  return Push<Grid, uint32_t, Exp<X>>(1, [=](const Program<Grid>& g, const Writer<Exp<X>>& out) {
    const uint32_t threads = g.context().threadsPerBlock();
    const auto vecs = detail::asVectors<X>(in);
    const auto allVecs =
        hana::transform(inputs, [](const DPull<Exp<X>>& a) { return detail::asVectors<X>(a); });
    // One element of the mapped array, read from every input.
    const auto element = [m, inputs](const EWord32& i) {
      return hana::unpack(inputs, [&](const auto&... a) { return Exp<X>(m(a[i]...)); });
    };
    // Blocks that run: all of them, or fewer for a short input (at least one).
    const EWord32 active =
        policy.minVectorsPerThread == 0
            ? EWord32(blocks)
            : min(EWord32(blocks), len(vecs) / (threads * policy.minVectorsPerThread) + 1u);
    g.distrPar(active, [&](const Program<Block>& p, const EWord32& bid) {
      const EWord32 tailStart = len(vecs) * width;
      const EWord32 tail = len(in) - tailStart;
      // The f-fold of the mapped lanes of vector j of every input.
      const auto vector = [f, m, allVecs](const EWord32& j) {
        const auto vs = hana::transform(allVecs, [&](const auto& v) { return v[j]; });
        constexpr uint32_t w = detail::kVectorWidth<X>;
        return detail::foldMappedLanes<X, w>(f, m, vs, std::make_index_sequence<w>());
      };
      const auto foldIn = [f, vector](const Exp<X>& acc, const EWord32& j) {
        return f(acc, vector(j));
      };
      const DPull<EWord32> indices(len(vecs), [](const EWord32& j) { return j; });
      // This thread's share of vectors, folded; then one of the len % width tail elements.
      const auto share = [=](const Program<Thread>& t, const EWord32& tid,
                             const Writer<Exp<X>>& w) {
        const EWord32 gid = bid * threads + tid;
        const auto withTail = [&](const Program<Thread>& u, const Exp<X>& acc, const EWord32&) {
          w(u, ifThenElse(gid < tail, f(acc, element(tailStart + gid)), acc), tid);
        };
        if (!policy.tiles) {  // vectors gid, gid + active * threads, ...
          seqFoldStrided(foldIn, Exp<X>(identity), indices, gid, active * threads, policy.unroll)(
              t, withTail);
          return;
        }
        // Tiles of unroll x threads vectors, tile k to block k % active: a block reads
        // contiguous memory (kinder to DRAM pages), `unroll` coalesced vectors per thread.
        const uint32_t tile = threads * policy.unroll;
        const EWord32 fullTiles = len(vecs) / tile;
        const auto inTile = [=](const EWord32& k) {
          Exp<X> acc = vector(k * tile + tid);
          for (uint32_t u = 1; u < policy.unroll; ++u)
            acc = f(acc, vector(k * tile + u * threads + tid));
          return acc;
        };
        seqFoldStrided(f, Exp<X>(identity), mkPull(fullTiles, inTile), bid, active)(
            t, [&](const Program<Thread>& u, const Exp<X>& acc, const EWord32& i) {
              // The last, partial tile belongs to block fullTiles % active.
              Exp<X> rest = acc;
              for (uint32_t r = 0; r < policy.unroll; ++r) {
                const EWord32 j = fullTiles * tile + r * threads + tid;
                rest = f(rest, ifThenElse(j < len(vecs) && bid == fullTiles % active, vector(j),
                                          Exp<X>(identity)));
              }
              withTail(u, rest, i);
            });
      };
      auto perThread = force(
          p, mkPush<Block, Exp<X>>(threads, [=](const Program<Block>& q, const Writer<Exp<X>>& w) {
            q.forAll(threads,
                     [&](const Program<Thread>& t, const EWord32& tid) { share(t, tid, w); });
          }));
      const Exp<X> blockResult = blockReduce(p, f, perThread);

      // Publish the block's result, then take a ticket: the last block sees every result.
      // (Grid state holds 4- and 8-byte words: narrower results are kept widened.)
      using Stored = std::conditional_t<(sizeof(X) < 4), uint32_t, X>;
      const SMutable<Stored> results = newGlobal<Stored>(p, blocks);
      const SMutable<uint32_t> ticket = newGlobal<uint32_t>(p, 1);
      auto isLast = force(
          p, mkPush<Block, EWord32>(1u, [=](const Program<Block>& q, const Writer<EWord32>& w) {
            q.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
              write(t, results, bid, cast<Stored>(blockResult));
              threadFence(t);
              // Wraps to 0 after the last block: the ticket is ready for the next launch.
              const EWord32 old = atomicInc(t, ticket, 0u, active - 1u);
              threadFence(t);
              w(t, cast<uint32_t>(old == active - 1u), 0u);
            });
          }));
      p.cond(isLast[0u] != 0u, [&](const Program<Block>& q) {
        auto folded = force(
            q,
            mkPush<Block, Exp<X>>(threads, [=](const Program<Block>& r, const Writer<Exp<X>>& w) {
              r.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                const auto stored = detail::takeActive(results.pull(), active);
                const DPull<Exp<X>> partials(
                    len(stored), [stored](const EWord32& i) { return cast<X>(stored[i]); });
                seqFoldStrided(f, Exp<X>(identity), partials, tid, EWord32(threads))(
                    t, [&](const Program<Thread>& u, const Exp<X>& acc, const EWord32&) {
                      w(u, acc, tid);
                    });
              });
            }));
        const Exp<X> total = blockReduce(q, f, folded);
        q.forAll(1u, [&](const Program<Thread>& t, const EWord32&) { out(t, total, 0u); });
      });
    });
  });
}

// The reduceAll kernel (in -> a one-element out) for `blocks` blocks.
template <class X, class Op>
Kernel reduceKernel(Op f, X identity, const ReducePolicy& policy, uint32_t blocks) {
  return capture("reduceAll", policy.threads,
                 [=](DPull<Exp<X>> in) { return reduceAll<X>(f, identity, in, policy, blocks); });
}

// The blocks reduceAll runs with on the GPU: what device 0 holds at once of this kernel.
template <class X, class Op>
uint32_t reduceBlocksOnGpu(Op f, X identity, const ReducePolicy& policy) {
  return gpu::occupancyBlocks(reduceKernel<X>(f, identity, policy, 1));
}
// On the simulator: enough blocks that publishing and the last block's fold are exercised.
inline constexpr uint32_t kSimulatedReduceBlocks = 8;

// ---------------------------------------------------------------- segmentedReduce
// segmentedReduce<X>(f, identity, in, segment, policy): one value per `segment` consecutive
// elements of `in` (any length; the last segment may be short; identity for none), one block
// per segment. Each thread folds the segment's elements strided by the block (coalesced), with
// 16-byte vectors (redVec) where the segment is a multiple of 4 x threads 4-byte elements,
// then blockReduce.
template <class X, class Op>
DPush<Grid, Exp<X>> segmentedReduce(Op f, X identity, const DPull<Exp<X>>& in, uint32_t segment,
                                    const SegmentedReducePolicy& policy) {
  if (segment == 0) throw Error("segmentedReduce needs segments of at least one element; got 0");
  const EWord32 n = len(in);
  const EWord32 full = n / segment;
  const EWord32 segments = full + cast<uint32_t>(n % segment != 0u);
  const uint32_t threads = policy.threads;
  const bool vectorized = sizeof(X) == 4 && segment % (4 * threads) == 0;
  return DPush<Grid, Exp<X>>(segments, [=](const Program<Grid>& g, const Writer<Exp<X>>& out) {
    g.distrPar(segments, [&](const Program<Block>& p, const EWord32& s) {
      const EWord32 start = s * segment;
      // Elements of this segment (segment, or fewer for the last).
      const EWord32 count = min(EWord32(segment), n - start);
      const auto strided = [&](const Program<Block>& q) {
        auto perThread = force(
            q,
            mkPush<Block, Exp<X>>(threads, [=](const Program<Block>& r, const Writer<Exp<X>>& w) {
              r.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                const DPull<Exp<X>> mine(count,
                                         [in, start](const EWord32& j) { return in[start + j]; });
                seqFoldStrided(f, Exp<X>(identity), mine, tid, EWord32(threads), 4)(
                    t, [&](const Program<Thread>& u, const Exp<X>& acc, const EWord32&) {
                      w(u, acc, tid);
                    });
              });
            }));
        return blockReduce(q, f, perThread);
      };
      const Exp<X> result = p.declare(Exp<X>(identity));
      if constexpr (sizeof(X) == 4) {
        if (vectorized) {
          const SPull<Exp<X>> whole =
              mkPull(segment, [in, start](const EWord32& j) { return in[start + j]; });
          p.cond(
              s < full,
              [&](const Program<Block>& q) {
                q.assign(result, redVec<X>(q, segment / 4 / threads, f, whole));
              },
              [&](const Program<Block>& q) { q.assign(result, strided(q)); });
        } else {
          p.assign(result, strided(p));
        }
      } else {
        p.assign(result, strided(p));
      }
      p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) { out(t, result, s); });
    });
  });
}

template <class X, class Op>
Kernel segmentedReduceKernel(Op f, X identity, uint32_t segment,
                             const SegmentedReducePolicy& policy) {
  return capture("segmentedReduce", policy.threads, [=](DPull<Exp<X>> in) {
    return segmentedReduce<X>(f, identity, in, segment, policy);
  });
}

// ---------------------------------------------------------------- ready calls
namespace device {

// reduce(in, out, f, identity, options): out[0] = the f-fold of in on the GPU (device 0), with
// the tuned policy for its architecture; asynchronous on options.stream when
// options.synchronize is false. f must be associative and commutative. The kernel is captured
// once per operator type, element type and device.
template <KernelScalar X, class Op>
void reduce(const gpu::DeviceBuffer<X>& in, gpu::DeviceBuffer<X>& out, Op f, X identity,
            const gpu::LaunchOptions& options = {}) {
  if (out.size() != 1) {
    throw Error("device::reduce writes one element; got an output of " +
                std::to_string(out.size()));
  }
  const ReducePolicy policy = reducePolicy();
  const Kernel k = detail::memoKernel(
      detail::joinKey(detail::operatorKey<Op>(),
                      {"reduce", detail::typeKey<X>(), detail::valueKey(identity), "gpu",
                       std::to_string(currentSm())}),
      [&] {
        return reduceKernel<X>(f, identity, policy, reduceBlocksOnGpu<X>(f, identity, policy));
      });
  gpu::launch(k, {in, out}, options);
}
template <KernelScalar X, class Op = Sum>
requires detail::HasIdentity<Op, X>
void reduce(const gpu::DeviceBuffer<X>& in, gpu::DeviceBuffer<X>& out, Op f = {},
            const gpu::LaunchOptions& options = {}) {
  reduce(in, out, f, Op::template identity<X>(), options);
}

// reduce(in, f, identity): the f-fold of in, on the simulator (the same kernel as the GPU's
// with kSimulatedSm's policy, and kSimulatedReduceBlocks blocks).
template <KernelScalar X, class Op>
X reduce(const std::vector<X>& in, Op f, X identity, const SimOptions& options = {}) {
  const Kernel k = detail::memoKernel(
      detail::joinKey(detail::operatorKey<Op>(),
                      {"reduce", detail::typeKey<X>(), detail::valueKey(identity), "sim"}),
      [&] {
        return reduceKernel<X>(f, identity, reducePolicy(kSimulatedSm), kSimulatedReduceBlocks);
      });
  std::vector<X> out(1);
  simulate(k, {in, out}, options);
  return out[0];
}
template <KernelScalar X, class Op = Sum>
requires detail::HasIdentity<Op, X> X reduce(const std::vector<X>& in, Op f = {}) {
  return reduce(in, f, Op::template identity<X>());
}

// segmentedReduce(in, segment, out, f, identity, options): out[s] = the f-fold of in's elements
// s * segment .. (s + 1) * segment - 1 (the last segment may be short); out holds
// ceil(len / segment) elements. On the GPU; then on the simulator.
template <KernelScalar X, class Op>
void segmentedReduce(const gpu::DeviceBuffer<X>& in, uint32_t segment, gpu::DeviceBuffer<X>& out,
                     Op f, X identity, const gpu::LaunchOptions& options = {}) {
  const Kernel k = detail::memoKernel(
      detail::joinKey(detail::operatorKey<Op>(),
                      {"segmentedReduce", detail::typeKey<X>(), detail::valueKey(identity),
                       std::to_string(segment), "sm" + std::to_string(currentSm())}),
      [&] { return segmentedReduceKernel<X>(f, identity, segment, segmentedReducePolicy()); });
  gpu::launch(k, {in, out}, options);
}
template <KernelScalar X, class Op>
std::vector<X> segmentedReduce(const std::vector<X>& in, uint32_t segment, Op f, X identity,
                               const SimOptions& options = {}) {
  const Kernel k = detail::memoKernel(
      detail::joinKey(detail::operatorKey<Op>(),
                      {"segmentedReduce", detail::typeKey<X>(), detail::valueKey(identity),
                       std::to_string(segment), "sim"}),
      [&] {
        return segmentedReduceKernel<X>(f, identity, segment, segmentedReducePolicy(kSimulatedSm));
      });
  if (segment == 0) throw Error("segmentedReduce needs segments of at least one element; got 0");
  std::vector<X> out(in.size() / segment + (in.size() % segment != 0));
  simulate(k, {in, out}, options);
  return out;
}

}  // namespace device
}  // namespace obsidian
