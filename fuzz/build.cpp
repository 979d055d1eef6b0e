// The obsidian interpretation of a recipe (see build.hpp).
#include "build.hpp"

namespace fuzz {

using namespace obsidian;

SPull<EWord32> pullStep(const Node& n, const SPull<EWord32>& x) {
  switch (n.op) {
    case Op::Map: return fmap(unaryFn(n.a, n.b), x);
    case Op::FloatMap: {
      const uint32_t a = n.a, b = n.b;
      return fmap([a, b](const EWord32& v) { return floatOp(a, b, v); }, x);
    }
    case Op::AddIndex: {
      const uint32_t b = n.b;
      return mkPull(x.len(), [x, b](const EWord32& i) { return x[i] + i * b; });
    }
    case Op::ZipHalves: {
      auto [lo, hi] = halve(x);
      return zipWith(binaryFn(n.a), lo, hi);
    }
    case Op::ZipEvenOdds: {
      auto [ev, od] = evenOdds(x);
      return zipWith(binaryFn(n.a), ev, od);
    }
    case Op::Rotate: {
      auto [lo, hi] = splitAt(n.b, x);
      return conc(hi, lo);
    }
    case Op::Interleave: {
      auto [lo, hi] = halve(x);
      return upair(zip(lo, hi));
    }
    case Op::Ends: return conc(replicate(n.b, first(x)), singleton(last(x)));
    case Op::SplitFold: {
      const uint32_t a = n.a;
      return fmap([a](const SPull<EWord32>& c) { return foldPull1(binaryFn(a), c); },
                  splitUp(n.b, x));
    }
    case Op::CoalesceFold: {
      const uint32_t a = n.a;
      return fmap([a](const SPull<EWord32>& c) { return foldPull1(binaryFn(a), c); },
                  coalesce(n.b, x));
    }
    case Op::BinSplit: {
      const std::vector<Node> kids = n.kids;
      return binSplit(
          n.b, [kids](const SPull<EWord32>& part) { return pullSteps(kids, part); }, x);
    }
    default: break;
  }
  throw std::logic_error("fuzz: not a pull step");
}

Kernel buildKernel(const Recipe& r, uint32_t threads, bool reuseSharedMemory, int dropBarrier) {
  CaptureOptions options;
  options.reuseSharedMemory = reuseSharedMemory;
  options.faults.dropBarrier = dropBarrier;
  // Two roundings for a * b + c on the GPU too, as in the reference (see floatOp).
  options.nvrtcOptions = {"--fmad=false"};
  // The same kernel over a dynamic (DPull) or static (SPull) input, with one output or two.
  auto grid = [&r](const auto& in) {
    auto g = in;
    if (r.gridMap) g = fmap(unaryFn(r.gridA, r.gridB), g);
    if (r.gridZip) {
      auto [lo, hi] = halve(g);
      g = zipWith(binaryFn(r.gridA), lo, hi);
    }
    return g;
  };
  auto kernel = [&r, &grid](const auto& in) {
    auto g = grid(in);
    auto block = [&r](const SPull<EWord32>& c) {
      return exec<Block>(
          [&r, c](const Program<Block>& p) { return push<Block>(steps<Block>(p, r.body, c)); });
    };
    switch (r.grid) {
      case Shape::SplitUp: return pConcat(fmap(block, splitUp(r.chunk, g)));
      case Shape::Coalesce: return pConcat(fmap(block, coalesce(r.chunk, g)));
      case Shape::Flat: break;
    }
    return push<Grid>(g);
  };
  auto both = [&kernel, &grid](const auto& in) {
    return hana::make_tuple(kernel(in), push<Grid>(grid(in)));
  };
  if (r.staticInput) {
    options.staticLengths = {static_cast<uint32_t>(inputLength(r))};
    if (r.gridOutput) {
      return capture(
          "fuzz", threads, [&](SPull<EWord32> in) { return both(in); }, options);
    }
    return capture(
        "fuzz", threads, [&](SPull<EWord32> in) { return kernel(in); }, options);
  }
  if (r.gridOutput) {
    return capture(
        "fuzz", threads, [&](DPull<EWord32> in) { return both(in); }, options);
  }
  return capture(
      "fuzz", threads, [&](DPull<EWord32> in) { return kernel(in); }, options);
}

}  // namespace fuzz
