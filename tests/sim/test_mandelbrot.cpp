// The Mandelbrot case study (examples/mandelbrot): small images drawn by the simulator equal
// the plain C++ reference bit for bit (the kernel and the reference round every float
// operation the same way), whatever the threads per block, with rows virtualized over fewer
// threads and blocks over fewer real blocks; and the PGM writer writes a well-formed file.
#include <doctest/doctest.h>

#include <algorithm>
#include <obsidian/sim.hpp>
#include <sstream>

#include "../../examples/mandelbrot/mandelbrot.hpp"

using namespace obsidian;

namespace {

std::vector<uint8_t> draw(const Kernel& k, uint32_t width, uint32_t height,
                          const SimOptions& options = {}) {
  std::vector<uint8_t> out(size_t{width} * height);
  simulate(k, {height, out}, options);
  return out;
}

}  // namespace

TEST_CASE("mandelbrot: the simulator draws the reference image exactly") {
  struct Case {
    uint32_t width, height, threads;
  };
  // 48 and 100 pixels per row over 32 threads: virtualized, and not a multiple of the thread
  // count; 48 over 64: more threads than pixels; 64 over 64: one thread per pixel.
  for (const Case c : {Case{48, 20, 32}, Case{100, 7, 32}, Case{48, 20, 64}, Case{64, 48, 64}}) {
    CAPTURE(c.width);
    CAPTURE(c.height);
    CAPTURE(c.threads);
    const Kernel k = paper::mandelKernel(c.width, c.threads);
    CHECK(k.threadsPerBlock() == c.threads);
    CHECK(k.sharedBytes() == 0);
    const std::vector<uint8_t> expected = paper::mandelReference(c.width, c.height);
    CHECK(draw(k, c.width, c.height) == expected);
  }
}

TEST_CASE("mandelbrot: the image has the paper's 16 grey levels and its black interior") {
  const uint32_t width = 64, height = 48;
  const std::vector<uint8_t> image = draw(paper::mandelKernel(width, 32), width, height);
  CHECK(std::count_if(image.begin(), image.end(), [](uint8_t p) { return p % 16 != 0; }) == 0);
  // c = xmin + 40 * deltaP + i (ymax - 24 * deltaQ) = 0 + 0i is in the set: 512 iterations,
  // 512 mod 16 = 0 (black); c = xmin (the left edge, -2 + 1.2i) escapes at once: iter 2 -> 32.
  CHECK(image[24 * width + 40] == 0);
  CHECK(image[0] == 32);
}

TEST_CASE("mandelbrot: one kernel for any number of rows, blocks virtualized too") {
  const uint32_t width = 40;
  const Kernel k = paper::mandelKernel(width, 32);
  CHECK(k.params().size() == 2);  // the number of rows, then the pixels
  for (uint32_t height : {1u, 9u, 33u}) {
    CAPTURE(height);
    const std::vector<uint8_t> expected = paper::mandelReference(width, height);
    CHECK(draw(k, width, height) == expected);
    SimOptions fewer;
    fewer.blocks = 4;  // each real block draws several rows
    CHECK(draw(k, width, height, fewer) == expected);
  }
}

TEST_CASE("mandelbrot: the PGM writer writes a binary greymap") {
  const uint32_t width = 5, height = 3;
  std::vector<uint8_t> pixels(width * height);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 16);
  std::ostringstream os;
  paper::writePgm(os, width, height, pixels);
  const std::string file = os.str();
  const std::string header = "P5\n5 3\n255\n";
  REQUIRE(file.size() == header.size() + width * height);
  CHECK(file.substr(0, header.size()) == header);
  CHECK(std::equal(pixels.begin(), pixels.end(),
                   reinterpret_cast<const uint8_t*>(file.data() + header.size())));

  std::ostringstream bad;
  CHECK_THROWS_WITH_AS(paper::writePgm(bad, width, height, std::vector<uint8_t>(14)),
                       "writePgm: a 5x3 image has 15 pixels; got 14", Error);
}
