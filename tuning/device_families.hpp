// The device algorithms' kernel families (include/obsidian/device/, one per descriptor): reduce,
// segmentedReduce, the scans, the even histogram and the transpose, swept over their policies'
// fields and problem sizes.
#pragma once

#include "family.hpp"

namespace tuning {

Family deviceReduceFamily();
Family deviceSegmentedReduceFamily();
Family deviceScanFamily();
Family histogramFamily();
Family transposeFamily();

}  // namespace tuning
