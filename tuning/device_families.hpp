// The device algorithms' kernel families (include/obsidian/device/): the even histogram and the
// transpose, swept over their policies (HistogramPolicy, TransposePolicy) and problem sizes.
#pragma once

#include "family.hpp"

namespace tuning {

Family histogramFamily();
Family transposeFamily();

}  // namespace tuning
