// A large reduction for any n >= 1 (paper Section 6.1): a kernel reduces each chunk of the
// input to one partial sum (the last chunk may be short: missing elements read as 0), and the
// host runs it again on the partial sums until one value is left. The same pipeline runs on
// the simulator (host arrays) and on the GPU (device buffers).
#pragma once

#include <deque>
#include <obsidian/runtime.hpp>
#include <obsidian/sim.hpp>

#include "programs.hpp"

namespace paper {

// One partial sum per `chunk` elements of the input, with red5 (`seq` elements per thread).
inline Kernel partialSums(uint32_t chunk = 4096, uint32_t threads = 256, uint32_t seq = 8) {
  return capture("partialSums", threads, [chunk, seq](DPull<EWord32> in) {
    const EWord32 n = len(in);
    // ceil(n / chunk) without overflow near 2^32
    const EWord32 blocks = n / chunk + cast<uint32_t>(n % chunk != 0u);
    return pConcat(mkPull(blocks, [in, n, chunk, seq](const EWord32& b) {
      const SPull<EWord32> c = mkPull(chunk, [in, n, b, chunk](const EWord32& j) {
        const EWord32 i = b * chunk + j;
        return ifThenElse(i < n, in[i], 0u);  // only the chosen side is read
      });
      return singletonPush<Block>(
          [c, seq](const Program<Block>& p) { return red5(p, seq, plus, c); });
    }));
  });
}

inline size_t partialCount(size_t n, uint32_t chunk) { return n / chunk + (n % chunk != 0); }

// The sum of `in` (wrapping at 2^32), on the simulator.
inline uint32_t reduceOnSimulator(const Kernel& k, uint32_t chunk, std::vector<uint32_t> data) {
  if (data.empty()) throw Error("reduce needs at least one element");
  do {
    std::vector<uint32_t> partial(partialCount(data.size(), chunk));
    simulate(k, {data, partial});
    data = std::move(partial);
  } while (data.size() > 1);
  return data[0];
}

// The sum of `in` (wrapping at 2^32), on the GPU: buffers are sized at run time, level by
// level.
inline uint32_t reduceOnGpu(const Kernel& k, uint32_t chunk,
                            const gpu::DeviceBuffer<uint32_t>& in) {
  if (in.size() == 0) throw Error("reduce needs at least one element");
  std::deque<gpu::DeviceBuffer<uint32_t>> levels;  // a deque: `current` stays valid
  const gpu::DeviceBuffer<uint32_t>* current = &in;
  do {
    levels.emplace_back(partialCount(current->size(), chunk));
    gpu::launch(k, {*current, levels.back()});
    current = &levels.back();
  } while (current->size() > 1);
  return current->download()[0];
}

}  // namespace paper
