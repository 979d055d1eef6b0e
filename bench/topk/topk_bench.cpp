// The top-k benchmark: device::topK (obsidian/device/top_k.hpp, the policy table's row; --set
// field=value overrides it) on random f32 of random sign and magnitude in [1e-3, 1e3) (never
// zero), the k largest, timed end to end (its levels' host reads of the counts included; its
// storage, a device::TopKTemp, kept between calls), and the 16-byte read kernel over the same input
// as the floor: a top-k must read every element at least once. Inputs below 2^24 elements rotate
// over up to 16 buffers (64 MiB in all, above the L2). Every input's result is checked first
// against a host reference (a bounded heap of (key, index): the k largest, ties by index): values
// bit for bit and indices exactly, which also makes values[i] == in[indices[i]], values sorted and
// the k-th value the host's k-th largest. torch.topk's times for the same (n, k) come from
// bench/topk/torch_topk.py; scripts/results.py (render_topk) joins the two.
//
// Usage: obsidian-bench-topk [--quick] [--only N] [--k K] [--runs N] [--set field=value ...]
//        [--json FILE]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <obsidian/obsidian.hpp>
#include <queue>
#include <utility>

#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"

namespace {

using namespace obsidian;
using nlohmann::json;

// The (n, k) measured by default (torch_topk.py's list).
const std::vector<std::pair<size_t, size_t>> kCases = {
    {size_t{1} << 20, 16}, {size_t{1} << 24, 16},  {size_t{1} << 24, 100},
    {size_t{1} << 26, 16}, {size_t{1} << 26, 100}, {size_t{1} << 28, 100}};

struct Result {
  size_t n = 0, k = 0;
  std::string policy;
  bench::Timing ours, read;
  bool oursOk = true;
};

// An f32 key's ascending order word (RadixKey's): larger words are larger keys.
uint32_t orderBits(float x) {
  uint32_t raw = 0;
  std::memcpy(&raw, &x, 4);
  return (raw >> 31) ? ~raw : (raw | 0x80000000u);
}

// The host's k largest of `in` with their indices, largest first, ties by index: a heap of the
// k best so far whose top is the worst of them.
void hostTopK(const std::vector<float>& in, size_t k, std::vector<float>& values,
              std::vector<uint32_t>& indices) {
  using Entry = std::pair<uint32_t, uint32_t>;  // (order word, index)
  // a before b (a is better): a larger word, or the same word and a smaller index.
  const auto better = [](const Entry& a, const Entry& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(better)> heap(better);
  for (size_t i = 0; i < in.size(); ++i) {
    const Entry e{orderBits(in[i]), static_cast<uint32_t>(i)};
    if (heap.size() < k) {
      heap.push(e);
    } else if (better(e, heap.top())) {
      heap.pop();
      heap.push(e);
    }
  }
  std::vector<Entry> best;
  for (; !heap.empty(); heap.pop()) best.push_back(heap.top());
  std::reverse(best.begin(), best.end());  // the best first
  values.clear();
  indices.clear();
  for (const Entry& e : best) {
    values.push_back(in[e.second]);
    indices.push_back(e.second);
  }
}

Result runTopK(size_t n, size_t k, const device::Options& options, int runs, uint32_t seed) {
  Result r;
  r.n = n;
  r.k = k;
  const device::Target t = device::Target::onGpu();
  r.policy = device::describePolicy<device::TopK>(device::policyFor<device::TopK>(
      t, {4, OperatorClass::Any, Values::KeysOnly, Scale::Any}, options));
  const size_t count = n >= (size_t{1} << 24) ? 1 : std::min<size_t>(16, (size_t{1} << 26) / n);
  std::vector<gpu::DeviceBuffer<float>> inputs;
  gpu::DeviceBuffer<float> values(k);
  gpu::DeviceBuffer<uint32_t> indices(k);
  device::TopKTemp temp;
  for (size_t s = 0; s < count; ++s) {
    const std::vector<float> host =
        bench::randomFloats(n, seed + static_cast<uint32_t>(s), 1e-3f, 1e3f);
    inputs.emplace_back(host);
    device::topK(inputs.back(), k, values, indices, true, options, &temp);
    bench::checkCuda("topK");
    std::vector<float> wantValues;
    std::vector<uint32_t> wantIndices;
    hostTopK(host, k, wantValues, wantIndices);
    const std::vector<float> got = values.download();
    const bool same = std::memcmp(got.data(), wantValues.data(), k * sizeof(float)) == 0;
    r.oursOk = r.oursOk && same && indices.download() == wantIndices;
  }
  device::Options async = options;
  async.synchronize = false;
  r.ours = bench::timeGpu(
      [&](int run) {
        device::topK(inputs[static_cast<size_t>(run) % count], k, values, indices, true, async,
                     &temp);
      },
      runs);
  uint32_t* sink = static_cast<uint32_t*>(bench::deviceAlloc(4));
  r.read = bench::timeGpu(
      [&](int run) {
        bench::readKernel(bench::ptr(inputs[static_cast<size_t>(run) % count].address()),
                          n * sizeof(float) / 16 * 16, sink);
      },
      runs);
  bench::deviceFree(sink);
  return r;
}

void print(const Result& r) {
  const double ours = r.ours.medianMs * 1e3, read = r.read.medianMs * 1e3;
  std::printf("%11zu %6zu %10.1f %9.1f %9.2f %8.0f  %s  [%s]\n", r.n, r.k, ours, read, ours / read,
              bench::gbps(r.n * sizeof(float), r.ours.medianMs), r.oursOk ? "ok" : "WRONG",
              r.policy.c_str());
  std::fflush(stdout);
}

json toJson(const Result& r) {
  return json{{"kind", "topk"},
              {"type", "f32"},
              {"n", r.n},
              {"k", r.k},
              {"policy", r.policy},
              {"ours", bench::timingJson(r.ours)},
              {"read", bench::timingJson(r.read)},
              {"ours_ok", r.oursOk}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian's top-k (device::topK) on the GPU, against the read roofline"};
  bench::CommonOptions common;
  bench::addCommonOptions(app, common);
  size_t onlyK = 0;
  app.add_option("--k", onlyK, "this k alone (with --only: that one case)");
  std::vector<std::string> sets;
  app.add_option("--set", sets, "a policy field=value (device::TopK::fields())");
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
  // The cases: the list (--quick: two small ones), those of --only's n and --k's k; where the
  // list has none of them, --only's n with each k of the list, or --k's k at each n.
  std::vector<std::pair<size_t, size_t>> cases =
      common.quick ? std::vector<std::pair<size_t, size_t>>{{size_t{1} << 20, 16}, {1000003, 100}}
                   : kCases;
  if (common.only || onlyK) {
    std::vector<std::pair<size_t, size_t>> picked;
    for (const auto& [n, k] : cases) {
      if ((!common.only || n == common.only) && (!onlyK || k == onlyK)) picked.push_back({n, k});
    }
    if (picked.empty()) {
      for (const auto& [n, k] : cases) {
        const std::pair<size_t, size_t> c{common.only ? common.only : n, onlyK ? onlyK : k};
        if (std::find(picked.begin(), picked.end(), c) == picked.end()) picked.push_back(c);
      }
    }
    cases = picked;
  }
  if (!bench::deviceOrSkip()) return bench::kSkipped;
  std::cout << "          n      k    ours us   read us ours/read ours GB/s check\n";
  json rows = json::array();
  bool ok = true;
  try {
    for (const auto& [n, k] : cases) {
      const Result r = runTopK(n, k, options, common.runs, 1);
      print(r);
      rows.push_back(toJson(r));
      ok = ok && r.oursOk;
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
