// The oracle of a matrix recipe: what its kernel must compute, in plain C++ over dense
// row-major matrices of words with no IR involved, and the rejection (InvalidRecipe) of a
// shrunk matrix recipe that breaks a rule. 1-D recipes: recipe_reference.cpp.
#include <algorithm>

#include "recipe_internal.hpp"
#include "scalar_ops.hpp"

namespace fuzz {

namespace {

// A dense row-major matrix of words: the reference's matrices.
struct Mat {
  uint32_t rows = 0, cols = 0;
  Words v;
  Mat() = default;
  Mat(uint32_t r, uint32_t c) : rows(r), cols(c), v(size_t{r} * c) {}
  uint32_t& at(uint32_t r, uint32_t c) { return v[size_t{r} * cols + c]; }
  uint32_t at(uint32_t r, uint32_t c) const { return v[size_t{r} * cols + c]; }
};

Mat refMatrixExpr(const MExpr& e, const std::vector<Mat>& ins) {
  switch (e.kind) {
    case MExprKind::Input:
      require(e.input < ins.size() && e.kids.empty(), "a matrix input the kernel does not have");
      return ins[e.input];
    case MExprKind::Map: {
      require(e.kids.size() == 1, "a matrix map of other than one matrix");
      Mat x = refMatrixExpr(e.kids[0], ins);
      for (uint32_t& v : x.v) v = unaryOp(e.fn, e.constant, v);
      return x;
    }
    case MExprKind::Zip: {
      require(e.kids.size() == 2, "a matrix zip of other than two matrices");
      const Mat x = refMatrixExpr(e.kids[0], ins), y = refMatrixExpr(e.kids[1], ins);
      Mat z(std::min(x.rows, y.rows), std::min(x.cols, y.cols));
      for (uint32_t r = 0; r < z.rows; ++r) {
        for (uint32_t c = 0; c < z.cols; ++c) z.at(r, c) = binaryOp(e.fn, x.at(r, c), y.at(r, c));
      }
      return z;
    }
    case MExprKind::Transpose: {
      require(e.kids.size() == 1, "a matrix transpose of other than one matrix");
      const Mat x = refMatrixExpr(e.kids[0], ins);
      Mat t(x.cols, x.rows);
      for (uint32_t r = 0; r < t.rows; ++r) {
        for (uint32_t c = 0; c < t.cols; ++c) t.at(r, c) = x.at(c, r);
      }
      return t;
    }
  }
  throw std::logic_error("fuzz: unknown matrix expression");
}

Mat refTiled(Level inner, const Mat& m, uint32_t th, uint32_t tw, bool transposed, bool whole,
             const std::vector<TileNode>& body, bool& warps);

Mat refTileSteps(Level level, const std::vector<TileNode>& ops, Mat t, bool& warps) {
  for (const TileNode& n : ops) {
    require(n.kids.empty() || n.op == TileOp::Nest, "kids of a step that has none");
    switch (n.op) {
      case TileOp::Map:
        for (uint32_t& v : t.v) v = unaryOp(n.fn, n.constant, v);
        break;
      case TileOp::AddIndex:
        for (uint32_t r = 0; r < t.rows; ++r) {
          for (uint32_t c = 0; c < t.cols; ++c) t.at(r, c) += r * n.constant + c;
        }
        break;
      case TileOp::Transpose: {
        Mat x(t.cols, t.rows);
        for (uint32_t r = 0; r < x.rows; ++r) {
          for (uint32_t c = 0; c < x.cols; ++c) x.at(r, c) = t.at(c, r);
        }
        t = std::move(x);
        break;
      }
      case TileOp::ZipRotate: {
        Mat x(t.rows, t.cols);
        for (uint32_t r = 0; r < t.rows; ++r) {
          for (uint32_t c = 0; c < t.cols; ++c) {
            x.at(r, c) = binaryOp(n.fn, t.at(r, c),
                                  t.at((r + n.rowShift) % t.rows, (c + n.colShift) % t.cols));
          }
        }
        t = std::move(x);
        break;
      }
      case TileOp::Force:
      case TileOp::NarrowForce:
        // The pull form is for Warp and Block programs (each thread's loads together).
        require(n.padding <= 1 && (n.push || level != Level::Thread),
                "a force2 form the level does not have");
        if (n.op == TileOp::NarrowForce) {
          require(n.width == 8 || n.width == 16, "a narrow force of another width");
          for (uint32_t& v : t.v) v &= n.width == 8 ? 0xffu : 0xffffu;
        }
        break;
      case TileOp::Nest: {
        require(level != Level::Thread && n.padding <= 1, "a nest in a thread program");
        const Level inner = level == Level::Block ? Level::Warp : Level::Thread;
        warps = warps || inner == Level::Warp;
        t = refTiled(inner, t, n.tileRows, n.tileCols, transposes(n.kids), false, n.kids, warps);
        break;
      }
    }
  }
  return t;
}

// pConcat2 over the th x tw tiles of m (their grid transposed with `transposed`), each the
// result of body at level `inner`: m's shape (or its transpose), or with whole the whole grid
// of the results. Elements of the tiles outside m read as zero, writes outside are dropped.
Mat refTiled(Level inner, const Mat& m, uint32_t th, uint32_t tw, bool transposed, bool whole,
             const std::vector<TileNode>& body, bool& warps) {
  require(th > 0 && tw > 0 && th <= 4096 && tw <= 4096, "tiles of another size");
  const uint32_t tr = m.rows / th + (m.rows % th != 0), tc = m.cols / tw + (m.cols % tw != 0);
  const uint32_t gr = transposed ? tc : tr, gc = transposed ? tr : tc;
  std::vector<Mat> results;
  for (uint32_t i = 0; i < gr; ++i) {
    for (uint32_t j = 0; j < gc; ++j) {
      const uint32_t ti = transposed ? j : i, tj = transposed ? i : j;
      Mat tile(th, tw);
      for (uint32_t r = 0; r < th; ++r) {
        for (uint32_t c = 0; c < tw; ++c) {
          const uint64_t row = uint64_t{ti} * th + r, col = uint64_t{tj} * tw + c;
          if (row < m.rows && col < m.cols) {
            tile.at(r, c) = m.at(static_cast<uint32_t>(row), static_cast<uint32_t>(col));
          }
        }
      }
      results.push_back(refTileSteps(inner, body, std::move(tile), warps));
    }
  }
  const uint32_t ih = results[0].rows, iw = results[0].cols;
  const uint64_t outRows = whole ? uint64_t{gr} * ih : transposed ? m.cols : m.rows;
  const uint64_t outCols = whole ? uint64_t{gc} * iw : transposed ? m.rows : m.cols;
  require(uint64_t{gr} * ih >= outRows && uint64_t{gc} * iw >= outCols && outRows * outCols > 0 &&
              outRows * outCols <= (1u << 24),
          "the tiles do not cover the result");
  Mat out(static_cast<uint32_t>(outRows), static_cast<uint32_t>(outCols));
  for (uint32_t i = 0; i < gr; ++i) {
    for (uint32_t j = 0; j < gc; ++j) {
      const Mat& y = results[size_t{i} * gc + j];
      for (uint32_t r = 0; r < ih; ++r) {
        for (uint32_t c = 0; c < iw; ++c) {
          const uint64_t row = uint64_t{i} * ih + r, col = uint64_t{j} * iw + c;
          if (row < out.rows && col < out.cols) {
            out.at(static_cast<uint32_t>(row), static_cast<uint32_t>(col)) = y.at(r, c);
          }
        }
      }
    }
  }
  return out;
}

// Element (r, c) of the stencil over m: the terms' neighbours folded.
Mat refStencil(const MatrixRecipe& mr, const Mat& m) {
  require(mr.tileRows > 0 && mr.tileCols > 0 && mr.radius <= 3 && !mr.terms.empty() &&
              mr.haloPadding <= 1,
          "a stencil of another shape");
  const int64_t k = mr.radius;
  for (const StencilTerm& t : mr.terms) {
    require(t.dr >= -k && t.dr <= k && t.dc >= -k && t.dc <= k, "a neighbour past the radius");
  }
  auto at = [&](int64_t r, int64_t c) {
    if (mr.zero && (r < 0 || c < 0 || r >= m.rows || c >= m.cols)) return 0u;
    return m.at(static_cast<uint32_t>(std::clamp<int64_t>(r, 0, m.rows - 1)),
                static_cast<uint32_t>(std::clamp<int64_t>(c, 0, m.cols - 1)));
  };
  Mat out(m.rows, m.cols);
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.cols; ++c) {
      uint32_t acc = at(r + mr.terms[0].dr, c + mr.terms[0].dc);
      for (size_t j = 1; j < mr.terms.size(); ++j) {
        acc = binaryOp(mr.terms[j].op, acc, at(r + mr.terms[j].dr, c + mr.terms[j].dc));
      }
      out.at(static_cast<uint32_t>(r), static_cast<uint32_t>(c)) = acc;
    }
  }
  return out;
}

}  // namespace

std::vector<Words> matrixReference(const Recipe& r, const Words& in) {
  const MatrixRecipe& mr = *r.matrix;
  require(!mr.inputs.empty() && mr.inputs.size() <= 2, "a matrix kernel of other inputs");
  require(r.threads > 0 && r.threads <= 1024 && r.altThreads > 0 && r.altThreads <= 1024 &&
              r.realBlocks > 0,
          "empty launch");
  std::vector<Mat> ins;
  size_t offset = 0;
  for (const MatrixInput& m : mr.inputs) {
    require(m.rows > 0 && m.cols > 0 && m.pitch >= m.cols &&
                (m.elem == 8 || m.elem == 16 || m.elem == 32) &&
                uint64_t{m.rows} * m.pitch <= (1u << 22),
            "a matrix input of another shape");
    Mat x(m.rows, m.cols);
    for (uint32_t row = 0; row < m.rows; ++row) {
      for (uint32_t c = 0; c < m.cols; ++c)
        x.at(row, c) = in.at(offset + size_t{row} * m.pitch + c);
    }
    offset += size_t{m.rows} * m.pitch;
    ins.push_back(std::move(x));
  }
  const Mat m = refMatrixExpr(mr.expr, ins);
  bool warps = false;
  Mat out;
  switch (mr.out) {
    case MatrixOut::Push: out = m; break;
    case MatrixOut::Tiles:
      out = refTiled(Level::Block, m, mr.tileRows, mr.tileCols, mr.transposeGrid, mr.whole, mr.body,
                     warps);
      break;
    case MatrixOut::Stencil:
      require(!mr.narrowHalo || (mr.expr.kind == MExprKind::Input && mr.expr.input < ins.size() &&
                                 mr.inputs[mr.expr.input].elem != 32),
              "a narrow stencil of words");
      out = refStencil(mr, m);
      break;
  }
  // Warp programs need whole warps.
  require(!warps || (r.threads % 32 == 0 && r.altThreads % 32 == 0), "warps of part of a warp");
  return {out.v};
}

}  // namespace fuzz
