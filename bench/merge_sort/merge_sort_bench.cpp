// The merge sort benchmark (the catalogue at CUB's speed, for sorts by a comparator). In one
// run, on the same random keys: the library's merge sort (obsidian/device/merge_sort.hpp, the
// policy table's row; --set field=value overrides it) against cub::DeviceMergeSort::SortKeysCopy
// / SortPairsCopy (the Copy forms read the input and write the output, as ours: nothing is
// copied inside a timed run), both with their storage kept between calls: u32 keys by a < b,
// f32 keys by b < a (largest first; CUB's comparator a functor in cub_merge_sort.cu), and u32
// keys by a < b with u32 values. Beside them a 16-byte copy kernel of the keys (and values) as
// the per-pass floor: the tile sort and each merge pass read and write every key once. Inputs
// below 2^24 keys rotate over up to 16 disjoint buffers, as obsidian-bench-sort's. Every
// output is checked: ours bit for bit against CUB's at every size (both are stable; for pairs
// the values too), and both against a host std::stable_sort by the same comparator below 2^25
// keys (so the odd sizes too).
//
// Usage: obsidian-bench-mergesort [--quick] [--only N] [--runs N] [--types u32,f32,pairs]
//        [--set field=value ...] [--json FILE]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <obsidian/obsidian.hpp>

#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cub_merge_sort.hpp"

namespace {

using namespace obsidian;
using bench::mutablePtr;
using bench::ptr;
using nlohmann::json;

// Inputs below this many keys are also checked against a host stable sort.
constexpr size_t kHostCheckBelow = size_t{1} << 25;

// Random keys: u32 words, f32 of random sign and magnitude in [1e-3, 1e3) (never zero, no NaN:
// a strict weak order, and equal keys are equal bits).
template <class K>
std::vector<K> randomKeys(size_t n, uint32_t seed) {
  if constexpr (std::is_same_v<K, float>) {
    return bench::randomFloats(n, seed, 1e-3f, 1e3f);
  } else {
    std::mt19937_64 rng(seed);
    std::vector<K> v(n);
    for (K& x : v) x = static_cast<K>(rng());
    return v;
  }
}

// The tile sort and the merge passes after it (runs of a tile, doubling until one holds n).
uint32_t passesOf(size_t n, uint32_t tile) {
  uint32_t passes = 1;
  for (size_t width = tile; width < n; width *= 2) ++passes;
  return passes;
}

struct Result {
  std::string kind, type, order, policy;
  size_t n = 0;
  uint32_t passes = 0;
  bench::Timing ours, cub, copy;
  bool oursOk = true, cubOk = true;
};

// One row: keys K (and u32 values if `pairs`) sorted by `less` (ours), `hostLess` (the host's
// reference) and CUB's functor of `which`, all the same order.
template <class K, class Less, class HostLess>
Result runSort(size_t n, bool pairs, Less less, HostLess hostLess, bench::MergeSortCase which,
               const char* order, const device::Options& options, int runs, uint32_t seed) {
  Result r{pairs ? "pairs" : "keys", bench::typeName<K>(), order, "", n, 0, {}, {}, {}, true, true};
  const device::Target t = device::Target::onGpu();
  const MergeSortPolicy policy =
      device::policyFor<device::MergeSort>(t, device::MergeSort::problem<K>(pairs), options);
  r.policy = device::describePolicy<device::MergeSort>(policy);
  r.passes = passesOf(n, policy.threads * policy.items);
  const size_t count = n >= (size_t{1} << 24) ? 1 : std::min<size_t>(16, (size_t{1} << 26) / n);
  std::vector<std::vector<K>> hostKeys;
  std::vector<std::vector<uint32_t>> hostValues;
  std::vector<gpu::DeviceBuffer<K>> keys;
  std::vector<gpu::DeviceBuffer<uint32_t>> values;
  for (size_t s = 0; s < count; ++s) {
    hostKeys.push_back(randomKeys<K>(n, seed + static_cast<uint32_t>(s)));
    keys.emplace_back(hostKeys.back());
    hostValues.emplace_back(pairs ? n : 0);
    if (pairs) {
      std::mt19937 rng(seed + 100 + static_cast<uint32_t>(s));
      for (uint32_t& x : hostValues.back()) x = rng();
    }
    values.emplace_back(hostValues.back().size());
    if (pairs) values.back().upload(hostValues.back());
  }
  gpu::DeviceBuffer<K> out(n), cubOut(n);
  gpu::DeviceBuffer<uint32_t> valuesOut(pairs ? n : 0), cubValuesOut(pairs ? n : 0);
  device::MergeSortTemp temp;
  const size_t cubBytes = bench::cubMergeSortTempBytes(n, which, pairs);
  void* cubTemp = bench::deviceAlloc(std::max<size_t>(cubBytes, 1));
  device::Options async = options;
  async.synchronize = false;
  const auto ours = [&](size_t s, const device::Options& o) {
    if (pairs) {
      device::mergeSortPairs(keys[s], out, values[s], valuesOut, less, o, &temp);
    } else {
      device::mergeSortKeys(keys[s], out, less, o, &temp);
    }
  };
  const auto cub = [&](size_t s) {
    bench::cubMergeSort(ptr(keys[s].address()), mutablePtr(cubOut.address()),
                        pairs ? ptr(values[s].address()) : nullptr,
                        pairs ? mutablePtr(cubValuesOut.address()) : nullptr, n, which, cubTemp,
                        cubBytes);
  };
  const auto bits = [](const auto& a, const auto& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0);
  };
  for (size_t s = 0; s < count; ++s) {
    ours(s, options);
    cub(s);
    bench::checkCuda("the sorts");
    const std::vector<K> got = out.download(), theirs = cubOut.download();
    const std::vector<uint32_t> gotValues = pairs ? valuesOut.download() : std::vector<uint32_t>{};
    const std::vector<uint32_t> theirValues =
        pairs ? cubValuesOut.download() : std::vector<uint32_t>{};
    if (n < kHostCheckBelow) {
      // The host's stable sort of the places by key: the keys, and the values they carry.
      std::vector<uint32_t> place(n);
      std::iota(place.begin(), place.end(), 0u);
      const std::vector<K>& in = hostKeys[s];
      std::stable_sort(place.begin(), place.end(),
                       [&](uint32_t a, uint32_t b) { return hostLess(in[a], in[b]); });
      std::vector<K> want(n);
      std::vector<uint32_t> wantValues(pairs ? n : 0);
      for (size_t i = 0; i < n; ++i) {
        want[i] = in[place[i]];
        if (pairs) wantValues[i] = hostValues[s][place[i]];
      }
      r.cubOk = r.cubOk && bits(theirs, want) && bits(theirValues, wantValues);
      r.oursOk = r.oursOk && bits(got, want) && bits(gotValues, wantValues);
    }
    r.oursOk = r.oursOk && bits(got, theirs) && bits(gotValues, theirValues);
  }
  r.ours = bench::timeGpu([&](int run) { ours(static_cast<size_t>(run) % count, async); }, runs);
  r.cub = bench::timeGpu([&](int run) { cub(static_cast<size_t>(run) % count); }, runs);
  r.copy = bench::timeGpu(
      [&](int run) {
        const size_t s = static_cast<size_t>(run) % count;
        bench::copyKernel(ptr(keys[s].address()), mutablePtr(out.address()), n * sizeof(K));
        if (pairs) {
          bench::copyKernel(ptr(values[s].address()), mutablePtr(valuesOut.address()), n * 4);
        }
      },
      runs);
  bench::deviceFree(cubTemp);
  return r;
}

void print(const Result& r) {
  const double gkeys = r.n / (r.ours.medianMs * 1e-3) / 1e9;
  const double cubGkeys = r.n / (r.cub.medianMs * 1e-3) / 1e9;
  const double perPass = r.ours.medianMs * 1e3 / r.passes;
  std::printf(
      "%-5s %-4s %-4s %11zu %10.2f %10.2f %7.3f %8.2f %8.2f %6u %9.2f %8.2f %6.2f  %s%s  [%s]\n",
      r.kind.c_str(), r.type.c_str(), r.order.c_str(), r.n, r.ours.medianMs * 1e3,
      r.cub.medianMs * 1e3, r.ours.medianMs / r.cub.medianMs, gkeys, cubGkeys, r.passes, perPass,
      r.copy.medianMs * 1e3, perPass / (r.copy.medianMs * 1e3), r.oursOk ? "ok" : "WRONG",
      r.cubOk ? "" : " (CUB WRONG)", r.policy.c_str());
  std::fflush(stdout);
}

json toJson(const Result& r) {
  return json{{"kind", r.kind},
              {"type", r.type},
              {"order", r.order},
              {"n", r.n},
              {"passes", r.passes},
              {"policy", r.policy},
              {"ours", bench::timingJson(r.ours)},
              {"cub", bench::timingJson(r.cub)},
              {"copy", bench::timingJson(r.copy)},
              {"ours_ok", r.oursOk},
              {"cub_ok", r.cubOk}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian's merge sort against CUB's on the GPU"};
  bench::CommonOptions common;
  bench::addCommonOptions(app, common);
  std::string types = "u32,f32,pairs";
  app.add_option("--types", types,
                 "what to sort, comma-separated: u32 keys ascending, f32 keys descending; pairs: "
                 "u32 keys ascending with u32 values");
  std::vector<std::string> sets;
  app.add_option("--set", sets, "a policy field=value (device::MergeSort::fields())");
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
  const auto wanted = [&](const char* t) { return types.find(t) != std::string::npos; };
  std::vector<size_t> sizes =
      common.only ? std::vector<size_t>{common.only}
      : common.quick
          ? std::vector<size_t>{size_t{1} << 20, 1000003}
          : std::vector<size_t>{size_t{1} << 20, size_t{1} << 22, size_t{1} << 24,
                                size_t{1} << 26, size_t{1} << 28, (size_t{1} << 24) + 12345,
                                30000001};
  std::cout << "kind  type ord            n    ours us     CUB us ours/CUB  GKeys/s  CUB GK/s"
               " passes us a pass  copy us pass/copy check\n";
  json rows = json::array();
  bool ok = true;
  const auto add = [&](const Result& r) {
    print(r);
    rows.push_back(toJson(r));
    ok = ok && r.oursOk && r.cubOk;
  };
  const auto up = [](uint32_t a, uint32_t b) { return a < b; };
  const auto down = [](float a, float b) { return b < a; };
  try {
    for (size_t n : sizes) {
      if (wanted("u32")) {
        add(runSort<uint32_t>(n, false, Ascending{}, up, bench::MergeSortCase::U32Ascending, "asc",
                              options, common.runs, 1));
      }
      if (wanted("f32")) {
        add(runSort<float>(n, false, Descending{}, down, bench::MergeSortCase::F32Descending,
                           "desc", options, common.runs, 2));
      }
      if (wanted("pairs")) {
        add(runSort<uint32_t>(n, true, Ascending{}, up, bench::MergeSortCase::U32Ascending, "asc",
                              options, common.runs, 4));
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
