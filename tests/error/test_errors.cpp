// Error tests: one TEST_CASE per user mistake that obsidian detects at generation time. Each
// checks that obsidian::Error (not InternalError, not a crash) is thrown with the library's
// full message, and the tests that fail in the middle of a capture also check that the
// library is left usable (no capture context left behind, a following capture succeeds).
//
// The bad-input catalogue (issue 10), and where each entry is tested:
//   wrong lengths for splitUp and friends   here (static); sim/test_sim.cpp "launch arguments
//                                           are checked" and unit/test_runtime.cpp (dynamic: a
//                                           launch precondition, nothing runs, next launch works)
//   dynamic length where static is needed   compile_fail/force_dynamic_length.cpp; here (a Block
//                                           or Warp loop with a dynamic count)
//   shared memory over the limit            here (capture); gpu/test_gpu.cpp (the device's limit)
//   threads per block over the limit        here (capture: 1..1024)
//   buffer too small, wrong element type,   sim/test_sim.cpp, unit/test_runtime.cpp (the same
//   null buffer, read-only output           checks for the simulator and gpu::launch)
//   launching with no device                unit/test_runtime.cpp
//   NVRTC failure                           here (a user kernel, options, architecture)
//   kernel name that C++, C, CUDA or the    here (every keyword, each class with its reason);
//   generated code reserves                 unit/test_identifiers.cpp (every identifier of
//                                           generated CUDA and exported headers is refused)
//   export namespace that is a keyword,     unit/test_export.cpp "namespaces that are not
//   std/posix, ::-prefixed or has an empty  usable" (each part follows the kernel-name rule)
//   or reserved part
//   export: a kernel named like another's   unit/test_export.cpp "mistakes in the request"
//   launcher or grid state; a pipeline
//   function with a reserved name
//   export to a path that cannot be         unit/test_export.cpp "files that cannot be written"
//   written (read-only, a directory, under  (Error with the path and the system's reason)
//   a file, a name too long)
//   corrupt cache file                      unit/test_cache.cpp (truncated, flipped, garbage,
//                                           a header field out of range or edited)
//   FIFO, socket, link or directory at a    unit/test_cache.cpp (reported as corrupt, never
//   cache entry path                        waited on, replaced where it can be)
//   exported header with bad arguments      unit/test_export.cpp (the launcher's checks);
//                                           examples/embed/app.cu, test example.embed.gpu (run)
// Issue 14's defects (each test failed before its fix), in error/test_defects.cpp:
//   static length past 2^32                 "a static length that would pass 2^32 ..." (every
//                                           combinator), "... fails the capture ..."
//   dynamic length past 2^32                "... is a launch precondition" (bindArguments,
//                                           simulate), "exported launchers check ..."
//   expression too deep                     "an expression 2^15 deep ...", "... deeper than the
//                                           bound is an error, not a crash"
//   grid loops near 2^32                    "grid loops cannot wrap past 2^32", "the simulator
//                                           ends a loop whose step would wrap ..."
//   arrays/values of another capture        "an array kept from one capture ...", "a mutable
//                                           array or scalar kept ..."
//   output overlapping an input             "an output that overlaps an input is refused"
//   out-of-bounds write on the GPU          "the checked variant guards ..."; gpu/test_gpu.cpp
//                                           "a checked launch reports ..."
//   the fuzzer keeps these classes covered  fuzz/defects.hpp (every program), deep recipes
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "../support.hpp"
#include "codegen/verify.hpp"
#include "obsidian/obsidian.hpp"

using namespace obsidian;

namespace {

EWord32 plus(const EWord32& a, const EWord32& b) { return a + b; }

SPull<EWord32> iota(uint32_t n) {
  return mkPull(n, [](const EWord32& i) { return i; });
}

// The paper's increment (Figure 12): one block per 256 elements.
Kernel incrementKernel() {
  return capture("increment", 256, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& a) {
          return push<Block>(fmap([](const EWord32& x) { return x + 1u; }, a));
        },
        splitUp(256, in)));
  });
}

// A failure must leave no capture context behind, and the next capture must work.
void checkLibraryStillWorks() {
  CHECK(detail::currentContext() == nullptr);
  const Kernel k = incrementKernel();
  CHECK(k.name() == "increment");
  CHECK(k.cuda().find("__global__") != std::string::npos);
}

// One block program per 256-element chunk of the input, as users write them.
template <class F>
auto perBlock(const DPull<EWord32>& in, F body) {
  return pConcat(fmap(
      [body](const SPull<EWord32>& c) {
        return exec<Block>([body, c](const Program<Block>& p) { return body(p, c); });
      },
      splitUp(256, in)));
}

}  // namespace

// ---------------------------------------------------------------- static lengths
TEST_CASE("error: splitUp of a static length it does not divide") {
  CHECK_THROWS_WITH_AS(splitUp(3, iota(10)), "splitUp(3) needs a length divisible by 3; got 10",
                       Error);
  CHECK_THROWS_WITH_AS(splitUp(0, iota(10)), "splitUp(0) needs a chunk size of at least 1", Error);
}

TEST_CASE("error: coalesce of a static length it does not divide") {
  CHECK_THROWS_WITH_AS(coalesce(4, iota(10)), "coalesce(4) needs a length divisible by 4; got 10",
                       Error);
}

TEST_CASE("error: load of a static length it does not divide") {
  CHECK_THROWS_WITH_AS(load<Block>(3, iota(10)), "load(3) needs a length divisible by 3; got 10",
                       Error);
  CHECK_THROWS_WITH_AS(load<Warp>(3, iota(10)), "load(3) needs a length divisible by 3; got 10",
                       Error);
}

TEST_CASE("error: binSplit into parts that do not divide the length") {
  auto id = [](const SPull<EWord32>& a) { return a; };
  // binSplit(2) cuts into 2^2 = 4 parts; the message names the part count.
  CHECK_THROWS_WITH_AS(binSplit(2, id, iota(10)),
                       "binSplit(2) needs a length divisible by 4 (2^2 parts); got 10", Error);
  CHECK_THROWS_WITH_AS(binSplit(32, id, iota(10)), "binSplit(32) needs fewer than 32 splits",
                       Error);
}

TEST_CASE("error: splitAt beyond the length") {
  CHECK_THROWS_WITH_AS(splitAt(11, iota(10)), "splitAt(11) needs a length of at least 11; got 10",
                       Error);
  CHECK_NOTHROW(splitAt(10, iota(10)));
  // A dynamic length that folds to a constant is checked now, too.
  const DPull<EWord32> three = mkPull(EWord32(3u), [](const EWord32& i) { return i; });
  CHECK_THROWS_WITH_AS(splitAt(5, three), "splitAt(5) needs a length of at least 5", Error);
}

TEST_CASE("error: foldPull1 of an empty array") {
  CHECK_THROWS_WITH_AS(foldPull1(plus, iota(0)), "foldPull1 needs a non-empty array; got length 0",
                       Error);
}

TEST_CASE("error: a negative static length") {
  CHECK_THROWS_WITH_AS(mkPull(-1, [](const EWord32& i) { return i; }),
                       "a static array length must not be negative; got -1", Error);
}

TEST_CASE("error: force of an empty array") {
  auto kernel = [] {
    return capture("forceEmpty", 256, [](DPull<EWord32> in) {
      return perBlock(in, [](const Program<Block>& p, const SPull<EWord32>& c) {
        auto [none, all] = splitAt(0, c);
        return push<Block>(zipWith(plus, all, forcePull(p, none)));
      });
    });
  };
  CHECK_THROWS_WITH_AS(kernel(), "force: cannot make an array of length 0 manifest", Error);
  checkLibraryStillWorks();
}

TEST_CASE("error: compose with no functions") {
  Context ctx(256);
  Body body;
  const Program<Block> p(ctx, body);
  CHECK_THROWS_WITH_AS((compose<Block, EWord32>(p, {}, iota(256))),
                       "compose needs at least one function; got none", Error);
}

TEST_CASE("error: newShared with no elements") {
  Context ctx(256);
  Body body;
  const Program<Block> p(ctx, body);
  CHECK_THROWS_WITH_AS(newShared<uint32_t>(p, 0),
                       "newShared: a shared array needs at least one element; got 0", Error);
  CHECK(body.empty());  // nothing was allocated
  CHECK_NOTHROW(newShared<uint32_t>(p, 1));
}

// ---------------------------------------------------------------- capture arguments
TEST_CASE("error: capture with threadsPerBlock outside 1..1024") {
  auto copy = [](DPull<EWord32> in) { return push<Grid>(in); };
  CHECK_THROWS_WITH_AS(capture("copy", 0, copy),
                       "capture(copy): threadsPerBlock must be in 1..1024 (CUDA's limit; larger "
                       "blocks are virtualized); got 0",
                       Error);
  CHECK_THROWS_WITH_AS(capture("copy", 2048, copy),
                       "capture(copy): threadsPerBlock must be in 1..1024 (CUDA's limit; larger "
                       "blocks are virtualized); got 2048",
                       Error);
  CHECK_NOTHROW(capture("copy", 1024, copy));
  CHECK_NOTHROW(capture("copy", 1, copy));
}

TEST_CASE("error: capture with an empty or non-identifier name") {
  auto copy = [](DPull<EWord32> in) { return push<Grid>(in); };
  CHECK_THROWS_WITH_AS(capture("", 256, copy),
                       "capture: a kernel needs a name; got an empty string", Error);
  CHECK_THROWS_WITH_AS(
      capture("my-kernel", 256, copy),
      "capture: a kernel name must be a C identifier (letters, digits, _); got 'my-kernel'", Error);
  CHECK_THROWS_WITH_AS(
      capture("2x", 256, copy),
      "capture: a kernel name must be a C identifier (letters, digits, _); got '2x'", Error);
  CHECK_THROWS_WITH_AS(
      capture("copy kernel", 256, copy),
      "capture: a kernel name must be a C identifier (letters, digits, _); got 'copy kernel'",
      Error);
  CHECK_NOTHROW(capture("_copy2", 256, copy));
}

TEST_CASE("error: capture of an SPull parameter without its static length") {
  auto copy = [](SPull<EWord32> in) { return push<Grid>(in); };
  CHECK_THROWS_WITH_AS(capture("copyS", 256, copy),
                       "capture(copyS): parameter 0 is an SPull (static length) but "
                       "CaptureOptions::staticLengths has only 0 length(s)",
                       Error);
  auto two = [](DPull<EWord32> a, SPull<EWord32> b, SPull<EWord32> c) {
    return push<Grid>(zipWith(plus, a, zipWith(plus, b, c)));
  };
  CaptureOptions one;
  one.staticLengths = {512};
  CHECK_THROWS_WITH_AS(capture("add3", 256, two, one),
                       "capture(add3): parameter 2 is an SPull (static length) but "
                       "CaptureOptions::staticLengths has only 1 length(s)",
                       Error);
  CaptureOptions zero;
  zero.staticLengths = {0};
  CHECK_THROWS_WITH_AS(capture("copyS", 256, copy, zero),
                       "capture(copyS): parameter 0 needs a static length of at least 1; got 0",
                       Error);
  checkLibraryStillWorks();
}

TEST_CASE("error: a kernel whose result writes nothing") {
  CHECK_THROWS_WITH_AS(
      capture("nothing", 256,
              [](DPull<EWord32>) {
                return mkPush<Grid, EWord32>(0u,
                                             [](const Program<Grid>&, const Writer<EWord32>&) {});
              }),
      "capture(nothing): the kernel computes nothing (its result writes no element)", Error);
}

// ---------------------------------------------------------------- memory map
TEST_CASE("error: shared memory over CaptureOptions::sharedMemoryLimit names the live arrays") {
  // Two 256-element uint32 arrays are live together (the second reads the first).
  auto twoStages = [](DPull<EWord32> in) {
    return perBlock(in, [](const Program<Block>& p, const SPull<EWord32>& c) {
      const auto a = forcePull(p, c);
      const auto b = forcePull(p, zipWith(plus, c, a));
      return push<Block>(b);
    });
  };
  CaptureOptions small;
  small.sharedMemoryLimit = 1024;
  CHECK_THROWS_WITH_AS(capture("twoStages", 256, twoStages, small),
                       "memory map (kernel twoStages): needs 2048 bytes of shared memory at its "
                       "peak, over the limit of 1024 bytes; arrays live at the peak: arr0 (1024 "
                       "B at offset 0), arr1 (1024 B at offset 1024)",
                       Error);
  checkLibraryStillWorks();
  small.sharedMemoryLimit = 2048;
  CHECK(capture("twoStages", 256, twoStages, small).sharedBytes() == 2048);
}

TEST_CASE("error: shared memory over the default limit (227 KB)") {
  auto huge = [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) { return push<Block>(forcePull(p, c)); });
        },
        splitUp(65536, in)));
  };
  CHECK_THROWS_WITH_AS(capture("huge", 1024, huge),
                       "memory map (kernel huge): needs 262144 bytes of shared memory at its "
                       "peak, over the limit of 232448 bytes; arrays live at the peak: arr0 "
                       "(262144 B at offset 0)",
                       Error);
}

// ---------------------------------------------------------------- verify
TEST_CASE("error: warp-level programs with threadsPerBlock not a multiple of 32") {
  // The paper's agnostic program shape at Warp level, two warps per block, 48 threads.
  auto warps = [](DPull<EWord32> in) {
    auto chunks = fmap([](const SPull<EWord32>& c) { return splitUp(32, c); }, splitUp(64, in));
    return pConcat(fmap(
        [](const SPull<SPull<EWord32>>& block) {
          return pConcat(fmap(
              [](const SPull<EWord32>& w) {
                return exec<Warp>(
                    [w](const Program<Warp>& p) { return push<Warp>(forcePull(p, w)); });
              },
              block));
        },
        chunks));
  };
  CHECK_THROWS_WITH_AS(capture("warp48", 48, warps),
                       "verify(kernel warp48): warp-level programs need threadsPerBlock to be a "
                       "multiple of 32; got 48",
                       Error);
  CHECK_NOTHROW(capture("warp64", 64, warps));
}

TEST_CASE("error: a loop index escaping a Thread program into a block-level condition") {
  auto escape = [](DPull<EWord32> in) {
    return perBlock(in, [](const Program<Block>& p, const SPull<EWord32>& c) {
      EWord32 leaked = 0u;
      p.forAll(256u, [&](const Program<Thread>&, const EWord32& i) { leaked = i; });
      p.cond(leaked < 128u, [](const Program<Block>& q) { q.declare(EWord32(1u)); });
      return push<Block>(c);
    });
  };
  CHECK_THROWS_WITH_AS(capture("escape", 256, escape),
                       "verify(kernel escape): variable i0 is used outside the program that binds "
                       "it (in i0 < 128u); a value from a Thread program cannot escape into its "
                       "enclosing program",
                       Error);
  checkLibraryStillWorks();
}

TEST_CASE("error: a barrier under an escaped thread variable reports the escape first") {
  // The user-level way to put p.sync() under a thread-dependent branch: the escape check runs
  // on the condition before the barrier check runs on the body.
  auto escape = [](DPull<EWord32> in) {
    return perBlock(in, [](const Program<Block>& p, const SPull<EWord32>& c) {
      EWord32 leaked = 0u;
      p.forAll(256u, [&](const Program<Thread>&, const EWord32& i) { leaked = i; });
      p.cond(leaked < 128u, [](const Program<Block>& q) { q.sync(); });
      return push<Block>(c);
    });
  };
  CHECK_THROWS_WITH_AS(capture("syncEscape", 256, escape),
                       doctest::Contains("verify(kernel syncEscape): variable i0 is used outside "
                                         "the program that binds it"),
                       Error);
}

TEST_CASE("error: a thread-level array escaping into its block program") {
  auto escape = [](DPull<EWord32> in) {
    return perBlock(in, [](const Program<Block>& p, const SPull<EWord32>& c) {
      std::optional<SPull<EWord32>> leaked;
      p.forAll(256u, [&](const Program<Thread>& t, const EWord32& i) {
        leaked = forcePull(t, mkPull(4u, [i](const EWord32& j) { return i + j; }));
      });
      return push<Block>(zipWith(plus, c, *leaked));
    });
  };
  CHECK_THROWS_WITH_AS(
      capture("escapeArray", 256, escape),
      "verify(kernel escapeArray): array loc0 is used outside the program that allocated it",
      Error);
}

TEST_CASE("error: __syncthreads() under a thread-dependent branch (IR built by hand)") {
  // if (threadIdx.x < 32) __syncthreads();  inside a block program
  KernelIR k;
  k.name = "handmade";
  k.threadsPerBlock = 64;
  k.body.push_back(
      DistrPar{Level::Block, ir::u32(1), "bid0",
               Body{Cond{Level::Block, ir::binary(BinOp::Lt, ir::threadIdx(), ir::u32(32)),
                         Body{Sync{Level::Block}}, Body{}}}});
  CHECK_THROWS_WITH_AS(verify(k),
                       "verify(kernel handmade): __syncthreads() under a thread-dependent branch "
                       "or loop: every thread of the block must reach each barrier",
                       Error);
  // The same barrier under a block-uniform condition is fine.
  std::get<Cond>(std::get<DistrPar>(k.body[0].node).body[0].node).cond =
      ir::binary(BinOp::Lt, ir::blockIdx(), ir::u32(32));
  CHECK_NOTHROW(verify(k));
}

TEST_CASE("error: __syncwarp() under a thread-dependent loop (IR built by hand)") {
  // while (threadIdx.x < 3) __syncwarp();  inside a warp program
  KernelIR k;
  k.name = "handwarp";
  k.threadsPerBlock = 64;
  k.body.push_back(DistrPar{
      Level::Block, ir::u32(1), "bid0",
      Body{DistrPar{Level::Warp, ir::u32(2), "wid0",
                    Body{SeqWhile{Level::Warp, ir::binary(BinOp::Lt, ir::threadIdx(), ir::u32(3)),
                                  Body{Sync{Level::Warp}}}}}}});
  CHECK_THROWS_WITH_AS(verify(k),
                       "verify(kernel handwarp): __syncwarp() under a thread-dependent branch or "
                       "loop: every thread of the warp must reach each barrier",
                       Error);
}

TEST_CASE("error: a warp vote reached by only some lanes (IR built by hand)") {
  // A warp's register array r of bools, then, in a loop over its lanes, a ballot of it under
  // `lane < 16` (the front end never builds this: votes go in front of the lane loop).
  KernelIR k;
  k.name = "handvote";
  k.threadsPerBlock = 32;
  ArrayDecl r;
  r.name = "r";
  r.type = ScalarType::Bool;
  r.space = MemorySpace::Register;
  r.level = Level::Warp;
  r.length = 32;
  k.arrays.push_back(r);
  const ExpPtr lane = ir::var(ScalarType::U32, "l");
  const ExpPtr vote = ir::warpVote(WarpVote::Ballot, ScalarType::Bool, 0);
  Body lanes{Cond{Level::Thread, ir::binary(BinOp::Lt, lane, ir::u32(16)),
                  Body{Declare{"v", ScalarType::U32, vote}}, Body{}}};
  k.body.push_back(DistrPar{
      Level::Block, ir::u32(1), "bid0",
      Body{DistrPar{Level::Warp, ir::u32(1), "wid0",
                    Body{Allocate{0},
                         ForAll{Level::Warp, ir::u32(32), "l",
                                Body{Assign{0, lane, ir::binary(BinOp::Lt, lane, ir::u32(5))}}},
                         ForAll{Level::Warp, ir::u32(32), "l", lanes}}}}});
  CHECK_THROWS_WITH_AS(verify(k),
                       "verify(kernel handvote): warp vote `__ballot_sync(0xffffffffu, r)` under "
                       "a lane-dependent branch or loop: every lane of the warp must reach each "
                       "__ballot_sync",
                       Error);
  // The same vote in front of the branch, where every lane reaches it, is fine.
  auto& loop = std::get<ForAll>(
      std::get<DistrPar>(std::get<DistrPar>(k.body[0].node).body[0].node).body[2].node);
  loop.body = Body{Declare{"v", ScalarType::U32, vote},
                   Cond{Level::Thread, ir::binary(BinOp::Lt, lane, ir::u32(16)), Body{}, Body{}}};
  CHECK_NOTHROW(verify(k));
}

TEST_CASE("error: a Block-level parallel loop with a dynamic count") {
  // push<Block> of the whole (dynamic-length) input inside a block program.
  auto dyn = [](DPull<EWord32> in, DMutable<uint32_t> m) {
    return perBlock(in, [in, m](const Program<Block>& p, const SPull<EWord32>& c) {
      push<Block>(in)(p, [m](const Program<Thread>& t, const EWord32& v, const EWord32& i) {
        write(t, m, i, v);
      });
      return push<Block>(c);
    });
  };
  CHECK_THROWS_WITH_AS(capture("dynBlock", 256, dyn),
                       "verify(kernel dynBlock): a parallel loop at Block level needs a static "
                       "count (threads of a block are fixed when the kernel is generated); got n0",
                       Error);
  checkLibraryStillWorks();
}

TEST_CASE("error: a Warp-level parallel loop with a dynamic count") {
  auto dyn = [](DPull<EWord32> in, DMutable<uint32_t> m) {
    auto chunks = fmap([](const SPull<EWord32>& c) { return splitUp(32, c); }, splitUp(64, in));
    return pConcat(fmap(
        [in, m](const SPull<SPull<EWord32>>& block) {
          return pConcat(fmap(
              [in, m](const SPull<EWord32>& w) {
                return exec<Warp>([w, in, m](const Program<Warp>& p) {
                  push<Warp>(in)(p, [m](const Program<Thread>& t, const EWord32& v,
                                        const EWord32& i) { write(t, m, i, v); });
                  return push<Warp>(w);
                });
              },
              block));
        },
        chunks));
  };
  CHECK_THROWS_WITH_AS(capture("dynWarp", 64, dyn),
                       "verify(kernel dynWarp): a parallel loop at Warp level needs a static "
                       "count (threads of a block are fixed when the kernel is generated); got n0",
                       Error);
}

// ---------------------------------------------------------------- expressions
TEST_CASE("error: division by a constant zero") {
  const EWord32 x = variable<uint32_t>("x");
  const EInt32 y = variable<int32_t>("y");
  CHECK_THROWS_WITH_AS(x / 0u, "operator/: division by a constant zero in a kernel expression",
                       Error);
  CHECK_THROWS_WITH_AS(x % 0u, "operator%: division by a constant zero in a kernel expression",
                       Error);
  CHECK_THROWS_WITH_AS(y / 0, "operator/: division by a constant zero in a kernel expression",
                       Error);
  // Two literals are rejected, not folded.
  CHECK_THROWS_WITH_AS(EWord32(5u) / EWord32(0u),
                       "operator/: division by a constant zero in a kernel expression", Error);
  // Floating point division by zero is IEEE arithmetic, not a mistake.
  CHECK_NOTHROW(variable<float>("f") / 0.0f);
}

TEST_CASE("error: shift by the operand's width or more") {
  const EWord32 x = variable<uint32_t>("x");
  CHECK_THROWS_WITH_AS(x << 32u, "operator<<: shift by 32 is out of range for uint32_t (width 32)",
                       Error);
  CHECK_THROWS_WITH_AS(x >> 40u, "operator>>: shift by 40 is out of range for uint32_t (width 32)",
                       Error);
  CHECK_THROWS_WITH_AS(variable<uint8_t>("b") << EWord8(8u),
                       "operator<<: shift by 8 is out of range for uint8_t (width 8)", Error);
  CHECK_NOTHROW(x << 31u);
  CHECK_NOTHROW(variable<uint64_t>("w") << EWord64(63u));
}

TEST_CASE("error: assign to an expression that is not a variable") {
  Context ctx(256);
  Body body;
  const Program<Block> p(ctx, body);
  const EWord32 v = p.declare(EWord32(0u));
  CHECK_THROWS_WITH_AS(p.assign(v + 1u, EWord32(2u)),
                       "assign: the target must be a variable made by declare; got an expression",
                       Error);
  CHECK_THROWS_WITH_AS(p.assign(EWord32(3u), EWord32(2u)),
                       "assign: the target must be a variable made by declare; got an expression",
                       Error);
  CHECK(body.size() == 1);  // only the declaration
  CHECK_NOTHROW(p.assign(v, v + 1u));
}

// ---------------------------------------------------------------- NVRTC
TEST_CASE("error: NVRTC rejects CUDA with a syntax error and shows the numbered source") {
  const std::string source =
      "extern \"C\" __global__ void broken(unsigned* p) {\n"
      "  unsigned x = p[0]\n"
      "  p[1] = x;\n"
      "}\n";
  CHECK_THROWS_WITH_AS(compileCuda(source, "broken"),
                       doctest::Contains("NVRTC failed to compile kernel 'broken' for sm_90:\n"),
                       CompileError);
  CHECK_THROWS_WITH_AS(
      compileCuda(source, "broken"),
      doctest::Contains("\n--- source ---\n"
                        "  1 | extern \"C\" __global__ void broken(unsigned* p) {\n"
                        "  2 |   unsigned x = p[0]\n"
                        "  3 |   p[1] = x;\n"
                        "  4 | }\n"),
      CompileError);
  // CompileError is an obsidian::Error.
  CHECK_THROWS_AS(compileCuda(source, "broken"), Error);
  // NVRTC still works after a failure.
  CHECK(incrementKernel().compile().registers > 0);
}

// ---------------------------------------------------------------- found by review
TEST_CASE("error: a barrier under a branch on a variable a Thread program assigned") {
  auto divergent = [] {
    capture("divergentSync", 256, [](DPull<EWord32> in) {
      return pConcat(fmap(
          [](const SPull<EWord32>& c) {
            return exec<Block>([c](const Program<Block>& p) {
              const EWord32 v = p.declare(EWord32(0u));
              p.forAll(256u, [&](const Program<Thread>& t, const EWord32& i) { t.assign(v, i); });
              p.cond(v < 128u, [](const Program<Block>& q) { q.sync(); });
              return push<Block>(c);
            });
          },
          splitUp(256, in)));
    });
  };
  CHECK_THROWS_WITH_AS(divergent(),
                       doctest::Contains("__syncthreads() under a thread-dependent branch"), Error);
}

TEST_CASE("error: assign to a loop index or a kernel parameter") {
  auto loopIndex = [] {
    capture("assignIndex", 64, [](DPull<EWord32> in) {
      return pConcat(fmap(
          [](const SPull<EWord32>& c) {
            return exec<Block>([c](const Program<Block>& p) {
              p.forAll(64u,
                       [&](const Program<Thread>& t, const EWord32& i) { t.assign(i, i + 1u); });
              return push<Block>(c);
            });
          },
          splitUp(64, in)));
    });
  };
  CHECK_THROWS_WITH_AS(loopIndex(),
                       "verify(kernel assignIndex): assign: i0 is a loop index or kernel "
                       "parameter; only variables made by declare can be assigned",
                       Error);
  auto parameter = [] {
    capture("assignParam", 64, [](DPull<EWord32> in, EWord32 s) {
      return pConcat(fmap(
          [s](const SPull<EWord32>& c) {
            return exec<Block>([c, s](const Program<Block>& p) {
              p.assign(s, s + 1u);
              return push<Block>(c);
            });
          },
          splitUp(64, in)));
    });
  };
  CHECK_THROWS_WITH_AS(parameter(),
                       doctest::Contains("assign: s1 is a loop index or kernel parameter"), Error);
}

TEST_CASE("error: more static lengths than SPull parameters") {
  CaptureOptions o;
  o.staticLengths = {8, 9};
  CHECK_THROWS_WITH_AS(
      capture(
          "extraLengths", 8, [](SPull<EWord32> in) { return push<Grid>(in); }, o),
      "capture(extraLengths): CaptureOptions::staticLengths has 2 length(s) but the kernel has 1 "
      "SPull parameter(s)",
      Error);
}

TEST_CASE("error: a kernel named like a C++ keyword") {
  // C++20's keywords and alternative tokens, written out here independently of the library's
  // list, and the contextual import and module.
  const char* const keywords[] = {"alignas",       "alignof",     "and",
                                  "and_eq",        "asm",         "auto",
                                  "bitand",        "bitor",       "bool",
                                  "break",         "case",        "catch",
                                  "char",          "char8_t",     "char16_t",
                                  "char32_t",      "class",       "compl",
                                  "concept",       "const",       "consteval",
                                  "constexpr",     "constinit",   "const_cast",
                                  "continue",      "co_await",    "co_return",
                                  "co_yield",      "decltype",    "default",
                                  "delete",        "do",          "double",
                                  "dynamic_cast",  "else",        "enum",
                                  "explicit",      "export",      "extern",
                                  "false",         "float",       "for",
                                  "friend",        "goto",        "if",
                                  "inline",        "int",         "long",
                                  "mutable",       "namespace",   "new",
                                  "noexcept",      "not",         "not_eq",
                                  "nullptr",       "operator",    "or",
                                  "or_eq",         "private",     "protected",
                                  "public",        "register",    "reinterpret_cast",
                                  "requires",      "return",      "short",
                                  "signed",        "sizeof",      "static",
                                  "static_assert", "static_cast", "struct",
                                  "switch",        "template",    "this",
                                  "thread_local",  "throw",       "true",
                                  "try",           "typedef",     "typeid",
                                  "typename",      "union",       "unsigned",
                                  "using",         "virtual",     "void",
                                  "volatile",      "wchar_t",     "while",
                                  "xor",           "xor_eq",      "import",
                                  "module"};
  for (const char* name : keywords) {
    CHECK(testing::errorOf(
              [&] { capture(name, 8, [](DPull<EWord32> in) { return push<Grid>(in); }); }) ==
          "capture: kernel name '" + std::string(name) + "' is a C++ keyword; choose another name");
  }
  checkLibraryStillWorks();
}

TEST_CASE("error: a kernel named like something C, CUDA or the generated code reserves") {
  // NVRTC or nvcc used to reject these (or worse, an exported header) after capture had
  // accepted them; the whole of each class is refused now, with the reason.
  const std::pair<const char*, const char*> cases[] = {
      {"__global__", "reserved for the implementation (it contains __)"},
      {"my__kernel", "reserved for the implementation (it contains __)"},
      {"_Kernel", "reserved for the implementation (it starts with _ and a capital letter)"},
      {"threadIdx", "a CUDA built-in variable"},
      {"warpSize", "a CUDA built-in variable"},
      {"smem", "a name the generated code uses"},
      {"uint32_t", "a name the generated code uses"},
      {"size_t", "a name the generated code uses"},
      {"sqrtf", "a name the generated code uses"},
      {"fminf", "a name the generated code uses"},
      {"powf", "a name the generated code uses"},
      {"min", "a name the generated code uses"},
      {"atomicCAS", "a name the generated code uses"},
      {"uint4", "a name the generated code uses"},
      {"cudaStream_t", "a CUDA runtime name (cuda* and CU* names are CUDA's)"},
      {"cudaError_t", "a CUDA runtime name (cuda* and CU* names are CUDA's)"},
      {"CUresult", "a CUDA runtime name (cuda* and CU* names are CUDA's)"},
      {"atomicAdd_system", "a C/CUDA library name (atomic* functions are CUDA's)"},
      {"char3", "a CUDA vector type"},
      {"ulong3", "a CUDA vector type"},
      {"double4_32a", "a CUDA vector type"},
      {"make_int2", "a C/CUDA library name"},
      {"printf", "a C/CUDA library name"},
      {"malloc", "a C/CUDA library name"},
      {"free", "a C/CUDA library name"},
      {"memcpy", "a C/CUDA library name"},
      {"memset", "a C/CUDA library name"},
      {"exit", "a C/CUDA library name"},
      {"ptrdiff_t", "a C/CUDA library name"},
      {"dim3", "a C/CUDA library name"},
      {"sqrt", "a name the generated code uses"},
      {"exp10f", "a C/CUDA library name"},
      {"erfcinvf", "a C/CUDA library name"},
      {"llmax", "a C/CUDA library name"},
      {"clock64", "a C/CUDA library name"},
      {"main", "a C/CUDA library name"},
      {"std", "a C/CUDA library name"},
      {"assert", "a C library macro"},
      {"stdin", "a C library macro"},
      {"errno", "a C library macro"},
      {"M_PI", "a C library macro"},
      {"EOF",
       "written in capitals, as the macros of the C and CUDA headers are (EOF, NULL, "
       "INT_MAX...)"},
      {"NULL",
       "written in capitals, as the macros of the C and CUDA headers are (EOF, NULL, "
       "INT_MAX...)"},
      {"INT_MAX",
       "written in capitals, as the macros of the C and CUDA headers are (EOF, NULL, "
       "INT_MAX...)"},
  };
  for (const auto& [name, why] : cases) {
    CHECK(testing::errorOf(
              [&] { capture(name, 8, [](DPull<EWord32> in) { return push<Grid>(in); }); }) ==
          "capture: kernel name '" + std::string(name) + "' is " + why + "; choose another name");
  }
  // Ordinary names, a leading _ and a lower-case letter, and a single capital are fine.
  for (const char* name : {"red3", "reduce", "scan", "mapRed5", "myKernel", "k", "x1", "K",
                           "_copy2", "sqrtOf", "minimum", "cubSum"}) {
    CHECK_MESSAGE(testing::errorOf([&] {
                    capture(name, 8, [](DPull<EWord32> in) { return push<Grid>(in); });
                  }) == "no error",
                  name);
  }
  checkLibraryStillWorks();
}

TEST_CASE("error: sequential reductions and first/last of an empty array") {
  const SPull<EWord32> empty = mkPull(0u, [](const EWord32& i) { return i; });
  auto plus = [](const EWord32& a, const EWord32& b) { return a + b; };
  CHECK_THROWS_WITH_AS(seqReduce(plus, empty), "seqReduce needs a non-empty array; got length 0",
                       Error);
  CHECK_THROWS_WITH_AS(seqScan(plus, empty), "seqScan needs a non-empty array; got length 0",
                       Error);
  CHECK_THROWS_WITH_AS(first(empty), "first needs a non-empty array; got length 0", Error);
  CHECK_THROWS_WITH_AS(last(empty), "last needs a non-empty array; got length 0", Error);
}

// ---------------------------------------------------------------- NVRTC, from a user kernel
TEST_CASE("error: a user kernel that NVRTC cannot compile names the kernel and shows the source") {
  // A macro option that breaks the kernel's parameter list: capture cannot see it, only NVRTC
  // can. The error names the kernel and shows the offending line, nothing is kept, and NVRTC
  // keeps working.
  CaptureOptions options;
  options.nvrtcOptions = {"-Dn0=n0+"};
  const Kernel k = capture(
      "broken", 32,
      [](DPull<EWord32> in) {
        return push<Grid>(fmap([](const EWord32& x) { return x + 1u; }, in));
      },
      options);
  CHECK_THROWS_WITH_AS(k.compile(),
                       doctest::Contains("NVRTC failed to compile kernel 'broken' for sm_90:"),
                       CompileError);
  CHECK_THROWS_WITH_AS(
      k.compile(),
      doctest::Contains("__launch_bounds__(32) broken(const uint32_t* __restrict__ in0"),
      CompileError);
  CHECK_FALSE(k.compiled());
  CHECK(incrementKernel().compile().registers > 0);
}

TEST_CASE("error: NVRTC options it does not know, or an architecture it does not support") {
  CaptureOptions options;
  options.nvrtcOptions = {"--no-such-option"};
  const Kernel k = capture(
      "badOption", 32,
      [](DPull<EWord32> in) { return push<Grid>(fmap([](const EWord32& x) { return x; }, in)); },
      options);
  CHECK_THROWS_WITH_AS(k.compile(),
                       doctest::Contains("NVRTC failed to compile kernel 'badOption' for sm_90:"),
                       CompileError);
  CHECK_THROWS_WITH_AS(incrementKernel().compile(CompileOptions{"sm_5", {}}),
                       doctest::Contains("NVRTC failed to compile kernel 'increment' for sm_5:"),
                       CompileError);
  CHECK(incrementKernel().compile().registers > 0);
}
