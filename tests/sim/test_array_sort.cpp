// Whole-array programs' sorts (sort, sortByKey, sortIndices) on the simulator: every element
// type in both orders against a stable sort by the same order-preserving bits, what the
// planner stores before a sort and fuses after it, the report, the simulated launches, and
// the errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <obsidian/array.hpp>
#include <obsidian/device/radix_sort.hpp>
#include <random>

#include "../select_support.hpp"
#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::array;
using ::testing::errorOf;
using ::testing::orderBits;

namespace {

template <class X>
std::vector<X> draw(size_t n, uint32_t seed) {
  std::mt19937_64 g(seed);
  std::vector<X> v(n);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point_v<X>) {
      // few distinct values (ties keep their order), signed zeros, infinities and NaNs
      const int k = int(g() % 41) - 20;
      v[i] = X(k) * X(0.5);
      if (k == 0 && g() % 2) v[i] = -X(0);
      if (k == 20) v[i] = std::numeric_limits<X>::infinity();
      if (k == -20) v[i] = -std::numeric_limits<X>::infinity();
      if (k == 19) v[i] = std::numeric_limits<X>::quiet_NaN();
    } else {
      v[i] = X(g() % 97) - X(48) + (std::is_signed_v<X> ? X(0) : X(48));
      if (i % 5 == 0) v[i] = X(g());  // the high bits too
    }
  }
  return v;
}

// The stable permutation sorting v by its order words (the device sort's order).
template <class X>
std::vector<uint32_t> order(const std::vector<X>& v, bool descending) {
  std::vector<uint32_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0u);
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
    return orderBits(v[a], descending) < orderBits(v[b], descending);
  });
  return idx;
}

template <class X>
bool sameBits(const X& a, const X& b) {
  return std::memcmp(&a, &b, sizeof(X)) == 0;
}

template <class K, class V>
void checkType(uint32_t n, uint32_t seed) {
  const std::vector<K> keys = draw<K>(n, seed);
  std::vector<V> values = draw<V>(n, seed + 1);
  const auto k = vectorInput<K>("k");
  const auto v = vectorInput<V>("v");
  for (const Order o : {Order::Ascending, Order::Descending}) {
    const bool descending = o == Order::Descending;
    CAPTURE(descending);
    const std::vector<uint32_t> want = order(keys, descending);
    const Plan plan({{"s", sort(k, o)}, {"byKey", sortByKey(k, v, o)}, {"idx", sortIndices(k, o)}});
    std::vector<K> s(n);
    std::vector<V> byKey(n);
    std::vector<uint32_t> idx(n);
    plan.run(Bindings()
                 .vector("k", keys)
                 .vector("v", values)
                 .output("s", s)
                 .output("byKey", byKey)
                 .output("idx", idx));
    size_t bad = 0;
    for (uint32_t i = 0; i < n; ++i) {
      bad += !sameBits(s[i], keys[want[i]]);
      bad += !sameBits(byKey[i], values[want[i]]);
      bad += idx[i] != want[i];
    }
    CHECK(bad == 0);
  }
}

}  // namespace

TEST_CASE("array programs: sort, sortByKey and sortIndices of every element type, both orders") {
  checkType<uint32_t, float>(3001, 1);
  checkType<int32_t, double>(1777, 2);
  checkType<float, uint32_t>(2049, 3);
  checkType<double, int32_t>(1025, 4);
  checkType<uint64_t, uint64_t>(999, 5);
  checkType<float, float>(1, 6);
  checkType<uint32_t, uint32_t>(0, 7);
}

TEST_CASE("array programs: a sort's operand is stored first; its readers are fused after it") {
  const uint32_t n = 2500;
  const std::vector<uint32_t> a = draw<uint32_t>(n, 7), w = draw<uint32_t>(n, 8);
  const auto A = vectorInput<uint32_t>("a"), W = vectorInput<uint32_t>("w");
  // The keys are a map (stored by a vector pass); the sorted keys are read by a scan, a map
  // (fused into the scan's pass? no: a scan is a kernel of its own) and a reduction.
  const auto keys = A * 3u + W;
  const auto sorted = sort(keys);
  const auto ranked = gather(W, sortIndices(keys));  // w ordered by the keys
  const Plan plan({{"sorted", sorted},
                   {"prefix", inclusiveScan(Sum{}, sorted)},
                   {"ranked", ranked * 2u},
                   {"top", reduce(Max{}, sorted)}});
  std::vector<uint32_t> s(n), prefix(n), ranked2(n), top(1);
  Bindings b;
  b.vector("a", a)
      .vector("w", w)
      .output("sorted", s)
      .output("prefix", prefix)
      .output("ranked", ranked2)
      .output("top", top);
  plan.run(b);
  std::vector<uint32_t> k(n);
  for (uint32_t i = 0; i < n; ++i) k[i] = a[i] * 3u + w[i];
  const std::vector<uint32_t> want = order(k, false);
  uint32_t sum = 0;
  size_t bad = 0;
  for (uint32_t i = 0; i < n; ++i) {
    bad += s[i] != k[want[i]];
    sum += k[want[i]];
    bad += prefix[i] != sum;
    bad += ranked2[i] != 2u * w[want[i]];
  }
  CHECK(bad == 0);
  CHECK(top[0] == *std::max_element(k.begin(), k.end()));
  // The report: the keys (and the indices sortIndices moves) stored by a vector pass, then
  // the two sorts, each a sort pass of its own, then the readers.
  const PlanReport r = plan.report(b);
  size_t sorts = 0, first = r.kernels.size();
  for (size_t p = 0; p < r.kernels.size(); ++p) {
    if (r.kernels[p].kind != "sort pass") continue;
    ++sorts;
    first = std::min(first, p);
    CHECK(r.kernels[p].boundary.find("a sort") == 0);
    CHECK(r.kernels[p].fuses.size() == 1);
    // the histogram's read, then a read and a write of keys (and values) a digit: 4 digits
    CHECK(r.kernels[p].bytes >= n * 4.0 * (1 + 2 * 4));
  }
  CHECK(sorts == 2);
  REQUIRE(first > 0);
  CHECK(r.kernels[0].kind == "vector pass");
  CHECK(std::any_of(r.kernels[0].writes.begin(), r.kernels[0].writes.end(),
                    [](const std::string& x) { return x.find("zipWith") != std::string::npos; }));
  // Unfused, the same values.
  PlanOptions unfused;
  unfused.fuse = false;
  const Plan slow({{"sorted", sorted},
                   {"prefix", inclusiveScan(Sum{}, sorted)},
                   {"ranked", ranked * 2u},
                   {"top", reduce(Max{}, sorted)}},
                  unfused);
  std::vector<uint32_t> s2(n), prefix2(n), ranked3(n), top2(1);
  slow.run(Bindings()
               .vector("a", a)
               .vector("w", w)
               .output("sorted", s2)
               .output("prefix", prefix2)
               .output("ranked", ranked3)
               .output("top", top2));
  CHECK(s2 == s);
  CHECK(prefix2 == prefix);
  CHECK(ranked3 == ranked2);
  CHECK(top2 == top);
}

TEST_CASE("array programs: sorts of views, of a column reduction's result and of a sort") {
  const uint32_t n = 700, rows = 37, cols = 53;
  const std::vector<int32_t> v = draw<int32_t>(n, 9);
  std::vector<float> m(size_t{rows} * cols);
  for (size_t i = 0; i < m.size(); ++i) m[i] = float(int(i * 2654435761u >> 22) % 64) - 31.5f;
  const auto V = vectorInput<int32_t>("v");
  const auto M = matrixInput<float>("m");
  const Plan plan({{"slice", sort(slice(V, 3, 4), Order::Descending)},
                   {"shifted", sort(shift(V, 5))},
                   {"columns", sort(colReduce(Sum{}, M))},
                   {"twice", sort(sort(V, Order::Descending))},
                   {"median", at(sort(V), len(V) / 2u)}});
  std::vector<int32_t> sl(n - 7), sh(n), tw(n), med(1);
  std::vector<float> co(cols);
  plan.run(Bindings()
               .vector("v", v)
               .matrix("m", m, rows, cols, cols)
               .output("slice", sl)
               .output("shifted", sh)
               .output("columns", co)
               .output("twice", tw)
               .output("median", med));
  std::vector<int32_t> a(v.begin() + 3, v.end() - 4);
  std::sort(a.begin(), a.end(), std::greater<>());
  CHECK(sl == a);
  std::vector<int32_t> b(n);
  for (uint32_t i = 0; i < n; ++i) b[i] = v[std::min(i + 5, n - 1)];
  std::sort(b.begin(), b.end());
  CHECK(sh == b);
  std::vector<int32_t> c = v;
  std::sort(c.begin(), c.end());
  CHECK(tw == c);
  CHECK(med[0] == c[n / 2]);
  std::vector<float> sums(cols, 0.0f);
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t k = 0; k < cols; ++k) sums[k] += m[size_t(r) * cols + k];
  }
  std::sort(sums.begin(), sums.end());
  CHECK(co == sums);  // (sums of halves: exact in any order)
}

TEST_CASE("array programs: a sort's launches are simulated and counted; errors") {
  const uint32_t n = 3000;
  const std::vector<uint32_t> keys = draw<uint32_t>(n, 10);
  const auto k = vectorInput<uint32_t>("k");
  const Plan plan({{"s", sort(k)}});
  CHECK(plan.kernelCount() == 1);
  std::vector<uint32_t> s(n);
  std::vector<SimStats> stats;
  RunOptions ro;
  ro.simulated = &stats;
  plan.run(Bindings().vector("k", keys).output("s", s), ro);
  CHECK(std::is_sorted(s.begin(), s.end()));
  // a histogram, the digits' starts and a pass a digit (u32: four of 8 bits by the policy)
  ProblemClass keysOnly;
  keysOnly.elementBytes = 4;
  keysOnly.values = Values::KeysOnly;
  const RadixSortPolicy policy =
      device::policyFor<device::RadixSort>(device::Target::simulator(), keysOnly);
  CHECK(stats.size() == 2 + (32 + policy.radixBits - 1) / policy.radixBits);
  // Keys and values of one length.
  const Plan pairs({{"p", sortByKey(k, vectorInput<float>("v"))}});
  std::vector<float> vals(n - 1), out(n);
  CHECK(errorOf([&] {
          pairs.run(Bindings().vector("k", keys).vector("v", vals).output("p", out));
        }).find("ties") != std::string::npos);
}

TEST_CASE("array programs: a sort exports as the device radix sort's launches") {
  // (tests/array_export runs an exported program of sorts on the GPU)
  PlanOptions gpu;
  gpu.target = device::Target{true, 90, 132};
  const auto k = vectorInput<uint32_t>("k");
  const auto w = vectorInput<uint64_t>("w");
  const std::string h = Plan({{"up", sort(k)},
                              {"down", sort(k, Order::Descending)},
                              {"byW", sortByKey(w, vectorInput<float>("f"))}},
                             gpu)
                            .exportHeader("sorts", "ns");
  const auto count = [&](const std::string& what) {
    size_t c = 0;
    for (size_t at = h.find(what); at != std::string::npos; at = h.find(what, at + 1)) ++c;
    return c;
  };
  // Each order's histogram, the starts of 4 and of 8 digits (each kernel exported once), and
  // each sort's pass kernel: a launch of it a digit (4 for u32 keys, 8 for u64).
  for (const std::string kernel : {"radixHistogram_uint32_t", "radixHistogram_uint32_t_desc",
                                   "radixHistogram_uint64_t", "radixStarts_4", "radixStarts_8"}) {
    CAPTURE(kernel);
    CHECK(count("cudaError_t " + kernel + "_launch(") == 1);
    CHECK(count("= " + kernel + "_launch(") == (kernel == "radixStarts_4" ? 2 : 1));
  }
  CHECK(count("= radixPass_uint32_t_launch(") == 4);
  CHECK(count("= radixPass_uint32_t_desc_launch(") == 4);
  CHECK(count("= radixPass_uint64_t_uint32_t_launch(") == 8);
  // The digits' passes in order: the first reads the keys, the passes alternate between the
  // sort's own keys and the output, the last writes the output; epochs 1 .. 4.
  std::vector<std::string> passes;
  for (size_t at = h.find("= radixPass_uint32_t_launch("); at != std::string::npos;
       at = h.find("= radixPass_uint32_t_launch(", at + 1)) {
    passes.push_back(h.substr(at, h.find('\n', at) - at));
  }
  REQUIRE(passes.size() == 4);
  CHECK(passes[0].find("launch(k, obsidian_count0, obsidian_altKeys, ") != std::string::npos);
  CHECK(passes[1].find("launch(obsidian_altKeys, obsidian_count0, (uint32_t*)up, ") !=
        std::string::npos);
  CHECK(passes[2].find("launch((uint32_t*)up, obsidian_count0, obsidian_altKeys, ") !=
        std::string::npos);
  CHECK(passes[3].find("launch(obsidian_altKeys, obsidian_count0, (uint32_t*)up, ") !=
        std::string::npos);
  for (size_t q = 0; q < 4; ++q) {
    CAPTURE(q);
    const std::string digit = std::to_string(q) + "u, " + std::to_string(8 * q) + "u, 255u, " +
                              std::to_string(q + 1) + "u, stream);";
    CHECK(passes[q].find(digit) != std::string::npos);
  }
  // The values move as words.
  CHECK(h.find("(const uint32_t*)f, ") != std::string::npos);
  // Storage of its own, zeroed (the look-back's epochs start at 1), freed after the sort.
  CHECK(count("cudaMemsetAsync(obsidian_sort") == 3);
  CHECK(count("cudaFreeAsync(obsidian_sort") == 6);  // (after the sort, and after an error)
  // A sort's operand that is an output too: the result must not overlap it.
  const auto twice = k * 2u;
  const std::string o = Plan({{"y", twice}, {"z", sort(twice)}}, gpu).exportHeader("f", "ns");
  const size_t overlap = o.find("obsidian_overlap(z, ");
  REQUIRE(overlap != std::string::npos);
  CHECK(o.substr(overlap, o.find('\n', overlap) - overlap).find(", y, ") != std::string::npos);
  // A parameter named like a sort's kernel or launcher would hide it: refused.
  for (const char* name : {"radixHistogram_uint32_t", "radixStarts_4_launch"}) {
    CAPTURE(name);
    CHECK(errorOf([&] {
            (void)Plan({{"s", sort(vectorInput<uint32_t>(name))}}, gpu).exportHeader("f", "ns");
          }).find("would hide the kernel or launcher") != std::string::npos);
  }
  CHECK(errorOf([&] {
          (void)Plan({{"s", sort(k)}}, gpu).exportHeader("radixPass_uint32_t", "ns");
        }).find("is the name of one of the plan's kernels") != std::string::npos);
}
