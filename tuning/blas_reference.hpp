// blas::reference on the device, for the blas family's checks (issue 20, item 4): every output's
// double-precision value and scale (the sum of its terms' magnitudes) computed by plain kernels,
// one thread per element, row or column, a sequential loop over its terms, compiled without
// contracting a*b+c. So they are the host's doubles bit for bit: the same operations in the
// same order (AXPYDOT's dot alone is folded per 4096 elements, then the partial sums in order).
// And the check counts on the device the elements blas::mismatch would reject: a warm sweep
// neither computes a reference on the host nor reads one from disk.
#pragma once

#include <map>
#include <string>

#include "../examples/blas/blas.hpp"

namespace tuning {

// One output's reference: per element its value and the scale of its tolerance.
struct ExpectedOnGpu {
  obsidian::gpu::DeviceBuffer<double> value, scale;
};

// The outputs of q = blas::sequence(name, pr) (the names blas::reference gives), from the
// device inputs `in` (every input of q, by name). An Error for a missing or wrong-sized input.
std::map<std::string, ExpectedOnGpu> blasReferenceOnGpu(const blas::Sequence& q,
                                                        const blas::Problem& pr,
                                                        const blas::DeviceBuffers& in);

// The elements of `got` that blas::mismatch rejects against e (|got - value| above
// blas::tolerance(scale); a NaN is rejected): 0 when every one is within.
uint64_t outsideToleranceOnGpu(const obsidian::gpu::DeviceBuffer<float>& got,
                               const ExpectedOnGpu& e);

// The same kernels on the simulator (host inputs and results), for the tests without a GPU.
std::map<std::string, blas::Expected> blasReferenceOnSimulator(const blas::Sequence& q,
                                                               const blas::Problem& pr,
                                                               const blas::Buffers& in);
uint64_t outsideToleranceOnSimulator(const std::vector<float>& got, const blas::Expected& e);

}  // namespace tuning
