// Shrinking of matrix recipes: the size measure that every shrink step decreases, and the
// smaller recipes to try (simpler outputs, fewer and simpler tile steps and stencil terms, a
// smaller expression, fewer and smaller inputs, a smaller launch). 1-D recipes:
// recipe_shrink.cpp.
#include <algorithm>

#include "recipe_internal.hpp"

namespace fuzz {

// recipeSize of a matrix recipe (a transposed grid weighs more than the whole grid's result).
size_t matrixSize(const Recipe& r) {
  const MatrixRecipe& mr = *r.matrix;
  size_t size = (countTileNodes(mr.body) + countExprNodes(mr.expr) + mr.terms.size() +
                 mr.inputs.size() + (mr.out != MatrixOut::Push)) *
                    100000 +
                r.threads + r.altThreads + r.realBlocks + size_t{mr.tileRows} * mr.tileCols +
                mr.radius + 2 * mr.transposeGrid + mr.whole + mr.zero + mr.viaHalo +
                mr.haloPadding + mr.haloPush + mr.narrowHalo;
  for (const MatrixInput& m : mr.inputs) {
    size += size_t{m.rows} * m.pitch + m.cols + (m.elem != 32);
  }
  std::vector<TileNode> body = mr.body;
  forEachTileList(body, [&](std::vector<TileNode>& ops) {
    for (const TileNode& n : ops) {
      if (n.op == TileOp::Nest) size += size_t{n.tileRows} * n.tileCols + n.padding;
      if (n.op == TileOp::ZipRotate) size += n.rowShift + n.colShift;
      if (n.op == TileOp::Force) size += n.push + n.padding;
      if (n.op == TileOp::NarrowForce) size += 1 + n.push + n.padding;
    }
  });
  for (const StencilTerm& t : mr.terms) size += (t.dr != 0) + (t.dc != 0) + (t.op != 0);
  return size;
}

std::vector<Recipe> matrixShrinkCandidates(const Recipe& r) {
  const MatrixRecipe& mr = *r.matrix;
  std::vector<Recipe> out;
  auto with = [&](const std::function<void(MatrixRecipe&)>& change) {
    Recipe c = r;
    change(*c.matrix);
    out.push_back(std::move(c));
  };
  // The plainest output: push2<Grid> of the expression.
  if (mr.out != MatrixOut::Push) {
    with([](MatrixRecipe& m) {
      m.out = MatrixOut::Push;
      m.body.clear();
      m.terms.clear();
      m.tileRows = m.tileCols = 1;
      m.radius = 0;
      m.transposeGrid = m.whole = m.zero = m.viaHalo = m.haloPush = m.narrowHalo = false;
      m.haloPadding = 0;
    });
  }
  // The tile programs: each step removed, a nest replaced by its kids, simpler forms.
  std::vector<std::vector<TileOp>> lists;
  std::vector<TileNode> probe = mr.body;
  forEachTileList(probe, [&](std::vector<TileNode>& v) {
    std::vector<TileOp> ops;
    for (const TileNode& n : v) ops.push_back(n.op);
    lists.push_back(ops);
  });
  auto edit = [&](size_t li, const std::function<void(std::vector<TileNode>&)>& change) {
    with([&](MatrixRecipe& m) {
      size_t k = 0;
      forEachTileList(m.body, [&](std::vector<TileNode>& v) {
        if (k++ == li) change(v);
      });
    });
  };
  for (size_t li = 0; li < lists.size(); ++li) {
    for (size_t j = 0; j < lists[li].size(); ++j) {
      const auto at = static_cast<long>(j);
      edit(li, [at](std::vector<TileNode>& v) { v.erase(v.begin() + at); });
      const TileOp op = lists[li][j];
      if (op == TileOp::Nest) {
        edit(li, [at](std::vector<TileNode>& v) {
          const std::vector<TileNode> kids = v[static_cast<size_t>(at)].kids;
          v.erase(v.begin() + at);
          v.insert(v.begin() + at, kids.begin(), kids.end());
        });
        edit(li, [at](std::vector<TileNode>& v) {
          TileNode& n = v[static_cast<size_t>(at)];
          n.tileRows = std::max(1u, n.tileRows / 2);
          n.tileCols = std::max(1u, n.tileCols / 2);
        });
      }
      if (op == TileOp::NarrowForce) {
        edit(li, [at](std::vector<TileNode>& v) { v[static_cast<size_t>(at)].op = TileOp::Force; });
      }
      if (op == TileOp::Force || op == TileOp::NarrowForce || op == TileOp::Nest) {
        edit(li, [at](std::vector<TileNode>& v) { v[static_cast<size_t>(at)].padding = 0; });
      }
      if (op == TileOp::Force || op == TileOp::NarrowForce) {
        edit(li, [at](std::vector<TileNode>& v) { v[static_cast<size_t>(at)].push = false; });
      }
      if (op == TileOp::ZipRotate) {
        edit(li, [at](std::vector<TileNode>& v) {
          v[static_cast<size_t>(at)].rowShift = 0;
          v[static_cast<size_t>(at)].colShift = 0;
        });
      }
    }
  }
  if (mr.whole) with([](MatrixRecipe& m) { m.whole = false; });
  if (mr.transposeGrid) {
    with([](MatrixRecipe& m) { m.transposeGrid = false; });
    with([](MatrixRecipe& m) {
      m.transposeGrid = false;
      m.whole = true;
    });
  }
  if (mr.out != MatrixOut::Push) {
    if (mr.tileRows > 1) {
      with([](MatrixRecipe& m) { m.tileRows = 1; });
      with([](MatrixRecipe& m) { m.tileRows /= 2; });
      with([](MatrixRecipe& m) { m.tileRows -= 1; });
    }
    if (mr.tileCols > 1) {
      with([](MatrixRecipe& m) { m.tileCols = 1; });
      with([](MatrixRecipe& m) { m.tileCols /= 2; });
      with([](MatrixRecipe& m) { m.tileCols -= 1; });
    }
  }
  // The stencil: fewer and nearer neighbours, a smaller radius, the plainer options.
  for (size_t k = 0; k < mr.terms.size(); ++k) {
    const auto at = static_cast<long>(k);
    if (mr.terms.size() > 1) with([at](MatrixRecipe& m) { m.terms.erase(m.terms.begin() + at); });
    const StencilTerm& t = mr.terms[k];
    if (t.dr != 0) with([k](MatrixRecipe& m) { m.terms[k].dr = 0; });
    if (t.dc != 0) with([k](MatrixRecipe& m) { m.terms[k].dc = 0; });
    if (t.op != 0) with([k](MatrixRecipe& m) { m.terms[k].op = 0; });
  }
  if (mr.radius > 0) with([](MatrixRecipe& m) { m.radius -= 1; });
  if (mr.zero) with([](MatrixRecipe& m) { m.zero = false; });
  if (mr.viaHalo) with([](MatrixRecipe& m) { m.viaHalo = false; });
  if (mr.haloPadding) with([](MatrixRecipe& m) { m.haloPadding = 0; });
  if (mr.haloPush) with([](MatrixRecipe& m) { m.haloPush = false; });
  if (mr.narrowHalo) with([](MatrixRecipe& m) { m.narrowHalo = false; });
  // The expression: a node replaced by one of its kids.
  MExpr exprProbe = mr.expr;
  std::vector<size_t> kidCounts;
  forEachExpr(exprProbe, [&](MExpr& e) { kidCounts.push_back(e.kids.size()); });
  for (size_t i = 0; i < kidCounts.size(); ++i) {
    for (size_t j = 0; j < kidCounts[i]; ++j) {
      with([i, j](MatrixRecipe& m) {
        size_t k = 0;
        forEachExpr(m.expr, [&](MExpr& e) {
          if (k++ == i) {
            const MExpr kid = e.kids[j];
            e = kid;
          }
        });
      });
    }
  }
  // The inputs: one, smaller, without a pitch, of words.
  if (mr.inputs.size() == 2) {
    with([](MatrixRecipe& m) {
      forEachExpr(m.expr, [](MExpr& e) {
        if (e.kind == MExprKind::Input) e.input = 0;
      });
      m.inputs.pop_back();
    });
  }
  for (size_t k = 0; k < mr.inputs.size(); ++k) {
    const MatrixInput& m = mr.inputs[k];
    if (m.rows > 1) {
      with([k](MatrixRecipe& x) { x.inputs[k].rows = 1; });
      with([k](MatrixRecipe& x) { x.inputs[k].rows /= 2; });
      with([k](MatrixRecipe& x) { x.inputs[k].rows -= 1; });
    }
    if (m.cols > 1) {
      with([k](MatrixRecipe& x) { x.inputs[k].cols = x.inputs[k].pitch = 1; });
      with([k](MatrixRecipe& x) { x.inputs[k].cols /= 2; });
      with([k](MatrixRecipe& x) { x.inputs[k].cols -= 1; });
    }
    if (m.pitch > m.cols) {
      with([k](MatrixRecipe& x) { x.inputs[k].pitch = x.inputs[k].cols; });
      with([k](MatrixRecipe& x) {
        x.inputs[k].pitch -= (x.inputs[k].pitch - x.inputs[k].cols + 1) / 2;
      });
    }
    if (m.elem != 32) {
      with([k](MatrixRecipe& x) {
        x.inputs[k].elem = 32;
        x.narrowHalo = false;
      });
    }
  }
  auto launch = [&](const std::function<void(Recipe&)>& change) {
    Recipe c = r;
    change(c);
    out.push_back(std::move(c));
  };
  if (r.realBlocks > 1) launch([](Recipe& c) { c.realBlocks = 1; });
  for (uint32_t t : {32u, 64u}) {
    if (r.threads > t) launch([t](Recipe& c) { c.threads = t; });
    if (r.altThreads > t) launch([t](Recipe& c) { c.altThreads = t; });
  }
  // Only smaller ones: the shrinker takes the first candidate that fails alike, and one that
  // changed nothing would be taken again and again.
  const size_t size = matrixSize(r);
  std::erase_if(out, [size](const Recipe& c) { return matrixSize(c) >= size; });
  return out;
}

}  // namespace fuzz
