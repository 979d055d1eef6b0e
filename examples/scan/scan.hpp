// The paper's scans (Section 5.3): sklansky (as many threads as elements, fan + binSplit),
// sklansky2 (two elements per thread: a composition of phases), sklansky3 (sklansky2 after a
// strided `load 2`), and a Kogge-Stone scan for comparison. Each is generic in the element type
// and the associative operator, and computes the inclusive prefixes of one block's chunk; the
// exclusive prefixes are the inclusive scan of the chunk shifted right by one, identity first.
//
// Then a scan of any length n >= 1 from three kernels: block scans (each block scans its chunk
// and writes the chunk's total to a sums array), a scan of the block sums (the same pipeline,
// recursively, while there is more than one chunk of sums), and add-back (the elements of block
// b > 0 get the exclusive prefix of the block sums before b). The host pipeline runs on the
// simulator (host vectors) and on the GPU (device buffers), as in
// examples/reduce/large_reduce.hpp.
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <obsidian/obsidian.hpp>
#include <obsidian/runtime.hpp>
#include <obsidian/sim.hpp>
#include <string>
#include <type_traits>
#include <vector>

namespace paper {

using namespace obsidian;

// ================================================================ one block (Section 5.3)

// fan op arr = conc a1 (fmap (op c) a2)
//   where (a1, a2) = halve arr
//         c = a1 ! (len a1 - 1)
template <class T, class Op>
SPull<T> fan(Op op, const SPull<T>& arr) {
  auto [a1, a2] = halve(arr);
  const T c = last(a1);
  return conc(a1, fmap([op, c](const T& x) { return op(c, x); }, a2));
}

// sklansky 0 op arr = return (push arr)
// sklansky n op arr = do let arr1 = binSplit (n-1) (fan op) arr
//                        arr2 <- forcePull arr1
//                        sklansky (n-1) op arr2
// Scans 2^n elements with one thread per element (virtualized where the block has fewer).
template <class T, class Op>
SPush<Block, T> sklansky(const Program<Block>& p, uint32_t n, Op op, const SPull<T>& arr) {
  if (n == 0) return push<Block>(arr);
  const auto fanOp = [op](const SPull<T>& a) { return fan(op, a); };  // (fan op)
  const SPull<T> arr1 = binSplit(n - 1, fanOp, arr);
  const SPull<T> arr2 = forcePull(p, arr1);
  return sklansky(p, n - 1, op, arr2);
}

// phase i f arr: len/2 threads, each writing one element unchanged (ix1) and one combined with
// the last element of the preceding 2^i-element group (ix3) (paper: mkPush l (\wf -> forAll ...))
template <class T, class Op>
SPush<Block, T> phase(uint32_t i, Op f, const SPull<T>& arr) {
  const uint32_t l = len(arr);
  return mkPush<Block, T>(l, [i, f, arr, l](const Program<Block>& p, const Writer<T>& wf) {
    p.forAll(l / 2, [&](const Program<Thread>& t, const EWord32& tid) {
      const EWord32 ix1 = insertZero(i, tid);
      const EWord32 ix2 = flipBit(i, ix1);
      const EWord32 ix3 = zeroBits(i, ix2) - 1u;
      wf(t, arr[ix1], ix1);
      wf(t, f(arr[ix3], arr[ix2]), ix2);
    });
  });
}

// [phase i f | i <- [0..(l-1)]]
template <class T, class Op>
std::vector<std::function<SPush<Block, T>(const SPull<T>&)>> phases(uint32_t l, Op f) {
  std::vector<std::function<SPush<Block, T>(const SPull<T>&)>> fs;
  for (uint32_t i = 0; i < l; ++i) {
    fs.push_back([i, f](const SPull<T>& arr) { return phase(i, f, arr); });
  }
  return fs;
}

// sklansky2 l f = compose [phase i f | i <- [0..(l-1)]]
// Scans 2^l elements (l >= 1) with two elements per thread and no conditionals.
template <class T, class Op>
SPush<Block, T> sklansky2(const Program<Block>& p, uint32_t l, Op f, const SPull<T>& arr) {
  return compose(p, phases<T>(l, f), arr);
}

// sklansky3 l f arr = do im <- force (load 2 arr)
//                        compose [phase i f | i <- [0..(l-1)]] im
// sklansky2 after a coalescing strided load of two elements per thread into shared memory.
template <class T, class Op>
SPush<Block, T> sklansky3(const Program<Block>& p, uint32_t l, Op f, const SPull<T>& arr) {
  const SPull<T> im = force(p, load(2, arr));
  return compose(p, phases<T>(l, f), im);
}

// koggeStone: l steps over 2^l elements; in step k, element i becomes a[i - 2^k] op a[i] from
// i = 2^k on (and stays a[i] below), each step forced.
template <class T, class Op>
SPush<Block, T> koggeStone(const Program<Block>& p, uint32_t l, Op op, SPull<T> arr) {
  for (uint32_t k = 0; k < l; ++k) {
    const uint32_t d = 1u << k;
    const SPull<T> step = mkPull(len(arr), [op, arr, d](const EWord32& i) {
      return ifThenElse(i < d, arr[i], op(arr[i - d], arr[i]));
    });
    arr = forcePull(p, step);
  }
  return push<Block>(arr);
}

// shiftRight id arr = [id, a0, ..., a(n-2)]: the inclusive scan of it is the exclusive scan.
template <class T>
SPull<T> shiftRight(const T& id, const SPull<T>& arr) {
  return mkPull(len(arr),
                [id, arr](const EWord32& i) { return ifThenElse(i == 0u, id, arr[i - 1u]); });
}

// ---------------------------------------------------------------- the variants by name
enum class ScanVariant { Sklansky, Sklansky2, Sklansky3, KoggeStone };
inline constexpr ScanVariant scanVariants[] = {ScanVariant::Sklansky, ScanVariant::Sklansky2,
                                               ScanVariant::Sklansky3, ScanVariant::KoggeStone};

inline std::string name(ScanVariant v) {
  switch (v) {
    case ScanVariant::Sklansky: return "sklansky";
    case ScanVariant::Sklansky2: return "sklansky2";
    case ScanVariant::Sklansky3: return "sklansky3";
    case ScanVariant::KoggeStone: return "koggeStone";
  }
  return "?";
}
// Elements each thread handles when the block has threads enough (sklansky2/3: two).
inline uint32_t elementsPerThread(ScanVariant v) {
  return v == ScanVariant::Sklansky2 || v == ScanVariant::Sklansky3 ? 2 : 1;
}
// Threads per block that give every thread its own element(s), at most 1024.
inline uint32_t naturalThreads(ScanVariant v, uint32_t log) {
  return std::max(1u, std::min(1024u, (1u << log) / elementsPerThread(v)));
}

// A block scan: all prefixes of a chunk of 2^log elements, as the block's push array.
template <class T>
using BlockScan = std::function<SPush<Block, T>(const Program<Block>&, const SPull<T>&)>;

// The inclusive scan of variant v over chunks of 2^log elements.
template <class T, class Op>
BlockScan<T> blockScan(ScanVariant v, uint32_t log, Op op) {
  if (elementsPerThread(v) == 2 && log == 0) {
    throw Error(name(v) +
                " scans two elements per thread: it needs chunks of at least 2 "
                "elements (log >= 1); got log 0");
  }
  return [v, log, op](const Program<Block>& p, const SPull<T>& arr) {
    switch (v) {
      case ScanVariant::Sklansky: return sklansky(p, log, op, arr);
      case ScanVariant::Sklansky2: return sklansky2(p, log, op, arr);
      case ScanVariant::Sklansky3: return sklansky3(p, log, op, arr);
      case ScanVariant::KoggeStone: break;
    }
    return koggeStone(p, log, op, arr);
  };
}

// The exclusive scan of variant v: the inclusive scan of the chunk shifted right by one.
template <class T, class Op>
BlockScan<T> exclusiveBlockScan(ScanVariant v, uint32_t log, Op op, const T& identity) {
  const BlockScan<T> scan = blockScan<T>(v, log, op);
  return [scan, identity](const Program<Block>& p, const SPull<T>& arr) {
    return scan(p, shiftRight(identity, arr));
  };
}

// ================================================================ kernels over the grid

// mapScan chunk scan in = pConcat (fmap (execBlock . scan) (splitUp chunk in))
template <class T>
auto mapScan(uint32_t chunk, const BlockScan<T>& scan, const DPull<T>& in) {
  return pConcat(fmap(
      [scan](const SPull<T>& c) {
        return exec<Block>([scan, c](const Program<Block>& p) { return scan(p, c); });
      },
      splitUp(chunk, in)));
}

// One block per chunk of 2^log elements (the input length must be a multiple of the chunk),
// `threads` threads per block: the inclusive prefixes of each chunk.
template <KernelScalar X, class Op>
Kernel scanKernel(ScanVariant v, uint32_t log, uint32_t threads, Op op) {
  const BlockScan<Exp<X>> scan = blockScan<Exp<X>>(v, log, op);
  return capture(name(v), threads,
                 [scan, log](DPull<Exp<X>> in) { return mapScan(1u << log, scan, in); });
}

// As scanKernel, the exclusive prefixes (identity first).
template <KernelScalar X, class Op>
Kernel exclusiveScanKernel(ScanVariant v, uint32_t log, uint32_t threads, Op op, X identity) {
  const BlockScan<Exp<X>> scan = exclusiveBlockScan<Exp<X>>(v, log, op, Exp<X>(identity));
  return capture(name(v) + "Exclusive", threads,
                 [scan, log](DPull<Exp<X>> in) { return mapScan(1u << log, scan, in); });
}

// ================================================================ large scans (any n >= 1)

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

// Kernel 1 (and 2): block scans of any n elements in chunks of 2^log, the last chunk padded
// with the identity (read as the identity, never written); each block also writes its chunk's
// total to sums[b] (ceil(n / 2^log) of them). Arguments: in, sums, out.
template <KernelScalar X, class Op>
Kernel blockScansKernel(ScanVariant v, uint32_t log, uint32_t threads, Op op, X identity,
                        bool exclusive) {
  const uint32_t chunk = 1u << log;
  const BlockScan<Exp<X>> scan = exclusive
                                     ? exclusiveBlockScan<Exp<X>>(v, log, op, Exp<X>(identity))
                                     : blockScan<Exp<X>>(v, log, op);
  const std::string kernelName = name(v) + (exclusive ? "ExclusiveBlocks" : "Blocks");
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
                     return withTotal(scan(p, c), sums, b, total);
                   });
                 })));
  });
}

// Kernel 3: out[i] = prefix[b] op partial[i] for the elements of block b = i / 2^log > 0 (and
// partial[i] in block 0). Arguments: partial, prefix, out.
template <KernelScalar X, class Op>
Kernel addBackKernel(uint32_t log, uint32_t threads, Op op) {
  const uint32_t chunk = 1u << log;
  return capture("addBack", threads, [chunk, op](DPull<Exp<X>> partial, DPull<Exp<X>> prefix) {
    return push<Grid>(mkPull(len(partial), [=](const EWord32& i) {
      const EWord32 b = i / chunk;
      return ifThenElse(b == 0u, partial[i], op(prefix[b], partial[i]));
    }));
  });
}

// The kernels of one large scan.
struct LargeScan {
  uint32_t chunk = 0;
  Kernel inclusive;  // block scans with totals: in, sums, out
  Kernel exclusive;  // the same, exclusive (also scans the block sums)
  Kernel addBack;    // partial, prefix, out
};

template <KernelScalar X, class Op>
LargeScan largeScanKernels(ScanVariant v, uint32_t log, uint32_t threads, Op op, X identity,
                           uint32_t addBackThreads = 256) {
  return LargeScan{1u << log, blockScansKernel<X>(v, log, threads, op, identity, false),
                   blockScansKernel<X>(v, log, threads, op, identity, true),
                   addBackKernel<X>(log, addBackThreads, op)};
}

inline size_t blockCount(size_t n, uint32_t chunk) { return n / chunk + (n % chunk != 0); }

template <class Buffer>
inline constexpr bool onDevice = false;
template <KernelScalar X>
inline constexpr bool onDevice<gpu::DeviceBuffer<X>> = true;

// The scratch buffers of a large scan of n elements, allocated once, and the launches. Buffer
// is std::vector<X> (the simulator) or gpu::DeviceBuffer<X> (the GPU). Level 0 scans the input;
// while a level has more than one block, its block sums are the input of the next level, whose
// output is their exclusive prefixes.
template <class Buffer>
class ScanPlan {
 public:
  ScanPlan(LargeScan kernels, size_t n) : k_(std::move(kernels)), n_(n) {
    if (n == 0) throw Error("a large scan needs at least one element; got 0");
    for (;;) {
      const size_t blocks = blockCount(n, k_.chunk);
      const bool last = blocks == 1;
      levels_.push_back(Level{Buffer(blocks), Buffer(last ? 0 : n), Buffer(last ? 0 : blocks)});
      if (last) break;
      n = blocks;
    }
  }

  // out = the inclusive (or exclusive) scan of in. GPU launches take `options` (they are
  // asynchronous with options.synchronize = false, for timing).
  void run(const Buffer& in, Buffer& out, bool exclusive, const gpu::LaunchOptions& options = {}) {
    if (in.size() != n_ || out.size() != n_) {
      throw Error("ScanPlan for " + std::to_string(n_) + " elements: got an input of " +
                  std::to_string(in.size()) + " and an output of " + std::to_string(out.size()));
    }
    level(0, in, out, exclusive, options);
  }

  size_t levels() const { return levels_.size(); }

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
    if constexpr (onDevice<Buffer>) {
      gpu::launch(k, args, options);
    } else {
      simulate(k, args);
    }
  }

  LargeScan k_;
  size_t n_;
  std::deque<Level> levels_;
};

// The scan of `in` (any length >= 1) on the simulator.
template <KernelScalar X>
std::vector<X> scanOnSimulator(const LargeScan& k, const std::vector<X>& in,
                               bool exclusive = false) {
  std::vector<X> out(in.size());
  ScanPlan<std::vector<X>>(k, in.size()).run(in, out, exclusive);
  return out;
}

// out = the scan of `in` (any length >= 1) on the GPU.
template <KernelScalar X>
void scanOnGpu(const LargeScan& k, const gpu::DeviceBuffer<X>& in, gpu::DeviceBuffer<X>& out,
               bool exclusive = false) {
  ScanPlan<gpu::DeviceBuffer<X>>(k, in.size()).run(in, out, exclusive);
}

}  // namespace paper
