// Whole-array programs' call and callElementwise on the simulator: the user's own captured
// kernel as an operation (its operands stored before it, its readers after it), with vector,
// scalar-input and number operands, fused and unfused, against plain C++; the simulator's race
// check on the user's kernel; and the errors naming the kernel's parameter.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <obsidian/array.hpp>
#include <obsidian/obsidian.hpp>

#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::array;
using ::testing::errorOf;

namespace {
// alpha x + y, elementwise (the Accelerate example's kernel).
Kernel axpy() {
  return capture("userAxpy", 128, [](EWord32 alpha, DPull<EWord32> x, DPull<EWord32> y) {
    return push<Grid>(
        zipWith([alpha](const EWord32& a, const EWord32& b) { return alpha * a + b; }, x, y));
  });
}
// Each element of its input read at the mirrored index: reads anywhere (a reverse).
Kernel reverse() {
  return capture("userReverse", 64, [](DPull<EWord32> x) {
    return push<Grid>(ixMap([n = len(x)](const EWord32& i) { return n - 1u - i; }, x));
  });
}
}  // namespace

TEST_CASE("array programs: the user's kernel as an operation (call, callElementwise)") {
  const uint32_t n = 3001;
  std::vector<uint32_t> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = i * 7u + 1u;
    y[i] = i * i;
  }
  const auto X = vectorInput<uint32_t>("x"), Y = vectorInput<uint32_t>("y");
  const auto alpha = scalarInput<uint32_t>("alpha");
  const Kernel k = axpy(), r = reverse();
  // A map of inputs feeds the user's kernel (stored first); its result feeds a reduction and a
  // map (after it); a number and a scalar input are its scalar operands.
  const auto z = callElementwise<uint32_t>(k, alpha, X * 2u, Y);
  const auto w = call<uint32_t>(r, n, z);
  const auto three = callElementwise<uint32_t>(k, Scalar<uint32_t>(3u), X, Y);
  const std::vector<Output> program = {
      {"z", z}, {"w", w + 1u}, {"total", sum(z)}, {"three", three}};
  for (const bool fuse : {true, false}) {
    CAPTURE(fuse);
    PlanOptions o;
    o.fuse = fuse;
    const Plan plan(program, o);
    std::vector<uint32_t> zs(n), ws(n), total(1), th(n);
    const Bindings b = Bindings()
                           .vector("x", x)
                           .vector("y", y)
                           .scalar("alpha", 5u)
                           .output("z", zs)
                           .output("w", ws)
                           .output("total", total)
                           .output("three", th);
    plan.run(b);
    uint32_t s = 0;
    size_t bad = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t want = 5u * (2u * x[i]) + y[i];
      s += want;
      bad += zs[i] != want;
      bad += th[i] != 3u * x[i] + y[i];
      bad += ws[n - 1 - i] != want + 1u;
    }
    CHECK(bad == 0);
    CHECK(total[0] == s);
    if (fuse) {
      const PlanReport rep = plan.report(b);
      size_t calls = 0;
      for (const PassReport& p : rep.kernels) {
        if (p.kind != "call pass") continue;
        ++calls;
        CHECK((p.name == "userAxpy" || p.name == "userReverse"));
        CHECK(p.boundary.find("the user's kernel user") == 0);
      }
      CHECK(calls == 3);
      // the map of x stored by a vector pass before the first call
      CHECK(rep.kernels.front().kind == "vector pass");
    }
  }
  // Empty operands: the kernels run over no elements.
  {
    const Plan empty({{"z", z}, {"three", three}});
    std::vector<uint32_t> none, zs, th;
    empty.run(Bindings()
                  .vector("x", none)
                  .vector("y", none)
                  .scalar("alpha", 5u)
                  .output("z", zs)
                  .output("three", th));
  }
  // The elementwise call ties its operands' lengths; call's result has its own.
  std::vector<uint32_t> shortY(n - 1), zs(n), ws(n), total(1), th(n);
  const Plan plan(program);
  CHECK(errorOf([&] {
          plan.run(Bindings()
                       .vector("x", x)
                       .vector("y", shortY)
                       .scalar("alpha", 5u)
                       .output("z", zs)
                       .output("w", ws)
                       .output("total", total)
                       .output("three", th));
        }).find("ties") != std::string::npos);
}

TEST_CASE("array programs: call's errors name the kernel and its parameter") {
  const auto X = vectorInput<uint32_t>("x");
  const auto F = vectorInput<float>("f");
  const auto s = scalarInput<uint32_t>("s");
  const Kernel k = axpy();
  CHECK(errorOf([&] {
          callElementwise<uint32_t>(k, X, X);
        }).find("call(userAxpy): the kernel takes 4 argument(s)") == 0);
  CHECK(errorOf([&] {
          callElementwise<uint32_t>(k, s, F, X);
        }).find("call(userAxpy): parameter 1 (") == 0);
  CHECK(errorOf([&] {
          callElementwise<uint32_t>(k, X, X, X);
        }).find("is a scalar of type uint32_t; operand 0 is a vector") != std::string::npos);
  CHECK(errorOf([&] {
          callElementwise<uint32_t>(k, sum(X), X, X);
        }).find("pass a scalarInput or a number") != std::string::npos);
  CHECK(errorOf([&] { callElementwise<float>(k, s, X, X); }).find("its last parameter") !=
        std::string::npos);
  const Kernel writer =
      capture("userWriter", 32, [](DMutable<uint32_t>, DPull<EWord32> x) { return push<Grid>(x); });
  CHECK(errorOf([&] {
          callElementwise<uint32_t>(writer, X, X);
        }).find("an array the kernel writes; an operand is only read") != std::string::npos);
  // Two different kernels of one name cannot both be exported.
  PlanOptions gpu;
  gpu.target = device::Target{true, 90, 132};
  const Kernel other = capture("userAxpy", 64, [](EWord32 a, DPull<EWord32> x, DPull<EWord32> y) {
    return push<Grid>(zipWith([a](const EWord32& p, const EWord32& q) { return p - a * q; }, x, y));
  });
  CHECK(errorOf([&] {
          (void)Plan({{"z", callElementwise<uint32_t>(k, s, X, X)},
                      {"w", callElementwise<uint32_t>(other, s, X, X)}},
                     gpu)
              .exportHeader("f", "n");
        }).find("two different kernels named userAxpy") != std::string::npos);
}

TEST_CASE("array programs: a call exports with the user's kernel's launcher") {
  const auto X = vectorInput<uint32_t>("x"), Y = vectorInput<uint32_t>("y");
  const auto alpha = scalarInput<uint32_t>("alpha");
  const Kernel k = axpy();
  PlanOptions gpu;
  gpu.target = device::Target{true, 90, 132};
  // The kernel called twice (a scalar input, then a number): its launcher once, called twice
  // with the stored map, the inputs and the result's buffer.
  const Plan plan({{"z", callElementwise<uint32_t>(k, alpha, X + 1u, Y)},
                   {"t", callElementwise<uint32_t>(k, Scalar<uint32_t>(3u), X, Y)}},
                  gpu);
  const std::string h = plan.exportHeader("twice", "calls");
  const auto count = [&](const std::string& what) {
    size_t c = 0;
    for (size_t at = h.find(what); at != std::string::npos; at = h.find(what, at + 1)) ++c;
    return c;
  };
  CHECK(count("cudaError_t userAxpy_launch(") == 1);
  CHECK(count("= userAxpy_launch(") == 2);
  CHECK(h.find("userAxpy_launch(alpha, ") != std::string::npos);
  CHECK(h.find("userAxpy_launch(3u, x, xLen, y, yLen, t, obsidian_count") != std::string::npos);
  CHECK(h.find("cudaError_t twice(") != std::string::npos);
  // A float number that is not finite is passed by its bits (the host function cannot call the
  // device's __int_as_float).
  const Kernel scale = capture("userScale", 64, [](EFloat a, DPull<EFloat> x) {
    return push<Grid>(fmap([a](const EFloat& v) { return a * v; }, x));
  });
  const auto F = vectorInput<float>("f");
  const std::string inf =
      Plan({{"g", callElementwise<float>(scale, Scalar<float>(-INFINITY), F)}}, gpu)
          .exportHeader("g", "calls");
  CHECK(
      inf.find(
          "userScale_launch(__builtin_bit_cast(float, 0xff800000u), f, fLen, g, obsidian_count") !=
      std::string::npos);
}

TEST_CASE("array programs: the simulator checks the user's kernel for races") {
  // Elements i and i + 1 both sent to i / 2: a race the simulator reports as the plan runs it.
  const Kernel halves = capture("userHalves", 64, [](DPull<EWord32> in) {
    return permute(len(in) / 2u, push<Grid>(in), [](const EWord32& i) { return i / 2u; });
  });
  const auto X = vectorInput<uint32_t>("x");
  const Plan plan({{"h", call<uint32_t>(halves, 128, X + 1u)}});
  std::vector<uint32_t> x(256, 1), h(128);
  const std::string e = errorOf([&] { plan.run(Bindings().vector("x", x).output("h", h)); });
  CHECK(e.find("race") != std::string::npos);
  CHECK(e.find("userHalves") != std::string::npos);
}
