// Whole-array programs exported as a standalone CUDA header (array::Plan::exportHeader): the
// host function's parameters, one launcher call per kernel, the intermediates' cudaMallocAsync /
// cudaFreeAsync, the extent checks, and the errors. Planned for a GPU target built by hand, so
// no GPU is needed (tests/array_export compiles such headers with nvcc and calls them).
#include <doctest/doctest.h>

#include <obsidian/array.hpp>
#include <set>

#include "../support.hpp"

using namespace obsidian;
using namespace obsidian::array;
using ::testing::errorOf;

namespace {

PlanOptions gpuOptions() {
  PlanOptions o;
  o.target = device::Target{true, 90, 132};
  return o;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The host function of `header`: from its signature to the end of the header.
std::string hostFunction(const std::string& header, const std::string& function) {
  const size_t at = header.find("inline cudaError_t " + function + "(");
  REQUIRE(at != std::string::npos);
  return header.substr(at);
}

// Each kernel's launcher is called once by the host function, in launch order; each
// intermediate (obsidian_tN) is allocated once and freed on both paths.
void checkCalls(const Plan& plan, const std::string& body) {
  size_t last = 0;
  for (const Kernel& k : plan.kernels()) {
    INFO("kernel " << k.name());
    CHECK(occurrences(body, k.name() + "_launch(") == 1);
    const size_t at = body.find(k.name() + "_launch(");
    CHECK(at > last);
    last = at;
  }
  std::set<std::string> temps;
  // every "obsidian_t<digits>" of the body (no <regex>: GCC 12's warns under the sanitizers)
  for (size_t at = body.find("obsidian_t"); at != std::string::npos;
       at = body.find("obsidian_t", at + 1)) {
    size_t end = at + 10;
    while (end < body.size() && body[end] >= '0' && body[end] <= '9') ++end;
    if (end > at + 10) temps.insert(body.substr(at, end - at));
  }
  CHECK(occurrences(body, "cudaMallocAsync(") == temps.size());
  for (const std::string& t : temps) {
    INFO("intermediate " << t);
    CHECK(occurrences(body, "cudaMallocAsync((void**)&" + t + ",") == 1);
    CHECK(occurrences(body, "cudaFreeAsync(" + t + ", stream)") == 2);  // last use, error path
  }
}

}  // namespace

TEST_CASE("array export: AXPYDOT as one host function") {
  const auto w = vectorInput<float>("w"), v = vectorInput<float>("v"), u = vectorInput<float>("u");
  const auto z = w - 0.75f * v;
  const Plan plan({{"z", z}, {"r", dot(z, u)}}, gpuOptions());
  const std::string header = plan.exportHeader("axpydot", "app::blas");
  const std::string body = hostFunction(header, "axpydot");
  // Inputs, then outputs, each in name order.
  CHECK(body.starts_with(
      "inline cudaError_t axpydot(const float* u, size_t uLen, const float* v, size_t vLen, const "
      "float* w, size_t wLen, float* r, size_t rLen, float* z, size_t zLen, cudaStream_t stream "
      "= 0) {"));
  CHECK(header.find("namespace app::blas {") != std::string::npos);
  checkCalls(plan, body);
  // u, v and w have one length (one defines the extent, the others are compared with it); z
  // holds it and r one element.
  CHECK(occurrences(body, "Len != obsidian_dim0) return cudaErrorInvalidValue;") == 2);
  CHECK(body.find("if ((uint64_t)zLen < obsidian_dim") != std::string::npos);
  CHECK(body.find("if ((uint64_t)rLen < 1ull) return cudaErrorInvalidValue;") != std::string::npos);
  CHECK(body.find("if (u == nullptr && uLen > 0) return cudaErrorInvalidValue;") !=
        std::string::npos);
  CHECK(body.find("cudaDeviceGetAttribute") == std::string::npos);  // no column pass
  // Deterministic: the same plan exports the same text.
  CHECK(Plan({{"z", z}, {"r", dot(z, u)}}, gpuOptions()).exportHeader("axpydot", "app::blas") ==
        header);
}

TEST_CASE("array export: GEMVER's matrix, column and row passes") {
  const auto A = matrixInput<float>("A");
  const auto u1 = vectorInput<float>("u1"), v1 = vectorInput<float>("v1"),
             y = vectorInput<float>("y"), z = vectorInput<float>("z");
  const auto B = A + outer(u1, v1);
  const auto x = gemvT(B, y) + z;
  const auto w = gemv(B, x);
  const Plan plan({{"x", x}, {"w", w}}, gpuOptions());
  REQUIRE(plan.kernelCount() >= 2);
  const std::string body = hostFunction(plan.exportHeader("gemver", "app"), "gemver");
  CHECK(body.starts_with(
      "inline cudaError_t gemver(const float* A, uint32_t ARows, uint32_t ACols, uint32_t APitch, "
      "const float* u1, size_t u1Len, const float* v1, size_t v1Len, const float* y, size_t yLen, "
      "const float* z, size_t zLen, float* w, size_t wLen, float* x, size_t xLen, cudaStream_t "
      "stream = 0) {"));
  checkCalls(plan, body);
  CHECK(occurrences(body, "cudaMallocAsync(") >= 1);  // the column pass's partials at least
  // The matrix's checks, its extents tied to the vectors', and the bands by the SM count.
  CHECK(body.find("if (APitch < ACols) return cudaErrorInvalidValue;") != std::string::npos);
  CHECK(body.find("if ((uint64_t)ARows * APitch > 0xffffffffull) return cudaErrorInvalidValue;") !=
        std::string::npos);
  CHECK(body.find("(uint64_t)u1Len != obsidian_dim") != std::string::npos);
  CHECK(body.find("(uint64_t)v1Len != obsidian_dim") != std::string::npos);
  CHECK(body.find("cudaDevAttrMultiProcessorCount") != std::string::npos);
  CHECK(body.find("(size_t)ARows * APitch, ARows, ACols, APitch") != std::string::npos);

  SUBCASE("PlanOptions::band fixes the bands") {
    PlanOptions o = gpuOptions();
    o.band = 64;
    const Plan banded({{"x", x}, {"w", w}}, o);
    const std::string text = hostFunction(banded.exportHeader("gemver", "app"), "gemver");
    CHECK(text.find("cudaDeviceGetAttribute") == std::string::npos);
    CHECK(text.find(" = 64u;  // ") != std::string::npos);
  }
}

TEST_CASE("array export: CSR SpMV (segments: the offsets' length less one) and a scan") {
  const auto values = vectorInput<float>("values"), x = vectorInput<float>("x"),
             y = vectorInput<float>("y");
  const auto columns = vectorInput<uint32_t>("columns"), offsets = vectorInput<uint32_t>("offsets");
  const Plan spmvPlan({{"out", 2.0f * spmv(values, columns, offsets, x) - y}}, gpuOptions());
  const std::string body = hostFunction(spmvPlan.exportHeader("spmv", "app"), "spmv");
  CHECK(body.starts_with(
      "inline cudaError_t spmv(const uint32_t* columns, size_t columnsLen, const uint32_t* "
      "offsets, size_t offsetsLen, const float* values, size_t valuesLen, const float* x, size_t "
      "xLen, const float* y, size_t yLen, float* out, size_t outLen, cudaStream_t stream = 0) {"));
  checkCalls(spmvPlan, body);
  // The segments are len(offsets) - 1, which y must match: offsets may not be empty.
  CHECK(body.find("< 1ull) return cudaErrorInvalidValue;") != std::string::npos);
  CHECK(body.find(" - 1ull;") != std::string::npos);

  const auto v = vectorInput<uint32_t>("v");
  const auto s = scalarInput<uint32_t>("s");
  const Plan scanPlan({{"inc", inclusiveScan(Sum{}, v * s)}, {"total", sum(v)}}, gpuOptions());
  const std::string scan = hostFunction(scanPlan.exportHeader("scan", "app"), "scan");
  CHECK(scan.starts_with(
      "inline cudaError_t scan(uint32_t s, const uint32_t* v, size_t vLen, uint32_t* inc, size_t "
      "incLen, uint32_t* total, size_t totalLen, cudaStream_t stream = 0) {"));
  checkCalls(scanPlan, scan);
}

TEST_CASE("array export: errors") {
  const auto a = vectorInput<float>("a");
  const Plan sim({{"b", 2.0f * a}});  // the simulator, PlanOptions' default
  CHECK(errorOf([&] { (void)sim.exportHeader("f", "app"); }) ==
        "array::Plan::exportHeader: the plan targets the simulator; plan with "
        "PlanOptions::target = device::Target::onGpu() or a GPU Target");
  const Plan gpu({{"b", 2.0f * a}}, gpuOptions());
  CHECK(errorOf([&] { (void)gpu.exportHeader("2fast", "app"); }) ==
        "array::Plan::exportHeader: function name '2fast' is not a C identifier (letters, "
        "digits, _)");
  CHECK(errorOf([&] {
          (void)gpu.exportHeader("float", "app");
        }).starts_with("array::Plan::exportHeader: function name 'float' is a C++ keyword"));
  CHECK(errorOf([&] {
          (void)gpu.exportHeader(gpu.kernels().front().name() + "_launch", "app");
        }).find("is the name of one of the plan's kernels") != std::string::npos);
  CHECK(errorOf([&] { (void)gpu.exportHeader("f", ""); }) ==
        "export: ExportOptions::ns (the namespace) is required");
  // A parameter named like another's length.
  const auto aLen = scalarInput<float>("aLen");
  const Plan clash({{"b", aLen * a}}, gpuOptions());
  CHECK(errorOf([&] { (void)clash.exportHeader("f", "app"); }) ==
        "array::Plan::exportHeader: the host function's parameters 'aLen' (the length of input a) "
        "and 'aLen' (input aLen) have one name; rename an input or output");
}
