// The segmented sort benchmark (the catalogue at CUB's speed, for many sorts in one call). In
// one run, on the same random u32 keys (and u32 values): the library's segmented sort
// (obsidian/device/segmented_sort.hpp, the policy table's row; --set field=value overrides it)
// against cub::DeviceSegmentedSort::SortKeys / SortPairs and, beside it,
// cub::DeviceSegmentedRadixSort::SortKeys / SortPairs (both given the offsets as begin offsets
// d_offsets and end offsets d_offsets + 1, 32-bit as ours), all with their storage kept between
// calls, ascending over all 32 bits. The workloads: n keys (2^24; --only sets it) in segments of
// 128 keys, of 4096 keys, of random lengths uniform in 1 .. 2000, and 16 segments of n / 16;
// and pairs in the random lengths. Beside them a 16-byte copy kernel of the keys (and values):
// what a sort of a segment that fits one tile must at least move. Every output is checked: ours
// and CUB's segmented radix sort bit for bit against CUB's segmented sort (all three are stable;
// for pairs the values too), and all three against a host stable sort of each segment for the
// random lengths (keys and pairs).
//
// Usage: obsidian-bench-segsort [--quick] [--only N] [--runs N]
//        [--workloads fixed128,fixed4096,random2000,long16,pairs] [--set field=value ...]
//        [--json FILE]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <obsidian/obsidian.hpp>
#include <random>

#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cub_segmented_sort.hpp"

namespace {

using namespace obsidian;
using bench::mutablePtr;
using bench::ptr;
using nlohmann::json;

// One layout of segments over the n keys.
struct Workload {
  std::string name;      // its --workloads name
  std::string segments;  // in words, for the table
  std::vector<uint32_t> offsets;
  bool pairs = false;
  bool hostCheck = false;  // also checked against a host stable sort
};

// Offsets 0 .. n through segments of the lengths `next` draws (the last one cut at n).
template <class Next>
std::vector<uint32_t> offsetsOf(size_t n, Next next) {
  std::vector<uint32_t> offsets{0};
  while (offsets.back() < n) {
    offsets.push_back(static_cast<uint32_t>(std::min<size_t>(n, offsets.back() + next())));
  }
  return offsets;
}

std::vector<Workload> workloads(size_t n) {
  std::mt19937 rng(7);
  const auto random = offsetsOf(n, [&] { return 1 + rng() % 2000; });
  const size_t sixteenth = std::max<size_t>(1, n / 16);
  return {
      {"fixed128", "128 each", offsetsOf(n, [] { return 128; }), false, false},
      {"fixed4096", "4096 each", offsetsOf(n, [] { return 4096; }), false, false},
      {"random2000", "random 1..2000", random, false, true},
      {"long16", "16 of n/16", offsetsOf(n, [&] { return sixteenth; }), false, false},
      {"pairs", "random 1..2000", random, true, true},
  };
}

struct Result {
  std::string workload, kind, segmentsText, policy;
  size_t n = 0, segments = 0;
  bench::Timing ours, cub, cubRadix, copy;
  bool oursOk = true, cubOk = true, hostChecked = false;
};

// The host's stable sort of every segment: the keys, and the values they carry.
void hostSort(const std::vector<uint32_t>& keys, const std::vector<uint32_t>& values,
              const std::vector<uint32_t>& offsets, bool pairs, std::vector<uint32_t>& wantKeys,
              std::vector<uint32_t>& wantValues) {
  wantKeys.assign(keys.size(), 0);
  wantValues.assign(pairs ? keys.size() : 0, 0);
  std::vector<uint32_t> place;
  for (size_t s = 0; s + 1 < offsets.size(); ++s) {
    place.resize(offsets[s + 1] - offsets[s]);
    std::iota(place.begin(), place.end(), offsets[s]);
    std::stable_sort(place.begin(), place.end(),
                     [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
    for (size_t i = 0; i < place.size(); ++i) {
      wantKeys[offsets[s] + i] = keys[place[i]];
      if (pairs) wantValues[offsets[s] + i] = values[place[i]];
    }
  }
}

Result runWorkload(const Workload& w, const std::vector<uint32_t>& hostKeys,
                   const std::vector<uint32_t>& hostValues, const gpu::DeviceBuffer<uint32_t>& keys,
                   const gpu::DeviceBuffer<uint32_t>& values, const device::Options& options,
                   int runs) {
  const size_t n = keys.size(), segments = w.offsets.size() - 1;
  const bool pairs = w.pairs;
  Result r;
  r.workload = w.name;
  r.kind = pairs ? "pairs" : "keys";
  r.segmentsText = w.segments;
  r.n = n;
  r.segments = segments;
  const device::Target t = device::Target::onGpu();
  const SegmentedSortPolicy policy = device::policyFor<device::SegmentedSort>(
      t, device::SegmentedSort::problem<uint32_t>(pairs), options);
  r.policy = device::describePolicy<device::SegmentedSort>(policy);
  const gpu::DeviceBuffer<uint32_t> offsets(w.offsets);
  gpu::DeviceBuffer<uint32_t> out(n), cubOut(n), radixOut(n);
  gpu::DeviceBuffer<uint32_t> valuesOut(pairs ? n : 0), cubValuesOut(pairs ? n : 0),
      radixValuesOut(pairs ? n : 0);
  device::SegmentedSortTemp temp;
  const size_t cubBytes = std::max(
      bench::cubSegmentedSortTempBytes(n, segments, bench::CubSegmented::Sort, pairs),
      bench::cubSegmentedSortTempBytes(n, segments, bench::CubSegmented::RadixSort, pairs));
  void* cubTemp = bench::deviceAlloc(std::max<size_t>(cubBytes, 1));
  device::Options async = options;
  async.synchronize = false;
  const auto ours = [&](const device::Options& o) {
    if (pairs) {
      device::segmentedSortPairs(keys, out, values, valuesOut, offsets, {}, o, &temp);
    } else {
      device::segmentedSortKeys(keys, out, offsets, {}, o, &temp);
    }
  };
  const auto cub = [&](bench::CubSegmented which, gpu::DeviceBuffer<uint32_t>& keysTo,
                       gpu::DeviceBuffer<uint32_t>& valuesTo) {
    bench::cubSegmentedSort(ptr(keys.address()), mutablePtr(keysTo.address()),
                            pairs ? ptr(values.address()) : nullptr,
                            pairs ? mutablePtr(valuesTo.address()) : nullptr, n, segments,
                            ptr(offsets.address()), which, cubTemp, cubBytes);
  };
  ours(options);
  cub(bench::CubSegmented::Sort, cubOut, cubValuesOut);
  cub(bench::CubSegmented::RadixSort, radixOut, radixValuesOut);
  bench::checkCuda("the sorts");
  const std::vector<uint32_t> got = out.download(), theirs = cubOut.download(),
                              radix = radixOut.download();
  const std::vector<uint32_t> none;
  const std::vector<uint32_t> gotValues = pairs ? valuesOut.download() : none;
  const std::vector<uint32_t> theirValues = pairs ? cubValuesOut.download() : none;
  const std::vector<uint32_t> radixValues = pairs ? radixValuesOut.download() : none;
  r.oursOk = got == theirs && gotValues == theirValues;
  r.cubOk = radix == theirs && radixValues == theirValues;
  if (w.hostCheck) {
    std::vector<uint32_t> want, wantValues;
    hostSort(hostKeys, hostValues, w.offsets, pairs, want, wantValues);
    r.oursOk = r.oursOk && got == want && gotValues == wantValues;
    r.cubOk = r.cubOk && theirs == want && theirValues == wantValues;
    r.hostChecked = true;
  }
  r.ours = bench::timeGpu([&](int) { ours(async); }, runs);
  r.cub = bench::timeGpu([&](int) { cub(bench::CubSegmented::Sort, cubOut, cubValuesOut); }, runs);
  r.cubRadix = bench::timeGpu(
      [&](int) { cub(bench::CubSegmented::RadixSort, radixOut, radixValuesOut); }, runs);
  r.copy = bench::timeGpu(
      [&](int) {
        bench::copyKernel(ptr(keys.address()), mutablePtr(out.address()), n * 4);
        if (pairs) bench::copyKernel(ptr(values.address()), mutablePtr(valuesOut.address()), n * 4);
      },
      runs);
  bench::deviceFree(cubTemp);
  return r;
}

void print(const Result& r) {
  std::printf(
      "%-10s %-5s %-14s %10zu %8zu %10.2f %10.2f %7.3f %10.2f %7.3f %8.2f %8.2f  %s%s%s  "
      "[%s]\n",
      r.workload.c_str(), r.kind.c_str(), r.segmentsText.c_str(), r.n, r.segments,
      r.ours.medianMs * 1e3, r.cub.medianMs * 1e3, r.ours.medianMs / r.cub.medianMs,
      r.cubRadix.medianMs * 1e3, r.ours.medianMs / r.cubRadix.medianMs,
      r.n / (r.ours.medianMs * 1e-3) / 1e9, r.copy.medianMs * 1e3, r.oursOk ? "ok" : "WRONG",
      r.cubOk ? "" : " (CUB WRONG)", r.hostChecked ? " (host)" : "", r.policy.c_str());
  std::fflush(stdout);
}

json toJson(const Result& r) {
  return json{{"workload", r.workload},
              {"kind", r.kind},
              {"type", "u32"},
              {"segmentation", r.segmentsText},
              {"n", r.n},
              {"segments", r.segments},
              {"policy", r.policy},
              {"ours", bench::timingJson(r.ours)},
              {"cub", bench::timingJson(r.cub)},
              {"cub_radix", bench::timingJson(r.cubRadix)},
              {"copy", bench::timingJson(r.copy)},
              {"ours_ok", r.oursOk},
              {"cub_ok", r.cubOk},
              {"host_checked", r.hostChecked}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian's segmented sort against CUB's on the GPU"};
  bench::CommonOptions common;
  bench::addCommonOptions(app, common);
  std::string only = "fixed128,fixed4096,random2000,long16,pairs";
  app.add_option("--workloads", only,
                 "which, comma-separated: fixed128, fixed4096 (segments of that many keys), "
                 "random2000 (random lengths 1..2000), long16 (16 segments), pairs (u32 values, "
                 "random lengths)");
  std::vector<std::string> sets;
  app.add_option("--set", sets, "a policy field=value (device::SegmentedSort::fields())");
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  device::Options options;
  for (const std::string& s : sets) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos) {
      std::cerr << "--set takes field=value; got " << s << "\n";
      return 2;
    }
    options.policy.push_back({s.substr(0, eq), s.substr(eq + 1)});
  }
  if (!bench::deviceOrSkip()) return bench::kSkipped;
  // --only: that many keys; --quick: 2^20 (in L2: not a measurement to report).
  const size_t n = common.only ? common.only : common.quick ? size_t{1} << 20 : size_t{1} << 24;
  const auto wanted = [&](const std::string& name) {
    return ("," + only + ",").find("," + name + ",") != std::string::npos;
  };
  std::cout << "workload   kind  segments                n segments    ours us     CUB us "
               "ours/CUB   radix us o/radix  GKeys/s  copy us check\n";
  json rows = json::array();
  bool ok = true;
  try {
    std::mt19937 rng(1);
    std::vector<uint32_t> hostKeys(n), hostValues(n);
    for (uint32_t& k : hostKeys) k = rng();
    for (uint32_t& v : hostValues) v = rng();
    const gpu::DeviceBuffer<uint32_t> keys(hostKeys), values(hostValues);
    for (const Workload& w : workloads(n)) {
      if (!wanted(w.name)) continue;
      const Result r = runWorkload(w, hostKeys, hostValues, keys, values, options, common.runs);
      print(r);
      rows.push_back(toJson(r));
      ok = ok && r.oursOk && r.cubOk;
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
