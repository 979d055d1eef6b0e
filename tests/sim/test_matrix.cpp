// Matrices (obsidian/matrix.hpp): DPull2 parameters with a pitch, 2-D pull and push arrays,
// tiles and transposed views, 2-D grids of blocks (pConcat2), padded shared tiles (force2),
// stencils loading each tile with its halo once; results against C++ on the simulator, the
// generated code's shape (one load site, the padded pitch), and every misuse an Error.
#include <doctest/doctest.h>

#include <obsidian/export.hpp>
#include <obsidian/report_json.hpp>
#include <obsidian/sim.hpp>

#include "../matrix_kernels.hpp"
#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::testing;
using ::testing::count;
using ::testing::errorOf;
using ::testing::moved;

namespace {

struct Shape {
  uint32_t rows, cols, pitch;
};

}  // namespace

TEST_CASE("matrix: the tiled transpose, any shape and pitch") {
  const Kernel k = transpose2d();
  for (const Shape s : {Shape{70, 45, 48}, Shape{64, 64, 64}, Shape{1, 1, 1}, Shape{33, 1, 3},
                        Shape{1, 100, 100}, Shape{97, 31, 31}}) {
    INFO(s.rows << " x " << s.cols << " pitch " << s.pitch);
    const std::vector<float> in = randomMatrix(s.rows, s.pitch, s.rows + s.cols);
    std::vector<float> out(size_t{s.rows} * s.cols);
    simulate(k, {in, s.rows, s.cols, s.pitch, out}, {.blocks = 3});
    CHECK(out == transposeReference(in, s.rows, s.cols, s.pitch));
  }
  // The input read through a 32 x 33 shared tile (one padding column).
  const std::string cuda = k.cuda();
  CHECK(k.report().sharedBytes == 32 * 33 * 4);
  CHECK(count(cuda, " * 33u + ") == 5);    // the tile's 4 writes a thread does, its transposed read
  CHECK(count(cuda, "% 32u * 33u") == 1);  // its transposed reads
  const KernelReport r = k.report();
  CHECK(r.traffic[0].array == "in0");
  CHECK(r.traffic[0].loads == 4);  // sites: 1024 elements over 256 threads
  CHECK(r.gridPasses == 1);
  // The parameters: the matrix, its rows, cols and pitch; the dense output.
  CHECK(
      cuda.find(
          "(const float* __restrict__ in0, uint32_t in0Rows, uint32_t in0Cols, uint32_t in0Pitch, "
          "float* __restrict__ out0)") != std::string::npos);
  // Each thread loads its 4 elements before it stores any.
  CHECK(count(cuda, "? in0[") == 4);
  CHECK(count(cuda, "if (true)") == 0);
  // Padding::None keeps 32 columns; the elementwise staging (force2 of push2) one load site.
  for (const bool elementwise : {false, true}) {
    const Kernel unpadded = transpose2d(256, 32, Padding::None, elementwise);
    CHECK(unpadded.report().sharedBytes == 32 * 32 * 4);
    CHECK(unpadded.report().traffic[0].loads == (elementwise ? 1 : 4));
    const std::vector<float> in = randomMatrix(50, 40, 3);
    std::vector<float> out(50 * 40);
    simulate(unpadded, {in, 50u, 40u, 40u, out}, {.blocks = 2});
    CHECK(out == transposeReference(in, 50, 40, 40));
  }
  // Tiles of more elements than threads, not a multiple of them (the last load guarded).
  const Kernel odd = transpose2d(96, 16);
  const std::vector<float> in = randomMatrix(37, 40, 4);
  std::vector<float> out(37 * 33);
  simulate(odd, {in, 37u, 33u, 40u, out});
  CHECK(out == transposeReference(in, 37, 33, 40));
}

TEST_CASE("matrix: force2 pads a shared tile's rows to distinct banks") {
  using detail::sharedPitch;
  CHECK(sharedPitch(32, 4, Padding::Auto) == 33);
  CHECK(sharedPitch(64, 4, Padding::Auto) == 65);
  CHECK(sharedPitch(31, 4, Padding::Auto) == 31);  // odd already
  CHECK(sharedPitch(34, 4, Padding::Auto) == 35);
  CHECK(sharedPitch(32, 8, Padding::Auto) == 33);  // 8-byte elements: an odd pitch in elements
  CHECK(sharedPitch(32, 2, Padding::Auto) == 34);  // 17 banks
  CHECK(sharedPitch(30, 2, Padding::Auto) == 30);  // 15 banks
  CHECK(sharedPitch(32, 1, Padding::Auto) == 36);  // 9 banks
  CHECK(sharedPitch(32, 4, Padding::None) == 32);
}

TEST_CASE("matrix: a stencil loads each tile with its halo once") {
  for (const Boundary b : {Boundary::Clamp, Boundary::Zero}) {
    for (const StencilOptions o :
         {StencilOptions{16, 32, b}, StencilOptions{8, 8, b}, StencilOptions{1, 5, b}}) {
      INFO("tile " << o.tileRows << " x " << o.tileCols << " boundary " << int(b));
      const Kernel k = blur5(o);
      for (const Shape s :
           {Shape{70, 45, 45}, Shape{16, 32, 40}, Shape{1, 1, 1}, Shape{3, 50, 51}}) {
        INFO(s.rows << " x " << s.cols << " pitch " << s.pitch);
        const std::vector<float> in = randomMatrix(s.rows, s.pitch, s.rows * 7 + s.cols);
        std::vector<float> out(size_t{s.rows} * s.cols);
        const SimStats st = simulate(k, {in, s.rows, s.cols, s.pitch, out});
        CHECK(out == blur5Reference(in, s.rows, s.cols, s.pitch, b));
        // Each tile's halo once: (tileRows + 2) x (tileCols + 2) loads per tile, however many
        // neighbours read an element (Zero skips the reads outside the matrix).
        const uint64_t tiles = uint64_t{(s.rows + o.tileRows - 1) / o.tileRows} *
                               ((s.cols + o.tileCols - 1) / o.tileCols);
        const uint64_t halo = uint64_t{o.tileRows + 2} * (o.tileCols + 2);
        if (b == Boundary::Clamp) {
          CHECK(moved(st, "in0").loads == tiles * halo);
        } else {
          CHECK(moved(st, "in0").loads <= tiles * halo);
        }
      }
      // One load site per element each thread stages.
      const uint32_t threads = 128, halo = (o.tileRows + 2) * (o.tileCols + 2);
      CHECK(k.report().traffic[0].loads == (halo + threads - 1) / threads);
    }
  }
}

TEST_CASE("matrix: 2-D arrays compose: zipWith, fmap, push2 at grid level, ensure, names") {
  // c = a + 2 b over the rows and cols both have, written by the grid's threads.
  const Kernel k =
      capture("addScaled", 64,
              [](DPull2<EFloat> a, DPull2<EFloat> b) {
                const auto sum = zipWith([](const EFloat& x, const EFloat& y) { return x + y; }, a,
                                         fmap([](const EFloat& y) { return y * 2.0f; }, b));
                return ensure(
                    push2<Grid>(sum), [](const EFloat& v) { return v == v; }, "c is a number");
              },
              {.names = {"a", "b"}, .outputNames = {"c"}});
  const std::vector<float> a = randomMatrix(20, 33, 1), b = randomMatrix(25, 17, 2);
  std::vector<float> c(20 * 17);
  simulate(k, {a, 20u, 30u, 33u, b, 25u, 17u, 17u, c});
  for (size_t r = 0; r < 20; ++r) {
    for (size_t col = 0; col < 17; ++col) {
      REQUIRE(c[r * 17 + col] == a[r * 33 + col] + b[r * 17 + col] * 2.0f);
    }
  }
  const std::string h = exportHeader({k}, {"app", ""});
  CHECK(h.find("const float* a, size_t aCount, uint32_t aRows, uint32_t aCols, uint32_t aPitch, "
               "const float* b, size_t bCount, uint32_t bRows, uint32_t bCols, uint32_t bPitch, "
               "float* c, size_t cCount") != std::string::npos);
  CHECK(toJson(k.report())["postconditions"].size() == 1);
}

// The generated code computes a tile's rows and columns in 32 bits: a matrix within a tile (and
// halo) of 2^32 rows would wrap past the last row to row 0, so it is refused: now for a static
// shape, at launch (a precondition in the report) for a dynamic one.
TEST_CASE("matrix: tiles and halos of a matrix near 2^32 rows are refused, not wrapped") {
  const auto m = mkPull2(0xfffffffau, 1u, [](const EWord32& r, const EWord32&) { return r; });
  CHECK(errorOf([&] { tiles(7, 1, m); }) ==
        "tiles: a matrix of 4294967290 rows is too close to 2^32 rows: the last tile's indices "
        "would pass 2^32 - 1 (rows + 7 must be at most 2^32)");
  CHECK_NOTHROW(tiles(6, 1, m));
  CHECK(errorOf([&] { haloTiles(4, 1, 2, m); }) ==
        "haloTiles: a matrix of 4294967290 rows is too close to 2^32 rows: the last tile's "
        "indices would pass 2^32 - 1 (rows + 8 must be at most 2^32)");
  CHECK_NOTHROW(haloTiles(4, 1, 1, m));  // its last index: 4294967293
  const Kernel k = transpose2d(32);
  bool found = false;
  for (const ReportPrecondition& p : k.report().preconditions) {
    found = found || p.message ==
                         "tiles: the matrix's rows + 32 must be at most 2^32 (the last "
                         "tile's indices would pass 2^32 - 1)";
  }
  CHECK(found);
}

TEST_CASE("matrix: misuse is an Error naming the rule") {
  const Kernel t = transpose2d();
  const std::vector<float> in = randomMatrix(10, 12, 1);
  std::vector<float> out(10 * 12);
  // A pitch below the cols, an array shorter than rows x pitch.
  CHECK(errorOf([&] {
          simulate(t, {in, 10u, 12u, 11u, out});
        }) ==
        "launch of kernel transpose2d: matrix in0: the pitch is at least the cols (in0Pitch "
        ">= in0Cols fails with in0Cols = 12, in0Pitch = 11)");
  CHECK(errorOf([&] {
          simulate(t, {in, 11u, 12u, 12u, out});
        })
            .starts_with("launch of kernel transpose2d: argument in0 has 120 elements; the kernel "
                         "reads 132"));
  // A neighbour beyond the radius.
  CHECK(errorOf([] {
          capture("far", 64, [](DPull2<EFloat> in) {
            return stencil(in, 1, [](const Neighbourhood<float>& nb) { return nb(2, 0); });
          });
        }) ==
        "stencil: the neighbour (2, 0) is outside the radius 1 (each offset must be within "
        "-1 .. 1)");
  CHECK(errorOf([] {
          capture("empty", 64, [](DPull2<EFloat> in) {
            return pConcat2(
                fmap([](const SPull2<EFloat>& t) { return push2<Block>(t); }, tiles(0, 32, in)),
                in.rows(), in.cols());
          });
        }) == "tiles needs tiles of at least 1 x 1 elements; got 0 x 32");
  // Static tiles that do not cover the result.
  CHECK(errorOf([] {
          capture("shortTiles", 64, [](DPull<EFloat> in) {
            const auto m = mkPull2(
                16, 16, [in](const EWord32& r, const EWord32& c) { return in[r * 16u + c]; });
            return pConcat2(
                fmap([](const SPull2<EFloat>& t) { return push2<Block>(t); }, tiles(8, 8, m)), 17,
                16);
          });
        }) == "pConcat2: the tiles cover 16 rows of the result's 17 (2 tiles of 8)");
  // Dynamic ones: a launch precondition.
  const Kernel wide = capture("wide", 64, [](DPull2<EFloat> in) {
    return pConcat2(fmap([](const SPull2<EFloat>& t) { return push2<Block>(t); }, tiles(8, 8, in)),
                    in.rows(), in.cols() + 8u);
  });
  std::vector<float> m = randomMatrix(16, 16, 2), w(16 * 24);
  CHECK(errorOf([&] {
          simulate(wide, {m, 16u, 16u, 16u, w});
        }).starts_with("launch of kernel wide: pConcat2: the tiles cover the result's cols"));
}

namespace {
// The 9-point stencil x * 0.5 + (sum of the 8 neighbours) * 0.0625 applied `steps` times in C++,
// each step's matrix read past its edges as `boundary` says.
std::vector<float> blur9Steps(std::vector<float> m, uint32_t rows, uint32_t cols, uint32_t steps,
                              Boundary boundary) {
  for (uint32_t s = 0; s < steps; ++s) {
    auto at = [&](int64_t r, int64_t c) {
      if (boundary == Boundary::Zero && (r < 0 || c < 0 || r >= rows || c >= cols)) return 0.0f;
      return m[std::clamp<int64_t>(r, 0, rows - 1) * cols + std::clamp<int64_t>(c, 0, cols - 1)];
    };
    std::vector<float> next(m.size());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const float ring = at(r - 1, c - 1) + at(r - 1, c) + at(r - 1, c + 1) + at(r, c - 1) +
                           at(r, c + 1) + at(r + 1, c - 1) + at(r + 1, c) + at(r + 1, c + 1);
        next[r * cols + c] = at(r, c) * 0.5f + ring * 0.0625f;
      }
    }
    m = std::move(next);
  }
  return m;
}

Kernel blur9(const StencilOptions& options) {
  return capture("blur9", 128, [options](DPull2<EFloat> in) {
    return stencil(
        in, 1,
        [](const Neighbourhood<float>& nb) {
          const EFloat ring = nb(-1, -1) + nb(-1, 0) + nb(-1, 1) + nb(0, -1) + nb(0, 1) +
                              nb(1, -1) + nb(1, 0) + nb(1, 1);
          return nb(0, 0) * 0.5f + ring * 0.0625f;
        },
        options);
  });
}
}  // namespace

TEST_CASE("stencil: several steps in one kernel equal as many kernels, at every edge") {
  for (const Boundary boundary : {Boundary::Clamp, Boundary::Zero}) {
    for (const uint32_t steps : {1u, 2u, 3u, 5u}) {
      for (const auto& [rows, cols] :
           {std::pair{1u, 1u}, std::pair{7u, 3u}, std::pair{37u, 70u}, std::pair{16u, 32u}}) {
        CAPTURE(steps);
        CAPTURE(rows);
        CAPTURE(cols);
        StencilOptions options{.tileRows = 8, .tileCols = 16, .boundary = boundary};
        options.steps = steps;
        std::vector<float> in(size_t{rows} * cols);
        for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 37) % 101) - 50;
        std::vector<float> out(in.size());
        simulate(blur9(options), {in, rows, cols, cols, out});
        const std::vector<float> want = blur9Steps(in, rows, cols, steps, boundary);
        // f32 sums in one order on both sides, but the CUDA compiler may contract x * a + b:
        // compared to a rounding bound.
        for (size_t i = 0; i < in.size(); ++i) REQUIRE(std::fabs(out[i] - want[i]) < 1e-3f);
      }
    }
  }
  CHECK(errorOf([] {
          StencilOptions o;
          o.steps = 0;
          blur9(o);
        }) == "stencil: steps must be at least 1 (got 0)");
  // Each step reads the last one's result: several steps need f to keep m's element type.
  CHECK(errorOf([] {
          capture("wider", 64, [](DPull2<EWord8> in) {
            return stencil(
                in, 1, [](const Neighbourhood<uint8_t>& nb) { return w8ToW32(nb(0, 0)); },
                StencilOptions{.steps = 2});
          });
        }) ==
        "stencil: 2 steps need f to return an element of m's type (each step reads the last "
        "one's result)");
}

TEST_CASE("stencil: the neighbourhood knows its element's position") {
  const Kernel k = capture("positions", 64, [](DPull2<EWord32> in) {
    return stencil(
        in, 1,
        [](const Neighbourhood<uint32_t>& nb) { return nb(0, 0) + nb.row() * 1000u + nb.col(); },
        StencilOptions{.tileRows = 4, .tileCols = 8});
  });
  const uint32_t rows = 9, cols = 13;
  std::vector<uint32_t> in(rows * cols, 7), out(in.size());
  simulate(k, {in, rows, cols, cols, out});
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) CHECK(out[r * cols + c] == 7 + r * 1000 + c);
  }
  // A neighbourhood made by hand (blocks over haloTiles) has no position to give.
  CHECK(errorOf([] {
          const SPull2<EWord32> t(3u, 3u,
                                  [](const EWord32&, const EWord32&) { return EWord32(0u); });
          Neighbourhood<uint32_t>(t, EWord32(0u), EWord32(0u), 1).row();
        }) ==
        "stencil: this Neighbourhood was made without its position (the 4-argument "
        "constructor); row() and col() need the one that takes them");
}

TEST_CASE("matrix: RowAligned<W> rows are read with vectors<W>; the pitch is checked at launch") {
  const Kernel k = rowVectorSums();
  CHECK(k.cuda().find("((const float4*)in0)[") != std::string::npos);
  CHECK(k.ir().arrays[k.ir().params[0].array].alignment == 16);
  for (const Shape s : {Shape{5, 10, 12}, Shape{3, 8, 8}, Shape{7, 13, 16}, Shape{1, 3, 4}}) {
    const std::vector<float> in = randomMatrix(s.rows, s.pitch, s.cols);
    std::vector<float> out(s.rows * (s.cols / 4), -1.0f);
    simulate(k, {in, s.rows, s.cols, s.pitch, out});
    CHECK_MESSAGE(out == rowVectorSumsReference(in, s.rows, s.cols, s.pitch),
                  s.rows << " x " << s.cols << ", pitch " << s.pitch);
  }
  const std::vector<float> in = randomMatrix(5, 11, 1);
  std::vector<float> out(10);
  CHECK(errorOf([&] {
          simulate(k, {in, 5u, 10u, 11u, out});
        }) ==
        "launch of kernel rowVectors: matrix in0: the pitch is a multiple of 4 (RowAligned<4>) "
        "(in0Pitch % 4u == 0u fails with in0Pitch = 11)");
  // A plain DPull2's rows start anywhere: vectors<4> of one is refused when generated.
  CHECK(errorOf([] {
          capture("plain", 64, [](DPull2<EFloat> m) {
            const auto rows = rowsOf(m);
            return push<Grid>(mkPull(m.rows(), [rows](const EWord32& r) {
              return hana::at_c<0>(vectors<4>(rows[r])[0u]);
            }));
          });
        }).starts_with("vectors<4> needs the array to start at a multiple of 4 elements of in0"));
}

TEST_CASE("matrix: push2 with a 2-D thread layout writes every element of a tile once") {
  // The tiled transpose with the transposed tile written by 8 x 32 threads (4 rows each) or by
  // a 3 x 10 layout that divides neither side of the 32 x 32 tile (guards at the edges).
  for (const ThreadLayout2 layout : {ThreadLayout2{8, 32}, ThreadLayout2{3, 10}}) {
    const Kernel k = transposeLayout(layout);
    for (const Shape s : {Shape{70, 45, 48}, Shape{64, 64, 64}, Shape{1, 1, 1}, Shape{97, 31, 31}}) {
      INFO(layout.rows << " x " << layout.cols << " threads; " << s.rows << " x " << s.cols);
      const std::vector<float> in = randomMatrix(s.rows, s.pitch, s.rows + s.cols);
      std::vector<float> out(size_t{s.rows} * s.cols);
      simulate(k, {in, s.rows, s.cols, s.pitch, out}, {.blocks = 3});
      CHECK(out == transposeReference(in, s.rows, s.cols, s.pitch));
    }
  }
  CHECK_THROWS_WITH(push2<Block>(mkPull2(4u, 4u, [](const EWord32& r, const EWord32&) { return r; }),
                                 ThreadLayout2{0, 4}),
                    "push2: a thread layout of 0 x 4 threads (each side is at least 1)");
}
