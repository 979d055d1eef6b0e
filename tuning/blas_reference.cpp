// blas::reference's doubles computed on the device by plain kernels, and blas::mismatch's test
// made there (blas_reference.hpp). Each formula below is the host's, operation for operation.
#include "blas_reference.hpp"

#include <obsidian/atomic.hpp>

#include "device_data.hpp"

namespace tuning {

namespace {

using namespace obsidian;
namespace gpu = obsidian::gpu;
using EDouble = Exp<double>;

constexpr uint32_t kDotSegment = 4096;  // AXPYDOT's dot: elements per partial sum
const EDouble kAlpha(double{blas::kAlpha}), kBeta(double{blas::kBeta});

// Compiled without contracting a*b+c into one rounding, as the host computes.
CaptureOptions exact() {
  CaptureOptions o;
  o.nvrtcOptions = {"--fmad=false"};
  return o;
}

EDouble wide(const EFloat& x) { return cast<double>(x); }

// An effect-only kernel: perThread's thread s, for s below count, runs body(t, s).
template <class Body>
GridEffect eachThread(const EWord32& count, Body body) {
  return effect([=](const Program<Grid>& g) { perThread(g, count, body); });
}

// value[i], scale[i] = f(i) for every i below n.
template <class F>
GridEffect elementwise(const EWord32& n, const DMutable<double>& value,
                       const DMutable<double>& scale, F f) {
  return eachThread(n, [=](const Program<Thread>& t, const EWord32& i) {
    const auto [v, s] = f(i);
    write(t, value, i, v);
    write(t, scale, i, s);
  });
}

// The host's matVec: out[k] = alpha * (sum over t of mat(row, col) v[t]) (+ beta add[k]), k a
// row and t along it, or (transposed) k a column and t down it; the scale likewise of the
// terms' magnitudes.
struct MatVecForm {
  bool transposed = false;
  double alpha = 1;
  bool add = false;
  double beta = 0;
  std::string key() const {
    return std::string(transposed ? "T" : "N") + std::to_string(alpha) + (add ? "+" : "") +
           std::to_string(beta);
  }
};
template <class Mat>
GridEffect matVec(const EWord32& rows, const EWord32& cols, Mat mat, const DPull<EDouble>& v,
                  const DPull<EDouble>& add, const MatVecForm& f, const DMutable<double>& value,
                  const DMutable<double>& scale) {
  return eachThread(f.transposed ? cols : rows, [=](const Program<Thread>& t, const EWord32& k) {
    const EDouble acc = t.declare(EDouble(0.0)), magnitude = t.declare(EDouble(0.0));
    t.seqFor(f.transposed ? rows : cols, [&](const Program<Thread>& u, const EWord32& j) {
      const EDouble term = (f.transposed ? mat(j, k) : mat(k, j)) * v[j];
      u.assign(acc, acc + term);
      u.assign(magnitude, magnitude + fabs(term));
    });
    const EDouble alpha(f.alpha), beta(f.beta);
    const EDouble zero(0.0);
    write(t, value, k, alpha * acc + (f.add ? beta * add[k] : zero));
    write(t, scale, k,
          EDouble(std::fabs(f.alpha)) * magnitude + (f.add ? fabs(beta * add[k]) : zero));
  });
}

// The three matrices the host's matVec reads: A, GESUMMV's alpha A + beta B, GEMVER's
// A + u1 v1^T + u2 v2^T.
Kernel matVecA(const MatVecForm& f) {
  return capture(
      "refMatVecA", kPlainThreads,
      [f](EWord32 rows, EWord32 cols, EWord32 pitch, DPull<EFloat> a, DPull<EDouble> v,
          DPull<EDouble> add, DMutable<double> value, DMutable<double> scale) {
        const auto mat = [=](const EWord32& r, const EWord32& j) { return wide(a[r * pitch + j]); };
        return matVec(rows, cols, mat, v, add, f, value, scale);
      },
      exact());
}
Kernel matVecGesummv(const MatVecForm& f) {
  return capture(
      "refMatVecGesummv", kPlainThreads,
      [f](EWord32 rows, EWord32 cols, EWord32 pitch, DPull<EFloat> a, DPull<EFloat> b,
          DPull<EDouble> v, DPull<EDouble> add, DMutable<double> value, DMutable<double> scale) {
        const auto mat = [=](const EWord32& r, const EWord32& j) {
          return kAlpha * wide(a[r * pitch + j]) + kBeta * wide(b[r * pitch + j]);
        };
        return matVec(rows, cols, mat, v, add, f, value, scale);
      },
      exact());
}
// GEMVER's B(r, j) and its terms' magnitudes.
std::pair<EDouble, EDouble> gemverB(const DPull<EFloat>& a, const DPull<EFloat>& u1,
                                    const DPull<EFloat>& v1, const DPull<EFloat>& u2,
                                    const DPull<EFloat>& v2, const EWord32& pitch, const EWord32& r,
                                    const EWord32& j) {
  const EDouble x = wide(a[r * pitch + j]), y = wide(u1[r]) * wide(v1[j]),
                z = wide(u2[r]) * wide(v2[j]);
  return {x + y + z, fabs(x) + fabs(y) + fabs(z)};
}
Kernel matVecGemver(const MatVecForm& f) {
  return capture(
      "refMatVecGemver", kPlainThreads,
      [f](EWord32 rows, EWord32 cols, EWord32 pitch, DPull<EFloat> a, DPull<EFloat> u1,
          DPull<EFloat> v1, DPull<EFloat> u2, DPull<EFloat> v2, DPull<EDouble> v,
          DPull<EDouble> add, DMutable<double> value, DMutable<double> scale) {
        const auto mat = [=](const EWord32& r, const EWord32& j) {
          return gemverB(a, u1, v1, u2, v2, pitch, r, j).first;
        };
        return matVec(rows, cols, mat, v, add, f, value, scale);
      },
      exact());
}

// The element-wise outputs.
Kernel widenKernel() {
  return capture(
      "refWiden", kPlainThreads,
      [](DPull<EFloat> x, DMutable<double> out) {
        return eachThread(len(x), [=](const Program<Thread>& t, const EWord32& i) {
          write(t, out, i, wide(x[i]));
        });
      },
      exact());
}
Kernel elementKernel(const std::string& name) {
  using Out = DMutable<double>;
  if (name == "AXPYDOT") {  // z = w - alpha v; its scale |w| + |alpha v|
    return capture(
        "refAxpydotZ", kPlainThreads,
        [](DPull<EFloat> w, DPull<EFloat> v, Out value, Out scale) {
          return elementwise(len(w), value, scale, [=](const EWord32& i) {
            const EDouble av = kAlpha * wide(v[i]);
            return std::pair{wide(w[i]) - av, fabs(wide(w[i])) + fabs(av)};
          });
        },
        exact());
  }
  if (name == "SSCAL") {  // y = alpha x; scale |x|
    return capture(
        "refSscal", kPlainThreads,
        [](DPull<EFloat> x, Out value, Out scale) {
          return elementwise(len(x), value, scale, [=](const EWord32& i) {
            return std::pair{kAlpha * wide(x[i]), fabs(wide(x[i]))};
          });
        },
        exact());
  }
  if (name == "WAXPBY") {  // w = alpha x + beta y
    return capture(
        "refWaxpby", kPlainThreads,
        [](DPull<EFloat> x, DPull<EFloat> y, Out value, Out scale) {
          return elementwise(len(x), value, scale, [=](const EWord32& i) {
            const EDouble a = kAlpha * wide(x[i]), b = kBeta * wide(y[i]);
            return std::pair{a + b, fabs(a) + fabs(b)};
          });
        },
        exact());
  }
  if (name == "VADD") {  // x = w + y + z
    return capture(
        "refVadd", kPlainThreads,
        [](DPull<EFloat> w, DPull<EFloat> y, DPull<EFloat> z, Out value, Out scale) {
          return elementwise(len(w), value, scale, [=](const EWord32& i) {
            const EDouble a = wide(w[i]), b = wide(y[i]), c = wide(z[i]);
            return std::pair{a + b + c, fabs(a) + fabs(b) + fabs(c)};
          });
        },
        exact());
  }
  if (name == "MADD") {  // C = A + B, rows x cols out of rows x pitch
    return capture(
        "refMadd", kPlainThreads,
        [](EWord32 rows, EWord32 cols, EWord32 pitch, DPull<EFloat> a, DPull<EFloat> b, Out value,
           Out scale) {
          return elementwise(rows * cols, value, scale, [=](const EWord32& i) {
            const EDouble x = wide(a[i / cols * pitch + i % cols]),
                          y = wide(b[i / cols * pitch + i % cols]);
            return std::pair{x + y, fabs(x) + fabs(y)};
          });
        },
        exact());
  }
  OBSIDIAN_ASSERT(name == "GEMVER", "an element-wise reference");
  return capture(
      "refGemverB", kPlainThreads,
      [](EWord32 rows, EWord32 cols, EWord32 pitch, DPull<EFloat> a, DPull<EFloat> u1,
         DPull<EFloat> v1, DPull<EFloat> u2, DPull<EFloat> v2, Out value, Out scale) {
        return elementwise(rows * cols, value, scale, [=](const EWord32& i) {
          return gemverB(a, u1, v1, u2, v2, pitch, i / cols, i % cols);
        });
      },
      exact());
}

// AXPYDOT's r = sum of (w - alpha v) u: one partial sum per kDotSegment elements, in order,
// then the partials in order by one thread.
Kernel dotPartialsKernel() {
  return capture(
      "refAxpydotPartials", kPlainThreads,
      [](DPull<EFloat> w, DPull<EFloat> v, DPull<EFloat> u, DMutable<double> value,
         DMutable<double> scale) {
        const EWord32 n = len(w);
        const EWord32 count = (n + (kDotSegment - 1)) / kDotSegment;
        return eachThread(count, [=](const Program<Thread>& t, const EWord32& s) {
          const EDouble acc = t.declare(EDouble(0.0)), magnitude = t.declare(EDouble(0.0));
          const EWord32 first = s * kDotSegment;
          t.seqFor(min(EWord32(kDotSegment), n - first), [&](const Program<Thread>& x,
                                                             const EWord32& j) {
            const EWord32 i = first + j;
            const EDouble av = kAlpha * wide(v[i]);
            x.assign(acc, acc + (wide(w[i]) - av) * wide(u[i]));
            x.assign(magnitude, magnitude + (fabs(wide(w[i])) + fabs(av)) * fabs(wide(u[i])));
          });
          write(t, value, s, acc);
          write(t, scale, s, magnitude);
        });
      },
      exact());
}
Kernel foldKernel() {
  return capture(
      "refFold", kPlainThreads,
      [](DPull<EDouble> values, DPull<EDouble> scales, DMutable<double> value,
         DMutable<double> scale) {
        return eachThread(1u, [=](const Program<Thread>& t, const EWord32&) {
          const EDouble acc = t.declare(EDouble(0.0)), magnitude = t.declare(EDouble(0.0));
          t.seqFor(len(values), [&](const Program<Thread>& u, const EWord32& j) {
            u.assign(acc, acc + values[j]);
            u.assign(magnitude, magnitude + scales[j]);
          });
          write(t, value, 0u, acc);
          write(t, scale, 0u, magnitude);
        });
      },
      exact());
}

Kernel outsideKernel() {
  return capture(
      "refOutsideTolerance", kPlainThreads,
      [](DPull<EFloat> got, DPull<EDouble> value, DPull<EDouble> scale, DMutable<uint32_t> count) {
        return eachThread(len(got), [=](const Program<Thread>& t, const EWord32& i) {
          const EDouble tolerance =
              EDouble(blas::kRelativeTolerance) * scale[i] + EDouble(blas::kToleranceFloor);
          t.cond(!(fabs(wide(got[i]) - value[i]) <= tolerance),
                 [&](const Program<Thread>& u) { atomicAdd(u, count, EWord32(0u), EWord32(1u)); });
        });
      },
      exact());
}

// Where the plain kernels run: the GPU (device buffers), or the simulator (host vectors) for
// the tests that compare every kernel with the host's reference without a GPU.
struct OnGpu {
  static constexpr const char* kReference = "blasReferenceOnGpu";
  static constexpr const char* kOutside = "outsideToleranceOnGpu";
  template <class T>
  using Buffer = gpu::DeviceBuffer<T>;
  using Expected = ExpectedOnGpu;
  static Expected expected(size_t n) { return {Buffer<double>(n), Buffer<double>(n)}; }
  static void launch(const Kernel& k, const std::vector<KernelArg>& args) { gpu::launch(k, args); }
};
struct OnSimulator {
  static constexpr const char* kReference = "blasReferenceOnSimulator";
  static constexpr const char* kOutside = "outsideToleranceOnSimulator";
  template <class T>
  using Buffer = std::vector<T>;
  using Expected = blas::Expected;
  static Expected expected(size_t n) { return {Buffer<double>(n), Buffer<double>(n)}; }
  static void launch(const Kernel& k, const std::vector<KernelArg>& args) { simulate(k, args); }
};

template <class On>
std::map<std::string, typename On::Expected> reference(
    const blas::Sequence& q, const blas::Problem& pr,
    const std::map<std::string, typename On::template Buffer<float>>& in) {
  using Expected = typename On::Expected;
  using Doubles = typename On::template Buffer<double>;
  const std::string& name = q.name;
  for (const auto& [k, n] : q.inputs) {
    const auto it = in.find(k);
    if (it == in.end())
      throw Error(std::string(On::kReference) + ": " + name + " needs the input " + k);
    if (it->second.size() != n) {
      throw Error(std::string(On::kReference) + ": " + name + "'s input " + k + " has " +
                  std::to_string(it->second.size()) + " elements; this problem needs " +
                  std::to_string(n));
    }
  }
  const auto input = [&](const char* k) -> const auto& { return in.at(k); };
  const auto once = [](const std::string& key, const std::function<Kernel()>& make) {
    return plainKernel({"blas-reference:" + key, make});
  };
  // Launches k with `args` unless it has no thread to run.
  const auto run = [](const Kernel& k, size_t threads, const std::vector<KernelArg>& args) {
    if (threads > 0) On::launch(k, args);
  };
  const auto widened = [&](const char* k) {
    Doubles out(input(k).size());
    run(once("widen", widenKernel), out.size(), {input(k), out});
    return out;
  };
  const uint32_t rows = pr.rows, cols = pr.cols, pitch = pr.pitch;
  // matVec over the matrix `matrix` ("A", "GESUMMV", "GEMVER") and the vector v.
  const auto product = [&](const std::string& matrix, const MatVecForm& f, const Doubles& v,
                           const Doubles* add) {
    Expected e = On::expected(f.transposed ? cols : rows);
    const Doubles& a = add ? *add : v;  // (read only with f.add)
    const std::string key = "matVec" + matrix + f.key();
    if (matrix == "A") {
      run(once(key, [&] { return matVecA(f); }), e.value.size(),
          {rows, cols, pitch, input("A"), v, a, e.value, e.scale});
    } else if (matrix == "GESUMMV") {
      run(once(key, [&] { return matVecGesummv(f); }), e.value.size(),
          {rows, cols, pitch, input("A"), input("B"), v, a, e.value, e.scale});
    } else {
      run(once(key, [&] { return matVecGemver(f); }), e.value.size(),
          {rows, cols, pitch, input("A"), input("u1"), input("v1"), input("u2"), input("v2"), v, a,
           e.value, e.scale});
    }
    return e;
  };
  const auto elements = [&](size_t n, std::vector<KernelArg> args) {
    Expected e = On::expected(n);
    args.emplace_back(e.value);
    args.emplace_back(e.scale);
    run(once("elements" + name, [&] { return elementKernel(name); }), n, args);
    return e;
  };
  const size_t n = pr.n, matrix = size_t{rows} * cols;
  std::map<std::string, Expected> out;
  if (name == "AXPYDOT") {
    out.emplace("z", elements(n, {input("w"), input("v")}));
    Expected partials = On::expected((n + kDotSegment - 1) / kDotSegment);
    run(once("dotPartials", dotPartialsKernel), partials.value.size(),
        {input("w"), input("v"), input("u"), partials.value, partials.scale});
    Expected r = On::expected(1);
    const Expected& sums = partials;
    run(once("fold", foldKernel), 1, {sums.value, sums.scale, r.value, r.scale});
    out.emplace("r", std::move(r));
  } else if (name == "SSCAL") {
    out.emplace("y", elements(n, {input("x")}));
  } else if (name == "WAXPBY") {
    out.emplace("w", elements(n, {input("x"), input("y")}));
  } else if (name == "VADD") {
    out.emplace("x", elements(n, {input("w"), input("y"), input("z")}));
  } else if (name == "MADD") {
    out.emplace("C", elements(matrix, {rows, cols, pitch, input("A"), input("B")}));
  } else if (name == "SGEMV") {
    const Doubles y = widened("y");
    out.emplace("z", product("A", {false, blas::kAlpha, true, blas::kBeta}, widened("x"), &y));
  } else if (name == "GESUMMV") {
    out.emplace("y", product("GESUMMV", {}, widened("x"), nullptr));
  } else if (name == "ATAX") {
    const Expected t = product("A", {}, widened("x"), nullptr);
    out.emplace("y", product("A", {true, 1, false, 0}, t.value, nullptr));
  } else if (name == "SGEMVT") {
    const Doubles z = widened("z");
    Expected x = product("A", {true, blas::kBeta, true, 1}, widened("y"), &z);
    out.emplace("w", product("A", {false, blas::kAlpha, false, 0}, x.value, nullptr));
    out.emplace("x", std::move(x));
  } else if (name == "GEMVER") {
    out.emplace("B", elements(matrix, {rows, cols, pitch, input("A"), input("u1"), input("v1"),
                                       input("u2"), input("v2")}));
    const Doubles z = widened("z");
    Expected x = product("GEMVER", {true, blas::kBeta, true, 1}, widened("y"), &z);
    out.emplace("w", product("GEMVER", {false, blas::kAlpha, false, 0}, x.value, nullptr));
    out.emplace("x", std::move(x));
  } else if (name == "BiCGK") {
    out.emplace("q", product("A", {}, widened("p"), nullptr));
    out.emplace("s", product("A", {true, 1, false, 0}, widened("r"), nullptr));
  } else {
    throw Error(std::string(On::kReference) + ": no sequence named '" + name + "'");
  }
  return out;
}

template <class On>
uint64_t outside(const typename On::template Buffer<float>& got, const typename On::Expected& e) {
  if (got.size() != e.value.size() || got.size() != e.scale.size()) {
    throw Error(std::string(On::kOutside) + ": " + std::to_string(got.size()) + " elements, " +
                std::to_string(e.value.size()) + " values and " + std::to_string(e.scale.size()) +
                " scales");
  }
  if (got.size() > UINT32_MAX) {
    throw Error(std::string(On::kOutside) + ": at most 2^32 - 1 elements");
  }
  if (got.size() == 0) return 0;
  const Kernel k = plainKernel({"blas-reference:outside", outsideKernel});
  if constexpr (std::is_same_v<On, OnGpu>) {
    return countOnGpu(k, {got, e.value, e.scale});
  } else {
    std::vector<uint32_t> count(1, 0);
    On::launch(k, {got, e.value, e.scale, count});
    return count[0];
  }
}

}  // namespace

std::map<std::string, ExpectedOnGpu> blasReferenceOnGpu(const blas::Sequence& q,
                                                        const blas::Problem& pr,
                                                        const blas::DeviceBuffers& in) {
  return reference<OnGpu>(q, pr, in);
}
std::map<std::string, blas::Expected> blasReferenceOnSimulator(const blas::Sequence& q,
                                                               const blas::Problem& pr,
                                                               const blas::Buffers& in) {
  return reference<OnSimulator>(q, pr, in);
}

uint64_t outsideToleranceOnGpu(const gpu::DeviceBuffer<float>& got, const ExpectedOnGpu& e) {
  return outside<OnGpu>(got, e);
}
uint64_t outsideToleranceOnSimulator(const std::vector<float>& got, const blas::Expected& e) {
  return outside<OnSimulator>(got, e);
}

}  // namespace tuning
