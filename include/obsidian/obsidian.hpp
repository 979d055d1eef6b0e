/// The umbrella header: everything a user of obsidian needs.
/// @file
#pragma once

/// @namespace obsidian
/// Everything obsidian offers: scalar expressions (Exp), pull and push arrays typed by the
/// level of the GPU hierarchy they live at, the array library, capture into a Kernel, and the
/// simulator, runtime and export that run or ship one.

/// @namespace obsidian::device
/// The device layer: whole-array algorithms (reductions, scans, histograms, transposes) built
/// on the block layer, as Push<Grid> arrays for one's own kernels and as ready calls.

#include "obsidian/arguments.hpp"
#include "obsidian/atomic.hpp"
#include "obsidian/cache.hpp"
#include "obsidian/capture.hpp"
#include "obsidian/error.hpp"
#include "obsidian/exp.hpp"
#include "obsidian/export.hpp"
#include "obsidian/force.hpp"
#include "obsidian/fused.hpp"
#include "obsidian/ir.hpp"
#include "obsidian/kernel.hpp"
#include "obsidian/level.hpp"
#include "obsidian/library.hpp"
#include "obsidian/matrix.hpp"
#include "obsidian/memory_ops.hpp"
#include "obsidian/nvrtc.hpp"
#include "obsidian/program.hpp"
#include "obsidian/pull.hpp"
#include "obsidian/push.hpp"
#include "obsidian/runtime.hpp"
#include "obsidian/scatter.hpp"
#include "obsidian/sim.hpp"
#include "obsidian/thread_array.hpp"
#include "obsidian/types.hpp"
#include "obsidian/vector_load.hpp"
#include "obsidian/vote.hpp"
// The algorithm layer: warp collectives on threads, block collectives on warps, device
// algorithms on blocks.
#include "obsidian/block/discontinuity.hpp"
#include "obsidian/block/exchange.hpp"
#include "obsidian/block/load_store.hpp"
#include "obsidian/block/merge_sort.hpp"
#include "obsidian/block/radix_sort.hpp"
#include "obsidian/block/reduce.hpp"
#include "obsidian/block/scan.hpp"
#include "obsidian/device/algorithm.hpp"
#include "obsidian/device/catalogue.hpp"
#include "obsidian/device/histogram.hpp"
#include "obsidian/device/merge_sort.hpp"
#include "obsidian/device/pipeline.hpp"
#include "obsidian/device/policy.hpp"
#include "obsidian/device/radix_sort.hpp"
#include "obsidian/device/reduce.hpp"
#include "obsidian/device/rowwise.hpp"
#include "obsidian/device/scan.hpp"
#include "obsidian/device/segmented_sort.hpp"
#include "obsidian/device/select.hpp"
#include "obsidian/device/tiled.hpp"
#include "obsidian/device/top_k.hpp"
#include "obsidian/device/transpose.hpp"
#include "obsidian/operators.hpp"
#include "obsidian/timing.hpp"
#include "obsidian/warp/exchange.hpp"
#include "obsidian/warp/reduce.hpp"
#include "obsidian/warp/scan.hpp"
