// The selections benchmark: in one run, on the same random data, the library's ready calls of
// obsidian/device/select.hpp (device::Select's and device::ReduceByKey's policy table rows;
// --set field=value overrides them) against CUB's DeviceSelect, DevicePartition,
// DeviceRunLengthEncode, DeviceReduce::ReduceByKey and DeviceScan::InclusiveScanByKey, and a
// 16-byte copy kernel moving as many bytes as the call must at least read plus write (its
// reads and its writes half of them each) as the floor. Inputs below 2^24 elements rotate over
// up to 16 disjoint buffers. Every output is checked: CUB's against a host reference up to
// 2^22 elements, ours against CUB's at every size (counts, then the elements up to them; the
// f32 folds within a relative 1e-4, since the two may group a run's additions differently).
//
// Ops: select-if (u32 below 2^31: half kept), select-flagged (u8 flags, half set), unique (u32
// runs of 1..8 equal keys), partition-if (below 2^31), partition-3way (below 2^30, then below
// 2^31), rle (the runs), reduce-by-key and scan-by-key (the runs' keys, f32 values, Sum).
//
// Usage: obsidian-bench-select [--quick] [--only N] [--runs N] [--types select-if,...]
//        [--set field=value ...] [--json FILE]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <obsidian/obsidian.hpp>
#include <random>
#include <sstream>

#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cub_select.hpp"

namespace {

using namespace obsidian;
using bench::CubSelect;
using bench::mutablePtr;
using bench::ptr;
using nlohmann::json;

constexpr uint32_t kHalf = 1u << 31, kQuarter = 1u << 30;
// CUB's results are checked against the host's up to this size.
constexpr size_t kHostChecked = size_t{1} << 22;

struct Op {
  const char* name;
  const char* type;  // the elements (keys), then flags or values
  CubSelect call;
};
const Op kOps[] = {
    {"select-if", "u32", CubSelect::If},
    {"select-flagged", "u32/u8", CubSelect::Flagged},
    {"unique", "u32", CubSelect::Unique},
    {"partition-if", "u32", CubSelect::PartitionIf},
    {"partition-3way", "u32", CubSelect::PartitionThreeWay},
    {"rle", "u32", CubSelect::RunLengthEncode},
    {"reduce-by-key", "u32/f32", CubSelect::ReduceByKey},
    {"scan-by-key", "u32/f32", CubSelect::ScanByKey},
};

// The predicates, stateless so that their kernels are kept by type.
const auto belowHalf = [](const Exp<uint32_t>& v) { return v < kHalf; };
const auto belowQuarter = [](const Exp<uint32_t>& v) { return v < kQuarter; };

bool usesRuns(CubSelect c) {
  return c == CubSelect::Unique || c == CubSelect::RunLengthEncode || c == CubSelect::ReduceByKey ||
         c == CubSelect::ScanByKey;
}
bool usesValues(CubSelect c) { return c == CubSelect::ReduceByKey || c == CubSelect::ScanByKey; }

// One input on the host: elements (keys), and the flags or values where the op reads them.
struct HostInput {
  std::vector<uint32_t> keys;
  std::vector<uint8_t> flags;
  std::vector<float> values;
};

// Random u32 words, or runs of 1..8 equal random keys; u8 flags, half of them 1; f32 values in
// [0.25, 1.25) (positive: a run's sum has no cancellation, so a relative tolerance holds).
HostInput randomInput(CubSelect c, size_t n, uint32_t seed) {
  HostInput h;
  std::mt19937_64 rng(seed);
  h.keys.resize(n);
  if (usesRuns(c)) {
    for (size_t i = 0; i < n;) {
      const uint64_t r = rng();
      const size_t len = std::min<size_t>(n - i, 1 + (r & 7));
      std::fill_n(h.keys.begin() + static_cast<ptrdiff_t>(i), len, static_cast<uint32_t>(r >> 32));
      i += len;
    }
  } else {
    for (uint32_t& x : h.keys) x = static_cast<uint32_t>(rng() >> 32);
  }
  if (c == CubSelect::Flagged) {
    h.flags.resize(n);
    for (uint8_t& f : h.flags) f = static_cast<uint8_t>(rng() >> 63);
  }
  if (usesValues(c)) h.values = bench::randomFloats(n, seed + 1000, 0.25f, 1.25f, false);
  return h;
}

// The same on the device.
struct DeviceInput {
  gpu::DeviceBuffer<uint32_t> keys;
  gpu::DeviceBuffer<uint8_t> flags;
  gpu::DeviceBuffer<float> values;
  explicit DeviceInput(const HostInput& h) : keys(h.keys), flags(h.flags), values(h.values) {}
};

// One side's outputs (ours or CUB's); those the op does not write are empty.
//   a: the selection, partition, first part, unique keys; b: the second part or run lengths;
//   c: the unselected elements; f: the folds or scanned values; count: the count(s) or runs.
struct Outputs {
  gpu::DeviceBuffer<uint32_t> a, b, c;
  gpu::DeviceBuffer<float> f;
  gpu::DeviceBuffer<uint32_t> count;
  Outputs(CubSelect op, size_t n)
      : a(op == CubSelect::ScanByKey ? 0 : n),
        b(op == CubSelect::PartitionThreeWay || op == CubSelect::RunLengthEncode ? n : 0),
        c(op == CubSelect::PartitionThreeWay ? n : 0),
        f(usesValues(op) ? n : 0),
        count(op == CubSelect::PartitionThreeWay ? 2 : 1) {}
  // Every element set to a value no result has in its place, so a place left unwritten shows.
  void poison() {
    a.fill(0xdeadbeefu);
    b.fill(0xdeadbeefu);
    c.fill(0xdeadbeefu);
    f.fill(std::nanf(""));
    count.fill(0xdeadbeefu);
  }
};

// Outputs on the host, as downloaded or as the host reference computes them.
struct Result {
  std::vector<uint32_t> a, b, c;
  std::vector<float> f;
  std::vector<uint32_t> count;
};

Result download(const Outputs& o) {
  return {o.a.download(), o.b.download(), o.c.download(), o.f.download(), o.count.download()};
}

// What CUB's calls compute, on the host (f32 folds left to right).
Result reference(CubSelect op, const HostInput& h) {
  const std::vector<uint32_t>& v = h.keys;
  const size_t n = v.size();
  Result r;
  const auto compact = [&](auto keep) {
    for (size_t i = 0; i < n; ++i) {
      if (keep(i)) r.a.push_back(v[i]);
    }
    r.count = {static_cast<uint32_t>(r.a.size())};
  };
  const auto head = [&](size_t i) { return i == 0 || v[i] != v[i - 1]; };
  switch (op) {
    case CubSelect::If: compact([&](size_t i) { return v[i] < kHalf; }); break;
    case CubSelect::Flagged: compact([&](size_t i) { return h.flags[i] != 0; }); break;
    case CubSelect::Unique: compact(head); break;
    case CubSelect::PartitionIf: {
      compact([&](size_t i) { return v[i] < kHalf; });
      for (size_t i = n; i-- > 0;) {  // the others from the back, last first
        if (v[i] >= kHalf) r.a.push_back(v[i]);
      }
      break;
    }
    case CubSelect::PartitionThreeWay: {
      for (uint32_t x : v) (x < kQuarter ? r.a : x < kHalf ? r.b : r.c).push_back(x);
      r.count = {static_cast<uint32_t>(r.a.size()), static_cast<uint32_t>(r.b.size())};
      break;
    }
    case CubSelect::RunLengthEncode:
    case CubSelect::ReduceByKey:
    case CubSelect::ScanByKey: {
      float fold = 0;
      for (size_t i = 0; i < n; ++i) {
        if (head(i)) {
          r.a.push_back(v[i]);
          r.b.push_back(0);
          if (op == CubSelect::ReduceByKey && i > 0) r.f.push_back(fold);
          fold = 0;
        }
        ++r.b.back();
        if (usesValues(op)) fold += h.values[i];
        if (op == CubSelect::ScanByKey) r.f.push_back(fold);
      }
      if (op == CubSelect::ReduceByKey && n > 0) r.f.push_back(fold);
      r.count = {static_cast<uint32_t>(r.a.size())};
      break;
    }
  }
  return r;
}

// x and y agree on their first `count` elements (both must have them).
template <class T, class Eq>
bool samePrefix(const std::vector<T>& x, const std::vector<T>& y, size_t count, Eq eq) {
  if (x.size() < count || y.size() < count) return false;
  for (size_t i = 0; i < count; ++i) {
    if (!eq(x[i], y[i])) return false;
  }
  return true;
}
bool exact(uint32_t x, uint32_t y) { return x == y; }
bool near(float x, float y) {
  return std::isfinite(x) && std::isfinite(y) &&
         std::abs(x - y) <= 1e-4f * std::max(std::abs(x), std::abs(y));
}

// `got` computes what `want` does for input of n elements: the count(s), then every element
// up to them (partition-if: all n; scan-by-key: all n values, within the tolerance).
bool same(CubSelect op, const Result& got, const Result& want, size_t n) {
  if (op == CubSelect::ScanByKey) return samePrefix(got.f, want.f, n, near);
  if (got.count.empty() || want.count.empty() || got.count[0] != want.count[0] ||
      got.count[0] > n) {
    return false;
  }
  const size_t count = got.count[0];
  switch (op) {
    case CubSelect::PartitionIf: return samePrefix(got.a, want.a, n, exact);
    case CubSelect::PartitionThreeWay: {
      if (got.count.size() < 2 || want.count.size() < 2 || got.count[1] != want.count[1] ||
          count + got.count[1] > n) {
        return false;
      }
      const size_t second = got.count[1];
      return samePrefix(got.a, want.a, count, exact) && samePrefix(got.b, want.b, second, exact) &&
             samePrefix(got.c, want.c, n - count - second, exact);
    }
    case CubSelect::RunLengthEncode:
      return samePrefix(got.a, want.a, count, exact) && samePrefix(got.b, want.b, count, exact);
    case CubSelect::ReduceByKey:
      return samePrefix(got.a, want.a, count, exact) && samePrefix(got.f, want.f, count, near);
    default: return samePrefix(got.a, want.a, count, exact);
  }
}

// The least bytes the op reads plus writes, given its result (the count words aside).
size_t minimumBytes(CubSelect op, size_t n, const Result& r) {
  const size_t count = r.count.empty() ? 0 : r.count[0];
  switch (op) {
    case CubSelect::If:
    case CubSelect::Unique: return 4 * n + 4 * count;
    case CubSelect::Flagged: return 5 * n + 4 * count;
    case CubSelect::PartitionIf:
    case CubSelect::PartitionThreeWay: return 8 * n;
    case CubSelect::RunLengthEncode: return 4 * n + 8 * count;
    case CubSelect::ReduceByKey: return 8 * n + 8 * count;
    case CubSelect::ScanByKey: return 12 * n;
  }
  return 0;
}

// The library's call of op.
void ours(CubSelect op, const DeviceInput& in, Outputs& o, const device::Options& options) {
  switch (op) {
    case CubSelect::If: return device::selectIf(in.keys, o.a, o.count, belowHalf, options);
    case CubSelect::Flagged: return device::selectFlagged(in.keys, in.flags, o.a, o.count, options);
    case CubSelect::Unique: return device::selectUnique(in.keys, o.a, o.count, options);
    case CubSelect::PartitionIf:
      return device::partitionIf(in.keys, o.a, o.count, belowHalf, options);
    case CubSelect::PartitionThreeWay:
      return device::partitionThreeWay(in.keys, o.a, o.b, o.c, o.count, belowQuarter, belowHalf,
                                       options);
    case CubSelect::RunLengthEncode:
      return device::runLengthEncode(in.keys, o.a, o.b, o.count, options);
    case CubSelect::ReduceByKey:
      return device::reduceByKey(in.keys, in.values, o.a, o.f, o.count, Sum{}, options);
    case CubSelect::ScanByKey:
      return device::inclusiveScanByKey(in.keys, in.values, o.f, Sum{}, options);
  }
}

// CUB's call of op on the same buffers.
void cub(CubSelect op, const DeviceInput& in, Outputs& o, void* temp, size_t tempBytes) {
  bench::CubSelectArgs a;
  a.in = ptr(in.keys.address());
  a.aux = op == CubSelect::Flagged ? ptr(in.flags.address()) : ptr(in.values.address());
  a.out = mutablePtr(op == CubSelect::ScanByKey ? o.f.address() : o.a.address());
  a.out2 = mutablePtr(op == CubSelect::ReduceByKey ? o.f.address() : o.b.address());
  a.out3 = mutablePtr(o.c.address());
  a.count = mutablePtr(o.count.address());
  a.n = in.keys.size();
  bench::cubSelect(op, a, temp, tempBytes);
}

// The settings among `options`' that descriptor D has a field for.
template <class D>
device::Options optionsFor(const device::Options& options) {
  device::Options o = options;
  o.policy.clear();
  const std::vector<device::FieldInfo> fields = device::policyFields<D>();
  for (const device::PolicySetting& s : options.policy) {
    if (std::any_of(fields.begin(), fields.end(),
                    [&](const device::FieldInfo& f) { return f.name == s.field; })) {
      o.policy.push_back(s);
    }
  }
  return o;
}

struct Row {
  std::string kind, type, policy;
  size_t n = 0, bytes = 0;
  bench::Timing ours, cub, copy;
  bool oursOk = true, cubOk = true;
};

Row runOp(const Op& op, size_t n, const device::Options& all, int runs, uint32_t seed) {
  const CubSelect c = op.call;
  const bool byKey = c == CubSelect::RunLengthEncode || usesValues(c);
  const device::Options options =
      byKey ? optionsFor<device::ReduceByKey>(all) : optionsFor<device::Select>(all);
  Row r{op.name, op.type, "", n, 0, {}, {}, {}, true, true};
  const device::Target t = device::Target::onGpu();
  if (!byKey) {
    r.policy = device::describePolicy<device::Select>(
        device::policyFor<device::Select>(t, {4, OperatorClass::Any, Values::KeysOnly}, options));
  } else {
    // As the calls ask: rle keys alone with Sum (its lengths), the others pairs with Sum.
    const ProblemClass problem{4, OperatorClass::Sum,
                               usesValues(c) ? Values::Pairs : Values::KeysOnly};
    r.policy = device::describePolicy<device::ReduceByKey>(
        device::policyFor<device::ReduceByKey>(t, problem, options));
  }
  const size_t count = n >= (size_t{1} << 24) ? 1 : std::min<size_t>(16, (size_t{1} << 26) / n);
  std::vector<HostInput> host;
  std::vector<DeviceInput> inputs;
  for (size_t s = 0; s < count; ++s) {
    host.push_back(randomInput(c, n, seed + static_cast<uint32_t>(s)));
    inputs.emplace_back(host.back());
  }
  Outputs mine(c, n), theirs(c, n);
  const size_t tempBytes = bench::cubSelectTempBytes(c, n);
  void* temp = bench::deviceAlloc(std::max<size_t>(tempBytes, 1));
  device::Options async = options;
  async.synchronize = false;
  Result first;
  for (size_t s = 0; s < count; ++s) {
    mine.poison();
    theirs.poison();
    ours(c, inputs[s], mine, options);
    cub(c, inputs[s], theirs, temp, tempBytes);
    bench::checkCuda(op.name);
    const Result got = download(mine), want = download(theirs);
    if (n <= kHostChecked) r.cubOk = r.cubOk && same(c, want, reference(c, host[s]), n);
    r.oursOk = r.oursOk && same(c, got, want, n);
    if (s == 0) first.count = want.count;
  }
  // The floor: a copy whose reads plus writes are the op's least bytes, from rotating sources.
  r.bytes = minimumBytes(c, n, first);
  const size_t copyBytes = (r.bytes / 2 + 15) / 16 * 16;
  void* copyFrom = bench::deviceAlloc(copyBytes * count);
  void* copyTo = bench::deviceAlloc(copyBytes);
  r.ours = bench::timeGpu(
      [&](int run) { ours(c, inputs[static_cast<size_t>(run) % count], mine, async); }, runs);
  r.cub = bench::timeGpu(
      [&](int run) { cub(c, inputs[static_cast<size_t>(run) % count], theirs, temp, tempBytes); },
      runs);
  r.copy = bench::timeGpu(
      [&](int run) {
        const size_t s = static_cast<size_t>(run) % count;
        bench::copyKernel(static_cast<const char*>(copyFrom) + s * copyBytes, copyTo, copyBytes);
      },
      runs);
  bench::deviceFree(copyTo);
  bench::deviceFree(copyFrom);
  bench::deviceFree(temp);
  return r;
}

void printHeader(const Op& op) {
  std::printf(
      "\n%s\nkind           type            n    ours us     CUB us ours/CUB ours GB/s"
      "  copy us ours/copy check\n",
      op.name);
}

void print(const Row& r) {
  std::printf("%-14s %-7s %11zu %10.2f %10.2f %8.3f %9.0f %8.2f %9.2f  %s%s  [%s]\n",
              r.kind.c_str(), r.type.c_str(), r.n, r.ours.medianMs * 1e3, r.cub.medianMs * 1e3,
              r.ours.medianMs / r.cub.medianMs, bench::gbps(r.bytes, r.ours.medianMs),
              r.copy.medianMs * 1e3, r.ours.medianMs / r.copy.medianMs, r.oursOk ? "ok" : "WRONG",
              r.cubOk ? "" : " (CUB WRONG)", r.policy.c_str());
  std::fflush(stdout);
}

json toJson(const Row& r) {
  return json{{"kind", r.kind},
              {"type", r.type},
              {"n", r.n},
              {"bytes", r.bytes},
              {"policy", r.policy},
              {"ours", bench::timingJson(r.ours)},
              {"cub", bench::timingJson(r.cub)},
              {"copy", bench::timingJson(r.copy)},
              {"ours_ok", r.oursOk},
              {"cub_ok", r.cubOk}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian's selections, partitions and runs against CUB on the GPU"};
  bench::CommonOptions common;
  bench::addCommonOptions(app, common);
  std::string types;
  for (const Op& op : kOps) types += std::string(types.empty() ? "" : ",") + op.name;
  app.add_option("--types", types, "the ops, comma-separated (default: all of them)");
  std::vector<std::string> sets;
  app.add_option("--set", sets,
                 "a policy field=value (device::Select::fields(), device::ReduceByKey::fields(); "
                 "each call takes those of its descriptor)");
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  std::vector<const Op*> chosen;
  std::stringstream list(types);
  for (std::string name; std::getline(list, name, ',');) {
    const auto op =
        std::find_if(std::begin(kOps), std::end(kOps), [&](const Op& o) { return name == o.name; });
    if (op == std::end(kOps)) {
      std::cerr << "--types: no op " << name << "\n";
      return 2;
    }
    chosen.push_back(&*op);
  }
  device::Options options;
  const std::vector<device::FieldInfo> select = device::policyFields<device::Select>(),
                                       byKey = device::policyFields<device::ReduceByKey>();
  for (const std::string& s : sets) {
    const size_t eq = s.find('=');
    const std::string field = s.substr(0, eq);
    const auto named = [&](const device::FieldInfo& f) { return f.name == field; };
    if (eq == std::string::npos || (std::none_of(select.begin(), select.end(), named) &&
                                    std::none_of(byKey.begin(), byKey.end(), named))) {
      std::cerr << "--set takes field=value with a field of device::Select or "
                   "device::ReduceByKey; got "
                << s << "\n";
      return 2;
    }
    options.policy.push_back({field, s.substr(eq + 1)});
  }
  if (common.only >= (size_t{1} << 31)) {
    std::cerr << "--only: at most 2^31 - 1 elements (CUB's run-length encode counts in int)\n";
    return 2;
  }
  if (!bench::deviceOrSkip()) return bench::kSkipped;
  const std::vector<size_t> sizes =
      common.only    ? std::vector<size_t>{common.only}
      : common.quick ? std::vector<size_t>{size_t{1} << 20, size_t{1} << 24}
                     : std::vector<size_t>{size_t{1} << 20, size_t{1} << 22, size_t{1} << 24,
                                           size_t{1} << 26, size_t{1} << 28};
  json rows = json::array();
  bool ok = true;
  try {
    uint32_t seed = 1;
    for (const Op* op : chosen) {
      printHeader(*op);
      for (size_t n : sizes) {
        const Row r = runOp(*op, n, options, common.runs, seed);
        seed += 100;
        print(r);
        rows.push_back(toJson(r));
        ok = ok && r.oursOk && r.cubOk;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  if (!common.jsonPath.empty()) {
    std::ofstream f(common.jsonPath);
    f << json{{"device", bench::deviceName()}, {"rows", rows}}.dump(2) << "\n";
  }
  return ok ? 0 : 1;
}
