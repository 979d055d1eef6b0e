/// The device layer, one block per tile: the paper's kernel shape (mapRed, mapScan: Sections 5.2
/// and 5.3), a block-layer algorithm applied to each tile of `tile` consecutive elements. These
/// are the kernels the paper measures, the tuner sweeps (tuning/families.cpp) and the multi-
/// kernel pipelines (device/pipeline.hpp) chain; the one-launch device calls are in
/// device/reduce.hpp and device/scan.hpp.
/// @file
#pragma once

#include <string>

#include "obsidian/block/reduce.hpp"
#include "obsidian/block/scan.hpp"
#include "obsidian/capture.hpp"

namespace obsidian {

/// mapRed chunk red in = pConcat (fmap (singletonPush . red) (splitUp chunk in)): one value per
/// chunk (the input's length must be a multiple of chunk).
template <class T, class Red>
auto mapRed(uint32_t chunk, Red red, const DPull<T>& in) {
  return pConcat(fmap(
      [red](const SPull<T>& c) {
        return singletonPush<Block>([red, c](const Program<Block>& p) { return red(p, c); });
      },
      splitUp(chunk, in)));
}

/// mapScan chunk scan in = pConcat (fmap (execBlock . scan) (splitUp chunk in))
template <class T, class Scan>
auto mapScan(uint32_t chunk, Scan scan, const DPull<T>& in) {
  return pConcat(fmap(
      [scan](const SPull<T>& c) {
        return exec<Block>([scan, c](const Program<Block>& p) { return scan(p, c); });
      },
      splitUp(chunk, in)));
}

/// One value per `chunk` elements by block algorithm a (the input length a multiple of chunk).
template <KernelScalar X, class Op>
Kernel tileReduceKernel(BlockReduceAlgorithm a, Op f, uint32_t chunk, uint32_t threads) {
  return capture(name(a), threads, [a, f, chunk](DPull<Exp<X>> in) {
    return mapRed<Exp<X>>(
        chunk,
        [a, f](const Program<Block>& p, const SPull<Exp<X>>& c) { return blockReduce(a, p, f, c); },
        in);
  });
}

/// The inclusive (or exclusive, identity first) scan of each chunk of `chunk` elements by block
/// algorithm a (the input length a multiple of chunk).
template <KernelScalar X, class Op>
Kernel tileScanKernel(BlockScanAlgorithm a, Op f, uint32_t chunk, uint32_t threads,
                      bool exclusive = false, X identity = X{}) {
  return capture(name(a) + (exclusive ? "Exclusive" : ""), threads, [=](DPull<Exp<X>> in) {
    return mapScan<Exp<X>>(
        chunk,
        [=](const Program<Block>& p, const SPull<Exp<X>>& c) {
          return exclusive ? blockExclusiveScan(a, p, f, Exp<X>(identity), c)
                           : blockScan(a, p, f, c);
        },
        in);
  });
}

}  // namespace obsidian
