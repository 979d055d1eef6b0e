// The fused BLAS benchmark (issue 18, item 1: seed 002, Tables 1 and 2). In one run, on the
// same random data: each of the eleven sequences of examples/blas (obsidian's kernels) against
// the CUBLAS calls the paper raced (cuda_blas.cu, copies included where CUBLAS works in
// place), at vectors of 2^24 and 2^26 floats and matrices of 4096^2, 8192^2 and 6007 x 5003.
// Every output, ours and CUBLAS's, is poisoned (NaN) and then checked against the C++
// reference before anything is timed. The copy kernel over 2^26 floats is the roofline: %roof
// is the GB/s of the bytes our kernels move (every buffer argument once) over the copy's.
//
// Each sequence also runs as an array program (examples/blas/scripts.hpp: blas::script, planned
// once by array::Plan for the GPU over the same device buffers), checked the same way: "planned
// us" is its time and "planned/hand" its time over ours (the hand-fused plan's).
//
// Each sequence runs with blas::tunedShape (the tuning sweep's choice); --untuned runs
// blas::Shape{}'s defaults instead, and each shape option overrides that one field.
//
// Usage: obsidian-bench-blas [--quick] [--sequence NAME] [--runs N] [--json FILE] [--unfused]
//                            [--untuned] [--threads T --band B --bicgk-band B --per-lane K
//                             --unroll U --vector-items V]
#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../../examples/blas/blas.hpp"
#include "../../examples/blas/scripts.hpp"
#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cuda_blas.hpp"

namespace {

using namespace obsidian;
using nlohmann::json;

void poison(gpu::DeviceBuffer<float>& b) { b.fill(std::bit_cast<float>(0xFFFFFFFFu)); }

std::map<std::string, float*> pointers(const blas::DeviceBuffers& d) {
  std::map<std::string, float*> p;
  for (const auto& [name, b] : d) p[name] = reinterpret_cast<float*>(b.address());
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The kernel-fusion BLAS sequences: obsidian against the CUBLAS calls"};
  bench::CommonOptions common;
  std::string only;
  blas::Shape given;  // the fields given on the command line
  app.add_flag("--quick", common.quick, "small sizes only");
  app.add_option("--sequence", only, "one sequence (AXPYDOT, ATAX, BiCGK, ...)");
  app.add_option("--runs", common.runs, "timed runs per measurement")->check(CLI::Range(1, 10000));
  app.add_option("--threads", given.threads, "threads per block of every kernel");
  app.add_option("--band", given.band, "rows a column pass's thread folds");
  app.add_option("--bicgk-band", given.bicgkBand, "rows a BiCGK warp visits");
  app.add_option("--per-lane", given.perLane, "columns a BiCGK lane owns");
  app.add_option("--unroll", given.rowUnroll,
                 "row dots: products a lane folds a trip; column passes: rows a thread reads");
  app.add_option("--vector-items", given.vectorItems, "AXPYDOT: elements per thread of a tile");
  bool unfused = false, untuned = false;
  app.add_flag("--untuned", untuned, "blas::Shape{}'s defaults instead of blas::tunedShape");
  app.add_flag("--unfused", unfused,
               "one kernel per BLAS call for the F-tagged sequences (what fusion buys)");
  array::PlanOptions planOptions;  // the array programs' knobs (defaults: PlanOptions's)
  app.add_option("--plan-threads", planOptions.threads, "array programs: threads per block");
  app.add_option("--plan-items", planOptions.items,
                 "array programs: elements a thread takes a tile");
  app.add_option("--plan-reduce-items", planOptions.reduceItems,
                 "array programs: elements a thread takes a trip in a pass with reductions");
  app.add_option("--plan-unroll", planOptions.unroll,
                 "array programs: elements a row or column pass reads before it folds");
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  const auto shapeFor = [&](const std::string& name, const blas::Problem& pr) {
    blas::Shape s = untuned ? blas::Shape{} : blas::tunedShape(name, pr);
    s.fuse = !unfused;
    const std::pair<const char*, uint32_t blas::Shape::*> fields[] = {
        {"--threads", &blas::Shape::threads},      {"--band", &blas::Shape::band},
        {"--bicgk-band", &blas::Shape::bicgkBand}, {"--per-lane", &blas::Shape::perLane},
        {"--unroll", &blas::Shape::rowUnroll},     {"--vector-items", &blas::Shape::vectorItems}};
    for (const auto& [option, field] : fields) {
      if (app.count(option) > 0) s.*field = given.*field;
    }
    return s;
  };
  try {  // the shape's errors before any device work
    blas::sequence("SSCAL", {1, 0, 0, 0}, shapeFor("SSCAL", {1, 0, 0, 0}));
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  if (!only.empty() && std::find(blas::sequenceNames().begin(), blas::sequenceNames().end(),
                                 only) == blas::sequenceNames().end()) {
    std::cerr << "--sequence: no sequence named " << only << "\n";
    return 2;
  }
  if (!bench::deviceOrSkip()) return bench::kSkipped;

  std::vector<blas::Problem> vectors = {{1u << 24}, {1u << 26}};
  std::vector<blas::Problem> matrices = {
      {0, 4096, 4096, 4096}, {0, 8192, 8192, 8192}, {0, 6007, 5003, 5003}};
  if (common.quick) {
    vectors = {{1000003}};
    matrices = {{0, 1031, 1543, 1543}};
  }
  // The copy roofline: 2^26 floats read and written.
  const size_t copyFloats = size_t{1} << 26;
  gpu::DeviceBuffer<float> copySrc(copyFloats), copyDst(copyFloats);
  copySrc.fill(std::bit_cast<float>(0x3F3F3F3Fu));
  const bench::Timing copy = bench::timeGpu(
      [&](int) {
        bench::copyKernel(reinterpret_cast<const float*>(copySrc.address()),
                          reinterpret_cast<float*>(copyDst.address()), copyFloats * 4);
      },
      common.runs);
  const double roof = bench::gbps(copyFloats * 8, copy.medianMs);
  std::cout << "copy roofline: " << std::fixed << std::setprecision(0) << roof << " GB/s\n\n"
            << "sequence   problem            kernels  ours us  cublas us  cublas/ours  ours GB/s  "
               "%roof  planned us  planned/hand  check\n";
  json rows = json::array();
  gpu::LaunchOptions async;
  async.synchronize = false;
  array::RunOptions plannedAsync;
  plannedAsync.synchronize = false;
  array::PlanOptions onGpu = planOptions;
  onGpu.target = device::Target::onGpu();
  for (const std::string& name : blas::sequenceNames()) {
    if (!only.empty() && name != only) continue;
    const array::Plan plan(blas::script(name), onGpu);  // one plan for every problem
    for (const blas::Problem& pr : blas::isVectorSequence(name) ? vectors : matrices) {
      const blas::Shape shape = shapeFor(name, pr);
      const blas::Sequence q = blas::sequence(name, pr, shape);
      blas::Buffers b = blas::randomInputs(q, 5);
      const auto want = blas::reference(name, pr, b);
      blas::DeviceBuffers d = blas::upload(q, b);
      const auto p = pointers(d);
      const auto ours = [&] { blas::launch(q, d, async); };
      const auto theirs = [&](bool timed) {
        bench::cublasSequence(name, blas::kAlpha, blas::kBeta, p, pr.n, pr.rows, pr.cols, timed);
      };
      const auto run = [&](const std::function<void()>& f) {
        for (const auto& [out, size] : q.outputs) poison(d.at(out));
        f();
        bench::checkCuda(name);
        blas::download(q, d, b);
        return blas::mismatch(want, b);
      };
      const array::Bindings bound = blas::bindings(name, pr, d);
      const auto planned = [&] { plan.run(bound, plannedAsync); };
      const std::string oursBad = run(ours);
      const std::string theirsBad = run([&] { theirs(false); });
      const std::string plannedBad = run(planned);
      const bench::Timing t1 = bench::timeGpu([&](int) { ours(); }, common.runs);
      const bench::Timing t2 = bench::timeGpu([&](int) { theirs(true); }, common.runs);
      const bench::Timing t4 = bench::timeGpu([&](int) { planned(); }, common.runs);
      const double gbps = blas::movedBytes(q) / (t1.medianMs * 1e-3) / 1e9;
      std::ostringstream problem;
      if (blas::isVectorSequence(name)) {
        problem << "n=" << pr.n;
      } else {
        problem << pr.rows << "x" << pr.cols;
      }
      const bool ok = oursBad.empty() && theirsBad.empty() && plannedBad.empty();
      std::cout << std::left << std::setw(11) << name << std::setw(19) << problem.str()
                << std::right << std::setw(7) << q.steps.size() << std::fixed
                << std::setprecision(1) << std::setw(9) << t1.medianMs * 1e3 << std::setw(11)
                << t2.medianMs * 1e3 << std::setprecision(3) << std::setw(13)
                << t2.medianMs / t1.medianMs << std::setprecision(0) << std::setw(11) << gbps
                << std::setprecision(1) << std::setw(7) << 100 * gbps / roof << std::setw(12)
                << t4.medianMs * 1e3 << std::setprecision(3) << std::setw(14)
                << t4.medianMs / t1.medianMs << "  "
                << (ok ? "ok" : "WRONG " + oursBad + " / " + theirsBad + " / planned " + plannedBad)
                << std::endl;
      json row = {{"sequence", name},
                  {"n", pr.n},
                  {"rows", pr.rows},
                  {"cols", pr.cols},
                  {"kernels", q.steps.size()},
                  {"shape",
                   {{"fuse", shape.fuse},
                    {"threads", shape.threads},
                    {"band", shape.band},
                    {"bicgkBand", shape.bicgkBand},
                    {"perLane", shape.perLane},
                    {"rowUnroll", shape.rowUnroll},
                    {"vectorItems", shape.vectorItems}}},
                  {"ours", bench::timingJson(t1)},
                  {"cublas", bench::timingJson(t2)},
                  {"speedup", t2.medianMs / t1.medianMs},
                  {"ours_gbps", gbps},
                  {"roofline_gbps", roof},
                  {"ours_ok", oursBad.empty()},
                  {"cublas_ok", theirsBad.empty()},
                  {"planned", bench::timingJson(t4)},
                  {"planned_ok", plannedBad.empty()},
                  {"planned_kernels", plan.kernelCount()},
                  {"planned_over_hand", t4.medianMs / t1.medianMs}};
      if (name == "MADD") {  // CUBLAS's one-call form, for the record
        const auto geam = [&] {
          bench::cublasGeamAdd(p.at("A"), p.at("B"), p.at("C"), pr.rows, pr.cols);
        };
        const bool geamOk = run(geam).empty();
        const bench::Timing t3 = bench::timeGpu([&](int) { geam(); }, common.runs);
        std::cout << "  (MADD by one cublasSgeam: " << std::setprecision(1) << t3.medianMs * 1e3
                  << " us, geam/ours " << std::setprecision(3) << t3.medianMs / t1.medianMs
                  << (geamOk ? ", ok" : ", WRONG") << ")\n";
        row["geam"] = bench::timingJson(t3);
        row["geam_ok"] = geamOk;
      }
      rows.push_back(row);
    }
  }
  if (!common.jsonPath.empty()) {
    std::ofstream(common.jsonPath)
        << json{{"device", bench::deviceName()}, {"tuned", !untuned}, {"rows", rows}}.dump(2);
  }
  return 0;
}
