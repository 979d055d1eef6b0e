// The paper's Mandelbrot case study (Section 5.1): every pixel iterates z := z^2 + c from
// z = 0 until |z| >= 2 or 512 iterations, and the iteration count picks one of 16 grey levels.
// One block computes one row of the image (genRect), one thread one pixel of the row.
//
// The paper's program is for a 512x512 image; here the row width is a static value given when
// the kernel is generated and the number of rows a dynamic kernel argument, so one kernel
// draws images of any height. The threads per block are chosen independently: a row wider
// than the block is virtualized (each thread computes several pixels of its row).
//
// Also here: a plain C++ reference that performs the same float operations in the same order
// (the simulator matches it bit for bit), and a binary PGM writer for the image.
#pragma once

#include <cstdint>
#include <fstream>
#include <obsidian/obsidian.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace paper {

using namespace obsidian;

// xmax = 1.2 :: EFloat; xmin = -2.0 :: EFloat
// ymax = 1.2 :: EFloat; ymin = -1.2 :: EFloat
inline const EFloat xmax = 1.2f, xmin = -2.0f;
inline const EFloat ymax = 1.2f, ymin = -1.2f;

// The state of one pixel's iteration: (x, y, iter), z = x + iy.
using State = hana::tuple<EFloat, EFloat, EWord32>;

// The pixel steps. The paper's image is 512x512:
//   deltaP = (xmax - xmin) / 512.0
//   deltaQ = (ymax - ymin) / 512.0
// here they come from the image's size (a width known now, a height given at launch).
struct Deltas {
  EFloat deltaP, deltaQ;
};
inline Deltas deltas(const EFloat& width, const EFloat& height) {
  return {(xmax - xmin) / width, (ymax - ymin) / height};
}

// f b t (x,y,iter) = (xsq - ysq + (xmin + t * deltaP),
//                     2 * x * y + (ymax - b * deltaQ),
//                     iter + 1)
//   where xsq = x * x
//         ysq = y * y
inline auto f(const Deltas& d, const EFloat& b, const EFloat& t) {
  return [d, b, t](const State& s) {
    const EFloat x = hana::at_c<0>(s), y = hana::at_c<1>(s);
    const EWord32 iter = hana::at_c<2>(s);
    const EFloat xsq = x * x, ysq = y * y;
    return State(xsq - ysq + (xmin + t * d.deltaP), 2.0f * x * y + (ymax - b * d.deltaQ),
                 iter + 1u);
  };
}

// cond (x,y,iter) = ((xsq + ysq) <* 4) &&* iter <* 512
//   where xsq = x * x
//         ysq = y * y
inline EBool cond(const State& s) {
  const EFloat x = hana::at_c<0>(s), y = hana::at_c<1>(s);
  const EWord32 iter = hana::at_c<2>(s);
  const EFloat xsq = x * x, ysq = y * y;
  return ((xsq + ysq) < 4.0f) && iter < 512u;
}

// iters bid tid = fmap extract (seqUntil (f bid' tid') cond (0,0,1))
//   where extract (_,_,c) = (w32ToW8 (c `mod` 16)) * 16
//         tid' = w32ToF tid
//         bid' = w32ToF bid
// (seqUntil iterates f while cond holds.)
inline SPush<Thread, EWord8> iters(const Deltas& d, const EWord32& bid, const EWord32& tid) {
  auto extract = [](const State& s) { return w32ToW8(hana::at_c<2>(s) % 16u) * 16; };
  const EFloat tid_ = w32ToF(tid);
  const EFloat bid_ = w32ToF(bid);
  return fmap(extract, seqUntil(f(d, bid_, tid_), cond, State(0.0f, 0.0f, 1u)));
}

// genRect bs ts p = pConcat (mkPull bs (\bid -> tConcat (mkPull ts (p bid))))
// bs blocks (dynamic), ts elements per block (static), p bid tid the sequential program of one
// element.
template <class P>
auto genRect(const EWord32& bs, uint32_t ts, P p) {
  return pConcat(mkPull(bs, [ts, p](const EWord32& bid) {
    return tConcat<Block>(mkPull(ts, [p, bid](const EWord32& tid) { return p(bid, tid); }));
  }));
}

// mandel = genRect 512 512 iters, for a width x height image: `height` rows, one block each;
// `width` pixels per row. Pixel (row, column) is element row * width + column.
inline DPush<Grid, EWord8> mandel(uint32_t width, const EWord32& height) {
  const Deltas d = deltas(EFloat(static_cast<float>(width)), w32ToF(height));
  return genRect(height, width,
                 [d](const EWord32& bid, const EWord32& tid) { return iters(d, bid, tid); });
}

// The kernel for images `width` pixels wide, run by `threads` threads per block. Its one
// argument is the number of rows (a uint32_t); its output the width * rows pixels (uint8_t).
// Compiled with --fmad=false: without it NVRTC contracts a*b+c into fused multiply-adds (one
// rounding instead of two), and some pixels near the set's boundary get other iteration
// counts than the C++ reference (0.3% to 0.8% of them on an H100).
inline Kernel mandelKernel(uint32_t width, uint32_t threads) {
  CaptureOptions o;
  o.nvrtcOptions = {"--fmad=false"};
  return capture(
      "mandel", threads, [width](EWord32 height) { return mandel(width, height); }, o);
}

// ------------------------------------------------------------------ plain C++ reference
// The same float operations in the same order as the kernel (one rounding per operation; the
// project compiles with -std=c++20, where GCC does not contract a*b+c, and x86-64 without
// -march has no FMA; Clang is told not to contract here).
inline std::vector<uint8_t> mandelReference(uint32_t width, uint32_t height) {
#ifdef __clang__
#pragma clang fp contract(off)
#endif
  const float xmaxF = 1.2f, xminF = -2.0f, ymaxF = 1.2f, yminF = -1.2f;
  const float deltaP = (xmaxF - xminF) / static_cast<float>(width);
  const float deltaQ = (ymaxF - yminF) / static_cast<float>(height);
  std::vector<uint8_t> image(size_t{width} * height);
  for (uint32_t b = 0; b < height; ++b) {
    const float bF = static_cast<float>(b);
    for (uint32_t t = 0; t < width; ++t) {
      const float tF = static_cast<float>(t);
      float x = 0.0f, y = 0.0f;
      uint32_t iter = 1;
      while (x * x + y * y < 4.0f && iter < 512u) {
        const float xsq = x * x, ysq = y * y;
        const float nx = xsq - ysq + (xminF + tF * deltaP);
        const float ny = 2.0f * x * y + (ymaxF - bF * deltaQ);
        x = nx;
        y = ny;
        iter = iter + 1u;
      }
      image[size_t{b} * width + t] = static_cast<uint8_t>((iter % 16u) * 16u);
    }
  }
  return image;
}

// ------------------------------------------------------------------ the image as a file
// A binary greymap (PGM, "P5"): the header "P5\n<width> <height>\n255\n", then the pixels
// row by row, one byte each. Any image viewer opens it.
inline void writePgm(std::ostream& os, uint32_t width, uint32_t height,
                     const std::vector<uint8_t>& pixels) {
  if (pixels.size() != size_t{width} * height) {
    throw Error("writePgm: a " + std::to_string(width) + "x" + std::to_string(height) +
                " image has " + std::to_string(size_t{width} * height) + " pixels; got " +
                std::to_string(pixels.size()));
  }
  os << "P5\n" << width << " " << height << "\n255\n";
  os.write(reinterpret_cast<const char*>(pixels.data()),
           static_cast<std::streamsize>(pixels.size()));
}

inline void writePgm(const std::string& path, uint32_t width, uint32_t height,
                     const std::vector<uint8_t>& pixels) {
  std::ofstream file(path, std::ios::binary);
  if (!file) throw Error("writePgm: cannot open " + path + " for writing");
  writePgm(file, width, height, pixels);
  if (!file.flush()) throw Error("writePgm: writing " + path + " failed");
}

}  // namespace paper
