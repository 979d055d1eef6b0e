/// A device algorithm as one descriptor, so that adding one is cheap and uniform. A descriptor is a
/// struct with
///  - `Policy`: the policy type, and `fields()`: its fields as data (name, range, meaning), a
///    Boost.Hana tuple of `field(...)` / `choiceField(...)`;
///  - `table`: its policy table (`Tuned<Policy>` rows keyed by architecture and ProblemClass);
///  - `name`, `header`, `summary`: what `obsidian-tune --policies` and the docs print;
///  - its kernel maker(s) and argument binder, used by its ready calls.
/// From the descriptor, the generic code here gives what every algorithm needs alike: the
/// policy for a target and problem (table row plus the caller's overrides, range-checked), the
/// policy's text and cache key, the kernel memo, one Options type and one launch for GPU buffers
/// and host vectors (on the simulator), and the catalogue's entry (device/catalogue.hpp).
/// @file
#pragma once

#include <algorithm>
#include <array>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "obsidian/device/dispatch.hpp"
#include "obsidian/device/policy.hpp"
#include "obsidian/operators.hpp"
#include "obsidian/runtime.hpp"
#include "obsidian/sim.hpp"

namespace obsidian::device {

namespace hana = boost::hana;

// ---------------------------------------------------------------- policy fields as data
/// One field of a policy: its name, the member it is, the values it may take (min..max; for a
/// choice, the indices of `choices`), and what it means.
template <class Policy, class M>
struct Field {
  const char* name;              ///< as in a tuning space's parameters and in overrides
  M Policy::*member;             ///< the policy's member
  int64_t min;                   ///< the smallest value (a choice: 0)
  int64_t max;                   ///< the largest value (a choice: the last index)
  const char* doc;               ///< what it means
  std::span<const M> choices{};  ///< an enumeration's values (named by name(value)); else empty
};

/// An integer or boolean field (a bool's range is 0..1).
template <class Policy, class M>
constexpr Field<Policy, M> field(const char* name, M Policy::*member, int64_t min, int64_t max,
                                 const char* doc) {
  return {name, member, min, max, doc, {}};
}
/// A field that takes one of an enumeration's values, named by `name(value)`.
template <class Policy, class M, size_t N>
constexpr Field<Policy, M> choiceField(const char* name, M Policy::*member,
                                       const std::array<M, N>& choices, const char* doc) {
  return {name, member, 0, static_cast<int64_t>(N) - 1, doc, std::span<const M>(choices)};
}

/// A field as plain data, for tools (tuning spaces, --policies).
struct FieldInfo {
  std::string name;                  ///< the field's name
  std::string doc;                   ///< what it means
  int64_t min = 0;                   ///< its smallest value
  int64_t max = 0;                   ///< its largest value
  std::vector<std::string> choices;  ///< a choice's names (empty for a number)
  bool boolean = false;              ///< a bool (true/false)
};

/// Sets one field of a policy by name; value is a number, true/false, or a choice's name.
struct PolicySetting {
  std::string field;  ///< the field's name
  std::string value;  ///< its value as text
};

namespace detail {
// The value of field f of p as text.
template <class P, class M>
std::string fieldText(const Field<P, M>& f, const P& p) {
  const M v = p.*(f.member);
  if constexpr (std::is_same_v<M, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_enum_v<M>) {
    return name(v);
  } else {
    return std::to_string(v);
  }
}
// Sets field f of p from text, or throws naming the algorithm, the field and its range.
template <class P, class M>
void setFieldText(const char* algorithm, const Field<P, M>& f, P& p, const std::string& text) {
  const auto fail = [&](const std::string& range) {
    throw Error(std::string(algorithm) + " policy: field '" + f.name + "' takes " + range +
                "; got '" + text + "'");
  };
  if constexpr (std::is_same_v<M, bool>) {
    if (text == "true" || text == "1") {
      p.*(f.member) = true;
    } else if (text == "false" || text == "0") {
      p.*(f.member) = false;
    } else {
      fail("true or false");
    }
  } else if constexpr (std::is_enum_v<M>) {
    std::string known;
    for (const M& c : f.choices) {
      if (name(c) == text) {
        p.*(f.member) = c;
        return;
      }
      known += (known.empty() ? "" : ", ") + name(c);
    }
    fail("one of " + known);
  } else {
    const std::string range = std::to_string(f.min) + ".." + std::to_string(f.max);
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(text, &used);
    } catch (const std::exception&) {
      fail(range);
    }
    if (used != text.size() || v < f.min || v > f.max) fail(range);
    p.*(f.member) = static_cast<M>(v);
  }
}
}  // namespace detail

/// The descriptor's fields as plain data.
template <class D>
std::vector<FieldInfo> policyFields() {
  std::vector<FieldInfo> out;
  hana::for_each(D::fields(), [&](const auto& f) {
    FieldInfo info{f.name, f.doc, f.min, f.max, {}, false};
    using M = std::remove_cvref_t<decltype(std::declval<typename D::Policy>().*(f.member))>;
    if constexpr (std::is_enum_v<M>) {
      for (const auto& c : f.choices) info.choices.push_back(name(c));
    }
    info.boolean = std::is_same_v<M, bool>;
    out.push_back(std::move(info));
  });
  return out;
}

/// The policy as text, "threads 512, unroll 4, tiles true": every field in order (also the
/// policy's part of its kernels' cache keys).
template <class D>
std::string describePolicy(const typename D::Policy& p) {
  std::string out;
  hana::for_each(D::fields(), [&](const auto& f) {
    out += (out.empty() ? "" : ", ") + std::string(f.name) + " " + detail::fieldText(f, p);
  });
  return out;
}

/// p with the settings applied, in order (Error for an unknown field or a value out of range).
template <class D>
typename D::Policy withSettings(typename D::Policy p, const std::vector<PolicySetting>& settings) {
  for (const PolicySetting& s : settings) {
    bool found = false;
    std::string known;
    hana::for_each(D::fields(), [&](const auto& f) {
      known += (known.empty() ? "" : ", ") + std::string(f.name);
      if (s.field == f.name) {
        detail::setFieldText(D::name, f, p, s.value);
        found = true;
      }
    });
    if (!found) {
      throw Error(std::string(D::name) + " policy: no field '" + s.field + "'; its fields are " +
                  known);
    }
  }
  return p;
}

/// The settings that make a policy p from any other: every field of p.
template <class D>
std::vector<PolicySetting> settingsOf(const typename D::Policy& p) {
  std::vector<PolicySetting> out;
  hana::for_each(D::fields(), [&](const auto& f) {
    out.push_back({f.name, detail::fieldText(f, p)});
  });
  return out;
}

// ---------------------------------------------------------------- where an algorithm runs
/// The machine a ready call runs on: device 0's GPU, or the simulator standing for the
/// architecture the tables were measured on.
struct Target {
  bool gpu = false;                      ///< the GPU, or the simulator
  SmVersion sm = kSimulatedSm;           ///< its architecture
  uint32_t smCount = kSimulatedSmCount;  ///< its SM count
  /// Device 0.
  static Target onGpu() { return {true, currentSm(), currentSmCount()}; }
  /// The simulator.
  static Target simulator() { return {false, kSimulatedSm, kSimulatedSmCount}; }
  /// The target's part of a kernel's cache key.
  std::string key() const { return (gpu ? "gpu" : "sim") + std::to_string(sm); }
};

/// What every ready call of a device algorithm takes besides its data.
struct Options {
  /// GPU: the stream to run on (null: the default stream).
  const gpu::Stream* stream = nullptr;
  /// GPU: wait for the result (and report the kernel's errors) before returning.
  bool synchronize = true;
  /// GPU: run the bounds-checked variant of the kernel (gpu::LaunchOptions::checked).
  bool checked = false;
  /// Simulator: its options (hazard detection, counters: simulation.profile).
  SimOptions simulation = {};
  /// Simulator: where to put what the run counted (null: nowhere).
  SimStats* simulated = nullptr;
  /// Simulator: where to append what each of the call's launches counted (null: nowhere).
  std::vector<SimStats>* simulatedEach = nullptr;
  /// Changes to the table's policy, field by field (the descriptor's fields(); each checked
  /// against its range).
  std::vector<PolicySetting> policy = {};
  /// Blocks of a grid-sized algorithm (reduce, histogramEven): 0 for the algorithm's own choice
  /// (what fills the device; a few on the simulator).
  uint32_t blocks = 0;
  /// Algorithms that add into their output (histogramEven): add to what is there instead of
  /// zeroing it first.
  bool accumulate = false;
};

/// Options `o` with settings that make policy p (every field of it) instead of the table's.
template <class D>
Options withPolicy(const typename D::Policy& p, Options o = {}) {
  o.policy = settingsOf<D>(p);
  return o;
}

/// The policy a ready call of D uses: the table's row for the target and problem, with the
/// options' settings.
template <class D>
typename D::Policy policyFor(const Target& t, const ProblemClass& problem,
                             const Options& options = {}) {
  return withSettings<D>(tunedFor(D::table, t.sm, problem).policy, options.policy);
}

/// Where a ready call's arrays are: device buffers (the GPU) or host arrays (the simulator).
template <class B>
struct BufferSide;
/// A device buffer: its ready call runs on the GPU.
template <KernelScalar X>
struct BufferSide<gpu::DeviceBuffer<X>> {
  static constexpr bool gpu = true;  ///< on the GPU
  using Element = X;                 ///< the element type
};
/// A host vector: its ready call runs on the simulator.
template <KernelScalar X>
struct BufferSide<std::vector<X>> {
  static constexpr bool gpu = false;  ///< on the host (the simulator)
  using Element = X;                  ///< the element type
};
/// A ready call's array: a gpu::DeviceBuffer (runs on the GPU) or a std::vector (the
/// simulator).
template <class B>
concept Buffer = requires {
  BufferSide<std::remove_cvref_t<B>>::gpu;
};
/// The element type of a Buffer.
template <Buffer B>
using ElementOf = typename BufferSide<std::remove_cvref_t<B>>::Element;
/// The sides of a ready call's arrays agree: both on the GPU or both on the host.
template <class A, class B>
concept SameSide =
    Buffer<A> && Buffer<B> && BufferSide<std::remove_cvref_t<A>>::gpu ==
    BufferSide<std::remove_cvref_t<B>>::gpu&& std::is_same_v<ElementOf<A>, ElementOf<B>>;

/// A count (or offsets) a ready call writes or reads: a buffer of u32 on the same side as its data.
template <class C, class In>
concept CountsOf =
    Buffer<C> && Buffer<In> && std::is_same_v<ElementOf<C>, uint32_t> &&
    BufferSide<std::remove_cvref_t<C>>::gpu == BufferSide<std::remove_cvref_t<In>>::gpu;
/// An operator a ready call folds or scans X with: f(Exp<X>, Exp<X>) -> Exp<X>.
template <class Op, class X>
concept OperatorOn = std::is_invocable_r_v < Exp<X>,
        Op,
const Exp<X>&, const Exp<X>& > ;

/// Device memory a ready call keeps from one call to the next (CUB's temporary storage): one
/// allocation, grown to the largest call's need. Passing the same one to every call saves the
/// allocations; calls that share one must not overlap. A call without one makes its own.
class Scratch {
 public:
  /// The bytes held now.
  size_t bytes() const { return words_ ? words_->size() * 8 : 0; }
  /// @cond INTERNAL
  // The address of at least `bytes` bytes (8-byte aligned; at least one word).
  uint64_t reserve(size_t bytes) {
    const size_t words = std::max<size_t>((bytes + 7) / 8, 1);
    if (!words_ || words_->size() < words) {
      words_.reset();  // freed before the larger one is made
      words_.emplace(words);
    }
    return words_->address();
  }
  /// @endcond
 private:
  std::optional<gpu::DeviceBuffer<uint64_t>> words_;
};

/// The target of a ready call on buffers of type B.
template <Buffer B>
Target targetOf() {
  return BufferSide<std::remove_cvref_t<B>>::gpu ? Target::onGpu() : Target::simulator();
}

/// Runs kernel k on the target with the arguments: a GPU launch (stream, synchronize, checked)
/// or a simulation (simulation, simulated).
void launchOn(const Target& t, const Kernel& k, const std::vector<KernelArg>& args,
              const Options& options);

/// The kernel of D kept under (operator, D's name, the target, the policy, parts), made by
/// `make` on first use; see detail::memoKernel.
template <class D>
Kernel kernelFor(const Target& t, const typename D::Policy& policy, const std::string& op,
                 std::vector<std::string> parts, const std::function<Kernel()>& make) {
  parts.insert(parts.begin(), {D::name, t.key(), describePolicy<D>(policy)});
  return detail::memoKernel(detail::joinKey(op, parts), make);
}

// ---------------------------------------------------------------- the catalogue's entries
/// One row of a policy table as text.
struct RowInfo {
  SmVersion sm = 0;      ///< from which architecture
  std::string problem;   ///< the problems it applies to (describe(ProblemClass))
  std::string policy;    ///< describePolicy
  std::string command;   ///< the command that measured it
  std::string measured;  ///< what it measured
};
/// A device algorithm as data: what `obsidian-tune --policies` prints and the provenance test
/// checks.
struct AlgorithmInfo {
  std::string name;               ///< the ready call's name
  std::string header;             ///< where it is declared
  std::string summary;            ///< what it computes
  std::vector<FieldInfo> fields;  ///< its policy's fields
  std::vector<RowInfo> rows;      ///< its policy table
};
/// The entry of descriptor D.
template <class D>
AlgorithmInfo describeAlgorithm() {
  AlgorithmInfo a{D::name, D::header, D::summary, policyFields<D>(), {}};
  for (const auto& row : D::table) {
    a.rows.push_back(
        {row.sm, describe(row.problem), describePolicy<D>(row.policy), row.command, row.measured});
  }
  return a;
}

/// The class of operator Op (OperatorClass).
template <class Op>
constexpr OperatorClass operatorClassOf() {
  if constexpr (std::is_same_v<Op, Sum>) {
    return OperatorClass::Sum;
  } else if constexpr (std::is_same_v<Op, Min> || std::is_same_v<Op, Max>) {
    return OperatorClass::MinMax;
  } else {
    return OperatorClass::Other;
  }
}
/// The problem class of a fold or scan of X with Op.
template <class X, class Op>
constexpr ProblemClass problemOf() {
  return {static_cast<uint32_t>(sizeof(X)), operatorClassOf<Op>(), Values::KeysOnly, Scale::Any};
}

}  // namespace obsidian::device
