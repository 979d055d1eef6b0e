// The obsidian interpretation of a recipe (see build.hpp).
#include "build.hpp"

#include "build_shared.hpp"
#include "kernel/kernel_access.hpp"

namespace fuzz {

using namespace obsidian;

SPull<EWord32> pullStep(const Node& n, const SPull<EWord32>& x) {
  switch (n.op) {
    case Op::Map: return fmap(unaryFn(n.fn, n.constant), x);
    case Op::FloatMap: {
      const uint32_t a = n.fn, b = n.constant;
      return fmap([a, b](const EWord32& v) { return floatOp(a, b, v); }, x);
    }
    case Op::AddIndex: {
      const uint32_t b = n.constant;
      return mkPull(x.len(), [x, b](const EWord32& i) { return x[i] + i * b; });
    }
    case Op::ZipHalves: {
      auto [lo, hi] = halve(x);
      return zipWith(binaryFn(n.fn), lo, hi);
    }
    case Op::ZipEvenOdds: {
      auto [ev, od] = evenOdds(x);
      return zipWith(binaryFn(n.fn), ev, od);
    }
    case Op::Rotate: {
      auto [lo, hi] = splitAt(n.size, x);
      return conc(hi, lo);
    }
    case Op::Interleave: {
      auto [lo, hi] = halve(x);
      return upair(zip(lo, hi));
    }
    case Op::Ends: return conc(replicate(n.size, first(x)), singleton(last(x)));
    case Op::NarrowMap: {
      const uint32_t fn = n.fn, constant = n.constant, width = n.width;
      return fmap(
          [fn, constant, width](const EWord32& w) { return narrowMap(fn, constant, width, w); }, x);
    }
    case Op::FloatBits: {
      const uint32_t fn = n.fn, specials = n.specials, constant = n.constant, high = n.constantHigh;
      return fmap([fn, specials, constant,
                   high](const EWord32& w) { return floatBitsOp(fn, specials, constant, high, w); },
                  x);
    }
    case Op::BitsMap: {
      const uint32_t fn = n.fn, constant = n.constant;
      return fmap([fn, constant](const EWord32& w) { return bitsOp(fn, constant, w); }, x);
    }
    case Op::SmallFloatMap: {
      const uint32_t fn = n.fn, format = n.format, constant = n.constant;
      return fmap([fn, format,
                   constant](const EWord32& w) { return smallFloatMap(fn, format, constant, w); },
                  x);
    }
    case Op::PairMap: {
      const uint32_t fn = n.fn, format = n.format, constant = n.constant;
      return fmap(
          [fn, format, constant](const EWord32& w) { return pairMapExp(fn, format, constant, w); },
          x);
    }
    case Op::SplitFold: {
      const uint32_t a = n.fn;
      return fmap([a](const SPull<EWord32>& c) { return foldPull1(binaryFn(a), c); },
                  splitUp(n.size, x));
    }
    case Op::CoalesceFold: {
      const uint32_t a = n.fn;
      return fmap([a](const SPull<EWord32>& c) { return foldPull1(binaryFn(a), c); },
                  coalesce(n.size, x));
    }
    case Op::BinSplit: {
      const std::vector<Node> kids = n.kids;
      return binSplit(
          n.log2Parts, [kids](const SPull<EWord32>& part) { return pullSteps(kids, part); }, x);
    }
    default: break;
  }
  throw std::logic_error("fuzz: not a pull step");
}

SPull<EWord32> warpVoteStep(const Program<Warp>& q, const Node& n, const SPull<EWord32>& x) {
  const uint32_t c = n.constant;
  switch (n.fn % kWarpVotes) {
    case 0: {  // a ballot, added to every lane's word
      const uint32_t s = c % 32u;
      const EWord32 b = ballot(q, fmap([s](const EWord32& v) { return ((v >> s) & 1u) == 1u; }, x));
      return fmap([b](const EWord32& v) { return v + b; }, x);
    }
    case 1: {  // voteAny of a pull array, voteAll of a push array
      const uint32_t m = 2u + c % 60u;
      const EBool any = voteAny(q, fmap([m](const EWord32& v) { return v % m == 0u; }, x));
      const EBool all =
          voteAll(q, push<Warp>(fmap([m](const EWord32& v) { return v % m != 0u; }, x)));
      return fmap(
          [any, all](const EWord32& v) {
            return v ^ (cast<uint32_t>(any) | (cast<uint32_t>(all) << 1u));
          },
          x);
    }
    case 2: {  // matchAny: each lane's rank among its equals and their number, forced (lane i
               // reads its own mask: the register array is read by no other lane)
      const uint32_t k = 1u + c % 5u;
      const SPull<EWord32> m = matchAny(q, fmap([k](const EWord32& v) { return v % k; }, x));
      return forcePull(q, mkPull(32u, [x, m](const EWord32& i) {
                         const EWord32 mine = m[i];
                         return x[i] +
                                (popc(mine & ((EWord32(1u) << i) - 1u)) | (popc(mine) << 8u));
                       }));
    }
    default: {  // a ballot that only the odd lanes read, in a branch of a push array
      const uint32_t s = c % 32u;
      const EWord32 b = ballot(q, fmap([s](const EWord32& v) { return ((v >> s) & 1u) == 1u; }, x));
      return force(
          q, mkPush<Warp, EWord32>(32u, [x, b](const Program<Warp>& r, const Writer<EWord32>& out) {
            r.forAll(32u, [&](const Program<Thread>& t, const EWord32& l) {
              t.cond(
                  l % 2u == 1u, [&](const Program<Thread>& u) { out(u, x[l] ^ b, l); },
                  [&](const Program<Thread>& u) { out(u, x[l], l); });
            });
          }));
    }
  }
}

namespace {

EWord32 accAtomic(const Program<Thread>& t, uint32_t op, const DMutable<uint32_t>& acc,
                  const EWord32& i, const EWord32& v) {
  switch (op % kAccOps) {
    case 0: return atomicAdd(t, acc, i, v);
    case 1: return atomicSub(t, acc, i, v);
    case 2: return atomicMin(t, acc, i, v);
    case 3: return atomicMax(t, acc, i, v);
    case 4: return atomicAnd(t, acc, i, v);
    case 5: return atomicOr(t, acc, i, v);
    default: return atomicXor(t, acc, i, v);
  }
}

// A fused part over y at Thread or Block level (see PartKind), made as Printer::fusedReturn
// prints it.
SPush<Thread, EWord32> threadPart(const FusedPart& f, const SPull<EWord32>& y) {
  switch (f.kind) {
    case PartKind::Map: return push<Thread>(fmap(unaryFn(f.a, f.b), y));
    case PartKind::Reduce: return seqReduce(binaryFn(f.a), y);
    case PartKind::Scan: return seqScan(binaryFn(f.a), y);
  }
  throw std::logic_error("fuzz: unknown fused part");
}
SPush<Block, EWord32> blockPart(const Program<Block>& p, const FusedPart& f,
                                const SPull<EWord32>& y) {
  switch (f.kind) {
    case PartKind::Map: return push<Block>(fmap(unaryFn(f.a, f.b), y));
    case PartKind::Reduce: {
      const uint32_t a = f.a, c = f.c;
      return singletonPush<Block>([a, c, y](const Program<Block>& q) {
        return withCollective(c, [&](auto op, uint32_t) {
          return blockReduce(kBlockReduceAlgorithms.at(a), q, op, y);
        });
      });
    }
    case PartKind::Scan:
      return withCollective(f.c, [&](auto op, uint32_t) {
        return blockScan(kBlockScanAlgorithms.at(f.a), p, op, y);
      });
  }
  throw std::logic_error("fuzz: unknown fused part");
}

// fuse(first, the N parts), nested as the recipe says (the same parts either way).
template <size_t N, class A, class P>
auto fuseParts(bool nested, const A& first, const std::vector<P>& parts) {
  static_assert(N == 1 || N == 2);
  if constexpr (N == 1) {
    return fuse(first, parts.at(0));
  } else {
    return nested ? fuse(fuse(first, parts.at(0)), parts.at(1))
                  : fuse(first, parts.at(0), parts.at(1));
  }
}

// The end of a block program whose result is y: y fused with r's N parts (Recipe::fused), at
// Block level or in each thread over its piece of y.
template <size_t N>
auto fusedBlock(const Program<Block>& p, const Recipe& r, SPull<EWord32> y) {
  if (r.fusedForce) y = forcePull(p, y);
  if (r.fusedThread > 0) {
    const std::vector<FusedPart> fused = r.fused;
    const bool nested = r.fusedNested;
    return tConcat<Block>(fmap(
        [fused, nested](const SPull<EWord32>& c) {
          std::vector<SPush<Thread, EWord32>> parts;
          for (const FusedPart& f : fused) parts.push_back(threadPart(f, c));
          return fuseParts<N>(nested, push<Thread>(c), parts);
        },
        splitUp(r.fusedThread, y)));
  }
  std::vector<SPush<Block, EWord32>> parts;
  for (const FusedPart& f : r.fused) parts.push_back(blockPart(p, f, y));
  return fuseParts<N>(r.fusedNested, push<Block>(y), parts);
}

template <size_t N>
using Parts = std::integral_constant<size_t, N>;

// The kernel of recipe r over an In input (DPull or SPull of the input's element type).
template <class In>
Kernel buildFor(const Recipe& r, uint32_t threads, const CaptureOptions& options) {
  auto grid = [&r](const In& in) { return gridWords(r, in); };
  auto block = [&r](const Program<Block>& p, const auto& c, const Muts& m) {
    return blockWords(p, r, c, m);
  };
  auto withChunks = [&r](const In& in, const auto& f) { return chunksOf(r, in, f); };
  auto output = [&](const In& in, const Muts& m) {
    if (r.grid == Shape::Flat) return push<Grid>(grid(in));
    return withChunks(in, [&](const auto& chunks) {
      return pConcat(fmap(
          [&block, m](const auto& c) {
            return exec<Block>(
                [&block, m, c](const Program<Block>& p) { return push<Block>(block(p, c, m)); });
          },
          chunks));
    });
  };
  auto effectOf = [&](const In& in, const Muts& m) {
    const DMutable<uint32_t> acc = m.back();
    return withChunks(in, [&](const auto& chunks) {
      if (r.result == Result::EffectWrite) {
        // Block bid's result at bid * len(y): effect over distrPar, for the block index.
        return effect([&block, chunks, m, acc](const Program<Grid>& gp) {
          gp.distrPar(sizeConv(len(chunks)), [&](const Program<Block>& p, const EWord32& bid) {
            const auto c = chunks[bid];
            const SPull<EWord32> y = block(p, c, m);
            p.forAll(y.len(), [&](const Program<Thread>& t, const EWord32& i) {
              write(t, acc, bid * y.len() + i, y[i]);
            });
          });
        });
      }
      const uint32_t op = r.accOp, slots = r.accSlots;
      return forEachBlock(chunks,
                          [&block, m, acc, op, slots](const Program<Block>& p, const auto& c) {
                            const SPull<EWord32> y = block(p, c, m);
                            p.forAll(y.len(), [&](const Program<Thread>& t, const EWord32& i) {
                              accAtomic(t, op, acc, i % slots, y[i]);
                            });
                          });
    });
  };
  // The block programs' output fused with N parts: one Fused<Grid>.
  auto fusedOutput = [&]<size_t N>(Parts<N>, const In& in, const Muts& m) {
    if (r.grid == Shape::Flat) throw std::logic_error("fuzz: fused parts without blocks");
    return withChunks(in, [&](const auto& chunks) {
      return pConcat(fmap(
          [&block, &r, m](const auto& c) {
            return exec<Block>([&block, &r, m, c](const Program<Block>& p) {
              return fusedBlock<N>(p, r, block(p, c, m));
            });
          },
          chunks));
    });
  };
  // Beside an effect: the grid-level array fused with N parts over its chunks.
  auto gridFused = [&]<size_t N>(Parts<N>, const In& in) {
    return pConcat(fmap(
        [&r](const SPull<EWord32>& c) {
          return exec<Block>([&r, c](const Program<Block>& p) { return fusedBlock<N>(p, r, c); });
        },
        splitUp(r.chunk, grid(in))));
  };
  const uint32_t bins = r.globalBins ? 1 : 0;
  // The result of the recipe with N fused parts (0: none), each kind in its tuple order.
  auto withParts = [&]<size_t N>(Parts<N> parts) {
    auto out = [&](const In& in, const Muts& m) {
      if constexpr (N == 0) {
        return output(in, m);
      } else {
        return fusedOutput(parts, in, m);
      }
    };
    auto gridOut = [&](const In& in) {
      if constexpr (N == 0) {
        return push<Grid>(grid(in));
      } else {
        return gridFused(parts, in);
      }
    };
    if (r.result == Result::Output) {
      // A vector store's output (no fused parts then): in build_store.cpp.
      if constexpr (N == 0) {
        if (r.store != StoreForm::None) return buildStoreFor<In>(r, threads, options, bins);
      }
      if (!r.gridOutput) return captureWith<In, 0>(r, threads, options, bins, out);
      if (r.gridFirst) {
        return captureWith<In, 0>(r, threads, options, bins, [&](const In& in, const Muts& m) {
          return hana::make_tuple(push<Grid>(grid(in)), out(in, m));
        });
      }
      return captureWith<In, 0>(r, threads, options, bins, [&](const In& in, const Muts& m) {
        return hana::make_tuple(out(in, m), push<Grid>(grid(in)));
      });
    }
    if (!r.gridOutput) return captureWith<In, 1>(r, threads, options, 1 + bins, effectOf);
    if (r.effectFirst) {
      return captureWith<In, 1>(r, threads, options, 1 + bins, [&](const In& in, const Muts& m) {
        return hana::make_tuple(effectOf(in, m), gridOut(in));
      });
    }
    return captureWith<In, 1>(r, threads, options, 1 + bins, [&](const In& in, const Muts& m) {
      return hana::make_tuple(gridOut(in), effectOf(in, m));
    });
  };
  switch (r.fused.size()) {
    case 0: return withParts(Parts<0>{});
    case 1: return withParts(Parts<1>{});
    case 2: return withParts(Parts<2>{});
    default: throw std::logic_error("fuzz: more than two fused parts");
  }
}

// ------------------------------------------------------------------ matrices
using Tile = SPull2<EWord32>;
using Mat = DPull2<EWord32>;
using MatrixResult = Push2<Grid, EWord32, EWord32, EWord32>;

Padding paddingOf(uint32_t d) { return d == 0 ? Padding::Auto : Padding::None; }

Mat matrixExpr(const MExpr& e, const std::vector<Mat>& g) {
  switch (e.kind) {
    case MExprKind::Input: return g.at(e.input);
    case MExprKind::Map: return fmap(unaryFn(e.fn, e.constant), matrixExpr(e.kids.at(0), g));
    case MExprKind::Zip:
      return zipWith(binaryFn(e.fn), matrixExpr(e.kids.at(0), g), matrixExpr(e.kids.at(1), g));
    case MExprKind::Transpose: return transpose(matrixExpr(e.kids.at(0), g));
  }
  throw std::logic_error("fuzz: unknown matrix expression");
}

template <class L>
Push2<L, uint32_t, uint32_t, EWord32> tileProgram(const Program<L>& p,
                                                  const std::vector<TileNode>& ops, Tile t);

// pConcat2 of the kids' programs one level below L over the tiles of t (see TileOp::Nest).
template <class L>
Push2<L, uint32_t, uint32_t, EWord32> nestPush(const TileNode& n, const Tile& t) {
  using Down = std::conditional_t<std::is_same_v<L, Block>, Warp, Thread>;
  const std::vector<TileNode> kids = n.kids;
  auto sub = [kids](const Tile& s) {
    return exec<Down>([kids, s](const Program<Down>& q) { return tileProgram<Down>(q, kids, s); });
  };
  const auto ts = tiles(n.tileRows, n.tileCols, t);
  if (transposes(kids)) return pConcat2(fmap(sub, transpose(ts)), t.cols(), t.rows());
  return pConcat2(fmap(sub, ts), t.rows(), t.cols());
}

// force2 of tile t as step n says: the pull tile (Warp, Block) or push2<L> of it.
template <class X, class L>
SPull2<Exp<X>> forceTile(const Program<L>& p, const TileNode& n, const SPull2<Exp<X>>& t) {
  if constexpr (!std::is_same_v<L, Thread>) {
    if (!n.push) return force2(p, t, paddingOf(n.padding));
  }
  return force2(p, push2<L>(t), paddingOf(n.padding));
}

template <class X, class L>
Tile narrowForceTile(const Program<L>& p, const TileNode& n, const Tile& t) {
  const auto narrow = fmap([](const EWord32& w) { return toNarrow<X>(w); }, t);
  return fmap([](const Exp<X>& v) { return widen(v); }, forceTile<X>(p, n, narrow));
}

template <class L>
Tile tileStep(const Program<L>& p, const TileNode& n, const Tile& t) {
  switch (n.op) {
    case TileOp::Map: return fmap(unaryFn(n.fn, n.constant), t);
    case TileOp::AddIndex: {
      const uint32_t b = n.constant;
      return mkPull2(t.rows(), t.cols(),
                     [t, b](const EWord32& r, const EWord32& c) { return t(r, c) + r * b + c; });
    }
    case TileOp::Transpose: return transpose(t);
    case TileOp::ZipRotate: {
      const uint32_t rows = t.rows(), cols = t.cols(), dr = n.rowShift, dc = n.colShift;
      return zipWith(
          binaryFn(n.fn), t,
          mkPull2(rows, cols, [t, rows, cols, dr, dc](const EWord32& r, const EWord32& c) {
            return t((r + dr) % rows, (c + dc) % cols);
          }));
    }
    case TileOp::Force: return forceTile<uint32_t>(p, n, t);
    case TileOp::NarrowForce:
      return n.width == 8 ? narrowForceTile<uint8_t>(p, n, t) : narrowForceTile<uint16_t>(p, n, t);
    case TileOp::Nest:
      if constexpr (!std::is_same_v<L, Thread>) {
        return force2(p, nestPush<L>(n, t), paddingOf(n.padding));
      }
      break;
  }
  throw std::logic_error("fuzz: tile step not available at level " + levelName(levelOf<L>()));
}

// The tile program: its steps, then its last step's push array where that is a nest, else
// push2<L> of the tile (as Printer's printTileProgram prints it).
template <class L>
Push2<L, uint32_t, uint32_t, EWord32> tileProgram(const Program<L>& p,
                                                  const std::vector<TileNode>& ops, Tile t) {
  for (size_t k = 0; k < ops.size(); ++k) {
    if constexpr (!std::is_same_v<L, Thread>) {
      if (ops[k].op == TileOp::Nest && k + 1 == ops.size()) return nestPush<L>(ops[k], t);
    }
    t = tileStep<L>(p, ops[k], t);
  }
  return push2<L>(t);
}

MatrixResult gridTiles(const MatrixRecipe& mr, const Mat& m) {
  const std::vector<TileNode> body = mr.body;
  auto block = [body](const Tile& t) {
    return exec<Block>(
        [body, t](const Program<Block>& p) { return tileProgram<Block>(p, body, t); });
  };
  const auto ts = tiles(mr.tileRows, mr.tileCols, m);
  if (mr.transposeGrid) {
    const auto arr = fmap(block, transpose(ts));
    return mr.whole ? pConcat2(arr) : pConcat2(arr, m.cols(), m.rows());
  }
  const auto arr = fmap(block, ts);
  return mr.whole ? pConcat2(arr) : pConcat2(arr, m.rows(), m.cols());
}

// The stencil over m (of words, or a narrow input read as its own type).
template <class X>
MatrixResult stencilOf(const MatrixRecipe& mr, const DPull2<Exp<X>>& m) {
  const std::vector<StencilTerm> terms = mr.terms;
  const auto f = [terms](const Neighbourhood<X>& nb) {
    EWord32 acc = widenLane(nb(terms.at(0).dr, terms.at(0).dc));
    for (size_t k = 1; k < terms.size(); ++k) {
      acc = binaryOp(terms[k].op, acc, widenLane(nb(terms[k].dr, terms[k].dc)));
    }
    return acc;
  };
  const Boundary boundary = mr.zero ? Boundary::Zero : Boundary::Clamp;
  const uint32_t th = mr.tileRows, tw = mr.tileCols, radius = mr.radius;
  if (!mr.viaHalo) return stencil(m, radius, f, StencilOptions{th, tw, boundary});
  // The stencil's blocks written out, the halo tile forced as the recipe says.
  const Padding padding = paddingOf(mr.haloPadding);
  const bool push = mr.haloPush;
  return pConcat2(
      fmap(
          [f, th, tw, radius, padding, push](const SPull2<Exp<X>>& halo) {
            return exec<Block>([f, halo, th, tw, radius, padding, push](const Program<Block>& p) {
              const SPull2<Exp<X>> s =
                  push ? force2(p, push2<Block>(halo), padding) : force2(p, halo, padding);
              return push2<Block>(
                  mkPull2(th, tw, [f, s, radius](const EWord32& r, const EWord32& c) {
                    return f(Neighbourhood<X>(s, r, c, radius));
                  }));
            });
          },
          haloTiles(th, tw, radius, m, boundary)),
      m.rows(), m.cols());
}

template <class X>
Mat widenMatrix(const DPull2<Exp<X>>& m) {
  if constexpr (std::is_same_v<X, uint32_t>) {
    return m;
  } else {
    return fmap([](const Exp<X>& x) { return widen(x); }, m);
  }
}

// The kernel's result over its matrix parameters `in` (a tuple of DPull2 of their types).
template <class Tuple>
MatrixResult matrixResult(const MatrixRecipe& mr, const Tuple& in) {
  std::vector<Mat> g;
  std::apply([&g](const auto&... x) { (g.push_back(widenMatrix(x)), ...); }, in);
  const Mat m = matrixExpr(mr.expr, g);
  switch (mr.out) {
    case MatrixOut::Push: return push2<Grid>(m);
    case MatrixOut::Tiles: return gridTiles(mr, m);
    case MatrixOut::Stencil:
      if (!mr.narrowHalo) return stencilOf(mr, m);
      if constexpr (std::tuple_size_v<Tuple> == 2) {
        if (mr.expr.input == 1) return stencilOf(mr, std::get<1>(in));
      }
      return stencilOf(mr, std::get<0>(in));
  }
  throw std::logic_error("fuzz: unknown matrix output");
}

// The matrix kernel of r over inputs of element types X..., then the rest's types.
template <class... X>
Kernel buildMatrix(const Recipe& r, uint32_t threads, const CaptureOptions& options) {
  const std::vector<MatrixInput>& inputs = r.matrix->inputs;
  constexpr size_t k = sizeof...(X);
  if constexpr (k > 0) {
    if (k == inputs.size()) {
      return capture(
          "fuzz", threads,
          [&r](DPull2<Exp<X>>... in) { return matrixResult(*r.matrix, std::make_tuple(in...)); },
          options);
    }
  }
  if constexpr (k < 2) {
    switch (inputs.at(k).elem) {
      case 8: return buildMatrix<X..., uint8_t>(r, threads, options);
      case 16: return buildMatrix<X..., uint16_t>(r, threads, options);
      default: return buildMatrix<X..., uint32_t>(r, threads, options);
    }
  }
  throw std::logic_error("fuzz: a matrix kernel of more than two inputs");
}

template <class X>
Kernel buildWith(const Recipe& r, uint32_t threads, const CaptureOptions& options) {
  return r.staticInput ? buildFor<SPull<Exp<X>>>(r, threads, options)
                       : buildFor<DPull<Exp<X>>>(r, threads, options);
}

}  // namespace

Kernel buildKernel(const Recipe& r, uint32_t threads, bool plain, int dropBarrier) {
  CaptureOptions options;
  options.reuseSharedMemory = !plain;
  options.shareSubexpressions = !plain;
  // Two roundings for a * b + c on the GPU too, as in the reference (see floatOp).
  options.nvrtcOptions = {"--fmad=false"};
  if (r.staticInput) options.staticLengths = {static_cast<uint32_t>(inputLength(r))};
  const Kernel k = r.matrix       ? buildMatrix<>(r, threads, options)
                   : r.elem == 8  ? buildWith<uint8_t>(r, threads, options)
                   : r.elem == 16 ? buildWith<uint16_t>(r, threads, options)
                                  : buildWith<uint32_t>(r, threads, options);
  if (dropBarrier < 0) return k;
  Faults faults;
  faults.dropBarrier = dropBarrier;
  return obsidian::testing::withFaults(k, faults);
}

}  // namespace fuzz
