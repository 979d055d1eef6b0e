// The seeds' programs of examples/stencils and examples/accelerate (issue 18): the launch
// preconditions each states, checked by message on the simulator. (Their results are checked
// against C++ by the examples themselves: example.stencils.simulator, example.accelerate.*.)
#include <doctest/doctest.h>

#include <obsidian/sim.hpp>

#include "../../examples/accelerate/accelerate.hpp"
#include "../../examples/stencils/stencils.hpp"
#include "../support.hpp"

using namespace obsidian;
using ::testing::errorOf;

TEST_CASE("stencils: a window stencil needs a whole window of input") {
  for (stencils::Memory m : {stencils::Memory::Global, stencils::Memory::Shared}) {
    const std::vector<float> in(14, 1.0f);
    std::vector<float> out(1);
    const Kernel k = stencils::movingAverage(m);
    CHECK(errorOf([&] {
            simulate(k, {in, out});
          })
              .find("the input holds a whole window of 15 elements (inLen >= 15u fails with "
                    "inLen = 14)") != std::string::npos);
    // A whole window: one output.
    const std::vector<float> window(15, 2.0f);
    simulate(k, {window, out});
    CHECK(out[0] == doctest::Approx(2.0f));
  }
}

TEST_CASE("stencils: the RMSE needs inputs of one length, and not empty") {
  const Kernel fused = stencils::rmseFused(kSimulatedReduceBlocks);
  std::vector<float> out(1);
  CHECK(errorOf([&] {
          simulate(fused, {std::vector<float>(8, 1.0f), std::vector<float>(9), out});
        }).find("transformReduceAll: the inputs have one length") != std::string::npos);
  CHECK(errorOf([&] {
          simulate(fused, {std::vector<float>(), std::vector<float>(), out});
        }).find("x and y are not empty") != std::string::npos);
}

TEST_CASE("accelerate: the kernels' arrays have one length") {
  std::vector<float> one(1);
  CHECK(errorOf([&] {
          simulate(accelerate::dotp(kSimulatedReduceBlocks),
                   {std::vector<float>(8), std::vector<float>(7), one});
        }).find("transformReduceAll: the inputs have one length") != std::string::npos);
  std::vector<float> z(8);
  CHECK(errorOf([&] {
          simulate(accelerate::saxpy(), {1.0f, std::vector<float>(8), std::vector<float>(7), z});
        }).find("xs and ys have the same length") != std::string::npos);
  std::vector<float> call(8), put(8);
  CHECK(errorOf([&] {
          simulate(accelerate::blackScholes(), {std::vector<float>(8), std::vector<float>(8),
                                                std::vector<float>(9), call, put});
        }).find("the options' arrays have one length") != std::string::npos);
}
