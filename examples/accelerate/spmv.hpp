// Accelerate's sparse-matrix vector product (seed 004, Section 6) in obsidian: y = A x with A in
// CSR (row offsets, column indices, values), rows of any length (empty ones and ones of
// thousands), beside the matrices the benchmark races cuSPARSE on (banded, uniform random,
// power-law row lengths) and a plain C++ reference.
//
// The kernel gives each row a group of `threadsPerRow` lanes of one warp (a power of two up to
// 32, "vector CSR"): the lanes stride over the row's nonzeros, each folding its products in a
// register, then the group adds its lanes' sums with xor shuffles inside the warp. Short rows
// want small groups (no idle lanes), long rows whole warps (coalesced reads): spmvThreadsPerRow
// picks the group from the mean row length and
// how near the diagonal the columns lie.
#pragma once

#include <algorithm>
#include <cmath>
#include <obsidian/obsidian.hpp>
#include <random>
#include <vector>

namespace accelerate {

using namespace obsidian;

// spmv(threadsPerRow): y[r] = sum of values[j] * x[columns[j]] over j in
// [rowOffsets[r], rowOffsets[r + 1]), for the len(rowOffsets) - 1 rows; an empty row gives 0.
// Reads are clamped rather than trusted: a row's range is cut to [0, len(values)) and a column
// at or past len(x) reads 0, so a malformed matrix gives meaningless sums but never reads out of
// bounds.
inline Kernel spmv(uint32_t threadsPerRow, uint32_t threads = 256, uint32_t unroll = 1) {
  const uint32_t w = threadsPerRow;
  if (w == 0 || w > 32 || (w & (w - 1)) != 0) {
    throw Error("spmv needs threadsPerRow a power of two of at most 32; got " + std::to_string(w));
  }
  if (threads == 0 || threads % 32 != 0 || threads > 1024) {
    throw Error("spmv needs threads a multiple of 32 of at most 1024; got " +
                std::to_string(threads));
  }
  const uint32_t rowsPerWarp = 32 / w, warps = threads / 32;
  return capture(
      "spmvCsr" + std::to_string(w) + "x" + std::to_string(unroll), threads,
      [=](DPull<EWord32> rowOffsets, DPull<EWord32> columns, DPull<EFloat> values,
          DPull<EFloat> x) {
        require(len(rowOffsets) >= 1u, "the row offsets hold rows + 1 entries (at least one)");
        require(len(columns) == len(values), "the columns and values have one length (nnz)");
        const EWord32 rows = len(rowOffsets) - 1u, nnz = len(values), cols = len(x);
        const EWord32 blocks =
            obsidian::detail::tileCount(rows, rowsPerWarp * warps);  // no wrap near 2^32
        auto grid = pConcat(mkPull(blocks, [=](const EWord32& b) {
          return pConcat(mkPull(warps, [=](const EWord32& v) {
            return exec<Warp>([=](const Program<Warp>& p) {
              const EWord32 firstRow = (b * warps + v) * rowsPerWarp;
              // Lane l's share of its row (row firstRow + l / w): every w-th product from l % w.
              auto sums = forceReg(
                  p, tConcat<Warp>(mkPull(32u, [=](const EWord32& lane) {
                    // Past the last row: the empty range at rowOffsets[rows].
                    const EWord32 r = min(firstRow + lane / w, rows);
                    const EWord32 start = min(rowOffsets[r], nnz);
                    const EWord32 end = max(min(rowOffsets[min(r + 1u, rows)], nnz), start);
                    auto products = mkPull(end - start, [=](const EWord32& j) {
                      const EWord32 c = columns[start + j];
                      return values[start + j] * ifThenElse(c < cols, x[c], EFloat(0.0f));
                    });
                    return seqFoldStrided(Sum{}, EFloat(0.0f), products, lane % w, EWord32(w),
                                          unroll);
                  })));
              sums = warpReduceGroups(p, Sum{}, sums, w);
              // Every lane now holds its group's sum; each group's first lane writes it (a
              // lane reading its own register: no shuffle).
              return mkPush<Warp, EFloat>(
                  rowsPerWarp, [sums, w](const Program<Warp>& q, const Writer<EFloat>& out) {
                    q.forAll(32u, [&](const Program<Thread>& t, const EWord32& lane) {
                      t.cond(lane % w == 0u,
                             [&](const Program<Thread>& u) { out(u, sums[lane], lane / w); });
                    });
                  });
            });
          }));
        }));
        return takeP(rows, grid);
      },
      {.names = {"rowOffsets", "columns", "values", "x"}, .outputNames = {"y"}});
}

// ---------------------------------------------------------------- matrices
struct Csr {
  uint32_t rows = 0, cols = 0;
  std::vector<uint32_t> rowOffsets{0};  // rows + 1
  std::vector<uint32_t> columns;
  std::vector<float> values;
  double meanRowLength() const { return rows ? double(columns.size()) / rows : 0; }
  // The mean over nonzeros of |column - row * cols / rows|: how far from the diagonal they lie.
  double meanDiagonalDistance() const {
    double sum = 0;
    for (uint32_t r = 0; r < rows; ++r) {
      const double diagonal = double(r) * cols / rows;
      for (uint32_t j = rowOffsets[r]; j < rowOffsets[r + 1]; ++j)
        sum += std::fabs(columns[j] - diagonal);
    }
    return columns.empty() ? 0 : sum / double(columns.size());
  }
  uint32_t longestRow() const {
    uint32_t most = 0;
    for (uint32_t r = 0; r < rows; ++r) most = std::max(most, rowOffsets[r + 1] - rowOffsets[r]);
    return most;
  }
};

// The lane group for a matrix whose rows hold `meanRowLength` nonzeros on average, at a mean
// distance of `meanDiagonalDistance` columns from the diagonal. Measured on the H100
// (bench/RESULTS.md, "SpMV"): where the columns are near the diagonal (banded), x is read from
// cache and the kernel streams the matrix, so small groups win (fewer idle lanes and shuffles per
// nonzero: 1 or 2 lanes beat 16 by 3.4x at 9 a row); where they are scattered (uniform, power-law),
// each row's gathers wait on memory and a group as long as the mean row covers it in one pass
// (cusp's rule: 16 lanes at 15-16 a row, best of the six widths on both).
inline uint32_t spmvThreadsPerRow(double meanRowLength, double meanDiagonalDistance) {
  uint32_t w = 1;
  if (meanDiagonalDistance <= 1024) {  // x's window: 4 KB around the row, in cache
    while (w < 32 && 2 * w <= meanRowLength / 4) w *= 2;  // the power of two at or below mean / 4
  } else {
    w = 2;
    while (w < 32 && w < meanRowLength) w *= 2;  // the power of two at or above the mean
  }
  return w;
}
inline uint32_t spmvThreadsPerRow(const Csr& a) {
  return spmvThreadsPerRow(a.meanRowLength(), a.meanDiagonalDistance());
}

namespace detail {
inline void checkColumns(const char* what, uint32_t cols, bool nonzeros) {
  if (cols == 0 && nonzeros) {
    throw Error(std::string(what) + " needs at least one column for its nonzeros; got 0");
  }
}

// Appends a row's sorted columns with random values in [-1, 1).
inline void appendRow(Csr& a, std::vector<uint32_t>& cols, std::mt19937_64& rng) {
  std::sort(cols.begin(), cols.end());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (uint32_t c : cols) {
    a.columns.push_back(c);
    a.values.push_back(value(rng));
  }
  a.rowOffsets.push_back(static_cast<uint32_t>(a.columns.size()));
  ++a.rows;
}
}  // namespace detail

// A square banded matrix: row r holds columns r - halfWidth .. r + halfWidth that exist.
inline Csr bandedMatrix(uint32_t n, uint32_t halfWidth, uint32_t seed) {
  Csr a;
  a.cols = n;
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> cols;
  for (uint32_t r = 0; r < n; ++r) {
    cols.clear();
    const uint64_t last = std::min<uint64_t>(uint64_t{r} + halfWidth, n - 1);
    for (uint64_t c = r > halfWidth ? r - halfWidth : 0; c <= last; ++c)
      cols.push_back(static_cast<uint32_t>(c));
    detail::appendRow(a, cols, rng);
  }
  return a;
}

// `perRow` nonzeros in every row at columns drawn uniformly (repeats allowed: CSR and cuSPARSE
// accept them, and they add).
inline Csr uniformMatrix(uint32_t rows, uint32_t cols, uint32_t perRow, uint32_t seed) {
  detail::checkColumns("uniformMatrix", cols, rows > 0 && perRow > 0);
  Csr a;
  a.cols = cols;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> column(0, cols ? cols - 1 : 0);
  std::vector<uint32_t> row(perRow);
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t& c : row) c = column(rng);
    detail::appendRow(a, row, rng);
  }
  return a;
}

// Power-law row lengths: Lomax (Pareto II) with shape alpha and the given mean, capped at
// `longest`, so most rows are short, about a sixth empty (at mean 16, alpha 1.5) and a few run
// to thousands. Columns uniform.
inline Csr powerLawMatrix(uint32_t rows, uint32_t cols, double mean, uint32_t longest,
                          uint32_t seed, double alpha = 1.5) {
  detail::checkColumns("powerLawMatrix", cols, rows > 0 && longest > 0);
  Csr a;
  a.cols = cols;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<uint32_t> column(0, cols ? cols - 1 : 0);
  const double scale = mean * (alpha - 1);  // Lomax's mean is scale / (alpha - 1)
  std::vector<uint32_t> row;
  for (uint32_t r = 0; r < rows; ++r) {
    const double length = scale * (std::pow(1.0 - unit(rng), -1.0 / alpha) - 1.0);
    row.resize(static_cast<size_t>(std::clamp(length, 0.0, double(longest))));
    for (uint32_t& c : row) c = column(rng);
    detail::appendRow(a, row, rng);
  }
  return a;
}

// y = A x in double, rounded once.
inline std::vector<float> spmvReference(const Csr& a, const std::vector<float>& x) {
  std::vector<float> y(a.rows);
  for (uint32_t r = 0; r < a.rows; ++r) {
    double sum = 0;
    for (uint32_t j = a.rowOffsets[r]; j < a.rowOffsets[r + 1]; ++j)
      sum += double(a.values[j]) * x[a.columns[j]];
    y[r] = static_cast<float>(sum);
  }
  return y;
}

// A tolerance for row r's float sum: the products' magnitudes, summed, times a few ulps each.
inline float spmvTolerance(const Csr& a, const std::vector<float>& x, uint32_t r) {
  double magnitude = 0;
  for (uint32_t j = a.rowOffsets[r]; j < a.rowOffsets[r + 1]; ++j)
    magnitude += std::fabs(double(a.values[j]) * x[a.columns[j]]);
  return static_cast<float>(1e-6 + 4e-7 * magnitude *
                                       std::log2(2.0 + a.rowOffsets[r + 1] - a.rowOffsets[r]));
}

}  // namespace accelerate
