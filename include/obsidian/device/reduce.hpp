/// The device layer, reductions: a whole array to one value in one launch (reduceAll), and one
/// value per segment of consecutive elements (segmentedReduce), each built on the block layer
/// (block/reduce.hpp) and usable two ways: as Push<Grid> arrays inside a user's own kernel, and
/// as ready calls (obsidian::device::reduce, device::segmentedReduce) that capture with the tuned
/// policy, keep the kernel, and launch on the GPU or run on the simulator.
/// @file
#pragma once

#include <boost/hana/for_each.hpp>
#include <boost/hana/transform.hpp>
#include <boost/hana/unpack.hpp>

#include "obsidian/atomic.hpp"
#include "obsidian/block/reduce.hpp"
#include "obsidian/capture.hpp"
#include "obsidian/device/algorithm.hpp"
#include "obsidian/device/dispatch.hpp"
#include "obsidian/operators.hpp"

namespace obsidian {

// ---------------------------------------------------------------- policies
/// How reduceAll's blocks share the input's 16-byte vectors.
enum class ReduceSweep : uint8_t {
  Strided,    ///< grid-strided: vector gid, gid + blocks x threads, ...
  Tiles,      ///< tiles of unroll x threads vectors, tile k to block k % blocks
  EvenShare,  ///< each block one contiguous share (whole 128-byte lines), swept in such tiles
};
/// The sweeps, in order.
inline constexpr std::array<ReduceSweep, 3> kReduceSweeps = {
    ReduceSweep::Strided, ReduceSweep::Tiles, ReduceSweep::EvenShare};
/// The sweep's name ("strided", "tiles", "evenShare").
inline std::string name(ReduceSweep s) {
  switch (s) {
    case ReduceSweep::Strided: return "strided";
    case ReduceSweep::Tiles: return "tiles";
    case ReduceSweep::EvenShare: return "evenShare";
  }
  return "?";
}

/// How reduceAll spreads its work (the grid itself is what the device holds at once).
struct ReducePolicy {
  uint32_t threads = 256;  ///< threads per block
  uint32_t unroll = 4;     ///< 16-byte vectors in flight per thread
  /// Fewer blocks for short inputs, so that each thread folds at least this many vectors (fewer
  /// partial results to publish and fold); 0 always runs every block.
  uint32_t minVectorsPerThread = 4;
  ReduceSweep sweep = ReduceSweep::Tiles;  ///< how the blocks share the input
};

/// segmentedReduce: one block per segment.
struct SegmentedReducePolicy {
  uint32_t threads = 256;  ///< threads per block
};

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
/// reduceAll<X>(f, identity, in, policy, blocks): the f-fold of every element of `in` (identity
/// for none) as a one-element Push<Grid>, in one launch. Up to `blocks` blocks (what the device
/// holds at once: gpu::occupancyBlocks) each fold a share of 16-byte vectors, publish the result
/// in grid state, and the last block to take a ticket (atomicInc) folds them; the last len %
/// width elements are folded by the first threads. f must be associative and commutative with
/// identity `identity`. Launches of one such kernel must not overlap (its grid state is one per
/// kernel, as CUB's temporary storage).
/// Cost: two block reductions (block/reduce.hpp) per block; blocks + 1 words of grid state.
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

/// transformReduceAll<X>(f, identity, m, policy, blocks, ins...): the f-fold of m(a[i], b[i],
/// ...) over the elements i of the inputs ins = a, b, ... (one length: a launch precondition),
/// computed as the elements are loaded: reduceAll of the mapped array without making it
/// manifest (CUB's TransformReduce; Barracuda's fused RMSE, examples/stencils). Every input is
/// read with 16-byte vectors, so each must be a direct read of a global array.
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
        if (policy.sweep == ReduceSweep::Strided) {  // vectors gid, gid + active * threads, ...
          seqFoldStrided(foldIn, Exp<X>(identity), indices, gid, active * threads, policy.unroll)(
              t, withTail);
          return;
        }
        // Tiles of unroll x threads vectors: a block reads contiguous memory (kinder to DRAM
        // pages), `unroll` coalesced vectors per thread.
        const uint32_t tile = threads * policy.unroll;
        if (policy.sweep == ReduceSweep::EvenShare) {
          // Block b's share: vectors cut(b) .. cut(b + 1) - 1, cut at whole 128-byte lines, so
          // that the blocks' shares differ by at most 8 vectors (tiles dealt in turn leave some
          // blocks one tile more: 63 tiles against 62.06 on average at 2^28 u32 on the H100).
          const auto cut = [&](const EWord32& b) {
            return cast<uint32_t>(cast<uint64_t>(b) * cast<uint64_t>(len(vecs)) /
                                  cast<uint64_t>(active) / EWord64(8) * EWord64(8));
          };
          const EWord32 lo = t.declare(cut(bid));
          const EWord32 count =
              t.declare(ifThenElse(bid + 1u == active, len(vecs), cut(bid + 1u)) - lo);
          const EWord32 mine = count / tile;
          const auto inShare = [=](const EWord32& k) {
            Exp<X> acc = vector(lo + k * tile + tid);
            for (uint32_t u = 1; u < policy.unroll; ++u)
              acc = f(acc, vector(lo + k * tile + u * threads + tid));
            return acc;
          };
          seqFoldStrided(f, Exp<X>(identity), mkPull(mine, inShare), 0u, 1u)(
              t, [&](const Program<Thread>& u, const Exp<X>& acc, const EWord32& i) {
                Exp<X> rest = acc;  // the share's last, partial tile
                for (uint32_t r = 0; r < policy.unroll; ++r) {
                  const EWord32 j = mine * tile + r * threads + tid;
                  rest = f(rest, ifThenElse(j < count, vector(lo + j), Exp<X>(identity)));
                }
                withTail(u, rest, i);
              });
          return;
        }
        // Tile k to block k % active.
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

/// The reduceAll kernel (in -> a one-element out) for `blocks` blocks.
template <class X, class Op>
Kernel reduceKernel(Op f, X identity, const ReducePolicy& policy, uint32_t blocks) {
  return capture("reduceAll", policy.threads,
                 [=](DPull<Exp<X>> in) { return reduceAll<X>(f, identity, in, policy, blocks); });
}

/// The blocks reduceAll runs with on the GPU: what device 0 holds at once of this kernel.
template <class X, class Op>
uint32_t reduceBlocksOnGpu(Op f, X identity, const ReducePolicy& policy) {
  return gpu::occupancyBlocks(reduceKernel<X>(f, identity, policy, 1));
}
/// On the simulator: enough blocks that publishing and the last block's fold are exercised.
inline constexpr uint32_t kSimulatedReduceBlocks = 8;

// ---------------------------------------------------------------- segmentedReduce
/// segmentedReduce<X>(f, identity, in, segment, policy): one value per `segment` consecutive
/// elements of `in` (any length; the last segment may be short; identity for none), one block
/// per segment. Each thread folds the segment's elements strided by the block (coalesced), with
/// 16-byte vectors (redVec) where the segment is a multiple of 4 x threads 4-byte elements,
/// then blockReduce.
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

/// The segmentedReduce kernel (in -> one value per `segment` elements of it).
template <class X, class Op>
Kernel segmentedReduceKernel(Op f, X identity, uint32_t segment,
                             const SegmentedReducePolicy& policy) {
  return capture("segmentedReduce", policy.threads, [=](DPull<Exp<X>> in) {
    return segmentedReduce<X>(f, identity, in, segment, policy);
  });
}

// ---------------------------------------------------------------- descriptors and ready calls
namespace device {

/// reduce's descriptor (device/algorithm.hpp): reduceAll with the tuned policy.
struct Reduce {
  using Policy = ReducePolicy;                   ///< the policy type
  static constexpr const char* name = "reduce";  ///< the ready call's name
  /// Where it is declared.
  static constexpr const char* header = "obsidian/device/reduce.hpp";
  /// What it computes.
  static constexpr const char* summary = "a whole array to one value in one launch (reduceAll)";
  /// The policy's fields as data.
  static constexpr auto fields() {
    return hana::make_tuple(
        field("threads", &Policy::threads, 32, 1024, "threads per block (whole warps)"),
        field("unroll", &Policy::unroll, 1, 16, "16-byte vectors in flight per thread"),
        field("min_vectors", &Policy::minVectorsPerThread, 0, 64,
              "fewer blocks for short inputs: vectors each thread folds at least (0: all)"),
        choiceField("sweep", &Policy::sweep, kReduceSweeps, "how the blocks share the input"));
  }
  /// The policy table: the fallback, then a row per measured architecture.
  static constexpr Tuned<Policy> table[] = {
      {0,
       {},
       {256, 4, 4, ReduceSweep::Tiles},
       "(fallback)",
       "not measured: sm_90's shape with 256 threads, which every architecture since sm_50 "
       "holds at full occupancy"},
      {90,
       {},
       {1024, 2, 4, ReduceSweep::Tiles},
       "obsidian-tune tuning/spaces/device_reduce.json; obsidian-bench-reduce --threads T "
       "--unroll U --sweep S",
       "H100, 2026-11-23 (obsidian-tune, 72 points at 2^28): every policy within 345.2..364.6 "
       "us, the best 1024 x 2 tiles (345.3). 2026-11-26 against CUB at every size of "
       "bench/reduce (1 to 2^28 and odd sizes, u32 and f32): 1024 x 2 tiles 0.899..1.004x CUB; "
       "the previous 512 x 4 0.944..1.039; 1024 x 4 0.909..1.009; 512 x 8 0.916..1.057; even "
       "shares (one contiguous range per block) 0.92..0.94 up to 2^24 but 1.02..1.06 above"},
  };
  /// The kernel for `blocks` blocks (0: what the target holds at once, kSimulatedReduceBlocks on
  /// the simulator), kept by operator, element type, identity, policy and target.
  template <class X, class Op>
  static Kernel kernel(const Target& t, const Policy& policy, Op f, X identity,
                       uint32_t blocks = 0) {
    return kernelFor<Reduce>(
        t, policy, detail::operatorKey<Op>(),
        {detail::typeKey<X>(), detail::valueKey(identity), std::to_string(blocks)}, [&] {
          const uint32_t grid = blocks != 0 ? blocks
                                : t.gpu     ? reduceBlocksOnGpu<X>(f, identity, policy)
                                            : kSimulatedReduceBlocks;
          return reduceKernel<X>(f, identity, policy, grid);
        });
  }
};

/// segmentedReduce's descriptor: one block per segment.
struct SegmentedReduce {
  using Policy = SegmentedReducePolicy;                   ///< the policy type
  static constexpr const char* name = "segmentedReduce";  ///< the ready call's name
  /// Where it is declared.
  static constexpr const char* header = "obsidian/device/reduce.hpp";
  /// What it computes.
  static constexpr const char* summary = "one value per segment of consecutive elements";
  /// The policy's fields as data.
  static constexpr auto fields() {
    return hana::make_tuple(
        field("threads", &Policy::threads, 32, 1024, "threads per block (whole warps)"));
  }
  /// The policy table: the fallback, then a row per measured architecture.
  static constexpr Tuned<Policy> table[] = {
      {0, {}, {256}, "(fallback)", "not measured: as sm_90"},
      {90,
       {},
       {256},
       "obsidian-tune tuning/spaces/device_segmented_reduce.json",
       "H100, 2026-11-23: 4096-element segments of 2^28 u32 339.3 us (512 threads 338.8, 128 "
       "342.1, 1024 439.8), f32 340.4 us (tuning/RESULTS.md, 'Device layer policies')"},
  };
  /// The kernel for segments of `segment` elements.
  template <class X, class Op>
  static Kernel kernel(const Target& t, const Policy& policy, Op f, X identity,
                       uint32_t segment) {
    return kernelFor<SegmentedReduce>(
        t, policy, detail::operatorKey<Op>(),
        {detail::typeKey<X>(), detail::valueKey(identity), std::to_string(segment)},
        [&] { return segmentedReduceKernel<X>(f, identity, segment, policy); });
  }
};

/// reduce(in, out, f, identity, options): out[0] = the f-fold of `in` (identity for none), with
/// the tuned policy for the target: on the GPU (device 0) for gpu::DeviceBuffers, asynchronous
/// on options.stream when options.synchronize is false; on the simulator for std::vectors. f
/// must be associative and commutative. Launches of one kernel must not overlap (its grid
/// state is one per kernel).
template <Buffer In, Buffer Out, class Op>
requires SameSide<In, Out> && OperatorOn<Op, ElementOf<In>>
void reduce(const In& in, Out& out, Op f, ElementOf<In> identity, const Options& options = {}) {
  using X = ElementOf<In>;
  if (out.size() != 1) {
    throw Error("device::reduce writes one element; got an output of " +
                std::to_string(out.size()));
  }
  const Target t = targetOf<In>();
  const ReducePolicy policy = policyFor<Reduce>(t, problemOf<X, Op>(), options);
  launchOn(t, Reduce::kernel<X>(t, policy, f, identity, options.blocks), {in, out}, options);
}
/// The same with Op's identity.
template <Buffer In, Buffer Out, class Op = Sum>
requires SameSide<In, Out> && OperatorOn<Op, ElementOf<In>> &&
    detail::HasIdentity<Op, ElementOf<In>>
void reduce(const In& in, Out& out, Op f = {}, const Options& options = {}) {
  reduce(in, out, f, Op::template identity<ElementOf<In>>(), options);
}
/// The f-fold of host array `in`, on the simulator.
template <KernelScalar X, OperatorOn<X> Op>
X reduce(const std::vector<X>& in, Op f, X identity, const Options& options = {}) {
  std::vector<X> out(1);
  reduce(in, out, f, identity, options);
  return out[0];
}
/// The same with Op's identity.
template <KernelScalar X, OperatorOn<X> Op = Sum>
requires detail::HasIdentity<Op, X> X reduce(const std::vector<X>& in, Op f = {}) {
  return reduce(in, f, Op::template identity<X>());
}

/// segmentedReduce(in, segment, out, f, identity, options): out[s] = the f-fold of in's
/// elements s * segment .. (s + 1) * segment - 1 (the last segment may be short); out holds
/// ceil(len / segment) elements. On the GPU for device buffers, on the simulator for vectors.
template <Buffer In, Buffer Out, class Op>
requires SameSide<In, Out> && OperatorOn<Op, ElementOf<In>>
void segmentedReduce(const In& in, uint32_t segment, Out& out, Op f, ElementOf<In> identity,
                     const Options& options = {}) {
  using X = ElementOf<In>;
  if (segment == 0) throw Error("segmentedReduce needs segments of at least one element; got 0");
  const Target t = targetOf<In>();
  const SegmentedReducePolicy policy =
      policyFor<SegmentedReduce>(t, problemOf<X, Op>(), options);
  launchOn(t, SegmentedReduce::kernel<X>(t, policy, f, identity, segment), {in, out}, options);
}
/// The segments' folds of host array `in`, on the simulator.
template <KernelScalar X, OperatorOn<X> Op>
std::vector<X> segmentedReduce(const std::vector<X>& in, uint32_t segment, Op f, X identity,
                               const Options& options = {}) {
  if (segment == 0) throw Error("segmentedReduce needs segments of at least one element; got 0");
  std::vector<X> out(in.size() / segment + (in.size() % segment != 0));
  segmentedReduce(in, segment, out, f, identity, options);
  return out;
}

}  // namespace device

/// The tuned reduce policy for architecture sm and problem class p.
inline ReducePolicy reducePolicy(SmVersion sm = currentSm(), const ProblemClass& p = {}) {
  return tunedFor(device::Reduce::table, sm, p).policy;
}
/// The tuned segmentedReduce policy for architecture sm.
inline SegmentedReducePolicy segmentedReducePolicy(SmVersion sm = currentSm()) {
  return tunedFor(device::SegmentedReduce::table, sm).policy;
}

}  // namespace obsidian
