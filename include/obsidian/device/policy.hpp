// Tuning policies as data (CUB's cub/device/dispatch/tuning/*): each device algorithm has a
// policy struct (threads, items per thread, ...) and a table of them per GPU architecture. Every
// entry carries the obsidian-tune command that measured it and the figure that chose it, so a
// value is never a bare constant: `obsidian-tune --policies` prints them, and a test checks that
// none lacks its measurement. The algorithms' tables live beside them (device/reduce.hpp, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "obsidian/error.hpp"

namespace obsidian {

// Architectures as CUDA numbers them: 90 for sm_90 (H100), 80 for sm_80, ...
using SmVersion = uint32_t;

// The architecture the simulator stands for when a device algorithm picks its policy without a
// GPU: the one the tables were measured on, so the simulator checks the kernel that GPU runs.
inline constexpr SmVersion kSimulatedSm = 90;
// Its SM count (the H100 SXM's), for policies that depend on how many blocks fill the device.
inline constexpr uint32_t kSimulatedSmCount = 132;

// One row of a policy table: the policy chosen for architectures from `sm` up (until the next
// row's), how it was chosen and what it measured.
template <class Policy>
struct Tuned {
  SmVersion sm = 0;  // 0: the fallback for every architecture below the first measured one
  Policy policy{};
  const char* command = "";   // the obsidian-tune (or bench) command that measured it
  const char* measured = "";  // the figure that chose it: device, size, time, against what
};

// The row of `table` (sorted by sm, first row sm 0) for architecture `sm`: the last row whose
// sm is at most `sm`.
template <class Policy, size_t N>
const Tuned<Policy>& tunedFor(const Tuned<Policy> (&table)[N], SmVersion sm) {
  if (table[0].sm != 0) throw Error("a policy table needs a first row for sm 0 (the fallback)");
  const Tuned<Policy>* chosen = &table[0];
  for (const Tuned<Policy>& row : table) {
    if (row.sm <= sm) chosen = &row;
  }
  return *chosen;
}

// The architecture of the GPU a device algorithm runs on (device 0), or kSimulatedSm when there
// is none.
SmVersion currentSm();
// The SM count of that GPU, or kSimulatedSmCount when there is none.
uint32_t currentSmCount();

}  // namespace obsidian
