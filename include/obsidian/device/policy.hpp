/// Tuning policies as data (CUB's cub/device/dispatch/tuning/*): each device algorithm has a
/// policy struct (threads, items per thread, ...) and a table of rows, each chosen for an
/// architecture and a class of problems (element size, operator class, keys alone or key/value
/// pairs, size), carrying the obsidian-tune command that measured it and the figure that chose
/// it, so a value is never a bare constant. The tables live in the algorithms' descriptors
/// (device/algorithm.hpp); `obsidian-tune --policies` prints them and a test checks that no row
/// lacks its measurement.
/// @file
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "obsidian/error.hpp"

namespace obsidian {

/// Architectures as CUDA numbers them: 90 for sm_90 (H100), 80 for sm_80, ...
using SmVersion = uint32_t;

/// The architecture the simulator stands for when a device algorithm picks its policy without a
/// GPU: the one the tables were measured on, so the simulator checks the kernel that GPU runs.
inline constexpr SmVersion kSimulatedSm = 90;
/// Its SM count (the H100 SXM's), for policies that depend on how many blocks fill the device.
inline constexpr uint32_t kSimulatedSmCount = 132;

/// Classes of operators whose best policy may differ (a sum and a min fold alike, but a
/// user's operator may cost more registers).
enum class OperatorClass : uint8_t {
  Any,     ///< a row for every operator
  Sum,     ///< obsidian::Sum
  MinMax,  ///< obsidian::Min, obsidian::Max
  Other,   ///< any other operator
};

/// Whether an algorithm moves keys alone or key/value pairs (sort, select, reduce-by-key).
enum class Values : uint8_t {
  Any,       ///< a row for both
  KeysOnly,  ///< keys alone
  Pairs,     ///< key/value pairs
};

/// Whether a problem fills the device with the large policy's blocks (transpose: a small matrix
/// takes a smaller tile so that every SM has work).
enum class Scale : uint8_t {
  Any,    ///< a row for every size
  Large,  ///< fills the device
  Small,  ///< leaves SMs idle with the large policy
};

/// What a policy row applies to besides the architecture. A field left at 0 / Any matches every
/// problem; a row that names a value matches only problems with it.
struct ProblemClass {
  uint32_t elementBytes = 0;              ///< the element's size in bytes; 0: any
  OperatorClass op = OperatorClass::Any;  ///< the operator's class
  Values values = Values::Any;            ///< keys alone or pairs
  Scale scale = Scale::Any;               ///< large or small problems
  /// How many fields name a value (a more specific row wins over a general one).
  constexpr int specificity() const {
    return (elementBytes != 0) + (op != OperatorClass::Any) + (values != Values::Any) +
           (scale != Scale::Any);
  }
  /// Whether a row for this class applies to problem `p` (whose fields are all known).
  constexpr bool matches(const ProblemClass& p) const {
    return (elementBytes == 0 || elementBytes == p.elementBytes) &&
           (op == OperatorClass::Any || op == p.op) &&
           (values == Values::Any || values == p.values) &&
           (scale == Scale::Any || scale == p.scale);
  }
};

/// The class as text ("any", "8-byte elements", "8-byte elements, small", ...).
std::string describe(const ProblemClass& c);

/// One row of a policy table: the policy chosen for architectures from `sm` up (until a later
/// row's) and problems of class `problem`, how it was chosen and what it measured.
template <class Policy>
struct Tuned {
  SmVersion sm = 0;           ///< 0: the fallback for architectures below the first measured one
  ProblemClass problem{};     ///< the problems it applies to
  Policy policy{};            ///< the policy
  const char* command = "";   ///< the obsidian-tune (or bench) command that measured it
  const char* measured = "";  ///< the figure that chose it: device, size, time, against what
};

/// The row of `table` for architecture `sm` and problem `p`: among the rows that match p, the one
/// with the greatest sm at most `sm`, the more specific on a tie. Every table has a first row for
/// sm 0 and every problem (the fallback).
template <class Policy, size_t N>
const Tuned<Policy>& tunedFor(const Tuned<Policy> (&table)[N], SmVersion sm,
                              const ProblemClass& p = {}) {
  if (table[0].sm != 0 || table[0].problem.specificity() != 0) {
    throw Error("a policy table needs a first row for sm 0 and every problem (the fallback)");
  }
  const Tuned<Policy>* chosen = &table[0];
  for (const Tuned<Policy>& row : table) {
    if (row.sm > sm || !row.problem.matches(p)) continue;
    if (row.sm > chosen->sm ||
        (row.sm == chosen->sm && row.problem.specificity() > chosen->problem.specificity()))
      chosen = &row;
  }
  return *chosen;
}

/// The architecture of the GPU a device algorithm runs on (device 0), or kSimulatedSm when there
/// is none.
SmVersion currentSm();
/// The SM count of that GPU, or kSimulatedSmCount when there is none.
uint32_t currentSmCount();

}  // namespace obsidian
