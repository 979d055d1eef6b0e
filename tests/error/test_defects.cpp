// Regression tests for the defects of issue 14 (found by trying the library as a careless or
// adversarial user): lengths that wrap past 2^32, expressions deep enough to overflow a stack,
// grid loops that wrap, arrays and values leaking from one capture into another, outputs that
// overlap inputs, and out-of-bounds writes at data-dependent indices. Each test failed before
// its fix. (Kernel names, namespaces, export and cache defects are in unit/test_names.cpp,
// unit/test_export_errors.cpp and unit/test_cache.cpp.)
#include <doctest/doctest.h>

#include <numeric>
#include <optional>
#include <string>

#include "../kernels.hpp"
#include "../support.hpp"
#include "codegen/emit_cuda.hpp"
#include "kernel/kernel_access.hpp"
#include "obsidian/export.hpp"
#include "obsidian/obsidian.hpp"

using namespace obsidian;
using ::testing::errorOf;

namespace {

EWord32 plus(const EWord32& a, const EWord32& b) { return a + b; }

// A device array at a made-up address: bindArguments checks addresses and sizes only, so a
// launch of 2^32 - 1 elements can be checked without memory.
KernelArg fakeDevice(uint64_t address, size_t count, bool writable) {
  return KernelArg::deviceArray(ScalarType::U32, address, count, writable);
}

// Each input element becomes `m` consecutive output elements (x, x + 1, ...): one block each.
Kernel expand(uint32_t m) {
  return capture("expand", 256, [m](DPull<EWord32> in) {
    return pConcat(fmap(
        [m](const SPull<EWord32>& c) {
          return push<Block>(mkPull(m, [c](const EWord32& i) { return c[0u] + i; }));
        },
        splitUp(1, in)));
  });
}

void checkLibraryStillWorks() {
  CHECK(detail::currentContext() == nullptr);
  CHECK(ir::currentCapture() == 0);
  const Kernel k = expand(2);
  std::vector<uint32_t> in{5, 9}, out(4);
  simulate(k, {in, out});
  CHECK(out == std::vector<uint32_t>{5, 6, 9, 10});
}

}  // namespace

// ---------------------------------------------------------------- 1. lengths past 2^32
TEST_CASE("defect: a static length that would pass 2^32 is an error when it is built") {
  const auto blocks = mkPull(65537u, [](const EWord32& b) {
    return push<Block>(mkPull(65537u, [b](const EWord32& i) { return b + i; }));
  });
  // Before: 65537 * 65537 wrapped to an output of 131073 elements.
  CHECK(errorOf([&] { pConcat(blocks); }) ==
        "pConcat: the result's length must be at most 4294967295 (lengths are 32-bit); got "
        "65537 x 65537 = 4295098369");
  const auto threads = mkPull(65537u, [](const EWord32& t) {
    return push<Thread>(mkPull(65537u, [t](const EWord32& i) { return t + i; }));
  });
  CHECK(errorOf([&] { tConcat<Block>(threads); }) ==
        "tConcat: the result's length must be at most 4294967295 (lengths are 32-bit); got "
        "65537 x 65537 = 4295098369");
  CHECK(errorOf([&] { sConcat(threads); }) ==
        "sConcat: the result's length must be at most 4294967295 (lengths are 32-bit); got "
        "65537 x 65537 = 4295098369");
  const auto big = mkPull(0x80000000u, [](const EWord32& i) { return i; });
  CHECK(errorOf([&] { conc(big, big); }) ==
        "conc: the result's length must be at most 4294967295 (lengths are 32-bit); got "
        "2147483648 + 2147483648 = 4294967296");
  CHECK(errorOf([&] { concP(push<Block>(big), push<Block>(big)); }) ==
        "concP: the result's length must be at most 4294967295 (lengths are 32-bit); got "
        "2147483648 + 2147483648 = 4294967296");
  CHECK(errorOf([&] { upair(zip(big, big)); }) ==
        "upair: the result's length must be at most 4294967295 (lengths are 32-bit); got "
        "2147483648 x 2 = 4294967296");
  // At the limit it is fine.
  CHECK(conc(big, mkPull(0x7fffffffu, [](const EWord32& i) { return i; })).len() == 0xffffffffu);
}

TEST_CASE("defect: a static output length past 2^32 fails the capture, which leaves no state") {
  CHECK(errorOf([] {
          capture("tooLong", 256, [](DPull<EWord32> in) {
            return pConcat(fmap(
                [in](const EWord32& b) {
                  return push<Block>(mkPull(65537u, [in, b](const EWord32& i) { return b + i; }));
                },
                mkPull(65537u, [](const EWord32& b) { return b; })));
          });
        }) ==
        "pConcat: the result's length must be at most 4294967295 (lengths are 32-bit); got "
        "65537 x 65537 = 4295098369");
  checkLibraryStillWorks();
}

TEST_CASE("defect: a dynamic output length that can pass 2^32 is a launch precondition") {
  const Kernel k = expand(256);
  // Recorded once, with a message that names the combinator.
  REQUIRE(k.ir().preconditions.size() == 1);
  CHECK(k.ir().preconditions[0].message ==
        "pConcat: the result's length must be at most 4294967295 (lengths are 32-bit)");
  // Before: n0 = 2^24 + 1 gave an output length of 256 and passed every check; the GPU then
  // wrote out of bounds.
  const uint64_t n = (uint64_t{1} << 24) + 1;
  CHECK(errorOf([&] {
          bindArguments(k.ir(),
                        {fakeDevice(1ull << 40, n, false), fakeDevice(1ull << 44, 256, true)});
        }) ==
        "launch of kernel expand: pConcat: the result's length must be at most 4294967295 "
        "(lengths are 32-bit) ((uint64_t)n0 * 256ull <= 4294967295ull fails with n0 = 16777217)");
  // The simulator binds arguments the same way (a smaller input, a longer expansion).
  const Kernel wide = expand(65536);
  std::vector<uint32_t> in(65537, 1), out(16);
  CHECK(errorOf([&] {
          simulate(wide, {in, out});
        }).find("pConcat: the result's length must be at most 4294967295") != std::string::npos);
  // Below the limit the launch checks pass: (2^24 - 1) x 256 = 2^32 - 256 elements.
  const BoundArguments b = bindArguments(
      k.ir(), {fakeDevice(1ull << 40, n - 2, false), fakeDevice(1ull << 44, 0xffffff00ull, true)});
  CHECK(b.lengths[2] == 0xffffff00ull);
}

TEST_CASE("defect: exported launchers check the length precondition too") {
  const std::string h = exportHeader({expand(256)}, ExportOptions{"app", ""});
  CHECK(h.find("if (!((uint64_t)n0 * 256ull <= 4294967295ull)) {") != std::string::npos);
}

TEST_CASE("defect: lengths known to fit need no precondition") {
  // (n0 / 512) blocks of 512 elements, n0 / 4 + n0 / 4: the shapes bound them below 2^32.
  const Kernel k = capture("copy512", 256, [](DPull<EWord32> in) {
    return pConcat(fmap([](const SPull<EWord32>& c) { return push<Block>(c); }, splitUp(512, in)));
  });
  CHECK(k.ir().preconditions.size() == 1);  // only splitUp's divisibility
  const auto [a, b] =
      halve(mkPull(EWord32(variable<uint32_t>("n")), [](const EWord32& i) { return i; }));
  CHECK(ir::upperBound(a.len().node()) == 0x7fffffffu);
  (void)b;
}

// ---------------------------------------------------------------- 2. deep expressions
namespace {
// One block per `chunk` elements; thread 0 folds the whole chunk in one expression (chunk
// operations deep).
Kernel foldChunks(uint32_t chunk) {
  return capture("foldChunks", 32, [chunk](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return singletonPush<Block>([c](const Program<Block>&) { return foldPull1(plus, c); });
        },
        splitUp(chunk, in)));
  });
}
}  // namespace

TEST_CASE("defect: an expression 2^15 deep captures, prints, exports and simulates") {
  // Before: foldPull1 over 8192 elements crashed capture (the recursive printer overflowed
  // the stack); destroying such an expression recursed as deep.
  const uint32_t chunk = 1u << 15;
  const Kernel k = foldChunks(chunk);
  CHECK(k.cuda().find(" + 32767u]") != std::string::npos);
  CHECK(k.report().name == "foldChunks");
  CHECK(exportHeader({k}, ExportOptions{"deep", ""}).find("foldChunks_launch") !=
        std::string::npos);
  std::vector<uint32_t> in = ::testing::randomWords(2 * chunk, 7), out(2);
  simulate(k, {in, out});
  CHECK(out[0] == std::accumulate(in.begin(), in.begin() + chunk, 0u));
  CHECK(out[1] == std::accumulate(in.begin() + chunk, in.end(), 0u));
}

TEST_CASE("defect: an expression deeper than the bound is an error, not a crash") {
  CHECK(errorOf([] { foldChunks(1u << 17); }) ==
        "expression: an expression nested 65537 operations deep is deeper than the 65536 "
        "obsidian supports (e.g. foldPull1 over a long static array): fold in a loop "
        "(seqReduce, seqFoldStrided) or force partial results first");
  checkLibraryStillWorks();
  // Outside a capture too, and freeing a deep expression does not recurse.
  EWord32 x = variable<uint32_t>("x");
  for (uint32_t i = 1; i < kMaxExpDepth; ++i) x = x * x;
  CHECK(x.node()->depth == kMaxExpDepth);
  CHECK_THROWS_AS(x * 3u, Error);
}

// ---------------------------------------------------------------- 3. grid loops near 2^32
TEST_CASE("defect: grid loops cannot wrap past 2^32") {
  const Kernel k = capture("copy", 256, [](DPull<EWord32> in) { return push<Grid>(in); });
  // The grid-stride step never passes the bound (before: i0 += gridDim.x * 256u, which is 0
  // with 2^24 blocks and wraps near 2^32).
  CHECK(k.cuda().find("i0 += min(gridDim.x * 256u, n0 - i0)") != std::string::npos);
  // And the grid is bounded so that indices and the stride fit in 32 bits.
  const BoundArguments b = bindArguments(k.ir(), {fakeDevice(1ull << 40, 0xffffffffull, false),
                                                  fakeDevice(1ull << 44, 0xffffffffull, true)});
  CHECK(b.gridBlocks == 16777216u);  // the kernel's virtual blocks
  CHECK(realBlocks(k.ir(), b, 0, "LaunchOptions::blocks") == 16777215u);
  CHECK(maxRealBlocks(1) == 0x7fffffffu);
  CHECK(maxRealBlocks(1000) == 4294967u);
  CHECK(errorOf([&] { realBlocks(k.ir(), b, 16777216u, "LaunchOptions::blocks"); }) ==
        "LaunchOptions::blocks of kernel copy: 16777216 blocks; at most 16777215 real blocks of "
        "256 threads (CUDA allows 2^31 - 1, and every thread's index and the grid's stride must "
        "fit in 32 bits); virtual blocks loop over fewer real ones");
  // Loops with a static bound keep their plain step.
  const Kernel s = capture("blockLoop", 32, [](DPull<EWord32> in) {
    return pConcat(fmap([](const SPull<EWord32>& c) { return push<Block>(c); }, splitUp(64, in)));
  });
  CHECK(s.cuda().find("+= 32u)") != std::string::npos);
}

TEST_CASE("defect: the simulator ends a loop whose step would wrap, as the printed CUDA does") {
  // A loop from 2^32 - 16 to 2^32 - 1 in steps of 8 runs twice (before: the third step wrapped
  // to 0 and the loop went on).
  const Kernel base = capture("count", 1, [](DPull<EWord32> in) { return push<Grid>(in); });
  LoweredKernel l = detail::KernelAccess::lowered(base);
  KernelIR& k = l.lowered;
  const ArrayId out = k.params[2].array;
  Body body{
      Assign{out, ir::u32(0),
             ir::binary(BinOp::Add, ir::index(ScalarType::U32, out, ir::u32(0)), ir::u32(1))}};
  k.body = {Cond{
      Level::Grid,
      ir::binary(BinOp::Eq, ir::threadIdx(), ir::u32(0)),
      {SeqFor{Level::Thread, "w", ir::u32(0xfffffff0u), ir::u32(0xffffffffu), ir::u32(8), body}},
      {}}};
  k.gridBlocks = ir::u32(1);
  const std::string cuda = emitCuda(k);
  CHECK(cuda.find("w += min(4294967295u - w, 8u)") != std::string::npos);
  l.cuda = cuda;
  const Kernel wraps = detail::KernelAccess::make(l);
  std::vector<uint32_t> in{0}, result{0};
  simulate(wraps, {in, result});
  CHECK(result[0] == 2);
}

// ---------------------------------------------------------------- 4. values leaking between
// captures
TEST_CASE("defect: an array kept from one capture is refused in another") {
  std::optional<DPull<EWord32>> kept;
  capture("k1", 256, [&](DPull<EWord32> in) {
    kept = in;
    return push<Grid>(in);
  });
  // Before: k2 generated out0[i0] = out0[i0] + 1u, reading k2's own array with k1's id.
  CHECK(errorOf([&] {
          capture("k2", 256, [&](DPull<EWord32> in) {
            return push<Grid>(fmap([&](const EWord32& x) { return x + (*kept)[0u]; }, in));
          });
        }) ==
        "capture(k2): an array it reads belongs to another capture (kernel k1); arrays, "
        "lengths and values belong to the capture that made them: pass the data to this kernel "
        "as a parameter instead");
  // A leaked length: the message says so (before: "a value from a Thread program").
  CHECK(errorOf([&] {
          capture("k3", 256, [&](DPull<EWord32> in) {
            return push<Grid>(fmap([&](const EWord32& x) { return x + len(*kept); }, in));
          });
        }) ==
        "capture(k3): variable n0 belongs to another capture (kernel k1); arrays, lengths and "
        "values belong to the capture that made them: pass the data to this kernel as a "
        "parameter instead");
  checkLibraryStillWorks();
}

TEST_CASE("defect: a mutable array or scalar kept from one capture is refused in another") {
  std::optional<DMutable<uint32_t>> bins;
  std::optional<EWord32> scalar;
  capture("h1", 32, [&](DPull<EWord32> in, DMutable<uint32_t> m, EWord32 s) {
    bins = m;
    scalar = s;
    return push<Grid>(fmap([s](const EWord32& x) { return x + s; }, in));
  });
  CHECK(errorOf([&] {
          capture("h2", 32, [&](DPull<EWord32> in) {
            return pConcat(fmap(
                [&](const SPull<EWord32>& c) {
                  return exec<Block>([&, c](const Program<Block>& p) {
                    p.forAll(32u, [&](const Program<Thread>& t, const EWord32& i) {
                      atomicAdd(t, *bins, c[i] % 8u, 1u);
                    });
                    return push<Block>(c);
                  });
                },
                splitUp(32, in)));
          });
        }) ==
        "capture(h2): an atomic uses an array of another capture (kernel h1); arrays, lengths and "
        "values belong to the capture that made them: pass the data to this kernel as a "
        "parameter instead");
  CHECK(errorOf([&] {
          capture("h3", 32, [&](DPull<EWord32> in) {
            return push<Grid>(fmap([&](const EWord32& x) { return x * *scalar; }, in));
          });
        }) ==
        "capture(h3): variable s2 belongs to another capture (kernel h1); arrays, lengths and "
        "values belong to the capture that made them: pass the data to this kernel as a "
        "parameter instead");
  checkLibraryStillWorks();
}

// ---------------------------------------------------------------- 5. outputs overlapping inputs
namespace {
Kernel reverseKernel() {
  return capture("reverse", 64, [](DPull<EWord32> in) {
    return push<Grid>(ixMap([n = len(in)](const EWord32& i) { return n - 1u - i; }, in));
  });
}
}  // namespace

TEST_CASE("defect: an output that overlaps an input is refused") {
  const Kernel k = reverseKernel();
  std::vector<uint32_t> v = ::testing::randomWords(100, 3);
  // Before: the simulator returned a result no GPU run gives, with no hazard reported.
  CHECK(errorOf([&] {
          simulate(k, {std::span<const uint32_t>(v), v});
        }) ==
        "launch of kernel reverse: argument 1 (out0) overlaps argument 0 (in0): the kernel "
        "writes out0 while it reads in0, in no fixed order; pass buffers that do not overlap");
  // A partial overlap, and device buffers (the check gpu::launch makes).
  CHECK(errorOf([&] {
          simulate(
              k, {std::span<const uint32_t>(v.data(), 50), std::span<uint32_t>(v.data() + 49, 50)});
        }).find("overlaps") != std::string::npos);
  CHECK(errorOf([&] {
          bindArguments(k.ir(), {fakeDevice(4096, 100, false), fakeDevice(4096 + 396, 100, true)});
        }).find("argument 1 (out0) overlaps argument 0 (in0)") != std::string::npos);
  // Adjacent halves of one buffer do not overlap.
  simulate(k, {std::span<const uint32_t>(v.data(), 50), std::span<uint32_t>(v.data() + 50, 50)});
  CHECK(v[50] == v[49]);
  // Exported launchers refuse it too.
  const std::string h = exportHeader({k}, ExportOptions{"app", ""});
  CHECK(h.find("return cudaErrorInvalidValue;  // out0 overlaps in0") != std::string::npos);
}

// ---------------------------------------------------------------- 11. checked writes

TEST_CASE("defect: the checked variant guards every write to a global array") {
  const Kernel k = obsidian::testing::scatterKernel("scatter");
  const std::string& c = k.checkedCuda();
  CHECK(k.cuda().find("violation") == std::string::npos);  // the plain kernel is unchanged
  CHECK(c.find("extern \"C\" __device__ unsigned long long obsidian_violation_scatter;") !=
        std::string::npos);
  CHECK(c.find("% 16u < (n1))) atomicCAS(&obsidian_violation_scatter, 0ull, 2ull << 32 | (") !=
        std::string::npos);
  CHECK(c.find("atomicCAS(&obsidian_violation_scatter, 0ull, 3ull << 32") != std::string::npos);
  // It compiles (NVRTC, no GPU needed).
  CHECK(k.compile().cubin.size() > 0);
  CompileResult checked = KernelCache::global().get(c, k.name(), k.compileOptions());
  CHECK(!checked.cubin.empty());
  // The message a violation record turns into.
  CHECK(describeViolation(k.ir(), (uint64_t{2} << 32) | 21, [](const ExpPtr&) { return 16; }) ==
        "a write to m1[21] is out of bounds: m1 has 16 elements (the first out-of-bounds write or "
        "atomic of the launch; it was not done)");
  // Exported headers carry the guards under #ifdef OBSIDIAN_CHECKED.
  const std::string h = exportHeader({k}, ExportOptions{"app", ""});
  CHECK(h.find("#ifdef OBSIDIAN_CHECKED\nstatic __device__ unsigned long long "
               "obsidian_violation_scatter;") != std::string::npos);
  CHECK(h.find("return cudaErrorAssert;") != std::string::npos);
  // The simulator reports the same write as out of bounds.
  std::vector<uint32_t> in(64, 13), bins(8), out(64);
  CHECK(errorOf([&] { simulate(k, {in, bins, out}); }).find("m1") != std::string::npos);
}
