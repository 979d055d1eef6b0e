// The sweep's summary (see sweep_summary.hpp): its counts and where the time went.
#include "sweep_summary.hpp"

#include <iostream>
#include <thread>

#include "sweep_common.hpp"

namespace tuning {

namespace detail {

void summarize(const SweepSummary& s, const SweepOptions& options, const std::string& m,
               const std::string& device) {
  std::cout << "\n"
            << m << " sweep of " << s.points << " points into " << options.output << ": " << s.ran
            << " run now, " << s.resumed << " done before\n"
            << "  ok " << s.ok << ", wrong " << s.wrong << ", skipped " << s.skipped
            << " (cannot be generated or launched), pruned " << s.pruned << ", errors " << s.errors
            << "\n"
            << "  generated " << s.kernels << " kernels on " << s.jobs << " threads in "
            << fixed(s.compileWallSeconds, 2) << " s ("
            << fixed(s.compileWallSeconds > 0 ? s.kernels / s.compileWallSeconds : 0, 1)
            << " kernels/s; " << s.nvrtcCompiles << " NVRTC compiles, the rest from the cache)\n"
            << "  wall " << fixed(s.wallSeconds, 2) << " s";
  if (!options.simulate) {
    const double outside = s.wallSeconds > 0 ? 1 - s.gpuRunSeconds / s.wallSeconds : 0;
    const double steady = s.wallSeconds - s.deviceInitSeconds;
    const double outsideSteady = steady > 0 ? 1 - s.gpuRunSeconds / steady : 0;
    std::cout << ", of which timed GPU runs (warm-up included) " << fixed(s.gpuRunSeconds, 2)
              << " s (" << fixed(outside * 100, 1) << "% outside them; "
              << fixed(outsideSteady * 100, 1) << "% without the device's initialization; "
              << fixed(s.ran ? (steady - s.gpuRunSeconds) / s.ran * 1e3 : 0, 2)
              << " ms per point)\n"
              << "  outside the GPU runs: device init " << fixed(s.deviceInitSeconds, 2)
              << " s, waiting for kernels " << fixed(s.waitSeconds, 2)
              << " s, inputs and references " << fixed(s.dataSeconds, 2)
              << " s, checking the first run " << fixed(s.checkSeconds, 2) << " s, loading modules "
              << fixed(s.loadSeconds, 2) << " s, predicting (--prune) "
              << fixed(s.predictSeconds, 2) << " s, the rest "
              << fixed(s.wallSeconds - s.gpuRunSeconds - s.deviceInitSeconds - s.waitSeconds -
                           s.dataSeconds - s.checkSeconds - s.loadSeconds - s.predictSeconds,
                       2)
              << " s";
  }
  std::cout << "\n";
  if (!options.summary.empty()) {
    nlohmann::json j = toJson(s);
    j["mode"] = m;
    j["hardwareThreads"] = std::thread::hardware_concurrency();
    j["device"] = device;
    writeFile(options.summary, j.dump(2) + "\n", "the summary file");
  }
}

}  // namespace detail

nlohmann::json toJson(const SweepSummary& s) {
  return {{"points", s.points},
          {"resumed", s.resumed},
          {"ran", s.ran},
          {"ok", s.ok},
          {"wrong", s.wrong},
          {"skipped", s.skipped},
          {"pruned", s.pruned},
          {"errors", s.errors},
          {"wallSeconds", s.wallSeconds},
          {"gpuRunSeconds", s.gpuRunSeconds},
          {"deviceInitSeconds", s.deviceInitSeconds},
          {"waitForKernelsSeconds", s.waitSeconds},
          {"dataSeconds", s.dataSeconds},
          {"checkSeconds", s.checkSeconds},
          {"loadModuleSeconds", s.loadSeconds},
          {"predictSeconds", s.predictSeconds},
          {"kernels", s.kernels},
          {"nvrtcCompiles", s.nvrtcCompiles},
          {"compileWallSeconds", s.compileWallSeconds},
          {"compileThreads", s.jobs},
          {"interrupted", s.interrupted}};
}

}  // namespace tuning
