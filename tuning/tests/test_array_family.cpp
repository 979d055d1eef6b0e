// The array family (array_family.hpp) on the simulator: the first alternatives of GEMVER's and
// BiCGK's fusion spaces at a small size, each point built, run and checked as a sweep runs it;
// each alternative launches the kernels array::fusionSpace says it does (so alternatives that
// differ in kernels differ in the sweep too); a point built for the GPU simulates (--prune);
// an alternative past the space, and registering too late or twice, are Errors naming them.
#include <doctest/doctest.h>

#include <set>

#include "../../examples/blas/scripts.hpp"
#include "array_family.hpp"
#include "space.hpp"

using namespace tuning;
namespace array = obsidian::array;

namespace {

const Params kMatrix = {{"size", 37}, {"cols", 45}, {"pitch", 48}, {"threads", 64}};

// array::fusionSpace of `program` at kMatrix's sizes, unpruned, apart from the family.
std::vector<array::Alternative> spaceOf(const std::string& program) {
  const blas::Problem pr{0, 37, 45, 48};
  blas::Buffers b = blas::randomInputs(blas::sequence(program, pr), 1);
  array::PlanOptions o;
  o.threads = 64;
  return array::fusionSpace(blas::script(program), o, blas::bindings(program, pr, b), 256, false);
}

Point pointOf(const std::string& program, size_t alternative, bool simulate = true) {
  Params p = kMatrix;
  p["program"] = program;
  p["alternative"] = alternative;
  return makePoint("array", p, simulate);
}

}  // namespace

TEST_CASE("array family: GEMVER's and BiCGK's alternatives run right, in their kernels") {
  for (const char* program : {"GEMVER", "BiCGK"}) {
    CAPTURE(program);
    const std::vector<array::Alternative> space = spaceOf(program);
    REQUIRE(space.size() >= 2);
    CHECK(arrayAlternatives(pointOf(program, 0).params).size() == space.size());
    std::set<size_t> built, predicted;
    std::set<std::string> labels, plans;
    for (size_t k = 0; k < std::min<size_t>(space.size(), 4); ++k) {
      CAPTURE(k);
      const Point p = pointOf(program, k);
      const Generated g = generate(*p.family, p.params, true);
      CHECK(g.kernels.size() == space[k].kernels);
      DataCache cache;
      const std::unique_ptr<Instance> point = p.family->instantiate(p.params, g, cache);
      CHECK(point->simulate({}).size() == g.kernels.size());
      CHECK(point->check() == "");
      CHECK(point->bytesMoved() > 0);
      built.insert(g.kernels.size());
      std::string names;
      for (const obsidian::Kernel& kernel : g.kernels) names += kernel.name() + " ";
      plans.insert(names);
      predicted.insert(space[k].kernels);
      const std::string label = p.family->variantLabel(p.params);
      CHECK(label.rfind("a" + std::to_string(k) + " " + std::to_string(space[k].kernels) + "k ",
                        0) == 0);
      labels.insert(label);
    }
    CHECK(built == predicted);
    const size_t swept = std::min<size_t>(space.size(), 4);
    CHECK(plans.size() == swept);   // each alternative its own kernels
    CHECK(labels.size() == swept);  // and its own label
  }
  // GEMVER's w in the row pass's epilogue, or in a vector pass of its own: 3 kernels or 4.
  std::set<uint32_t> gemver;
  for (const array::Alternative& a : spaceOf("GEMVER")) gemver.insert(a.kernels);
  CHECK(gemver == std::set<uint32_t>{3, 4});
}

TEST_CASE("array family: a point built for the GPU simulates as its simulated twin") {
  // (--prune predicts a GPU point on the simulator from what build made for the GPU)
  const Point p = pointOf("GEMVER", 1, false);
  const Generated g = generate(*p.family, p.params, false);
  CHECK(g.kernels.size() == generate(*p.family, pointOf("GEMVER", 1).params, true).kernels.size());
  DataCache cache;
  const std::unique_ptr<Instance> point = p.family->instantiate(p.params, g, cache);
  CHECK(point->simulate({}).size() == g.kernels.size());
  CHECK(point->check() == "");
}

TEST_CASE("array family: vector programs, options that do not apply, mistakes") {
  // AXPYDOT on vectors: no matrix sizes, no row-pass options; its points run right.
  const Point v = makePoint(
      "array", {{"program", "AXPYDOT"}, {"size", 5003}, {"threads", 128}, {"unroll", 4}}, true);
  CHECK(!v.params.contains("cols"));
  CHECK(!v.params.contains("unroll"));
  CHECK(!v.params.contains("items"));  // (its one pass folds the dot: reduceItems)
  CHECK(v.params.contains("reduceItems"));
  for (size_t k = 0; k < arrayAlternatives(v.params).size(); ++k) {
    Params p = v.params;
    p["alternative"] = k;
    const Generated g = generate(*v.family, p, true);
    DataCache cache;
    const std::unique_ptr<Instance> point = v.family->instantiate(p, g, cache);
    point->simulate({});
    CHECK(point->check() == "");
  }
  // An alternative past the space: the point cannot be generated (a sweep skips it).
  const Point past = pointOf("BiCGK", 255);
  CHECK_THROWS_WITH_AS(generate(*past.family, past.params, true),
                       doctest::Contains("alternative 255 is past them"), obsidian::Error);
  CHECK_THROWS_WITH_AS(
      makePoint("array", {{"program", "SGEMV"}, {"size", 8}, {"cols", 9}, {"pitch", 4}}, true),
      doctest::Contains("pitch (4) must be at least cols (9)"), obsidian::Error);
  // The registry: programs come before the family; a name once.
  (void)families();
  ArrayProgram late;
  late.name = "late";
  late.outputs = [] { return blas::script("SSCAL"); };
  late.onHost =
      late.onGpu = [](const ArrayProblem&, DataCache&) { return std::unique_ptr<ProgramData>(); };
  CHECK_THROWS_WITH_AS(registerArrayProgram(late), doctest::Contains("after the array family"),
                       obsidian::Error);
  CHECK(arrayPrograms().size() == blas::sequenceNames().size());
}
