// The kernels whose output a vector store writes (Recipe::store, see StoreForm): the output's
// words as values of the store's element type, written through unvectors<W> in the recipe's
// form. Its own translation unit (see build_shared.hpp).
#include "build_shared.hpp"

namespace fuzz {

using namespace obsidian;

namespace {

// Calls f(std::integral_constant<uint32_t, W>{}) with the width w of unvectors<W> of S (at most
// 16 bytes), so that each width is a type while the kernel's output is one type for all.
template <class S, class F>
auto withStoreWidth(uint32_t w, F f) {
  switch (w) {
    case 2: return f(std::integral_constant<uint32_t, 2>{});
    case 4:
      if constexpr (4 * sizeof(S) <= 16) return f(std::integral_constant<uint32_t, 4>{});
      break;
    case 8:
      if constexpr (8 * sizeof(S) <= 16) return f(std::integral_constant<uint32_t, 8>{});
      break;
    case 16:
      if constexpr (sizeof(S) == 1) return f(std::integral_constant<uint32_t, 16>{});
      break;
    default: break;
  }
  throw std::logic_error("fuzz: no unvectors<" + std::to_string(w) + "> of this type");
}

// Vector j of the words y: lane k the value of y[j * W + (k + rot) % W] (storeValue), the lanes
// made in order (as recipe_print.cpp's storeVectorsText prints them).
template <class S, uint32_t W, class Len, uint32_t... K>
Vector<W, S> storeVector(const Pull<Len, EWord32>& y, const EWord32& j, uint32_t rot,
                         std::integer_sequence<uint32_t, K...>) {
  return Vector<W, S>{storeValue<S>(y[j * W + (K + rot) % W])...};
}
// The len / W vectors of the words y.
template <class S, uint32_t W, class Len>
Pull<Len, Vector<W, S>> storeVectors(const Pull<Len, EWord32>& y, uint32_t rot) {
  return mkPull(y.len() / W, [y, rot](const EWord32& j) {
    return storeVector<S, W>(y, j, rot, std::make_integer_sequence<uint32_t, W>{});
  });
}

// The values of y's last len % W words, after its whole vectors (`whole` words).
template <class S, class Len>
Pull<Len, Exp<S>> storeTail(const Pull<Len, EWord32>& y, const Len& whole) {
  return mkPull(y.len() - whole,
                [y, whole](const EWord32& i) { return storeValue<S>(y[whole + i]); });
}

// StoreForm::Grid over the grid-level array g.
template <class S, uint32_t W, class Len>
Push<Grid, Len, Exp<S>> gridStore(const Pull<Len, EWord32>& g, uint32_t rot) {
  const auto vecs = unvectors<W>(push<Grid>(storeVectors<S, W>(g, rot)));
  const Len whole = g.len() / W * W;
  if constexpr (std::is_same_v<Len, uint32_t>) {
    if (whole == g.len()) return vecs;
  }
  return concP(vecs, push<Grid>(storeTail<S>(g, whole)));
}

// What block program p returns for its result y in the block forms of r.store (not Whole).
template <class S, uint32_t W>
SPush<Block, Exp<S>> blockStore(const Program<Block>& p, const Recipe& r, const SPull<EWord32>& y) {
  const uint32_t rot = r.storeRotate;
  switch (r.store) {
    case StoreForm::Blocks: return unvectors<W>(push<Block>(storeVectors<S, W>(y, rot)));
    case StoreForm::Threads:
      return tConcat<Block>(fmap(
          [rot](const SPull<EWord32>& c) {
            return unvectors<W>(push<Thread>(storeVectors<S, W>(c, rot)));
          },
          splitUp(r.storePiece, y)));
    case StoreForm::Warps:
      return pConcat(fmap(
          [rot](const SPull<EWord32>& c) {
            return exec<Warp>([c, rot](const Program<Warp>&) {
              return unvectors<W>(push<Warp>(storeVectors<S, W>(c, rot)));
            });
          },
          splitUp(r.storePiece, y)));
    case StoreForm::Shared: {
      const auto vecs = unvectors<W>(push<Block>(storeVectors<S, W>(y, rot)));
      const uint32_t whole = y.len() / W * W;
      const SPull<Exp<S>> s = whole == y.len()
                                  ? force(p, vecs)
                                  : force(p, concP(vecs, push<Block>(storeTail<S>(y, whole))));
      return push<Block>(s);
    }
    case StoreForm::None:
    case StoreForm::Grid:
    case StoreForm::Whole: break;
  }
  throw std::logic_error("fuzz: not a block form of vector store");
}

// blockStore and gridStore of r's width: the width chosen inside the block program and the
// grid's loop, so that the code around them is made once per element type, not per width.
template <class S>
SPush<Block, Exp<S>> blockStoreOf(const Program<Block>& p, const Recipe& r,
                                  const SPull<EWord32>& y) {
  return withStoreWidth<S>(r.storeWidth, [&]<uint32_t W>(std::integral_constant<uint32_t, W>) {
    return blockStore<S, W>(p, r, y);
  });
}
template <class S, class Len>
Push<Grid, Len, Exp<S>> gridStoreOf(const Recipe& r, const Pull<Len, EWord32>& g) {
  return withStoreWidth<S>(r.storeWidth, [&]<uint32_t W>(std::integral_constant<uint32_t, W>) {
    return gridStore<S, W>(g, r.storeRotate);
  });
}

}  // namespace

template <class In>
Kernel buildStoreFor(const Recipe& r, uint32_t threads, const CaptureOptions& options,
                     uint32_t bins) {
  // The output of element type S: one type for every form and width, so each S makes one
  // kernel signature.
  using Len = typename In::Length;
  auto block = [&r](const Program<Block>& p, const auto& c, const Muts& m) {
    return blockWords(p, r, c, m);
  };
  auto output = [&]<class S>(std::type_identity<S>, const In& in,
                             const Muts& m) -> Push<Grid, Len, Exp<S>> {
    if (r.grid == Shape::Flat) return gridStoreOf<S>(r, gridWords(r, in));
    return chunksOf(r, in, [&](const auto& chunks) -> Push<Grid, Len, Exp<S>> {
      if (r.store != StoreForm::Whole) {
        return pConcat(fmap(
            [&block, &r, m](const auto& c) {
              return exec<Block>([&block, &r, m, c](const Program<Block>& p) {
                return blockStoreOf<S>(p, r, block(p, c, m));
              });
            },
            chunks));
      }
      // The blocks' vectors: the width is part of the element type here.
      return withStoreWidth<S>(
          r.storeWidth,
          [&]<uint32_t W>(std::integral_constant<uint32_t, W>) -> Push<Grid, Len, Exp<S>> {
            const uint32_t rot = r.storeRotate;
            return unvectors<W>(pConcat(fmap(
                [&block, m, rot](const auto& c) {
                  return exec<Block>([&block, m, c, rot](const Program<Block>& p) {
                    return push<Block>(storeVectors<S, W>(block(p, c, m), rot));
                  });
                },
                chunks)));
          });
    });
  };
  return withStoreType(r.storeType, [&]<class S>(std::type_identity<S> type) {
    return captureWith<In, 0>(r, threads, options, bins,
                              [&](const In& in, const Muts& m) { return output(type, in, m); });
  });
}

template Kernel buildStoreFor<DPull<EWord32>>(const Recipe&, uint32_t, const CaptureOptions&,
                                              uint32_t);
template Kernel buildStoreFor<SPull<EWord32>>(const Recipe&, uint32_t, const CaptureOptions&,
                                              uint32_t);
template Kernel buildStoreFor<DPull<EWord16>>(const Recipe&, uint32_t, const CaptureOptions&,
                                              uint32_t);
template Kernel buildStoreFor<SPull<EWord16>>(const Recipe&, uint32_t, const CaptureOptions&,
                                              uint32_t);
template Kernel buildStoreFor<DPull<EWord8>>(const Recipe&, uint32_t, const CaptureOptions&,
                                             uint32_t);
template Kernel buildStoreFor<SPull<EWord8>>(const Recipe&, uint32_t, const CaptureOptions&,
                                             uint32_t);

}  // namespace fuzz
