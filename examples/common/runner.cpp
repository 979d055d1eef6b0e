// The examples' shared runner (see runner.hpp).
#include "runner.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace examples {

Options parse(CLI::App& app, int argc, char** argv) {
  Options o;
  app.add_flag("--cuda", o.cuda, "print the generated CUDA of every variant");
  app.add_flag("--simulate", o.simulate, "run on the CPU simulator even where a GPU exists");
  app.add_flag("--gpu", o.requireGpu, "run on the GPU; exit 77 (skipped) where there is none");
  app.add_flag("--quick", o.quick, "small sizes (for tests)");
  app.add_flag("--profile", o.profile,
               "print each kernel's counters from the simulator (coalescing, bank conflicts, "
               "divergence) and its predicted time");
  app.add_option("--runs", o.runs, "timed runs per variant on the GPU")
      ->check(CLI::Range(1, 10000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  if (o.requireGpu && o.simulate) {
    std::cerr << "--gpu and --simulate exclude each other\n";
    std::exit(2);
  }
  if (o.requireGpu && !gpu::available()) {
    std::cout << "SKIPPED: no CUDA device (" << gpu::unavailableReason() << ")\n";
    std::exit(77);
  }
  return o;
}

std::vector<uint32_t> randomWords(size_t n, uint32_t seed, uint32_t below) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) x = rng() % below + 1;
  return v;
}

std::vector<float> randomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

std::vector<KernelArg> Args::collect(bool device) const {
  std::vector<KernelArg> a;
  size_t s = 0;
  for (const auto& slot : slots_) {
    if (!slot) {
      a.push_back(scalars_[s++].second);
    } else {
      a.push_back(device ? slot->deviceArg() : slot->hostArg());
    }
  }
  return a;
}

std::vector<KernelArg> Args::host() const { return collect(false); }

std::vector<KernelArg> Args::upload() { return collect(true); }

void Args::download() {
  for (auto& s : slots_) {
    if (s) s->download();
  }
}

double timeOnGpu(const std::function<void()>& launches, const Options& o) {
  gpu::TimingOptions timing;
  timing.runs = o.runs;
  return gpu::time([&](int) { launches(); }, timing).medianMs;
}

double run(const Kernel& k, Args& args, const Options& o) {
  if (o.profile) {
    SimOptions so;
    so.profile = true;
    const SimStats s = simulate(k, args.host(), so);
    std::cout << "\nprofile of " << k.name() << " (simulator):\n" << profileSummary(s.profile);
  }
  if (!o.gpu()) {
    simulate(k, args.host());
    return std::nan("");
  }
  const std::vector<KernelArg> device = args.upload();
  gpu::launch(k, device);
  args.download();
  gpu::LaunchOptions async;
  async.synchronize = false;
  return timeOnGpu([&] { gpu::launch(k, device, async); }, o);
}

void Table::add(const std::string& variant, const Kernel& k, uint32_t elementsPerBlock, uint64_t n,
                bool pass, double ms, double bytesMoved) {
  allPassed_ = allPassed_ && pass;
  const KernelReport r = (k.compile(), k.report());
  auto fmt = [](double v, int digits) {
    if (std::isnan(v)) return std::string("-");
    std::ostringstream s;
    s << std::fixed << std::setprecision(digits) << v;
    return s.str();
  };
  rows_.push_back({variant, std::to_string(n), std::to_string(k.threadsPerBlock()),
                   std::to_string(elementsPerBlock), std::to_string(k.sharedBytes()),
                   std::to_string(r.barriers.block) + "/" + std::to_string(r.barriers.warp),
                   std::to_string(r.compiled->registers), fmt(ms * 1000, 1),
                   fmt(bytesMoved / (ms * 1e-3) / 1e9, 1), pass ? "PASS" : "FAIL"});
}

void Table::print() const {
  const std::vector<std::string> head = {
      "variant",           "n",    "threads",   "elems/block", "shared B",
      "barriers blk/warp", "regs", "median us", "GB/s",        "check"};
  std::vector<size_t> w(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    w[c] = head[c].size();
    for (const auto& row : rows_) w[c] = std::max(w[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::cout << "|";
    for (size_t c = 0; c < cells.size(); ++c) {
      std::cout << " " << std::setw(static_cast<int>(w[c])) << (c == 0 ? std::left : std::right)
                << cells[c] << " |";
    }
    std::cout << std::right << "\n";
  };
  std::cout << "\n" << title_ << "\n";
  line(head);
  std::vector<std::string> rule;
  for (size_t c = 0; c < head.size(); ++c) rule.push_back(std::string(w[c], '-'));
  line(rule);
  for (const auto& row : rows_) line(row);
}

std::string backendName(const Options& o) {
  if (o.gpu()) return "the GPU (" + gpu::Device::get().info().name + ")";
  if (o.simulate) return "the CPU simulator (--simulate)";
  return "the CPU simulator (no GPU: " + gpu::unavailableReason() + ")";
}

}  // namespace examples
