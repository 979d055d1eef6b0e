// A large reduction for any n >= 1 (paper Section 6.1): a kernel reduces each chunk of the
// input to one partial result (the last chunk may be short: missing elements read as the
// operator's identity), and the host runs it again on the partial results until one value is
// left. The same pipeline runs on the simulator (host arrays) and on the GPU (device buffers).
#pragma once

#include <deque>
#include <obsidian/capture.hpp>
#include <obsidian/runtime.hpp>
#include <obsidian/sim.hpp>

#include "reduce.hpp"

namespace paper {

// One partial result per `chunk` elements of the input, each chunk reduced by
// red(p, f, chunk) (any of reduce.hpp's block reductions).
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

// One partial result per `chunk` elements of the input, with red5' (`seq` elements per thread).
template <class T, class Op>
Kernel partialReduce(Op f, T identity, uint32_t chunk = 4096, uint32_t threads = 256,
                     uint32_t seq = 8) {
  return partialReduceWith<T>(
      [seq](const Program<Block>& p, Op g, const SPull<Exp<T>>& c) { return red5p(p, seq, g, c); },
      f, identity, chunk, threads);
}

inline Kernel partialSums(uint32_t chunk = 4096, uint32_t threads = 256, uint32_t seq = 8) {
  return partialReduce<uint32_t>(plus, 0u, chunk, threads, seq);
}

inline size_t partialCount(size_t n, uint32_t chunk) { return n / chunk + (n % chunk != 0); }

// The reduction of `data` on the simulator.
template <class T>
T reduceOnSimulator(const Kernel& k, uint32_t chunk, std::vector<T> data) {
  if (data.empty()) throw Error("reduce needs at least one element");
  do {
    std::vector<T> partial(partialCount(data.size(), chunk));
    simulate(k, {data, partial});
    data = std::move(partial);
  } while (data.size() > 1);
  return data[0];
}

// The reduction of `in` on the GPU: buffers are sized at run time, level by level.
template <class T>
T reduceOnGpu(const Kernel& k, uint32_t chunk, const gpu::DeviceBuffer<T>& in) {
  if (in.size() == 0) throw Error("reduce needs at least one element");
  std::deque<gpu::DeviceBuffer<T>> levels;  // a deque: `current` stays valid
  const gpu::DeviceBuffer<T>* current = &in;
  do {
    levels.emplace_back(partialCount(current->size(), chunk));
    gpu::launch(k, {*current, levels.back()});
    current = &levels.back();
  } while (current->size() > 1);
  return current->download()[0];
}

}  // namespace paper
