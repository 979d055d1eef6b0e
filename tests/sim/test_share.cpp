// Subexpression sharing (codegen/share.hpp, share() in exp.hpp): repeated values are computed
// once, never moved out from under a condition, and never reused after something may have
// changed them; results on the simulator match C++ with the pass on and off.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <obsidian/sim.hpp>

#include "../kernels.hpp"
#include "../support.hpp"

using namespace obsidian;

namespace {

using ::testing::count;

CaptureOptions sharing(bool on) {
  CaptureOptions o;
  o.shareSubexpressions = on;
  return o;
}

// out[i] = f(in, i) over the whole input, one grid loop.
template <class F>
Kernel elementwise(const std::string& name, bool share, F f) {
  return capture(
      name, 64,
      [f](DPull<EWord32> in) {
        return push<Grid>(mkPull(len(in), [in, f](const EWord32& i) { return f(in, i); }));
      },
      sharing(share));
}

}  // namespace

TEST_CASE("share: a bitonic stage reads each element once, and sorts the same") {
  const uint32_t n = 64;
  const Kernel shared = obsidian::testing::bitonicKernel("bitonic", n, sharing(true));
  const Kernel plain = obsidian::testing::bitonicKernel("bitonicPlain", n, sharing(false));
  // The first stage reads the input: element i and its partner, each once (four reads without
  // sharing: both appear in min and in max).
  CHECK(count(shared.cuda(), "in0[") == 2);
  CHECK(count(plain.cuda(), "in0[") == 4);
  // The stage's statement reads the two variables, not the array.
  const std::string cuda = shared.cuda();
  const size_t stage = cuda.find("arr0[threadIdx.x] = ");
  REQUIRE(stage != std::string::npos);
  const std::string line = cuda.substr(stage, cuda.find('\n', stage) - stage);
  CHECK(line.find("in0[") == std::string::npos);
  CHECK(line.find("? min(t") != std::string::npos);
  const std::vector<uint32_t> in = ::testing::randomWords(n * 5, 7, 1000);
  std::vector<uint32_t> want = in;
  for (size_t b = 0; b < 5; ++b) std::sort(want.begin() + b * n, want.begin() + (b + 1) * n);
  for (const Kernel* k : {&shared, &plain}) {
    std::vector<uint32_t> out(in.size(), 0xdeadbeef);
    simulate(*k, {in, out});
    CHECK(out == want);
  }
}

TEST_CASE("share: a value read only under a condition stays under it") {
  // in[i + 1] is read only where i + 1 < n: moved in front of the statement, the last element
  // would read past the end (the simulator reports that as an error).
  for (bool on : {true, false}) {
    const Kernel k = elementwise("guarded", on, [](const DPull<EWord32>& in, const EWord32& i) {
      const EWord32 next = in[i + 1u];
      return ifThenElse(i + 1u < len(in), next * next + next, EWord32(7u));
    });
    const Kernel both =
        elementwise("shortCircuit", on, [](const DPull<EWord32>& in, const EWord32& i) {
          const EWord32 next = in[i + 1u];
          return ifThenElse(i + 1u < len(in) && next * next > 100u, next * next, EWord32(1u));
        });
    CHECK(count(k.cuda(), "in0[") == 3);
    const std::vector<uint32_t> in = ::testing::randomWords(100, 3, 50);
    std::vector<uint32_t> out(100), out2(100);
    simulate(k, {in, out});
    simulate(both, {in, out2});
    for (size_t i = 0; i < 100; ++i) {
      const uint32_t next = i + 1 < 100 ? in[i + 1] : 0;
      CHECK(out[i] == (i + 1 < 100 ? next * next + next : 7u));
      CHECK(out2[i] == (i + 1 < 100 && next * next > 100 ? next * next : 1u));
    }
  }
}

TEST_CASE("share: a value used on both sides of a select is computed once") {
  const Kernel k = elementwise("bothSides", true, [](const DPull<EWord32>& in, const EWord32& i) {
    const EWord32 x = in[i] * 3u + in[i];
    return ifThenElse(i % 2u == 0u, x * 5u, x + 9u);
  });
  // in[i] once, and x (used on both sides) once.
  CHECK(count(k.cuda(), "in0[") == 1);
  CHECK(count(k.cuda(), "* 3u") == 1);
  const std::vector<uint32_t> in = ::testing::randomWords(200, 4, 1000);
  std::vector<uint32_t> out(200);
  simulate(k, {in, out});
  for (size_t i = 0; i < 200; ++i) {
    const uint32_t x = in[i] * 4;
    CHECK(out[i] == (i % 2 == 0 ? x * 5 : x + 9));
  }
}

TEST_CASE("share: a write or an assignment in between ends a value's life") {
  auto kernel = [](bool on) {
    return capture(
        "killed", 64,
        [](DPull<EWord32> in) {
          return pConcat(fmap(
              [](const SPull<EWord32>& c) {
                return exec<Block>([c](const Program<Block>& p) {
                  const SMutable<uint32_t> a = newShared<uint32_t>(p, 64);
                  const SMutable<uint32_t> b = newShared<uint32_t>(p, 64);
                  p.forAll(64u, [&](const Program<Thread>& t, const EWord32& i) {
                    write(t, a, i, c[i]);
                    // a[i] * a[i] + 1 twice: shared; then a[i] changes, so it is read again.
                    const EWord32 v = t.declare((a[i] * a[i] + 1u) * (a[i] * a[i] + 1u));
                    write(t, a, i, v);
                    // A variable: w * w + w twice, then w changes, so it is computed again.
                    const EWord32 w = t.declare(a[i] * a[i] + 1u);
                    const EWord32 u = t.declare((w * w + w) ^ (w * w + w));
                    t.assign(w, w + 1u);
                    write(t, b, i, (w * w + w) + u);
                  });
                  p.sync();
                  return push<Block>(SPull<EWord32>(64u, [b](const EWord32& i) { return b[i]; }));
                });
              },
              splitUp(64, in)));
        },
        sharing(on));
  };
  const std::vector<uint32_t> in = ::testing::randomWords(128, 5, 100);
  std::vector<uint32_t> want(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const uint32_t x = in[i], y = x * x + 1, v = y * y;
    uint32_t w = v * v + 1;
    const uint32_t u = (w * w + w) ^ (w * w + w);
    w += 1;
    want[i] = (w * w + w) + u;
  }
  for (bool on : {true, false}) {
    std::vector<uint32_t> out(in.size());
    simulate(kernel(on), {in, out});
    CHECK(out == want);
  }
  CHECK(kernel(true).cuda().find("const uint32_t t") != std::string::npos);
}

TEST_CASE("share: read-only inputs stay shared across a barrier") {
  const Kernel k = capture("acrossSync", 64, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) {
            const SMutable<uint32_t> a = newShared<uint32_t>(p, 64);
            p.forAll(64u, [&](const Program<Thread>& t, const EWord32& i) {
              write(t, a, i, c[i] * 7u);
            });
            p.sync();
            return push<Block>(SPull<EWord32>(
                64u, [a, c](const EWord32& i) { return a[(i + 1u) % 64u] + c[i] * 7u; }));
          });
        },
        splitUp(64, in)));
  });
  // c[i] * 7 is computed before the barrier and read again after it.
  CHECK(count(k.cuda(), "in0[") == 1);
  CHECK(count(k.cuda(), "* 7u") == 1);
  const std::vector<uint32_t> in = ::testing::randomWords(128, 6);
  std::vector<uint32_t> out(128);
  simulate(k, {in, out});
  for (size_t i = 0; i < 128; ++i) {
    const size_t b = i / 64 * 64;
    CHECK(out[i] == in[b + (i + 1) % 64] * 7u + in[i] * 7u);
  }
}

TEST_CASE("share: 0.0 and -0.0 are different values") {
  const Kernel k = capture("zeros", 64, [](DPull<EFloat> in) {
    return push<Grid>(mkPull(len(in), [in](const EWord32& i) {
      const EFloat x = in[i];
      return EFloat(1.0f) / (x * 0.0f) + EFloat(1.0f) / (x * -0.0f);
    }));
  });
  const std::vector<float> in = {1.0f, 2.0f, 3.0f};
  std::vector<float> out(3);
  simulate(k, {in, out});
  for (float y : out) CHECK(std::isnan(y));  // inf + -inf, not inf + inf
}

TEST_CASE("share(): binds a value once, under the name it is given") {
  const Kernel k = capture("named", 64, [](DPull<EFloat> in) {
    return push<Grid>(mkPull(len(in), [in](const EWord32& i) {
      const EFloat scaled = share(in[i] * 2.5f + 1.0f, "scaled");
      const EFloat again = share(in[i] * 0.5f, "scaled");  // the name is taken: scaled_1
      const EFloat cheap = share(cast<float>(i), "position");
      return scaled * again + cheap;
    }));
  });
  const std::string cuda = k.cuda();
  CHECK(cuda.find("const float scaled = ") != std::string::npos);
  CHECK(cuda.find("const float scaled_1 = ") != std::string::npos);
  // Used once and cheap, but asked for.
  CHECK(cuda.find("const float position = ") != std::string::npos);
  const std::vector<float> in = {1.0f, -2.0f, 3.5f};
  std::vector<float> out(3);
  simulate(k, {in, out});
  for (size_t i = 0; i < 3; ++i) {
    CHECK(out[i] == doctest::Approx((in[i] * 2.5f + 1.0f) * (in[i] * 0.5f) + float(i)));
  }
  // A leaf needs no variable: share returns it as it is.
  CHECK(share(EWord32(5u)).node()->isLiteral());
}

TEST_CASE("share(): a value under a condition is not moved out of it") {
  const Kernel k =
      elementwise("sharedGuarded", true, [](const DPull<EWord32>& in, const EWord32& i) {
        const EWord32 next = share(in[i + 1u], "next");
        return ifThenElse(i + 1u < len(in), next, EWord32(0u));
      });
  CHECK(k.cuda().find("next =") == std::string::npos);
  const std::vector<uint32_t> in = ::testing::randomWords(10, 8);
  std::vector<uint32_t> out(10);
  simulate(k, {in, out});
  for (size_t i = 0; i < 10; ++i) CHECK(out[i] == (i + 1 < 10 ? in[i + 1] : 0u));
}

TEST_CASE("share(): the name must be an identifier that generated code leaves free") {
  auto named = [](const std::string& name) {
    return ::testing::errorOf([&] {
      capture("badName", 64, [&](DPull<EWord32> in) {
        return push<Grid>(
            mkPull(len(in), [in, name](const EWord32& i) { return share(in[i] * 2u, name); }));
      });
    });
  };
  CHECK(named("2x") ==
        "share(e, \"2x\"): the name must be a C identifier (a letter or _, then letters, digits "
        "and _)");
  CHECK(named("for") ==
        "share(e, \"for\"): the name must be free in generated code; 'for' is a C++ keyword");
  CHECK(named("threadIdx")
            .starts_with("share(e, \"threadIdx\"): the name must be free in generated code; "
                         "'threadIdx' is a CUDA "
                         "built-in variable"));
  CHECK(named("doubled") == "no error");
}
