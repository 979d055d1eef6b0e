// The SafeGPU example (seed 003): SafeGPU's vector and matrix operations with their contracts
// (safegpu.hpp), each run on random data of odd sizes on the GPU when there is one (every launch
// checked: LaunchOptions::checked) and on the simulator otherwise (which checks postconditions
// after every run), and compared with the C++ reference. Then the contracts at work: launches
// that break a precondition are refused with its message, and runs whose results break a
// postcondition (a zero divisor, a sort with a defect, a zero pivot) are reported; on the GPU an
// unchecked launch of the same lets them pass, which is what checking is for. On the GPU it also
// times each program with its preconditions only and checked (bench/safegpu measures properly).
//
//   obsidian-safegpu [--cuda] [--simulate | --gpu] [--quick] [--runs N]
#include "safegpu.hpp"

#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>

#include "../common/runner.hpp"

namespace {

using namespace examples;
using safegpu::agrees;
namespace reference = safegpu::reference;

// Problem sizes, odd on purpose: no vector a multiple of a block's chunk, no matrix side a
// multiple of a tile's.
struct Sizes {
  size_t n;                       // vectors
  size_t sorted;                  // the sort
  uint32_t rows, cols;            // transpose and transpose.right_multiply (pitch cols + 3)
  uint32_t mRows, mInner, mCols;  // multiply
  uint32_t gauss;                 // Gaussian elimination
};
Sizes sizesFor(const Options& o) {
  if (o.quick) return {10007, 1003, 77, 101, 37, 41, 29, 41};
  if (o.gpu()) return {1000003, 1000003, 1000, 1003, 511, 513, 509, 501};
  return {100003, 10007, 301, 257, 67, 71, 63, 97};
}

// Divisors: magnitudes in [0.5, 1.5), either sign, never zero.
std::vector<float> divisors(size_t n, uint32_t seed) {
  std::vector<float> v = randomFloats(n, seed);
  for (float& x : v) x = (x < 0 ? -1.0f : 1.0f) * (0.5f + std::fabs(x));
  return v;
}

// A diagonally dominant n x n matrix: elimination without pivoting stays well away from zero.
std::vector<float> dominant(uint32_t n, uint32_t seed) {
  std::vector<float> m = randomFloats(size_t{n} * n, seed);
  for (uint32_t i = 0; i < n; ++i) m[size_t{i} * n + i] += static_cast<float>(n);
  return m;
}

// A buffer of the backend (a host vector, or a device buffer) made from host data or zeros, and
// read back.
template <class B, class T>
auto buffer(const std::vector<T>& host) {
  return std::make_shared<typename B::template Buffer<T>>(host);
}
template <class B, class T>
auto buffer(size_t n) {
  return std::make_shared<typename B::template Buffer<T>>(n);
}
template <class T>
std::vector<T> toHost(const std::vector<T>& v) {
  return v;
}
template <class T>
std::vector<T> toHost(const gpu::DeviceBuffer<T>& b) {
  return b.download();
}

// One SafeGPU operation: its launches (as a program, so that they can be timed) and the check
// of its result against the reference ("" when right).
template <class B>
struct Operation {
  std::string name, shape;
  Kernel kernel;              // its main kernel, for the table
  uint32_t elementsPerBlock;  // of that kernel
  uint64_t n;                 // elements
  double bytes;               // what the program must move at least
  std::function<void(const B&)> launch;
  std::function<std::string()> check;
};

template <class B>
std::vector<Operation<B>> operations(const Sizes& s) {
  using safegpu::kChunk;
  using safegpu::kThreads;
  std::vector<Operation<B>> ops;
  const std::vector<float> a = randomFloats(s.n, 1), b = divisors(s.n, 2);
  const auto da = buffer<B>(a), db = buffer<B>(b);

  {  // plus
    const Kernel k = safegpu::plus();
    const auto r = buffer<B, float>(s.n);
    ops.push_back(
        {"plus", "n = " + std::to_string(s.n), k, kThreads, s.n, 12.0 * s.n,
         [=](const B& run) {
           run(k, {std::as_const(*da), std::as_const(*db), *r});
         },
         [=] { return toHost(*r) == reference::plus(a, b) ? "" : std::string("differs"); }});
  }
  {  // compwise_divide
    const Kernel k = safegpu::compwiseDivide();
    const auto r = buffer<B, float>(s.n);
    ops.push_back({"compwise_divide", "n = " + std::to_string(s.n), k, kThreads, s.n, 12.0 * s.n,
                   [=](const B& run) {
                     run(k, {std::as_const(*da), std::as_const(*db), *r});
                   },
                   [=] {
                     return toHost(*r) == reference::compwiseDivide(a, b) ? ""
                                                                          : std::string("differs");
                   }});
  }
  // The reductions: partials, then total.
  // (inputs makes the partials kernel's arguments but its output; it holds their buffers.)
  auto reduction = [&](const std::string& name, const safegpu::Reduction& red,
                       std::function<std::vector<KernelArg>()> inputs, auto&& partials,
                       auto&& result, double bytes, std::function<std::string()> check) {
    ops.push_back({name, "n = " + std::to_string(s.n), red.partials, kChunk, s.n, bytes,
                   [=](const B& run) { red(run, inputs(), *partials, *result); },
                   std::move(check)});
  };
  const auto vectorA = [da] { return std::vector<KernelArg>{std::as_const(*da)}; };
  {  // dot (Listing 4)
    const auto part = buffer<B, float>(safegpu::partialCount(s.n));
    const auto r = buffer<B, float>(1);
    reduction(
        "dot", safegpu::dot(),
        [da, db] {
          return std::vector<KernelArg>{std::as_const(*da), std::as_const(*db)};
        },
        part, r, 8.0 * s.n,
        [=] {
          const float got = toHost(*r)[0];
          return agrees(got, reference::dot(a, b)) ? "" : "got " + std::to_string(got);
        });
  }
  {  // sum and avg
    const auto part = buffer<B, float>(safegpu::partialCount(s.n));
    const auto r = buffer<B, float>(1);
    reduction("sum (avg = sum / count)", safegpu::sum(), vectorA, part, r, 4.0 * s.n, [=] {
      const float got = toHost(*r)[0];
      const reference::Total want = reference::sum(a);
      const bool avgOk =
          agrees(got / static_cast<double>(s.n), {want.value / s.n, want.magnitude / s.n});
      return agrees(got, want) && avgOk ? "" : "got " + std::to_string(got);
    });
  }
  for (bool max : {false, true}) {  // min and max
    const auto part = buffer<B, float>(safegpu::partialCount(s.n));
    const auto r = buffer<B, float>(1);
    reduction(max ? "max" : "min", max ? safegpu::maximum() : safegpu::minimum(), vectorA, part, r,
              4.0 * s.n, [=] {
                const float got = toHost(*r)[0];
                return got == (max ? reference::max(a) : reference::min(a))
                           ? ""
                           : "got " + std::to_string(got);
              });
  }
  {  // for_all(el /= 0) of the divisors: true
    const auto part = buffer<B, uint32_t>(safegpu::partialCount(s.n));
    const auto r = buffer<B, uint32_t>(1);
    reduction(
        "for_all(el /= 0)", safegpu::forAllNonZero(),
        [db] { return std::vector<KernelArg>{std::as_const(*db)}; }, part, r, 4.0 * s.n,
        [=] {
          const bool got = toHost(*r)[0] != 0;
          return got == reference::forAllNonZero(b) && got ? "" : std::string("wrong");
        });
  }
  for (float bound : {-0.999f, -2.0f}) {  // exists(el < bound): true, then false
    const auto part = buffer<B, uint32_t>(safegpu::partialCount(s.n));
    const auto r = buffer<B, uint32_t>(1);
    char name[48];
    std::snprintf(name, sizeof name, "exists(el < %g)", bound);
    reduction(
        name, safegpu::existsBelow(),
        [da, bound] {
          return std::vector<KernelArg>{std::as_const(*da), bound};
        },
        part, r, 4.0 * s.n,
        [=] {
          const bool got = toHost(*r)[0] != 0;
          return got == reference::existsBelow(a, bound) ? "" : "got " + std::to_string(got);
        });
  }
  {  // is_sorted: of a sorted vector, then of the random one
    const std::vector<float> sorted = reference::sorted(a);
    const auto ds = buffer<B>(sorted);
    for (bool isSorted : {true, false}) {
      const auto part = buffer<B, uint32_t>(safegpu::partialCount(s.n));
      const auto r = buffer<B, uint32_t>(1);
      reduction(
          isSorted ? "is_sorted (sorted)" : "is_sorted (random)", safegpu::isSorted(),
          [in = isSorted ? ds : da] { return std::vector<KernelArg>{std::as_const(*in)}; }, part, r,
          4.0 * s.n,
          [=] {
            const bool got = toHost(*r)[0] != 0;
            return got == isSorted ? "" : "got " + std::to_string(got);
          });
    }
  }
  {  // sort (SafeGPU's quicksort contract: Result.is_sorted)
    const std::vector<float> v(a.begin(), a.begin() + s.sorted);
    const auto dv = buffer<B>(v);
    const auto x = buffer<B, float>(s.sorted), y = buffer<B, float>(s.sorted);
    const auto result = std::make_shared<const typename B::template Buffer<float>*>(nullptr);
    const safegpu::Sort sort;
    const size_t steps = safegpu::sortMasks(s.sorted).size();
    ops.push_back(
        {"sort (" + std::to_string(steps) + " launches)", "n = " + std::to_string(s.sorted),
         sort.step, kThreads, s.sorted, 12.0 * s.sorted * steps,
         [=](const B& run) { *result = &sort(run, std::as_const(*dv), *x, *y); },
         [=] { return toHost(**result) == reference::sorted(v) ? "" : std::string("differs"); }});
  }
  const uint32_t pitch = s.cols + 3;
  const std::vector<float> m = randomFloats(size_t{s.rows} * pitch, 3);
  const auto dm = buffer<B>(m);
  const std::string shape = std::to_string(s.rows) + " x " + std::to_string(s.cols) + " (pitch " +
                            std::to_string(pitch) + ")";
  {  // transpose
    const Kernel k = safegpu::transpose();
    const auto r = buffer<B, float>(size_t{s.rows} * s.cols);
    ops.push_back({"transpose", shape, k, 32 * 32, size_t{s.rows} * s.cols, 8.0 * s.rows * s.cols,
                   [=](const B& run) {
                     run(k, {std::as_const(*dm), s.rows, s.cols, pitch, *r});
                   },
                   [=] {
                     return toHost(*r) == reference::transpose(m, s.rows, s.cols, pitch)
                                ? ""
                                : "differs";
                   }});
  }
  {  // transpose.right_multiply (Listing 1)
    const Kernel k = safegpu::transposeRightMultiply();
    const std::vector<float> v = randomFloats(s.rows, 4);
    const auto dv = buffer<B>(v);
    const auto r = buffer<B, float>(s.cols);
    ops.push_back({"transpose.right_multiply", shape, k, safegpu::kColumnsPerBlock,
                   size_t{s.rows} * s.cols, 4.0 * s.rows * s.cols,
                   [=](const B& run) {
                     run(k, {std::as_const(*dm), s.rows, s.cols, pitch, std::as_const(*dv), *r});
                   },
                   [=] {
                     const std::vector<float> got = toHost(*r);
                     const auto want =
                         reference::transposeRightMultiply(m, s.rows, s.cols, pitch, v);
                     for (uint32_t c = 0; c < s.cols; ++c) {
                       if (!agrees(got[c], want[c]))
                         return "result(" + std::to_string(c) + ") differs";
                     }
                     return std::string();
                   }});
  }
  {  // multiply
    const Kernel k = safegpu::multiply();
    const std::vector<float> x = randomFloats(size_t{s.mRows} * s.mInner, 5),
                             y = randomFloats(size_t{s.mInner} * s.mCols, 6);
    const auto dx = buffer<B>(x), dy = buffer<B>(y);
    const auto r = buffer<B, float>(size_t{s.mRows} * s.mCols);
    ops.push_back({"multiply",
                   std::to_string(s.mRows) + " x " + std::to_string(s.mInner) + " . " +
                       std::to_string(s.mInner) + " x " + std::to_string(s.mCols),
                   k, kThreads, size_t{s.mRows} * s.mCols,
                   4.0 * (double(s.mRows) * s.mInner + double(s.mInner) * s.mCols +
                          double(s.mRows) * s.mCols),
                   [=](const B& run) {
                     run(k, {std::as_const(*dx), s.mRows, s.mInner, s.mInner, std::as_const(*dy),
                             s.mInner, s.mCols, s.mCols, *r});
                   },
                   [=] {
                     const std::vector<float> got = toHost(*r);
                     const auto want =
                         reference::multiply(x, s.mRows, s.mInner, s.mInner, y, s.mCols, s.mCols);
                     for (size_t i = 0; i < got.size(); ++i) {
                       if (!agrees(got[i], want[i]))
                         return "element " + std::to_string(i) + " differs";
                     }
                     return std::string();
                   }});
  }
  {  // Gaussian elimination (Listing 5): the upper triangular matrix and log |det|
    const uint32_t n = s.gauss;
    const std::vector<float> g = dominant(n, 7);
    const auto dg = buffer<B>(g);
    const auto x = buffer<B, float>(size_t{n} * n), y = buffer<B, float>(size_t{n} * n);
    const auto result = std::make_shared<const typename B::template Buffer<float>*>(nullptr);
    const safegpu::Gauss gauss;
    ops.push_back(
        {"gauss_determinant (" + std::to_string(safegpu::Gauss::steps(n)) + " launches)",
         std::to_string(n) + " x " + std::to_string(n), gauss.step, kThreads, size_t{n} * n,
         8.0 * n * n * safegpu::Gauss::steps(n),
         [=](const B& run) { *result = &gauss(run, std::as_const(*dg), n, *x, *y); },
         [=] {
           const std::vector<float> got = toHost(**result), want = reference::gauss(g, n);
           // The GPU contracts a * b - c into one rounding (FMA): close, not equal.
           for (size_t i = 0; i < got.size(); ++i) {
             if (std::fabs(got[i] - want[i]) > 1e-4 * (1 + std::fabs(want[i]))) {
               return "element " + std::to_string(i) + " differs";
             }
           }
           const auto d = reference::logDeterminant(got, n), e = reference::logDeterminant(want, n);
           if (d.sign != e.sign || std::fabs(d.logAbs - e.logAbs) > 1e-6 * std::fabs(e.logAbs)) {
             return std::string("the determinant differs");
           }
           return std::string();
         }});
  }
  return ops;
}

// f must throw an obsidian::Error whose message contains `expected`: prints the message and
// says whether it did.
bool reported(const std::string& what, const std::string& expected,
              const std::function<void()>& f) {
  std::cout << "  " << what << "\n";
  try {
    f();
  } catch (const Error& e) {
    const std::string message = e.what();
    const bool ok = message.find(expected) != std::string::npos;
    std::cout << "    -> " << message << (ok ? "" : "\n    WRONG: expected \"" + expected + "\"")
              << "\n";
    return ok;
  }
  std::cout << "    WRONG: not reported\n";
  return false;
}

// The contracts at work: each violation is reported with its contract's message.
template <class B>
bool violations(const B& run, const Sizes& s) {
  bool ok = true;
  std::cout << "\nContracts at work (on "
            << (std::is_same_v<B, safegpu::Gpu> ? "the GPU, checked" : "the simulator") << "):\n";
  // Preconditions: the launch is refused before anything runs.
  const std::vector<float> a = randomFloats(1001, 11), shorter = randomFloats(1000, 12);
  const auto da = buffer<B>(a), ds = buffer<B>(shorter);
  const auto r = buffer<B, float>(1001);
  ok = reported("plus of 1001 and 1000 elements (precondition)", "other.count = count",
                [&] {
                  run(safegpu::plus(), {std::as_const(*da), std::as_const(*ds), *r});
                }) &&
       ok;
  const auto m = buffer<B>(randomFloats(size_t{s.rows} * s.cols, 13));
  const auto v = buffer<B>(randomFloats(s.rows + 1, 14));
  const auto mv = buffer<B, float>(s.cols);
  ok = reported("transpose.right_multiply of a " + std::to_string(s.rows) + "-row matrix and a " +
                    std::to_string(s.rows + 1) + "-element vector (precondition)",
                "matrix.rows = vector.count",
                [&] {
                  run(safegpu::transposeRightMultiply(),
                      {std::as_const(*m), s.rows, s.cols, s.cols, std::as_const(*v), *mv});
                }) &&
       ok;
  const auto empty = buffer<B, float>(0);
  const auto part = buffer<B, float>(0), one = buffer<B, float>(1);
  ok = reported("min of an empty vector (precondition)", "count > 0",
                [&] { safegpu::minimum()(run, {std::as_const(*empty)}, *part, *one); }) &&
       ok;

  // A zero divisor: SafeGPU's range precondition other.for_all(el /= 0) as a query first, then
  // the postcondition that catches it when the division runs anyway.
  std::vector<float> divisor = divisors(s.n, 15);
  const size_t zeroAt = s.n / 3;
  divisor[zeroAt] = 0.0f;
  const auto dd = buffer<B>(divisor), dn = buffer<B>(randomFloats(s.n, 16));
  const auto flags = buffer<B, uint32_t>(safegpu::partialCount(s.n));
  const auto all = buffer<B, uint32_t>(1);
  safegpu::forAllNonZero()(run, {std::as_const(*dd)}, *flags, *all);
  const bool nonZero = toHost(*all)[0] != 0;
  std::cout << "  other.for_all(el /= 0) with other(" << zeroAt << ") = 0 -> "
            << (nonZero ? "true: WRONG" : "false (compwise_divide's range precondition)") << "\n";
  ok = ok && !nonZero;
  const auto q = buffer<B, float>(s.n);
  const Kernel divide = safegpu::compwiseDivide();
  ok = reported("compwise_divide by it anyway (postcondition)",
                "postcondition \"Result * other = Current\" fails: result[" +
                    std::to_string(zeroAt) + "] = ",
                [&] {
                  run(divide, {std::as_const(*dn), std::as_const(*dd), *q});
                }) &&
       ok;

  // A sort with a defect (its first step left out): the postcondition sees the result unsorted.
  const auto sv = buffer<B>(randomFloats(s.sorted, 17));
  const auto x = buffer<B, float>(s.sorted), y = buffer<B, float>(s.sorted);
  std::vector<uint32_t> defective = safegpu::sortMasks(s.sorted);
  defective.erase(defective.begin());
  const safegpu::Sort sort;
  ok = reported("a sort with its first step left out (postcondition)",
                "postcondition \"Result.is_sorted\" fails",
                [&] { sort(run, std::as_const(*sv), *x, *y, defective); }) &&
       ok;

  // A zero pivot in Gaussian elimination.
  std::vector<float> g = dominant(s.gauss, 18);
  g[0] = 0.0f;
  const auto dg = buffer<B>(g);
  const auto gx = buffer<B, float>(size_t{s.gauss} * s.gauss),
             gy = buffer<B, float>(size_t{s.gauss} * s.gauss);
  ok = reported("gauss_determinant of a matrix whose first pivot is 0 (postcondition)",
                "postcondition \"pivot /= 0: no element is inf or NaN\" fails",
                [&] { safegpu::Gauss()(run, std::as_const(*dg), s.gauss, *gx, *gy); }) &&
       ok;

  if constexpr (std::is_same_v<B, safegpu::Gpu>) {
    // Unchecked, the same launches pass: only the (host) preconditions are checked.
    safegpu::Gpu unchecked;
    unchecked(divide, {std::as_const(*dn), std::as_const(*dd), *q});
    const std::vector<float> quotient = q->download();
    const size_t bad = static_cast<size_t>(
        std::count_if(quotient.begin(), quotient.end(), [](float f) { return !std::isfinite(f); }));
    std::cout << "  the same division, unchecked: no error; " << bad
              << " element(s) of the result are inf or NaN\n";
    ok = ok && bad > 0;
    const auto& out = sort(unchecked, std::as_const(*sv), *x, *y, defective);
    const std::vector<float> got = out.download();
    std::cout << "  the defective sort, unchecked: no error; the result is "
              << (std::is_sorted(got.begin(), got.end()) ? "sorted" : "not sorted") << "\n";
  }
  return ok;
}

template <class B>
bool runAll(const B& run, const Options& o) {
  const Sizes s = sizesFor(o);
  Table table(
      "SafeGPU's operations with their contracts (on the GPU: preconditions only; median "
      "us of the whole program, GB/s of what it must move)");
  bool pass = true;
  std::cout << "\n";
  for (const Operation<B>& op : operations<B>(s)) {
    if (o.cuda) std::cout << "\n// ---- " << op.kernel.name() << "\n" << op.kernel.cuda();
    op.launch(run);
    const std::string wrong = op.check();
    pass = pass && wrong.empty();
    std::printf("  %-34s %-28s %s", op.name.c_str(), op.shape.c_str(),
                wrong.empty() ? "ok" : ("WRONG: " + wrong).c_str());
    double ms = std::nan("");
    if constexpr (std::is_same_v<B, safegpu::Gpu>) {
      safegpu::Gpu pre;  // preconditions only (they are always checked, on the host)
      pre.options.synchronize = false;
      ms = timeOnGpu([&] { op.launch(pre); }, o);
      const double checkedMs = timeOnGpu([&] { op.launch(run); }, o);
      std::printf("   pre %.1f us, checked %.1f us (x%.2f)", ms * 1e3, checkedMs * 1e3,
                  checkedMs / ms);
    }
    std::printf("\n");
    table.add(op.name, op.kernel, op.elementsPerBlock, op.n, wrong.empty(), ms, op.bytes);
  }
  table.print();
  return violations(run, s) && pass;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"SafeGPU's collections with their contracts (require, ensure), checked"};
  const Options o = parse(app, argc, argv);
  try {
    std::cout << "SafeGPU's vectors and matrices with contracts, on " << backendName(o) << "\n";
    bool pass = false;
    if (o.gpu()) {
      safegpu::Gpu checked;  // every launch checks its postconditions and writes
      checked.options.checked = true;
      pass = runAll(checked, o);
    } else {
      pass = runAll(safegpu::Sim(), o);
    }
    std::cout << (pass ? "PASS" : "FAIL") << "\n";
    return pass ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
