/// The catalogue of device algorithms: every descriptor (device/algorithm.hpp) in one list, from
/// which `obsidian-tune --policies` prints the policy tables and a test checks that every row
/// names the command and measurement that chose it. A new device algorithm adds its descriptor
/// here.
/// @file
#pragma once

#include <boost/hana/type.hpp>
#include <vector>

#include "obsidian/device/algorithm.hpp"
#include "obsidian/device/histogram.hpp"
#include "obsidian/device/merge_sort.hpp"
#include "obsidian/device/radix_sort.hpp"
#include "obsidian/device/reduce.hpp"
#include "obsidian/device/rowwise.hpp"
#include "obsidian/device/scan.hpp"
#include "obsidian/device/segmented_sort.hpp"
#include "obsidian/device/select.hpp"
#include "obsidian/device/top_k.hpp"
#include "obsidian/device/transpose.hpp"

namespace obsidian::device {

/// Every device algorithm's descriptor.
inline constexpr auto kAlgorithms =
    hana::make_tuple(hana::type_c<Reduce>, hana::type_c<SegmentedReduce>, hana::type_c<Scan>,
                     hana::type_c<HistogramEven>, hana::type_c<Transpose>, hana::type_c<Rowwise>,
                     hana::type_c<RadixSort>, hana::type_c<MergeSort>, hana::type_c<SegmentedSort>,
                     hana::type_c<Select>, hana::type_c<ReduceByKey>, hana::type_c<TopK>);

/// Every device algorithm as data, in kAlgorithms' order.
inline std::vector<AlgorithmInfo> catalogue() {
  std::vector<AlgorithmInfo> all;
  hana::for_each(kAlgorithms, [&](auto t) {
    using D = typename decltype(t)::type;
    all.push_back(describeAlgorithm<D>());
  });
  return all;
}

}  // namespace obsidian::device
