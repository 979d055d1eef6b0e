/// The device layer, multi-kernel pipelines (the paper's Section 6.1): a reduction or scan of
/// any length n >= 1 from one-block-per-tile kernels (device/tiled.hpp) that the host launches
/// level by level. A reduction runs a partial-reduce kernel again on its partial results until
/// one value is left; a scan runs block scans with totals, scans the totals (the same pipeline,
/// recursively) and adds them back. The same pipelines run on the simulator (host vectors) and
/// on the GPU (device buffers). The one-launch device calls (device/reduce.hpp, device/scan.hpp)
/// are faster; these are what the paper built, and what a kernel without grid state needs.
/// @file
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "obsidian/device/tiled.hpp"
#include "obsidian/runtime.hpp"
#include "obsidian/sim.hpp"

namespace obsidian {

// ================================================================ reduction
/// One partial result per `chunk` elements of the input, each chunk reduced by red(p, f, chunk)
/// (any block reduction); the last chunk may be short (its missing elements read as identity).
template <class T, class Op, class Red>
Kernel partialReduceWith(Red red, Op f, T identity, uint32_t chunk, uint32_t threads,
                         const std::string& name = "partialReduce") {
  return capture(name, threads, [red, f, identity, chunk](DPull<Exp<T>> in) {
    const EWord32 n = len(in);
    // ceil(n / chunk) without overflow near 2^32
    const EWord32 blocks = n / chunk + cast<uint32_t>(n % chunk != 0u);
    return pConcat(mkPull(blocks, [in, n, red, f, identity, chunk](const EWord32& b) {
      const SPull<Exp<T>> c = mkPull(chunk, [in, n, b, identity, chunk](const EWord32& j) {
        const EWord32 i = b * chunk + j;
        return ifThenElse(i < n, in[i], Exp<T>(identity));  // only the chosen side is read
      });
      return singletonPush<Block>([c, f, red](const Program<Block>& p) { return red(p, f, c); });
    }));
  });
}

/// One partial result per `chunk` elements, with red5' (`seq` elements per thread).
template <class T, class Op>
Kernel partialReduce(Op f, T identity, uint32_t chunk = 4096, uint32_t threads = 256,
                     uint32_t seq = 8) {
  return partialReduceWith<T>(
      [seq](const Program<Block>& p, Op g, const SPull<Exp<T>>& c) { return red5p(p, seq, g, c); },
      f, identity, chunk, threads);
}

/// The partial results of n elements in chunks of `chunk`: ceil(n / chunk).
inline size_t partialCount(size_t n, uint32_t chunk) { return n / chunk + (n % chunk != 0); }

/// The reduction of `data` on the simulator by partial-reduce kernel k over chunks of `chunk`.
template <class T>
T reduceOnSimulator(const Kernel& k, uint32_t chunk, std::vector<T> data) {
  if (data.empty()) throw Error("a pipelined reduction needs at least one element; got 0");
  do {
    std::vector<T> partial(partialCount(data.size(), chunk));
    simulate(k, {data, partial});
    data = std::move(partial);
  } while (data.size() > 1);
  return data[0];
}

/// The same on the GPU: buffers are sized at run time, level by level.
template <class T>
T reduceOnGpu(const Kernel& k, uint32_t chunk, const gpu::DeviceBuffer<T>& in) {
  if (in.size() == 0) throw Error("a pipelined reduction needs at least one element; got 0");
  std::deque<gpu::DeviceBuffer<T>> levels;  // a deque: `current` stays valid
  const gpu::DeviceBuffer<T>* current = &in;
  do {
    levels.emplace_back(partialCount(current->size(), chunk));
    gpu::launch(k, {*current, levels.back()});
    current = &levels.back();
  } while (current->size() > 1);
  return current->download()[0];
}

// ================================================================ scan
namespace detail {
// withTotal arr sums b total: arr, and where its last element v is written, total(v) is also
// written to sums[b] (by the same thread: no extra barrier or shared array).
template <KernelScalar X, class F>
SPush<Block, Exp<X>> withTotal(const SPush<Block, Exp<X>>& arr, const DMutable<X>& sums,
                               const EWord32& b, F total) {
  const uint32_t lastIx = len(arr) - 1;
  return SPush<Block, Exp<X>>(
      len(arr), [arr, sums, b, total, lastIx](const Program<Block>& p, const Writer<Exp<X>>& w) {
        arr(p, [&](const Program<Thread>& t, const Exp<X>& v, const EWord32& i) {
          w(t, v, i);
          t.cond(i == lastIx, [&](const Program<Thread>& u) { write(u, sums, b, total(v)); });
        });
      });
}
}  // namespace detail

/// Block scans of any n elements in chunks of `chunk` by block algorithm a, the last chunk
/// padded with the identity (read as the identity, never written); each block also writes its
/// chunk's total to sums[b] (ceil(n / chunk) of them). Arguments: in, sums, out.
template <KernelScalar X, class Op>
Kernel blockScansKernel(BlockScanAlgorithm a, uint32_t chunk, uint32_t threads, Op op, X identity,
                        bool exclusive) {
  const std::string kernelName = name(a) + (exclusive ? "ExclusiveBlocks" : "Blocks");
  return capture(kernelName, threads, [=](DPull<Exp<X>> in, DMutable<X> sums) {
    const EWord32 n = len(in);
    const EWord32 blocks = n / chunk + cast<uint32_t>(n % chunk != 0u);  // no overflow
    return takeP(n, pConcat(mkPull(blocks, [=](const EWord32& b) {
                   const SPull<Exp<X>> c = mkPull(chunk, [=](const EWord32& j) {
                     const EWord32 i = b * chunk + j;
                     return ifThenElse(i < n, in[i], identity);  // only the chosen side is read
                   });
                   // An exclusive scan's last prefix lacks the chunk's last element.
                   auto total = [=](const Exp<X>& lastPrefix) {
                     return exclusive ? op(lastPrefix, last(c)) : lastPrefix;
                   };
                   return exec<Block>([=](const Program<Block>& p) {
                     p.context().require(sums.len() >= blocks,
                                         "sums needs one element per chunk of " +
                                             std::to_string(chunk) + " input elements");
                     const SPush<Block, Exp<X>> scanned =
                         exclusive ? blockExclusiveScan(a, p, op, Exp<X>(identity), c)
                                   : blockScan(a, p, op, c);
                     return detail::withTotal(scanned, sums, b, total);
                   });
                 })));
  });
}

/// out[i] = prefix[b] op partial[i] for the elements of block b = i / chunk > 0 (and partial[i]
/// in block 0). Arguments: partial, prefix, out.
template <KernelScalar X, class Op>
Kernel addBackKernel(uint32_t chunk, uint32_t threads, Op op) {
  return capture("addBack", threads, [chunk, op](DPull<Exp<X>> partial, DPull<Exp<X>> prefix) {
    return push<Grid>(mkPull(len(partial), [=](const EWord32& i) {
      const EWord32 b = i / chunk;
      return ifThenElse(b == 0u, partial[i], op(prefix[b], partial[i]));
    }));
  });
}

/// The kernels of one pipelined scan.
struct LargeScan {
  uint32_t chunk = 0;  ///< the elements each block scans
  Kernel inclusive;    ///< block scans with totals: in, sums, out
  Kernel exclusive;    ///< the same, exclusive (also scans the block sums)
  Kernel addBack;      ///< partial, prefix, out
};

/// The kernels of a pipelined scan with block algorithm a over chunks of `chunk` elements, the
/// add-back kernel with `addBackThreads` threads per block.
template <KernelScalar X, class Op>
LargeScan largeScanKernels(BlockScanAlgorithm a, uint32_t chunk, uint32_t threads, Op op,
                           X identity, uint32_t addBackThreads = 256) {
  return LargeScan{chunk, blockScansKernel<X>(a, chunk, threads, op, identity, false),
                   blockScansKernel<X>(a, chunk, threads, op, identity, true),
                   addBackKernel<X>(chunk, addBackThreads, op)};
}

namespace detail {
template <class Buffer>
inline constexpr bool onDevice = false;
template <KernelScalar X>
inline constexpr bool onDevice<gpu::DeviceBuffer<X>> = true;
}  // namespace detail

/// The scratch buffers of a pipelined scan of n elements, allocated once, and the launches.
/// Buffer is std::vector<X> (the simulator) or gpu::DeviceBuffer<X> (the GPU). Level 0 scans the
/// input; while a level has more than one block, its block sums are the input of the next
/// level, whose output is their exclusive prefixes.
template <class Buffer>
class ScanPlan {
 public:
  /// The plan for n elements (n >= 1: else Error) with these kernels: its buffers allocated.
  ScanPlan(LargeScan kernels, size_t n) : k_(std::move(kernels)), n_(n) {
    if (n == 0) throw Error("a pipelined scan needs at least one element; got 0");
    for (;;) {
      const size_t blocks = partialCount(n, k_.chunk);
      const bool last = blocks == 1;
      levels_.push_back(Level{Buffer(blocks), Buffer(last ? 0 : n), Buffer(last ? 0 : blocks)});
      if (last) break;
      n = blocks;
    }
  }

  /// out = the inclusive (or exclusive) scan of in. GPU launches take `options` (they are
  /// asynchronous with options.synchronize = false, for timing).
  void run(const Buffer& in, Buffer& out, bool exclusive, const gpu::LaunchOptions& options = {}) {
    if (in.size() != n_ || out.size() != n_) {
      throw Error("ScanPlan for " + std::to_string(n_) + " elements: got an input of " +
                  std::to_string(in.size()) + " and an output of " + std::to_string(out.size()));
    }
    level(0, in, out, exclusive, options);
  }

  size_t levels() const { return levels_.size(); }  ///< the levels (1: one block scans it all)

 private:
  struct Level {
    Buffer sums;     // one total per block
    Buffer partial;  // the block scans (only where there is more than one block)
    Buffer prefix;   // the exclusive prefixes of sums (the next level's output)
  };

  void level(size_t l, const Buffer& in, Buffer& out, bool exclusive,
             const gpu::LaunchOptions& options) {
    Level& s = levels_[l];
    const Kernel& blockScans = exclusive ? k_.exclusive : k_.inclusive;
    if (l + 1 == levels_.size()) {
      launch(blockScans, {in, s.sums, out}, options);  // one block: its scan is the result
      return;
    }
    launch(blockScans, {in, s.sums, s.partial}, options);
    level(l + 1, s.sums, s.prefix, true, options);  // the block sums' exclusive prefixes
    launch(k_.addBack, {s.partial, s.prefix, out}, options);
  }

  static void launch(const Kernel& k, const std::vector<KernelArg>& args,
                     const gpu::LaunchOptions& options) {
    if constexpr (detail::onDevice<Buffer>) {
      gpu::launch(k, args, options);
    } else {
      simulate(k, args);
    }
  }

  LargeScan k_;
  size_t n_;
  std::deque<Level> levels_;
};

/// The scan of `in` (any length >= 1) on the simulator.
template <KernelScalar X>
std::vector<X> scanOnSimulator(const LargeScan& k, const std::vector<X>& in,
                               bool exclusive = false) {
  std::vector<X> out(in.size());
  ScanPlan<std::vector<X>>(k, in.size()).run(in, out, exclusive);
  return out;
}

/// out = the scan of `in` (any length >= 1) on the GPU.
template <KernelScalar X>
void scanOnGpu(const LargeScan& k, const gpu::DeviceBuffer<X>& in, gpu::DeviceBuffer<X>& out,
               bool exclusive = false) {
  ScanPlan<gpu::DeviceBuffer<X>>(k, in.size()).run(in, out, exclusive);
}

}  // namespace obsidian
