// Fused outputs (fuse, pConcat and tConcat of fused arrays in fused.hpp): several outputs
// written by one grid loop, each part where it belongs, as outputs of their own in the
// parameters, the report and the exported launcher; the global traffic the report (access
// sites, grid passes) and the simulator (elements moved) show, fused against separate outputs;
// and every misuse an Error.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <obsidian/report_json.hpp>
#include <obsidian/sim.hpp>

#include "../fused_kernels.hpp"
#include "../kernels.hpp"
#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::testing;
using ::testing::count;
using ::testing::errorOf;
using ::testing::moved;
using ::testing::randomWords;

namespace {

std::vector<float> randomFloats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  const std::vector<uint32_t> w = randomWords(n, seed, 2001);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(w[i]) / 1000.0f - 1.0f;
  return v;
}

const ReportTraffic& sites(const KernelReport& r, const std::string& array) {
  for (const ReportTraffic& t : r.traffic) {
    if (t.array == array) return t;
  }
  FAIL("no traffic for " << array);
  return r.traffic.front();
}

}  // namespace

TEST_CASE("fuse: AXPYDOT fused in one grid loop computes what two passes do") {
  const uint32_t chunk = 1024, blocks = 5, n = chunk * blocks;
  const std::vector<float> w = randomFloats(n, 1), v = randomFloats(n, 2), u = randomFloats(n, 3);
  const float alpha = 0.75f;
  std::vector<float> z1(n), p1(blocks), z2(n), p2(blocks);
  const Kernel fused = axpydot(true), twoPasses = axpydot(false);
  const SimStats one = simulate(fused, {alpha, w, v, u, z1, p1});
  const SimStats two = simulate(twoPasses, {alpha, w, v, u, z2, p2}, {.blocks = 2});
  for (uint32_t i = 0; i < n; ++i) REQUIRE(z1[i] == w[i] - alpha * v[i]);
  CHECK(z2 == z1);
  for (uint32_t b = 0; b < blocks; ++b) {
    double dot = 0;
    for (uint32_t i = b * chunk; i < (b + 1) * chunk; ++i) dot += double(z1[i]) * u[i];
    CHECK(std::fabs(p1[b] - dot) < 1e-3 * (1 + std::fabs(dot)));
    CHECK(p2[b] == p1[b]);  // the same folds in the same order
  }

  // What a run moved: the fused kernel reads w, v and u once; two passes read w and v twice.
  CHECK(moved(one, "w").loads == n);
  CHECK(moved(one, "v").loads == n);
  CHECK(moved(one, "u").loads == n);
  CHECK(moved(two, "w").loads == 2 * n);
  CHECK(moved(two, "v").loads == 2 * n);
  CHECK(moved(two, "u").loads == n);
  for (const SimStats* s : {&one, &two}) {
    CHECK(moved(*s, "z").stores == n);
    CHECK(moved(*s, "z").loads == 0);
    CHECK(moved(*s, "partial").stores == blocks);
    CHECK(moved(*s, "w").elementBytes == 4);
  }

  // What the report shows before any run: one grid pass against two, and the access sites
  // (the second pass reads w and v once per element each thread folds: 4).
  const KernelReport r1 = fused.report(), r2 = twoPasses.report();
  CHECK(r1.gridPasses == 1);
  CHECK(r2.gridPasses == 2);
  CHECK(sites(r1, "w").loads == 1);
  CHECK(sites(r2, "w").loads == 5);
  CHECK(sites(r1, "u").loads == 4);
  CHECK(sites(r1, "z").stores == 1);
  CHECK(sites(r1, "partial").stores == 1);
  CHECK(sites(r1, "z").loads == 0);
  CHECK(count(fused.cuda(), "for (uint32_t bid") == 1);
  CHECK(count(twoPasses.cuda(), "for (uint32_t bid") == 2);
  // Each part is an output of its own, named and sized.
  CHECK(fused.cuda().find("float* __restrict__ z, float* __restrict__ partial)") !=
        std::string::npos);
  const auto json = toJson(r1);
  CHECK(json["gridPasses"] == 1);
  REQUIRE(json["traffic"].size() == 5);
  CHECK(json["traffic"][0] ==
        nlohmann::json{
            {"array", "w"}, {"type", "float"}, {"loads", 1}, {"stores", 0}, {"atomics", 0}});
  bool partialListed = false;
  for (const auto& p : json["params"]) {
    if (p["name"] == "partial") {
      partialListed = true;
      CHECK(p["kind"] == "output");
      CHECK(p["length"] == "min(min(wLen, vLen), uLen) / 1024u");
    }
  }
  CHECK(partialListed);
}

TEST_CASE("fuse: thread programs fused, through tConcat and pConcat, beside another output") {
  const Kernel k = groupStats();
  const uint32_t n = 256 * 3;
  const std::vector<uint32_t> in = randomWords(n, 7);
  std::vector<uint32_t> doubled(n), plusOne(n), sums(n / 4), maxes(n / 4);
  const SimStats s = simulate(k, {in, doubled, plusOne, sums, maxes}, {.blocks = 2});
  for (uint32_t i = 0; i < n; ++i) {
    REQUIRE(doubled[i] == in[i] * 2u);
    REQUIRE(plusOne[i] == in[i] + 1u);
  }
  for (uint32_t g = 0; g < n / 4; ++g) {
    const uint32_t* x = &in[4 * g];
    REQUIRE(sums[g] == x[0] + x[1] + x[2] + x[3]);
    REQUIRE(maxes[g] == std::max(std::max(x[0], x[1]), std::max(x[2], x[3])));
  }
  CHECK(k.report().gridPasses == 2);  // doubled's, and one for the three fused parts
  CHECK(moved(s, "sums").stores == n / 4);
  std::vector<std::string> outputs;
  for (const Param& p : k.params()) {
    if (p.output) outputs.push_back(p.name);
  }
  CHECK(outputs == std::vector<std::string>{"doubled", "plusOne", "sums", "maxes"});
  // Each part's length is its own: a sums array of n / 4 - 1 elements is too short.
  std::vector<uint32_t> shortSums(n / 4 - 1);
  CHECK(errorOf([&] {
          simulate(k, {in, doubled, plusOne, shortSums, maxes});
        }) ==
        "launch of kernel groupStats: argument sums has 191 elements; the kernel writes 192 "
        "(inLen / 4u / 64u * 64u)");
}

TEST_CASE("fuse: lane programs fused, through pConcat over a warp, a block and the grid") {
  // Each lane writes its element + 1 and, of its pair, the pair's difference: parts of two
  // lengths per lane, concatenated at three levels.
  const Kernel k = capture("lanes", 64, [](DPull<EWord32> in) {
    const auto lanes = fmap(
        [](const SPull<EWord32>& pair) {
          return fuse(push<Thread>(fmap([](const EWord32& x) { return x + 1u; }, pair)),
                      push<Thread>(singleton(pair[1u] - pair[0u])));
        },
        splitUp(2, in));
    const auto warps = fmap([](const auto& w) { return pConcat(w); }, splitUp(32, lanes));
    const auto blocks = fmap([](const auto& b) { return pConcat(b); }, splitUp(2, warps));
    return pConcat(blocks);
  });
  const uint32_t n = 128 * 3;
  const std::vector<uint32_t> in = randomWords(n, 9);
  std::vector<uint32_t> plus(n), diffs(n / 2);
  simulate(k, {in, plus, diffs});
  for (uint32_t i = 0; i < n; ++i) REQUIRE(plus[i] == in[i] + 1u);
  for (uint32_t j = 0; j < n / 2; ++j) REQUIRE(diffs[j] == in[2 * j + 1] - in[2 * j]);
  CHECK(k.report().gridPasses == 1);
}

TEST_CASE("fuse: the report and the simulator count atomics and vector loads") {
  // The histogram: each element is read twice (its bin and its copy), each block adds its 16
  // bins into the global ones with atomics.
  const Kernel h = histogramKernel("hist", 64, 128);
  const uint32_t n = 128 * 4;
  const std::vector<uint32_t> in = randomWords(n, 3);
  std::vector<uint32_t> bins(16, 0), out(n);
  const SimStats s = simulate(h, {in, bins, out});
  CHECK(moved(s, "in0").loads == 2 * n);
  CHECK(moved(s, "m1").atomics == 16 * 4);
  CHECK(moved(s, "m1").loads == 0);
  const KernelReport r = h.report();
  CHECK(sites(r, "m1").atomics == 1);
  CHECK(sites(r, "in0").loads == 2);
  // A 16-byte vector load reads four elements: a site of 4, n elements moved.
  const Kernel v = capture("vec", 64, [](DPull<EWord32> in) {
    return push<Grid>(fmap(
        [](const Vector<4, uint32_t>& x) {
          return hana::at_c<0>(x) + hana::at_c<1>(x) + hana::at_c<2>(x) + hana::at_c<3>(x);
        },
        vectors<4>(in)));
  });
  std::vector<uint32_t> sums(n / 4);
  const SimStats sv = simulate(v, {in, sums});
  CHECK(moved(sv, "in0").loads == n);
  CHECK(sites(v.report(), "in0").loads == 4);
}

TEST_CASE("fuse: ensure<K> puts a postcondition on one part of a fused result") {
  const Kernel k = capture(
      "ensured", 64,
      [](DPull<EWord32> in) {
        const auto f = pConcat(fmap(
            [](const SPull<EWord32>& c) {
              return fuse(push<Block>(c), singletonPush<Block>([c](const Program<Block>& p) {
                            return blockReduce(p, Sum{}, c);
                          }));
            },
            splitUp(64, in)));
        return ensure<1>(
            ensure<0>(
                f, [](const EWord32& x) { return x < 1000u; }, "copies are below 1000"),
            [](const DPull<EWord32>& sums, const EWord32& i) { return sums[i] != 7u; },
            "no block sums to 7");
      },
      {.outputNames = {"copy", "sums"}});
  const KernelReport r = k.report();
  REQUIRE(r.postconditions.size() == 2);
  CHECK(r.postconditions[0].output == "copy");
  CHECK(r.postconditions[1].output == "sums");
  CHECK(r.gridPasses == 1);
  std::vector<uint32_t> in = randomWords(64 * 4, 5, 999), copy(64 * 4), sums(4);
  simulate(k, {in, copy, sums});
  CHECK(copy == in);
  in[130] = 1000;
  CHECK(errorOf([&] {
          simulate(k, {in, copy, sums});
        })
            .starts_with("simulate(kernel ensured): postcondition \"copies are below 1000\" fails: "
                         "copy[130] = 1000 (the first failing element of copy;"));
  in[130] = 0;
  std::fill(in.begin() + 128, in.begin() + 192, 0u);
  in[140] = 7;  // block 2 sums to 7
  CHECK(errorOf([&] {
          simulate(k, {in, copy, sums});
        })
            .starts_with("simulate(kernel ensured): postcondition \"no block sums to 7\" fails: "
                         "sums[2] = 7 (the first failing element of sums;"));
}

TEST_CASE("fuse: misuse is an Error naming the rule") {
  // An output name per part, no more and no fewer.
  CHECK(errorOf([] {
          capture(
              "pairs", 32,
              [](DPull<EWord32> in) {
                return pConcat(fmap(
                    [](const SPull<EWord32>& c) { return fuse(push<Block>(c), push<Block>(c)); },
                    splitUp(32, in)));
              },
              {.outputNames = {"a", "b", "c"}});
        }) ==
        "capture(pairs): CaptureOptions::outputNames has 3 name(s) but the kernel has 2 "
        "output(s)");
  // A concatenation of fused arrays that would pass 2^32 - 1 elements in one part.
  const std::string tooLong = errorOf([] {
    capture("big", 32, [](DPull<EWord32> in) {
      return pConcat(fmap(
          [in](const EWord32&) {
            return fuse(push<Block>(singleton(in[0u])),
                        push<Block>(mkPull(8u, [in](const EWord32& i) { return in[i]; })));
          },
          mkPull(1u << 30, [](const EWord32& i) { return i; })));
    });
  });
  CHECK(tooLong.find("pConcat") != std::string::npos);
  CHECK(tooLong.find("1073741824 x 8") != std::string::npos);
  // Each part has its own length precondition: the splitUp of the input.
  const Kernel k = axpydot(true);
  std::vector<float> w(1000), v(1000), u(1000), z(1000), p(1);
  CHECK(errorOf([&] {
          simulate(k, {1.0f, w, v, u, z, p});
        }) ==
        "launch of kernel axpydotFused: splitUp(1024) needs a length divisible by 1024 "
        "(min(min(wLen, vLen), uLen) % 1024u == 0u fails with uLen = 1000, vLen = 1000, "
        "wLen = 1000)");
}
