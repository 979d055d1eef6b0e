// The radix sort benchmark (issue 44: the catalogue at CUB's speed). In one run, on the same
// random keys: the library's radix sort (obsidian/device/radix_sort.hpp, the policy table's
// row; --set field=value overrides it) against cub::DeviceRadixSort::SortKeys / SortPairs,
// and a 16-byte copy kernel of the keys (and values) as the per-pass floor: a pass reads and
// writes every key once. Inputs below 2^24 keys rotate over up to 16 disjoint buffers. Every
// output is checked: against a host sort up to 2^24 keys, and bit for bit against CUB's (both
// are stable) at every size.
//
// Usage: obsidian-bench-sort [--quick] [--only N] [--runs N] [--types u32,f32,u64,pairs]
//        [--set field=value ...] [--json FILE]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <obsidian/obsidian.hpp>

#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cub_sort.hpp"

namespace {

using namespace obsidian;
using bench::mutablePtr;
using bench::ptr;
using nlohmann::json;

template <class K>
bench::SortKey sortKey() {
  if constexpr (std::is_same_v<K, float>) return bench::SortKey::F32;
  if constexpr (std::is_same_v<K, uint64_t>) return bench::SortKey::U64;
  return bench::SortKey::U32;
}

// Random keys: u32/u64 words, f32 of random sign and magnitude (never zero).
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

struct Result {
  std::string kind, type, policy;
  size_t n = 0;
  uint32_t passes = 0;
  bench::Timing ours, cub, copy;
  bool oursOk = true, cubOk = true;
};

template <class K>
Result runSort(size_t n, bool pairs, const device::Options& options, int runs, uint32_t seed) {
  Result r{pairs ? "pairs" : "keys", bench::typeName<K>(), "", n, 0, {}, {}, {}, true, true};
  const device::Target t = device::Target::onGpu();
  const RadixSortPolicy policy =
      device::policyFor<device::RadixSort>(t,
                                           {static_cast<uint32_t>(sizeof(K)), OperatorClass::Any,
                                            pairs ? Values::Pairs : Values::KeysOnly, Scale::Any},
                                           options);
  r.policy = device::describePolicy<device::RadixSort>(policy);
  r.passes = (8 * sizeof(K) + policy.radixBits - 1) / policy.radixBits;
  const size_t count = n >= (size_t{1} << 24) ? 1 : std::min<size_t>(16, (size_t{1} << 26) / n);
  std::vector<std::vector<K>> hostKeys;
  std::vector<gpu::DeviceBuffer<K>> keys;
  std::vector<gpu::DeviceBuffer<uint32_t>> values;
  for (size_t s = 0; s < count; ++s) {
    hostKeys.push_back(randomKeys<K>(n, seed + static_cast<uint32_t>(s)));
    keys.emplace_back(hostKeys.back());
    values.emplace_back(pairs ? n : 0);
    if (pairs) {
      std::vector<uint32_t> v(n);
      std::mt19937 rng(seed + 100 + static_cast<uint32_t>(s));
      for (uint32_t& x : v) x = rng();
      values.back().upload(v);
    }
  }
  gpu::DeviceBuffer<K> out(n), cubOut(n);
  gpu::DeviceBuffer<uint32_t> valuesOut(pairs ? n : 0), cubValuesOut(pairs ? n : 0);
  device::RadixSortTemp temp;
  const size_t cubBytes = bench::cubSortTempBytes(n, sortKey<K>(), pairs);
  void* cubTemp = bench::deviceAlloc(std::max<size_t>(cubBytes, 1));
  device::Options async = options;
  async.synchronize = false;
  const auto ours = [&](size_t s, const device::Options& o) {
    if (pairs) {
      device::radixSortPairs(keys[s], out, values[s], valuesOut, {}, o, &temp);
    } else {
      device::radixSortKeys(keys[s], out, {}, o, &temp);
    }
  };
  const auto cub = [&](size_t s) {
    bench::cubSort(ptr(keys[s].address()), mutablePtr(cubOut.address()),
                   pairs ? ptr(values[s].address()) : nullptr,
                   pairs ? mutablePtr(cubValuesOut.address()) : nullptr, n, sortKey<K>(), cubTemp,
                   cubBytes);
  };
  for (size_t s = 0; s < count; ++s) {
    ours(s, options);
    cub(s);
    bench::checkCuda("the sorts");
    const std::vector<K> got = out.download(), theirs = cubOut.download();
    const auto bits = [](const std::vector<K>& a, const std::vector<K>& b) {
      return std::memcmp(a.data(), b.data(), a.size() * sizeof(K)) == 0;
    };
    if (n <= (size_t{1} << 24)) {
      std::vector<K> want = hostKeys[s];
      std::stable_sort(want.begin(), want.end());  // random f32 keys: no NaN, no -0
      r.cubOk = r.cubOk && bits(theirs, want);
    }
    r.oursOk = r.oursOk && bits(got, theirs);
    if (pairs) r.oursOk = r.oursOk && valuesOut.download() == cubValuesOut.download();
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
  std::printf("%-5s %-4s %11zu %10.2f %10.2f %7.3f %8.2f %8.2f %6u %9.2f %8.2f %6.2f  %s%s  [%s]\n",
              r.kind.c_str(), r.type.c_str(), r.n, r.ours.medianMs * 1e3, r.cub.medianMs * 1e3,
              r.ours.medianMs / r.cub.medianMs, gkeys, cubGkeys, r.passes, perPass,
              r.copy.medianMs * 1e3, perPass / (r.copy.medianMs * 1e3), r.oursOk ? "ok" : "WRONG",
              r.cubOk ? "" : " (CUB WRONG)", r.policy.c_str());
  std::fflush(stdout);
}

json toJson(const Result& r) {
  return json{{"kind", r.kind},
              {"type", r.type},
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
  CLI::App app{"obsidian's radix sort against CUB on the GPU"};
  bench::CommonOptions common;
  bench::addCommonOptions(app, common);
  std::string types = "u32,f32,u64,pairs";
  app.add_option("--types", types,
                 "what to sort, comma-separated: u32, f32, u64 keys; pairs: u32 keys with u32 "
                 "values");
  std::vector<std::string> sets;
  app.add_option("--set", sets, "a policy field=value (device::RadixSort::fields())");
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
      common.only    ? std::vector<size_t>{common.only}
      : common.quick ? std::vector<size_t>{size_t{1} << 20, 1000003}
                     : std::vector<size_t>{size_t{1} << 20, size_t{1} << 22, size_t{1} << 24,
                                           size_t{1} << 26, size_t{1} << 28, 30000001};
  std::cout << "kind  type           n    ours us     CUB us ours/CUB  GKeys/s  CUB GK/s passes"
               " us a pass  copy us pass/copy check\n";
  json rows = json::array();
  bool ok = true;
  const auto add = [&](const Result& r) {
    print(r);
    rows.push_back(toJson(r));
    ok = ok && r.oursOk && r.cubOk;
  };
  try {
    for (size_t n : sizes) {
      if (wanted("u32")) add(runSort<uint32_t>(n, false, options, common.runs, 1));
      if (wanted("f32")) add(runSort<float>(n, false, options, common.runs, 2));
      if (wanted("u64") && n <= (size_t{1} << 28)) {
        add(runSort<uint64_t>(n, false, options, common.runs, 3));
      }
      if (wanted("pairs")) add(runSort<uint32_t>(n, true, options, common.runs, 4));
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
