// Generation of matrix recipes: a random well-typed, well-sized matrix kernel (its inputs, a
// grid-level expression, and push2<Grid>, tile programs or a stencil to write it), every choice
// from the matrix stream of recipe_generate.cpp. 1-D recipes: recipe_generate.cpp.
#include <algorithm>

#include "recipe_internal.hpp"
#include "scalar_ops.hpp"

namespace fuzz {

namespace {

class MatrixGenerator {
 public:
  explicit MatrixGenerator(std::mt19937_64& rng) : rng_(rng) {}
  bool warps = false;  // a Warp program was made: blocks of whole warps

  uint32_t below(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }
  bool chance(uint32_t percent) { return below(100) < percent; }

  // A matrix side: small and odd mostly, powers of two and their neighbours, now and then long.
  uint32_t side() {
    switch (below(10)) {
      case 0: return 1u << below(7);
      case 1: return std::max(1u, (2u << below(6)) + below(3) - 1);
      case 2: return 1 + below(130);
      default: return 1 + below(48);
    }
  }
  // A tile side up to hi.
  uint32_t tileSide(uint32_t hi) {
    const uint32_t s = below(3) == 0 ? 1u << below(6) : 1 + below(hi);
    return std::min(s, hi);
  }

  MatrixInput input() {
    MatrixInput m;
    m.rows = side();
    m.cols = side();
    if (uint64_t{m.rows} * m.cols > 6000) m.cols = std::max(1u, 6000 / m.rows);
    m.pitch = chance(40) ? m.cols + 1 + below(9) : m.cols;
    const uint32_t width = below(100);
    m.elem = width < 15 ? 8 : width < 30 ? 16 : 32;
    return m;
  }

  MExpr expr(int depth, uint32_t inputs) {
    MExpr e;
    const uint32_t k = below(10);
    if (depth >= 3 || k < 4) {
      e.input = below(inputs);
      return e;
    }
    if (k < 6) {
      e.kind = MExprKind::Map;
      e.fn = below(kUnaryOps);
      e.constant = static_cast<uint32_t>(rng_());
      e.kids = {expr(depth + 1, inputs)};
    } else if (k < 8) {
      e.kind = MExprKind::Transpose;
      e.kids = {expr(depth + 1, inputs)};
    } else {
      e.kind = MExprKind::Zip;
      e.fn = below(kBinaryOps);
      e.kids = {expr(depth + 1, inputs), expr(depth + 1, inputs)};
    }
    return e;
  }

  // Steps of a tile program at `level` over a rows x cols tile.
  std::vector<TileNode> tileBody(Level level, uint32_t rows, uint32_t cols, int depth) {
    std::vector<TileNode> ops;
    const uint32_t count = 1 + below(depth == 0 ? 4 : 3);
    for (uint32_t s = 0; s < count; ++s) {
      TileNode n;
      const uint32_t k = below(level == Level::Thread || depth >= 2 ? 12 : 15);
      n.op = k < 2    ? TileOp::Map
             : k < 4  ? TileOp::AddIndex
             : k < 6  ? TileOp::Transpose
             : k < 8  ? TileOp::ZipRotate
             : k < 11 ? TileOp::Force
             : k < 12 ? TileOp::NarrowForce
                      : TileOp::Nest;
      switch (n.op) {
        case TileOp::Map:
          n.fn = below(kUnaryOps);
          n.constant = static_cast<uint32_t>(rng_());
          break;
        case TileOp::AddIndex: n.constant = below(1000); break;
        case TileOp::Transpose: std::swap(rows, cols); break;
        case TileOp::ZipRotate:
          n.fn = below(kBinaryOps);
          n.rowShift = below(rows + 2);
          n.colShift = below(cols + 2);
          break;
        case TileOp::Force:
        case TileOp::NarrowForce:
          n.push = level == Level::Thread || below(2) == 1;
          n.width = below(2) == 0 ? 8 : 16;
          n.padding = below(2);
          break;
        case TileOp::Nest: {
          // Warp sub-tiles of up to 256 elements, thread sub-tiles of up to 32.
          const uint32_t area = level == Level::Block ? 256 : 32;
          n.tileRows = tileSide(std::min(rows + 2, 32u));
          n.tileCols = tileSide(std::max(1u, std::min(cols + 2, area / n.tileRows)));
          const Level inner = level == Level::Block ? Level::Warp : Level::Thread;
          warps = warps || inner == Level::Warp;
          n.kids = tileBody(inner, n.tileRows, n.tileCols, depth + 1);
          if (transposes(n.kids)) std::swap(rows, cols);
          n.padding = below(2);
          break;
        }
      }
      ops.push_back(std::move(n));
    }
    return ops;
  }

  MatrixRecipe recipe() {
    MatrixRecipe mr;
    const uint32_t inputs = chance(35) ? 2 : 1;
    for (uint32_t k = 0; k < inputs; ++k) mr.inputs.push_back(input());
    mr.expr = expr(0, inputs);
    // Both inputs in the expression.
    if (inputs == 2 && !usesInput(mr.expr, 1)) {
      MExpr zip;
      zip.kind = MExprKind::Zip;
      zip.fn = below(kBinaryOps);
      MExpr second;
      second.input = 1;
      zip.kids =
          chance(50) ? std::vector<MExpr>{mr.expr, second} : std::vector<MExpr>{second, mr.expr};
      mr.expr = zip;
    }
    const uint32_t out = below(100);
    if (out < 20) return mr;
    if (out < 60) {
      mr.out = MatrixOut::Tiles;
      mr.tileRows = tileSide(40);
      mr.tileCols = tileSide(std::max(1u, std::min(40u, 1024 / mr.tileRows)));
      mr.transposeGrid = chance(40);
      mr.body = tileBody(Level::Block, mr.tileRows, mr.tileCols, 0);
      // The result is m's shape (or its transpose) where the tiles' results fit it.
      const bool fits = transposes(mr.body) == mr.transposeGrid || mr.tileRows == mr.tileCols;
      mr.whole = !fits || chance(15);
      return mr;
    }
    mr.out = MatrixOut::Stencil;
    // Now and then straight over a lone input, often narrow, then read as its own type.
    if (inputs == 1 && chance(40)) {
      mr.expr = MExpr{};
      if (chance(50)) mr.inputs[0].elem = chance(50) ? 8 : 16;
    }
    mr.radius = below(3);
    mr.tileRows = tileSide(32);
    mr.tileCols = tileSide(std::max(1u, std::min(32u, 512 / mr.tileRows)));
    mr.zero = chance(50);
    const int k = static_cast<int>(mr.radius);
    const uint32_t terms = 1 + below(5);
    for (uint32_t t = 0; t < terms; ++t) {
      StencilTerm term;
      term.dr = static_cast<int>(below(2 * mr.radius + 1)) - k;
      term.dc = static_cast<int>(below(2 * mr.radius + 1)) - k;
      term.op = below(kBinaryOps);
      mr.terms.push_back(term);
    }
    mr.viaHalo = chance(35);
    mr.haloPadding = below(2);
    mr.haloPush = chance(50);
    mr.narrowHalo =
        mr.expr.kind == MExprKind::Input && mr.inputs[mr.expr.input].elem != 32 && chance(80);
    return mr;
  }

 private:
  std::mt19937_64& rng_;
};

}  // namespace

Recipe generateMatrix(uint64_t dataSeed, std::mt19937_64& rng) {
  MatrixGenerator gen(rng);
  Recipe r;
  r.dataSeed = dataSeed;
  r.matrix = gen.recipe();
  const std::vector<uint32_t> threadCounts{32, 64, 96, 128, 192, 256, 512, 1024};
  r.threads = threadCounts[gen.below(8)];
  r.altThreads = threadCounts[gen.below(8)];
  if (!gen.warps && gen.chance(30)) r.threads = 1 + gen.below(300);
  if (!gen.warps && gen.chance(30)) r.altThreads = 1 + gen.below(300);
  r.realBlocks = 1 + gen.below(4);
  return r;
}

}  // namespace fuzz
