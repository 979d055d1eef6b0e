// SafeGPU's collections with their contracts (seed 003: vectors and matrices whose operations
// carry Eiffel pre- and postconditions) written with obsidian's `require` and `ensure`, and the
// paper's benchmark programs as far as obsidian expresses them. The example (safegpu.cpp), the
// simulator test (tests/sim/test_safegpu.cpp) and the contract-overhead benchmark
// (bench/safegpu/safegpu_bench.cpp) all run these kernels; safegpu::reference holds a plain C++
// version of every operation.
//
// Every kernel with contracts takes `contracts`: true captures it with SafeGPU's contracts,
// false without any (the baseline the benchmark measures contract checking against).
// Preconditions (`require`) are checked on the host at every launch and simulation;
// postconditions (`ensure`) by the simulator after every run and on the GPU by a checked launch
// (LaunchOptions::checked). README.md maps each SafeGPU contract to its obsidian form, and says
// which ones take another.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <obsidian/obsidian.hpp>
#include <string>
#include <utility>
#include <vector>

namespace safegpu {

using namespace obsidian;

// Threads per block of every kernel here.
inline constexpr uint32_t kThreads = 256;
// Elements one block of a reduction folds (16 per thread): a reduction of n elements makes
// ceil(n / kChunk) partial results, which one block then folds.
inline constexpr uint32_t kChunk = 16 * kThreads;
// Columns of the matrix one block of transposeRightMultiply computes (one per lane of a warp),
// and the row groups of its threads that share them.
inline constexpr uint32_t kColumnsPerBlock = 32;
inline constexpr uint32_t kRowGroups = kThreads / kColumnsPerBlock;

namespace detail {

// ceil(n / k) for a dynamic n, without n + k - 1 (which could wrap).
inline EWord32 ceilDiv(const EWord32& n, uint32_t k) {
  return n / k + ifThenElse(n % k != 0u, EWord32(1u), EWord32(0u));
}

// The f-fold of `in` by one block: thread t folds elements t, t + threads, ... (coalesced, four
// loads in flight), then the block folds the threads' results (blockReduce).
template <class X, class Op>
Exp<X> blockFold(const Program<Block>& p, Op f, X identity, const DPull<Exp<X>>& in) {
  const uint32_t threads = p.context().threadsPerBlock();
  auto perThread = force(
      p, mkPush<Block, Exp<X>>(threads, [=](const Program<Block>& q, const Writer<Exp<X>>& w) {
        q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
          seqFoldStrided(f, Exp<X>(identity), in, tid, EWord32(threads), 4)(
              t,
              [&](const Program<Thread>& u, const Exp<X>& acc, const EWord32&) { w(u, acc, tid); });
        });
      }));
  return blockReduce(p, f, perThread);
}

// One f-fold per chunk of kChunk consecutive elements of `in` (the last chunk may be short):
// block b folds chunk b. Any length; no divisibility asked of it.
template <class X, class Op>
DPush<Grid, Exp<X>> chunkFolds(Op f, X identity, const DPull<Exp<X>>& in) {
  const EWord32 n = len(in);
  const EWord32 chunks = ceilDiv(n, kChunk);
  return DPush<Grid, Exp<X>>(chunks, [=](const Program<Grid>& g, const Writer<Exp<X>>& out) {
    g.distrPar(chunks, [&](const Program<Block>& p, const EWord32& b) {
      const EWord32 start = b * kChunk;
      const DPull<Exp<X>> mine(min(EWord32(kChunk), n - start),
                               [in, start](const EWord32& j) { return in[start + j]; });
      const Exp<X> folded = blockFold(p, f, identity, mine);
      p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) { out(t, folded, b); });
    });
  });
}

// A Push<Grid> of n elements, one thread each: body(t, i, write) computes element i (with loops
// of its own, which an element of a pull array cannot have) and writes it.
template <class X, class Body>
DPush<Grid, Exp<X>> perElement(const EWord32& n, Body body) {
  return DPush<Grid, Exp<X>>(n, [=](const Program<Grid>& g, const Writer<Exp<X>>& out) {
    g.distrPar(ceilDiv(n, kThreads), [&](const Program<Block>& p, const EWord32& b) {
      p.forAll(kThreads, [&](const Program<Thread>& t, const EWord32& tid) {
        const EWord32 i = b * kThreads + tid;
        t.cond(i < n, [&](const Program<Thread>& u) { body(u, i, out); });
      });
    });
  });
}

// The sum of arr's elements by one thread (four loads in flight), written as element i.
inline void sumInto(const Program<Thread>& t, const DPull<EFloat>& arr, const EWord32& i,
                    const Writer<EFloat>& out) {
  seqFoldStrided(Sum{}, EFloat(0.0f), arr, EWord32(0u), EWord32(1u), 4)(
      t, [&](const Program<Thread>& u, const EFloat& acc, const EWord32&) { out(u, acc, i); });
}

// The last step of a reduction: one block folds the partial results into one value.
template <class X, class Op>
Kernel foldKernel(const std::string& name, Op f, X identity) {
  return capture(
      name, kThreads,
      [=](DPull<Exp<X>> partials) {
        return Push<Grid, uint32_t, Exp<X>>(
            1, [=](const Program<Grid>& g, const Writer<Exp<X>>& out) {
              g.distrPar(1u, [&](const Program<Block>& p, const EWord32&) {
                const Exp<X> folded = blockFold(p, f, identity, partials);
                p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) { out(t, folded, 0u); });
              });
            });
      },
      {.names = {"partials"}, .outputNames = {"result"}});
}

// x is a finite float (not inf, not NaN: NaN compares false).
inline EBool finite(const EFloat& x) { return fabs(x) <= std::numeric_limits<float>::max(); }

}  // namespace detail

// ================================================================== vectors
// plus (vector addition, the paper's first benchmark): result = current + other.
// SafeGPU: require other.count = count; ensure Result.count = count (obsidian: by construction,
// the output has the inputs' length and a launch refuses any other buffer).
inline Kernel plus(bool contracts = true) {
  return capture("plus", kThreads,
                 [contracts](DPull<EFloat> current, DPull<EFloat> other) {
                   if (contracts) require(len(other) == len(current), "other.count = count");
                   return push<Grid>(zipWith([](const EFloat& a, const EFloat& b) { return a + b; },
                                             current, other));
                 },
                 {.names = {"current", "other"}, .outputNames = {"result"}});
}

// compwise_divide (Listing 2): result = current / other, element by element.
// SafeGPU: require other.count = count, other.for_all(el /= 0); ensure Result * other = Current.
// A precondition reads only lengths and scalars, so "no element of other is zero" is not one
// here: the postcondition catches it (a zero divisor gives inf or NaN, and inf * 0 is NaN, so
// result * other = current fails at that element), and forAllNonZero is the range check
// SafeGPU's precondition makes, as a kernel of its own to run first. Equality is up to float
// rounding: |result * other - current| <= 2^-20 |current|.
namespace detail {
template <bool kContracts>
Kernel compwiseDivide() {
  return capture("compwiseDivide", kThreads,
                 [](DPull<EFloat> current, DPull<EFloat> other) {
                   if (kContracts) require(len(other) == len(current), "other.count = count");
                   const auto result = push<Grid>(zipWith(
                       [](const EFloat& a, const EFloat& b) { return a / b; }, current, other));
                   if constexpr (kContracts) {
                     return ensure(
                         result,
                         [current, other](const DPull<EFloat>& r, const EWord32& i) {
                           return fabs(r[i] * other[i] - current[i]) <= fabs(current[i]) * 0x1p-20f;
                         },
                         "Result * other = Current");
                   } else {
                     return result;
                   }
                 },
                 {.names = {"current", "other"}, .outputNames = {"result"}});
}
}  // namespace detail
inline Kernel compwiseDivide(bool contracts = true) {
  return contracts ? detail::compwiseDivide<true>() : detail::compwiseDivide<false>();
}

// ------------------------------------------------------------------ reductions
// sum, min, max and the dot product are reductions: a partials kernel (one fold per kChunk
// elements), then total (one block folds the partials). Two launches, as SafeGPU's generated
// reductions.
inline size_t partialCount(size_t n) { return (n + kChunk - 1) / kChunk; }

// Partial sums of a vector (SafeGPU's sum; avg is sum / count).
inline Kernel sumPartials() {
  return capture("sumPartials", kThreads,
                 [](DPull<EFloat> current) { return detail::chunkFolds(Sum{}, 0.0f, current); },
                 {.names = {"current"}, .outputNames = {"partials"}});
}

// Partial minima (max = false) or maxima of a vector. SafeGPU: require count > 0 (the minimum
// of nothing is undefined).
inline Kernel extremumPartials(bool max, bool contracts = true) {
  return capture(max ? "maxPartials" : "minPartials", kThreads,
                 [max, contracts](DPull<EFloat> current) {
                   if (contracts) require(len(current) > 0u, "count > 0");
                   return max ? detail::chunkFolds(Max{}, Max::identity<float>(), current)
                              : detail::chunkFolds(Min{}, Min::identity<float>(), current);
                 },
                 {.names = {"current"}, .outputNames = {"partials"}});
}

// Partial dot products (Listing 4: a.compwise_multiply(b).sum, fused as SafeGPU's optimizer
// fuses it: the products are never stored). SafeGPU: require a.count = b.count.
inline Kernel dotPartials(bool contracts = true) {
  return capture("dotPartials", kThreads,
                 [contracts](DPull<EFloat> a, DPull<EFloat> b) {
                   if (contracts) require(len(a) == len(b), "a.count = b.count");
                   return detail::chunkFolds(
                       Sum{}, 0.0f,
                       zipWith([](const EFloat& x, const EFloat& y) { return x * y; }, a, b));
                 },
                 {.names = {"a", "b"}, .outputNames = {"partials"}});
}

// The total of partial sums, minima or maxima (one block).
inline Kernel sumTotal() { return detail::foldKernel("sumTotal", Sum{}, 0.0f); }
inline Kernel minTotal() { return detail::foldKernel("minTotal", Min{}, Min::identity<float>()); }
inline Kernel maxTotal() { return detail::foldKernel("maxTotal", Max{}, Max::identity<float>()); }

// ------------------------------------------------------------------ queries
// for_all, exists and is_sorted: partial flags (1: the predicate holds in every chunk element,
// for for_all; in some, for exists), then one block ANDs (ORs) them: result[0] != 0 is the
// answer. These are the queries SafeGPU builds its range contracts from; obsidian's ensure is
// itself a for_all over an output, checked by a kernel of its own.

// for_all(el /= 0): compwise_divide's range precondition, as a check to run before it.
inline Kernel forAllNonZeroPartials() {
  return capture("forAllNonZero", kThreads,
                 [](DPull<EFloat> current) {
                   return detail::chunkFolds(
                       BitAnd{}, ~0u,
                       fmap([](const EFloat& x) { return cast<uint32_t>(x != 0.0f); }, current));
                 },
                 {.names = {"current"}, .outputNames = {"partials"}});
}

// exists(el < bound), with a scalar bound: a query with an agent's argument (Listing 3's
// (?, pivot)).
inline Kernel existsBelowPartials() {
  return capture(
      "existsBelow", kThreads,
      [](DPull<EFloat> current, EFloat bound) {
        return detail::chunkFolds(
            BitOr{}, 0u,
            fmap([bound](const EFloat& x) { return cast<uint32_t>(x < bound); }, current));
      },
      {.names = {"current", "bound"}, .outputNames = {"partials"}});
}

// is_sorted: for_all i > 0: item(i - 1) <= item(i).
inline Kernel isSortedPartials() {
  return capture(
      "isSorted", kThreads,
      [](DPull<EFloat> current) {
        const DPull<EWord32> inOrder(len(current), [current](const EWord32& i) {
          return cast<uint32_t>(i == 0u || current[i - 1u] <= current[i]);  // || guards i - 1
        });
        return detail::chunkFolds(BitAnd{}, ~0u, inOrder);
      },
      {.names = {"current"}, .outputNames = {"partials"}});
}

inline Kernel allTotal() { return detail::foldKernel("allTotal", BitAnd{}, ~0u); }
inline Kernel anyTotal() { return detail::foldKernel("anyTotal", BitOr{}, 0u); }

// ------------------------------------------------------------------ sort
// SafeGPU's quicksort (Listing 3) filters and concatenates recursively: one kernel launch per
// sub-vector, which obsidian has no reason to copy. What we keep is its contract: require
// a.count > 0; ensure Result.is_sorted and Result.count = a.count (the count by construction).
// The sort is a bitonic network in its flip form: every comparator puts the smaller value at
// the lower index, so it sorts any n, elements past the end reading as +inf (they never move).
// One launch per step: sortStep(mask) compares element i with i ^ mask; the last step carries
// the postcondition.
namespace detail {
template <bool kEnsure>  // contracts && last
Kernel sortStep(bool last, bool contracts) {
  return capture(last ? "sortLastStep" : "sortStep", kThreads,
                 [contracts](DPull<EFloat> a, EWord32 mask) {
                   if (contracts) require(len(a) > 0u, "a.count > 0");
                   const EWord32 n = len(a);
                   const auto step = push<Grid>(mkPull(n, [a, mask, n](const EWord32& i) {
                     const EWord32 partner = i ^ mask;
                     const EFloat x = a[i];
                     const EFloat y = a[min(partner, n - 1u)];  // past the end: +inf, x stays
                     return ifThenElse(partner < n, ifThenElse(i < partner, min(x, y), max(x, y)),
                                       x);
                   }));
                   if constexpr (kEnsure) {
                     return ensure(
                         step,
                         [](const DPull<EFloat>& r, const EWord32& i) {
                           return i == 0u || r[i - 1u] <= r[i];  // || guards the read of r[-1]
                         },
                         "Result.is_sorted");
                   } else {
                     return step;
                   }
                 },
                 {.names = {"a", "mask"}, .outputNames = {"result"}});
}
}  // namespace detail
// The network's step kernel (last: the one with the postcondition, when contracts).
inline Kernel sortStep(bool last, bool contracts = true) {
  return last && contracts ? detail::sortStep<true>(last, contracts)
                           : detail::sortStep<false>(last, contracts);
}

// The masks of the network's steps for n elements: for each stage k = 2, 4, ... below 2n, the
// flip k - 1 (i against the mirror image of i in its block of k), then k / 4, k / 8, ..., 1.
// One step (mask 0: a copy) for a single element.
inline std::vector<uint32_t> sortMasks(size_t n) {
  std::vector<uint32_t> masks;
  for (uint64_t k = 2; k / 2 < n; k *= 2) {
    masks.push_back(static_cast<uint32_t>(k - 1));
    for (uint64_t j = k / 4; j >= 1; j /= 2) masks.push_back(static_cast<uint32_t>(j));
  }
  if (masks.empty()) masks.push_back(0);
  return masks;
}

// ================================================================== matrices
// A kernel parameter DPull2<EFloat> m is a row-major matrix with a pitch: launched with {buffer,
// rows, cols, pitch}; its preconditions (pitch >= cols, the buffer holds rows x pitch) are
// obsidian's own.

// transpose (the paper's sixth benchmark): the cols x rows matrix, through 32 x 32 tiles staged
// in padded shared memory. SafeGPU: ensure Result.rows = columns, Result.columns = rows (by
// construction here) and the elements' relation, Result.item(j, i) = item(i, j): a range
// postcondition over every element.
namespace detail {
template <bool kContracts>
Kernel transpose() {
  return capture("transpose", kThreads,
                 [](DPull2<EFloat> m) {
                   const auto result =
                       pConcat2(fmap(
                                    [](const SPull2<EFloat>& t) {
                                      return exec<Block>([t](const Program<Block>& p) {
                                        return push2<Block>(obsidian::transpose(force2(p, t)));
                                      });
                                    },
                                    obsidian::transpose(tiles(32, 32, m))),
                                m.cols(), m.rows());
                   if constexpr (kContracts) {
                     return ensure(
                         result,
                         [m](const DPull<EFloat>& r, const EWord32& i) {
                           return r[i] == m(i % m.rows(), i / m.rows());  // r(j, i) at j * rows + i
                         },
                         "Result.item(j, i) = item(i, j)");
                   } else {
                     return result;
                   }
                 },
                 {.names = {"m"}, .outputNames = {"result"}});
}
}  // namespace detail
inline Kernel transpose(bool contracts = true) {
  return contracts ? detail::transpose<true>() : detail::transpose<false>();
}

// matrix.transpose.right_multiply(vector) (Listing 1): result(c) = sum over r of m(r, c) *
// vector(r). SafeGPU: require matrix.rows = vector.count; ensure Result.rows = matrix.columns,
// Result.columns = 1 (by construction: the output has cols elements). As SafeGPU's optimizer
// would, it reads the transposed view (row c of it is column c of m) without making it: a
// block computes 32 columns, its 8 warps each a share of the rows (a warp reads 32 consecutive
// elements of a row: coalesced), and adds the 8 shares from shared memory.
inline Kernel transposeRightMultiply(bool contracts = true) {
  return capture(
      "transposeRightMultiply", kThreads,
      [contracts](DPull2<EFloat> matrix, DPull<EFloat> vector) {
        if (contracts) require(matrix.rows() == len(vector), "matrix.rows = vector.count");
        const EWord32 cols = matrix.cols();
        const auto t = obsidian::transpose(matrix);  // SafeGPU's matrix.transpose, as a view
        return DPush<Grid, EFloat>(cols, [=](const Program<Grid>& g, const Writer<EFloat>& out) {
          g.distrPar(detail::ceilDiv(cols, kColumnsPerBlock), [&](const Program<Block>& p,
                                                                  const EWord32& b) {
            auto shares = force(
                p, mkPush<Block, EFloat>(kThreads, [=](const Program<Block>& q,
                                                       const Writer<EFloat>& w) {
                  q.forAll(kThreads, [&](const Program<Thread>& th, const EWord32& tid) {
                    // Past the last column a thread reads the last one; its sum is dropped.
                    const EWord32 c = min(b * kColumnsPerBlock + tid % kColumnsPerBlock, cols - 1u);
                    const DPull<EFloat> products(len(vector), [t, vector, c](const EWord32& r) {
                      return t(c, r) * vector[r];
                    });
                    seqFoldStrided(Sum{}, EFloat(0.0f), products, tid / kColumnsPerBlock,
                                   EWord32(kRowGroups),
                                   4)(th, [&](const Program<Thread>& u, const EFloat& acc,
                                              const EWord32&) { w(u, acc, tid); });
                  });
                }));
            p.forAll(kColumnsPerBlock, [&](const Program<Thread>& th, const EWord32& lane) {
              EFloat total = shares[lane];
              for (uint32_t group = 1; group < kRowGroups; ++group) {
                total = total + shares[lane + group * kColumnsPerBlock];
              }
              const EWord32 c = b * kColumnsPerBlock + lane;
              th.cond(c < cols, [&](const Program<Thread>& u) { out(u, total, c); });
            });
          });
        });
      },
      {.names = {"matrix", "vector"}, .outputNames = {"result"}});
}

// multiply (matrix-matrix multiplication, the third benchmark): the rows(a) x cols(b) product,
// dense and row-major, one thread per element folding a row of a against a column of b.
// SafeGPU: require other.rows = columns; ensure the result's dimensions (by construction).
// (Not tiled through shared memory: what the benchmark measures is the contracts' cost.)
inline Kernel multiply(bool contracts = true) {
  return capture("multiply", kThreads,
                 [contracts](DPull2<EFloat> current, DPull2<EFloat> other) {
                   if (contracts) require(other.rows() == current.cols(), "other.rows = columns");
                   const EWord32 cols = other.cols();
                   return detail::perElement<float>(
                       current.rows() * cols,
                       [=](const Program<Thread>& t, const EWord32& i, const Writer<EFloat>& out) {
                         const EWord32 r = i / cols, c = i % cols;
                         detail::sumInto(t,
                                         DPull<EFloat>(current.cols(),
                                                       [=](const EWord32& k) {
                                                         return current(r, k) * other(k, c);
                                                       }),
                                         i, out);
                       });
                 },
                 {.names = {"current", "other"}, .outputNames = {"result"}});
}

// One step of Gaussian elimination (Listing 5, gauss_determinant): every row below `step` less
// its multiple that zeroes its element in column `step`. After steps 0 .. n - 2 the matrix is
// upper triangular and its determinant is the product of its diagonal. SafeGPU: require
// matrix.rows = matrix.columns; its divided_by requires a non-zero pivot, an element of the
// matrix, which a precondition cannot read: a zero pivot makes the rows below inf or NaN, and
// the postcondition says no element is.
namespace detail {
template <bool kContracts>
Kernel gaussStep() {
  return capture(
      "gaussStep", kThreads,
      [](DPull2<EFloat> matrix, EWord32 step) {
        if (kContracts) {
          require(matrix.rows() == matrix.cols(), "matrix.rows = matrix.columns");
          require(step < matrix.rows(), "step < matrix.rows");
        }
        const auto next = mkPull2(
            matrix.rows(), matrix.cols(), [matrix, step](const EWord32& r, const EWord32& c) {
              const EFloat eliminated =
                  matrix(r, c) - matrix(r, step) / matrix(step, step) * matrix(step, c);
              return ifThenElse(r > step, ifThenElse(c == step, EFloat(0.0f), eliminated),
                                matrix(r, c));
            });
        if constexpr (kContracts) {
          return ensure(push2<Grid>(next), finite, "pivot /= 0: no element is inf or NaN");
        } else {
          return push2<Grid>(next);
        }
      },
      {.names = {"matrix", "step"}, .outputNames = {"result"}});
}
}  // namespace detail
inline Kernel gaussStep(bool contracts = true) {
  return contracts ? detail::gaussStep<true>() : detail::gaussStep<false>();
}

// ================================================================== programs
// Where a program's kernels run: the simulator over host vectors (Sim), or the GPU over device
// buffers (Gpu, with its launch options: LaunchOptions::checked for contract checking). Each
// program below is written once against either.
struct Sim {
  template <class T>
  using Buffer = std::vector<T>;
  void operator()(const Kernel& k, const std::vector<KernelArg>& args) const { simulate(k, args); }
};
struct Gpu {
  template <class T>
  using Buffer = gpu::DeviceBuffer<T>;
  gpu::LaunchOptions options = {};
  void operator()(const Kernel& k, const std::vector<KernelArg>& args) const {
    gpu::launch(k, args, options);
  }
};

// A reduction (sum, min, max, dot, the queries): partials, then total. `inputs` are the partials
// kernel's arguments but its output; `partials` holds partialCount(n) elements, `result` one.
struct Reduction {
  Kernel partials, total;
  template <class Run, class Part, class Out>
  void operator()(const Run& run, std::vector<KernelArg> inputs, Part& part, Out& result) const {
    inputs.push_back(part);
    run(partials, inputs);
    run(total, {std::as_const(part), result});
  }
};
inline Reduction sum() { return {sumPartials(), sumTotal()}; }
inline Reduction minimum(bool contracts = true) {
  return {extremumPartials(false, contracts), minTotal()};
}
inline Reduction maximum(bool contracts = true) {
  return {extremumPartials(true, contracts), maxTotal()};
}
inline Reduction dot(bool contracts = true) { return {dotPartials(contracts), sumTotal()}; }
inline Reduction forAllNonZero() { return {forAllNonZeroPartials(), allTotal()}; }
inline Reduction existsBelow() { return {existsBelowPartials(), anyTotal()}; }
inline Reduction isSorted() { return {isSortedPartials(), allTotal()}; }

// The sort: one launch per step of sortMasks(n), from a into x and y in turn; returns the one
// holding the result. `masks` other than sortMasks(a.size()) make a sort with a defect (the
// example drops a stage to show the postcondition catch it).
struct Sort {
  explicit Sort(bool contracts = true)
      : step(sortStep(false, contracts)), last(sortStep(true, contracts)) {}
  Kernel step, last;
  template <class Run, class In, class Buf>
  Buf& operator()(const Run& run, const In& a, Buf& x, Buf& y,
                  const std::vector<uint32_t>& masks) const {
    Buf* to = &x;
    Buf* from = &y;
    for (size_t s = 0; s < masks.size(); ++s) {
      const Kernel& k = s + 1 == masks.size() ? last : step;
      if (s == 0) {
        run(k, {a, masks[s], *to});
      } else {
        run(k, {std::as_const(*from), masks[s], *to});
      }
      std::swap(to, from);
    }
    return *from;
  }
  template <class Run, class In, class Buf>
  Buf& operator()(const Run& run, const In& a, Buf& x, Buf& y) const {
    return (*this)(run, a, x, y, sortMasks(a.size()));
  }
};

// Gaussian elimination of a dense n x n matrix: steps 0 .. n - 2 (one, a copy, for n = 1) from
// m into x and y in turn; returns the one holding the upper triangular result.
struct Gauss {
  explicit Gauss(bool contracts = true) : step(gaussStep(contracts)) {}
  Kernel step;
  static uint32_t steps(uint32_t n) { return std::max(n, 2u) - 1; }
  template <class Run, class In, class Buf>
  Buf& operator()(const Run& run, const In& m, uint32_t n, Buf& x, Buf& y) const {
    Buf* to = &x;
    Buf* from = &y;
    for (uint32_t s = 0; s < steps(n); ++s) {
      if (s == 0) {
        run(step, {m, n, n, n, s, *to});
      } else {
        run(step, {std::as_const(*from), n, n, n, s, *to});
      }
      std::swap(to, from);
    }
    return *from;
  }
};

// ================================================================== the C++ reference
namespace reference {

inline std::vector<float> plus(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> r(a.size());
  for (size_t i = 0; i < a.size(); ++i) r[i] = a[i] + b[i];
  return r;
}

inline std::vector<float> compwiseDivide(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> r(a.size());
  for (size_t i = 0; i < a.size(); ++i) r[i] = a[i] / b[i];
  return r;
}

// Sums in double, with the sum of the terms' magnitudes (the scale of a float sum's error).
struct Total {
  double value = 0, magnitude = 0;
};
inline Total sum(const std::vector<float>& v) {
  Total t;
  for (float x : v) {
    t.value += x;
    t.magnitude += std::fabs(x);
  }
  return t;
}
inline Total dot(const std::vector<float>& a, const std::vector<float>& b) {
  Total t;
  for (size_t i = 0; i < a.size(); ++i) {
    t.value += double(a[i]) * b[i];
    t.magnitude += std::fabs(double(a[i]) * b[i]);
  }
  return t;
}
inline float min(const std::vector<float>& v) { return *std::min_element(v.begin(), v.end()); }
inline float max(const std::vector<float>& v) { return *std::max_element(v.begin(), v.end()); }
inline bool forAllNonZero(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return x != 0.0f; });
}
inline bool existsBelow(const std::vector<float>& v, float bound) {
  return std::any_of(v.begin(), v.end(), [bound](float x) { return x < bound; });
}
inline bool isSorted(const std::vector<float>& v) { return std::is_sorted(v.begin(), v.end()); }
inline std::vector<float> sorted(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// The cols x rows transpose of a rows x cols matrix with the given pitch, dense.
inline std::vector<float> transpose(const std::vector<float>& m, uint32_t rows, uint32_t cols,
                                    uint32_t pitch) {
  std::vector<float> r(size_t{rows} * cols);
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) r[j * rows + i] = m[i * pitch + j];
  return r;
}

// m^T v, each element with the sum of its terms' magnitudes.
inline std::vector<Total> transposeRightMultiply(const std::vector<float>& m, uint32_t rows,
                                                 uint32_t cols, uint32_t pitch,
                                                 const std::vector<float>& v) {
  std::vector<Total> r(cols);
  for (size_t i = 0; i < rows; ++i) {
    for (size_t j = 0; j < cols; ++j) {
      const double term = double(m[i * pitch + j]) * v[i];
      r[j].value += term;
      r[j].magnitude += std::fabs(term);
    }
  }
  return r;
}

// The rows x cols product of a (rows x inner, pitch ap) and b (inner x cols, pitch bp), dense.
inline std::vector<Total> multiply(const std::vector<float>& a, uint32_t rows, uint32_t inner,
                                   uint32_t ap, const std::vector<float>& b, uint32_t cols,
                                   uint32_t bp) {
  std::vector<Total> r(size_t{rows} * cols);
  for (size_t i = 0; i < rows; ++i) {
    for (size_t k = 0; k < inner; ++k) {
      const double x = a[i * ap + k];
      for (size_t j = 0; j < cols; ++j) {
        const double term = x * b[k * bp + j];
        r[i * cols + j].value += term;
        r[i * cols + j].magnitude += std::fabs(term);
      }
    }
  }
  return r;
}

// Gaussian elimination of a dense n x n matrix as gaussStep computes it (in float, the same
// operations in the same order), to upper triangular form.
inline std::vector<float> gauss(std::vector<float> m, uint32_t n) {
  for (size_t s = 0; s + 1 < n; ++s) {
    const float pivot = m[s * n + s];
    for (size_t r = s + 1; r < n; ++r) {
      const float factor = m[r * n + s];
      for (size_t c = 0; c < n; ++c) {
        m[r * n + c] = c == s ? 0.0f : m[r * n + c] - factor / pivot * m[s * n + c];
      }
    }
  }
  return m;
}

// log |det| and the sign of det of an upper triangular n x n matrix (the determinant of a large
// matrix overflows a float and a double).
struct LogDeterminant {
  double logAbs = 0;
  int sign = 1;
};
inline LogDeterminant logDeterminant(const std::vector<float>& upper, uint32_t n) {
  LogDeterminant d;
  for (size_t i = 0; i < n; ++i) {
    const float pivot = upper[i * n + i];
    d.logAbs += std::log(std::fabs(double(pivot)));
    if (pivot < 0) d.sign = -d.sign;
  }
  return d;
}

}  // namespace reference

// |got - want| within `tolerance` of the terms' magnitude (a float sum's error grows with it).
inline bool agrees(double got, const reference::Total& want, double tolerance = 1e-5) {
  return std::fabs(got - want.value) <= tolerance * (want.magnitude + 1e-30);
}

}  // namespace safegpu
