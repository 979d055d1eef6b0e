// The kernel-fusion BLAS sequences as array programs (examples/blas/scripts.hpp) on the
// simulator: each of the eleven scripts, planned by array::Plan, against blas::reference on odd
// shapes with a pitch; the planner reaches the hand-fused plans' kernel counts (blas::sequence)
// and moves no more bytes than the unfused plan; planning a script again is a cache hit.
#include <doctest/doctest.h>

#include <cmath>
#include <obsidian/array.hpp>

#include "../../examples/blas/scripts.hpp"
#include "../support.hpp"

using namespace obsidian;
using ::testing::errorOf;

namespace {

// Vectors of odd lengths; matrices whose rows are no multiple of a block's warps or a band and
// whose columns are no multiple of a warp, with a pitch past the columns.
const std::vector<blas::Problem> kVectors = {{1003, 0, 0, 0}, {4099, 0, 0, 0}};
const std::vector<blas::Problem> kMatrices = {{0, 37, 45, 48}, {0, 67, 131, 136}};

const std::vector<blas::Problem>& problemsOf(const std::string& name) {
  return blas::isVectorSequence(name) ? kVectors : kMatrices;
}

// Runs `plan` over sequence `name`'s random inputs (seeded) on problem `pr`, the outputs NaN
// first (so an element never written fails), and returns the first mismatch against the
// reference (empty: all agree).
std::string runPlanned(const array::Plan& plan, const std::string& name, const blas::Problem& pr,
                       uint32_t seed = 1) {
  const blas::Sequence q = blas::sequence(name, pr);
  blas::Buffers b = blas::randomInputs(q, seed);
  for (const auto& [out, size] : q.outputs) b[out].assign(size, std::nanf(""));
  const array::Bindings bound = blas::bindings(name, pr, b);
  plan.run(bound);
  const std::string bad = blas::mismatch(blas::reference(name, pr, b), b);
  if (!bad.empty()) {
    MESSAGE(name << " " << pr.rows << "x" << pr.cols << ": " << bad << "\n"
                 << plan.report(bound).str());
  }
  return bad;
}

}  // namespace

TEST_CASE("array BLAS: every script matches its reference on odd shapes, with a pitch") {
  for (const std::string& name : blas::sequenceNames()) {
    CAPTURE(name);
    const array::Plan plan(blas::script(name));
    for (const blas::Problem& pr : problemsOf(name)) {
      CAPTURE(pr.n);
      CAPTURE(pr.rows);
      CAPTURE(pr.cols);
      CHECK(runPlanned(plan, name, pr) == "");
      CHECK(runPlanned(plan, name, pr, 7) == "");
    }
  }
}

TEST_CASE("array BLAS: the planner reaches the hand-fused plans' kernel counts") {
  // The hand plans (blas::sequence, fused): ATAX, SGEMVT and GEMVER 3 (a column pass's partials
  // are combined before the row pass reads them), the others 1 but AXPYDOT, 2 (its fused pass,
  // then a kernel adding the blocks' partials of r). The planner folds AXPYDOT's dot in its one
  // vector pass (tests/sim/test_array.cpp), a kernel fewer. BiCGK's hand plan reads A once for q
  // and s (bicgkPass) and sums two sets of partials; the planner may take another route, in at
  // most as many kernels.
  for (const std::string& name : blas::sequenceNames()) {
    CAPTURE(name);
    const array::Plan plan(blas::script(name));
    for (const blas::Problem& pr : problemsOf(name)) {
      CAPTURE(pr.rows);
      const size_t hand = blas::sequence(name, pr).steps.size();
      if (name == "BiCGK") {
        CHECK(plan.kernelCount() <= 3);
      } else if (name == "AXPYDOT") {
        CHECK(plan.kernelCount() == 1);
      } else {
        CHECK(plan.kernelCount() == hand);
      }
      blas::Buffers b = blas::randomInputs(blas::sequence(name, pr), 2);
      const array::PlanReport report = plan.report(blas::bindings(name, pr, b));
      CHECK(report.kernels.size() == plan.kernelCount());
      CHECK(report.bytes <= report.unfusedBytes);
      if (plan.kernelCount() > hand) MESSAGE(report.str());
    }
  }
}

TEST_CASE("array BLAS: planning a script again finds the plan in the cache") {
  for (const char* name : {"GEMVER", "AXPYDOT"}) {
    CAPTURE(name);
    const array::Plan first(blas::script(name));
    const array::Plan again(blas::script(name));  // new nodes, the same program
    CHECK(again.cached());
    CHECK(again.kernelCount() == first.kernelCount());
    CHECK(runPlanned(again, name, problemsOf(name)[0], 3) == "");
  }
}

TEST_CASE("array BLAS: an unknown script is an Error naming it") {
  CHECK(errorOf([] { blas::script("GEMM"); }).find("no sequence named 'GEMM'") !=
        std::string::npos);
}
