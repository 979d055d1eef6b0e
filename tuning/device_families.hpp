// The device algorithms' kernel families (include/obsidian/device/, one per descriptor): reduce,
// segmentedReduce, the scans, the even histogram and the transpose, swept over their policies'
// fields and problem sizes.
#pragma once

#include <vector>

#include "family.hpp"

namespace tuning {

// Every device algorithm's family, in the catalogue's order (a new algorithm adds its family
// here, in device_families.cpp only).
std::vector<Family> deviceFamilies();

}  // namespace tuning
