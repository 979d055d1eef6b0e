// Tests for the NVRTC wrapper: outputs, ptxas report parsing and error messages. No GPU needed.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "obsidian/error.hpp"
#include "obsidian/nvrtc.hpp"

using obsidian::compileCuda;
using obsidian::CompileError;
using obsidian::CompileOptions;
using obsidian::CompileResult;
using obsidian::numberedSource;

namespace {

const char* const kScaleKernel = R"(extern "C" __global__ void scale(float* data, float factor) {
  data[blockIdx.x * blockDim.x + threadIdx.x] *= factor;
}
)";

bool hasOption(const CompileResult& result, const std::string& option) {
  return std::find(result.options.begin(), result.options.end(), option) != result.options.end();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("nvrtc: small extern \"C\" kernel compiles to CUBIN and PTX") {
  const CompileResult result = compileCuda(kScaleKernel, "scale");
  REQUIRE(result.cubin.size() > 4);
  CHECK(std::string(result.cubin.begin(), result.cubin.begin() + 4) ==
        "\x7f"
        "ELF");
  CHECK(contains(result.ptx, ".entry"));
  CHECK(contains(result.ptx, "scale"));
  CHECK(contains(result.ptx, ".target sm_90"));
  CHECK(result.ptx.find('\0') == std::string::npos);
  CHECK(contains(result.log, "ptxas info"));
  CHECK(result.registers > 0);
  CHECK(result.spillStoreBytes == 0);
  CHECK(result.spillLoadBytes == 0);
  CHECK(result.stackBytes == 0);
  CHECK(result.staticSharedBytes == 0);
  CHECK(result.seconds > 0);
  CHECK(hasOption(result, "-arch=sm_90"));
  CHECK(hasOption(result, "-std=c++17"));
  CHECK(hasOption(result, "--ptxas-options=-v"));
}

TEST_CASE("nvrtc: sm_80 is honoured") {
  CompileOptions options;
  options.arch = "sm_80";
  const CompileResult result = compileCuda(kScaleKernel, "scale", options);
  CHECK(hasOption(result, "-arch=sm_80"));
  CHECK_FALSE(hasOption(result, "-arch=sm_90"));
  CHECK(contains(result.ptx, ".target sm_80"));
  CHECK(contains(result.log, "for 'sm_80'"));
  CHECK(result.cubin.size() > 4);
  CHECK(result.registers > 0);
}

TEST_CASE("nvrtc: compute_XX gives PTX only, with no ptxas report") {
  CompileOptions options;
  options.arch = "compute_90";
  const CompileResult result = compileCuda(kScaleKernel, "scale", options);
  CHECK(contains(result.ptx, ".entry"));
  CHECK(result.cubin.empty());
  CHECK(result.registers == -1);
}

TEST_CASE("nvrtc: extra options are passed through") {
  CompileOptions options;
  options.extraOptions = {"-DFACTOR=3.0f", "-lineinfo"};
  const CompileResult result = compileCuda(
      "extern \"C\" __global__ void k(float* d) { d[threadIdx.x] *= FACTOR; }\n", "k", options);
  CHECK(hasOption(result, "-DFACTOR=3.0f"));
  CHECK(hasOption(result, "-lineinfo"));
  CHECK(result.options.back() == "-lineinfo");
}

TEST_CASE("nvrtc: dynamically indexed local array reports stack bytes") {
  // 256 ints cannot live in registers, so ptxas reports a 1024-byte stack frame.
  const CompileResult result = compileCuda(R"(
extern "C" __global__ void lookup(const int* in, int* out, int i) {
  int table[256];
  for (int k = 0; k < 256; ++k) table[k] = in[k];
  out[threadIdx.x] = table[i];
}
)",
                                           "lookup");
  CHECK(result.stackBytes == 1024);
  CHECK(result.registers > 0);
}

TEST_CASE("nvrtc: register cap produces spills") {
  CompileOptions options;
  options.extraOptions = {"-maxrregcount=24"};
  const CompileResult result = compileCuda(R"(
extern "C" __global__ void heavy(const float* p, float* o) {
  float a[40];
#pragma unroll
  for (int k = 0; k < 40; ++k) a[k] = p[k * blockDim.x + threadIdx.x];
  float s = 0;
#pragma unroll
  for (int k = 0; k < 40; ++k)
    for (int j = 0; j < 40; ++j) s += a[k] * a[j] * p[j];
  o[threadIdx.x] = s;
}
)",
                                           "heavy", options);
  CHECK(result.registers <= 24);
  CHECK(result.spillStoreBytes > 0);
  CHECK(result.spillLoadBytes > 0);
  CHECK(result.stackBytes > 0);
}

TEST_CASE("nvrtc: the report of the named kernel is picked among several functions") {
  const std::string source = R"(
extern "C" __global__ void small(float* a) { a[threadIdx.x] *= 2.0f; }
__device__ __noinline__ int helper(const int* p, int i) {
  int local[64];
  for (int k = 0; k < 64; ++k) local[k] = p[k];
  return local[i];
}
extern "C" __global__ void big(int* p, int i) {
  __shared__ int tile[100];
  tile[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[i] = helper(p, i) + tile[i ^ 1];
}
)";
  const CompileResult big = compileCuda(source, "big");
  const CompileResult small = compileCuda(source, "small");
  CHECK(big.staticSharedBytes == 400);
  CHECK(small.staticSharedBytes == 0);
  CHECK(big.stackBytes > 0);
  CHECK(small.stackBytes == 0);
  CHECK(big.registers > small.registers);
  CHECK(small.registers > 0);
}

TEST_CASE("nvrtc: a C++-mangled entry is matched by its plain name") {
  const std::string source = R"(
__global__ void kern(int* p) { __shared__ int s[8]; s[threadIdx.x] = p[0]; p[1] = s[p[2]]; }
__global__ void other(int* p) { p[0] = 1; }
)";
  const CompileResult result = compileCuda(source, "kern");
  CHECK(contains(result.log, "_Z4kernPi"));
  CHECK(result.registers > 0);
  CHECK(result.staticSharedBytes == 32);
}

TEST_CASE("nvrtc: a syntax error throws CompileError with log, kernel name and source") {
  const std::string source =
      "extern \"C\" __global__ void broken(int* p) {\n"
      "  int x = 1\n"
      "  p[0] = x;\n"
      "}\n";
  try {
    compileCuda(source, "broken");
    FAIL("expected CompileError");
  } catch (const CompileError& error) {
    const std::string message = error.what();
    CHECK(contains(message, "NVRTC failed to compile kernel 'broken' for sm_90:\n"));
    CHECK(contains(message, "error: expected a \";\""));
    CHECK(contains(message, "broken.cu(3)"));
    CHECK(contains(message, "\n--- source ---\n"));
    CHECK(contains(message, "  3 |   p[0] = x;\n"));
    CHECK(contains(message, "  1 | extern \"C\" __global__ void broken(int* p) {\n"));
  }
  // CompileError is an obsidian::Error, so callers may catch the base class.
  CHECK_THROWS_AS(compileCuda(source, "broken"), obsidian::Error);
}

TEST_CASE("nvrtc: an unknown arch throws CompileError naming the NVRTC result") {
  CompileOptions options;
  options.arch = "sm_1";
  CHECK_THROWS_WITH_AS(compileCuda(kScaleKernel, "scale", options),
                       doctest::Contains("NVRTC_ERROR_INVALID_OPTION"), CompileError);
  CHECK_THROWS_WITH_AS(compileCuda(kScaleKernel, "scale", options), doctest::Contains("for sm_1:"),
                       CompileError);
}

TEST_CASE("nvrtc: headers are not searched for") {
  CHECK_THROWS_WITH_AS(compileCuda("#include <cstdint>\n" + std::string(kScaleKernel), "scale"),
                       doctest::Contains("cstdint"), CompileError);
}

TEST_CASE("numberedSource right-aligns line numbers") {
  CHECK(numberedSource("") == "");
  CHECK(numberedSource("a") == "  1 | a\n");
  CHECK(numberedSource("a\nb\n") == "  1 | a\n  2 | b\n");
  CHECK(numberedSource("a\n\n  c\n") == "  1 | a\n  2 |\n  3 |   c\n");
  std::string thousand;
  for (int i = 0; i < 1000; ++i) thousand += "x\n";
  const std::string numbered = numberedSource(thousand);
  CHECK(numbered.rfind("   1 | x\n", 0) == 0);
  CHECK(contains(numbered, "\n  99 | x\n"));
  CHECK(contains(numbered, "\n1000 | x\n"));
}

TEST_CASE("nvrtcVersion is encoded like CUDA_VERSION") {
  const int version = obsidian::nvrtcVersion();
  CHECK(version >= 11000);
  CHECK(version % 10 == 0);
}
