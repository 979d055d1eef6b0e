// The kernel-fusion BLAS seed's eleven BLAS-1/2 sequences (seed 002, Tables 1 and 2) in
// obsidian, single precision, with double-precision C++ references. Matrices are row-major
// DPull2 parameters (rows x cols with a pitch); vectors are DPull<EFloat>. Each sequence is a
// list of kernels (Sequence) that a host runs in order over named buffers, so the example
// (blas.cpp), the tests (tests/sim/test_blas.cpp) and the benchmark (bench/blas) run the same
// plan on the simulator or the GPU.
//
// The building blocks, each one grid pass over the matrix:
//   rowDots      a warp per row: lanes fold strided products, xor shuffles add them; the
//                finishing map (alpha * dot + beta * y[r], ...) is applied before the store.
//   columnPass   a thread per column folds a band of rows (coalesced across the warp); a band's
//                column sums go to a partials array that `combine` folds. GEMVER's variant
//                also writes B = A + u1 v1^T + u2 v2^T as it reads A (fused).
//   bicgkPass    q = A p and s = A^T r in one pass (fused): a warp owns 32 x perLane columns
//                and a band of rows; per row its lanes' products meet in xor shuffles (a
//                partial of q), and each lane keeps its columns' running s in registers.
// The elementwise sequences (SSCAL, WAXPBY, VADD, MADD) are one grid loop each; AXPYDOT writes
// z and folds z . u in the same loop (fused), each block publishing a partial that `sumAll`
// adds. With Shape::fuse off, the sequences the paper tags F (AXPYDOT, BiCGK, GEMVER, GESUMMV,
// VADD, WAXPBY) run one kernel per BLAS call instead, as a library without fusion would: the
// same out-of-place kernels, so fused / unfused isolates what fusion buys.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <obsidian/obsidian.hpp>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace blas {

using namespace obsidian;

// ---------------------------------------------------------------- shapes (the tuned choices)
// The choices the paper's compiler searched (tile sizes, serial iterations per instance), as
// data: obsidian-bench-blas takes each as an option (--band, --bicgk-band, --per-lane, ...);
// the defaults and the sweep that kept them are in bench/RESULTS.md, "Fused BLAS-1/2".
struct Shape {
  bool fuse = true;          // fused plans (false: one kernel per BLAS call; tag F sequences)
  uint32_t threads = 256;    // threads per block of every pass
  uint32_t rowUnroll = 4;    // rowDots: products a lane folds a trip; columnPass: rows read
  uint32_t band = 128;       // columnPass: rows each thread folds (serial iterations)
  uint32_t bicgkBand = 64;   // bicgkPass: rows each warp visits
  uint32_t perLane = 4;      // bicgkPass: columns each lane owns (a warp's tile: 32 x perLane)
  uint32_t vectorItems = 4;  // AXPYDOT, SSCAL: elements per thread per block tile
};

namespace detail {
inline void checkShape(const Shape& s) {
  if (s.threads == 0 || s.threads % 32 != 0 || s.threads > 1024) {
    throw Error("blas::Shape: threads must be a multiple of 32 of at most 1024; got " +
                std::to_string(s.threads));
  }
  const auto positive = [](const char* what, uint32_t v, uint32_t most) {
    if (v == 0 || v > most) {
      throw Error(std::string("blas::Shape: ") + what + " must be 1.." + std::to_string(most) +
                  "; got " + std::to_string(v));
    }
  };
  positive("rowUnroll", s.rowUnroll, 16);
  positive("band", s.band, 1u << 16);
  positive("bicgkBand", s.bicgkBand, 1u << 16);
  positive("perLane", s.perLane, 16);
  positive("vectorItems", s.vectorItems, 16);
}

// ceil(n / k) without wrapping near 2^32.
inline EWord32 ceilDiv(const EWord32& n, uint32_t k) {
  return n / k + ifThenElse(n % k != 0u, EWord32(1u), EWord32(0u));
}

// body(s, from, k) over [0, count) in pieces of k consecutive indices starting at `from`: trips of
// `unroll`, then the rest one at a time. A body that reads its k elements before folding them
// keeps `unroll` loads in flight where a plain seqFor has one.
template <class Body>
void unrolledFor(const Program<Thread>& p, const EWord32& count, uint32_t unroll, Body body) {
  const EWord32 trips = count / unroll;
  p.seqFor(trips, [&](const Program<Thread>& s, const EWord32& i) { body(s, i * unroll, unroll); });
  if (unroll > 1) {
    p.seqFor(count - trips * unroll,
             [&](const Program<Thread>& s, const EWord32& i) { body(s, trips * unroll + i, 1); });
  }
}

// Element (r, c) of a row-major matrix parameter, 0 outside it (reads nothing there).
template <class M>
EFloat at(const M& a, const EWord32& r, const EWord32& c) {
  return ifThenElse(r < a.rows() && c < a.cols(), a(r, c), EFloat(0.0f));
}
}  // namespace detail

// ---------------------------------------------------------------- building blocks
// rowDots(a, x, finish, shape): the Push<Grid> of rows(a) elements, element r finish(r, sum_c
// a(r, c) * x[c]). One warp per row; lane l folds products l, l + 32, ... (`rowUnroll` a trip),
// then five xor shuffles give every lane the row's sum and lane 0 stores finish(r, sum). `a` is
// any matrix expression (GESUMMV folds alpha A + beta B).
template <class M, class Finish>
auto rowDots(const M& a, const DPull<EFloat>& x, Finish finish, const Shape& shape) {
  const uint32_t warps = shape.threads / 32, unroll = shape.rowUnroll;
  const EWord32 rows = a.rows(), cols = a.cols();
  auto grid = pConcat(mkPull(detail::ceilDiv(rows, warps), [=](const EWord32& b) {
    return pConcat(mkPull(warps, [=](const EWord32& v) {
      return exec<Warp>([=](const Program<Warp>& p) {
        // Warps past the last row fold the last row again; takeP drops their store.
        const EWord32 row = min(b * warps + v, rows - 1u);
        auto sums = forceReg(
            p, tConcat<Warp>(mkPull(32u, [=](const EWord32& lane) {
              auto products = mkPull(cols, [=](const EWord32& c) { return a(row, c) * x[c]; });
              return seqFoldStrided(Sum{}, EFloat(0.0f), products, lane, EWord32(32u), unroll);
            })));
        sums = warpReduceGroups(p, Sum{}, sums, 32);
        return mkPush<Warp, EFloat>(1u, [=](const Program<Warp>& q, const Writer<EFloat>& out) {
          q.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
            t.cond(lane == 0u,
                   [&](const Program<Thread>& u) { out(u, finish(row, sums[lane]), 0u); });
          });
        });
      });
    }));
  }));
  return takeP(rows, grid);
}

// columnPass(a, y, partials, shape, visit): for each band of `shape.band` rows b and column c,
// partials[b * cols + c] = sum over the band's rows r of a(r, c) * y[r]. A thread per column,
// each block `threads` adjacent columns of one band, so a warp reads 128 contiguous bytes of a
// row at a time. A thread reads `rowUnroll` rows a loop trip before it folds them (in row order,
// so the sum is the same): with one load per trip, its loads waited on each other. visit(t, r,
// c, value) runs on every element as it is read (GEMVER writes B there). The band count is
// ceil(rows / band); `partials` must hold bands * cols elements (a launch precondition).
template <class M, class Visit>
GridEffect columnPass(const M& a, const DPull<EFloat>& y, const DMutable<float>& partials,
                      const Shape& shape, Visit visit) {
  const uint32_t threads = shape.threads, band = shape.band, unroll = shape.rowUnroll;
  const EWord32 rows = a.rows(), cols = a.cols();
  const EWord32 bands = detail::ceilDiv(rows, band), tiles = detail::ceilDiv(cols, threads);
  require(len(y) == rows, "y has one element per row of the matrix");
  // max(.., 1): an empty matrix needs no partials, and the check must not divide by zero
  require(len(partials) / max(bands, EWord32(1u)) >= cols || rows == 0u,
          "the partials hold (rows / band, rounded up) x cols elements");
  return forEachBlock(mkPull(bands * tiles, [](const EWord32& i) { return i; }),
                      [=](const Program<Block>& p, const EWord32& blk) {
                        const EWord32 b = blk / tiles, j = blk % tiles;
                        p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                          const EWord32 c = j * threads + tid;
                          t.cond(c < cols, [&](const Program<Thread>& u) {
                            const EWord32 first = b * band;
                            const EWord32 count = min(EWord32(band), rows - first);
                            const EFloat acc = u.declare(EFloat(0.0f));
                            // rows first + i for i in [from, from + k): all read, then folded
                            const auto rowsAt = [&](const Program<Thread>& s, const EWord32& from,
                                                    uint32_t k) {
                              std::vector<EFloat> values;
                              for (uint32_t m = 0; m < k; ++m) {
                                values.push_back(s.declare(a(first + from + m, c)));
                              }
                              for (uint32_t m = 0; m < k; ++m) {
                                const EWord32 r = first + from + m;
                                s.assign(acc, acc + values[m] * y[r]);
                                visit(s, r, c, values[m]);
                              }
                            };
                            detail::unrolledFor(u, count, unroll, rowsAt);
                            write(u, partials, b * cols + c, acc);
                          });
                        });
                      });
}

// bicgkPass(a, p, r, qPartials, sPartials, shape): q = A p and s = A^T r over one read of A.
// Warp w of the grid owns the column tile j (32 x perLane columns: lane l has l, l + 32, ...)
// and the band b of bicgkBand rows. For each row of its band it folds its lanes' products
// with p into one partial of q (five xor shuffles; lane 0 stores qPartials[j * rows + row]),
// while each lane adds a(row, c) * r[row] into its columns' registers; at the band's end the
// lanes store sPartials[b * cols + c]. `sumParts` finishes both.
inline GridEffect bicgkPass(const DPull2<EFloat>& a, const DPull<EFloat>& pv,
                            const DPull<EFloat>& rv, const DMutable<float>& qPartials,
                            const DMutable<float>& sPartials, const Shape& shape) {
  const uint32_t warps = shape.threads / 32, k = shape.perLane, band = shape.bicgkBand;
  const uint32_t width = 32 * k;
  const EWord32 rows = a.rows(), cols = a.cols();
  const EWord32 bands = detail::ceilDiv(rows, band), tiles = detail::ceilDiv(cols, width);
  require(len(pv) == cols, "p has one element per column of A");
  require(len(rv) == rows, "r has one element per row of A");
  require(len(qPartials) / max(tiles, EWord32(1u)) >= rows || cols == 0u,
          "the q partials hold (cols / (32 x perLane), rounded up) x rows elements");
  require(len(sPartials) / max(bands, EWord32(1u)) >= cols || rows == 0u,
          "the s partials hold (rows / bicgkBand, rounded up) x cols elements");
  const EWord32 instances = bands * tiles;  // (band, tile) pairs, tile fastest
  return effect([=](const Program<Grid>& g) {
    g.distrPar(detail::ceilDiv(instances, warps), [&](const Program<Block>& blk,
                                                      const EWord32& bid) {
      blk.distrPar(warps, [&](const Program<Warp>& w, const EWord32& wid) {
        const EWord32 instance = bid * warps + wid;
        w.cond(instance < instances, [&](const Program<Warp>& p) {
          const EWord32 b = instance / tiles, j = instance % tiles;
          const EWord32 first = b * band, count = min(EWord32(band), rows - first);
          std::vector<EFloat> acc;
          for (uint32_t m = 0; m < k; ++m) acc.push_back(p.declare(EFloat(0.0f)));
          p.seqFor(count, [&](const Program<Warp>& q, const EWord32& i) {
            const EWord32 row = first + i;
            const EFloat rr = rv[row];
            auto sums = forceReg(
                q,
                mkPush<Warp, EFloat>(32u, [=](const Program<Warp>& l, const Writer<EFloat>& out) {
                  l.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
                    EFloat dot(0.0f);
                    for (uint32_t m = 0; m < k; ++m) {
                      const EWord32 c = j * width + m * 32 + lane;
                      const EFloat value = t.declare(detail::at(a, row, c));
                      t.assign(acc[m], acc[m] + value * rr);
                      dot = dot + value * ifThenElse(c < cols, pv[c], EFloat(0.0f));
                    }
                    out(t, dot, lane);
                  });
                }));
            sums = warpReduceGroups(q, Sum{}, sums, 32);
            q.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
              t.cond(lane == 0u, [&](const Program<Thread>& u) {
                write(u, qPartials, j * rows + row, sums[lane]);
              });
            });
          });
          p.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
            for (uint32_t m = 0; m < k; ++m) {
              const EWord32 c = j * width + m * 32 + lane;
              t.cond(c < cols,
                     [&](const Program<Thread>& u) { write(u, sPartials, b * cols + c, acc[m]); });
            }
          });
        });
      });
    });
  });
}

// ---------------------------------------------------------------- the kernels
namespace detail {
// One grid loop of block tiles of `threads x vectorItems` elements (block b's threads take
// elements b * chunk + k * threads + tid, coalesced): every in-range element's term(i) is read
// first, then visit(t, i, term) runs on each, so a thread has all its loads in flight at once.
template <class Term, class Visit>
GridEffect tileMap(const EWord32& n, const Shape& shape, Term term, Visit visit) {
  const uint32_t threads = shape.threads, items = shape.vectorItems;
  return effect([=](const Program<Grid>& g) {
    g.distrPar(ceilDiv(n, threads * items), [&](const Program<Block>& p, const EWord32& b) {
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        std::vector<std::pair<EWord32, EFloat>> values;
        for (uint32_t k = 0; k < items; ++k) {
          const EWord32 i = b * (threads * items) + k * threads + tid;
          values.emplace_back(i, t.declare(ifThenElse(i < n, term(min(i, n - 1u)), EFloat(0.0f))));
        }
        for (const auto& [i, v] : values) {
          t.cond(i < n, [&](const Program<Thread>& s) { visit(s, i, v); });
        }
      });
    });
  });
}

// out[i] = alpha * sum_{k < parts} partials[k * n + i] + beta * y[i] (y: when given), i < n.
inline auto combined(const EFloat& alpha, const EWord32& parts, const EWord32& n,
                     const DPull<EFloat>& partials, const EFloat& beta,
                     const std::optional<DPull<EFloat>>& y) {
  require(parts >= 1u, "combine needs at least one part");
  require(len(partials) / parts >= n, "the partials hold parts x n elements");
  return mkPush<Grid, EFloat>(n, [=](const Program<Grid>& g, const Writer<EFloat>& out) {
    g.forAll(n, [&](const Program<Thread>& t, const EWord32& i) {
      const EFloat acc = t.declare(EFloat(0.0f));
      // parts k0 .. k0 + m - 1 read before any is added (in order: the same sum). A thread
      // folds a whole column of partials: one load a trip left BiCGK's 128 band partials at
      // 4096^2 to 15.6 us of latency on 6% of the warp slots (Nsight Compute, H100).
      const auto fold = [&](const Program<Thread>& s, const EWord32& k0, uint32_t m) {
        std::vector<EFloat> values;
        for (uint32_t k = 0; k < m; ++k) values.push_back(s.declare(partials[(k0 + k) * n + i]));
        for (const EFloat& v : values) s.assign(acc, acc + v);
      };
      unrolledFor(t, parts, 8, fold);
      out(t, y ? alpha * acc + beta * (*y)[i] : alpha * acc, i);
    });
  });
}
}  // namespace detail

// combine: out = alpha * (the sum of `parts` consecutive len(y)-element partials) + beta * y.
// It finishes columnPass (x = beta A^T y + z: alpha = beta, beta = 1, y = z).
inline Kernel combine(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture(
      "combine", shape.threads,
      [](EFloat alpha, EWord32 parts, DPull<EFloat> partials, EFloat beta, DPull<EFloat> y) {
        return detail::combined(alpha, parts, len(y), partials, beta, y);
      },
      {.names = {"alpha", "parts", "partials", "beta", "y"}, .outputNames = {"out"}});
}

// sumParts: out (n elements) = the sum of `parts` consecutive n-element partials.
inline Kernel sumParts(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture("sumParts", shape.threads,
                 [](EWord32 parts, EWord32 n, DPull<EFloat> partials) {
                   return detail::combined(EFloat(1.0f), parts, n, partials, EFloat(0.0f),
                                           std::nullopt);
                 },
                 {.names = {"parts", "n", "partials"}, .outputNames = {"out"}});
}

// sumAll: out[0] = the sum of every partial, by one block (each thread folds a strided share,
// eight loads in flight, then blockReduce): AXPYDOT's finish, whose partials are one per block
// of its pass. Always 1024 threads, whatever the shape: one block has only its own loads to
// hide latency with, and with 256 threads a thread's 64 serial loads (2^24 elements, 16384
// partials) took 10.7 us of AXPYDOT's 108 (Nsight Compute, H100).
inline Kernel sumAll(const Shape& shape = {}) {
  detail::checkShape(shape);
  const uint32_t threads = 1024;
  return capture("sumAll", threads,
                 [=](DPull<EFloat> partials) {
                   return pConcat(mkPull(1u, [=](const EWord32&) {
                     return singletonPush<Block>([=](const Program<Block>& p) {
                       const auto shares =
                           force(p, tConcat<Block>(mkPull(threads, [=](const EWord32& t) {
                                   return seqFoldStrided(Sum{}, EFloat(0.0f), partials, t,
                                                         EWord32(threads), 8);
                                 })));
                       return blockReduce(p, Sum{}, shares);
                     });
                   }));
                 },
                 {.names = {"partials"}, .outputNames = {"r"}});
}

// SSCAL, out of place: y = alpha x (CUBLAS scales in place), in block tiles of `threads x
// vectorItems` elements (tileMap): with 8 bytes an element, one element a thread leaves too few
// loads in flight to reach the copy roofline.
inline Kernel sscal(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture("sscal", shape.threads,
                 [=](EFloat alpha, DPull<EFloat> x, DMutable<float> y) {
                   require(len(y) == len(x), "y has the length of x");
                   return detail::tileMap(
                       len(x), shape, [=](const EWord32& i) { return alpha * x[i]; },
                       [=](const Program<Thread>& t, const EWord32& i, const EFloat& v) {
                         write(t, y, i, v);
                       });
                 },
                 {.names = {"alpha", "x", "y"}});
}

// WAXPBY: w = alpha x + beta y.
inline Kernel waxpby(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture(
      "waxpby", shape.threads,
      [](EFloat alpha, DPull<EFloat> x, EFloat beta, DPull<EFloat> y) {
        require(len(x) == len(y), "x and y have one length");
        return push<Grid>(
            zipWith([=](const EFloat& a, const EFloat& b) { return alpha * a + beta * b; }, x, y));
      },
      {.names = {"alpha", "x", "beta", "y"}, .outputNames = {"w"}});
}

// VADD: x = w + y + z.
inline Kernel vadd(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture("vadd", shape.threads,
                 [](DPull<EFloat> w, DPull<EFloat> y, DPull<EFloat> z) {
                   require(len(w) == len(y) && len(y) == len(z), "w, y and z have one length");
                   return push<Grid>(zipWith(
                       [](const EFloat& a, const EFloat& b) { return a + b; },
                       zipWith([](const EFloat& a, const EFloat& b) { return a + b; }, w, y), z));
                 },
                 {.names = {"w", "y", "z"}, .outputNames = {"x"}});
}

// MADD: C = A + B (a dense rows x cols result; A and B may have pitches).
inline Kernel madd(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture(
      "madd", shape.threads,
      [](DPull2<EFloat> a, DPull2<EFloat> b) {
        require(a.rows() == b.rows() && a.cols() == b.cols(), "A and B have one shape");
        return push2<Grid>(zipWith([](const EFloat& x, const EFloat& y) { return x + y; }, a, b));
      },
      {.names = {"A", "B"}, .outputNames = {"C"}});
}

// The blocks AXPYDOT's fused pass runs for n elements (and so the partials it writes).
inline uint32_t axpydotBlocks(uint64_t n, const Shape& shape = {}) {
  const uint64_t chunk = uint64_t{shape.threads} * shape.vectorItems;
  return static_cast<uint32_t>((n + chunk - 1) / chunk);
}

namespace detail {
// One grid loop of block tiles (`threads x vectorItems` elements; block b's threads take
// elements b * chunk + k * threads + tid, coalesced): term(i) for each element in range, visit(t,
// i, term) as it is computed, and block b's sum of term(i) * u[i] stored at partials[b].
template <class Term, class Visit>
GridEffect tileDots(const EWord32& n, const DPull<EFloat>& u, const DMutable<float>& partials,
                    const Shape& shape, Term term, Visit visit) {
  const uint32_t threads = shape.threads, items = shape.vectorItems;
  const EWord32 blocks = ceilDiv(n, threads * items);
  require(len(u) == n, "u has the length of the other vectors");
  require(len(partials) >= blocks, "the partials hold one element per block of the pass");
  return effect([=](const Program<Grid>& g) {
    g.distrPar(blocks, [&](const Program<Block>& p, const EWord32& b) {
      const auto sums = force(
          p,
          mkPush<Block, EFloat>(threads, [=](const Program<Block>& q, const Writer<EFloat>& out) {
            q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
              EFloat acc(0.0f);
              for (uint32_t k = 0; k < items; ++k) {
                const EWord32 i = b * (threads * items) + k * threads + tid;
                const EWord32 inside = min(i, n - 1u);  // read nothing past the end
                const EFloat value = t.declare(ifThenElse(i < n, term(inside), EFloat(0.0f)));
                t.cond(i < n, [&](const Program<Thread>& s) { visit(s, i, value); });
                acc = acc + value * ifThenElse(i < n, u[inside], EFloat(0.0f));
              }
              out(t, acc, tid);
            });
          }));
      const EFloat total = blockReduce(p, Sum{}, sums);
      p.forAll(1u, [&](const Program<Thread>& t, const EWord32&) { write(t, partials, b, total); });
    });
  });
}
}  // namespace detail

// AXPYDOT's fused pass: z = w - alpha v, and block b's partial of z . u (partials[b]), in one
// tileDots loop that stores z as it folds: w, v and u are read once and z is never read back
// (CUBLAS: copy, axpy, dot). sumAll adds the partials.
inline Kernel axpydot(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture("axpydot", shape.threads,
                 [=](EFloat alpha, DPull<EFloat> w, DPull<EFloat> v, DPull<EFloat> u,
                     DMutable<float> z, DMutable<float> partials) {
                   const EWord32 n = len(w);
                   require(len(v) == n && len(u) == n, "w, v and u have one length");
                   require(len(z) == n, "z has the length of w");
                   return detail::tileDots(
                       n, u, partials, shape, [=](const EWord32& i) { return w[i] - alpha * v[i]; },
                       [=](const Program<Thread>& t, const EWord32& i, const EFloat& zi) {
                         write(t, z, i, zi);
                       });
                 },
                 {.names = {"alpha", "w", "v", "u", "z", "partials"}});
}

// The dot product's first pass (unfused AXPYDOT's r = z . u): block b's partial of x . u at
// partials[b]; sumAll adds them.
inline Kernel dotPartials(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture("dotPartials", shape.threads,
                 [=](DPull<EFloat> x, DPull<EFloat> u, DMutable<float> partials) {
                   require(len(x) == len(u), "x and u have one length");
                   return detail::tileDots(
                       len(x), u, partials, shape, [=](const EWord32& i) { return x[i]; },
                       [](const Program<Thread>&, const EWord32&, const EFloat&) {});
                 },
                 {.names = {"x", "u", "partials"}});
}

// SGEMV: z = alpha A x + beta y (one pass, rowDots).
inline Kernel sgemv(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture(
      "sgemv", shape.threads,
      [=](EFloat alpha, DPull2<EFloat> a, DPull<EFloat> x, EFloat beta, DPull<EFloat> y) {
        require(len(x) == a.cols(), "x has one element per column of A");
        require(len(y) == a.rows(), "y has one element per row of A");
        return rowDots(
            a, x, [=](const EWord32& r, const EFloat& d) { return alpha * d + beta * y[r]; },
            shape);
      },
      {.names = {"alpha", "A", "x", "beta", "y"}, .outputNames = {"z"}});
}

// w = alpha A x (rowDots): ATAX's A x, SGEMVT's and GEMVER's second halves.
inline Kernel scaledGemv(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture("scaledGemv", shape.threads,
                 [=](EFloat alpha, DPull2<EFloat> a, DPull<EFloat> x) {
                   require(len(x) == a.cols(), "x has one element per column of A");
                   return rowDots(
                       a, x, [=](const EWord32&, const EFloat& d) { return alpha * d; }, shape);
                 },
                 {.names = {"alpha", "A", "x"}, .outputNames = {"w"}});
}

// GESUMMV: y = alpha A x + beta B x, fused: one warp per row reads both rows and x once
// (CUBLAS: two gemv calls, x read twice).
inline Kernel gesummv(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture(
      "gesummv", shape.threads,
      [=](EFloat alpha, DPull2<EFloat> a, EFloat beta, DPull2<EFloat> b, DPull<EFloat> x) {
        require(a.rows() == b.rows() && a.cols() == b.cols(), "A and B have one shape");
        require(len(x) == a.cols(), "x has one element per column of A");
        const auto both =
            zipWith([=](const EFloat& p, const EFloat& q) { return alpha * p + beta * q; }, a, b);
        return rowDots(
            both, x, [](const EWord32&, const EFloat& d) { return d; }, shape);
      },
      {.names = {"alpha", "A", "beta", "B", "x"}, .outputNames = {"y"}});
}

// The partials columnPass and bicgkPass write for a rows x cols matrix.
inline uint32_t bands(uint32_t rows, uint32_t band) { return rows / band + (rows % band != 0); }
inline uint32_t bicgkTiles(uint32_t cols, const Shape& s) { return bands(cols, 32 * s.perLane); }

// A^T y by bands: partials[b * cols + c] (columnPass); combine or sumParts finishes it.
inline Kernel columnSums(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture("columnSums", shape.threads,
                 [=](DPull2<EFloat> a, DPull<EFloat> y, DMutable<float> partials) {
                   return columnPass(a, y, partials, shape,
                                     [](const Program<Thread>&, const EWord32&, const EWord32&,
                                        const EFloat&) {});
                 },
                 {.names = {"A", "y", "partials"}});
}

// GEMVER's first pass, fused: B = A + u1 v1^T + u2 v2^T is written (dense, rows x cols) as it
// is computed, and B^T y's band partials are folded from it on the way (columnPass's visit).
inline Kernel gemverUpdate(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture(
      "gemverUpdate", shape.threads,
      [=](DPull2<EFloat> a, DPull<EFloat> u1, DPull<EFloat> v1, DPull<EFloat> u2, DPull<EFloat> v2,
          DPull<EFloat> y, DMutable<float> b, DMutable<float> partials) {
        const EWord32 rows = a.rows(), cols = a.cols();
        require(len(u1) == rows && len(u2) == rows, "u1 and u2 have one element per row of A");
        require(len(v1) == cols && len(v2) == cols, "v1 and v2 have one element per column of A");
        require(len(b) / max(cols, EWord32(1u)) >= rows || cols == 0u,
                "B holds rows x cols elements");
        const auto updated = mkPull2(rows, cols, [=](const EWord32& r, const EWord32& c) {
          return a(r, c) + u1[r] * v1[c] + u2[r] * v2[c];
        });
        return columnPass(updated, y, partials, shape,
                          [=](const Program<Thread>& t, const EWord32& r, const EWord32& c,
                              const EFloat& value) { write(t, b, r * cols + c, value); });
      },
      {.names = {"A", "u1", "v1", "u2", "v2", "y", "B", "partials"}});
}

// Unfused GEMVER's first call: B = A + u1 v1^T + u2 v2^T (dense, rows x cols), alone.
inline Kernel rank2Update(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture(
      "rank2Update", shape.threads,
      [](DPull2<EFloat> a, DPull<EFloat> u1, DPull<EFloat> v1, DPull<EFloat> u2, DPull<EFloat> v2) {
        require(len(u1) == a.rows() && len(u2) == a.rows(),
                "u1 and u2 have one element per row of A");
        require(len(v1) == a.cols() && len(v2) == a.cols(),
                "v1 and v2 have one element per column of A");
        return push2<Grid>(mkPull2(a.rows(), a.cols(), [=](const EWord32& r, const EWord32& c) {
          return a(r, c) + u1[r] * v1[c] + u2[r] * v2[c];
        }));
      },
      {.names = {"A", "u1", "v1", "u2", "v2"}, .outputNames = {"B"}});
}

// BiCGK's fused pass (bicgkPass): q's and s's partials from one read of A.
inline Kernel bicgk(const Shape& shape = {}) {
  detail::checkShape(shape);
  return capture(
      "bicgk", shape.threads,
      [=](DPull2<EFloat> a, DPull<EFloat> p, DPull<EFloat> r, DMutable<float> qPartials,
          DMutable<float> sPartials) { return bicgkPass(a, p, r, qPartials, sPartials, shape); },
      {.names = {"A", "p", "r", "qPartials", "sPartials"}});
}

// ---------------------------------------------------------------- the sequences
// A problem: vectors of n elements, or a rows x cols matrix (rows of `pitch` elements).
struct Problem {
  uint32_t n = 0;
  uint32_t rows = 0, cols = 0, pitch = 0;
  size_t matrixElements() const { return size_t{rows} * pitch; }
};

// A kernel argument of a step: a named buffer, or a scalar.
struct Arg {
  enum class Kind : uint8_t { Buffer, Float, Word };
  Kind kind;
  std::string buffer;
  float real = 0;
  uint32_t word = 0;
};
inline Arg buffer(std::string name) { return {Arg::Kind::Buffer, std::move(name)}; }
inline Arg real(float v) { return {Arg::Kind::Float, {}, v}; }
inline Arg word(uint32_t v) { return {Arg::Kind::Word, {}, 0, v}; }

struct Step {
  Kernel kernel;
  std::vector<Arg> args;
};

// A sequence: its kernels in order and the buffers they use (name, elements). Inputs are
// filled by the caller; outputs are what the reference checks; temporaries are partials.
struct Sequence {
  std::string name;
  std::vector<Step> steps;
  std::vector<std::pair<std::string, size_t>> inputs, outputs, temporaries;
  // Bytes the sequence must move at least (every input read once, every output written once):
  // the roofline's denominator.
  double bytes() const {
    double b = 0;
    for (const auto& [_, n] : inputs) b += 4.0 * n;
    for (const auto& [_, n] : outputs) b += 4.0 * n;
    return b;
  }
};

// The paper's scalars (any will do; none is 0 or 1, so nothing is folded away).
inline constexpr float kAlpha = 0.75f, kBeta = -1.25f;

// The eleven names, in the paper's Table 1 order.
inline const std::vector<std::string>& sequenceNames() {
  static const std::vector<std::string> names = {"AXPYDOT", "ATAX",  "BiCGK",  "SGEMV",
                                                 "SGEMVT",  "SSCAL", "GEMVER", "GESUMMV",
                                                 "MADD",    "VADD",  "WAXPBY"};
  return names;
}
inline bool isVectorSequence(const std::string& name) {
  return name == "AXPYDOT" || name == "SSCAL" || name == "VADD" || name == "WAXPBY";
}
// The sequences the paper tags F (improvable by fusion), whose plan Shape::fuse chooses.
inline bool isFusible(const std::string& name) {
  return name == "AXPYDOT" || name == "BiCGK" || name == "GEMVER" || name == "GESUMMV" ||
         name == "VADD" || name == "WAXPBY";
}
// The fields of Shape that sequence(name, .., shape) reads ("fuse", "threads", "rowUnroll",
// "band", "bicgkBand", "perLane", "vectorItems"): the others do not change its plan, so a sweep
// over them would time one plan several times (tests/sim/test_blas.cpp checks this list
// against the generated kernels).
inline std::vector<std::string> shapeFields(const std::string& name, bool fuse) {
  std::vector<std::string> f = {"threads"};
  if (isFusible(name)) f.push_back("fuse");
  const bool split = !fuse && isFusible(name);
  if (name == "SGEMV" || name == "GESUMMV" || name == "ATAX" || name == "SGEMVT" ||
      name == "GEMVER" || (name == "BiCGK" && split)) {
    f.push_back("rowUnroll");
  }
  if (name == "ATAX" || name == "SGEMVT" || name == "GEMVER" || (name == "BiCGK" && split)) {
    f.push_back("band");
  }
  if (name == "BiCGK" && !split) {
    f.push_back("bicgkBand");
    f.push_back("perLane");
  }
  if (name == "AXPYDOT" || name == "SSCAL" || (name == "WAXPBY" && split)) {
    f.push_back("vectorItems");
  }
  return f;
}

// The plan of sequence `name` for problem `pr` (its n for vector sequences, its rows, cols and
// pitch for matrix ones). An Error for an unknown name or an empty problem.
inline Sequence sequence(const std::string& name, const Problem& pr, const Shape& shape = {}) {
  detail::checkShape(shape);
  Sequence q{name, {}, {}, {}, {}};
  const bool vector = isVectorSequence(name);
  if (vector ? pr.n == 0 : (pr.rows == 0 || pr.cols == 0 || pr.pitch < pr.cols)) {
    throw Error("blas::sequence(" + name +
                "): needs a non-empty problem (n > 0 for vectors; rows, cols > 0 and pitch >= "
                "cols for matrices)");
  }
  const size_t n = pr.n, m = pr.rows, c = pr.cols, mat = pr.matrixElements();
  const auto matrix = [&](const std::string& b) {
    return std::vector<Arg>{buffer(b), word(pr.rows), word(pr.cols), word(pr.pitch)};
  };
  const auto dense = [&](const std::string& b) {  // a rows x cols result, pitch cols
    return std::vector<Arg>{buffer(b), word(pr.rows), word(pr.cols), word(pr.cols)};
  };
  const auto join = [](std::vector<std::vector<Arg>> parts) {
    std::vector<Arg> all;
    for (auto& p : parts) all.insert(all.end(), p.begin(), p.end());
    return all;
  };
  const uint32_t bandCount = bands(pr.rows, shape.band);
  const bool split = !shape.fuse && isFusible(name);  // one kernel per BLAS call
  if (name == "AXPYDOT") {                            // z = w - alpha v; r = z . u
    const uint32_t blocks = axpydotBlocks(n, shape);
    q.inputs = {{"w", n}, {"v", n}, {"u", n}};
    q.outputs = {{"z", n}, {"r", 1}};
    q.temporaries = {{"partials", blocks}};
    if (split) {
      q.steps = {
          {waxpby(shape), {real(1.0f), buffer("w"), real(-kAlpha), buffer("v"), buffer("z")}},
          {dotPartials(shape), {buffer("z"), buffer("u"), buffer("partials")}}};
    } else {
      q.steps = {
          {axpydot(shape),
           {real(kAlpha), buffer("w"), buffer("v"), buffer("u"), buffer("z"), buffer("partials")}}};
    }
    q.steps.push_back({sumAll(shape), {buffer("partials"), buffer("r")}});
  } else if (name == "SSCAL") {
    q.inputs = {{"x", n}};
    q.outputs = {{"y", n}};
    q.steps = {{sscal(shape), {real(kAlpha), buffer("x"), buffer("y")}}};
  } else if (name == "WAXPBY") {
    q.inputs = {{"x", n}, {"y", n}};
    q.outputs = {{"w", n}};
    if (split) {  // t = alpha x; w = t + beta y
      q.temporaries = {{"t", n}};
      q.steps = {{sscal(shape), {real(kAlpha), buffer("x"), buffer("t")}},
                 {waxpby(shape), {real(1.0f), buffer("t"), real(kBeta), buffer("y"), buffer("w")}}};
    } else {
      q.steps = {
          {waxpby(shape), {real(kAlpha), buffer("x"), real(kBeta), buffer("y"), buffer("w")}}};
    }
  } else if (name == "VADD") {
    q.inputs = {{"w", n}, {"y", n}, {"z", n}};
    q.outputs = {{"x", n}};
    if (split) {  // t = w + y; x = t + z
      q.temporaries = {{"t", n}};
      q.steps = {{waxpby(shape), {real(1.0f), buffer("w"), real(1.0f), buffer("y"), buffer("t")}},
                 {waxpby(shape), {real(1.0f), buffer("t"), real(1.0f), buffer("z"), buffer("x")}}};
    } else {
      q.steps = {{vadd(shape), {buffer("w"), buffer("y"), buffer("z"), buffer("x")}}};
    }
  } else if (name == "MADD") {
    q.inputs = {{"A", mat}, {"B", mat}};
    q.outputs = {{"C", m * c}};
    q.steps = {{madd(shape), join({matrix("A"), matrix("B"), {buffer("C")}})}};
  } else if (name == "SGEMV") {
    q.inputs = {{"A", mat}, {"x", c}, {"y", m}};
    q.outputs = {{"z", m}};
    q.steps = {{sgemv(shape), join({{real(kAlpha)},
                                    matrix("A"),
                                    {buffer("x"), real(kBeta), buffer("y"), buffer("z")}})}};
  } else if (name == "GESUMMV") {  // y = alpha A x + beta B x
    q.inputs = {{"A", mat}, {"B", mat}, {"x", c}};
    q.outputs = {{"y", m}};
    if (split) {  // t = alpha A x; y = beta B x + 1 t
      q.temporaries = {{"t", m}};
      q.steps = {
          {scaledGemv(shape), join({{real(kAlpha)}, matrix("A"), {buffer("x"), buffer("t")}})},
          {sgemv(shape),
           join(
               {{real(kBeta)}, matrix("B"), {buffer("x"), real(1.0f), buffer("t"), buffer("y")}})}};
    } else {
      q.steps = {{gesummv(shape), join({{real(kAlpha)},
                                        matrix("A"),
                                        {real(kBeta)},
                                        matrix("B"),
                                        {buffer("x"), buffer("y")}})}};
    }
  } else if (name == "ATAX") {  // t = A x; y = A^T t
    q.inputs = {{"A", mat}, {"x", c}};
    q.outputs = {{"y", c}};
    q.temporaries = {{"t", m}, {"partials", size_t{bandCount} * c}};
    q.steps = {
        {scaledGemv(shape), join({{real(1.0f)}, matrix("A"), {buffer("x"), buffer("t")}})},
        {columnSums(shape), join({matrix("A"), {buffer("t"), buffer("partials")}})},
        {sumParts(shape), {word(bandCount), word(pr.cols), buffer("partials"), buffer("y")}}};
  } else if (name == "SGEMVT") {  // x = beta A^T y + z; w = alpha A x
    q.inputs = {{"A", mat}, {"y", m}, {"z", c}};
    q.outputs = {{"x", c}, {"w", m}};
    q.temporaries = {{"partials", size_t{bandCount} * c}};
    q.steps = {
        {columnSums(shape), join({matrix("A"), {buffer("y"), buffer("partials")}})},
        {combine(shape),
         {real(kBeta), word(bandCount), buffer("partials"), real(1.0f), buffer("z"), buffer("x")}},
        {scaledGemv(shape), join({{real(kAlpha)}, matrix("A"), {buffer("x"), buffer("w")}})}};
  } else if (name == "GEMVER") {  // B = A + u1 v1^T + u2 v2^T; x = beta B^T y + z; w = alpha B x
    q.inputs = {{"A", mat}, {"u1", m}, {"v1", c}, {"u2", m}, {"v2", c}, {"y", m}, {"z", c}};
    q.outputs = {{"B", m * c}, {"x", c}, {"w", m}};
    q.temporaries = {{"partials", size_t{bandCount} * c}};
    if (split) {  // B written, then read back for B^T y
      q.steps = {{rank2Update(shape),
                  join({matrix("A"),
                        {buffer("u1"), buffer("v1"), buffer("u2"), buffer("v2"), buffer("B")}})},
                 {columnSums(shape), join({dense("B"), {buffer("y"), buffer("partials")}})}};
    } else {
      q.steps = {
          {gemverUpdate(shape), join({matrix("A"),
                                      {buffer("u1"), buffer("v1"), buffer("u2"), buffer("v2"),
                                       buffer("y"), buffer("B"), buffer("partials")}})}};
    }
    q.steps.push_back(
        {combine(shape),
         {real(kBeta), word(bandCount), buffer("partials"), real(1.0f), buffer("z"), buffer("x")}});
    q.steps.push_back(
        {scaledGemv(shape), join({{real(kAlpha)}, dense("B"), {buffer("x"), buffer("w")}})});
  } else if (name == "BiCGK") {  // q = A p; s = A^T r
    q.inputs = {{"A", mat}, {"p", c}, {"r", m}};
    q.outputs = {{"q", m}, {"s", c}};
    if (split) {  // A read twice: a row pass for q, a column pass for s
      q.temporaries = {{"partials", size_t{bandCount} * c}};
      q.steps = {
          {scaledGemv(shape), join({{real(1.0f)}, matrix("A"), {buffer("p"), buffer("q")}})},
          {columnSums(shape), join({matrix("A"), {buffer("r"), buffer("partials")}})},
          {sumParts(shape), {word(bandCount), word(pr.cols), buffer("partials"), buffer("s")}}};
    } else {
      const uint32_t tiles = bicgkTiles(pr.cols, shape), bb = bands(pr.rows, shape.bicgkBand);
      q.temporaries = {{"qPartials", size_t{tiles} * m}, {"sPartials", size_t{bb} * c}};
      q.steps = {{bicgk(shape),
                  join({matrix("A"),
                        {buffer("p"), buffer("r"), buffer("qPartials"), buffer("sPartials")}})},
                 {sumParts(shape), {word(tiles), word(pr.rows), buffer("qPartials"), buffer("q")}},
                 {sumParts(shape), {word(bb), word(pr.cols), buffer("sPartials"), buffer("s")}}};
    }
  } else {
    throw Error("blas::sequence: no sequence named '" + name +
                "' (AXPYDOT, ATAX, BiCGK, SGEMV, SGEMVT, SSCAL, GEMVER, GESUMMV, MADD, VADD, "
                "WAXPBY)");
  }
  return q;
}

// ---------------------------------------------------------------- tuned shapes
// The shape obsidian-tune chose for each sequence on the H100 (tuning/spaces/blas.json, 666
// points, every one checked; the tables are in tuning/RESULTS.md, "Fused BLAS: the fusion
// choices"). Shape{}'s defaults are the simulator's and the tests'; the benchmark runs these.
//  - Row dots and column passes (SGEMV, ATAX, SGEMVT, GEMVER): rowUnroll 8 and 512 threads were
//    the best or within 1% of it at every size (SGEMV 4096^2: 29.8 us against 32.4 us at 4 and
//    256; 16 was within 2% at best, and up to 30% slower). The column passes' band: the largest of
//    256, 128 and 64 that keeps kFillWarps warps busy (4096^2: 128; 6007 x 5003 and 8192^2: 256):
//    GEMVER at 6007 x 5003 148.9 us against 164.5 at 128, ATAX at 8192^2 190.7 against 195.9,
//    but 64.2 against 57.0 at 4096^2, where 256 leaves 2048 warps. GESUMMV reads two rows at once:
//    8 and 128 threads (4096^2: 52.1 us against 57.7 at 4 and 256, and 61.1 at 8 and 512; 8192^2:
//    190.3 against 194.1), though 4 and 256 is 5% faster at 6007 x 5003.
//  - BiCGK: perLane 4 and 128 threads, and the band that keeps kFillWarps warps (a warp per
//    band and tile) busy: 32 rows at 4096^2 (46.3 us against 57.8 at 64),
//    64 at 6007 x 5003 (74.5 against 82.9 at 32 and 100.5 at 128), 128 at 8192^2 (128.0 against
//    143.2 at 64). Fewer warps leave DRAM idle (Nsight Compute at 4096^2, band 64: 24% of the
//    warp slots in use, 45% of DRAM bandwidth).
//  - AXPYDOT: 8 elements a thread and 512 threads (100.4 us at 2^24 against 108.3 at 4 and 256):
//    fewer partials for sumAll.
inline constexpr uint64_t kFillWarps = 24 * 132;  // about 24 warps on each of the H100's SMs

inline Shape tunedShape(const std::string& name, const Problem& pr) {
  Shape s;
  if (name == "SGEMV" || name == "ATAX" || name == "SGEMVT" || name == "GEMVER") {
    s.threads = 512;
    s.rowUnroll = 8;
    const uint64_t tiles = (uint64_t{pr.cols} + s.threads - 1) / s.threads;
    for (s.band = 256; s.band > 64; s.band /= 2) {
      if (uint64_t{bands(pr.rows, s.band)} * tiles * (s.threads / 32) >= kFillWarps) break;
    }
  } else if (name == "GESUMMV") {
    s.threads = 128;
    s.rowUnroll = 8;
  } else if (name == "BiCGK") {
    s.threads = 128;
    s.perLane = 4;
    const uint64_t tiles = (uint64_t{pr.cols} + 32 * s.perLane - 1) / (32 * s.perLane);
    for (s.bicgkBand = 128; s.bicgkBand > 16; s.bicgkBand /= 2) {
      if (uint64_t{bands(pr.rows, s.bicgkBand)} * tiles >= kFillWarps) break;
    }
  } else if (name == "AXPYDOT") {
    s.threads = 512;
    s.vectorItems = 8;
  }
  return s;
}

// ---------------------------------------------------------------- running and checking
using Buffers = std::map<std::string, std::vector<float>>;

// Random inputs in [-1, 1) for every input of q (seeded), zeroed outputs and temporaries.
inline Buffers randomInputs(const Sequence& q, uint32_t seed) {
  Buffers b;
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 7;
  for (const auto& [name, n] : q.inputs) {
    std::vector<float> v(n);
    for (float& x : v) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      x = static_cast<float>(static_cast<double>(state >> 40) / double(1 << 23) - 1.0);
    }
    b[name] = std::move(v);
  }
  for (const auto& [name, n] : q.outputs) b[name].assign(n, 0.0f);
  for (const auto& [name, n] : q.temporaries) b[name].assign(n, 0.0f);
  return b;
}

// Runs every step of q on the simulator over `b` (which must hold every buffer of q); what each
// launch counted, in order.
inline std::vector<SimStats> simulate(const Sequence& q, Buffers& b,
                                      const SimOptions& options = {}) {
  std::vector<SimStats> stats;
  for (const Step& s : q.steps) {
    std::vector<KernelArg> args;
    for (const Arg& a : s.args) {
      if (a.kind == Arg::Kind::Buffer) {
        args.emplace_back(b.at(a.buffer));
      } else if (a.kind == Arg::Kind::Float) {
        args.emplace_back(a.real);
      } else {
        args.emplace_back(a.word);
      }
    }
    stats.push_back(obsidian::simulate(s.kernel, args, options));
  }
  return stats;
}

// The sequence's outputs in double precision from b's inputs, each with the sum of the
// magnitudes of its terms (its tolerance's scale). GEMVER's and ATAX's second halves start
// from the reference's own B, x and t.
struct Expected {
  std::vector<double> value, scale;
};
inline std::map<std::string, Expected> reference(const std::string& name, const Problem& pr,
                                                 const Buffers& b) {
  std::map<std::string, Expected> out;
  const size_t m = pr.rows, c = pr.cols, p = pr.pitch, n = pr.n;
  // (each input looked up once: a lookup per element made a 8192^2 reference take seconds)
  const auto in = [&](const char* k) -> const float* { return b.at(k).data(); };
  const auto elementwise = [&](const char* o, size_t len, auto f) {
    Expected e{std::vector<double>(len), std::vector<double>(len)};
    for (size_t i = 0; i < len; ++i) std::tie(e.value[i], e.scale[i]) = f(i);
    out[o] = std::move(e);
  };
  // mat(r, j) = f(r, j): y = alpha mat v (+ beta add), or alpha mat^T v (+ beta add).
  const auto matVec = [&](const char* o, bool transposed, auto f, const std::vector<double>& v,
                          double alpha, const std::vector<double>* add, double beta) {
    const size_t len = transposed ? c : m;
    Expected e{std::vector<double>(len, 0.0), std::vector<double>(len, 0.0)};
    for (size_t r = 0; r < m; ++r) {
      for (size_t j = 0; j < c; ++j) {
        const double t = f(r, j) * v[transposed ? r : j];
        e.value[transposed ? j : r] += t;
        e.scale[transposed ? j : r] += std::fabs(t);
      }
    }
    for (size_t i = 0; i < len; ++i) {
      e.value[i] = alpha * e.value[i] + (add ? beta * (*add)[i] : 0.0);
      e.scale[i] = std::fabs(alpha) * e.scale[i] + (add ? std::fabs(beta * (*add)[i]) : 0.0);
    }
    out[o] = e;
    return e.value;
  };
  const auto wide = [&](const char* k) {
    const std::vector<float>& v = b.at(k);
    return std::vector<double>(v.begin(), v.end());
  };
  const auto at = [&](const char* k) {
    return [a = in(k), p](size_t r, size_t j) { return double(a[r * p + j]); };
  };
  if (name == "AXPYDOT") {
    const float *w = in("w"), *v = in("v"), *u = in("u");
    // (z's rounding is relative to its terms, not to z: w - alpha v may cancel.)
    const auto zScale = [&](size_t i) {
      return std::fabs(w[i]) + std::fabs(double(kAlpha) * v[i]);
    };
    elementwise("z", n, [&](size_t i) {
      return std::pair{w[i] - double(kAlpha) * v[i], zScale(i)};
    });
    double r = 0, s = 0;
    for (size_t i = 0; i < n; ++i) {
      r += (w[i] - double(kAlpha) * v[i]) * u[i];
      s += zScale(i) * std::fabs(u[i]);
    }
    out["r"] = {{r}, {s}};
  } else if (name == "SSCAL") {
    const float* x = in("x");
    elementwise("y", n, [&](size_t i) {
      return std::pair{kAlpha * double(x[i]), std::fabs(x[i])};
    });
  } else if (name == "WAXPBY") {
    const float *x = in("x"), *y = in("y");
    elementwise("w", n, [&](size_t i) {
      const double a = kAlpha * double(x[i]), bb = kBeta * double(y[i]);
      return std::pair{a + bb, std::fabs(a) + std::fabs(bb)};
    });
  } else if (name == "VADD") {
    const float *w = in("w"), *y = in("y"), *z = in("z");
    elementwise("x", n, [&](size_t i) {
      const double a = w[i], bb = y[i], cc = z[i];
      return std::pair{a + bb + cc, std::fabs(a) + std::fabs(bb) + std::fabs(cc)};
    });
  } else if (name == "MADD") {
    const float *A = in("A"), *B = in("B");
    elementwise("C", m * c, [&](size_t i) {
      const double a = A[i / c * p + i % c], bb = B[i / c * p + i % c];
      return std::pair{a + bb, std::fabs(a) + std::fabs(bb)};
    });
  } else if (name == "SGEMV") {
    const auto y = wide("y");
    matVec("z", false, at("A"), wide("x"), kAlpha, &y, kBeta);
  } else if (name == "GESUMMV") {
    const float *A = in("A"), *B = in("B");
    matVec(
        "y", false,
        [&](size_t r, size_t j) {
          return kAlpha * double(A[r * p + j]) + kBeta * double(B[r * p + j]);
        },
        wide("x"), 1.0, nullptr, 0);
  } else if (name == "ATAX") {
    const auto t = matVec("t", false, at("A"), wide("x"), 1.0, nullptr, 0);
    matVec("y", true, at("A"), t, 1.0, nullptr, 0);
    out.erase("t");
  } else if (name == "SGEMVT") {
    const auto z = wide("z");
    const auto x = matVec("x", true, at("A"), wide("y"), kBeta, &z, 1.0);
    matVec("w", false, at("A"), x, kAlpha, nullptr, 0);
  } else if (name == "GEMVER") {
    const float *A = in("A"), *u1 = in("u1"), *v1 = in("v1"), *u2 = in("u2"), *v2 = in("v2");
    const auto bm = [&](size_t r, size_t j) {
      return double(A[r * p + j]) + double(u1[r]) * v1[j] + double(u2[r]) * v2[j];
    };
    elementwise("B", m * c, [&](size_t i) {
      const size_t r = i / c, j = i % c;
      return std::pair{bm(r, j), std::fabs(A[r * p + j]) + std::fabs(double(u1[r]) * v1[j]) +
                                     std::fabs(double(u2[r]) * v2[j])};
    });
    const auto z = wide("z");
    const auto x = matVec("x", true, bm, wide("y"), kBeta, &z, 1.0);
    matVec("w", false, bm, x, kAlpha, nullptr, 0);
  } else if (name == "BiCGK") {
    matVec("q", false, at("A"), wide("p"), 1.0, nullptr, 0);
    matVec("s", true, at("A"), wide("r"), 1.0, nullptr, 0);
  } else {
    throw Error("blas::reference: no sequence named '" + name + "'");
  }
  return out;
}

// How far an output element may be from its reference: a few float roundings of its terms'
// magnitudes (relative 2e-5 of the scale, for sums of up to 2^24 terms folded in trees and
// 32-lane strides), and a floor for a scale of 0. (The device's check, tuning/blas_reference,
// computes the same expression.)
inline constexpr double kRelativeTolerance = 2e-5, kToleranceFloor = 1e-30;
inline double tolerance(double scale) { return kRelativeTolerance * scale + kToleranceFloor; }

// The first output element that differs from the reference by more than its tolerance, as
// "z[17]: got 1.5, want 1.25"; empty when all agree.
inline std::string mismatch(const std::map<std::string, Expected>& want, const Buffers& got) {
  for (const auto& [name, e] : want) {
    const std::vector<float>& g = got.at(name);
    for (size_t i = 0; i < e.value.size(); ++i) {
      if (!(std::fabs(double(g[i]) - e.value[i]) <= tolerance(e.scale[i]))) {
        return name + "[" + std::to_string(i) + "]: got " + std::to_string(g[i]) + ", want " +
               std::to_string(e.value[i]);
      }
    }
  }
  return {};
}

// The sequence on the GPU: a device buffer per buffer of q, inputs uploaded from `b`.
using DeviceBuffers = std::map<std::string, gpu::DeviceBuffer<float>>;
inline DeviceBuffers upload(const Sequence& q, const Buffers& b) {
  DeviceBuffers d;
  for (const auto& list : {q.inputs, q.outputs, q.temporaries}) {
    for (const auto& [name, n] : list) d.emplace(name, gpu::DeviceBuffer<float>(b.at(name)));
  }
  return d;
}
// Enqueues every step of q (asynchronous unless options says otherwise), buffer(name) giving
// the device buffer of each name (a tuning sweep keeps its inputs apart from the outputs).
template <class Lookup>
void launchWith(const Sequence& q, Lookup buffer, const gpu::LaunchOptions& options) {
  for (const Step& s : q.steps) {
    std::vector<KernelArg> args;
    for (const Arg& a : s.args) {
      if (a.kind == Arg::Kind::Buffer) {
        const gpu::DeviceBuffer<float>& buf = buffer(a.buffer);
        args.push_back(KernelArg::deviceArray(ScalarType::F32, buf.address(), buf.size(), true));
      } else if (a.kind == Arg::Kind::Float) {
        args.emplace_back(a.real);
      } else {
        args.emplace_back(a.word);
      }
    }
    gpu::launch(s.kernel, args, options);
  }
}
inline void launch(const Sequence& q, const DeviceBuffers& d, const gpu::LaunchOptions& options) {
  launchWith(
      q, [&](const std::string& name) -> const gpu::DeviceBuffer<float>& { return d.at(name); },
      options);
}
// The outputs of q back into b.
inline void download(const Sequence& q, const DeviceBuffers& d, Buffers& b) {
  for (const auto& [name, n] : q.outputs) d.at(name).download(std::span<float>(b.at(name)));
}

// Bytes q's kernels move: every buffer argument of every step read or written once (the
// matrix read twice by ATAX and SGEMVT, partials and all). The roofline's numerator.
inline double movedBytes(const Sequence& q) {
  std::map<std::string, size_t> sizes;
  for (const auto& list : {q.inputs, q.outputs, q.temporaries}) {
    for (const auto& [name, n] : list) sizes[name] = n;
  }
  double bytes = 0;
  for (const Step& s : q.steps) {
    for (const Arg& a : s.args) {
      if (a.kind == Arg::Kind::Buffer) bytes += 4.0 * sizes.at(a.buffer);
    }
  }
  return bytes;
}

}  // namespace blas
