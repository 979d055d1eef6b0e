// Printing: C++ source that rebuilds a 1-D recipe's kernel with the library's combinators (the
// form of a shrunk failure and of a regression test; fuzz.printed_source checks that it builds
// the very CUDA that build.cpp builds). Matrix recipes: recipe_matrix_print.cpp.
#include "recipe_internal.hpp"
#include "scalar_ops.hpp"

namespace fuzz {

namespace {
constexpr const char* kReduceAlgs[] = {"Red1", "Red2", "Red3", "Red4",
                                       "Red5", "Red6", "Red7", "WarpShuffle"};
constexpr const char* kScanAlgs[] = {"Sklansky", "Sklansky2", "Sklansky3", "KoggeStone",
                                     "ThreadSequential"};

// The vector store's value of a word x (storeValue), as a local lambda `sv`.
std::string storeValueLambda(const Recipe& r) {
  return "const auto sv = [](const EWord32& x) { return " + storeValueText(r.storeType) + "; };";
}
// The vectors of r's vector store over the words y (build_store.cpp's storeVectors), in order.
std::string storeVectorsText(const Recipe& r, const std::string& y) {
  const uint32_t w = r.storeWidth;
  std::string lanes;
  for (uint32_t k = 0; k < w; ++k) {
    lanes += std::string(k ? ", " : "") + "sv(" + y + "[j * " + Printer::u(w) + " + " +
             Printer::u((k + r.storeRotate) % w) + "])";
  }
  return "mkPull(" + y + ".len() / " + Printer::u(w) + ", [" + y + "](const EWord32& j) { " +
         storeValueLambda(r) + " return Vector<" + std::to_string(w) + ", " +
         storeTypeName(r.storeType) + ">{" + lanes + "}; })";
}
// The values of y's words from `whole` (a local of that name) on (build_store.cpp's storeTail).
std::string storeTailText(const Recipe& r, const std::string& y, const std::string& whole) {
  return "mkPull(" + y + ".len() - " + whole + ", [" + y + ", " + whole + "](const EWord32& i) { " +
         storeValueLambda(r) + " return sv(" + y + "[" + whole + " + i]); })";
}
// unvectors<W>(push<L>(the vectors of y)).
std::string unvectorsText(const Recipe& r, const std::string& L, const std::string& y) {
  return "unvectors<" + std::to_string(r.storeWidth) + ">(push<" + L + ">(" +
         storeVectorsText(r, y) + "))";
}
}  // namespace

// What block program p returns for its result y in the block forms of r's vector store (as
// build_store.cpp's blockStore makes it; Whole: push<Block> of the vectors).
void Printer::storeReturn(int ind, const Recipe& r, const std::string& y) {
  const std::string w = u(r.storeWidth), piece = u(r.storePiece), c = fresh("c");
  switch (r.store) {
    case StoreForm::Blocks: line(ind, "return " + unvectorsText(r, "Block", y) + ";"); break;
    case StoreForm::Whole: line(ind, "return push<Block>(" + storeVectorsText(r, y) + ");"); break;
    case StoreForm::Threads:
      line(ind, "return tConcat<Block>(fmap([](const SPull<EWord32>& " + c + ") { return " +
                    unvectorsText(r, "Thread", c) + "; }, splitUp(" + piece + ", " + y + ")));");
      break;
    case StoreForm::Warps:
      line(ind, "return pConcat(fmap([](const SPull<EWord32>& " + c + ") {");
      line(ind + 1, "return exec<Warp>([" + c + "](const Program<Warp>&) { return " +
                        unvectorsText(r, "Warp", c) + "; });");
      line(ind, "}, splitUp(" + piece + ", " + y + ")));");
      break;
    case StoreForm::Shared: {
      const std::string e = "Exp<" + std::string(storeTypeName(r.storeType)) + ">";
      const std::string vecs = fresh("stored"), whole = fresh("whole"), s = fresh("s");
      line(ind, "const auto " + vecs + " = " + unvectorsText(r, "Block", y) + ";");
      line(ind, "const uint32_t " + whole + " = " + y + ".len() / " + w + " * " + w + ";");
      line(ind, "const SPull<" + e + "> " + s + " = " + whole + " == " + y + ".len() ? force(p, " +
                    vecs + ") : force(p, concP(" + vecs + ", push<Block>(" +
                    storeTailText(r, y, whole) + ")));");
      line(ind, "return push<Block>(" + s + ");");
      break;
    }
    case StoreForm::None:
    case StoreForm::Grid: throw std::logic_error("fuzz: not a block form of vector store");
  }
}

std::string Printer::unaryLambda(uint32_t fn, uint32_t constant) {
  return "[](const EWord32& x) { return " + unaryText(fn, constant) + "; }";
}
std::string Printer::binaryLambda(uint32_t fn) {
  return "[](const EWord32& a, const EWord32& b) { return " + binaryText(fn) + "; }";
}

// Prints the steps; returns the name of the result.
std::string Printer::steps(int ind, Level level, const std::string& p, const std::vector<Node>& ops,
                           std::string x) {
  for (const Node& n : ops) x = step(ind, level, p, n, x);
  return x;
}

// Prints the end of block program p: its result y fused with r's parts, returned. Each part
// is a local of its own, made in order (as build.cpp makes them).
void Printer::fusedReturn(int ind, const Recipe& r, const std::string& p, std::string y) {
  if (r.fusedForce) {
    const std::string forced = fresh("a");
    line(ind, "const SPull<EWord32> " + forced + " = forcePull(" + p + ", " + y + ");");
    y = forced;
  }
  if (r.fusedThread == 0) {
    const std::vector<std::string> parts = fusedParts(ind, r, "Block", p, y);
    line(ind, "return " + fuseText(r, "push<Block>(" + y + ")", parts) + ";");
    return;
  }
  const std::string c = fresh("c");
  line(ind, "return tConcat<Block>(fmap(");
  line(ind + 1, "[](const SPull<EWord32>& " + c + ") {");
  const std::vector<std::string> parts = fusedParts(ind + 2, r, "Thread", "", c);
  line(ind + 2, "return " + fuseText(r, "push<Thread>(" + c + ")", parts) + ";");
  line(ind + 1, "},");
  line(ind + 1, "splitUp(" + u(r.fusedThread) + ", " + y + ")));");
}

// Prints r's fused parts over y at level L (Block or Thread) as locals; returns their names.
std::vector<std::string> Printer::fusedParts(int ind, const Recipe& r, const std::string& L,
                                             const std::string& p, const std::string& y) {
  std::vector<std::string> names;
  for (const FusedPart& f : r.fused) {
    std::string what;
    switch (f.kind) {
      case PartKind::Map:
        what = "push<" + L + ">(fmap(" + unaryLambda(f.a, f.b) + ", " + y + "))";
        break;
      case PartKind::Reduce:
        if (L == "Thread") {
          what = "seqReduce(" + binaryLambda(f.a) + ", " + y + ")";
        } else {
          const std::string q = fresh("q");
          what = "singletonPush<Block>([" + y + "](const Program<Block>& " + q +
                 ") { return blockReduce(BlockReduceAlgorithm::" + kReduceAlgs[f.a % 8] + ", " + q +
                 ", " + collectiveText(f.c) + ", " + y + "); })";
        }
        break;
      case PartKind::Scan:
        what = L == "Thread" ? "seqScan(" + binaryLambda(f.a) + ", " + y + ")"
                             : "blockScan(BlockScanAlgorithm::" + std::string(kScanAlgs[f.a % 5]) +
                                   ", " + p + ", " + collectiveText(f.c) + ", " + y + ")";
        break;
    }
    names.push_back(fresh("part"));
    line(ind, "const auto " + names.back() + " = " + what + ";");
  }
  return names;
}
std::string Printer::fuseText(const Recipe& r, const std::string& first,
                              const std::vector<std::string>& parts) {
  if (parts.size() == 2 && r.fusedNested) {
    return "fuse(fuse(" + first + ", " + parts[0] + "), " + parts[1] + ")";
  }
  std::string s = "fuse(" + first;
  for (const std::string& part : parts) s += ", " + part;
  return s + ")";
}

std::string Printer::step(int ind, Level level, const std::string& p, const Node& n,
                          const std::string& x) {
  const std::string L = levelName(level);
  const std::string y = fresh("a");
  const std::string def = "const SPull<EWord32> " + y + " = ";
  auto halves = [&](const std::string& fn) {
    const std::string lo = fresh("lo"), hi = fresh("hi");
    line(ind,
         "const auto [" + lo + ", " + hi + "] = " + fn + (fn.back() == ' ' ? "" : "(") + x + ");");
    return std::make_pair(lo, hi);
  };
  auto nested = [&](const std::string& inner, const char* combine) {
    const std::string c = fresh("c"), q = fresh("q");
    line(ind, def + "force(" + p + ", " + combine + "(fmap(");
    line(ind + 1, "[](const SPull<EWord32>& " + c + ") {");
    line(ind + 2,
         "return exec<" + inner + ">([" + c + "](const Program<" + inner + ">& " + q + ") {");
    const Level il = inner == "Thread" ? Level::Thread
                     : inner == "Warp" ? Level::Warp
                                       : Level::Block;
    const std::string r = steps(ind + 3, il, q, n.kids, c);
    line(ind + 3, "return push<" + inner + ">(" + r + ");");
    line(ind + 2, "});");
    line(ind + 1, "},");
    line(ind + 1, "splitUp(" + u(n.size) + ", " + x + "))));");
  };
  auto tConcatOf = [&](const std::string& fn) {
    line(ind, def + "force(" + p + ", tConcat<" + L + ">(fmap(" + fn + ", " + x + ")));");
  };
  switch (n.op) {
    case Op::Map: line(ind, def + "fmap(" + unaryLambda(n.fn, n.constant) + ", " + x + ");"); break;
    case Op::FloatMap:
      line(ind, def + "fmap([](const EWord32& x) { return " + floatText(n.fn, n.constant) +
                    "; }, " + x + ");");
      break;
    case Op::AddIndex:
      line(ind, def + "mkPull(" + x + ".len(), [" + x + "](const EWord32& i) { return " + x +
                    "[i] + i * " + u(n.constant) + "; });");
      break;
    case Op::ZipHalves:
    case Op::ZipEvenOdds: {
      const auto [lo, hi] = halves(n.op == Op::ZipHalves ? "halve" : "evenOdds");
      line(ind, def + "zipWith(" + binaryLambda(n.fn) + ", " + lo + ", " + hi + ");");
      break;
    }
    case Op::Rotate: {
      const auto [lo, hi] = halves(("splitAt(" + u(n.size) + ", ").c_str());
      line(ind, def + "conc(" + hi + ", " + lo + ");");
      break;
    }
    case Op::Interleave: {
      const auto [lo, hi] = halves("halve");
      line(ind, def + "upair(zip(" + lo + ", " + hi + "));");
      break;
    }
    case Op::Ends:
      line(ind, def + "conc(replicate(" + u(n.size) + ", first(" + x + ")), singleton(last(" + x +
                    ")));");
      break;
    case Op::Load:
      line(ind, def + "force(" + p + ", load<" + L + ">(" + u(n.size) + ", " + x + "));");
      break;
    case Op::Take:
      line(ind, def + "force(" + p + ", takeP(" + u(n.size) + ", push<" + L + ">(" + x + ")));");
      break;
    case Op::ForceZip: {
      const auto [lo, hi] = halves("halve");
      const std::string lo2 = fresh("lo"), hi2 = fresh("hi");
      line(ind, "const auto [" + lo2 + ", " + hi2 + "] = unzip(forcePull(" + p + ", zip(" + lo +
                    ", " + hi + ")));");
      line(ind, def + "zipWith(" + binaryLambda(n.fn) + ", " + lo2 + ", " + hi2 + ");");
      break;
    }
    case Op::ConcP: {
      const auto [lo, hi] = halves("halve");
      line(ind, def + "force(" + p + ", concP(push<" + L + ">(" + hi + "), push<" + L + ">(" + lo +
                    ")));");
      break;
    }
    case Op::SplitFold:
    case Op::CoalesceFold:
      line(ind, def + "fmap([](const SPull<EWord32>& c) { return foldPull1(" + binaryLambda(n.fn) +
                    ", c); }, " + (n.op == Op::SplitFold ? "splitUp(" : "coalesce(") + u(n.size) +
                    ", " + x + "));");
      break;
    case Op::BinSplit: {
      const std::string part = fresh("part");
      line(ind, def + "binSplit(" + u(n.log2Parts) + ", [](const SPull<EWord32>& " + part + ") {");
      const std::string r = steps(ind + 1, level, p, n.kids, part);
      line(ind + 1, "return " + r + ";");
      line(ind, "}, " + x + ");");
      break;
    }
    case Op::Force: line(ind, def + "forcePull(" + p + ", " + x + ");"); break;
    case Op::SeqReduce:
    case Op::SeqScan:
      line(ind, def + "force(" + p + ", tConcat<" + L + ">(fmap([](const SPull<EWord32>& c) {");
      line(ind + 1, std::string("return ") + (n.op == Op::SeqReduce ? "seqReduce(" : "seqScan(") +
                        binaryLambda(n.fn) + ", c);");
      line(ind, "}, splitUp(" + u(n.size) + ", " + x + "))));");
      break;
    case Op::Iterate:
      if (!n.until) {
        tConcatOf("[](const EWord32& v) { return seqIterate(EWord32(" + u(n.limit) +
                  "), [](const EWord32& i, const EWord32& s) { return s * 3u + i; }, v); }");
      } else {
        tConcatOf(
            "[](const EWord32& v) { return seqUntil([](const EWord32& s) { return s >> "
            "1u; }, [](const EWord32& s) { return s > " +
            u(n.limit) + "; }, v); }");
      }
      break;
    case Op::Nest: nested(level == Level::Block ? "Warp" : "Thread", "pConcat"); break;
    case Op::ThreadNest: nested("Thread", ("tConcat<" + L + ">").c_str()); break;
    case Op::SeqNest: nested(L, "sConcat"); break;
    case Op::BlockReduce:
    case Op::WarpReduce: {
      const std::string r = fresh("r");
      line(ind, "const EWord32 " + r + " = " +
                    (n.op == Op::BlockReduce ? "blockReduce(BlockReduceAlgorithm::" +
                                                   std::string(kReduceAlgs[n.alg % 8]) + ", "
                                             : std::string("warpReduce(")) +
                    p + ", " + collectiveText(n.fn) + ", " + x + ");");
      line(ind, def + "fmap([" + r + "](const EWord32& v) { return v + " + r + "; }, " + x + ");");
      break;
    }
    case Op::BlockScan:
    case Op::WarpScan: {
      const std::string alg =
          n.op == Op::BlockScan ? "BlockScanAlgorithm::" + std::string(kScanAlgs[n.alg % 5]) + ", "
                                : "";
      const std::string scan = n.op == Op::BlockScan ? "block" : "warp";
      const std::string what =
          n.exclusive ? scan + "ExclusiveScan(" + alg + p + ", " + collectiveText(n.fn) +
                            ", EWord32(" + u(collectiveIdentity(n.fn)) + "), " + x + ")"
                      : scan + "Scan(" + alg + p + ", " + collectiveText(n.fn) + ", " + x + ")";
      line(ind, def + (n.op == Op::BlockScan ? "force(" : "forcePull(") + p + ", " + what + ");");
      break;
    }
    case Op::BlockLoadStore: {
      static const char* const algs[] = {"Direct", "Striped", "WarpStriped", "Vectorized"};
      const std::string items = fresh("items");
      line(ind, "const uint32_t " + items + " = " + x + ".len() / " + u(threads) + ";");
      line(ind, def + "force(" + p + ", blockStore(BlockLoadAlgorithm::" + algs[n.storeAlg % 4] +
                    ", " + p + ", " + items + ", blockLoad(BlockLoadAlgorithm::" +
                    algs[n.loadAlg % 4] + ", " + p + ", " + items + ", " + x + ")));");
      break;
    }
    case Op::WarpExchange: {
      const std::string items = fresh("items");
      line(ind, "const uint32_t " + items + " = " + x + ".len() / 32u;");
      line(ind, def + "force(" + p + ", warpStoreStriped(" + p + ", " + items +
                    ", warpLoadStriped(" + p + ", " + items + ", " + x + ")));");
      break;
    }
    case Op::BlockHistogram: {
      const std::string h = fresh("h");
      line(ind, "const SharedHistogram " + h + " = newSharedHistogram(" + p + ", " + u(n.bins) +
                    ", " + u(1u << n.log2Copies) + ");");
      line(ind, "blockHistogram(" + p + ", " + h + ", evenBinning<uint32_t>(" + u(n.bins) + ", " +
                    u(n.lower) + ", " + u(n.upper) + "), " + x + ");");
      line(ind, p + ".sync();");
      line(ind, def + "mkPull(" + u(n.bins) + ", [" + h + "](const EWord32& b) { return binTotal(" +
                    h + ", b); });");
      break;
    }
    case Op::Histogram: {
      const std::string h = fresh("h");
      line(ind, "const SMutable<uint32_t> " + h + " = newShared<uint32_t>(" + p + ", " + u(n.bins) +
                    ");");
      line(ind, p + ".forAll(" + u(n.bins) + ", [&](const Program<Thread>& t, const EWord32& i) {" +
                    " write(t, " + h + ", i, 0u); });");
      line(ind, p + ".sync();");
      line(ind, p + ".forAll(" + x + ".len(), [&](const Program<Thread>& t, const EWord32& i) {" +
                    " atomicAdd(t, " + h + ", " + x + "[i] % " + u(n.bins) + ", 1u); });");
      line(ind, p + ".sync();");
      line(ind, def + h + ".pull();");
      break;
    }
    case Op::NarrowMap:
      line(ind, def + "fmap(" + narrowMapText(n.fn, n.constant, n.width) + ", " + x + ");");
      break;
    case Op::BitsMap:
      line(ind, def + "fmap(" + bitsText(n.fn, n.constant) + ", " + x + ");");
      break;
    case Op::SmallFloatMap:
      line(ind, def + "fmap(" + smallFloatText(n.fn, n.format, n.constant) + ", " + x + ");");
      break;
    case Op::PairMap:
      line(ind, def + "fmap(" + pairText(n.fn, n.format, n.constant) + ", " + x + ");");
      break;
    case Op::SmallFloatForce: {
      const std::string s = smallName(n.format), e = "Exp<" + s + ">";
      const std::string values =
          "fmap([](const EWord32& x) { return " + smallInText(n.format) + "; }, " + x + ")";
      const auto bitsOf = [](const std::string& type) {
        return "[](const " + type + "& v) { return bits32(v); }";
      };
      switch (n.fn % kSmallFloatForces) {
        case 1:
        case 2: {
          const std::string fp8 = n.fn % kSmallFloatForces == 1 ? "Fp8E4M3" : "Fp8E5M2";
          line(ind, def + "fmap(" + bitsOf("Exp<" + fp8 + ">") + ", forcePull(" + p +
                        ", fmap([](const " + e + "& v) { return cast<" + fp8 + ">(v); }, " +
                        values + ")));");
          break;
        }
        case 3: {
          const std::string lo = fresh("lo"), hi = fresh("hi");
          line(ind, "const auto [" + lo + ", " + hi + "] = unzip(forcePull(" + p + ", zip(" +
                        values + ", " + x + ")));");
          line(ind, def + "zipWith([](const " + e +
                        "& v, const EWord32& w) { return bits32(v) + w; }, " + lo + ", " + hi +
                        ");");
          break;
        }
        default:
          line(ind, def + "fmap(" + bitsOf(e) + ", forcePull(" + p + ", " + values + "));");
          break;
      }
      break;
    }
    case Op::WarpVote: warpVote(ind, p, n, x, def); break;
    case Op::ThreadItems: threadItems(ind, L, p, n, x, def); break;
    case Op::BlockRadixSort: blockRadixSort(ind, p, n, x, def); break;
    case Op::BlockDiscontinuity: blockDiscontinuity(ind, p, n, x, def); break;
    case Op::BlockMergeSort: blockMergeSort(ind, p, n, x, def); break;
    case Op::FloatBits:
      line(ind, def + "fmap(" + floatBitsText(n.fn, n.specials, n.constant, n.constantHigh) + ", " +
                    x + ");");
      break;
    case Op::FloatScan: {
      const std::string floats = fresh("f");
      line(ind, "const SPull<EFloat> " + floats + " = fmap([](const EWord32& x) { return " +
                    floatInText(n.specials) + "; }, " + x + ");");
      const std::string bitsOf = "[](const EFloat& f) { return bitcast<uint32_t>(f); }";
      if (n.fn >= kFloatScanOps) {
        line(ind, def + "fmap(" + bitsOf + ", forcePull(" + p + ", " + floats + "));");
        break;
      }
      line(ind, def + "fmap(" + bitsOf + ", force(" + p + ", tConcat<" + L +
                    ">(fmap([](const SPull<EFloat>& c) {");
      line(ind + 1, "return seqScan(" + floatScanText(n.fn) + ", c);");
      line(ind, "}, splitUp(" + u(n.size) + ", " + floats + ")))));");
      break;
    }
    case Op::NarrowForce: {
      const std::string bits = std::to_string(n.width), N = "EWord" + bits;
      const std::string narrow =
          "fmap([](const EWord32& w) { return w32ToW" + bits + "(w); }, " + x + ")";
      if (!n.zipped) {
        line(ind, def + "fmap([](const " + N + "& v) { return w" + bits +
                      "ToW32(v); }, forcePull(" + p + ", " + narrow + "));");
        break;
      }
      const std::string lo = fresh("lo"), hi = fresh("hi");
      line(ind, "const auto [" + lo + ", " + hi + "] = unzip(forcePull(" + p + ", zip(" + narrow +
                    ", " + x + ")));");
      line(ind, def + "zipWith([](const " + N + "& v, const EWord32& w) { return w" + bits +
                    "ToW32(v) + w; }, " + lo + ", " + hi + ");");
      break;
    }
  }
  return y;
}

// A WarpVote step (as build.cpp's warpVoteStep) over x in Warp program p; def starts the
// result's definition.
void Printer::warpVote(int ind, const std::string& p, const Node& n, const std::string& x,
                       const std::string& def) {
  const uint32_t c = n.constant;
  const std::string bitSet =
      "fmap([](const EWord32& v) { return ((v >> " + u(c % 32u) + ") & 1u) == 1u; }, " + x + ")";
  switch (n.fn % kWarpVotes) {
    case 0: {
      const std::string b = fresh("b");
      line(ind, "const EWord32 " + b + " = ballot(" + p + ", " + bitSet + ");");
      line(ind, def + "fmap([" + b + "](const EWord32& v) { return v + " + b + "; }, " + x + ");");
      break;
    }
    case 1: {
      const std::string any = fresh("any"), all = fresh("all"), m = u(2u + c % 60u);
      line(ind, "const EBool " + any + " = voteAny(" + p +
                    ", fmap([](const EWord32& v) { return v % " + m + " == 0u; }, " + x + "));");
      line(ind, "const EBool " + all + " = voteAll(" + p +
                    ", push<Warp>(fmap([](const EWord32& v) { return v % " + m + " != 0u; }, " + x +
                    ")));");
      line(ind, def + "fmap([" + any + ", " + all +
                    "](const EWord32& v) { return v ^ (cast<uint32_t>(" + any +
                    ") | (cast<uint32_t>(" + all + ") << 1u)); }, " + x + ");");
      break;
    }
    case 2: {
      const std::string m = fresh("match");
      line(ind, "const SPull<EWord32> " + m + " = matchAny(" + p +
                    ", fmap([](const EWord32& v) { return v % " + u(1u + c % 5u) + "; }, " + x +
                    "));");
      line(ind,
           def + "forcePull(" + p + ", mkPull(32u, [" + x + ", " + m + "](const EWord32& i) {");
      line(ind + 1, "const EWord32 mine = " + m + "[i];");
      line(ind + 1,
           "return " + x + "[i] + (popc(mine & ((EWord32(1u) << i) - 1u)) | (popc(mine) << 8u));");
      line(ind, "}));");
      break;
    }
    default: {
      const std::string b = fresh("b");
      line(ind, "const EWord32 " + b + " = ballot(" + p + ", " + bitSet + ");");
      line(ind, def + "force(" + p + ", mkPush<Warp, EWord32>(32u, [" + x + ", " + b +
                    "](const Program<Warp>& r, const Writer<EWord32>& out) {");
      line(ind + 1, "r.forAll(32u, [&](const Program<Thread>& t, const EWord32& l) {");
      line(ind + 2, "t.cond(l % 2u == 1u, [&](const Program<Thread>& u) { out(u, " + x + "[l] ^ " +
                        b + ", l); },");
      line(ind + 2, "       [&](const Program<Thread>& u) { out(u, " + x + "[l], l); });");
      line(ind + 1, "});");
      line(ind, "}));");
      break;
    }
  }
}

// A ThreadItems step (as build.hpp's threadItemsStep) over x in program p of level L; def
// starts the result's definition.
void Printer::threadItems(int ind, const std::string& L, const std::string& p, const Node& n,
                          const std::string& x, const std::string& def) {
  if (n.scan != 0) {
    threadItemsScan(ind, p, n, x, def);
    return;
  }
  const std::string T = u(n.size), count = fresh("count"), items = fresh("items"), s = fresh("s"),
                    v = fresh("v");
  line(ind, "const uint32_t " + count + " = " + x + ".len() / " + T + ";");
  line(ind, "const ThreadArray<uint32_t> " + items + " = threadArray<uint32_t>(" + p + ", " +
                count + ");");
  line(ind, "const SMutable<uint32_t> " + s + " = newShared<uint32_t>(" + p + ", " + T + ");");
  line(ind, p + ".forAll(" + T + ", [&](const Program<Thread>& t, const EWord32& tid) {");
  line(ind + 1, "for (uint32_t k = 0; k < " + count + "; ++k) " + items + ".write(t, k, " + x +
                    "[tid * " + count + " + k]);");
  line(ind + 1, "EWord32 " + v + " = " + items + "[0];");
  if (threadItemsFolds(n.fn)) {
    line(ind + 1, "for (uint32_t k = 1; k < " + count + "; ++k) " + v + " = " +
                      threadItemsFoldText(n.fn, v, items + "[k]") + ";");
  }
  line(ind + 1, "write(t, " + s + ", tid, " + v + ");");
  line(ind, "});");
  line(ind, p + ".sync();");
  const std::string neighbour =
      s + "[(tid + " + u(threadItemsOffset(n.constant, n.size)) + ") % " + T + "]";
  const std::string out = threadItemsOutText(n.fn, "k", items + "[k]", neighbour);
  if (n.fn / 4 == 0) {
    const std::string y = fresh("y");
    line(ind,
         "const SMutable<uint32_t> " + y + " = newShared<uint32_t>(" + p + ", " + x + ".len());");
    line(ind, p + ".forAll(" + T + ", [&](const Program<Thread>& t, const EWord32& tid) {");
    line(ind + 1, "for (uint32_t k = 0; k < " + count + "; ++k) write(t, " + y + ", tid * " +
                      count + " + k, " + out + ");");
    line(ind, "});");
    line(ind, p + ".sync();");
    line(ind, def + y + ".pull();");
    return;
  }
  const std::string q = fresh("q");
  line(ind, def + "force(" + p + ", mkPush<" + L + ", EWord32>(" + x + ".len(), [" + items + ", " +
                s + ", " + count + "](const Program<" + L + ">& " + q +
                ", const Writer<EWord32>& out) {");
  line(ind + 1, q + ".forAll(" + T + ", [&](const Program<Thread>& t, const EWord32& tid) {");
  line(ind + 2, "for (uint32_t k = 0; k < " + count + "; ++k) out(t, " + out + ", tid * " + count +
                    " + k);");
  line(ind + 1, "});");
  line(ind, "}));");
}

// ThreadItems' scan form (as build.hpp's threadItemsScanStep) over x in Block program p.
void Printer::threadItemsScan(int ind, const std::string& p, const Node& n, const std::string& x,
                              const std::string& def) {
  const std::string T = u(n.size), count = fresh("count"), items = fresh("items"), f = fresh("f"),
                    s = fresh("s");
  line(ind, "const uint32_t " + count + " = " + x + ".len() / " + T + ";");
  line(ind, "const ThreadArray<uint32_t> " + items + " = threadArray<uint32_t>(" + p + ", " +
                count + ");");
  line(ind, p + ".forAll(" + u(threads) + ", [&](const Program<Thread>& t, const EWord32& tid) {");
  line(ind + 1, "for (uint32_t k = 0; k < " + count + "; ++k) {");
  line(ind + 2, items + ".write(t, k, ifThenElse(tid < " + T + ", " + x + "[min(tid, EWord32(" +
                    u(n.size - 1) + ")) * " + count + " + k], EWord32(0u)));");
  line(ind + 1, "}");
  line(ind, "});");
  line(ind, "const auto " + f + " = [](const EWord32& a, const EWord32& b) { return " +
                itemsScanText(n.scan - 1, "a", "b") + "; };");
  line(ind, "const ItemsPrefix<uint32_t> " + s + " = blockScanItems(" + p + ", " + f + ", " +
                items + ");");
  // The loop over the first T threads, each putting its prefixes with put(prefix) (k, tid and
  // t in scope).
  const auto loop = [&](int at, const std::string& q,
                        const std::function<std::string(const std::string&)>& put) {
    line(at, q + ".forAll(" + T + ", [&](const Program<Thread>& t, const EWord32& tid) {");
    if (n.aggregate) line(at + 1, "const EWord32 total = t.declare(" + s + ".aggregate);");
    line(at + 1, "EWord32 acc = t.declare(ifThenElse(tid == 0u, " + items + "[0], " + f + "(" + s +
                     ".before[0], " + items + "[0])));");
    line(at + 1, "for (uint32_t k = 0; k < " + count + "; ++k) {");
    line(at + 2, "if (k > 0) acc = t.declare(" + f + "(acc, " + items + "[k]));");
    line(at + 2, put(n.aggregate ? "acc + total" : "acc") + ";");
    line(at + 1, "}");
    line(at, "});");
  };
  if (n.fn / 4 == 0) {
    const std::string y = fresh("y");
    line(ind,
         "const SMutable<uint32_t> " + y + " = newShared<uint32_t>(" + p + ", " + x + ".len());");
    loop(ind, p, [&](const std::string& v) {
      return "write(t, " + y + ", tid * " + count + " + k, " + v + ")";
    });
    line(ind, p + ".sync();");
    line(ind, def + y + ".pull();");
    return;
  }
  const std::string q = fresh("q");
  line(ind, def + "force(" + p + ", mkPush<Block, EWord32>(" + x + ".len(), [" + items + ", " + f +
                ", " + s + ", " + count + "](const Program<Block>& " + q +
                ", const Writer<EWord32>& out) {");
  loop(ind + 1, q,
       [&](const std::string& v) { return "out(t, " + v + ", tid * " + count + " + k)"; });
  line(ind, "}));");
}

// A BlockRadixSort step (as build.hpp's blockRadixSortStep) over x in Block program p: the
// chunks in a loop of the printed code, as the builder loops over them.
void Printer::blockRadixSort(int ind, const std::string& p, const Node& n, const std::string& x,
                             const std::string& def) {
  const std::string K = sortKeyName(n.format), desc = n.descending ? "true" : "false";
  const std::string T = u(threads), size = u(n.size), items = u(n.items);
  const std::string chunks = fresh("chunks"), c = fresh("chunk"), keys = fresh("keys"),
                    vals = fresh("vals");
  const std::string place = "t.declare((tid / 32u) * (32u * " + items + ") + k * 32u + tid % 32u)";
  // The result of item k of chunk c (build.hpp's sortedWord).
  std::string out =
      "bits32(RadixKey<" + K + ">::fromBits(" + keys + "[" + c + "][k], " + desc + "))";
  if (n.values > 0) {
    out =
        "(" + out + " ^ (" + vals + "[" + c + "][0][k] * " + u(sortPlaceFactor(n.constant)) + "))";
  }
  if (n.values > 1) out = "(" + out + " + " + vals + "[" + c + "][1][k])";
  // The loop over the block's threads that writes chunk c's result with put(index).
  const auto writeBack = [&](int at, const std::string& q,
                             const std::function<std::string(const std::string&)>& put) {
    line(at, q + ".forAll(" + T + ", [&](const Program<Thread>& t, const EWord32& tid) {");
    line(at + 1, "for (uint32_t k = 0; k < " + items + "; ++k) {");
    line(at + 2, "const EWord32 e = " + place + ";");
    line(at + 2, "t.cond(e < " + size + ", [&](const Program<Thread>& u) { " +
                     put(c + " * " + size + " + e") + "; });");
    line(at + 1, "}");
    line(at, "});");
  };
  line(ind, "const uint32_t " + chunks + " = " + x + ".len() / " + size + ";");
  const std::string y = fresh("y");
  if (n.fn == 0) {
    line(ind,
         "const SMutable<uint32_t> " + y + " = newShared<uint32_t>(" + p + ", " + x + ".len());");
  }
  line(ind, "std::vector<ThreadArray<uint32_t>> " + keys + ";");
  line(ind, "std::vector<std::vector<ThreadArray<uint32_t>>> " + vals + ";");
  line(ind, "for (uint32_t " + c + " = 0; " + c + " < " + chunks + "; ++" + c + ") {");
  line(ind + 1, keys + ".push_back(threadArray<uint32_t>(" + p + ", " + items + "));");
  line(ind + 1, vals + ".emplace_back();");
  if (n.values > 0) {
    line(ind + 1, "for (uint32_t v = 0; v < " + u(n.values) + "; ++v) " + vals +
                      ".back().push_back(threadArray<uint32_t>(" + p + ", " + items + "));");
  }
  line(ind + 1, p + ".forAll(" + T + ", [&](const Program<Thread>& t, const EWord32& tid) {");
  line(ind + 2, "for (uint32_t k = 0; k < " + items + "; ++k) {");
  line(ind + 3, "const EWord32 e = " + place + ";");
  line(ind + 3, "const EWord32 word = t.declare(" + x + "[" + c + " * " + size +
                    " + min(e, EWord32(" + u(n.size - 1) + "))]);");
  line(ind + 3, keys + "[" + c + "].write(t, k, ifThenElse(e < " + size + ", RadixKey<" + K +
                    ">::toBits(fromBits32<" + K + ">(word), " + desc +
                    "), EWord32(0xffffffffu)));");
  if (n.values > 0) line(ind + 3, vals + "[" + c + "][0].write(t, k, e);");
  if (n.values > 1) {
    line(ind + 3, vals + "[" + c + "][1].write(t, k, word * " + u(kSortValueFactor) + ");");
  }
  line(ind + 2, "}");
  line(ind + 1, "});");
  line(ind + 1, "blockRadixSort(" + p + ", " + keys + "[" + c + "], " + u(n.beginBit) + ", " +
                    u(n.endBit) + ", " + u(n.radixBits) + ", " + vals + "[" + c + "]);");
  if (n.fn == 0) {
    writeBack(ind + 1, p, [&](const std::string& at) {
      return "write(u, " + y + ", " + at + ", " + out + ")";
    });
  }
  line(ind, "}");
  if (n.fn == 0) {
    line(ind, p + ".sync();");
    line(ind, def + y + ".pull();");
    return;
  }
  const std::string q = fresh("q");
  line(ind, def + "force(" + p + ", mkPush<Block, EWord32>(" + x + ".len(), [" + keys + ", " +
                vals + ", " + chunks + "](const Program<Block>& " + q +
                ", const Writer<EWord32>& out) {");
  line(ind + 1, "for (uint32_t " + c + " = 0; " + c + " < " + chunks + "; ++" + c + ") {");
  writeBack(ind + 2, q, [&](const std::string& at) { return "out(u, " + out + ", " + at + ")"; });
  line(ind + 1, "}");
  line(ind, "}));");
}

// A BlockDiscontinuity step (as build.hpp's blockDiscontinuityStep) over x in Block program p:
// the chunks in a loop of the printed code, as the builder loops over them.
void Printer::blockDiscontinuity(int ind, const std::string& p, const Node& n, const std::string& x,
                                 const std::string& def) {
  const bool tails = n.adjacent == 1;
  const uint32_t offset = tails ? threads * n.items - n.size : 0;
  const std::string T = u(threads), size = u(n.size), items = u(n.items), shift = u(n.shift);
  const std::string chunks = fresh("chunks"), c = fresh("chunk"), outs = fresh("outs"),
                    words = fresh("words"), edge = fresh("edge"), has = fresh("has");
  const std::string place =
      "t.declare(tid * " + items + " + k" + (offset == 0 ? "" : " - " + u(offset)) + ")";
  // The result of item k of chunk c (build.hpp's result).
  const std::string out = n.adjacent == 2 ? outs + "[" + c + "][k]"
                                          : x + "[" + c + " * " + size + " + e] ^ (" + outs + "[" +
                                                c + "][k] * " + u(kAdjacentFlagFactor) + ")";
  // The loop over the block's threads that writes chunk c's result with put(index).
  const auto writeBack = [&](int at, const std::string& q,
                             const std::function<std::string(const std::string&)>& put) {
    line(at, q + ".forAll(" + T + ", [&](const Program<Thread>& t, const EWord32& tid) {");
    line(at + 1, "for (uint32_t k = 0; k < " + items + "; ++k) {");
    line(at + 2, "const EWord32 e = " + place + ";");
    line(at + 2, "t.cond(e < " + size + ", [&](const Program<Thread>& u) { " +
                     put(c + " * " + size + " + e") + "; });");
    line(at + 1, "}");
    line(at, "});");
  };
  line(ind, "const uint32_t " + chunks + " = " + x + ".len() / " + size + ";");
  const std::string y = fresh("y");
  if (n.fn == 0) {
    line(ind,
         "const SMutable<uint32_t> " + y + " = newShared<uint32_t>(" + p + ", " + x + ".len());");
  }
  line(ind, "std::vector<ThreadArray<uint32_t>> " + outs + ";");
  line(ind, "for (uint32_t " + c + " = 0; " + c + " < " + chunks + "; ++" + c + ") {");
  line(ind + 1, "const ThreadArray<uint32_t> " + words + " = threadArray<uint32_t>(" + p + ", " +
                    items + ");");
  line(ind + 1, p + ".forAll(" + T + ", [&](const Program<Thread>& t, const EWord32& tid) {");
  line(ind + 2, "for (uint32_t k = 0; k < " + items + "; ++k) {");
  line(ind + 3, "const EWord32 e = " + place + ";");
  line(ind + 3, words + ".write(t, k, " + x + "[" + c + " * " + size + " + min(e, EWord32(" +
                    u(n.size - 1) + "))] >> " + shift + ");");
  line(ind + 2, "}");
  line(ind + 1, "});");
  // The edge (kAdjacentEdges): the word beside the chunk where there is one, or the stand-in.
  const std::string standIn = "EWord32(" + u(n.constant >> n.shift) + ")";
  std::string hasText = n.edge == 2 ? "EBool(true)" : "EBool(false)";
  if (n.edge == 1) {
    const std::string beside = tails ? c + " + 1u < " + chunks : c + " > 0u";
    const std::string at = tails ? "(" + c + " + 1u) * " + size : c + " * " + size + " - 1u";
    line(ind + 1, "const EWord32 " + edge + " = " + beside + " ? EWord32(" + x + "[" + at +
                      "] >> " + shift + ") : " + standIn + ";");
    hasText = "EBool(" + beside + ")";
  } else {
    line(ind + 1, "const EWord32 " + edge + " = " + standIn + ";");
  }
  if (n.edge == 3) hasText = "(" + x + "[" + c + " * " + size + "] & 1u) == 1u";
  if (n.adjacent == 2) {
    line(ind + 1, outs + ".push_back(blockAdjacentDifference<uint32_t>(" + p + ", " + words +
                      ", [](const EWord32& a, const EWord32& b) { return a - b; }, " + edge +
                      "));");
  } else {
    line(ind + 1, "const EBool " + has + " = " + hasText + ";");
    line(ind + 1, outs + ".push_back(" + adjacentName(n.adjacent) + "(" + p + ", " + words + ", " +
                      edge + ", " + has + "));");
  }
  if (n.fn == 0) {
    writeBack(ind + 1, p, [&](const std::string& at) {
      return "write(u, " + y + ", " + at + ", " + out + ")";
    });
  }
  line(ind, "}");
  if (n.fn == 0) {
    line(ind, p + ".sync();");
    line(ind, def + y + ".pull();");
    return;
  }
  const std::string q = fresh("q");
  const std::string word = n.adjacent == 2 ? "" : x + ", ";  // the flags' results read x
  line(ind, def + "force(" + p + ", mkPush<Block, EWord32>(" + x + ".len(), [" + word + outs +
                ", " + chunks + "](const Program<Block>& " + q + ", const Writer<EWord32>& out) {");
  line(ind + 1, "for (uint32_t " + c + " = 0; " + c + " < " + chunks + "; ++" + c + ") {");
  writeBack(ind + 2, q, [&](const std::string& at) { return "out(u, " + out + ", " + at + ")"; });
  line(ind + 1, "}");
  line(ind, "}));");
}

// A BlockMergeSort step (as build.hpp's blockMergeSortStep) over x in Block program p: the
// chunks in a loop of the printed code, as the builder loops over them.
void Printer::blockMergeSort(int ind, const std::string& p, const Node& n, const std::string& x,
                             const std::string& def) {
  const std::string T = u(threads), size = u(n.size), items = u(n.items);
  const std::string chunks = fresh("chunks"), c = fresh("chunk"), keys = fresh("keys"),
                    vals = fresh("vals"), less = fresh("less");
  const std::string place = "t.declare(tid * " + items + " + k)";
  // Chunk c's valid count (build.hpp's validOf).
  const std::string valid = x + "[" + c + " * " + size + "] % " + u(n.size + 1);
  // The result of item k of chunk c (build.hpp's result).
  std::string out = keys + "[" + c + "][k]";
  if (n.values > 0) {
    out = "(" + out + " ^ (" + vals + "[" + c + "][0][k] * " + u(kMergeValueFactor) + "))";
  }
  if (n.valid == 2) {
    out = "ifThenElse(e < " + valid + ", " + out + ", " + x + "[" + c + " * " + size + " + e])";
  }
  // The loop over the block's threads that writes chunk c's result with put(index).
  const auto writeBack = [&](int at, const std::string& q,
                             const std::function<std::string(const std::string&)>& put) {
    line(at, q + ".forAll(" + T + ", [&](const Program<Thread>& t, const EWord32& tid) {");
    line(at + 1, "for (uint32_t k = 0; k < " + items + "; ++k) {");
    line(at + 2, "const EWord32 e = " + place + ";");
    line(at + 2, "t.cond(e < " + size + ", [&](const Program<Thread>& u) { " +
                     put(c + " * " + size + " + e") + "; });");
    line(at + 1, "}");
    line(at, "});");
  };
  line(ind, "const uint32_t " + chunks + " = " + x + ".len() / " + size + ";");
  line(ind, "const auto " + less + " = " + mergeOrderText(n.order, n.constant) + ";");
  const std::string y = fresh("y");
  if (n.fn == 0) {
    line(ind,
         "const SMutable<uint32_t> " + y + " = newShared<uint32_t>(" + p + ", " + x + ".len());");
  }
  line(ind, "std::vector<ThreadArray<uint32_t>> " + keys + ";");
  line(ind, "std::vector<std::vector<ThreadArray<uint32_t>>> " + vals + ";");
  line(ind, "for (uint32_t " + c + " = 0; " + c + " < " + chunks + "; ++" + c + ") {");
  line(ind + 1, keys + ".push_back(threadArray<uint32_t>(" + p + ", " + items + "));");
  line(ind + 1, vals + ".emplace_back();");
  if (n.values > 0) {
    line(ind + 1, "for (uint32_t v = 0; v < " + u(n.values) + "; ++v) " + vals +
                      ".back().push_back(threadArray<uint32_t>(" + p + ", " + items + "));");
  }
  line(ind + 1, p + ".forAll(" + T + ", [&](const Program<Thread>& t, const EWord32& tid) {");
  line(ind + 2, "for (uint32_t k = 0; k < " + items + "; ++k) {");
  line(ind + 3, "const EWord32 e = " + place + ";");
  line(ind + 3, keys + "[" + c + "].write(t, k, ifThenElse(e < " + size + ", " + x + "[" + c +
                    " * " + size + " + min(e, EWord32(" + u(n.size - 1) + "))], EWord32(" +
                    u(mergePadKey(n.order, n.valid)) + ")));");
  if (n.values > 0) line(ind + 3, vals + "[" + c + "][0].write(t, k, e);");
  line(ind + 2, "}");
  line(ind + 1, "});");
  line(ind + 1,
       "blockMergeSort(" + p + ", " + keys + "[" + c + "], " + less + ", " + vals + "[" + c + "]" +
           (n.valid == 0 ? "" : ", " + (n.valid == 2 ? valid : "EWord32(" + size + ")")) + ");");
  if (n.fn == 0) {
    writeBack(ind + 1, p, [&](const std::string& at) {
      return "write(u, " + y + ", " + at + ", " + out + ")";
    });
  }
  line(ind, "}");
  if (n.fn == 0) {
    line(ind, p + ".sync();");
    line(ind, def + y + ".pull();");
    return;
  }
  const std::string q = fresh("q");
  const std::string word = n.valid == 2 ? x + ", " : "";  // the kept words read x
  line(ind, def + "force(" + p + ", mkPush<Block, EWord32>(" + x + ".len(), [" + word + keys +
                ", " + vals + ", " + chunks + "](const Program<Block>& " + q +
                ", const Writer<EWord32>& out) {");
  line(ind + 1, "for (uint32_t " + c + " = 0; " + c + " < " + chunks + "; ++" + c + ") {");
  writeBack(ind + 2, q, [&](const std::string& at) { return "out(u, " + out + ", " + at + ")"; });
  line(ind + 1, "}");
  line(ind, "}));");
}

std::string cppSource(const Recipe& r, uint32_t threads, const std::string& function) {
  if (r.matrix) return matrixSource(r, threads, function);
  Printer pr;
  pr.threads = threads;
  const std::string bits = std::to_string(r.elem), E = "EWord" + bits;
  pr.line(0, "// input: " + std::to_string(inputLength(r)) +
                 (r.elem == 32 ? " words" : " u" + bits + " elements"));
  pr.line(0, "Kernel " + function + "() {");
  const std::string in = r.staticInput ? "SPull" : "DPull";
  const bool bins = r.globalBins > 0, effect = r.result != Result::Output;
  const std::string caps = std::string(bins ? ", bins" : "") + (effect ? ", acc" : "");
  const bool divided = r.divisor == Divisor::Length;
  pr.line(1, "return capture(\"fuzz\", " + std::to_string(threads) + ", [](" + in + "<" + E +
                 (divided ? "> input" : "> in") +
                 (r.divisor != Divisor::None ? ", EWord32 d" : "") +
                 (bins ? ", DMutable<uint32_t> bins" : "") +
                 (effect ? ", DMutable<uint32_t> acc" : "") + ") {");
  switch (r.divisor) {
    case Divisor::None: break;
    case Divisor::Require:
      pr.line(2, "require(len(in) % d == 0u, \"d divides the input's length\");");
      break;
    case Divisor::Guarded:
      pr.line(2,
              "require(d == 0u || len(in) % d == 0u, \"d is 0 or divides the input's length\");");
      break;
    case Divisor::GuardedSelect:
      pr.line(2,
              "require(ifThenElse(d != 0u, len(in) / d, EWord32(1u)) >= 1u, "
              "\"the input has d elements or more\");");
      break;
    case Divisor::Length:
      pr.line(2, "const DPull<" + E +
                     "> in((len(input) / d) * d, [input, d](const EWord32& i) { "
                     "return input[i / d * d + i % d]; });");
      break;
  }
  if (r.elem == 32) {
    pr.line(2, in + "<EWord32> g = in;");
  } else {
    pr.line(2, in + "<EWord32> g = fmap([](const " + E + "& x) { return w" + bits +
                   "ToW32(x); }, in);");
  }
  if (r.gridMap) pr.line(2, "g = fmap(" + Printer::unaryLambda(r.gridA, r.gridB) + ", g);");
  if (r.gridZip) {
    pr.line(2, "const auto [glo, ghi] = halve(g);");
    pr.line(2, "g = zipWith(" + Printer::binaryLambda(r.gridA) + ", glo, ghi);");
  }
  if (r.grid == Shape::Flat && r.store == StoreForm::Grid) {
    // build_store.cpp's gridStore: the tail, if a static length has one, a loop of its own.
    const std::string w = Printer::u(r.storeWidth);
    pr.line(2, "const auto stored = " + unvectorsText(r, "Grid", "g") + ";");
    pr.line(2, (r.staticInput ? "const uint32_t" : "const EWord32") +
                   std::string(" whole = g.len() / ") + w + " * " + w + ";");
    const std::string tail = "concP(stored, push<Grid>(" + storeTailText(r, "g", "whole") + "))";
    pr.line(2, r.staticInput ? "return whole == g.len() ? stored : " + tail + ";"
                             : "return " + tail + ";");
  } else if (r.grid == Shape::Flat) {
    pr.line(2, r.gridOutput ? "return hana::make_tuple(push<Grid>(g), push<Grid>(g));"
                            : "return push<Grid>(g);");
  }
  if (r.grid == Shape::Flat) {
    const std::string lengths =
        r.staticInput ? ".staticLengths = {" + std::to_string(inputLength(r)) + "}, " : "";
    pr.line(1, "}, CaptureOptions{" + lengths + ".nvrtcOptions = {\"--fmad=false\"}});");
    pr.line(0, "}");
    return pr.out;
  }
  // The chunks: pieces of the input itself where the blocks read vectors of it.
  const std::string chunkType = r.vector ? "SPull<" + E + ">" : "SPull<EWord32>";
  const std::string chunkName = r.vector ? "piece" : "c";
  const std::string chunks = std::string(r.grid == Shape::SplitUp ? "splitUp(" : "coalesce(") +
                             Printer::u(r.chunk) + ", " + (r.vector ? "in" : "g") + ")";
  // The block's program over its chunk; the name of its result.
  auto block = [&](int ind) {
    if (r.vector) {
      const std::string w = std::to_string(r.vector) + "u";
      pr.line(ind, "const auto vecs = vectors<" + std::to_string(r.vector) + ">(piece);");
      pr.line(ind,
              "const SPull<EWord32> c = force(p, mkPush<Block, EWord32>(piece.len(), [vecs]("
              "const Program<Block>& q, const Writer<EWord32>& w) {");
      pr.line(ind + 1, "q.forAll(len(vecs), [&](const Program<Thread>& t, const EWord32& j) {");
      pr.line(ind + 2, "std::vector<EWord32> lanes;");
      pr.line(ind + 2, "hana::for_each(vecs[j], [&](const " + E +
                           "& x) { lanes.push_back(t.declare(" +
                           (r.elem == 32 ? std::string("x") : "w" + bits + "ToW32(x)") + ")); });");
      pr.line(ind + 2,
              "for (uint32_t k = 0; k < " + w + "; ++k) w(t, lanes[k], j * " + w + " + k);");
      pr.line(ind + 1, "});");
      pr.line(ind, "}));");
    }
    const std::string res = pr.steps(ind, Level::Block, "p", r.body, "c");
    if (bins) {
      pr.line(ind, "p.forAll(" + res + ".len(), [&](const Program<Thread>& t, const EWord32& i) {");
      pr.line(ind + 1,
              "atomicAdd(t, bins, " + res + "[i] % " + Printer::u(r.globalBins) + ", 1u);");
      pr.line(ind, "});");
    }
    return res;
  };
  // Beside an effect, the grid-level output fused with parts over its chunks.
  const bool fusedGrid = effect && !r.fused.empty();
  if (fusedGrid) {
    pr.line(2, "const auto fusedOut = pConcat(fmap(");
    pr.line(3, "[](const SPull<EWord32>& gc) {");
    pr.line(4, "return exec<Block>([gc](const Program<Block>& gq) {");
    pr.fusedReturn(5, r, "gq", "gc");
    pr.line(4, "});");
    pr.line(3, "},");
    pr.line(3, "splitUp(" + Printer::u(r.chunk) + ", g)));");
  }
  // The result: the tuple's other element, before or after the block programs' part.
  const std::string gridOut = fusedGrid ? "fusedOut" : "push<Grid>(g)";
  const bool before = r.gridOutput && (effect ? !r.effectFirst : r.gridFirst);
  const std::string open = !r.gridOutput ? "return "
                           : before      ? "return hana::make_tuple(" + gridOut + ", "
                                         : "return hana::make_tuple(";
  const std::string close = !r.gridOutput ? ";" : before ? ");" : ", " + gridOut + ");";
  switch (r.result) {
    case Result::Output: {
      const bool whole = r.store == StoreForm::Whole;
      pr.line(2, open + (whole ? "unvectors<" + std::to_string(r.storeWidth) + ">(" : "") +
                     "pConcat(fmap(");
      pr.line(3, "[" + (caps.empty() ? "" : caps.substr(2)) + "](const " + chunkType + "& " +
                     chunkName + ") {");
      pr.line(4, "return exec<Block>([" + chunkName + caps + "](const Program<Block>& p) {");
      const std::string res = block(5);
      if (r.store != StoreForm::None) {
        pr.storeReturn(5, r, res);
      } else if (r.fused.empty()) {
        pr.line(5, "return push<Block>(" + res + ");");
      } else {
        pr.fusedReturn(5, r, "p", res);
      }
      pr.line(4, "});");
      pr.line(3, "},");
      pr.line(3, chunks + "))" + (whole ? ")" : "") + close);
      break;
    }
    case Result::EffectWrite: {
      pr.line(2, "const auto chunks = " + chunks + ";");
      pr.line(2, open + "effect([chunks" + caps + "](const Program<Grid>& gp) {");
      pr.line(3,
              "gp.distrPar(sizeConv(len(chunks)), [&](const Program<Block>& p, const EWord32& "
              "bid) {");
      pr.line(4, "const " + chunkType + " " + chunkName + " = chunks[bid];");
      const std::string res = block(4);
      pr.line(4, "p.forAll(" + res + ".len(), [&](const Program<Thread>& t, const EWord32& i) {");
      pr.line(5, "write(t, acc, bid * " + res + ".len() + i, " + res + "[i]);");
      pr.line(4, "});");
      pr.line(3, "});");
      pr.line(2, "})" + close);
      break;
    }
    case Result::EffectAtomic: {
      pr.line(2, open + "forEachBlock(" + chunks + ", [" + caps.substr(2) +
                     "](const Program<Block>& p, const " + chunkType + "& " + chunkName + ") {");
      const std::string res = block(3);
      pr.line(3, "p.forAll(" + res + ".len(), [&](const Program<Thread>& t, const EWord32& i) {");
      pr.line(4, std::string(accName(r.accOp)) + "(t, acc, i % " + Printer::u(r.accSlots) + ", " +
                     res + "[i]);");
      pr.line(3, "});");
      pr.line(2, "})" + close);
      break;
    }
  }
  const std::string lengths =
      r.staticInput ? ".staticLengths = {" + std::to_string(inputLength(r)) + "}, " : "";
  pr.line(1, "}, CaptureOptions{" + lengths + ".nvrtcOptions = {\"--fmad=false\"}});");
  pr.line(0, "}");
  return pr.out;
}

}  // namespace fuzz
