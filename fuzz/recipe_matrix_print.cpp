// Printing of matrix recipes: C++ source that rebuilds a matrix recipe's kernel with the
// library's combinators (obsidian/matrix.hpp). 1-D recipes: recipe_print.cpp.
#include "recipe_internal.hpp"
#include "scalar_ops.hpp"

namespace fuzz {

namespace {

std::string elemType(uint32_t elem) { return "EWord" + std::to_string(elem); }
const char* paddingName(uint32_t d) { return d == 0 ? "Padding::Auto" : "Padding::None"; }

std::string matrixExprText(const MExpr& e) {
  switch (e.kind) {
    case MExprKind::Input: return "g" + std::to_string(e.input);
    case MExprKind::Map:
      return "fmap(" + Printer::unaryLambda(e.fn, e.constant) + ", " +
             matrixExprText(e.kids.at(0)) + ")";
    case MExprKind::Zip:
      return "zipWith(" + Printer::binaryLambda(e.fn) + ", " + matrixExprText(e.kids.at(0)) + ", " +
             matrixExprText(e.kids.at(1)) + ")";
    case MExprKind::Transpose: return "transpose(" + matrixExprText(e.kids.at(0)) + ")";
  }
  return "?";
}

void printTileProgram(Printer& pr, int ind, Level level, const std::string& p,
                      const std::vector<TileNode>& ops, std::string x);

// pConcat2 over the tiles of tile x, the programs one level below `level` (its text, without
// a final semicolon, over several lines: the caller prints `open` before it and `close` after).
void printNest(Printer& pr, int ind, Level level, const TileNode& n, const std::string& x,
               const std::string& open, const std::string& close) {
  const Level inner = level == Level::Block ? Level::Warp : Level::Thread;
  const std::string L = levelName(inner), s = pr.fresh("s"), q = pr.fresh("q");
  const bool t = transposes(n.kids);
  pr.line(ind, open + "pConcat2(fmap(");
  pr.line(ind + 1, "[](const SPull2<EWord32>& " + s + ") {");
  pr.line(ind + 2, "return exec<" + L + ">([" + s + "](const Program<" + L + ">& " + q + ") {");
  printTileProgram(pr, ind + 3, inner, q, n.kids, s);
  pr.line(ind + 2, "});");
  pr.line(ind + 1, "},");
  const std::string ts =
      "tiles(" + Printer::u(n.tileRows) + ", " + Printer::u(n.tileCols) + ", " + x + ")";
  pr.line(ind + 1, (t ? "transpose(" + ts + ")), " + x + ".cols(), " + x + ".rows()"
                      : ts + "), " + x + ".rows(), " + x + ".cols()") +
                       ")" + close);
}

// Prints the steps of a tile program and its return (the last step's push array where it is
// a nest, else push2<L> of the tile).
void printTileProgram(Printer& pr, int ind, Level level, const std::string& p,
                      const std::vector<TileNode>& ops, std::string x) {
  const std::string L = levelName(level);
  for (size_t k = 0; k < ops.size(); ++k) {
    const TileNode& n = ops[k];
    if (n.op == TileOp::Nest && k + 1 == ops.size()) {
      printNest(pr, ind, level, n, x, "return ", ";");
      return;
    }
    const std::string y = pr.fresh("a");
    const std::string def = "const SPull2<EWord32> " + y + " = ";
    auto forced = [&](const std::string& t) {
      return "force2(" + p + ", " + (!n.push ? t : "push2<" + L + ">(" + t + ")") + ", " +
             paddingName(n.padding) + ")";
    };
    switch (n.op) {
      case TileOp::Map:
        pr.line(ind, def + "fmap(" + Printer::unaryLambda(n.fn, n.constant) + ", " + x + ");");
        break;
      case TileOp::AddIndex:
        pr.line(ind, def + "mkPull2(" + x + ".rows(), " + x + ".cols(), [" + x +
                         "](const EWord32& r, const EWord32& c) { return " + x + "(r, c) + r * " +
                         Printer::u(n.constant) + " + c; });");
        break;
      case TileOp::Transpose: pr.line(ind, def + "transpose(" + x + ");"); break;
      case TileOp::ZipRotate:
        pr.line(ind, def + "zipWith(" + Printer::binaryLambda(n.fn) + ", " + x + ", mkPull2(" + x +
                         ".rows(), " + x + ".cols(), [" + x +
                         "](const EWord32& r, const EWord32& c) { return " + x + "((r + " +
                         Printer::u(n.rowShift) + ") % " + x + ".rows(), (c + " +
                         Printer::u(n.colShift) + ") % " + x + ".cols()); }));");
        break;
      case TileOp::Force: pr.line(ind, def + forced(x) + ";"); break;
      case TileOp::NarrowForce: {
        const std::string bits = std::to_string(n.width);
        pr.line(
            ind,
            def + "fmap([](const EWord" + bits + "& v) { return w" + bits + "ToW32(v); }, " +
                forced("fmap([](const EWord32& w) { return w32ToW" + bits + "(w); }, " + x + ")") +
                ");");
        break;
      }
      case TileOp::Nest:
        printNest(pr, ind, level, n, x, def + "force2(" + p + ", ",
                  ", " + std::string(paddingName(n.padding)) + ");");
        break;
    }
    x = y;
  }
  pr.line(ind, "return push2<" + L + ">(" + x + ");");
}

// The stencil's function of a neighbourhood of X (the terms folded), as a lambda.
std::string stencilFnText(const MatrixRecipe& mr, uint32_t elem) {
  const std::string bits = std::to_string(elem);
  auto nb = [&](const StencilTerm& t) {
    const std::string read = "nb(" + std::to_string(t.dr) + ", " + std::to_string(t.dc) + ")";
    return elem == 32 ? read : "w" + bits + "ToW32(" + read + ")";
  };
  std::string s = "[](const Neighbourhood<uint" + bits +
                  "_t>& nb) { EWord32 acc = " + nb(mr.terms.at(0)) + "; ";
  for (size_t k = 1; k < mr.terms.size(); ++k) {
    s += "acc = " + Printer::binaryLambda(mr.terms[k].op) + "(acc, " + nb(mr.terms[k]) + "); ";
  }
  return s + "return acc; }";
}

}  // namespace

std::string matrixSource(const Recipe& r, uint32_t threads, const std::string& function) {
  const MatrixRecipe& mr = *r.matrix;
  Printer pr;
  pr.threads = threads;
  std::string shapes, params;
  for (size_t k = 0; k < mr.inputs.size(); ++k) {
    const MatrixInput& m = mr.inputs[k];
    shapes += std::string(k ? ", " : "") + std::to_string(m.rows) + " x " + std::to_string(m.cols) +
              " (pitch " + std::to_string(m.pitch) + ") " +
              (m.elem == 32 ? "words" : "u" + std::to_string(m.elem));
    params +=
        std::string(k ? ", " : "") + "DPull2<" + elemType(m.elem) + "> in" + std::to_string(k);
  }
  pr.line(0, "// matrix inputs: " + shapes);
  pr.line(0, "Kernel " + function + "() {");
  pr.line(1, "return capture(\"fuzz\", " + std::to_string(threads) + ", [](" + params + ") {");
  for (size_t k = 0; k < mr.inputs.size(); ++k) {
    const std::string g = "g" + std::to_string(k), in = "in" + std::to_string(k);
    const uint32_t e = mr.inputs[k].elem;
    const std::string bits = std::to_string(e);
    pr.line(2, "const DPull2<EWord32> " + g + " = " +
                   (e == 32 ? in
                            : "fmap([](const EWord" + bits + "& x) { return w" + bits +
                                  "ToW32(x); }, " + in + ")") +
                   ";");
  }
  pr.line(2, "const DPull2<EWord32> m = " + matrixExprText(mr.expr) + ";");
  const std::string boundary = mr.zero ? "Boundary::Zero" : "Boundary::Clamp";
  switch (mr.out) {
    case MatrixOut::Push: pr.line(2, "return push2<Grid>(m);"); break;
    case MatrixOut::Tiles: {
      pr.line(2, "return pConcat2(fmap(");
      pr.line(3, "[](const SPull2<EWord32>& t) {");
      pr.line(4, "return exec<Block>([t](const Program<Block>& p) {");
      printTileProgram(pr, 5, Level::Block, "p", mr.body, "t");
      pr.line(4, "});");
      pr.line(3, "},");
      const std::string ts =
          "tiles(" + Printer::u(mr.tileRows) + ", " + Printer::u(mr.tileCols) + ", m)";
      const std::string dims = mr.whole           ? ""
                               : mr.transposeGrid ? ", m.cols(), m.rows()"
                                                  : ", m.rows(), m.cols()";
      pr.line(3, (mr.transposeGrid ? "transpose(" + ts + ")" : ts) + ")" + dims + ");");
      break;
    }
    case MatrixOut::Stencil: {
      const uint32_t elem = mr.narrowHalo ? mr.inputs.at(mr.expr.input).elem : 32;
      const std::string src = mr.narrowHalo ? "in" + std::to_string(mr.expr.input) : "m";
      const std::string X = "uint" + std::to_string(elem) + "_t", E = elemType(elem);
      pr.line(2, "const auto f = " + stencilFnText(mr, elem) + ";");
      if (!mr.viaHalo) {
        pr.line(2, "return stencil(" + src + ", " + Printer::u(mr.radius) + ", f, StencilOptions{" +
                       Printer::u(mr.tileRows) + ", " + Printer::u(mr.tileCols) + ", " + boundary +
                       "});");
        break;
      }
      // The stencil's blocks written out: the halo tile forced as the recipe says.
      const std::string halo = mr.haloPush ? "push2<Block>(halo)" : "halo";
      pr.line(2, "return pConcat2(fmap(");
      pr.line(3, "[f](const SPull2<" + E + ">& halo) {");
      pr.line(4, "return exec<Block>([f, halo](const Program<Block>& p) {");
      pr.line(5, "const SPull2<" + E + "> s = force2(p, " + halo + ", " +
                     paddingName(mr.haloPadding) + ");");
      pr.line(5, "return push2<Block>(mkPull2(" + Printer::u(mr.tileRows) + ", " +
                     Printer::u(mr.tileCols) +
                     ", [f, s](const EWord32& r, const EWord32& c) { return f(Neighbourhood<" + X +
                     ">(s, r, c, " + Printer::u(mr.radius) + ")); }));");
      pr.line(4, "});");
      pr.line(3, "},");
      pr.line(3, "haloTiles(" + Printer::u(mr.tileRows) + ", " + Printer::u(mr.tileCols) + ", " +
                     Printer::u(mr.radius) + ", " + src + ", " + boundary + ")), " + src +
                     ".rows(), " + src + ".cols());");
      break;
    }
  }
  pr.line(1, "}, CaptureOptions{.nvrtcOptions = {\"--fmad=false\"}});");
  pr.line(0, "}");
  return pr.out;
}

}  // namespace fuzz
