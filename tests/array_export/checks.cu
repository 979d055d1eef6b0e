// Whole-array programs exported as one host function each (array::Plan::exportHeader, headers
// written by gen.cpp): the function checks the extents as array::Plan::run does and returns
// cudaErrorInvalidValue before any CUDA call, so the first part runs without a GPU (made-up
// device addresses: nothing is read or written). With a GPU, the second part runs each program
// on random data and compares it with plain C++.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "array_axpydot.cuh"
#include "array_bicgk.cuh"
#include "array_call.cuh"
#include "array_cg.cuh"
#include "array_gemver.cuh"
#include "array_gemver_unfused.cuh"
#include "array_histogram.cuh"
#include "array_pick.cuh"
#include "array_reshape.cuh"
#include "array_scan.cuh"
#include "array_sorts.cuh"
#include "array_spmv.cuh"

namespace {

int failures = 0;

void expect(cudaError_t got, cudaError_t want, const char* what) {
  if (got != want) {
    std::printf("FAIL %s: got %d (%s), want %d (%s)\n", what, static_cast<int>(got),
                cudaGetErrorName(got), static_cast<int>(want), cudaGetErrorName(want));
    ++failures;
  }
}
void invalid(cudaError_t got, const char* what) { expect(got, cudaErrorInvalidValue, what); }

template <class T>
T* fake(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

// ------------------------------------------------------------------------ without a GPU
void refusals() {
  const float* a = fake<const float>(0x1000000);
  const float* b = fake<const float>(0x2000000);
  const float* c = fake<const float>(0x3000000);
  float* o1 = fake<float>(0x4000000);
  float* o2 = fake<float>(0x5000000);
  float* o3 = fake<float>(0x6000000);
  const uint32_t* i1 = fake<const uint32_t>(0x7000000);
  const uint32_t* i2 = fake<const uint32_t>(0x8000000);
  uint32_t* p1 = fake<uint32_t>(0x9000000);
  uint32_t* p2 = fake<uint32_t>(0xa000000);
  uint32_t* p3 = fake<uint32_t>(0xb000000);
  using arrays::axpydot::axpydot;
  // axpydot(u, uLen, v, vLen, w, wLen, r, rLen, z, zLen)
  invalid(axpydot(a, 100, b, 101, c, 100, o1, 1, o2, 100), "axpydot: len(v) != len(u)");
  invalid(axpydot(a, 100, b, 100, c, 99, o1, 1, o2, 100), "axpydot: len(w) != len(u)");
  invalid(axpydot(a, 100, b, 100, c, 100, o1, 1, o2, 99), "axpydot: z too small");
  invalid(axpydot(a, 100, b, 100, c, 100, o1, 0, o2, 100), "axpydot: r holds no element");
  invalid(axpydot(a, 100, b, 100, c, 100, nullptr, 1, o2, 100), "axpydot: r null");
  invalid(axpydot(a, 100, nullptr, 100, c, 100, o1, 1, o2, 100), "axpydot: v null");
  invalid(axpydot(a, 1ull << 32, b, 1ull << 32, c, 1ull << 32, o1, 1, o2, 1ull << 32),
          "axpydot: 2^32 elements");
  invalid(axpydot(a, 100, b, 100, c, 100, o1, 1, const_cast<float*>(b) + 50, 100),
          "axpydot: z overlaps v");

  using arrays::gemver::gemver;
  // gemver(A, rows, cols, pitch, u1, u1Len, v1, v1Len, y, yLen, z, zLen, B, BLen, w, wLen, x,
  //        xLen)
  invalid(gemver(a, 10, 20, 19, b, 10, c, 20, b, 10, c, 20, o1, 200, o2, 10, o3, 20),
          "gemver: pitch < cols");
  invalid(gemver(a, 1u << 17, 1u << 15, 1u << 15, b, 1u << 17, c, 1u << 15, b, 1u << 17, c,
                 1u << 15, o1, 1ull << 32, o2, 1u << 17, o3, 1u << 15),
          "gemver: rows x pitch over 2^32 - 1");
  invalid(gemver(a, 10, 20, 24, b, 11, c, 20, b, 10, c, 20, o1, 200, o2, 10, o3, 20),
          "gemver: len(u1) != rows(A)");
  invalid(gemver(a, 10, 20, 24, b, 10, c, 20, b, 10, c, 21, o1, 200, o2, 10, o3, 20),
          "gemver: len(z) != cols(A)");
  invalid(gemver(a, 10, 20, 24, b, 10, c, 20, b, 10, c, 20, o1, 199, o2, 10, o3, 20),
          "gemver: B smaller than rows x cols");
  invalid(gemver(a, 10, 20, 24, b, 10, c, 20, b, 10, c, 20, o1, 200, o2, 10, o3, 19),
          "gemver: x smaller than cols(A)");
  invalid(gemver(nullptr, 10, 20, 24, b, 10, c, 20, b, 10, c, 20, o1, 200, o2, 10, o3, 20),
          "gemver: A null");

  using arrays::bicgk::bicgk;
  // bicgk(A, rows, cols, pitch, p, pLen, r, rLen, q, qLen, s, sLen)
  invalid(bicgk(a, 30, 40, 40, b, 41, c, 30, o1, 30, o2, 40), "bicgk: len(p) != cols(A)");
  invalid(bicgk(a, 30, 40, 40, b, 40, c, 30, o1, 29, o2, 40), "bicgk: q smaller than rows(A)");

  using arrays::spmv::spmv;
  // spmv(columns, columnsLen, offsets, offsetsLen, values, valuesLen, x, xLen, y, yLen, out,
  //      outLen)
  invalid(spmv(i1, 50, i2, 0, a, 50, b, 20, c, 0, o1, 0), "spmv: no offsets (-1 segments)");
  invalid(spmv(i1, 50, i2, 11, a, 50, b, 20, c, 11, o1, 10), "spmv: len(y) != segments");
  invalid(spmv(i1, 49, i2, 11, a, 50, b, 20, c, 10, o1, 10), "spmv: len(columns) != len(values)");
  invalid(spmv(i1, 50, i2, 11, a, 50, b, 20, c, 10, o1, 9), "spmv: out smaller than segments");

  using arrays::scan::scan;
  // scan(s, v, vLen, diff, diffLen, inc, incLen, total, totalLen)
  invalid(scan(3u, i1, 0, p1, 0, p2, 0, p3, 1), "scan: an empty v (its slices would be -1)");
  invalid(scan(3u, i1, 100, p1, 98, p2, 100, p3, 1), "scan: diff smaller than len(v) - 1");
  invalid(scan(3u, i1, 100, p1, 99, p2, 100, p3, 0), "scan: total holds no element");
  using arrays::pick::pick;
  // pick(k, m, mRows, mCols, mPitch, d, dLen, r, rLen): m square (diagonal, matmul(m, m))
  invalid(pick(3u, a, 100, 101, 101, o1, 100, o2, 100), "pick: m not square");
  invalid(pick(3u, a, 100, 100, 99, o1, 100, o2, 100), "pick: pitch below cols");
  invalid(pick(3u, a, 100, 100, 100, o1, 99, o2, 100), "pick: d too small");
  using arrays::reshape::reshape;
  // reshape(m, mRows, mCols, mPitch, v, vLen, fl, flLen, rs, rsLen): vLen whole rows of 7,
  // fl holds rows x cols, rs len / 7
  invalid(reshape(b, 3, 5, 5, a, 100, o1, 15, o2, 14), "reshape: 100 is not rows of 7");
  invalid(reshape(b, 3, 5, 5, a, 98, o1, 14, o2, 14), "reshape: fl too small");
  invalid(reshape(b, 3, 5, 5, a, 98, o1, 15, o2, 13), "reshape: rs too small");
  using arrays::calls::calls;
  // calls(a, u, uLen, v, vLen, r, rLen, w, wLen, z, zLen): len(u) = len(v) (the elementwise
  // kernel ties them); z holds len(v), w the call's 100003, r one
  invalid(calls(2.0f, a, 100, b, 101, o1, 1, o2, 100003, o3, 100), "calls: len(v) != len(u)");
  invalid(calls(2.0f, a, 100, b, 100, o1, 1, o2, 100002, o3, 100), "calls: w too small");
  invalid(calls(2.0f, a, 100, b, 100, o1, 1, o2, 100003, o3, 99), "calls: z too small");
  using arrays::sorts::sorts;
  // sorts(f, fLen, k, kLen, w, wLen, byF, byFLen, byW, byWLen, down, downLen, up, upLen):
  // len(f) = len(w); byF, byW hold len(f), down and up len(k)
  const uint64_t* w64 = fake<const uint64_t>(0xc000000);
  invalid(sorts(a, 100, i1, 50, w64, 101, p1, 100, o1, 100, p2, 50, p3, 50),
          "sorts: len(w) != len(f)");
  invalid(sorts(a, 100, i1, 50, w64, 100, p1, 100, o1, 100, p2, 50, p3, 49), "sorts: up too small");
  invalid(sorts(a, 100, i1, 50, w64, 100, p1, 99, o1, 100, p2, 50, p3, 50), "sorts: byF too small");
  // More keys than a sort takes (32-bit places and a tile past the last key), arrays apart
  const size_t many = 4294967000ull;
  invalid(sorts(a, 100, fake<const uint32_t>(0x100000000000), many, w64, 100, p1, 100, o1, 100,
                fake<uint32_t>(0x200000000000), many, fake<uint32_t>(0x300000000000), many),
          "sorts: more keys than a sort takes");
  // down = sort(k, descending) written over k: refused before anything runs
  invalid(sorts(a, 100, p2, 50, w64, 100, p1, 100, o1, 100, p2, 50, p3, 50),
          "sorts: down overlaps k");
}

// ------------------------------------------------------------------------ on a GPU
std::mt19937 rng(7);

std::vector<float> randomFloats(size_t n) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

template <class T>
struct Device {
  T* p = nullptr;
  size_t n = 0;
  explicit Device(size_t count) : n(count) {
    expect(cudaMalloc(&p, (count ? count : 1) * sizeof(T)), cudaSuccess, "cudaMalloc");
  }
  explicit Device(const std::vector<T>& host) : Device(host.size()) {
    expect(cudaMemcpy(p, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess,
           "cudaMemcpy to the device");
  }
  ~Device() { cudaFree(p); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  std::vector<T> host() const {
    std::vector<T> h(n);
    expect(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess,
           "cudaMemcpy to the host");
    return h;
  }
};

// got[i] near want[i], relative to scale[i] (the sum of the magnitudes that made it).
void near(const std::vector<float>& got, const std::vector<double>& want,
          const std::vector<double>& scale, const char* what) {
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= 1e-5 * scale[i] + 1e-6)) {
      if (bad == 0) {
        std::printf("FAIL %s: element %zu is %.9g, want %.9g\n", what, i, got[i], want[i]);
      }
      ++bad;
    }
  }
  if (bad) ++failures;
}

void axpydotOnGpu() {
  const size_t n = 1000003;
  const auto u = randomFloats(n), v = randomFloats(n), w = randomFloats(n);
  Device<float> du(u), dv(v), dw(w), dr(1), dz(n);
  expect(arrays::axpydot::axpydot(du.p, n, dv.p, n, dw.p, n, dr.p, 1, dz.p, n), cudaSuccess,
         "axpydot");
  expect(cudaDeviceSynchronize(), cudaSuccess, "axpydot: synchronize");
  std::vector<double> z(n), zScale(n), r(1, 0.0), rScale(1, 0.0);
  for (size_t i = 0; i < n; ++i) {
    z[i] = double(w[i]) - 0.75 * double(v[i]);
    zScale[i] = std::fabs(w[i]) + 0.75 * std::fabs(v[i]);
    r[0] += z[i] * u[i];
    rScale[0] += std::fabs(z[i] * u[i]);
  }
  near(dz.host(), z, zScale, "axpydot: z");
  near(dr.host(), r, rScale, "axpydot: r");
}

// The fused and the unfused GEMVER (one kernel per operation) have one signature.
template <class Gemver>
void gemverOnGpu(Gemver gemver, const char* what) {
  const uint32_t rows = 1000, cols = 777, pitch = 780;
  const auto a = randomFloats(size_t{rows} * pitch), u1 = randomFloats(rows),
             v1 = randomFloats(cols), y = randomFloats(rows), z = randomFloats(cols);
  Device<float> da(a), du1(u1), dv1(v1), dy(y), dz(z), dB(size_t{rows} * cols), dw(rows), dx(cols);
  cudaStream_t stream = nullptr;
  expect(cudaStreamCreate(&stream), cudaSuccess, "cudaStreamCreate");
  expect(gemver(da.p, rows, cols, pitch, du1.p, rows, dv1.p, cols, dy.p, rows, dz.p, cols, dB.p,
                dB.n, dw.p, rows, dx.p, cols, stream),
         cudaSuccess, what);
  expect(cudaStreamSynchronize(stream), cudaSuccess, what);
  cudaStreamDestroy(stream);
  std::vector<double> B(size_t{rows} * cols), Bs(B.size()), x(cols, 0.0), xs(cols, 0.0),
      w(rows, 0.0), ws(rows, 0.0);
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) {
      B[size_t{r} * cols + c] = double(a[size_t{r} * pitch + c]) + double(u1[r]) * v1[c];
      Bs[size_t{r} * cols + c] = std::fabs(a[size_t{r} * pitch + c]) + std::fabs(u1[r] * v1[c]);
    }
  }
  for (uint32_t c = 0; c < cols; ++c) {
    for (uint32_t r = 0; r < rows; ++r) {
      x[c] += B[size_t{r} * cols + c] * y[r];
      xs[c] += std::fabs(B[size_t{r} * cols + c] * y[r]);
    }
    x[c] = -1.25 * x[c] + z[c];
    xs[c] = 1.25 * xs[c] + std::fabs(z[c]);
  }
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) {
      w[r] += B[size_t{r} * cols + c] * x[c];
      ws[r] += std::fabs(B[size_t{r} * cols + c]) * xs[c];
    }
    w[r] *= 0.75;
    ws[r] *= 0.75;
  }
  near(dB.host(), B, Bs, what);
  near(dx.host(), x, xs, what);
  near(dw.host(), w, ws, what);
}

void bicgkOnGpu() {
  const uint32_t rows = 2000, cols = 1500, pitch = 1504;
  const auto a = randomFloats(size_t{rows} * pitch), p = randomFloats(cols), r = randomFloats(rows);
  Device<float> da(a), dp(p), dr(r), dq(rows), ds(cols);
  expect(
      arrays::bicgk::bicgk(da.p, rows, cols, pitch, dp.p, cols, dr.p, rows, dq.p, rows, ds.p, cols),
      cudaSuccess, "bicgk");
  expect(cudaDeviceSynchronize(), cudaSuccess, "bicgk: synchronize");
  std::vector<double> q(rows, 0.0), qs(rows, 0.0), s(cols, 0.0), ss(cols, 0.0);
  for (uint32_t i = 0; i < rows; ++i) {
    for (uint32_t c = 0; c < cols; ++c) {
      const double e = a[size_t{i} * pitch + c];
      q[i] += e * p[c];
      qs[i] += std::fabs(e * p[c]);
      s[c] += e * r[i];
      ss[c] += std::fabs(e * r[i]);
    }
  }
  near(dq.host(), q, qs, "bicgk: q");
  near(ds.host(), s, ss, "bicgk: s");
}

// A random CSR matrix: rows x cols, 0 to 18 entries a row.
struct Csr {
  std::vector<float> values;
  std::vector<uint32_t> columns, offsets{0};
};
Csr randomCsr(uint32_t rows, uint32_t cols) {
  Csr m;
  for (uint32_t r = 0; r < rows; ++r) {
    const uint32_t k = rng() % 19;
    for (uint32_t i = 0; i < k; ++i) {
      m.columns.push_back(rng() % cols);
      m.values.push_back(float(int(rng() % 2001) - 1000) / 1000.0f);
    }
    m.offsets.push_back(static_cast<uint32_t>(m.values.size()));
  }
  return m;
}

void spmvOnGpu() {
  const uint32_t rows = 3001, cols = 2000;
  const Csr m = randomCsr(rows, cols);
  const std::vector<float>& values = m.values;
  const std::vector<uint32_t>&columns = m.columns, &offsets = m.offsets;
  const auto x = randomFloats(cols), y = randomFloats(rows);
  Device<float> dv(values), dx(x), dy(y), dout(rows);
  Device<uint32_t> dc(columns), dof(offsets);
  expect(arrays::spmv::spmv(dc.p, dc.n, dof.p, dof.n, dv.p, dv.n, dx.p, cols, dy.p, rows, dout.p,
                            rows),
         cudaSuccess, "spmv");
  expect(cudaDeviceSynchronize(), cudaSuccess, "spmv: synchronize");
  std::vector<double> want(rows), scale(rows);
  for (uint32_t r = 0; r < rows; ++r) {
    double s = 0, magnitude = 0;
    for (uint32_t k = offsets[r]; k < offsets[r + 1]; ++k) {
      s += double(values[k]) * x[columns[k]];
      magnitude += std::fabs(double(values[k]) * x[columns[k]]);
    }
    want[r] = 2 * s - y[r];
    scale[r] = 2 * magnitude + std::fabs(y[r]);
  }
  near(dout.host(), want, scale, "spmv: out");
}

// q = A p; alpha = rho / (p . q); x1 = x + alpha p; r1 = r - alpha q; rho1 = r1 . r1
void cgOnGpu() {
  const uint32_t n = 5003;
  const Csr m = randomCsr(n, n);
  const auto p = randomFloats(n), x = randomFloats(n), r = randomFloats(n);
  const float rho = 3.5f;
  Device<float> dv(m.values), dp(p), dx(x), dr(r), dx1(n), dr1(n), drho1(1);
  Device<uint32_t> dc(m.columns), dof(m.offsets);
  expect(arrays::cg::cgStep(dc.p, dc.n, dof.p, dof.n, dp.p, n, dr.p, n, rho, dv.p, dv.n, dx.p, n,
                            dr1.p, n, drho1.p, 1, dx1.p, n),
         cudaSuccess, "cg");
  expect(cudaDeviceSynchronize(), cudaSuccess, "cg: synchronize");
  std::vector<double> q(n, 0.0), qs(n, 0.0);
  double pq = 0, pqs = 0;
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t k = m.offsets[i]; k < m.offsets[i + 1]; ++k) {
      q[i] += double(m.values[k]) * p[m.columns[k]];
      qs[i] += std::fabs(double(m.values[k]) * p[m.columns[k]]);
    }
    pq += p[i] * q[i];
    pqs += std::fabs(p[i]) * qs[i];
  }
  const double alpha = rho / pq;
  // alpha's own error: the dot's rounding, relative to the dot.
  const double da = std::fabs(alpha) * (1 + 1e-5 * pqs / std::fabs(pq));
  std::vector<double> x1(n), x1s(n), r1(n), r1s(n), rho1(1, 0.0), rho1s(1, 0.0);
  for (uint32_t i = 0; i < n; ++i) {
    x1[i] = x[i] + alpha * p[i];
    x1s[i] = std::fabs(x[i]) + da * std::fabs(p[i]);
    r1[i] = r[i] - alpha * q[i];
    r1s[i] = std::fabs(r[i]) + da * qs[i];
    rho1[0] += r1[i] * r1[i];
    rho1s[0] += 2 * std::fabs(r1[i]) * r1s[i];
  }
  near(dx1.host(), x1, x1s, "cg: x1");
  near(dr1.host(), r1, r1s, "cg: r1");
  near(drho1.host(), rho1, rho1s, "cg: rho1");
}

void histogramOnGpu() {
  const size_t n = 1000003;
  std::vector<uint32_t> idx(n);
  for (uint32_t& e : idx) e = rng() % 80;  // 64 bins: the others are dropped
  Device<uint32_t> di(idx), dcounts(64);
  expect(arrays::histogram::histogram(di.p, n, dcounts.p, 64), cudaSuccess, "histogram");
  expect(cudaDeviceSynchronize(), cudaSuccess, "histogram: synchronize");
  std::vector<uint32_t> want(64, 0);
  for (uint32_t e : idx) {
    if (e < 64) ++want[e];
  }
  if (dcounts.host() != want) {
    std::printf("FAIL histogram: the counts differ\n");
    ++failures;
  }
}

void scanOnGpu() {
  const size_t n = 1000003;
  std::vector<uint32_t> v(n);
  for (uint32_t& e : v) e = rng();
  Device<uint32_t> dv(v), ddiff(n - 1), dinc(n), dtotal(1);
  expect(arrays::scan::scan(3u, dv.p, n, ddiff.p, n - 1, dinc.p, n, dtotal.p, 1), cudaSuccess,
         "scan");
  expect(cudaDeviceSynchronize(), cudaSuccess, "scan: synchronize");
  const std::vector<uint32_t> diff = ddiff.host(), inc = dinc.host(), total = dtotal.host();
  uint32_t s = 0, t = 0;
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    s += 3u * v[i];
    t += v[i];
    bad += inc[i] != s;
    if (i + 1 < n) bad += diff[i] != v[i + 1] - v[i];
  }
  bad += total[0] != t;
  if (bad) {
    std::printf("FAIL scan: %zu wrong elements\n", bad);
    ++failures;
  }
}

void pickOnGpu() {
  const uint32_t n = 67, pitch = 70, k = 5;
  const std::vector<float> m = randomFloats(size_t{n} * pitch);
  Device<float> dm(m), dd(n), dr(n);
  expect(arrays::pick::pick(k, dm.p, n, n, pitch, dd.p, n, dr.p, n), cudaSuccess, "pick");
  expect(cudaDeviceSynchronize(), cudaSuccess, "pick: synchronize");
  std::vector<double> d(n), ds(n), r(n), rs(n);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      const double t = double(m[size_t{i} * pitch + j]) * m[size_t{j} * pitch + i];
      d[i] += t;
      ds[i] += std::fabs(t);
    }
    r[i] = double(m[size_t{k} * pitch + i]) * m[size_t{k} * pitch + k];
    rs[i] = std::fabs(r[i]);
  }
  near(dd.host(), d, ds, "pick: diagonal(matmul(m, m))");
  near(dr.host(), r, rs, "pick: row(m, k) * at(column(m, k), k)");
}

void reshapeOnGpu() {
  const uint32_t n = 7 * 1001, rows = 33, cols = 45, pitch = 48;
  const std::vector<float> v = randomFloats(n), m = randomFloats(size_t{rows} * pitch);
  Device<float> dv(v), dm(m), dfl(size_t{rows} * cols), drs(n / 7);
  expect(arrays::reshape::reshape(dm.p, rows, cols, pitch, dv.p, n, dfl.p, dfl.n, drs.p, drs.n),
         cudaSuccess, "reshape");
  expect(cudaDeviceSynchronize(), cudaSuccess, "reshape: synchronize");
  std::vector<double> rs(n / 7), rss(n / 7), fl(size_t{rows} * cols), fls(fl.size());
  for (uint32_t i = 0; i < n; ++i) {
    rs[i / 7] += v[i];
    rss[i / 7] += std::fabs(v[i]);
  }
  for (uint32_t i = 0; i < rows * cols; ++i) {
    fl[i] = 2.0 * m[size_t{i / cols} * pitch + i % cols];
    fls[i] = std::fabs(fl[i]);
  }
  near(drs.host(), rs, rss, "reshape: rowReduce(Sum, reshape(v, 7))");
  near(dfl.host(), fl, fls, "reshape: 2 flatten(m)");
}

void callsOnGpu() {
  const uint32_t n = 100003;
  const float a = 0.625f;
  const std::vector<float> v = randomFloats(n), u = randomFloats(n);
  Device<float> dv(v), du(u), dz(n), dw(n), dr(1);
  expect(arrays::calls::calls(a, du.p, n, dv.p, n, dr.p, 1, dw.p, n, dz.p, n), cudaSuccess,
         "calls");
  expect(cudaDeviceSynchronize(), cudaSuccess, "calls: synchronize");
  std::vector<double> z(n), zs(n), w(n), ws(n), r(1), rs(1);
  for (uint32_t i = 0; i < n; ++i) {
    z[i] = double(a) * float(2.0f * v[i]) + u[i];
    zs[i] = std::fabs(a * 2.0 * v[i]) + std::fabs(u[i]);
    r[0] += z[i];
    rs[0] += zs[i];
  }
  for (uint32_t i = 0; i < n; ++i) {
    w[i] = z[n - 1 - i] + 1.0;
    ws[i] = zs[n - 1 - i] + 1.0;
  }
  near(dz.host(), z, zs, "calls: userAxpy(a, 2 v, u)");
  near(dw.host(), w, ws, "calls: userReverse(z) + 1");
  near(dr.host(), r, rs, "calls: sum(z)");
}

void sortsOnGpu() {
  const uint32_t n = (1u << 20) + 3, m = 300007;
  std::vector<uint32_t> k(n);
  std::vector<uint64_t> w(m);
  for (uint32_t& x : k) x = static_cast<uint32_t>(rng());
  for (uint64_t& x : w) x = (uint64_t(rng()) << 32 | rng()) % 1000003;  // ties: stable order
  const std::vector<float> f = randomFloats(m);
  Device<uint32_t> dk(k), dup(n), ddown(n), dbyF(m);
  Device<uint64_t> dw(w);
  Device<float> df(f), dbyW(m);
  expect(
      arrays::sorts::sorts(df.p, m, dk.p, n, dw.p, m, dbyF.p, m, dbyW.p, m, ddown.p, n, dup.p, n),
      cudaSuccess, "sorts");
  expect(cudaDeviceSynchronize(), cudaSuccess, "sorts: synchronize");
  std::vector<uint32_t> up(n), down = k;
  for (uint32_t i = 0; i < n; ++i) up[i] = k[i] * 3u;
  std::sort(up.begin(), up.end());
  std::sort(down.begin(), down.end(), [](uint32_t x, uint32_t y) { return x > y; });
  std::vector<uint32_t> byF(m), order(m);
  for (uint32_t i = 0; i < m; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return f[x] > f[y]; });
  for (uint32_t i = 0; i < m; ++i) byF[i] = order[i] < n ? k[order[i]] : 0u;
  for (uint32_t i = 0; i < m; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return w[x] < w[y]; });
  std::vector<float> byW(m);
  for (uint32_t i = 0; i < m; ++i) byW[i] = f[order[i]];
  const auto same = [](const auto& got, const auto& want, const char* what) {
    if (got != want) {
      std::printf("FAIL %s: differs from the stable sort\n", what);
      ++failures;
    }
  };
  same(dup.host(), up, "sorts: sort(k * 3)");
  same(ddown.host(), down, "sorts: sort(k, descending)");
  same(dbyF.host(), byF, "sorts: gather(k, sortIndices(f, descending))");
  same(dbyW.host(), byW, "sorts: sortByKey(w, f)");
}

}  // namespace

int main() {
  refusals();
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("array export checks: no GPU, the runs are skipped\n");
  } else {
    axpydotOnGpu();
    gemverOnGpu(arrays::gemver::gemver, "gemver");
    gemverOnGpu(arrays::unfused::gemver, "gemver, unfused");
    cgOnGpu();
    histogramOnGpu();
    bicgkOnGpu();
    spmvOnGpu();
    scanOnGpu();
    pickOnGpu();
    reshapeOnGpu();
    callsOnGpu();
    sortsOnGpu();
    std::printf("array export checks: the runs on the GPU done\n");
  }
  std::printf("%s\n", failures == 0 ? "array export checks: ok" : "array export checks: FAILED");
  return failures == 0 ? 0 : 1;
}
