// The Accelerate benchmark (issue 18, item 2: seed 004, Section 6). In one run, on the same
// random data: obsidian's dot product, SAXPY and Black-Scholes (examples/accelerate) against
// cublasSdot, cublasSaxpy and the CUDA samples' Black-Scholes kernel (cuda_accelerate.cu), with
// the 16-byte read kernel (dotp) or copy kernel (the others) as the roofline, at 2^24, 2^26 and
// 100000007 floats. Every input is larger than the 50 MB L2; every result, ours and the
// baseline's, is checked against the C++ reference first.
//
// Usage: obsidian-bench-accelerate [--quick] [--only N] [--runs N] [--json FILE]
#include <bit>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "../../examples/accelerate/accelerate.hpp"
#include "../common/bench_data.hpp"
#include "../common/comparison.hpp"
#include "../common/gpu_timer.hpp"
#include "cuda_accelerate.hpp"

namespace {

using namespace obsidian;
using nlohmann::json;

struct Result {
  std::string program, baseline;
  uint32_t n = 0;
  double bytes = 0;     // bytes the program reads and writes once
  double roofGbps = 0;  // the roofline kernel's rate
  bench::Timing ours = {}, theirs = {};
  bool oursOk = true, theirsOk = true;
};

void print(const Result& r) {
  const double ours = r.bytes / (r.ours.medianMs * 1e-3) / 1e9;
  std::cout << std::left << std::setw(14) << r.program << std::setw(14) << r.baseline << std::right
            << std::setw(10) << r.n << std::fixed << std::setprecision(1) << std::setw(10)
            << r.ours.medianMs * 1e3 << std::setw(10) << r.theirs.medianMs * 1e3
            << std::setprecision(3) << std::setw(12) << r.ours.medianMs / r.theirs.medianMs
            << std::setprecision(0) << std::setw(10) << ours << std::setw(10) << r.roofGbps
            << std::setprecision(1) << std::setw(7) << 100 * ours / r.roofGbps << "  "
            << (r.oursOk && r.theirsOk ? "ok" : "WRONG") << std::endl;
}

json toJson(const Result& r) {
  return json{{"program", r.program},
              {"baseline", r.baseline},
              {"n", r.n},
              {"ours", bench::timingJson(r.ours)},
              {"theirs", bench::timingJson(r.theirs)},
              {"ours_over_theirs", r.ours.medianMs / r.theirs.medianMs},
              {"ours_gbps", r.bytes / (r.ours.medianMs * 1e-3) / 1e9},
              {"roofline_gbps", r.roofGbps},
              {"ours_ok", r.oursOk},
              {"theirs_ok", r.theirsOk}};
}

KernelArg array(uint64_t address, size_t n, bool writable) {
  return KernelArg::deviceArray(ScalarType::F32, address, n, writable);
}
const float* fptr(uint64_t a) { return reinterpret_cast<const float*>(a); }
float* mptr(uint64_t a) { return reinterpret_cast<float*>(a); }

// Fills n floats of `b` from element `first` with NaN (all bits set), so a launch that writes
// nothing there fails its check.
void poison(gpu::DeviceBuffer<float>& b, size_t first, size_t n) {
  b.fill(std::bit_cast<float>(0xFFFFFFFFu), first, n);
}

// Runs ours and theirs once each into poisoned outputs (`poisonOutputs`), checking each with
// `ok`, then times both: the row of r.
void race(Result& r, const std::function<void()>& poisonOutputs, const std::function<void()>& ours,
          const std::function<void()>& theirs, const std::function<bool()>& ok, int runs) {
  poisonOutputs();
  ours();
  r.oursOk = ok();
  poisonOutputs();
  theirs();
  r.theirsOk = ok();
  r.ours = bench::timeGpu([&](int) { ours(); }, runs);
  r.theirs = bench::timeGpu([&](int) { theirs(); }, runs);
  print(r);
}

bool closeAll(const std::vector<float>& got, const std::vector<float>& want, float tolerance) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tolerance * (1 + std::fabs(want[i])))) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"obsidian's dotp, SAXPY and Black-Scholes against cuBLAS and the CUDA samples"};
  bench::CommonOptions common;
  bench::addCommonOptions(app, common);
  bench::addJsonOption(app, common);
  CLI11_PARSE(app, argc, argv);
  if (common.only > INT32_MAX) {  // cuBLAS takes an int
    std::cerr << "--only: at most 2^31 - 1 elements; got " << common.only << "\n";
    return 2;
  }
  if (!bench::deviceOrSkip()) return bench::kSkipped;

  std::vector<uint32_t> sizes = {1u << 24, 1u << 26, 100000007};
  if (common.quick) sizes = {1000003};
  if (common.only) sizes = {static_cast<uint32_t>(common.only)};
  const uint32_t most = *std::max_element(sizes.begin(), sizes.end());
  const size_t stride = (size_t{most} + 3) / 4 * 4;  // 16-byte aligned arrays in one buffer
  // Five arrays: x, y (or s, x, t) and two outputs.
  bench::Data<float> data(stride * 3, 1);
  gpu::DeviceBuffer<float> outputs(stride * 2);
  const uint64_t a0 = data.device.address(), o0 = outputs.address();
  gpu::LaunchOptions async;
  async.synchronize = false;
  const Kernel dotp = accelerate::dotp(gpu::occupancyBlocks(accelerate::dotp(1)));
  const Kernel saxpy = accelerate::saxpy();
  const Kernel blackScholes = accelerate::blackScholes();
  json rows = json::array();

  std::cout
      << "\nprogram       baseline               n   ours us  their us  ours/their "
         "ours GB/s roof GB/s  %roof  check\n(roof: the read kernel for dotp, the copy "
         "kernel for the others; GB/s: each array read or written once; blackScholes*: ours on an "
         "occupancy-sized grid)\n";
  for (uint32_t n : sizes) {
    const uint64_t x = a0, y = a0 + stride * 4, t = a0 + stride * 8;  // (s, x, t) for options
    const uint64_t z = o0, w = o0 + stride * 4;
    const std::vector<float> hx(data.host.begin(), data.host.begin() + n);
    const std::vector<float> hy(data.host.begin() + stride, data.host.begin() + stride + n);
    const bench::Timing read = bench::timeGpu(
        [&](int) {
          bench::readKernel(fptr(x), size_t{n} * 8 / 16 * 16, reinterpret_cast<uint32_t*>(mptr(w)));
        },
        common.runs);
    const bench::Timing copy = bench::timeGpu(
        [&](int) { bench::copyKernel(fptr(x), mptr(z), size_t{n} * 8 / 16 * 16); }, common.runs);
    const double readGbps = bench::gbps(size_t{n} * 8 / 16 * 16, read.medianMs);
    const double copyGbps = bench::gbps(size_t{n} * 16 / 16 * 16, copy.medianMs);

    {  // dotp against cublasSdot
      Result r{"dotp", "cublasSdot", n, 8.0 * n, readGbps};
      const double want = accelerate::dotReference(hx, hy);
      const auto ours = [&] {
        gpu::launch(dotp, {array(x, n, false), array(y, n, false), array(z, 1, true)}, async);
      };
      const auto theirs = [&] { bench::vendorDot(fptr(x), fptr(y), n, mptr(z)); };
      float got = 0;
      const auto ok = [&] {
        bench::checkCuda("dotp");
        bench::download(&got, fptr(z), 4);
        return std::fabs(got - want) <= 1e-4 * (1 + std::fabs(want)) + 1e-6 * n;
      };
      race(
          r, [&] { poison(outputs, 0, 1); }, ours, theirs, ok, common.runs);
      rows.push_back(toJson(r));
    }
    {  // saxpy against cublasSaxpy (in place: its y is a copy, restored before the check)
      Result r{"saxpy", "cublasSaxpy", n, 12.0 * n, copyGbps};
      const float alpha = 0.75f;
      std::vector<float> want(n), got(n);
      for (uint32_t i = 0; i < n; ++i) want[i] = alpha * hx[i] + hy[i];
      const auto ours = [&] {
        gpu::launch(saxpy, {alpha, array(x, n, false), array(y, n, false), array(z, n, true)},
                    async);
      };
      const auto theirs = [&] { bench::vendorSaxpy(alpha, fptr(x), mptr(w), n); };
      poison(outputs, 0, n);
      ours();
      bench::checkCuda("saxpy");
      bench::download(got.data(), fptr(z), size_t{n} * 4);
      r.oursOk = closeAll(got, want, 1e-6f);
      bench::upload(mptr(w), hy.data(), size_t{n} * 4);
      theirs();
      bench::checkCuda("cublasSaxpy");
      bench::download(got.data(), fptr(w), size_t{n} * 4);
      r.theirsOk = closeAll(got, want, 1e-6f);
      r.ours = bench::timeGpu([&](int) { ours(); }, common.runs);
      r.theirs = bench::timeGpu([&](int) { theirs(); }, common.runs);
      print(r);
      rows.push_back(toJson(r));
    }
    {  // Black-Scholes against the CUDA samples' kernel
      Result r{"blackScholes", "CUDA samples", n, 20.0 * n, copyGbps};
      const accelerate::Options opts = accelerate::randomOptions(n, 7);
      bench::upload(mptr(x), opts.s.data(), size_t{n} * 4);
      bench::upload(mptr(y), opts.x.data(), size_t{n} * 4);
      bench::upload(mptr(t), opts.t.data(), size_t{n} * 4);
      std::vector<float> wantCall(n), wantPut(n), call(n), put(n);
      for (uint32_t i = 0; i < n; ++i) {
        std::tie(wantCall[i], wantPut[i]) =
            accelerate::blackScholesBody(opts.s[i], opts.x[i], opts.t[i]);
      }
      const auto ours = [&] {
        gpu::launch(blackScholes,
                    {array(x, n, false), array(y, n, false), array(t, n, false), array(z, n, true),
                     array(w, n, true)},
                    async);
      };
      const auto theirs = [&] {
        bench::cudaBlackScholes(fptr(x), fptr(y), fptr(t), mptr(z), mptr(w), n);
      };
      const auto ok = [&] {
        bench::checkCuda("blackScholes");
        bench::download(call.data(), fptr(z), size_t{n} * 4);
        bench::download(put.data(), fptr(w), size_t{n} * 4);
        return closeAll(call, wantCall, 1e-4f) && closeAll(put, wantPut, 1e-4f);
      };
      const auto poisonPrices = [&] {
        poison(outputs, 0, n);
        poison(outputs, stride, n);
      };
      race(r, poisonPrices, ours, theirs, ok, common.runs);
      rows.push_back(toJson(r));
      // Ours again on an occupancy-sized grid (each block looping over options), as the
      // samples' kernel runs.
      gpu::LaunchOptions fill = async;
      fill.fillDevice = true;
      const auto oursFilled = [&] {
        gpu::launch(blackScholes,
                    {array(x, n, false), array(y, n, false), array(t, n, false), array(z, n, true),
                     array(w, n, true)},
                    fill);
      };
      Result f = r;
      f.program = "blackScholes*";
      poisonPrices();
      oursFilled();
      f.oursOk = ok();
      f.ours = bench::timeGpu([&](int) { oursFilled(); }, common.runs);
      print(f);
      rows.push_back(toJson(f));
      // Restore the random x and y for the next size.
      data.device.upload(data.host);
    }
  }
  if (!common.jsonPath.empty()) {
    std::ofstream(common.jsonPath)
        << json{{"device", bench::deviceName()}, {"rows", rows}}.dump(2) << "\n";
  }
  bool ok = true;
  for (const json& r : rows)
    ok = ok && r.at("ours_ok").get<bool>() && r.at("theirs_ok").get<bool>();
  return ok ? 0 : 1;
}
