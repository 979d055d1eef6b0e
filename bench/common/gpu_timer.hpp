// Timing GPU work for the CUB comparisons (bench/reduce, bench/scan), with the CUDA runtime on
// the legacy default stream, which obsidian's launches (no stream given) share. Each run is
// queued behind a kernel that spins for a while, so that the host has enqueued the start
// event, the work and the stop event before the GPU reaches them: the time is the GPU's alone
// (kernels and the gaps between them), not the host's launch latency.
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

// Runs `work` `warmup` times, then `runs` times, each timed with events behind a spinning
// kernel. `work` only enqueues on the default stream. Throws std::runtime_error on CUDA errors.
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
