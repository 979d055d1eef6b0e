// The Mandelbrot example (the paper's Section 5.1): draws the classical image of the set with
// mandelKernel (one block per row, one thread per pixel), for one or more thread counts, on the
// GPU when there is one and on the CPU simulator otherwise. Each image is checked against a
// plain C++ reference, exactly: the kernel is compiled with --fmad=false (CaptureOptions::
// nvrtcOptions), so the GPU rounds every float operation as the simulator and C++ do. The
// image is written as a binary PGM.
//
//   obsidian-mandelbrot [--width 512] [--height 512] [--threads 32 64 ...] [--output FILE]
//                       [--cuda] [--simulate | --gpu] [--quick] [--runs N]
#include "mandelbrot.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "../common/runner.hpp"

namespace {

using namespace examples;

size_t countDiffering(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

std::string percent(double fraction) {
  std::ostringstream s;
  s.precision(3);
  s << std::fixed << fraction * 100 << "%";
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The paper's Mandelbrot kernel (Section 5.1): one block per row of the image"};
  uint32_t width = 512, height = 512;
  std::vector<uint32_t> threads = {32, 64, 128, 256, 512, 1024};  // the paper's Figure 3
  std::string output = "mandelbrot.pgm";
  CLI::Option* widthOpt =
      app.add_option("--width", width, "image width in pixels (static: one kernel per width)")
          ->check(CLI::Range(1u, 1u << 16));
  CLI::Option* heightOpt =
      app.add_option("--height", height, "image height in pixels (a kernel argument)")
          ->check(CLI::Range(1u, 1u << 16));
  CLI::Option* threadsOpt =
      app.add_option("--threads", threads,
                     "threads per block, one or more (default: 32 64 128 256 512 1024 on the GPU, "
                     "32 512 on the simulator)")
          ->expected(1, -1)
          ->check(CLI::Range(1u, 1024u));
  app.add_option("--output", output, "the image as a binary PGM (P5)");
  const Options o = parse(app, argc, argv);
  if (o.quick) {
    if (widthOpt->count() == 0) width = 64;
    if (heightOpt->count() == 0) height = 48;
  }
  // A 512x512 image takes the simulator about 3.5 s whatever the thread count: by default it
  // draws two variants, a virtualized one (32 threads, several pixels each) and one thread
  // per pixel (512).
  const bool fewerVariants = !o.gpu() && threadsOpt->count() == 0;
  if (fewerVariants) threads = {32, 512};

  try {
    const std::string size = std::to_string(width) + "x" + std::to_string(height);
    std::cout << "Mandelbrot " << size << " (the paper's Section 5.1: one block per row, one "
              << "thread per pixel) on " << backendName(o) << "\n";
    std::cout << "Checked against a plain C++ reference, exactly: every float operation is "
                 "rounded as in C++ (on the GPU, the kernel is compiled with --fmad=false).\n";
    if (fewerVariants) {
      std::cout << "(the simulator draws 32 and 512 threads per block by default; --threads "
                   "chooses others)\n";
    }
    const std::vector<uint8_t> expected = paper::mandelReference(width, height);
    const size_t pixels = expected.size();
    const size_t allowed = 0;

    Table table("mandel " + size + " (elems/block = pixels per row; GB/s = pixels written)");
    std::vector<uint8_t> image;
    for (uint32_t t : threads) {
      const Kernel k = paper::mandelKernel(width, t);
      if (o.cuda) std::cout << "\n// ---- mandel, " << t << " threads per block\n" << k.cuda();
      std::vector<uint8_t> out(pixels);
      Args args;
      args.scalar(height).out(out);
      const double ms = run(k, args, o);
      const size_t differing = countDiffering(out, expected);
      const bool pass = differing <= allowed;
      std::cout << t << " threads: ";
      if (differing == 0 && !o.gpu()) {
        std::cout << "equal to the reference\n";
      } else {
        std::cout << differing << " of " << pixels << " pixels ("
                  << percent(static_cast<double>(differing) / static_cast<double>(pixels))
                  << ") differ from the reference (allowed: " << allowed << ")"
                  << (pass ? "" : ": too many") << "\n";
      }
      table.add("mandel", k, width, pixels, pass, ms, static_cast<double>(pixels));
      if (image.empty()) image = std::move(out);
    }
    table.print();

    paper::writePgm(output, width, height, image);
    std::cout << "\nwrote " << output << " (" << size << ", binary PGM)\n";
    std::cout << (table.allPassed() ? "PASS" : "FAIL") << "\n";
    return table.allPassed() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
