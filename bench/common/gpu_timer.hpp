// The CUDA runtime side of the CUB comparisons (bench/reduce, bench/scan, ...): device memory
// for CUB's temporary storage, the read and copy roofline kernels, and timing, which is the
// library's (obsidian/timing.hpp: events behind a busy kernel, median of N) on the legacy
// default stream that CUB's calls and obsidian's launches without a stream share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bench {

struct Timing {
  double medianMs = 0, minMs = 0, maxMs = 0;
  int runs = 0;
};

// gpu::time(work, {runs, warmup}) (obsidian/timing.hpp); work only enqueues on the default
// stream. Throws on CUDA errors (the runtime's too).
Timing timeGpu(const std::function<void(int run)>& work, int runs = 30, int warmup = 3);

// Throws std::runtime_error naming `what` if a CUDA runtime call failed or a kernel faulted.
void checkCuda(const std::string& what);

// Device memory through the CUDA runtime (CUB's temporary storage, offsets).
void* deviceAlloc(size_t bytes);
void deviceFree(void* p);
void upload(void* dst, const void* src, size_t bytes);
void download(void* dst, const void* src, size_t bytes);

// The device's name and the read roofline: GB/s of a kernel that only reads `bytes` bytes of
// `data` with 16-byte loads (its result is written to `sink`, one uint32_t, so the reads stay).
std::string deviceName();
int multiprocessors();
void readKernel(const void* data, size_t bytes, uint32_t* sink);
void copyKernel(const void* src, void* dst, size_t bytes);

}  // namespace bench
