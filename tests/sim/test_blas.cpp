// The kernel-fusion BLAS sequences of examples/blas (issue 18, item 1) on the simulator: every
// sequence against its double-precision reference on odd shapes with a pitch, under the
// default and a small shape (partial bands, tiles and warps everywhere), hazard-free; the
// unfused plans the tuning family compares; the checker itself; and every user error by its
// message.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <obsidian/sim.hpp>
#include <stdexcept>

#include "../../examples/blas/blas.hpp"
#include "../support.hpp"

using namespace obsidian;
using ::testing::errorOf;

namespace {

// Runs sequence `name` on problem `pr` with `shape` and returns the first mismatch (empty: all
// outputs agree with the reference). Outputs start as NaN, so an element never written fails.
std::string runChecked(const std::string& name, const blas::Problem& pr,
                       const blas::Shape& shape = {}, uint32_t seed = 1) {
  const blas::Sequence q = blas::sequence(name, pr, shape);
  blas::Buffers b = blas::randomInputs(q, seed);
  for (const auto& [out, size] : q.outputs) b[out].assign(size, std::nanf(""));
  blas::simulate(q, b);
  return blas::mismatch(blas::reference(name, pr, b), b);
}

// A shape whose every tile, band and warp is partial on the problems below.
const blas::Shape kSmall{
    .threads = 64, .rowUnroll = 3, .band = 5, .bicgkBand = 3, .perLane = 2, .vectorItems = 3};

const SimTraffic& trafficOf(const SimStats& st, const std::string& array) {
  for (const SimTraffic& t : st.traffic) {
    if (t.array == array) return t;
  }
  FAIL("no traffic for " << array);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("blas: every sequence matches its reference on odd shapes, with a pitch") {
  // Vectors of a prime length; matrices 37 x 45 (pitch 48) and 70 x 161 (pitch 165): rows not a
  // multiple of a block's warps or a band, columns not of a warp or of a BiCGK tile.
  const std::vector<blas::Problem> problems = {{1009, 37, 45, 48}, {4099, 70, 161, 165}};
  for (const std::string& name : blas::sequenceNames()) {
    for (const blas::Problem& pr : problems) {
      for (const blas::Shape& shape : {blas::Shape{}, kSmall}) {
        CAPTURE(name);
        CAPTURE(pr.rows);
        CAPTURE(shape.threads);
        CHECK(runChecked(name, pr, shape) == "");
      }
    }
  }
}

TEST_CASE("blas: the unfused plans (one kernel per BLAS call) match the reference too") {
  const std::vector<blas::Problem> problems = {{1009, 37, 45, 48}, {4099, 70, 161, 165}};
  blas::Shape small = kSmall, plain;
  small.fuse = plain.fuse = false;
  for (const std::string& name : blas::sequenceNames()) {
    if (!blas::isFusible(name)) continue;
    CAPTURE(name);
    // the flag is honoured: the split plan launches other kernels than the fused one
    const auto kernels = [&](const blas::Shape& shape) {
      std::string names;
      for (const blas::Step& s : blas::sequence(name, problems[0], shape).steps) {
        names += s.kernel.name() + " ";
      }
      return names;
    };
    CHECK(kernels(plain) != kernels(blas::Shape{}));
    for (const blas::Problem& pr : problems) {
      for (const blas::Shape& shape : {plain, small}) {
        CAPTURE(pr.rows);
        CAPTURE(shape.threads);
        CHECK(runChecked(name, pr, shape) == "");
      }
    }
  }
  for (const blas::Problem& pr : {blas::Problem{0, 1, 300, 301}, blas::Problem{0, 300, 1, 2}}) {
    for (const char* name : {"BiCGK", "GEMVER", "GESUMMV"}) {
      CAPTURE(name);
      CHECK(runChecked(name, pr, small) == "");
    }
  }
}

TEST_CASE("blas: shapeFields names exactly the Shape fields that change a plan") {
  // A plan's signature: every step's kernel (its CUDA and block size) and scalar arguments.
  const auto signature = [](const std::string& name, const blas::Shape& shape) {
    std::string s;
    const blas::Problem pr{1009, 37, 45, 48};
    for (const blas::Step& step : blas::sequence(name, pr, shape).steps) {
      s += step.kernel.cuda() + "@" + std::to_string(step.kernel.threadsPerBlock());
      for (const blas::Arg& a : step.args) {
        s += "," + a.buffer + std::to_string(a.word) + std::to_string(a.real);
      }
      s += ";";
    }
    return s;
  };
  using Change = void (*)(blas::Shape&);
  const std::vector<std::pair<std::string, Change>> changes = {
      {"fuse", [](blas::Shape& s) { s.fuse = !s.fuse; }},
      {"threads", [](blas::Shape& s) { s.threads = 128; }},
      {"rowUnroll", [](blas::Shape& s) { s.rowUnroll = 2; }},
      {"band", [](blas::Shape& s) { s.band = 8; }},
      {"bicgkBand", [](blas::Shape& s) { s.bicgkBand = 8; }},
      {"perLane", [](blas::Shape& s) { s.perLane = 2; }},
      {"vectorItems", [](blas::Shape& s) { s.vectorItems = 2; }}};
  for (const std::string& name : blas::sequenceNames()) {
    for (const bool fuse : {true, false}) {
      blas::Shape base;
      base.fuse = fuse;
      const std::vector<std::string> listed = blas::shapeFields(name, fuse);
      const std::string before = signature(name, base);
      for (const auto& [field, change] : changes) {
        blas::Shape changed = base;
        change(changed);
        CAPTURE(name);
        CAPTURE(fuse);
        CAPTURE(field);
        CHECK((signature(name, changed) != before) ==
              (std::find(listed.begin(), listed.end(), field) != listed.end()));
      }
    }
  }
}

TEST_CASE("blas: tunedShape keeps BiCGK's warps up and every tuned plan is correct") {
  // bands x tiles >= kFillWarps (24 warps on each of 132 SMs), the largest band from 128 down
  CHECK(blas::tunedShape("BiCGK", {0, 4096, 4096, 4096}).bicgkBand == 32);
  CHECK(blas::tunedShape("BiCGK", {0, 6007, 5003, 5003}).bicgkBand == 64);
  CHECK(blas::tunedShape("BiCGK", {0, 8192, 8192, 8192}).bicgkBand == 128);
  CHECK(blas::tunedShape("BiCGK", {0, 70, 161, 165}).bicgkBand == 16);  // the smallest band
  CHECK(blas::tunedShape("SGEMV", {0, 70, 161, 165}).rowUnroll == 8);
  // the column passes' band: 256 while it keeps 3168 warps, else 128, at least 64
  CHECK(blas::tunedShape("GEMVER", {0, 4096, 4096, 4096}).band == 128);
  CHECK(blas::tunedShape("GEMVER", {0, 6007, 5003, 5003}).band == 256);
  CHECK(blas::tunedShape("ATAX", {0, 8192, 8192, 8192}).band == 256);
  CHECK(blas::tunedShape("ATAX", {0, 70, 161, 165}).band == 64);
  CHECK(blas::tunedShape("AXPYDOT", {1009, 0, 0, 0}).vectorItems == 8);
  for (const std::string& name : blas::sequenceNames()) {
    for (const blas::Problem& pr : {blas::Problem{1009, 37, 45, 48}, {4099, 70, 161, 165}}) {
      CAPTURE(name);
      CHECK(runChecked(name, pr, blas::tunedShape(name, pr)) == "");
    }
  }
}

TEST_CASE("blas: matrices of one row, one column and one element") {
  for (const char* name : {"ATAX", "BiCGK", "SGEMV", "SGEMVT", "GEMVER", "GESUMMV", "MADD"}) {
    for (const blas::Problem& pr :
         {blas::Problem{0, 1, 1, 1}, blas::Problem{0, 1, 300, 301}, blas::Problem{0, 300, 1, 2}}) {
      CAPTURE(name);
      CAPTURE(pr.cols);
      CHECK(runChecked(name, pr, kSmall) == "");
    }
  }
  for (const char* name : {"AXPYDOT", "SSCAL", "VADD", "WAXPBY"}) {
    CHECK(runChecked(name, {1, 0, 0, 0}) == "");
  }
}

TEST_CASE("blas: the fused passes read the matrix once and write what the plan says") {
  // BiCGK: one pass over A for q and s; GEMVER's first pass writes B and reads A once.
  const blas::Problem pr{0, 70, 161, 165};
  const blas::Sequence bicgk = blas::sequence("BiCGK", pr);
  blas::Buffers b = blas::randomInputs(bicgk, 2);
  const SimStats st = obsidian::simulate(
      bicgk.steps[0].kernel,
      {b.at("A"), 70u, 161u, 165u, b.at("p"), b.at("r"), b.at("qPartials"), b.at("sPartials")});
  CHECK(trafficOf(st, "A").loads == 70u * 161u);
  // AXPYDOT: z written once per element, w, v and u each read once.
  const blas::Sequence axpydot = blas::sequence("AXPYDOT", {1009, 0, 0, 0});
  blas::Buffers v = blas::randomInputs(axpydot, 3);
  const SimStats sv = obsidian::simulate(
      axpydot.steps[0].kernel,
      {blas::kAlpha, v.at("w"), v.at("v"), v.at("u"), v.at("z"), v.at("partials")});
  CHECK(trafficOf(sv, "w").loads == 1009u);
  CHECK(trafficOf(sv, "z").stores == 1009u);
}

TEST_CASE("blas: the checker finds a wrong element and names it") {
  const blas::Problem pr{0, 9, 7, 7};
  const blas::Sequence q = blas::sequence("SGEMVT", pr);
  blas::Buffers b = blas::randomInputs(q, 4);
  blas::simulate(q, b);
  const auto want = blas::reference("SGEMVT", pr, b);
  CHECK(blas::mismatch(want, b) == "");
  b["w"][5] += 1e-3f * (1.0f + std::fabs(b["w"][5]));
  CHECK(blas::mismatch(want, b).rfind("w[5]: got", 0) == 0);
}

TEST_CASE("blas: user errors name the rule") {
  CHECK(errorOf([] {
          blas::sequence("GEMM", {0, 4, 4, 4});
        }).find("no sequence named 'GEMM'") != std::string::npos);
  CHECK(errorOf([] {
          blas::sequence("SGEMV", {0, 4, 5, 4});
        }).find("pitch >= cols") != std::string::npos);
  CHECK(errorOf([] {
          blas::sequence("SSCAL", {0, 4, 4, 4});
        }).find("needs a non-empty problem") != std::string::npos);
  CHECK(errorOf([] {
          blas::sgemv({.threads = 48});
        }).find("threads must be a multiple of 32 of at most 1024; got 48") != std::string::npos);
  CHECK(errorOf([] { blas::columnSums({.band = 0}); }).find("band must be 1..65536; got 0") !=
        std::string::npos);
  CHECK(errorOf([] { blas::bicgk({.perLane = 17}); }).find("perLane must be 1..16; got 17") !=
        std::string::npos);
  // Launch preconditions, by message.
  const std::vector<float> a(12, 1.0f), x3(3, 1.0f), x4(4, 1.0f), y3(3, 1.0f);
  std::vector<float> z(3), small(2), four(4), three(3);
  CHECK(errorOf([&] {
          simulate(blas::sgemv(), {1.0f, a, 3u, 4u, 4u, x3, 1.0f, y3, z});
        }).find("x has one element per column of A") != std::string::npos);
  simulate(blas::sgemv(), {1.0f, a, 3u, 4u, 4u, x4, 1.0f, y3, z});
  CHECK(z[0] == doctest::Approx(5.0f));
  CHECK(errorOf([&] {
          simulate(blas::columnSums(), {a, 3u, 4u, 4u, y3, small});
        }).find("the partials hold (rows / band, rounded up) x cols elements") !=
        std::string::npos);
  CHECK(errorOf([&] {
          simulate(blas::bicgk(), {a, 3u, 4u, 4u, x4, y3, small, four});
        }).find("the q partials hold") != std::string::npos);
  // Empty matrices: the kernels launched directly run (nothing to do) rather than divide by
  // zero while checking their buffers' sizes.
  const std::vector<float> none;
  for (const auto& [rows, cols] : {std::pair{0u, 4u}, std::pair{3u, 0u}, std::pair{0u, 0u}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    const std::vector<float> yr(rows, 1.0f), pc(cols, 1.0f);
    std::vector<float> q, s, bOut;
    CHECK(errorOf([&] {
            simulate(blas::columnSums(), {none, rows, cols, cols, yr, q});
          }) == "no error");
    CHECK(errorOf([&] {
            simulate(blas::bicgk(), {none, rows, cols, cols, pc, yr, q, s});
          }) == "no error");
    CHECK(errorOf([&] {
            simulate(blas::gemverUpdate(), {none, rows, cols, cols, yr, pc, yr, pc, yr, bOut, q});
          }) == "no error");
  }
  CHECK(errorOf([&] {
          simulate(blas::axpydot(), {1.0f, x3, x3, x4, three, small});
        }).find("w, v and u have one length") != std::string::npos);
  CHECK(errorOf([&] {
          simulate(blas::combine(), {1.0f, 0u, x4, 1.0f, y3, z});
        }).find("combine needs at least one part") != std::string::npos);
  CHECK(errorOf([&] {
          simulate(blas::sumParts(), {2u, 3u, x4, z});
        }).find("the partials hold parts x n elements") != std::string::npos);
}
