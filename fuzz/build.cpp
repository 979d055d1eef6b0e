// The obsidian interpretation of a recipe (see build.hpp).
#include "build.hpp"

#include <optional>

#include "kernel/kernel_access.hpp"

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

namespace {

// Captures `result` over an In input, with a DMutable bins parameter when Bins.
template <class In, bool Bins, class R>
Kernel captureAs(uint32_t threads, const CaptureOptions& options, const R& result) {
  if constexpr (Bins) {
    return capture(
        "fuzz", threads, [&](In in, DMutable<uint32_t> bins) { return result(in, bins); }, options);
  } else {
    return capture(
        "fuzz", threads, [&](In in) { return result(in, std::nullopt); }, options);
  }
}

}  // namespace

Kernel buildKernel(const Recipe& r, uint32_t threads, bool plain, int dropBarrier) {
  CaptureOptions options;
  options.reuseSharedMemory = !plain;
  options.shareSubexpressions = !plain;
  // Two roundings for a * b + c on the GPU too, as in the reference (see floatOp).
  options.nvrtcOptions = {"--fmad=false"};
  if (r.staticInput) options.staticLengths = {static_cast<uint32_t>(inputLength(r))};
  // The same kernel over a dynamic (DPull) or static (SPull) input, with one output or two,
  // with or without global bins.
  using Bins = std::optional<DMutable<uint32_t>>;
  auto grid = [&r](const auto& in) {
    auto g = in;
    if (r.gridMap) g = fmap(unaryFn(r.gridA, r.gridB), g);
    if (r.gridZip) {
      auto [lo, hi] = halve(g);
      g = zipWith(binaryFn(r.gridA), lo, hi);
    }
    return g;
  };
  auto kernel = [&r, &grid](const auto& in, const Bins& bins) {
    auto g = grid(in);
    auto block = [&r, bins](const SPull<EWord32>& c) {
      return exec<Block>([&r, c, bins](const Program<Block>& p) {
        const SPull<EWord32> y = steps<Block>(p, r.body, c);
        if (bins) {
          const uint32_t nb = r.globalBins;
          p.forAll(y.len(), [&](const Program<Thread>& t, const EWord32& i) {
            atomicAdd(t, *bins, y[i] % nb, 1u);
          });
        }
        return push<Block>(y);
      });
    };
    switch (r.grid) {
      case Shape::SplitUp: return pConcat(fmap(block, splitUp(r.chunk, g)));
      case Shape::Coalesce: return pConcat(fmap(block, coalesce(r.chunk, g)));
      case Shape::Flat: break;
    }
    return push<Grid>(g);
  };
  auto one = [&kernel](const auto& in, const Bins& bins) { return kernel(in, bins); };
  auto two = [&kernel, &grid](const auto& in, const Bins& bins) {
    return hana::make_tuple(kernel(in, bins), push<Grid>(grid(in)));
  };
  auto withInput = [&]<class In>() {
    if (r.gridOutput) {
      return r.globalBins ? captureAs<In, true>(threads, options, two)
                          : captureAs<In, false>(threads, options, two);
    }
    return r.globalBins ? captureAs<In, true>(threads, options, one)
                        : captureAs<In, false>(threads, options, one);
  };
  const Kernel k = r.staticInput ? withInput.template operator()<SPull<EWord32>>()
                                 : withInput.template operator()<DPull<EWord32>>();
  if (dropBarrier < 0) return k;
  Faults faults;
  faults.dropBarrier = dropBarrier;
  return obsidian::testing::withFaults(k, faults);
}

}  // namespace fuzz
