// blas_reference.hpp: the plain kernels' doubles are blas::reference's for every sequence (bit
// for bit but AXPYDOT's dot, folded in another order), and outsideTolerance* counts what
// blas::mismatch's test rejects, at the tolerance's very edges too: on the simulator, and on
// the GPU (skipped visibly without one).
#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <random>

#include "blas_reference.hpp"
#include "device_data.hpp"

using namespace obsidian;
using namespace tuning;
namespace gpu = obsidian::gpu;

namespace {

bool skipWithoutGpu() {
  if (gpu::available()) return false;
  std::cout << "SKIPPED: no CUDA device (" << gpu::unavailableReason() << ")\n";
  return true;
}

// The elements blas::mismatch's test rejects, counted on the host.
uint64_t outsideOnHost(const std::vector<float>& got, const std::vector<double>& value,
                       const std::vector<double>& scale) {
  uint64_t n = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    n += !(std::fabs(double(got[i]) - value[i]) <= blas::tolerance(scale[i]));
  }
  return n;
}

// A sequence's random host inputs (seeded 1, 2, ... in input order), outputs and temporaries
// zero, as blas::reference takes them.
blas::Buffers hostInputs(const blas::Sequence& q) {
  blas::Buffers host;
  uint64_t seed = 1;
  for (const auto& [in, n] : q.inputs) host[in] = randomOnHost<float>(n, seed++, Random::Signed);
  for (const auto& list : {q.outputs, q.temporaries}) {
    for (const auto& [out, n] : list) host[out].assign(n, 0.0f);
  }
  return host;
}

// The plain kernels' value and scale of `out` against the host's.
void checkOutput(const std::string& name, const std::string& out, const blas::Expected& want,
                 const std::vector<double>& value, const std::vector<double>& scale) {
  CAPTURE(name);
  CAPTURE(out);
  if (name == "AXPYDOT" && out == "r") {  // partial sums, then their sum
    CHECK(std::fabs(value[0] - want.value[0]) <= 1e-12 * want.scale[0]);
    CHECK(std::fabs(scale[0] - want.scale[0]) <= 1e-12 * want.scale[0]);
  } else {
    CHECK(value == want.value);
    CHECK(scale == want.scale);
  }
}

// Floats a few steps either side of value - tolerance and value + tolerance, over values and
// scales of twenty decades (`edges` of each side).
struct Edges {
  std::vector<float> got;
  std::vector<double> value, scale;
};
Edges edges(int count) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  Edges e;
  for (int i = 0; i < count; ++i) {
    const double v = u(rng) * std::pow(10.0, static_cast<int>(rng() % 20) - 10);
    const double s =
        std::fabs(v) * (1 + std::fabs(u(rng))) * std::pow(10.0, static_cast<int>(rng() % 6));
    for (const double edge : {v - blas::tolerance(s), v + blas::tolerance(s)}) {
      float g = static_cast<float>(edge);
      for (int k = 0; k < 3; ++k) g = std::nextafter(g, -INFINITY);
      for (int k = 0; k < 7; ++k, g = std::nextafter(g, INFINITY)) {
        e.got.push_back(g);
        e.value.push_back(v);
        e.scale.push_back(s);
      }
    }
  }
  return e;
}

const blas::Problem kVectors{4096 + 5, 0, 0, 0}, kMatrix{0, 7, 9, 11};

}  // namespace

TEST_CASE("blas_reference: the plain kernels on the simulator compute blas::reference") {
  for (const std::string& name : blas::sequenceNames()) {
    const blas::Problem pr = blas::isVectorSequence(name) ? kVectors : kMatrix;
    const blas::Sequence q = blas::sequence(name, pr);
    const blas::Buffers host = hostInputs(q);
    const std::map<std::string, blas::Expected> want = blas::reference(name, pr, host);
    const std::map<std::string, blas::Expected> got = blasReferenceOnSimulator(q, pr, host);
    REQUIRE(got.size() == want.size());
    for (const auto& [out, e] : want) {
      REQUIRE(got.count(out) == 1);
      checkOutput(name, out, e, got.at(out).value, got.at(out).scale);
      std::vector<float> g(e.value.begin(), e.value.end());
      CHECK(outsideToleranceOnSimulator(g, got.at(out)) == 0);
      g.back() = std::numeric_limits<float>::quiet_NaN();
      CHECK(outsideToleranceOnSimulator(g, got.at(out)) == 1);
    }
  }
  const Edges e = edges(100);
  const uint64_t want = outsideOnHost(e.got, e.value, e.scale);
  CHECK(want > e.got.size() / 4);  // both sides of every edge are there
  CHECK(want < e.got.size() * 3 / 4);
  CHECK(outsideToleranceOnSimulator(e.got, {e.value, e.scale}) == want);
  // Its inputs by name and size, its sequence by name, the check's sizes.
  const blas::Sequence q = blas::sequence("SSCAL", kVectors);
  CHECK_THROWS_WITH_AS(blasReferenceOnSimulator(q, kVectors, {}),
                       "blasReferenceOnSimulator: SSCAL needs the input x", Error);
  CHECK_THROWS_WITH_AS(
      blasReferenceOnSimulator(q, kVectors, {{"x", std::vector<float>(5)}}),
      "blasReferenceOnSimulator: SSCAL's input x has 5 elements; this problem needs 4101", Error);
  blas::Sequence unknown;
  unknown.name = "SAXPY";
  CHECK_THROWS_WITH_AS(blasReferenceOnSimulator(unknown, kVectors, {}),
                       "blasReferenceOnSimulator: no sequence named 'SAXPY'", Error);
  CHECK_THROWS_WITH_AS(outsideToleranceOnSimulator(std::vector<float>(3), {e.value, e.scale}),
                       "outsideToleranceOnSimulator: 3 elements, 1400 values and 1400 scales",
                       Error);
}

TEST_CASE("blas_reference: the doubles on the GPU are blas::reference's") {
  if (skipWithoutGpu()) return;
  // Vectors over several of the dot's 4096-element partials; a matrix with a pitch.
  const blas::Problem vectors{3 * 4096 + 5, 0, 0, 0}, matrix{0, 37, 53, 56};
  for (const std::string& name : blas::sequenceNames()) {
    const blas::Problem pr = blas::isVectorSequence(name) ? vectors : matrix;
    const blas::Sequence q = blas::sequence(name, pr);
    const blas::Buffers host = hostInputs(q);
    blas::DeviceBuffers device;
    uint64_t seed = 1;  // on the device by the same generator
    for (const auto& [in, n] : q.inputs) {
      randomOnGpu(device.emplace(in, gpu::DeviceBuffer<float>(n)).first->second, seed++,
                  Random::Signed);
    }
    const std::map<std::string, blas::Expected> want = blas::reference(name, pr, host);
    const std::map<std::string, ExpectedOnGpu> got = blasReferenceOnGpu(q, pr, device);
    REQUIRE(got.size() == want.size());
    for (const auto& [out, e] : want) {
      REQUIRE(got.count(out) == 1);
      const std::vector<double> value = got.at(out).value.download();
      checkOutput(name, out, e, value, got.at(out).scale.download());
      // The outputs rounded to float pass; one moved beyond its tolerance and a NaN do not.
      std::vector<float> g(value.begin(), value.end());
      CHECK(outsideToleranceOnGpu(gpu::DeviceBuffer<float>(g), got.at(out)) == 0);
      g[0] = static_cast<float>(e.value[0] + 3 * blas::tolerance(e.scale[0]));
      if (g.size() > 1) g[1] = std::numeric_limits<float>::quiet_NaN();
      CHECK(outsideToleranceOnGpu(gpu::DeviceBuffer<float>(g), got.at(out)) ==
            std::min<uint64_t>(2, g.size()));
    }
  }
  // Its inputs by name and size.
  const blas::Sequence q = blas::sequence("SSCAL", vectors);
  CHECK_THROWS_WITH_AS(blasReferenceOnGpu(q, vectors, {}),
                       "blasReferenceOnGpu: SSCAL needs the input x", Error);
  blas::DeviceBuffers shorter;
  shorter.emplace("x", gpu::DeviceBuffer<float>(5));
  CHECK_THROWS_WITH_AS(blasReferenceOnGpu(q, vectors, shorter),
                       "blasReferenceOnGpu: SSCAL's input x has 5 elements; this problem needs "
                       "12293",
                       Error);
}

TEST_CASE("blas_reference: the check on the GPU is blas::mismatch's, at the tolerance's edges") {
  if (skipWithoutGpu()) return;
  const auto [got, value, scale] = edges(2000);
  const uint64_t want = outsideOnHost(got, value, scale);
  CHECK(want > got.size() / 4);  // both sides of every edge are there
  CHECK(want < got.size() * 3 / 4);
  const ExpectedOnGpu e{gpu::DeviceBuffer<double>(value), gpu::DeviceBuffer<double>(scale)};
  CHECK(outsideToleranceOnGpu(gpu::DeviceBuffer<float>(got), e) == want);
  CHECK_THROWS_WITH_AS(outsideToleranceOnGpu(gpu::DeviceBuffer<float>(3), e),
                       "outsideToleranceOnGpu: 3 elements, 28000 values and 28000 scales", Error);
}
