// Tests for the kernel cache: keys, the memory and disk layers, corrupt entries, concurrent
// writers (threads and processes) and unwritable directories. No GPU needed.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <iterator>
#include <latch>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "obsidian/cache.hpp"
#include "obsidian/error.hpp"
#include "obsidian/nvrtc.hpp"

namespace fs = std::filesystem;
using obsidian::CompileError;
using obsidian::CompileOptions;
using obsidian::CompileResult;
using obsidian::KernelCache;

namespace {

const char* const kAddKernel = R"(extern "C" __global__ void add_one(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}
)";

const char* const kScaleKernel = R"(extern "C" __global__ void scale(float* data, float factor) {
  data[blockIdx.x * blockDim.x + threadIdx.x] *= factor;
}
)";

const char* const kTwoKernels = R"(extern "C" __global__ void small(int* d) { d[threadIdx.x] = 1; }
extern "C" __global__ void big(float* d, float a, float b, float c) {
  float x = d[threadIdx.x];
  for (int i = 0; i < 16; ++i) x = x * a + b / (x + c);
  d[threadIdx.x] = x;
}
)";

// A fresh directory under the system temp directory, removed (with its contents) at the end.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ =
        fs::temp_directory_path() / ("obsidian-cache-test-" + std::to_string(::getpid()) + "-" +
                                     std::to_string(counter++) + "-" + std::to_string(std::rand()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code error;
    fs::remove_all(path_, error);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Captures what is written to std::cerr while alive.
class CerrCapture {
 public:
  CerrCapture() : old_(std::cerr.rdbuf(buffer_.rdbuf())) {}
  ~CerrCapture() { std::cerr.rdbuf(old_); }
  CerrCapture(const CerrCapture&) = delete;
  CerrCapture& operator=(const CerrCapture&) = delete;
  std::string text() const { return buffer_.str(); }

 private:
  std::ostringstream buffer_;
  std::streambuf* old_;
};

size_t countOf(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

// Reference FNV-1a 64, written independently of the library's.
uint64_t referenceFnv(const std::string& bytes, uint64_t hash = 0xcbf29ce484222325ULL) {
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// The documented key: FNV-1a 64 over netstrings of the format tag, NVRTC version, arch, option
// count, options and source.
std::string referenceKey(const std::string& source, const CompileOptions& options) {
  std::vector<std::string> fields = {"obsidian-kernel-cache/2",
                                     std::to_string(obsidian::nvrtcVersion()), options.arch,
                                     std::to_string(options.extraOptions.size())};
  fields.insert(fields.end(), options.extraOptions.begin(), options.extraOptions.end());
  fields.push_back(source);
  std::string stream;
  for (const std::string& field : fields)
    stream += std::to_string(field.size()) + ":" + field + ",";
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(referenceFnv(stream)));
  return text;
}

// The documented checksum: FNV-1a 64 over the compact header line without its checksum field,
// then the payload (cubin then ptx).
std::string referenceChecksum(nlohmann::ordered_json header, const std::string& payload) {
  header.erase("checksum");
  char text[17];
  std::snprintf(
      text, sizeof text, "%016llx",
      static_cast<unsigned long long>(referenceFnv(payload, referenceFnv(header.dump()))));
  return text;
}

std::vector<std::string> fileNames(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void writeFile(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

bool isElf(const CompileResult& result) {
  return result.cubin.size() > 4 && std::string(result.cubin.begin(), result.cubin.begin() + 4) ==
                                        "\x7f"
                                        "ELF";
}

void checkSameKernel(const CompileResult& a, const CompileResult& b) {
  CHECK(a.cubin == b.cubin);
  CHECK(a.ptx == b.ptx);
  CHECK(a.options == b.options);
  CHECK(a.registers == b.registers);
  CHECK(a.spillStoreBytes == b.spillStoreBytes);
  CHECK(a.spillLoadBytes == b.spillLoadBytes);
  CHECK(a.stackBytes == b.stackBytes);
  CHECK(a.staticSharedBytes == b.staticSharedBytes);
}

// A fresh cache on `dir` must load the entry from disk, without compiling.
void checkDiskHit(const fs::path& dir, const std::string& source, const std::string& kernel,
                  const CompileResult& expected) {
  KernelCache fresh(dir);
  const CompileResult loaded = fresh.get(source, kernel);
  checkSameKernel(loaded, expected);
  const KernelCache::Stats stats = fresh.stats();
  CHECK(stats.diskHits == 1);
  CHECK(stats.misses == 0);
  CHECK(stats.corrupt == 0);
}

}  // namespace

TEST_CASE("cache: reference FNV-1a 64 matches the published test vectors") {
  CHECK(referenceFnv("") == 0xcbf29ce484222325ULL);
  CHECK(referenceFnv("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(referenceFnv("foobar") == 0x85944171f73967e8ULL);
}

TEST_CASE("cache: key is stable and covers source, arch, options and their order") {
  const std::string source = "extern \"C\" __global__ void k(int* p) { *p = 1; }\n";
  const CompileOptions defaults;
  CompileOptions withOptions;
  withOptions.extraOptions = {"-DA=1", "--use_fast_math"};

  const std::string key = KernelCache::key(source, defaults);
  CHECK(key.size() == 16);
  CHECK(key.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(KernelCache::key(source, defaults) == key);
  CHECK(KernelCache::key(std::string(source), CompileOptions{}) == key);
  // Golden value: the documented hash, computed by an independent implementation. The NVRTC
  // version is an input, so the literal stream is built here rather than hard-coded.
  CHECK(key == referenceKey(source, defaults));
  CHECK(KernelCache::key(source, withOptions) == referenceKey(source, withOptions));

  std::string otherSource = source;
  otherSource[otherSource.find('1')] = '2';
  CHECK(KernelCache::key(otherSource, defaults) != key);
  CHECK(KernelCache::key(source + " ", defaults) != key);

  CompileOptions sm80;
  sm80.arch = "sm_80";
  CHECK(KernelCache::key(source, sm80) != key);
  CompileOptions compute90;
  compute90.arch = "compute_90";
  CHECK(KernelCache::key(source, compute90) != key);

  CHECK(KernelCache::key(source, withOptions) != key);
  CompileOptions reversed;
  reversed.extraOptions = {"--use_fast_math", "-DA=1"};
  CHECK(KernelCache::key(source, reversed) != KernelCache::key(source, withOptions));

  // Field boundaries are unambiguous.
  CompileOptions ab_c;
  ab_c.extraOptions = {"ab", "c"};
  CompileOptions a_bc;
  a_bc.extraOptions = {"a", "bc"};
  CHECK(KernelCache::key(source, ab_c) != KernelCache::key(source, a_bc));
  CompileOptions joined;
  joined.extraOptions = {"-DA=1 --use_fast_math"};
  CHECK(KernelCache::key(source, joined) != KernelCache::key(source, withOptions));
  CompileOptions x;
  x.extraOptions = {"x"};
  CHECK(KernelCache::key("y", x) != KernelCache::key("xy", defaults));
  CHECK(KernelCache::key("xy", defaults) != KernelCache::key("y", CompileOptions{"sm_90x", {}}));

  KernelCache cache("/some/dir");
  CHECK(cache.directory() == fs::path("/some/dir"));
  CHECK(cache.pathFor(key) == fs::path("/some/dir") / (key + ".obsk"));
}

TEST_CASE("cache: miss, then memory hit, then disk hit with identical results") {
  TempDir temp;
  const fs::path dir = temp.path() / "nested" / "cache";  // created on first write
  KernelCache cache(dir);
  const std::string key = KernelCache::key(kAddKernel, {});
  CHECK_FALSE(fs::exists(dir));

  const CompileResult compiled = cache.get(kAddKernel, "add_one");
  REQUIRE(isElf(compiled));
  CHECK(compiled.registers > 0);
  CHECK(compiled.seconds > 0);
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().memoryHits == 0);
  CHECK(cache.stats().diskHits == 0);
  REQUIRE(fs::is_regular_file(cache.pathFor(key)));
  CHECK(fileNames(dir) == std::vector<std::string>{key + ".obsk"});

  const CompileResult fromMemory = cache.get(kAddKernel, "add_one");
  checkSameKernel(fromMemory, compiled);
  CHECK(fromMemory.log == compiled.log);
  CHECK(cache.stats().memoryHits == 1);
  CHECK(cache.stats().misses == 1);

  cache.clearMemory();
  const CompileResult fromDisk = cache.get(kAddKernel, "add_one");
  checkSameKernel(fromDisk, compiled);
  CHECK(fromDisk.seconds == compiled.seconds);  // the original compile time
  CHECK(fromDisk.log.empty());
  CHECK(cache.stats().diskHits == 1);
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().corrupt == 0);
  // ... and the disk hit is in memory now.
  cache.get(kAddKernel, "add_one");
  CHECK(cache.stats().memoryHits == 2);

  checkDiskHit(dir, kAddKernel, "add_one", compiled);

  // The file: a JSON header line, then the cubin, then the ptx.
  const std::string bytes = readFile(cache.pathFor(key));
  const size_t newline = bytes.find('\n');
  REQUIRE(newline != std::string::npos);
  const auto header = nlohmann::ordered_json::parse(bytes.substr(0, newline));
  CHECK(header.at("magic") == "obsidian-kernel-cache");
  CHECK(header.at("version") == 2);
  CHECK(header.at("key") == key);
  CHECK(header.at("kernel") == "add_one");
  CHECK(header.at("arch") == "sm_90");
  CHECK(header.at("options").get<std::vector<std::string>>() == compiled.options);
  CHECK(header.at("registers") == compiled.registers);
  CHECK(header.at("cubinBytes") == compiled.cubin.size());
  CHECK(header.at("ptxBytes") == compiled.ptx.size());
  CHECK(header.at("checksum") == referenceChecksum(header, bytes.substr(newline + 1)));
  CHECK(bytes.size() == newline + 1 + compiled.cubin.size() + compiled.ptx.size());
  CHECK(bytes.compare(newline + 1, compiled.cubin.size(),
                      std::string(compiled.cubin.begin(), compiled.cubin.end())) == 0);
  CHECK(bytes.substr(newline + 1 + compiled.cubin.size()) == compiled.ptx);
}

TEST_CASE("cache: memory-only cache never touches the disk") {
  KernelCache cache{fs::path()};
  CHECK(cache.directory().empty());
  const CompileResult first = cache.get(kAddKernel, "add_one");
  const CompileResult second = cache.get(kAddKernel, "add_one");
  checkSameKernel(first, second);
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().memoryHits == 1);
  cache.clearMemory();
  cache.get(kAddKernel, "add_one");
  CHECK(cache.stats().misses == 2);
  CHECK(cache.stats().diskHits == 0);
}

TEST_CASE("cache: options and arch select different entries") {
  TempDir temp;
  KernelCache cache(temp.path());
  CompileOptions sm80;
  sm80.arch = "sm_80";
  CompileOptions fast;
  fast.extraOptions = {"--use_fast_math"};
  const CompileResult a = cache.get(kScaleKernel, "scale");
  const CompileResult b = cache.get(kScaleKernel, "scale", sm80);
  const CompileResult c = cache.get(kScaleKernel, "scale", fast);
  CHECK(cache.stats().misses == 3);
  CHECK(a.ptx.find(".target sm_90") != std::string::npos);
  CHECK(b.ptx.find(".target sm_80") != std::string::npos);
  CHECK(c.options.back() == "--use_fast_math");
  CHECK(fileNames(temp.path()).size() == 3);
  cache.clearMemory();
  checkSameKernel(cache.get(kScaleKernel, "scale", sm80), b);
  checkSameKernel(cache.get(kScaleKernel, "scale", fast), c);
  CHECK(cache.stats().diskHits == 2);
}

TEST_CASE("cache: entries appear only under their final names") {
  TempDir temp;
  KernelCache cache(temp.path());
  cache.get(kAddKernel, "add_one");
  cache.get(kScaleKernel, "scale");
  cache.get(kTwoKernels, "big");
  std::vector<std::string> expected = {KernelCache::key(kAddKernel, {}) + ".obsk",
                                       KernelCache::key(kScaleKernel, {}) + ".obsk",
                                       KernelCache::key(kTwoKernels, {}) + ".obsk"};
  std::sort(expected.begin(), expected.end());
  CHECK(fileNames(temp.path()) == expected);  // no temp files left behind
}

TEST_CASE("cache: a CompileError propagates and nothing is cached") {
  TempDir temp;
  KernelCache cache(temp.path());
  const std::string bad = "extern \"C\" __global__ void broken(int* p) { *p = undeclared; }\n";
  CHECK_THROWS_AS(cache.get(bad, "broken"), CompileError);
  CHECK_THROWS_AS(cache.get(bad, "broken"), CompileError);  // not remembered as in flight
  CHECK(fileNames(temp.path()).empty());
  CHECK(cache.stats().misses == 0);
  CHECK(cache.stats().memoryHits == 0);
}

TEST_CASE("cache: one source with two kernels keeps each kernel's ptxas figures") {
  TempDir temp;
  KernelCache cache(temp.path());
  const CompileResult big = cache.get(kTwoKernels, "big");
  const CompileResult small = cache.get(kTwoKernels, "small");
  CHECK(cache.stats().misses == 2);
  CHECK(big.registers == obsidian::compileCuda(kTwoKernels, "big").registers);
  CHECK(small.registers == obsidian::compileCuda(kTwoKernels, "small").registers);
  checkSameKernel(cache.get(kTwoKernels, "big"), big);  // memory keeps both
  CHECK(cache.stats().memoryHits == 1);
  // The disk holds one entry per key: the latest kernel name.
  CHECK(fileNames(temp.path()).size() == 1);
  checkDiskHit(temp.path(), kTwoKernels, "small", small);
  KernelCache other(temp.path());
  checkSameKernel(other.get(kTwoKernels, "big"), big);
  CHECK(other.stats().misses == 1);
  CHECK(other.stats().corrupt == 0);
}

namespace {

// Damages the entry of kAddKernel with `damage`, then checks that a fresh cache reports it once,
// counts it, recompiles, rewrites it, and that the rewritten entry hits.
template <typename Damage>
void checkCorruptEntryIsRebuilt(const std::string& expectedWhy, Damage damage) {
  TempDir temp;
  const CompileResult original = KernelCache(temp.path()).get(kAddKernel, "add_one");
  const fs::path path = KernelCache(temp.path()).pathFor(KernelCache::key(kAddKernel, {}));
  damage(path, original);

  KernelCache cache(temp.path());
  std::string messages;
  CompileResult rebuilt;
  {
    CerrCapture capture;
    rebuilt = cache.get(kAddKernel, "add_one");
    messages = capture.text();
  }
  INFO("stderr: " << messages);
  checkSameKernel(rebuilt, original);
  CHECK(rebuilt.log.find("ptxas") != std::string::npos);  // really recompiled
  CHECK(cache.stats().corrupt == 1);
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().diskHits == 0);
  CHECK(countOf(messages, "obsidian: kernel cache entry " + path.string() + " is corrupt (") == 1);
  CHECK(countOf(messages, "\n") == 1);
  CHECK(messages.find(expectedWhy) != std::string::npos);
  CHECK(messages.find("); recompiling") != std::string::npos);

  {
    CerrCapture capture;
    cache.clearMemory();
    checkSameKernel(cache.get(kAddKernel, "add_one"), original);
    CHECK(capture.text().empty());
  }
  CHECK(cache.stats().diskHits == 1);
  CHECK(cache.stats().corrupt == 1);
  checkDiskHit(temp.path(), kAddKernel, "add_one", original);
  CHECK(fileNames(temp.path()).size() == 1);
}

}  // namespace

TEST_CASE("cache: a truncated entry is detected, reported once, recompiled and rewritten") {
  checkCorruptEntryIsRebuilt("payload is", [](const fs::path& path, const CompileResult&) {
    fs::resize_file(path, fs::file_size(path) / 2);
  });
}

TEST_CASE("cache: an entry cut inside its header is detected") {
  checkCorruptEntryIsRebuilt("no header line", [](const fs::path& path, const CompileResult&) {
    fs::resize_file(path, 20);
  });
}

TEST_CASE("cache: an empty entry is detected") {
  checkCorruptEntryIsRebuilt("no header line", [](const fs::path& path, const CompileResult&) {
    fs::resize_file(path, 0);
  });
}

TEST_CASE("cache: a flipped payload byte is detected by the checksum") {
  SUBCASE("in the cubin") {
    checkCorruptEntryIsRebuilt("checksum mismatch",
                               [](const fs::path& path, const CompileResult& original) {
                                 std::string bytes = readFile(path);
                                 const size_t at = bytes.find('\n') + 1 + original.cubin.size() / 2;
                                 bytes[at] = static_cast<char>(bytes[at] ^ 0x10);
                                 writeFile(path, bytes);
                               });
  }
  SUBCASE("in the ptx") {
    checkCorruptEntryIsRebuilt("checksum mismatch", [](const fs::path& path, const CompileResult&) {
      std::string bytes = readFile(path);
      bytes[bytes.size() - 1] = static_cast<char>(bytes.back() ^ 0x01);
      writeFile(path, bytes);
    });
  }
}

TEST_CASE("cache: a garbage header is detected") {
  const auto replaceHeader = [](const std::string& header) {
    return [header](const fs::path& path, const CompileResult&) {
      const std::string bytes = readFile(path);
      writeFile(path, header + bytes.substr(bytes.find('\n')));
    };
  };
  SUBCASE("not JSON") {
    checkCorruptEntryIsRebuilt("header is not JSON", replaceHeader("garbage \x01\x02{"));
  }
  SUBCASE("not an object") {
    checkCorruptEntryIsRebuilt("header is not a JSON object", replaceHeader("[1, 2, 3]"));
  }
  SUBCASE("wrong magic") {
    checkCorruptEntryIsRebuilt("bad magic", [](const fs::path& path, const CompileResult&) {
      std::string bytes = readFile(path);
      bytes.replace(bytes.find("obsidian-kernel-cache"), 8, "OBSIDIAN");
      writeFile(path, bytes);
    });
  }
  SUBCASE("missing field") {
    checkCorruptEntryIsRebuilt("bad header field",
                               replaceHeader(R"({"magic":"obsidian-kernel-cache","version":2})"));
  }
  SUBCASE("wrong sizes") {
    checkCorruptEntryIsRebuilt("header says", [](const fs::path& path, const CompileResult&) {
      std::string bytes = readFile(path);
      const size_t at = bytes.find("\"ptxBytes\":") + 11;
      bytes.insert(at, "1");  // ten times as much ptx as there is
      writeFile(path, bytes);
    });
  }
}

namespace {

// cache.get(kAddKernel, "add_one") on another thread. If it has not returned within a minute
// (a blocking open of a FIFO waits for a writer forever), the test fails and `fifo` is opened
// as a writer so that the lookup can finish instead of hanging the test run.
CompileResult getWithin(KernelCache& cache, const fs::path& fifo) {
  auto pending =
      std::async(std::launch::async, [&cache] { return cache.get(kAddKernel, "add_one"); });
  if (pending.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    FAIL_CHECK("KernelCache::get did not return within 60 s: it waits on " << fifo.string());
    const int fd = fifo.empty() ? -1 : ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
    CompileResult result = pending.get();
    if (fd >= 0) ::close(fd);
    return result;
  }
  return pending.get();
}

// Puts something other than a regular file at kAddKernel's entry path (`place` returns the
// FIFO a blocking open would wait on, if any), then checks that get() returns the right kernel
// at once, reports the entry as corrupt naming `kind`, and replaces it with a regular entry
// that the next cache hits.
template <typename Place>
void checkNonRegularEntryIsReplaced(const std::string& kind, Place place) {
  TempDir temp;
  KernelCache cache(temp.path());
  const fs::path path = cache.pathFor(KernelCache::key(kAddKernel, {}));
  const fs::path fifo = place(temp.path(), path);
  std::string messages;
  CompileResult result;
  {
    CerrCapture capture;
    result = getWithin(cache, fifo);
    messages = capture.text();
  }
  INFO("stderr: " << messages);
  checkSameKernel(result, obsidian::compileCuda(kAddKernel, "add_one"));
  CHECK(cache.stats().corrupt == 1);
  CHECK(cache.stats().misses == 1);
  CHECK(countOf(messages, "obsidian: kernel cache entry " + path.string() +
                              " is corrupt (not a regular file: " + kind + "); recompiling\n") ==
        1);
  CHECK(fs::is_regular_file(fs::symlink_status(path)));
  checkDiskHit(temp.path(), kAddKernel, "add_one", result);
}

}  // namespace

TEST_CASE("cache: a FIFO, socket or symbolic link at an entry path is replaced, never waited on") {
  SUBCASE("a FIFO") {
    checkNonRegularEntryIsReplaced("a FIFO", [](const fs::path&, const fs::path& path) {
      REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
      return path;
    });
  }
  SUBCASE("a symbolic link to a FIFO") {
    const auto place = [](const fs::path& dir, const fs::path& path) {
      const fs::path target = dir / "elsewhere.fifo";
      REQUIRE(::mkfifo(target.c_str(), 0644) == 0);
      fs::create_symlink(target, path);
      return target;
    };
    checkNonRegularEntryIsReplaced("a symbolic link", place);
  }
  SUBCASE("a symbolic link to a valid entry") {
    // Entries are only ever renamed into place: a link is not one, wherever it points.
    const auto place = [](const fs::path& dir, const fs::path& path) {
      KernelCache other(dir / "other");
      other.get(kAddKernel, "add_one");
      fs::create_symlink(other.pathFor(KernelCache::key(kAddKernel, {})), path);
      return fs::path();
    };
    checkNonRegularEntryIsReplaced("a symbolic link", place);
  }
  SUBCASE("a socket") {
    checkNonRegularEntryIsReplaced("a socket", [](const fs::path&, const fs::path& path) {
      sockaddr_un address{};
      address.sun_family = AF_UNIX;
      REQUIRE(path.string().size() < sizeof address.sun_path);
      path.string().copy(address.sun_path, sizeof address.sun_path - 1);
      const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
      REQUIRE(fd >= 0);
      CHECK(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
      ::close(fd);
      return fs::path();
    });
  }
}

namespace {

// Damage that sets the header field `name` to `value`. With fixChecksum the checksum is
// recomputed, as a forger would, so that only the checks of the fields themselves can tell.
auto setHeaderField(const std::string& name, const nlohmann::ordered_json& value,
                    bool fixChecksum) {
  return [=](const fs::path& path, const CompileResult&) {
    const std::string bytes = readFile(path);
    const size_t newline = bytes.find('\n');
    auto header = nlohmann::ordered_json::parse(bytes.substr(0, newline));
    REQUIRE(header.contains(name));
    header[name] = value;
    const std::string payload = bytes.substr(newline + 1);
    if (fixChecksum) header["checksum"] = referenceChecksum(header, payload);
    writeFile(path, header.dump() + "\n" + payload);
  };
}

}  // namespace

TEST_CASE("cache: a header field out of range or of the wrong type is never served") {
  struct Forgery {
    const char* field;
    nlohmann::ordered_json value;
    const char* why;
  };
  const std::vector<Forgery> forgeries = {
      {"registers", -5, "registers is -5, expected an integer in -1..255"},
      {"registers", 256, "registers is 256, expected an integer in -1..255"},
      {"registers", 3.5, "registers is 3.5, expected an integer in -1..255"},
      {"registers", "32", "registers is \"32\", expected an integer in -1..255"},
      {"spillStoreBytes", -1, "spillStoreBytes is -1, expected an integer in 0..2147483647"},
      {"spillLoadBytes", -8, "spillLoadBytes is -8, expected an integer in 0..2147483647"},
      {"stackBytes", uint64_t{1} << 40,
       "stackBytes is 1099511627776, expected an integer in 0..2147483647"},
      {"staticSharedBytes", -4, "staticSharedBytes is -4, expected an integer in 0..2147483647"},
      {"seconds", -1, "seconds is -1, expected a number of seconds >= 0"},
      {"seconds", -0.5, "seconds is -0.5, expected a number of seconds >= 0"},
      {"seconds", nullptr, "seconds is null, expected a number of seconds >= 0"},
      {"seconds", "fast", "seconds is \"fast\", expected a number of seconds >= 0"},
      {"options", "-O3", "options is \"-O3\", expected an array of strings"},
      {"options", {1, 2}, "options is [1,2], expected an array of strings"},
      {"kernel", 7, "kernel is 7, expected a string"},
      {"cubinBytes", -1, "cubinBytes is -1, expected a byte count"},
      {"version", "2", "version is \"2\", expected an integer in 0..2147483647"},
  };
  for (const Forgery& forgery : forgeries) {
    INFO("header field " << forgery.field << " = " << forgery.value.dump());
    checkCorruptEntryIsRebuilt(std::string("bad header field: ") + forgery.why,
                               setHeaderField(forgery.field, forgery.value, true));
  }
  // The figures of an entry that ptxas did not see (compute_XX: no cubin, registers -1) are
  // in range: such an entry is served.
  TempDir temp;
  CompileOptions ptxOnly;
  ptxOnly.arch = "compute_90";
  const CompileResult compiled = KernelCache(temp.path()).get(kAddKernel, "add_one", ptxOnly);
  CHECK(compiled.registers == -1);
  CHECK(compiled.cubin.empty());
  KernelCache fresh(temp.path());
  checkSameKernel(fresh.get(kAddKernel, "add_one", ptxOnly), compiled);
  CHECK(fresh.stats().diskHits == 1);
  CHECK(fresh.stats().corrupt == 0);
}

TEST_CASE("cache: the checksum covers every header field") {
  // In-range edits that only the checksum can catch; each would otherwise be served as a hit
  // with the edited figure.
  const CompileResult reference = obsidian::compileCuda(kAddKernel, "add_one");
  std::vector<std::string> moreOptions = reference.options;
  moreOptions.push_back("-lineinfo");
  const std::vector<std::pair<const char*, nlohmann::ordered_json>> edits = {
      {"registers", reference.registers == 255 ? 254 : reference.registers + 1},
      {"spillStoreBytes", reference.spillStoreBytes + 4},
      {"spillLoadBytes", reference.spillLoadBytes + 4},
      {"stackBytes", reference.stackBytes + 16},
      {"staticSharedBytes", reference.staticSharedBytes + 4},
      {"seconds", reference.seconds + 1},
      {"options", moreOptions},
      {"kernel", "add_two"},
  };
  for (const auto& [name, value] : edits) {
    INFO("header field " << name << " = " << value.dump());
    checkCorruptEntryIsRebuilt("checksum mismatch", setHeaderField(name, value, false));
  }
}

TEST_CASE("cache: concurrent threads with separate caches leave one valid entry") {
  TempDir temp;
  constexpr int kThreads = 4;
  std::vector<CompileResult> results(kThreads);
  std::vector<KernelCache::Stats> stats(kThreads);
  std::vector<std::string> errors(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        KernelCache cache(temp.path());
        start.arrive_and_wait();
        results[t] = cache.get(kTwoKernels, "big");
        stats[t] = cache.stats();
      } catch (const std::exception& error) {
        errors[t] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  uint64_t served = 0;
  for (int t = 0; t < kThreads; ++t) {
    CHECK(errors[t].empty());
    REQUIRE(isElf(results[t]));
    checkSameKernel(results[t], results[0]);
    CHECK(stats[t].corrupt == 0);
    served += stats[t].misses + stats[t].diskHits;
  }
  CHECK(served == kThreads);
  CHECK(fileNames(temp.path()) ==
        std::vector<std::string>{KernelCache::key(kTwoKernels, {}) + ".obsk"});
  checkDiskHit(temp.path(), kTwoKernels, "big", results[0]);
}

TEST_CASE("cache: concurrent threads on one cache share one compile") {
  TempDir temp;
  KernelCache cache(temp.path());
  constexpr int kThreads = 4;
  std::vector<CompileResult> results(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      results[t] = cache.get(kScaleKernel, "scale");
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) checkSameKernel(results[t], results[0]);
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().memoryHits == kThreads - 1);
  CHECK(fileNames(temp.path()).size() == 1);
}

TEST_CASE("cache: two processes compiling the same kernel leave one valid entry") {
  TempDir temp;
  int pipeFds[2];
  REQUIRE(::pipe(pipeFds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child: its own cache; reports its cubin's hash through the pipe. No doctest here.
    ::close(pipeFds[0]);
    int code = 1;
    try {
      KernelCache cache(temp.path());
      const CompileResult result = cache.get(kTwoKernels, "big");
      const uint64_t hash = referenceFnv(std::string(result.cubin.begin(), result.cubin.end()));
      const KernelCache::Stats stats = cache.stats();
      if (isElf(result) && stats.misses + stats.diskHits == 1 && stats.corrupt == 0 &&
          ::write(pipeFds[1], &hash, sizeof hash) == static_cast<ssize_t>(sizeof hash)) {
        code = 0;
      }
    } catch (...) {
      code = 2;
    }
    ::_exit(code);
  }
  ::close(pipeFds[1]);
  KernelCache cache(temp.path());
  const CompileResult result = cache.get(kTwoKernels, "big");
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  uint64_t childHash = 0;
  const ssize_t got = ::read(pipeFds[0], &childHash, sizeof childHash);
  ::close(pipeFds[0]);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  REQUIRE(got == static_cast<ssize_t>(sizeof childHash));
  REQUIRE(isElf(result));
  CHECK(childHash == referenceFnv(std::string(result.cubin.begin(), result.cubin.end())));
  CHECK(cache.stats().corrupt == 0);
  CHECK(fileNames(temp.path()) ==
        std::vector<std::string>{KernelCache::key(kTwoKernels, {}) + ".obsk"});
  checkDiskHit(temp.path(), kTwoKernels, "big", result);
}

TEST_CASE("cache: an unusable directory falls back to memory with one warning") {
  TempDir temp;
  const fs::path blocker = temp.path() / "a-regular-file";
  writeFile(blocker, "not a directory\n");

  SUBCASE("directory path under a regular file") {
    KernelCache cache(blocker / "cache");
    std::string messages;
    {
      CerrCapture capture;
      const CompileResult first = cache.get(kAddKernel, "add_one");
      const CompileResult second = cache.get(kScaleKernel, "scale");
      CHECK(isElf(first));
      CHECK(isElf(second));
      checkSameKernel(cache.get(kAddKernel, "add_one"), first);
      messages = capture.text();
    }
    INFO("stderr: " << messages);
    CHECK(countOf(messages, "obsidian: cannot write kernel cache entry ") == 1);
    CHECK(countOf(messages, "\n") == 1);
    CHECK(messages.find("caching compiled kernels in memory only") != std::string::npos);
    CHECK(cache.stats().misses == 2);
    CHECK(cache.stats().memoryHits == 1);
  }
  SUBCASE("directory is a regular file") {
    KernelCache cache(blocker);
    CerrCapture capture;
    CHECK(isElf(cache.get(kAddKernel, "add_one")));
    CHECK(countOf(capture.text(), "obsidian: cannot write kernel cache entry ") == 1);
  }
  SUBCASE("entry path taken by a directory") {
    KernelCache cache(temp.path() / "cache");
    fs::create_directories(cache.pathFor(KernelCache::key(kAddKernel, {})));
    CerrCapture capture;
    CHECK(isElf(cache.get(kAddKernel, "add_one")));
    CHECK(countOf(capture.text(), "obsidian: cannot write kernel cache entry ") == 1);
    CHECK(countOf(capture.text(), "rename failed") == 1);
    CHECK(countOf(capture.text(), " is corrupt (not a regular file: a directory); recompiling") ==
          1);
    CHECK(cache.stats().corrupt == 1);
    // The temp file was removed: only the blocking directory is there.
    CHECK(fileNames(temp.path() / "cache") ==
          std::vector<std::string>{KernelCache::key(kAddKernel, {}) + ".obsk"});
  }
  SUBCASE("read-only directory") {
    const fs::path dir = temp.path() / "read-only";
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
    KernelCache cache(dir);
    CerrCapture capture;
    CHECK(isElf(cache.get(kAddKernel, "add_one")));
    if (::geteuid() != 0) {
      CHECK(countOf(capture.text(), "obsidian: cannot write kernel cache entry ") == 1);
      CHECK(fileNames(dir).empty());
    } else {
      MESSAGE("running as root: permissions do not stop writes, only the result is checked");
    }
    fs::permissions(dir, fs::perms::owner_all);
  }
  SUBCASE("read-only directory holding a corrupt entry") {
    // The entry cannot be rewritten, so each clearMemory() finds it corrupt again; it is
    // reported once all the same.
    const fs::path dir = temp.path() / "read-only";
    const CompileResult original = KernelCache(dir).get(kAddKernel, "add_one");
    const fs::path path = KernelCache(dir).pathFor(KernelCache::key(kAddKernel, {}));
    fs::resize_file(path, fs::file_size(path) - 1);
    fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
    KernelCache cache(dir);
    std::string messages;
    {
      CerrCapture capture;
      checkSameKernel(cache.get(kAddKernel, "add_one"), original);
      cache.clearMemory();
      checkSameKernel(cache.get(kAddKernel, "add_one"), original);
      messages = capture.text();
    }
    INFO("stderr: " << messages);
    CHECK(countOf(messages, " is corrupt (") == 1);
    if (::geteuid() != 0) {
      CHECK(countOf(messages, "obsidian: cannot write kernel cache entry ") == 1);
      CHECK(cache.stats().corrupt == 2);
      CHECK(cache.stats().misses == 2);
      CHECK(fileNames(dir) == std::vector<std::string>{path.filename().string()});
    } else {
      MESSAGE("running as root: permissions do not stop writes, the entry was rewritten");
      CHECK(cache.stats().corrupt == 1);
      CHECK(cache.stats().diskHits == 1);
    }
    fs::permissions(dir, fs::perms::owner_all);
  }
}

TEST_CASE("cache: global() is one cache on the environment's directory") {
  KernelCache& cache = KernelCache::global();
  CHECK(&cache == &KernelCache::global());
  fs::path expected;
  if (const char* dir = std::getenv("OBSIDIAN_CACHE_DIR")) {
    expected = dir;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    expected = fs::path(home) / ".cache" / "obsidian";
  }
  CHECK(cache.directory() == expected);
}
