/// Row-wise operations of today's models over the rows of a row-major rows x cols matrix of
/// float, Half or BFloat16, with f32 math and any row length:
///  - softmax: y = exp(x - max(x)) / sum(exp(x - max(x)));
///  - layerNorm: y = (x - mean) * rsqrt(var + eps) * gamma + beta (var the biased variance);
///  - rmsNorm: y = x * rsqrt(mean(x * x) + eps) * weight.
/// One block per row. Rows that fit in its registers are read once: each thread loads its
/// vectors (vectors<W>: 16 bytes each where cols allows) into a thread array, the block reduces
/// the row's statistics from registers (blockReduce of one value per thread: two barriers a
/// statistic), and each thread writes its results with vector stores (unvectors<W>). Longer rows
/// are streamed: each statistic, and then the result, reads the row again (from L2 where it
/// fits).
/// @file
#pragma once

#include <boost/hana/range.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "obsidian/block/reduce.hpp"
#include "obsidian/capture.hpp"
#include "obsidian/device/algorithm.hpp"
#include "obsidian/library.hpp"
#include "obsidian/thread_array.hpp"
#include "obsidian/vector_load.hpp"

namespace obsidian {

/// The row-wise operations (device/rowwise.hpp).
enum class RowOp : uint8_t {
  Softmax,    ///< exp(x - max) / sum(exp(x - max))
  LayerNorm,  ///< (x - mean) * rsqrt(var + eps) * gamma + beta
  RmsNorm,    ///< x * rsqrt(mean(x^2) + eps) * weight
};
/// The operation's name ("softmax", "layerNorm", "rmsNorm").
std::string name(RowOp op);

/// How a row-wise kernel spreads a row over its block.
struct RowwisePolicy {
  /// The most threads a row's block has (a power of two).
  uint32_t threads = 1024;
  /// Vectors per thread the block is sized for: a row of n vectors gets the fewest threads (a
  /// power of two, at least a warp) that hold it with at most this many each.
  uint32_t vectors = 4;
  /// The most f32 values a thread holds in registers: rows that need more are streamed.
  uint32_t held = 32;
  /// Field by field.
  friend bool operator==(const RowwisePolicy&, const RowwisePolicy&) = default;
};

/// How one row length is computed (rowPlan): the vector width, the block and where the row is.
struct RowPlan {
  uint32_t width = 1;    ///< elements per vector: the largest power of two dividing cols, at
                         ///< most 16 bytes
  uint32_t threads = 0;  ///< threads per block
  uint32_t vectors = 0;  ///< vectors each thread holds (0: the row is streamed)
};

namespace device {

/// The row-wise operations' descriptor (device/algorithm.hpp): one table for all three.
struct Rowwise {
  using Policy = RowwisePolicy;                   ///< the policy type
  static constexpr const char* name = "rowwise";  ///< softmax, layerNorm, rmsNorm
  /// Where it is declared.
  static constexpr const char* header = "obsidian/device/rowwise.hpp";
  /// What it computes.
  static constexpr const char* summary =
      "softmax, layerNorm and rmsNorm over the rows of a matrix, a block per row";
  /// The policy's fields as data.
  static constexpr auto fields() {
    return hana::make_tuple(
        field("threads", &Policy::threads, 32, 1024,
              "the most threads a row's block has (a power of two)"),
        field("vectors", &Policy::vectors, 1, 16,
              "vectors per thread the block is sized for (the fewest threads that hold the row)"),
        field("held", &Policy::held, 4, 64,
              "the most f32 values a thread holds in registers (longer rows are streamed)"));
  }
  /// The policy table.
  static constexpr Tuned<Policy> table[] = {
      {0, {}, {1024, 4, 32}, "(fallback)", "not measured: four vectors a thread, 32 values held"},
      {90,
       {},
       {1024, 4, 32},
       "obsidian-bench-rowwise --runs 20 --vectors V (V = 2, 4, 8)",
       "H100, 2026-11-26: softmax and rmsNorm, f32 and bf16, 16384 x 4096 and 65536 x 1024: "
       "vectors 2 and 4 tie within 1% (softmax bf16 16384 x 4096: 92.5 and 93.1 us, the hand "
       "kernel 93.0); 8 streams bf16 4096-element rows (64 values a thread, over held 32): 180.4 "
       "us (bench/RESULTS.md, 'Row-wise operations')"},
  };
};

}  // namespace device

namespace detail {
// The plan for rows of `cols` elements of `elementBytes` bytes (cols > 0); Error for a policy
// out of its rules.
RowPlan rowPlan(const RowwisePolicy& policy, uint32_t cols, uint32_t elementBytes);
// The shape rules: in and out hold rows x cols elements (fitting 32 bits), gamma/beta (the
// operation's per-column arrays; `columnArrays` of them) cols each, eps >= 0 and finite.
void checkRowwiseShape(RowOp op, uint64_t rows, uint64_t cols, size_t in, size_t out,
                       const std::vector<size_t>& columnArrays, float eps);

// The statistics of a row and its result, for one operation: stage s folds term(s, x, done)
// over the row with combine(s) from identity(s), `done` holding the earlier stages' finished
// values; element x's result is result(x, done, gamma, beta). A row held in registers keeps
// what a later stage and the result share (softmax: exp(x - max) replaces x after stage 0).
struct RowMath {
  RowOp op;
  bool held = false;  // the row is in registers: rewrite() applies
  uint32_t stages() const { return op == RowOp::RmsNorm ? 1 : 2; }
  bool isMax(uint32_t s) const { return op == RowOp::Softmax && s == 0; }
  EFloat identity(uint32_t s) const {
    return isMax(s) ? EFloat(-std::numeric_limits<float>::infinity()) : EFloat(0.0f);
  }
  EFloat combine(uint32_t s, const EFloat& a, const EFloat& b) const {
    return isMax(s) ? max(a, b) : a + b;
  }
  // Whether a held row's values are rewritten (by rewrite) before stage s.
  bool rewritesBefore(uint32_t s) const { return held && op == RowOp::Softmax && s == 1; }
  EFloat rewrite(const EFloat& x, const std::vector<EFloat>& done) const {
    return exp(x - done[0]);
  }
  // What element x adds to stage s.
  EFloat term(uint32_t s, const EFloat& x, const std::vector<EFloat>& done) const {
    switch (op) {
      case RowOp::Softmax: return s == 0 || held ? x : exp(x - done[0]);
      case RowOp::LayerNorm: return s == 0 ? x : (x - done[0]) * (x - done[0]);
      case RowOp::RmsNorm: return x * x;
    }
    return x;
  }
  // Stage s's finished value from its fold over the row of n elements (and eps).
  EFloat finish(uint32_t s, const EFloat& folded, const EFloat& n, const EFloat& eps) const {
    switch (op) {
      case RowOp::Softmax: return s == 0 ? folded : EFloat(1.0f) / folded;
      case RowOp::LayerNorm: return s == 0 ? folded / n : rsqrt(folded / n + eps);
      case RowOp::RmsNorm: return rsqrt(folded / n + eps);
    }
    return folded;
  }
  // Element x's result.
  EFloat result(const EFloat& x, const std::vector<EFloat>& done, const EFloat& gamma,
                const EFloat& beta) const {
    switch (op) {
      case RowOp::Softmax: return (held ? x : exp(x - done[0])) * done[1];
      case RowOp::LayerNorm: return (x - done[0]) * done[1] * gamma + beta;
      case RowOp::RmsNorm: return x * done[0] * gamma;
    }
    return x;
  }
};

// Vectors of W elements of an array (W == 1: its elements), lane by lane, as f32.
template <uint32_t W, class X>
EFloat laneOf(const DPull<Exp<X>>& a, const EWord32& vector, uint32_t l) {
  if constexpr (W == 1) {
    return cast<float>(a[vector]);
  } else {
    const Vector<W, X> v = vectors<W>(a)[vector];
    Exp<X> out = hana::at_c<0>(v);
    hana::for_each(hana::make_range(hana::size_c<1>, hana::size_c<W>), [&](auto k) {
      if (decltype(k)::value == l) out = hana::at_c<decltype(k)::value>(v);
    });
    return cast<float>(out);
  }
}

// The vector of W lanes (W == 1: the element), of a push's element type.
template <uint32_t W, class X, size_t... K>
auto vectorOf(const std::vector<Exp<X>>& lanes, std::index_sequence<K...>) {
  if constexpr (W == 1) {
    return lanes[0];
  } else {
    return hana::make_tuple(lanes[K]...);
  }
}

// The push of a row's vectors as the push of its elements (W == 1: itself).
template <uint32_t W, class P>
auto elementsOf(const P& vectorPush) {
  if constexpr (W == 1) {
    return vectorPush;
  } else {
    return unvectors<W>(vectorPush);
  }
}

// The kernel's body: rows of vcols vectors of W elements, one block each.
template <class X, uint32_t W>
DPush<Grid, Exp<X>> rowwiseBody(RowOp op, const RowPlan& plan, const DPull<Exp<X>>& in,
                                const EWord32& vcols, const DPull<Exp<X>>& gamma,
                                const DPull<Exp<X>>& beta, const EFloat& eps) {
  using Element = decltype(vectorOf<W, X>({}, std::make_index_sequence<W>{}));
  const uint32_t threads = plan.threads, held = plan.vectors;
  const RowMath math{op, held > 0};
  const EWord32 cols = vcols * W;
  const bool affine = math.op != RowOp::Softmax;
  const bool shifted = math.op == RowOp::LayerNorm;
  return DPush<Grid, Exp<X>>(len(in), [=](const Program<Grid>& g, const Writer<Exp<X>>& w) {
    g.distrPar(len(in) / cols, [&](const Program<Block>& p, const EWord32& row) {
      const EFloat n = cast<float>(cols);
      const EWord32 first = row * vcols;  // the row's first vector
      // Lane l of the row's vector j, as f32. In registers, a thread's vectors past the row's
      // end read its last one (they are masked): every load is issued unconditionally.
      const auto element = [&](const EWord32& j, uint32_t l) {
        return laneOf<W, X>(in, first + j, l);
      };
      // The vectors thread tid takes: tid, tid + threads, ... below vcols; in registers, held of
      // them (the block holds the row), else as many as there are.
      const auto vectorsOf = [&](const EWord32& tid) {
        return ifThenElse(tid < vcols, (vcols - tid - 1u) / threads + 1u, EWord32(0u));
      };
      std::vector<EFloat> done;  // the stages' results, read from shared memory
      std::optional<ThreadArray<float>> items;
      if (held) {
        items = threadArray<float>(p, held * W);
        p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
          for (uint32_t k = 0; k < held; ++k) {
            const EWord32 j = min(tid + k * threads, vcols - 1u);
            for (uint32_t l = 0; l < W; ++l) items->write(t, k * W + l, element(j, l));
          }
        });
      }
      for (uint32_t s = 0; s < math.stages(); ++s) {
        const ThreadArray<float> part = threadArray<float>(p, 1);
        p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
          std::vector<EFloat> known;
          for (const EFloat& d : done) known.push_back(t.declare(d));
          if (math.rewritesBefore(s)) {
            for (uint32_t i = 0; i < held * W; ++i) {
              items->write(t, i, math.rewrite((*items)[i], known));
            }
          }
          if (held) {
            // A balanced tree of the thread's terms (those of vectors past the row's end are
            // the identity): short dependency chains.
            std::vector<EFloat> terms;
            for (uint32_t k = 0; k < held; ++k) {
              const EBool valid = tid + k * threads < vcols;
              for (uint32_t l = 0; l < W; ++l) {
                const EFloat term = math.term(s, (*items)[k * W + l], known);
                terms.push_back(k == 0 ? term : ifThenElse(valid, term, math.identity(s)));
              }
            }
            for (size_t width = 1; width < terms.size(); width *= 2) {
              for (size_t i = 0; i + width < terms.size(); i += 2 * width) {
                terms[i] = math.combine(s, terms[i], terms[i + width]);
              }
            }
            // Vector 0 of a thread past the row's end (threads > vcols) adds nothing either.
            part.write(t, 0, ifThenElse(tid < vcols, terms[0], math.identity(s)));
          } else {
            const EFloat acc = t.declare(math.identity(s));
            t.seqFor(vectorsOf(tid), [&](const Program<Thread>& u, const EWord32& k) {
              EFloat next = acc;
              for (uint32_t l = 0; l < W; ++l) {
                next = math.combine(s, next, math.term(s, element(tid + k * threads, l), known));
              }
              u.assign(acc, next);
            });
            part.write(t, 0, acc);
          }
        });
        const EFloat folded = blockReduce(
            p, [math, s](const EFloat& a, const EFloat& b) { return math.combine(s, a, b); }, part);
        done.push_back(math.finish(s, folded, n, eps));
      }
      const auto vectorPush =
          DPush<Block, Element>(vcols, [=](const Program<Block>& q, const Writer<Element>& out) {
            q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
              std::vector<EFloat> known;
              for (const EFloat& d : done) known.push_back(t.declare(d));
              const auto store = [&](const Program<Thread>& u, const EWord32& j, const auto& x) {
                std::vector<Exp<X>> lanes;
                for (uint32_t l = 0; l < W; ++l) {
                  const EFloat gl = affine ? laneOf<W, X>(gamma, j, l) : EFloat(1.0f);
                  const EFloat bl = shifted ? laneOf<W, X>(beta, j, l) : EFloat(0.0f);
                  lanes.push_back(cast<X>(math.result(x(l), known, gl, bl)));
                }
                out(u, vectorOf<W, X>(lanes, std::make_index_sequence<W>{}), j);
              };
              if (held) {
                for (uint32_t k = 0; k < held; ++k) {
                  const EWord32 j = tid + k * threads;
                  t.cond(j < vcols, [&](const Program<Thread>& u) {
                    store(u, j, [&](uint32_t l) { return (*items)[k * W + l]; });
                  });
                }
              } else {
                t.seqFor(vectorsOf(tid), [&](const Program<Thread>& u, const EWord32& k) {
                  const EWord32 j = tid + k * threads;
                  store(u, j, [&](uint32_t l) { return element(j, l); });
                });
              }
            });
          });
      elementsOf<W>(vectorPush)(p, [&](const Program<Thread>& t, const Exp<X>& v,
                                       const EWord32& i) { w(t, v, row * cols + i); });
    });
  });
}

/// The kernel of `op` over rows of elements X in vectors of W with `plan`. Its parameters, in
/// order: the input (rows * cols elements, row-major), vcols = cols / W (u32), for layerNorm and
/// rmsNorm gamma (cols elements; rmsNorm's weight) and for layerNorm beta, eps (f32), then the
/// output.
template <class X, uint32_t W>
Kernel rowwiseKernel(RowOp op, const RowPlan& plan) {
  const std::string kernelName =
      name(op) + "_" + std::string(cudaTypeName(scalarTypeOf<X>)) + "_w" + std::to_string(W);
  const std::string key = kernelName + "|threads " + std::to_string(plan.threads) + ", vectors " +
                          std::to_string(plan.vectors);
  return device::detail::memoKernel(key, [&] {
    const auto shape = [](const DPull<Exp<X>>& in, const EWord32& vcols) {
      requireLength(vcols > 0u && len(in) % (vcols * W) == 0u,
                    "rowwise: the input holds rows x cols elements");
    };
    const auto columns = [](const DPull<Exp<X>>& a, const EWord32& vcols) {
      requireLength(len(a) == vcols * W, "rowwise: a column array holds cols elements");
    };
    switch (op) {
      case RowOp::Softmax:
        return capture(kernelName, plan.threads, [=](DPull<Exp<X>> in, EWord32 vcols) {
          shape(in, vcols);
          return rowwiseBody<X, W>(op, plan, in, vcols, in, in, EFloat(0.0f));
        });
      case RowOp::RmsNorm:
        return capture(kernelName, plan.threads,
                       [=](DPull<Exp<X>> in, EWord32 vcols, DPull<Exp<X>> weight, EFloat eps) {
                         shape(in, vcols);
                         columns(weight, vcols);
                         return rowwiseBody<X, W>(op, plan, in, vcols, weight, weight, eps);
                       });
      case RowOp::LayerNorm: break;
    }
    return capture(
        kernelName, plan.threads,
        [=](DPull<Exp<X>> in, EWord32 vcols, DPull<Exp<X>> gamma, DPull<Exp<X>> beta, EFloat eps) {
          shape(in, vcols);
          columns(gamma, vcols);
          columns(beta, vcols);
          return rowwiseBody<X, W>(op, plan, in, vcols, gamma, beta, eps);
        });
  });
}

}  // namespace detail

/// The element types of the row-wise operations: float, Half, BFloat16 (f32 math).
template <class X>
concept RowScalar =
    std::is_same_v<X, float> || std::is_same_v<X, Half> || std::is_same_v<X, BFloat16>;

namespace detail {
// The kernel of `op` for rows planned as `plan`.
template <RowScalar X>
Kernel rowwiseKernelFor(RowOp op, const RowPlan& plan) {
  switch (plan.width) {
    case 1: return rowwiseKernel<X, 1>(op, plan);
    case 2: return rowwiseKernel<X, 2>(op, plan);
    case 4: return rowwiseKernel<X, 4>(op, plan);
    default:
      if constexpr (sizeof(X) == 2) return rowwiseKernel<X, 8>(op, plan);
      OBSIDIAN_ASSERT(false, "vectors of at most 16 bytes");
      return rowwiseKernel<X, 1>(op, plan);
  }
}
}  // namespace detail

namespace device {

/// The policy and plan for rows of cols elements of X on target t, with the options' settings.
template <RowScalar X>
RowPlan rowwisePlanFor(const Target& t, uint32_t cols, const Options& options = {}) {
  const ProblemClass p{static_cast<uint32_t>(sizeof(X)), OperatorClass::Any, Values::Any,
                       Scale::Any};
  return obsidian::detail::rowPlan(policyFor<Rowwise>(t, p, options), cols,
                                   static_cast<uint32_t>(sizeof(X)));
}

namespace detail {
template <class In, class Out>
void rowwise(RowOp op, const In& in, const std::type_identity_t<In>* gamma,
             const std::type_identity_t<In>* beta, Out& out, uint32_t rows, uint32_t cols,
             float eps, const Options& options) {
  using X = ElementOf<In>;
  std::vector<size_t> columns;
  if (gamma) columns.push_back(gamma->size());
  if (beta) columns.push_back(beta->size());
  obsidian::detail::checkRowwiseShape(op, rows, cols, in.size(), out.size(), columns, eps);
  if (rows == 0 || cols == 0) return;
  const Target t = targetOf<In>();
  const RowPlan plan = rowwisePlanFor<X>(t, cols, options);
  const Kernel k = obsidian::detail::rowwiseKernelFor<X>(op, plan);
  std::vector<KernelArg> args{in, cols / plan.width};
  if (gamma) args.push_back(*gamma);
  if (beta) args.push_back(*beta);
  if (op != RowOp::Softmax) args.push_back(eps);
  args.push_back(out);
  launchOn(t, k, args, options);
}
}  // namespace detail

/// softmax(in, out, rows, cols): each row of the row-major rows x cols matrix `in` made
/// exp(x - max) / sum(exp(x - max)) in f32, written to out: on the GPU for device buffers.
template <RowScalar X>
void softmax(const gpu::DeviceBuffer<X>& in, gpu::DeviceBuffer<X>& out, uint32_t rows,
             uint32_t cols, const Options& options = {}) {
  detail::rowwise(RowOp::Softmax, in, nullptr, nullptr, out, rows, cols, 0.0f, options);
}
/// The same on the simulator.
template <RowScalar X>
void softmax(const std::vector<X>& in, std::vector<X>& out, uint32_t rows, uint32_t cols,
             const Options& options = {}) {
  detail::rowwise(RowOp::Softmax, in, nullptr, nullptr, out, rows, cols, 0.0f, options);
}

/// layerNorm(in, gamma, beta, out, rows, cols, eps): each row x of `in` made
/// (x - mean) * rsqrt(var + eps) * gamma + beta in f32 (var the biased variance, gamma and beta
/// of cols elements), written to out: on the GPU for device buffers.
template <RowScalar X>
void layerNorm(const gpu::DeviceBuffer<X>& in, const gpu::DeviceBuffer<X>& gamma,
               const gpu::DeviceBuffer<X>& beta, gpu::DeviceBuffer<X>& out, uint32_t rows,
               uint32_t cols, float eps = 1e-5f, const Options& options = {}) {
  detail::rowwise(RowOp::LayerNorm, in, &gamma, &beta, out, rows, cols, eps, options);
}
/// The same on the simulator.
template <RowScalar X>
void layerNorm(const std::vector<X>& in, const std::vector<X>& gamma, const std::vector<X>& beta,
               std::vector<X>& out, uint32_t rows, uint32_t cols, float eps = 1e-5f,
               const Options& options = {}) {
  detail::rowwise(RowOp::LayerNorm, in, &gamma, &beta, out, rows, cols, eps, options);
}

/// rmsNorm(in, weight, out, rows, cols, eps): each row x of `in` made
/// x * rsqrt(mean(x * x) + eps) * weight in f32 (weight of cols elements), written to out: on
/// the GPU for device buffers.
template <RowScalar X>
void rmsNorm(const gpu::DeviceBuffer<X>& in, const gpu::DeviceBuffer<X>& weight,
             gpu::DeviceBuffer<X>& out, uint32_t rows, uint32_t cols, float eps = 1e-6f,
             const Options& options = {}) {
  detail::rowwise(RowOp::RmsNorm, in, &weight, nullptr, out, rows, cols, eps, options);
}
/// The same on the simulator.
template <RowScalar X>
void rmsNorm(const std::vector<X>& in, const std::vector<X>& weight, std::vector<X>& out,
             uint32_t rows, uint32_t cols, float eps = 1e-6f, const Options& options = {}) {
  detail::rowwise(RowOp::RmsNorm, in, &weight, nullptr, out, rows, cols, eps, options);
}

}  // namespace device

}  // namespace obsidian
