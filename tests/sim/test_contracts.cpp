// Contracts (require, ensure in capture.hpp) and named parameters (CaptureOptions::names):
// preconditions checked before a run with the kernel's and the contract's names, postconditions
// checked after every simulated run with the first failing element, both in the report; names
// in the CUDA, the exported launcher, the report and the errors, and every misuse an Error.
#include <doctest/doctest.h>

#include <algorithm>
#include <obsidian/report_json.hpp>
#include <obsidian/sim.hpp>

#include "../contract_kernels.hpp"
#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::testing;
using ::testing::errorOf;

namespace {

std::vector<float> ramp(size_t n, float from, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = from + step * static_cast<float>(i % 97);
  return v;
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

}  // namespace

TEST_CASE("contracts: require is a precondition checked before the run, in the report") {
  const Kernel k = namedSaxpy();
  const auto pre = toJson(k.report())["preconditions"];
  REQUIRE(pre.size() == 2);  // require's, then splitUp's
  CHECK(pre[0]["condition"] == "xLen == yLen");
  CHECK(pre[0]["message"] == "x and y have the same length");
  std::vector<float> x = ramp(512, 0.5f, 0.25f), y = ramp(256, 1.0f, 0.5f), z(512);
  CHECK(errorOf([&] {
          simulate(k, {2.0f, x, y, z});
        }) ==
        "launch of kernel saxpy: x and y have the same length (xLen == yLen fails with xLen = "
        "512, yLen = 256)");
  CHECK(z == std::vector<float>(512, 0.0f));  // nothing ran
  // The exported launcher checks it too, and a checked build prints the message.
  const std::string h = exportHeader({k}, {"app", ""});
  CHECK(contains(h, "if (!(xLen == yLen)) {"));
  CHECK(contains(h, "precondition failed: %s\\n\", \"x and y have the same length\");"));
}

TEST_CASE("contracts: require's misuses are Errors naming the rule") {
  CHECK(errorOf([] { require(EBool(true), "outside"); }) ==
        "require(..., \"outside\"): only inside a capture (the callable given to capture), where "
        "it is a precondition of the kernel");
  CHECK(errorOf([] {
          capture("readsArray", 32, [](DPull<EWord32> in) {
            require(in[0u] > 0u, "first positive");
            return push<Grid>(in);
          });
        }) ==
        "require(..., \"first positive\") in kernel readsArray: the condition reads in0; a "
        "precondition is checked on the host before the launch, so it may use only scalar "
        "parameters and array lengths");
  CHECK(errorOf([] {
          capture("usesVariable", 32, [](DPull<EWord32> in) {
            require(variable<uint32_t>("elsewhere") > 0u, "from nowhere");
            return push<Grid>(in);
          });
        }) ==
        "require(..., \"from nowhere\") in kernel usesVariable: the condition uses "
        "elsewhere, a variable of the kernel's program; a precondition may use only scalar "
        "parameters and array lengths");
  CHECK(errorOf([] {
          capture("never", 32,
                  [](SPull<EWord32> in) {
                    require(len(in) > 100u, "long enough");
                    return push<Grid>(in);
                  },
                  {.staticLengths = {64}});
        }) ==
        "require(..., \"long enough\") in kernel never: the condition is false for every "
        "launch");
  // Messages are the user's text: in the exported launcher they are a string literal.
  const Kernel odd = capture("oddMessage", 32, [](DPull<EWord32> in) {
    require(len(in) > 0u, "a \"quoted\" line\nand a backslash \\");
    return push<Grid>(in);
  });
  CHECK(contains(exportHeader({odd}, {"app", ""}),
                 "\"a \\\"quoted\\\" line\\012and a backslash \\\\\""));
}

TEST_CASE("contracts: ensure checks every element after a simulated run") {
  const Kernel k = namedSaxpy();
  const auto post = toJson(k.report())["postconditions"];
  REQUIRE(post.size() == 2);
  CHECK(post[0]["message"] == "z is a number");
  CHECK(post[1]["output"] == "z");
  CHECK(post[1]["condition"] == "z[" + post[1]["index"].get<std::string>() + "] >= y[" +
                                    post[1]["index"].get<std::string>() + "]");
  REQUIRE(k.postconditions().size() == 2);

  std::vector<float> x = ramp(1024, 0.5f, 0.25f), y = ramp(1024, -3.0f, 0.5f), z(1024);
  simulate(k, {2.0f, x, y, z});  // holds
  for (size_t i = 0; i < z.size(); ++i) REQUIRE(z[i] == 2.0f * x[i] + y[i]);

  // Negative x at 700 and 300: the first failing element is named, with its value.
  x[700] = -1.0f;
  x[300] = -2.0f;
  const std::string i = post[1]["index"];
  CHECK(errorOf([&] {
          simulate(k, {2.0f, x, y, z});
        }) ==
        "simulate(kernel saxpy): postcondition \"z is not below y\" fails: z[300] = -2.5 (the "
        "first failing element of z; z[" +
            i + "] >= y[" + i + "] is false for " + i + " = 300)");
  // The earlier postcondition is checked first.
  x[5] = std::numeric_limits<float>::quiet_NaN();
  CHECK(contains(errorOf([&] {
                   simulate(k, {2.0f, x, y, z});
                 }),
                 "postcondition \"z is a number\" fails: z[5] = nan"));
}

TEST_CASE("contracts: relational postconditions and outputs of tuples") {
  const Kernel sorted = sortedCopy();
  std::vector<uint32_t> in(1000), out(1000);
  for (uint32_t i = 0; i < 1000; ++i) in[i] = i / 3;
  simulate(sorted, {in, out});
  CHECK(out == in);
  std::swap(in[417], in[900]);  // out[417] > out[418] first
  CHECK(contains(errorOf([&] {
                   simulate(sorted, {in, out});
                 }),
                 "simulate(kernel sortedCopy): postcondition \"out is sorted\" fails: out0[418] = "
                 "139 (the first failing element of out0;"));
  // An empty input: nothing to check.
  std::vector<uint32_t> none;
  simulate(sorted, {none, none});

  const Kernel pairs = boundedPairs();
  std::vector<uint32_t> values = ::testing::randomWords(333, 5, 100), first(333), second(333);
  simulate(pairs, {values, 100u, first, second});
  CHECK(first == values);
  CHECK(errorOf([&] {
          simulate(pairs, {values, 50u, first, second});
        })
            .starts_with("simulate(kernel boundedPairs): postcondition \"every pair's first is "
                         "below limit\" fails: pairs_0["));
  values[17] = 7777;
  values[2] = 0;
  CHECK(contains(errorOf([&] {
                   simulate(pairs, {values, 100u, first, second});
                 }),
                 "fails: pairs_0[17] = 7777, pairs_1[17] = 15554 (the first failing element of "
                 "pairs;"));
}

TEST_CASE("contracts: ensure's misuses are Errors naming the rule") {
  CHECK(errorOf([] {
          capture("alwaysFalse", 32, [](DPull<EWord32> in) {
            return ensure(
                push<Grid>(in), [](const EWord32&) { return EBool(false); }, "never");
          });
        }) ==
        "ensure(out0, ..., \"never\") in kernel alwaysFalse: the condition is false for "
        "every element");
  CHECK(errorOf([] {
          capture("foreignVariable", 32, [](DPull<EWord32> in) {
            return ensure(
                push<Grid>(in),
                [](const EWord32& v) { return v < variable<uint32_t>("elsewhere"); }, "bounded");
          });
        }) ==
        "ensure(out0, ..., \"bounded\") in kernel foreignVariable: the condition uses "
        "elsewhere, a variable of the kernel's program; it may use only the element, the "
        "index, the kernel's arrays and its scalar parameters");
}

TEST_CASE("names: parameters and outputs named in the CUDA, the launcher, the report, errors") {
  const Kernel k = namedSaxpy();
  CHECK(contains(
      k.cuda(),
      "saxpy(float alpha, const float* __restrict__ x, uint32_t xLen, const float* __restrict__ y, "
      "uint32_t yLen, float* __restrict__ z)"));
  CHECK(contains(k.cuda(), "z[t0] = alpha * x[t0] + y[t0];"));
  const std::string h = exportHeader({k}, {"app", ""});
  CHECK(contains(h,
                 "saxpy_launch(float alpha, const float* x, size_t xCount, const float* y, "
                 "size_t yCount, float* z, size_t zCount, cudaStream_t stream = 0)"));
  CHECK(contains(h, "const uint32_t xLen = (uint32_t)xCount;"));
  std::vector<std::string> names;
  const auto report = toJson(k.report());  // (a range-for over a temporary's member dangles)
  for (const auto& p : report["params"]) names.push_back(p["name"].get<std::string>());
  CHECK(names == std::vector<std::string>{"alpha", "x", "xLen", "y", "yLen", "z"});
  std::vector<float> x(256), y(256), z(100);
  CHECK(errorOf([&] {
          simulate(k, {2u, x, y, z});
        }) ==
        "launch of kernel saxpy: argument 0 (alpha) must be a scalar of type float; got a "
        "uint32_t scalar");
  CHECK(contains(errorOf([&] {
                   simulate(k, {2.0f, x, y, z});
                 }),
                 "argument z has 100 elements; the kernel writes 256"));
}

TEST_CASE("names: bad names are Errors naming the rule") {
  auto named = [](std::vector<std::string> names, std::vector<std::string> outputs = {}) {
    return errorOf([&] {
      capture("copy", 32,
              [](DPull<EWord32> a, EWord32 s) {
                return push<Grid>(fmap([s](const EWord32& v) { return v + s; }, a));
              },
              {.names = names, .outputNames = outputs});
    });
  };
  CHECK(named({"a"}) ==
        "capture(copy): CaptureOptions::names has 1 name(s) but the kernel has 2 "
        "parameter(s)");
  CHECK(named({"a", "b"}, {"c", "d"}) ==
        "capture(copy): CaptureOptions::outputNames has 2 name(s) but the kernel has 1 output(s)");
  CHECK(named({"a b", "s"}) ==
        "capture(copy): CaptureOptions::names[0] must be a C identifier (letters, digits, _); got "
        "'a b'");
  CHECK(named({"float", "s"}) ==
        "capture(copy): CaptureOptions::names[0] 'float' is a C++ keyword; choose another name");
  CHECK(named({"a", "stream"}) ==
        "capture(copy): CaptureOptions::names[1] 'stream' is the exported launcher's stream "
        "parameter; choose another name");
  CHECK(named({"a", "threadIdx"}) ==
        "capture(copy): CaptureOptions::names[1] 'threadIdx' is a "
        "CUDA built-in variable; choose another name");
  CHECK(named({"a", "a"}) ==
        "capture(copy): array parameter a and the scalar parameter a are both named 'a' in the "
        "generated code; give them distinct names (CaptureOptions::names, outputNames)");
  CHECK(named({"a", "aLen"}) ==
        "capture(copy): the length parameter aLen and the scalar parameter aLen are both named "
        "'aLen' in the generated code; give them distinct names (CaptureOptions::names, "
        "outputNames)");
  CHECK(named({"a", "aCount"}) ==
        "capture(copy): the exported launcher's count of a and the scalar parameter aCount are "
        "both named 'aCount' in the generated code; give them distinct names "
        "(CaptureOptions::names, outputNames)");
  CHECK(named({"a", "s"}, {"a"}) ==
        "capture(copy): array parameter a and output a are both named 'a' in the generated code; "
        "give them distinct names (CaptureOptions::names, outputNames)");
  CHECK(named({"", "s"}, {"float"}) ==
        "capture(copy): CaptureOptions::outputNames[0] 'float' is "
        "a C++ keyword; choose another name");
  CHECK(named({"", "limit"}) == "no error");  // "" keeps a parameter's default name
}

TEST_CASE("names: the kernel's own variables never take a parameter's name") {
  // Before: a scalar parameter s1 (its default name) and the second sequential loop's
  // variable s1 were one name, so the loop's body read the loop counter instead of the scalar.
  auto kernel = [](const CaptureOptions& o) {
    return capture(
        "nested", 32,
        [](DMutable<uint32_t> m, EWord32 s) {
          return effect([=](const Program<Grid>& g) {
            g.distrPar(1u, [&](const Program<Block>& b, const EWord32&) {
              b.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
                t.seqFor(2u, [&](const Program<Thread>& t2, const EWord32& j) {
                  t2.seqFor(3u, [&](const Program<Thread>& t3, const EWord32& q) {
                    const EWord32 v = t3.declare(s + j);
                    write(t3, m, j * 3u + q, v);
                  });
                });
              });
            });
          });
        },
        o);
  };
  // Default names (s1 for the scalar), and user names that look like the kernel's own.
  for (const CaptureOptions& o :
       {CaptureOptions{}, CaptureOptions{.names = {"i0", "s0"}},
        CaptureOptions{.names = {"v0", "s1"}}, CaptureOptions{.names = {"bid0", "v1"}}}) {
    const Kernel k = kernel(o);
    std::vector<uint32_t> m(6, 0);
    simulate(k, {m, 7u});
    const std::vector<uint32_t> want = {7, 7, 7, 8, 8, 8};
    CHECK_MESSAGE(m == want, k.cuda());
  }
}

TEST_CASE("contracts: a length or precondition that divides by a zero scalar fails the launch") {
  // Issue 40: launch-time arithmetic never traps; the error names the kernel and what divides.
  const Kernel groups = groupsKernel();
  std::vector<uint32_t> in(100, 7), out(100, 0);
  CHECK(errorOf([&] {
          simulate(groups, {in, 0u, out});
        }) ==
        "launch of kernel groups: the length of output out0 (inLen / g) divides by zero: g is 0 "
        "with g = 0, inLen = 100; nothing was launched");
  CHECK(out == std::vector<uint32_t>(100, 0));
  simulate(groups, {in, 10u, out});  // a divisor that is not 0 runs
  CHECK(out[9] == 7);
  // A precondition that divides by zero fails (the launch it guards would too); one whose &&
  // decides first does not divide.
  const Kernel guarded =
      capture("guarded", 32,
              [](DPull<EWord32> in, EWord32 g) {
                require(g == 0u || len(in) / g >= 2u, "two groups unless g is 0");
                require(len(in) / g >= 1u, "at least one group");
                return push<Grid>(in);
              },
              {.names = {"in", "g"}});
  CHECK(errorOf([&] {
          simulate(guarded, {in, 0u, out});
        }) ==
        "launch of kernel guarded: at least one group (inLen / g >= 1u fails with g = 0, inLen = "
        "100; it divides by zero: g is 0)");
  CHECK(errorOf([&] {
          simulate(guarded, {in, 60u, out});
        }) ==
        "launch of kernel guarded: two groups unless g is 0 (g == 0u || inLen / g >= 2u fails "
        "with g = 60, inLen = 100)");
  simulate(guarded, {in, 50u, out});
  // The exported launcher evaluates them on the host with checked divisions (no SIGFPE; see
  // tests/export_host for a run): a zero divisor returns cudaErrorInvalidValue.
  const std::string h = exportHeader({groups, guarded}, {"app", ""});
  CHECK(contains(h, "obsidian_host::divide<uint32_t>(inLen, g, obsidian_zero_divisor)"));
  CHECK(contains(h, "if (!(inLen / g >= 1u)") == false);
  CHECK(contains(h,
                 "if (!(obsidian_host::divide<uint32_t>(inLen, g, obsidian_zero_divisor) >= "
                 "1u) || obsidian_zero_divisor) {"));
  CHECK(contains(h, "  if (obsidian_zero_divisor) {\n#ifdef OBSIDIAN_CHECKED\n"));
}

TEST_CASE("contracts: require works in nested programs (exec, stencils, block helpers)") {
  // Issue 40: a precondition over the kernel's own parameter written inside an exec<Block>
  // body, a stencil's function or a block helper (exec<Warp> inside) is the kernel's.
  const Kernel inExec = capture(
      "inExec", 64,
      [](DPull<EWord32> in, EWord32 d) {
        return pConcat(fmap(
            [d](const SPull<EWord32>& c) {
              return exec<Block>([c, d](const Program<Block>& p) {
                require(d > 0u, "d is positive");
                return push<Block>(forcePull(p, fmap([d](const EWord32& x) { return x / d; }, c)));
              });
            },
            splitUp(64, in)));
      },
      {.names = {"in", "d"}});
  const auto pre = toJson(inExec.report())["preconditions"];
  CHECK(std::count_if(pre.begin(), pre.end(),
                      [](const auto& c) { return c["message"] == "d is positive"; }) == 1);
  std::vector<uint32_t> in(128, 12), out(128);
  CHECK(errorOf([&] {
          simulate(inExec, {in, 0u, out});
        }) == "launch of kernel inExec: d is positive (d > 0u fails with d = 0)");
  simulate(inExec, {in, 4u, out});
  CHECK(out == std::vector<uint32_t>(128, 3));
  // A stencil's function runs in an exec<Block> too.
  const Kernel inStencil = capture("inStencil", 64,
                                   [](DPull2<EFloat> m, EFloat w) {
                                     return stencil(m, 1, [w](const Neighbourhood<float>& nb) {
                                       require(w > 0.0f, "w is positive");
                                       return (nb(-1, 0) + nb(1, 0)) * w;
                                     });
                                   },
                                   {.names = {"m", "w"}});
  std::vector<float> a(16 * 16, 1.0f), b(16 * 16);
  CHECK(errorOf([&] {
          simulate(inStencil, {a, 16u, 16u, 16u, 0.0f, b});
        }) == "launch of kernel inStencil: w is positive (w > 0.0f fails with w = 0.000000)");
  simulate(inStencil, {a, 16u, 16u, 16u, 0.5f, b});
  CHECK(b[17] == 1.0f);
}

TEST_CASE("contracts: require inside a block helper's operator (exec<Warp> inside blockScan)") {
  // The operator of a thread-sequential block scan runs inside exec<Warp> bodies.
  const Kernel k =
      capture("scanStep", 64,
              [](DPull<EWord32> in, EWord32 step) {
                const auto plus = [step](const EWord32& a, const EWord32& b) {
                  require(step > 0u, "step is positive");
                  return a + b;
                };
                return pConcat(fmap(
                    [plus](const SPull<EWord32>& c) {
                      return exec<Block>([c, plus](const Program<Block>& p) {
                        return blockScan(BlockScanAlgorithm::ThreadSequential, p, plus, c);
                      });
                    },
                    splitUp(128, in)));
              },
              {.names = {"in", "step"}});
  std::vector<uint32_t> in(256, 1), out(256);
  CHECK(errorOf([&] {
          simulate(k, {in, 0u, out});
        }) == "launch of kernel scanStep: step is positive (step > 0u fails with step = 0)");
  simulate(k, {in, 1u, out});
  CHECK(out[127] == 128);
  CHECK(out[128] == 1);
}
