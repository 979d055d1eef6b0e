// The BLAS sequences' inputs and references as the blas and array families share them (through
// the sweep's DataCache, under one key per sequence and problem, so a sweep of both runs them on
// the same data): the inputs made from seeds on the host and, the same values, on the device;
// the double-precision references computed on the host (blas::reference) or the device
// (blasReferenceOnGpu).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../examples/blas/blas.hpp"
#include "blas_reference.hpp"
#include "family.hpp"

namespace tuning {

// What names the data of sequence `name` on problem pr among the sweep's shared data.
std::string blasDataKey(const std::string& name, const blas::Problem& pr);

// On the host: the inputs (Random::Signed floats in [-1, 1), seeded by the problem and the
// input's name) and the reference of every output.
struct BlasHostData {
  blas::Buffers inputs;
  std::map<std::string, blas::Expected> expected;
};
// q is blas::sequence(name, pr) (its inputs, outputs and temporaries are read).
std::shared_ptr<const BlasHostData> blasHostData(DataCache& cache, const blas::Sequence& q,
                                                 const blas::Problem& pr);

// On the device: the inputs in rotated copies (rotationsFor), and every output's reference
// computed there from the first copy.
struct BlasDeviceData {
  std::vector<blas::DeviceBuffers> copies;
  std::map<std::string, ExpectedOnGpu> expected;
};
std::shared_ptr<BlasDeviceData> blasDeviceData(DataCache& cache, const blas::Sequence& q,
                                               const blas::Problem& pr);

}  // namespace tuning
