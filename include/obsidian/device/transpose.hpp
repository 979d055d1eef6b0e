/// Device transpose of a row-major rows x cols matrix into its cols x rows transpose, rows and
/// cols given at run time, any shape. Two ways in:
///  - transposeTile: a block's building block: a tile of a matrix loaded into shared memory (one
///    padding column, so that reading it by columns hits 32 different banks), returned as the
///    Push<Block> of its transpose;
///  - transpose: the whole matrix, on the GPU (device buffers, optionally on a stream) or on the
///    simulator (host arrays), its kernel captured once per (element type, policy).
/// Each block transposes one tile: its threads read the tile's rows (consecutive threads,
/// consecutive columns: coalesced), and write the transpose's rows (consecutive threads,
/// consecutive rows of the input: coalesced again). Tiles at the right and bottom edges are
/// partial: reads and writes outside the matrix are skipped.
/// @file
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "obsidian/capture.hpp"
#include "obsidian/device/algorithm.hpp"
#include "obsidian/device/dispatch.hpp"
#include "obsidian/device/policy.hpp"
#include "obsidian/library.hpp"
#include "obsidian/runtime.hpp"
#include "obsidian/sim.hpp"

namespace obsidian {

// ------------------------------------------------------------------ policy
/// How transpose's kernel cuts the matrix: one tile per block.
struct TransposePolicy {
  uint32_t threads = 256;  ///< threads per block (at most tile * tile, dividing it)
  uint32_t tile = 32;      ///< the tile's side: a power of two from 8 to 128
  /// Field by field.
  friend bool operator==(const TransposePolicy&, const TransposePolicy&) = default;
};

namespace device {

/// transpose's descriptor (device/algorithm.hpp). Matrices that fill the device take the Large
/// row; those whose large tiles would give fewer than fillTilesPerSm per SM take the Small row
/// (a 64 x 64 tile leaves SMs idle on a 1000 x 777 matrix: 208 tiles for 132 SMs).
struct Transpose {
  using Policy = TransposePolicy;                   ///< the policy type
  static constexpr const char* name = "transpose";  ///< the ready call's name
  /// Where it is declared.
  static constexpr const char* header = "obsidian/device/transpose.hpp";
  /// What it computes.
  static constexpr const char* summary = "the transpose of a row-major matrix, tile by tile";
  /// The policy's fields as data.
  static constexpr auto fields() {
    return hana::make_tuple(
        field("threads", &Policy::threads, 32, 1024,
              "threads per block (whole warps dividing tile x tile)"),
        field("tile", &Policy::tile, 8, 128, "the tile's side (a power of two)"));
  }
  /// Large tiles per SM below which a matrix is Small: with the sm 90 rows, 1024 x 1024 (1.9
  /// 64-tiles per SM) takes the 32-tile and 2048 x 2048 (7.8) the 64-tile, which tie there (see
  /// the sm 90 rows' measurements).
  static constexpr uint32_t fillTilesPerSm = 4;
  /// The policy table: the fallback, then Large and Small rows per measured architecture.
  static constexpr Tuned<Policy> table[] = {
      {0,
       {},
       {256, 32},
       "(fallback)",
       "not measured: the classic 32 x 32 tile for GPUs without a measured row"},
      {90,
       {0, OperatorClass::Any, Values::Any, Scale::Large},
       {512, 64},
       "obsidian-tune tuning/spaces/transpose.json",
       "H100, 2026-11-23, u32, 26 points: 512 threads x 64-tile fastest at 8192 x 8192 (188.4 "
       "us; 32-tile 201.1) and within 1% at 8191 x 4097 (122.0 us; best 121.0)"},
      {90,
       {0, OperatorClass::Any, Values::Any, Scale::Small},
       {256, 32},
       "obsidian-tune tuning/spaces/transpose.json",
       "H100, 2026-11-23, u32: the 32-tile, 256 threads, where 64-tiles give fewer than 4 per "
       "SM: 1000 x 777 (1.6 per SM) 6.8 us (64-tile 7.1), 1024 x 1024 (1.9) 7.6 (7.9); 2048 x "
       "2048 (7.8) ties at 16.4 (tuning/RESULTS.md, 'Device layer policies')"},
  };
};

}  // namespace device

namespace detail {
// A 128 x 129 tile of 8-byte elements (132 KB) fits in a block: the tile's side is the limit.
void checkTransposePolicy(const TransposePolicy& p);
// rows * cols must be the input's length (and fit in 32 bits); the output's length too.
void checkTransposeShape(uint64_t rows, uint64_t cols, size_t in, size_t out);
}  // namespace detail

// ------------------------------------------------------------------ the building block
/// The tile * tile tile whose element (r, c) is read(r, c), for r < validRows and c < validCols
/// (its part inside the matrix), loaded into shared memory by the threads of p (a barrier
/// follows); returned as the Push<Block> of its transpose: element (c, r) at index c * tile + r,
/// written only for r < validRows and c < validCols. Consecutive threads read consecutive c and
/// write consecutive r, so that both sides are coalesced when read(r, c) is row-major.
/// Every thread of the block takes tile * tile / threads elements (Error if that does not
/// divide); all its loads are issued before it stores any.
template <KernelScalar X, class Read>
SPush<Block, Exp<X>> transposeTile(const Program<Block>& p, uint32_t tile, const EWord32& validRows,
                                   const EWord32& validCols, Read read) {
  const uint32_t threads = p.context().threadsPerBlock();
  detail::checkTransposePolicy({threads, tile});
  const uint32_t each = tile * tile / threads;
  const uint32_t pitch = tile + 1;  // the padding column: column reads hit distinct banks
  const SMutable<X> shared = newShared<X>(p, tile * pitch);
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    std::vector<Exp<X>> held;
    std::vector<EBool> inside;
    for (uint32_t k = 0; k < each; ++k) {
      const EWord32 e = tid + k * threads;
      const EWord32 r = e / tile, c = e % tile;
      inside.push_back(r < validRows && c < validCols);
      held.push_back(t.declare(ifThenElse(inside.back(), read(r, c), Exp<X>(X{}))));
    }
    for (uint32_t k = 0; k < each; ++k) {
      const EWord32 e = tid + k * threads;
      t.cond(inside[k], [&](const Program<Thread>& u) {
        write(u, shared, (e / tile) * pitch + e % tile, held[k]);
      });
    }
  });
  p.sync();
  return SPush<Block, Exp<X>>(tile * tile, [=](const Program<Block>& q, const Writer<Exp<X>>& w) {
    q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
      for (uint32_t k = 0; k < each; ++k) {
        const EWord32 j = tid + k * threads;
        const EWord32 c = j / tile, r = j % tile;  // element (c, r) of the transpose
        t.cond(r < validRows && c < validCols,
               [&](const Program<Thread>& u) { w(u, shared[r * pitch + c], j); });
      }
    });
  });
}

// ------------------------------------------------------------------ the device-wide kernel
namespace detail {
// Elements of X in a 32-byte sector of memory, the unit in which DRAM is written.
template <KernelScalar X>
constexpr uint32_t sectorElements() {
  return 32 / sizeof(X) > 0 ? static_cast<uint32_t>(32 / sizeof(X)) : 1;
}

// One tile of the transpose with sector-aligned writes, for row counts that are not a multiple
// of a sector: then the rows of the output start anywhere in a sector, a plain tile's row
// segments begin and end inside sectors, and each partly written sector costs DRAM a read to
// merge (measured on the H100: 8191 x 4097 at two thirds of the copy's bandwidth). Here each
// output row's segment is shifted back to the sector boundary before it (by delta < A =
// sectorElements), so a block writes whole sectors; the tile loads A more input rows above it
// (a halo, mostly from L2: the tile above reads them too) to have those elements. Block (tr,
// tc) writes output row oc's elements tr * T - delta(oc) .. + T - 1, which tile the row exactly
// as tr goes; one more tile row covers the shift.
template <KernelScalar X>
void alignedTransposeTile(const Program<Block>& p, uint32_t tile, const DPull<Exp<X>>& in,
                          const EWord32& rows, const EWord32& cols, const EWord32& tr,
                          const EWord32& tc, const Writer<Exp<X>>& w) {
  constexpr uint32_t a = sectorElements<X>();
  const uint32_t threads = p.context().threadsPerBlock();
  const uint32_t pitch = tile + 1, loaded = (tile + a) * tile;
  const uint32_t each = (loaded + threads - 1) / threads;
  const SMutable<X> shared = newShared<X>(p, (tile + a) * pitch);
  const EWord32 top = tr * tile;  // the tile's first row; the halo is the a rows above it
  const EWord32 c0 = tc * tile;
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    std::vector<Exp<X>> held;
    std::vector<EBool> inside;
    for (uint32_t k = 0; k < each; ++k) {
      const EWord32 e = tid + k * threads;
      const EWord32 r = e / tile, c = e % tile;  // input row top - a + r
      inside.push_back(e < loaded && top + r >= a && top + r - a < rows && c0 + c < cols);
      held.push_back(
          t.declare(ifThenElse(inside.back(), in[(top + r - a) * cols + c0 + c], Exp<X>(X{}))));
    }
    for (uint32_t k = 0; k < each; ++k) {
      const EWord32 e = tid + k * threads;
      t.cond(inside[k], [&](const Program<Thread>& u) {
        write(u, shared, (e / tile) * pitch + e % tile, held[k]);
      });
    }
  });
  p.sync();
  const uint32_t stores = tile * tile / threads;
  p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
    for (uint32_t k = 0; k < stores; ++k) {
      const EWord32 j = tid + k * threads;
      const EWord32 c = j / tile, i = j % tile;  // output row c0 + c, its i-th element here
      const EWord32 oc = c0 + c;
      const EWord32 delta = (oc * rows) % a;
      // Input row top - delta + i, at shared row a - delta + i.
      t.cond(oc < cols && top + i >= delta && top + i - delta < rows,
             [&](const Program<Thread>& u) {
               w(u, shared[(a - delta + i) * pitch + c], oc * rows + top + i - delta);
             });
    }
  });
}
}  // namespace detail

/// The transpose kernel for elements of type X with `policy`. Its parameters, in order (launch
/// arguments in this order): the input (rows * cols elements, row-major), rows (u32), cols
/// (u32), then the output (as many elements). With alignedWrites, each block writes whole
/// 32-byte sectors of the output (detail::alignedTransposeTile): faster when rows is not a
/// multiple of 32 / sizeof(X) in principle, measured slower on the H100 (transposeAlignsWrites);
/// transpose does not use them. transpose passes the arguments; call this to read the kernel's
/// code and report.
template <KernelScalar X>
Kernel transposeKernel(const TransposePolicy& policy, bool alignedWrites = false) {
  detail::checkTransposePolicy(policy);
  const std::string name = std::string("transpose_") + std::string(cudaTypeName(scalarTypeOf<X>)) +
                           (alignedWrites ? "_aligned" : "");
  const std::string key = name + "|" + device::describePolicy<device::Transpose>(policy);
  return device::detail::memoKernel(key, [&] {
    return capture(
        name, policy.threads,
        [policy, alignedWrites](DPull<Exp<X>> in, EWord32 rows, EWord32 cols) {
          detail::requireLength(
              cast<uint64_t>(rows) * cast<uint64_t>(cols) == cast<uint64_t>(len(in)),
              "transpose: the input holds rows x cols elements");
          const uint32_t tile = policy.tile;
          return DPush<Grid, Exp<X>>(len(in), [=](const Program<Grid>& g, const Writer<Exp<X>>& w) {
            // Aligned: tiles for rows + (sector - 1), the last rows that shifted segments reach
            // (written so as not to wrap past 2^32 - 1).
            const uint32_t shift = alignedWrites ? detail::sectorElements<X>() - 1 : 0;
            const EWord32 tileRows = rows / tile + (rows % tile + (shift + tile - 1)) / tile;
            const EWord32 tileCols = cols / tile + cast<uint32_t>(cols % tile != 0u);
            g.distrPar(tileRows * tileCols, [&](const Program<Block>& p, const EWord32& bid) {
              const EWord32 tr = bid / tileCols, tc = bid % tileCols;
              if (alignedWrites) {
                detail::alignedTransposeTile<X>(p, tile, in, rows, cols, tr, tc, w);
                return;
              }
              const EWord32 r0 = tr * tile, c0 = tc * tile;
              const auto tilePush = transposeTile<X>(
                  p, tile, min(rows - r0, EWord32(tile)), min(cols - c0, EWord32(tile)),
                  [&](const EWord32& r, const EWord32& c) { return in[(r0 + r) * cols + c0 + c]; });
              tilePush(p, [&](const Program<Thread>& t, const Exp<X>& v, const EWord32& j) {
                w(t, v, (c0 + j / tile) * rows + r0 + j % tile);
              });
            });
          });
        });
  });
}

/// Whether a transpose of this many rows would need sector-aligned writes to write whole sectors
/// (rows not a multiple of a sector). transpose does not use them: on the H100 they were slower
/// (8191 x 4097 u32: 157 us against 121 us with the 64 x 64 tile, 512 threads; 168 against 147
/// with 32 x 32, 256 threads): partly written sectors were not what bounds that shape.
template <KernelScalar X>
bool transposeAlignsWrites(uint32_t rows) {
  return rows % detail::sectorElements<X>() != 0;
}

// ------------------------------------------------------------------ descriptor and ready calls
namespace device {


/// The policy for a rows x cols matrix of X on target t: the Large row unless its tiles would
/// give fewer than Transpose::fillTilesPerSm per SM, then the Small row; with the options'
/// settings.
template <KernelScalar X>
TransposePolicy transposePolicyFor(const Target& t, uint32_t rows, uint32_t cols,
                                   const Options& options = {}) {
  ProblemClass p{static_cast<uint32_t>(sizeof(X)), OperatorClass::Any, Values::Any,
                 Scale::Large};
  const uint32_t tile = tunedFor(Transpose::table, t.sm, p).policy.tile;
  const auto tiles = [](uint32_t n, uint32_t side) {
    return uint64_t{n} / side + (n % side != 0);
  };
  if (tiles(rows, tile) * tiles(cols, tile) < uint64_t{Transpose::fillTilesPerSm} * t.smCount)
    p.scale = Scale::Small;
  return policyFor<Transpose>(t, p, options);
}

namespace detail {
template <class In, class Out>
void transpose(const In& in, Out& out, uint32_t rows, uint32_t cols, const Options& options) {
  using X = ElementOf<In>;
  obsidian::detail::checkTransposeShape(rows, cols, in.size(), out.size());
  const Target t = targetOf<In>();
  const Kernel k = transposeKernel<X>(transposePolicyFor<X>(t, rows, cols, options));
  if (in.size() == 0) return;
  launchOn(t, k, {in, rows, cols, out}, options);
}
}  // namespace detail

/// transpose(in, out, rows, cols, options): out = the cols x rows transpose of the row-major
/// rows x cols matrix `in`: on the GPU for device buffers, on the simulator for host vectors.
template <KernelScalar X>
requires(!std::is_same_v<X, bool>) void transpose(const gpu::DeviceBuffer<X>& in,
                                                  gpu::DeviceBuffer<X>& out, uint32_t rows,
                                                  uint32_t cols, const Options& options = {}) {
  detail::transpose(in, out, rows, cols, options);
}
/// The same on the simulator.
template <KernelScalar X>
requires(!std::is_same_v<X, bool>) void transpose(const std::vector<X>& in, std::vector<X>& out,
                                                  uint32_t rows, uint32_t cols,
                                                  const Options& options = {}) {
  detail::transpose(in, out, rows, cols, options);
}
/// The transpose of host matrix `in`, on the simulator.
template <KernelScalar X>
requires(!std::is_same_v<X, bool>) std::vector<X> transpose(const std::vector<X>& in,
                                                            uint32_t rows, uint32_t cols,
                                                            const Options& options = {}) {
  obsidian::detail::checkTransposeShape(rows, cols, in.size(), in.size());
  std::vector<X> out(in.size());
  transpose(in, out, rows, cols, options);
  return out;
}

}  // namespace device

}  // namespace obsidian
