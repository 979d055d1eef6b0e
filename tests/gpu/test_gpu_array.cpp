// GPU tests of whole-array programs (label gpu): planned programs of every pass kind (vector,
// matrix, row, column, tile, segment, scan, scatter) on the device at sizes that fill it, each
// output checked against plain C++; and the seeds' programs (examples/array/seeds.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <obsidian/array.hpp>
#include <random>

#include "../../examples/array/seeds.hpp"
#include "../../examples/safegpu/safegpu.hpp"

using namespace obsidian;
using namespace obsidian::array;

namespace {

PlanOptions onGpu() {
  PlanOptions o;
  o.target = device::Target::onGpu();
  return o;
}

std::vector<float> floats(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

// |got - want| within a relative tolerance of `scale` (the sum of the terms' magnitudes).
void near(const std::vector<float>& got, const std::vector<double>& want,
          const std::vector<double>& scale) {
  REQUIRE(got.size() >= want.size());
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= 2e-5 * scale[i] + 1e-30)) {
      if (bad++ < 3) FAIL_CHECK("element " << i << ": got " << got[i] << ", want " << want[i]);
    }
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("gpu: array programs: AXPYDOT, GEMVER and BiCGK match C++") {
  {
    const size_t n = (size_t{1} << 22) + 3;
    const auto w = floats(n, 1), v = floats(n, 2), u = floats(n, 3);
    const auto W = vectorInput<float>("w"), V = vectorInput<float>("v"),
               U = vectorInput<float>("u");
    const auto z = W - 0.75f * V;
    const Plan plan({{"z", z}, {"r", dot(z, U)}}, onGpu());
    CHECK(plan.kernelCount() == 1);
    gpu::DeviceBuffer<float> dw(w), dv(v), du(u), dz(n), dr(1);
    Bindings b;
    b.vector("w", dw).vector("v", dv).vector("u", du).output("z", dz).output("r", dr);
    plan.run(b);
    plan.run(b);  // twice: the grid state is ready again
    const auto zg = dz.download();
    std::vector<double> zw(n), zs(n);
    double r = 0, rs = 0;
    for (size_t i = 0; i < n; ++i) {
      zw[i] = w[i] - 0.75 * v[i];
      zs[i] = std::fabs(w[i]) + 0.75 * std::fabs(v[i]);
      r += zw[i] * u[i];
      rs += zs[i] * std::fabs(u[i]);
    }
    near(zg, zw, zs);
    near(dr.download(), {r}, {rs});
    // The same plan on 3 tiles: fewer blocks than the grid state holds (the results of the
    // launches before are not folded in).
    const size_t m = 3000;
    gpu::DeviceBuffer<float> sw(std::vector<float>(w.begin(), w.begin() + m)),
        sv(std::vector<float>(v.begin(), v.begin() + m)),
        su(std::vector<float>(u.begin(), u.begin() + m)), sz(m), sr(1);
    Bindings small;
    small.vector("w", sw).vector("v", sv).vector("u", su).output("z", sz).output("r", sr);
    plan.run(small);
    double r2 = 0, rs2 = 0;
    for (size_t i = 0; i < m; ++i) {
      r2 += zw[i] * u[i];
      rs2 += zs[i] * std::fabs(u[i]);
    }
    near(sr.download(), {r2}, {rs2});
  }
  {
    const uint32_t rows = 4099, cols = 3001, pitch = 3008;
    const auto a = floats(size_t{rows} * pitch, 4), u1 = floats(rows, 5), v1 = floats(cols, 6),
               u2 = floats(rows, 7), v2 = floats(cols, 8), y = floats(rows, 9),
               z = floats(cols, 10);
    const auto A = matrixInput<float>("A");
    const auto U1 = vectorInput<float>("u1"), V1 = vectorInput<float>("v1"),
               U2 = vectorInput<float>("u2"), V2 = vectorInput<float>("v2"),
               Y = vectorInput<float>("y"), Z = vectorInput<float>("z");
    const auto B = A + outer(U1, V1) + outer(U2, V2);
    const auto x = -1.25f * gemvT(B, Y) + Z;
    const Plan plan({{"B", B}, {"x", x}, {"w", 0.75f * gemv(B, x)}}, onGpu());
    CHECK(plan.kernelCount() == 3);
    gpu::DeviceBuffer<float> dA(a), du1(u1), dv1(v1), du2(u2), dv2(v2), dy(y), dz(z);
    gpu::DeviceBuffer<float> dB(size_t{rows} * cols), dx(cols), dwo(rows);
    Bindings b;
    b.matrix("A", dA, rows, cols, pitch).vector("u1", du1).vector("v1", dv1);
    b.vector("u2", du2).vector("v2", dv2).vector("y", dy).vector("z", dz);
    b.output("B", dB).output("x", dx).output("w", dwo);
    plan.run(b);
    std::vector<double> bm(size_t{rows} * cols), bs(bm.size()), xw(cols, 0), xs(cols, 0),
        ww(rows, 0), ws(rows, 0);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) {
        const double t1 = double(u1[r]) * v1[c], t2 = double(u2[r]) * v2[c];
        bm[r * cols + c] = a[r * pitch + c] + t1 + t2;
        bs[r * cols + c] = std::fabs(a[r * pitch + c]) + std::fabs(t1) + std::fabs(t2);
      }
    }
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) {
        xw[c] += bm[r * cols + c] * y[r];
        xs[c] += bs[r * cols + c] * std::fabs(y[r]);
      }
    }
    for (size_t c = 0; c < cols; ++c) {
      xw[c] = -1.25 * xw[c] + z[c];
      xs[c] = 1.25 * xs[c] + std::fabs(z[c]);
    }
    const auto xg = dx.download();
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) {
        ww[r] += 0.75 * bm[r * cols + c] * xg[c];
        ws[r] += 0.75 * bs[r * cols + c] * std::fabs(xg[c]);
      }
    }
    near(dB.download(), bm, bs);
    near(xg, xw, xs);
    near(dwo.download(), ww, ws);
  }
  {
    const uint32_t rows = 3001, cols = 4099, pitch = 4100;
    const auto a = floats(size_t{rows} * pitch, 11), p = floats(cols, 12), r = floats(rows, 13);
    const auto A = matrixInput<float>("A");
    const auto P = vectorInput<float>("p"), R = vectorInput<float>("r");
    const Plan plan({{"q", gemv(A, P)}, {"s", gemvT(A, R)}}, onGpu());
    CHECK(plan.kernelCount() == 3);
    gpu::DeviceBuffer<float> dA(a), dp(p), dr(r), dq(rows), ds(cols);
    Bindings b;
    b.matrix("A", dA, rows, cols, pitch)
        .vector("p", dp)
        .vector("r", dr)
        .output("q", dq)
        .output("s", ds);
    plan.run(b);
    std::vector<double> qw(rows, 0), qs(rows, 0), sw(cols, 0), ss(cols, 0);
    for (size_t i = 0; i < rows; ++i) {
      for (size_t c = 0; c < cols; ++c) {
        qw[i] += double(a[i * pitch + c]) * p[c];
        qs[i] += std::fabs(double(a[i * pitch + c]) * p[c]);
        sw[c] += double(a[i * pitch + c]) * r[i];
        ss[c] += std::fabs(double(a[i * pitch + c]) * r[i]);
      }
    }
    near(dq.download(), qw, qs);
    near(ds.download(), sw, ss);
  }
}

TEST_CASE("gpu: array programs: a CG iteration over CSR, scans and a histogram match C++") {
  const uint32_t n = 200003;
  std::mt19937 g(14);
  std::vector<float> values;
  std::vector<uint32_t> columns, offsets{0};
  for (uint32_t r = 0; r < n; ++r) {
    const uint32_t k = g() % 17;
    for (uint32_t i = 0; i < k; ++i) {
      columns.push_back(g() % n);
      values.push_back(float(int(g() % 2001) - 1000) / 1000.0f);
    }
    offsets.push_back(static_cast<uint32_t>(values.size()));
  }
  const auto p = floats(n, 15), x = floats(n, 16), r = floats(n, 17);
  const auto V = vectorInput<float>("values");
  const auto C = vectorInput<uint32_t>("columns"), O = vectorInput<uint32_t>("offsets");
  const auto P = vectorInput<float>("p"), X = vectorInput<float>("x"), R = vectorInput<float>("r");
  const auto q = spmv(V, C, O, P);
  const auto alpha = 3.5f / dot(P, q);
  const auto r1 = R - alpha * q;
  const Plan plan({{"x1", X + alpha * P}, {"r1", r1}, {"rho1", dot(r1, r1)}}, onGpu());
  CHECK(plan.kernelCount() <= 3);
  gpu::DeviceBuffer<float> dv(values), dp(p), dx(x), dr(r), dx1(n), dr1(n), drho(1);
  gpu::DeviceBuffer<uint32_t> dc(columns), doff(offsets);
  Bindings b;
  b.vector("values", dv).vector("columns", dc).vector("offsets", doff);
  b.vector("p", dp).vector("x", dx).vector("r", dr);
  b.output("x1", dx1).output("r1", dr1).output("rho1", drho);
  plan.run(b);
  std::vector<double> qw(n), xw(n), rw(n), one(n, 1.0);
  double pq = 0;
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t k = offsets[i]; k < offsets[i + 1]; ++k)
      qw[i] += double(values[k]) * p[columns[k]];
    pq += p[i] * qw[i];
  }
  const double al = 3.5 / pq;
  double rho = 0;
  for (uint32_t i = 0; i < n; ++i) {
    xw[i] = x[i] + al * p[i];
    rw[i] = r[i] - al * qw[i];
    rho += rw[i] * rw[i];
  }
  const auto xg = dx1.download(), rg = dr1.download();
  size_t bad = 0;
  for (uint32_t i = 0; i < n; ++i) {
    bad += !(std::fabs(xg[i] - xw[i]) <= 1e-4 * (1 + std::fabs(xw[i])));
    bad += !(std::fabs(rg[i] - rw[i]) <= 1e-3 * (1 + std::fabs(rw[i])));
  }
  CHECK(bad == 0);
  CHECK(std::fabs(drho.download()[0] - rho) <= 1e-3 * rho);

  // Scans and a histogram: exact (u32).
  const size_t m = (size_t{1} << 22) + 5;
  std::vector<uint32_t> w(m);
  for (size_t i = 0; i < m; ++i) w[i] = uint32_t(g());
  const auto Wv = vectorInput<uint32_t>("w");
  const Plan scans({{"inc", inclusiveScan(Sum{}, Wv * 3u)},
                    {"hist", histogram(1000, map([](const EWord32& e) { return e % 1013u; }, Wv))}},
                   onGpu());
  gpu::DeviceBuffer<uint32_t> dw(w), dinc(m), dh(1000);
  Bindings s;
  s.vector("w", dw).output("inc", dinc).output("hist", dh);
  scans.run(s);
  std::vector<uint32_t> inc(m), hist(1000, 0);
  uint32_t acc = 0;
  for (size_t i = 0; i < m; ++i) {
    acc += w[i] * 3u;
    inc[i] = acc;
    if (w[i] % 1013u < 1000u) ++hist[w[i] % 1013u];
  }
  CHECK(dinc.download() == inc);
  CHECK(dh.download() == hist);
}

TEST_CASE(
    "gpu: the seeds' array programs: RMSE in one kernel, Black-Scholes, stencils, contracts") {
  // RMSE's root of the mean computed by the last block of the reduction's pass (every block of
  // a full device publishes first).
  const size_t n = (size_t{1} << 22) + 3;
  const auto x = floats(n, 21), y = floats(n, 22);
  gpu::DeviceBuffer<float> dx(x), dy(y), one(1);
  const Plan rmse(seeds::rmse(), onGpu());
  CHECK(rmse.kernelCount() == 1);
  for (int run = 0; run < 2; ++run) {  // (the second run finds the ticket reset)
    one.fill(std::nanf(""));
    rmse.run(Bindings().vector("x", dx).vector("y", dy).output("rmse", one));
    const double want = stencils::rmseReference(x, y);
    CHECK(std::fabs(one.download()[0] - want) <= 1e-5 * want);
  }

  const uint32_t m = (1u << 20) + 7;
  const accelerate::Options o = accelerate::randomOptions(m, 23);
  gpu::DeviceBuffer<float> s(o.s), k(o.x), t(o.t), call(m), put(m);
  Plan(seeds::blackScholes(), onGpu())
      .run(Bindings()
               .vector("s", s)
               .vector("x", k)
               .vector("t", t)
               .output("call", call)
               .output("put", put));
  const auto gc = call.download(), gp = put.download();
  size_t bad = 0;
  for (uint32_t i = 0; i < m; ++i) {
    const auto [wc, wp] = accelerate::blackScholesBody(o.s[i], o.x[i], o.t[i]);
    bad += !(std::fabs(gc[i] - wc) <= 1e-4f * (1 + std::fabs(wc)));
    bad += !(std::fabs(gp[i] - wp) <= 1e-4f * (1 + std::fabs(wp)));
  }
  CHECK(bad == 0);

  const uint32_t rows = 1031, cols = 2053, pitch = 2056;
  const auto hm = floats(size_t{rows} * pitch, 24);
  std::vector<float> dense(size_t{rows} * cols);
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) dense[size_t{r} * cols + c] = hm[size_t{r} * pitch + c];
  }
  gpu::DeviceBuffer<float> dm(hm), dout(dense.size());
  Plan(seeds::blur<2>(), onGpu())
      .run(Bindings().matrix("in", dm, rows, cols, pitch).output("out", dout));
  const auto want = stencils::stencilReference(dense, rows, cols, stencils::kBlur<2>);
  const auto got = dout.download();
  bad = 0;
  for (size_t i = 0; i < want.size(); ++i) bad += !(std::fabs(got[i] - want[i]) <= 1e-5f);
  CHECK(bad == 0);

  // SafeGPU's postcondition, violated at one element of a full-device pass.
  auto big = x;
  big[n - 2] = 3e38f;
  auto other = y;
  other[n - 2] = 3e38f;
  gpu::DeviceBuffer<float> db(big), dother(other), dsum(n);
  const Plan add(seeds::vectorAddition(), onGpu());
  std::string message;
  try {
    add.run(Bindings().vector("current", db).vector("other", dother).output("result", dsum));
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK(message.find("Result is finite") != std::string::npos);
  CHECK(message.find(std::to_string(n - 2)) != std::string::npos);
}

TEST_CASE("gpu: array programs: segmented scans over CSR segments match C++") {
  // Random segment lengths (empty ones among them) over 2^22 + 5 elements: many tiles of the
  // scan, segments crossing them.
  const uint32_t n = (1u << 22) + 5;
  std::mt19937 g(31);
  std::vector<uint32_t> offsets = {0};
  while (offsets.back() < n) offsets.push_back(std::min(n, offsets.back() + uint32_t(g() % 3000)));
  std::vector<uint32_t> u(n);
  for (uint32_t& x : u) x = uint32_t(g());
  const auto U = vectorInput<uint32_t>("u"), O = vectorInput<uint32_t>("offsets");
  const auto H = segmentHeads(O, U);
  const Plan plan({{"inc", inclusiveScan(Sum{}, U, H)}, {"exc", exclusiveScan(Max{}, U, H)}},
                  onGpu());
  gpu::DeviceBuffer<uint32_t> du(u), doff(offsets), dinc(n), dexc(n);
  plan.run(
      Bindings().vector("u", du).vector("offsets", doff).output("inc", dinc).output("exc", dexc));
  std::vector<bool> head(n, false);
  for (uint32_t o : offsets) {
    if (o < n) head[o] = true;
  }
  const auto inc = dinc.download(), exc = dexc.download();
  uint32_t sum = 0, most = 0;
  size_t bad = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (head[i]) sum = 0, most = 0;
    bad += exc[i] != most;
    sum += u[i];
    most = std::max(most, u[i]);
    bad += inc[i] != sum;
  }
  CHECK(bad == 0);
}

TEST_CASE("gpu: SafeGPU's product, Gaussian elimination and sort as planned steps match C++") {
  // The product (odd sizes, pitches past the columns) against double sums.
  const uint32_t rows = 301, inner = 517, cols = 259, ap = 520, bp = 263;
  const auto a = floats(size_t{rows} * ap, 31), b = floats(size_t{inner} * bp, 32);
  gpu::DeviceBuffer<float> da(a), db(b), dc(size_t{rows} * cols);
  dc.fill(std::nanf(""));
  const Plan product(seeds::matrixMultiplication(), onGpu());
  CHECK(product.kernelCount() == 1);
  product.run(Bindings()
                  .matrix("current", da, rows, inner, ap)
                  .matrix("other", db, inner, cols, bp)
                  .output("result", dc));
  std::vector<double> want(size_t{rows} * cols), scale(want.size());
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t k = 0; k < inner; ++k) {
      for (uint32_t c = 0; c < cols; ++c) {
        const double t = double(a[size_t{r} * ap + k]) * b[size_t{k} * bp + c];
        want[size_t{r} * cols + c] += t;
        scale[size_t{r} * cols + c] += std::fabs(t);
      }
    }
  }
  near(dc.download(), want, scale);

  // gauss_determinant's steps, one plan, the step an input.
  const uint32_t n = 157;
  auto m = floats(size_t{n} * n, 33);
  for (uint32_t i = 0; i < n; ++i) m[size_t{i} * n + i] += float(n);
  gpu::DeviceBuffer<float> dm(m), x(m.size()), y(m.size());
  const Plan step(seeds::gaussStep(), onGpu());
  gpu::DeviceBuffer<float>* to = &x;
  gpu::DeviceBuffer<float>* from = &y;
  for (uint32_t s = 0; s + 1 < n; ++s) {
    step.run(Bindings()
                 .matrix("matrix", s == 0 ? dm : *from, n, n, n)
                 .scalar("step", s)
                 .output("result", *to));
    std::swap(to, from);
  }
  std::vector<double> u(m.begin(), m.end());  // the reference: gaussStep's steps, in double
  for (uint32_t s = 0; s + 1 < n; ++s) {
    for (uint32_t r = s + 1; r < n; ++r) {
      const double f = u[size_t{r} * n + s] / u[size_t{s} * n + s];
      for (uint32_t c = 0; c < n; ++c) {
        u[size_t{r} * n + c] = c == s ? 0.0 : u[size_t{r} * n + c] - f * u[size_t{s} * n + c];
      }
    }
  }
  const auto got = from->download();
  size_t bad = 0;
  for (size_t i = 0; i < u.size(); ++i)
    bad += !(std::fabs(got[i] - u[i]) <= 1e-4 * (1 + std::fabs(u[i])));
  CHECK(bad == 0);

  // The sorting network's steps.
  const uint32_t len = (1u << 16) + 5;
  const auto v = floats(len, 34);
  gpu::DeviceBuffer<float> dv(v), sx(len), sy(len);
  const Plan sortStep(seeds::sortStep(), onGpu());
  to = &sx;
  from = &sy;
  const auto masks = safegpu::sortMasks(len);
  for (size_t s = 0; s < masks.size(); ++s) {
    sortStep.run(
        Bindings().vector("a", s == 0 ? dv : *from).scalar("mask", masks[s]).output("result", *to));
    std::swap(to, from);
  }
  auto sorted = v;
  std::sort(sorted.begin(), sorted.end());
  CHECK(from->download() == sorted);
}

TEST_CASE("gpu: array programs: sort, sortByKey and sortIndices match a stable sort") {
  const size_t n = (size_t{1} << 21) + 7;
  std::mt19937_64 g(11);
  std::vector<uint32_t> a(n), w(n);
  std::vector<float> f(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = uint32_t(g());
    w[i] = uint32_t(g() % 1000);
    f[i] = float(int(g() % 201) - 100) * 0.25f;  // ties, -0 and +0 kept apart
    if (i % 97 == 0) f[i] = -0.0f;
  }
  const auto A = vectorInput<uint32_t>("a"), W = vectorInput<uint32_t>("w");
  const auto F = vectorInput<float>("f");
  const auto keys = A * 3u + W;  // stored by a vector pass before its sorts
  const Plan plan({{"sorted", sort(keys)},
                   {"ranked", gather(W, sortIndices(keys)) * 2u},
                   {"byF", sortByKey(F, W, Order::Descending)}},
                  onGpu());
  gpu::DeviceBuffer<uint32_t> da(a), dw(w), dsorted(n), dranked(n), dby(n);
  gpu::DeviceBuffer<float> df(f);
  Bindings b;
  b.vector("a", da).vector("w", dw).vector("f", df).output("sorted", dsorted);
  b.output("ranked", dranked).output("byF", dby);
  const auto orderOf = [&](const auto& key, bool descending) {
    std::vector<uint32_t> idx(n);
    for (uint32_t i = 0; i < n; ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](uint32_t x, uint32_t y) {
      return descending ? key(y) < key(x) : key(x) < key(y);
    });
    return idx;
  };
  for (int run = 0; run < 2; ++run) {  // (the second run reuses the sorts' storage)
    CAPTURE(run);
    if (run == 1) {
      for (uint32_t& x : a) x = x * 2654435761u + 12345u;
      da.upload(a);
    }
    plan.run(b);
    const auto sorted = dsorted.download(), ranked = dranked.download(), by = dby.download();
    const auto k = [&](uint32_t i) { return a[i] * 3u + w[i]; };
    const auto byKeys = orderOf(k, false);
    // f's order word: -0 before +0 (descending: +0 first), as the device sort orders them
    const auto fk = [&](uint32_t i) {
      uint32_t raw;
      std::memcpy(&raw, &f[i], 4);
      return (raw >> 31) ? ~raw : raw | 0x80000000u;
    };
    const auto byF = orderOf(fk, true);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
      bad += sorted[i] != k(byKeys[i]);
      bad += ranked[i] != 2u * w[byKeys[i]];
      bad += by[i] != w[byF[i]];
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("gpu: array programs: reshape and flatten match C++") {
  const uint32_t cols = 1000, rows = 4099;  // (v: 4,099,000 elements as rows of 1000)
  const uint32_t mr = 3001, mc = 2999, pitch = 3008;
  const auto v = floats(size_t{rows} * cols, 21), m = floats(size_t{mr} * pitch, 22);
  const auto V = vectorInput<float>("v");
  const auto M = matrixInput<float>("m");
  const Plan plan({{"rowSums", rowReduce(Sum{}, reshape(V, cols))},
                   {"colSums", colReduce(Sum{}, reshape(V, cols))},
                   {"flat", 2.0f * flatten(M)}},
                  onGpu());
  gpu::DeviceBuffer<float> dv(v), dm(m), drow(rows), dcol(cols), dflat(size_t{mr} * mc);
  Bindings b;
  b.vector("v", dv).matrix("m", dm, mr, mc, pitch).output("rowSums", drow);
  b.output("colSums", dcol).output("flat", dflat);
  plan.run(b);
  std::vector<double> rs(rows), rsc(rows), cs(cols), csc(cols);
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) {
      const double x = v[size_t{r} * cols + c];
      rs[r] += x;
      rsc[r] += std::fabs(x);
      cs[c] += x;
      csc[c] += std::fabs(x);
    }
  }
  near(drow.download(), rs, rsc);
  near(dcol.download(), cs, csc);
  const auto flat = dflat.download();
  size_t bad = 0;
  for (size_t i = 0; i < flat.size(); ++i) bad += flat[i] != 2.0f * m[i / mc * pitch + i % mc];
  CHECK(bad == 0);
}

TEST_CASE("gpu: array programs: the user's kernel as an operation matches C++") {
  const size_t n = (size_t{1} << 22) + 5;
  const auto x = floats(n, 31), y = floats(n, 32);
  const Kernel axpy =
      capture("userAxpyGpu", 256, [](EFloat alpha, DPull<EFloat> a, DPull<EFloat> b) {
        return push<Grid>(
            zipWith([alpha](const EFloat& p, const EFloat& q) { return alpha * p + q; }, a, b));
      });
  const auto X = vectorInput<float>("x"), Y = vectorInput<float>("y");
  const auto z = callElementwise<float>(axpy, Scalar<float>(0.5f), X * 2.0f, Y);
  const Plan plan({{"z", z}, {"s", sum(z)}}, onGpu());
  gpu::DeviceBuffer<float> dx(x), dy(y), dz(n), ds(1);
  Bindings b;
  b.vector("x", dx).vector("y", dy).output("z", dz).output("s", ds);
  plan.run(b);
  std::vector<double> want(1, 0.0), scale(1, 0.0), z1(n), zscale(n);
  for (size_t i = 0; i < n; ++i) {
    z1[i] = 0.5 * (double(x[i]) * 2.0) + y[i];  // (the GPU may fuse it into an fma)
    zscale[i] = std::fabs(double(x[i])) + std::fabs(y[i]);
    want[0] += z1[i];
    scale[0] += std::fabs(z1[i]);
  }
  near(dz.download(), z1, zscale);
  near(ds.download(), want, scale);
}
