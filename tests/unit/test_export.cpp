// Export: the standalone header's launcher checks what obsidian's launch checks, the names
// live in the chosen namespace, and mistakes in the export request are clear errors.
#include <doctest/doctest.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <obsidian/obsidian.hpp>
#include <obsidian/report_json.hpp>

#include "../../examples/reduce/reduce.hpp"
#include "../../examples/scan/scan.hpp"
#include "../support.hpp"

using namespace obsidian;
using ::testing::has;

TEST_CASE("export: a header with a typed launcher that checks the launch") {
  const Kernel k = paper::red3Kernel(512, 256);
  const std::string h = exportHeader({k}, ExportOptions{"app::kernels", ""});
  CHECK(has(h, "namespace app::kernels {"));
  CHECK(has(h,
            "static __global__ void __launch_bounds__(256) red3(const uint32_t* __restrict__ in0, "
            "uint32_t n0, "
            "uint32_t* __restrict__ out0)"));
  CHECK_FALSE(has(h, "extern \"C\""));
  CHECK(has(h,
            "inline cudaError_t red3_launch(const uint32_t* in0, size_t in0Count, uint32_t* out0, "
            "size_t out0Count, cudaStream_t stream = 0)"));
  CHECK(has(h,
            "  if (!(n0 % 512u == 0u)) {\n#ifdef OBSIDIAN_CHECKED\n    std::fprintf(stderr, "
            "\"obsidian: kernel red3: precondition failed: %s\\n\", \"splitUp(512) needs a "
            "length divisible by 512\");\n#endif\n    return cudaErrorInvalidValue;\n  }\n"));
  CHECK(has(h,
            "if ((unsigned long long)out0Count < (unsigned long long)(n0 / 512u)) return "
            "cudaErrorInvalidValue;"));
  CHECK(has(h, "if (in0 == nullptr && in0Count > 0) return cudaErrorInvalidValue;"));
  CHECK(has(h, "::app::kernels::red3<<<obsidian_blocks, 256, 1536, stream>>>(in0, n0, out0);"));
  CHECK_FALSE(has(h, "cudaFuncSetAttribute"));  // 1536 bytes need no opt-in
}

TEST_CASE("export: more than 48 KB of shared memory raises the limit in the launcher") {
  const Kernel k = capture("bigBlock", 1024, [](DPull<EWord32> in) {
    return pConcat(fmap(
        [](const SPull<EWord32>& c) {
          return exec<Block>([c](const Program<Block>& p) { return push<Block>(forcePull(p, c)); });
        },
        splitUp(16384, in)));
  });
  const std::string h = exportHeader({k}, ExportOptions{"big", ""});
  CHECK(has(h,
            "cudaFuncSetAttribute(::big::bigBlock, cudaFuncAttributeMaxDynamicSharedMemorySize, "
            "65536)"));
}

TEST_CASE("export: the reduce pipeline is one host function") {
  const Kernel part = paper::partialSums(4096, 256, 8);
  const std::string host = exportReducePipeline(part, 4096, "sum");
  CHECK(has(host,
            "inline cudaError_t sum(const uint32_t* in, size_t n, uint32_t* result, cudaStream_t "
            "stream = 0)"));
  CHECK(has(host, "partialReduce_launch(src, count, dst, next, stream)"));
  CHECK_THROWS_WITH_AS(exportReducePipeline(part, 1, "sum"),
                       "exportReducePipeline: chunk must be at least 2 (each level must shrink); "
                       "got 1",
                       Error);
  CHECK_THROWS_WITH_AS(exportReducePipeline(part, 1024, "sum"),
                       "exportReducePipeline: kernel partialReduce does not reduce chunks of 1024 "
                       "elements to one block each",
                       Error);
  const Kernel twoOut = capture("twoOut", 32, [](DPull<EWord32> in) {
    return hana::make_tuple(push<Grid>(in), push<Grid>(in));
  });
  CHECK_THROWS_WITH_AS(exportReducePipeline(twoOut, 4, "f"),
                       "exportReducePipeline: kernel twoOut must take arrays (input, output) of "
                       "one element type",
                       Error);
}

TEST_CASE("export: namespaces that are not usable") {
  // Each part follows the rule for kernel names; the outermost may not be the standard's.
  const Kernel k = paper::red3Kernel();
  const std::pair<const char*, const char*> cases[] = {
      {"int", "'int' is a C++ keyword"},
      {"namespace", "'namespace' is a C++ keyword"},
      {"app::int", "'int' is a C++ keyword"},
      {"std",
       "'std' is reserved for the C++ standard library (std, std followed by digits, posix)"},
      {"std::kernels",
       "'std' is reserved for the C++ standard library (std, std followed by digits, posix)"},
      {"std2",
       "'std2' is reserved for the C++ standard library (std, std followed by digits, "
       "posix)"},
      {"posix::app",
       "'posix' is reserved for the C++ standard library (std, std followed by digits, posix)"},
      {"a::", "it has an empty part (parts are separated by a single ::)"},
      {"a::::b", "it has an empty part (parts are separated by a single ::)"},
      {"::::b",
       "it starts with :: (give it without the global prefix: the header declares it at "
       "global scope)"},
      {"::app",
       "it starts with :: (give it without the global prefix: the header declares it at "
       "global scope)"},
      {"my-app", "'my-app' is not a C identifier (letters, digits, _)"},
      {"app:kernels", "'app:kernels' is not a C identifier (letters, digits, _)"},
      {"app::__impl", "'__impl' is reserved for the implementation (it contains __)"},
      {"app::_Impl",
       "'_Impl' is reserved for the implementation (it starts with _ and a capital "
       "letter)"},
      {"kernels::sqrtf", "'sqrtf' is a name the generated code uses"},
      {"cuda::app", "'cuda' is a CUDA runtime name (cuda* and CU* names are CUDA's)"},
  };
  for (const auto& [ns, why] : cases) {
    CHECK_THROWS_WITH_AS(
        exportHeader({k}, ExportOptions{ns, ""}),
        ("export: namespace '" + std::string(ns) + "' is not usable: " + why).c_str(), Error);
  }
  for (const char* ns : {"app", "app::kernels", "obs_1", "app::v2::detail", "standard"}) {
    CHECK(has(exportHeader({k}, ExportOptions{ns, ""}), "namespace " + std::string(ns) + " {"));
  }
}

TEST_CASE("export: mistakes in the request") {
  const Kernel k = paper::red3Kernel();
  CHECK_THROWS_WITH_AS(exportHeader({k}, ExportOptions{"", ""}),
                       "export: ExportOptions::ns (the namespace) is required", Error);
  CHECK_THROWS_WITH_AS(exportHeader({k, paper::red3Kernel(1024, 128)}, ExportOptions{"a", ""}),
                       "export: two kernels are named red3; give them distinct names", Error);
  CHECK_THROWS_WITH_AS(exportHeader({}, ExportOptions{"a", ""}), "export: no kernel to export",
                       Error);
  // Kernels named like another kernel's launcher or grid state would declare a name twice.
  const Kernel launcherNamed =
      capture("red3_launch", 32, [](DPull<EWord32> in) { return push<Grid>(in); });
  CHECK_THROWS_WITH_AS(exportHeader({k, launcherNamed}, ExportOptions{"a", ""}),
                       "export: kernel red3_launch is named like a declaration of kernel red3 "
                       "(its launcher or grid state); give it another name",
                       Error);
  const Kernel withState = reduceKernel<uint32_t>(
      [](const EWord32& a, const EWord32& b) { return a + b; }, 0u, ReducePolicy{64, 4, 4}, 4);
  std::string state;
  for (const ArrayDecl& a : withState.ir().arrays) {
    if (a.space == MemorySpace::GridState) state = a.name;
  }
  REQUIRE(state.starts_with("reduceAll_state"));
  const Kernel stateNamed = capture(state, 32, [](DPull<EWord32> in) { return push<Grid>(in); });
  CHECK_THROWS_WITH_AS(exportHeader({stateNamed, withState}, ExportOptions{"a", ""}),
                       ("export: kernel " + state +
                        " is named like a declaration of kernel reduceAll (its launcher or grid "
                        "state); give it another name")
                           .c_str(),
                       Error);
  // A pipeline's function name follows the rule for kernel names.
  const Kernel part = paper::partialSums(4096, 256, 8);
  CHECK_THROWS_WITH_AS(exportReducePipeline(part, 4096, "int"),
                       "exportReducePipeline: function name 'int' is a C++ keyword; choose "
                       "another name",
                       Error);
  CHECK_THROWS_WITH_AS(exportReducePipeline(part, 4096, "sum-all"),
                       "exportReducePipeline: function name 'sum-all' is not a C identifier "
                       "(letters, digits, _)",
                       Error);
  const LargeScan scan =
      largeScanKernels<uint32_t>(BlockScanAlgorithm::Sklansky2, 1u << 10, 256, paper::plus, 0u);
  CHECK_THROWS_WITH_AS(
      exportScanPipeline(scan.inclusive, scan.exclusive, scan.addBack, scan.chunk, "cudaScan"),
      "exportScanPipeline: function name 'cudaScan' is a CUDA runtime name (cuda* and CU* names "
      "are "
      "CUDA's); choose another name",
      Error);
}

TEST_CASE("export: PTX, CUBIN and a JSON sidecar") {
  const auto dir = std::filesystem::temp_directory_path() / "obsidian-export-test";
  std::filesystem::remove_all(dir);
  const ExportedBinary b = exportBinary(paper::red3Kernel(), dir);
  std::ifstream json(b.json);
  const nlohmann::json j = nlohmann::json::parse(json);
  CHECK(j["entry"] == "red3");
  CHECK(j["threadsPerBlock"] == 256);
  CHECK(j["sharedBytes"] == 1536);
  CHECK(j["params"].size() == 3);
  CHECK(std::filesystem::file_size(b.cubin) > 0);
  std::ifstream ptx(b.ptx);
  const std::string text((std::istreambuf_iterator<char>(ptx)), std::istreambuf_iterator<char>());
  CHECK(has(text, ".entry red3"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("export: text that is not UTF-8 is written as UTF-8 (issue 40)") {
  // A require message in Latin-1 ("caf\xe9") and a Latin-1 NVRTC define: the sidecar is valid
  // JSON whose strings hold U+FFFD where the bytes were not UTF-8; the report's JSON dumps.
  const Kernel k = capture("latin1", 32,
                           [](DPull<EWord32> x) {
                             require(len(x) > 0u, "caf\xe9 au lait");
                             return push<Grid>(x);
                           },
                           {.nvrtcOptions = {"-DNOTE=caf\xc9"}});
  const auto dir = std::filesystem::temp_directory_path() / "obsidian-export-latin1";
  std::filesystem::remove_all(dir);
  const ExportedBinary b = exportBinary(k, dir);
  std::ifstream json(b.json);
  const nlohmann::json j = nlohmann::json::parse(json);
  CHECK(j["preconditions"][0]["message"] == "caf\xef\xbf\xbd au lait");
  CHECK(j["options"].back() == "-DNOTE=caf\xef\xbf\xbd");
  CHECK(toJson(k.report()).dump().find("caf\xef\xbf\xbd au lait") != std::string::npos);
  // Valid UTF-8 is kept as it is; truncated and overlong sequences are replaced byte by byte.
  CHECK(detail::utf8Text("na\xc3\xafve \xe2\x82\xac \xf0\x9f\x99\x82") ==
        "na\xc3\xafve \xe2\x82\xac \xf0\x9f\x99\x82");
  CHECK(detail::utf8Text("\xc0\xaf|\xe2\x82|\xed\xa0\x80") ==
        "\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  std::filesystem::remove_all(dir);
}

namespace {

// A fresh directory under the system temp directory, removed with its contents at the end.
struct ScratchDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("obsidian-export-errors-" + std::to_string(::getpid()));
  ScratchDir() {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code error;
    std::filesystem::permissions(path / "read-only", std::filesystem::perms::owner_all, error);
    std::filesystem::remove_all(path, error);
  }
};

// The message of the Error that f throws, run as an unprivileged user when this process is
// root (root ignores permissions); "skipped: ..." when that cannot be arranged.
std::string errorOfUnprivileged(const std::function<void()>& f) {
  if (::geteuid() != 0) return ::testing::errorOf(f);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // no doctest here: the message goes back through the pipe
    ::close(fds[0]);
    std::string message = "skipped: cannot drop root privileges";
    if (::setgid(65534) == 0 && ::setuid(65534) == 0) message = ::testing::errorOf(f);
    const ssize_t written = ::write(fds[1], message.data(), message.size());
    ::_exit(written == static_cast<ssize_t>(message.size()) ? 0 : 1);
  }
  ::close(fds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, n);
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  return message;
}

}  // namespace

TEST_CASE("export: files that cannot be written throw Error with the path and the reason") {
  namespace fs = std::filesystem;
  const ScratchDir scratch;
  const Kernel k = paper::red3Kernel();
  const ExportOptions options{"app", ""};
  const fs::path file = scratch.path / "a-regular-file";
  std::ofstream(file) << "not a directory\n";

  SUBCASE("under a regular file") {
    CHECK(::testing::errorOf([&] { writeHeader(file / "red3.cuh", {k}, options); }) ==
          "export: cannot create the directory " + file.string() + ": Not a directory");
    CHECK(::testing::errorOf([&] { writeHeader(file / "sub" / "red3.cuh", {k}, options); }) ==
          "export: cannot create the directory " + (file / "sub").string() + ": Not a directory");
    CHECK(::testing::errorOf([&] { exportBinary(k, file / "bin"); }) ==
          "export: cannot create the directory " + (file / "bin").string() + ": Not a directory");
  }
  SUBCASE("an existing directory") {
    CHECK(::testing::errorOf([&] { writeHeader(scratch.path, {k}, options); }) ==
          "export: cannot write " + scratch.path.string() + ": Is a directory");
    fs::create_directories(scratch.path / "bin" / "red3.ptx");
    CHECK(::testing::errorOf([&] { exportBinary(k, scratch.path / "bin"); }) ==
          "export: cannot write " + (scratch.path / "bin" / "red3.ptx").string() +
              ": Is a directory");
  }
  SUBCASE("a name longer than NAME_MAX") {
    const fs::path path = scratch.path / (std::string(NAME_MAX + 1, 'k') + ".cuh");
    CHECK(::testing::errorOf([&] { writeHeader(path, {k}, options); }) ==
          "export: cannot write " + path.string() + ": File name too long");
  }
  SUBCASE("a read-only directory") {
    const fs::path dir = scratch.path / "read-only";
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                             fs::perms::group_exec | fs::perms::others_read |
                             fs::perms::others_exec);
    const std::string message =
        errorOfUnprivileged([&] { writeHeader(dir / "red3.cuh", {k}, options); });
    if (message.starts_with("skipped: ")) {
      MESSAGE("read-only directory case " << message);
    } else {
      CHECK(message ==
            "export: cannot write " + (dir / "red3.cuh").string() + ": Permission denied");
    }
  }
  SUBCASE("and where it can be written, it is") {
    writeHeader(scratch.path / "new" / "red3.cuh", {k}, options);
    std::ifstream in(scratch.path / "new" / "red3.cuh");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == exportHeader({k}, options));
  }
}

TEST_CASE(
    "export: half precision kernels use CUDA's types; launch-time half arithmetic is refused") {
  // A Half parameter and arrays: under nvcc the header's obsidian_half is CUDA's __half.
  const Kernel scaled = capture("scaled", 64, [](DPull<EHalf> in, EHalf s) {
    return push<Grid>(fmap([s](const EHalf& x) { return x * s; }, in));
  });
  const std::string h = exportHeader({scaled}, ExportOptions{"halves", ""});
  CHECK(has(h, "typedef __half obsidian_half;"));
  CHECK(has(h, "#include <cuda_fp16.h>"));
  CHECK(has(h, "scaled_launch(const obsidian_half* in0, size_t in0Count, obsidian_half s1"));
  // An output whose length is a Half parameter: the launcher would compute it on the host.
  const Kernel sized = capture("sized", 64, [](DPull<EWord32> in, EHalf n) {
    const EWord32 m = min(cast<uint32_t>(n), len(in));
    return push<Grid>(mkPull(m, [in](const EWord32& i) { return in[i]; }));
  });
  CHECK(::testing::errorOf([&] {
          exportHeader({sized}, ExportOptions{"halves", ""});
        }) ==
        "export: a launch-time expression converts obsidian_half to float: half precision and "
        "fp8 values are computed on the GPU only");
  // The library launches it (the simulator here): its lengths are evaluated as the GPU would.
  const std::vector<uint32_t> in = {1, 2, 3, 4, 5};
  std::vector<uint32_t> out(3);
  simulate(sized, {in, Half(3.75f), out});
  CHECK(out == std::vector<uint32_t>{1, 2, 3});
}
