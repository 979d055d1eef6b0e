// Kernel cache: memory map in front of <dir>/<key>.obsk files in front of compileCuda.
//
// Facts this file relies on:
// - rename(2) within one directory atomically replaces the target, so a reader opening
//   <key>.obsk sees the old complete file or the new complete file, never a partial one; two
//   writers of the same key race harmlessly (the last rename wins, both files are complete).
// - Entries are not fsynced: after a power loss a file may be truncated or hold zeros, which the
//   size and checksum checks catch, and the entry is rebuilt.
// - An entry is opened with O_NONBLOCK | O_NOFOLLOW and fstat'ed before it is read, so a FIFO
//   (whose blocking open waits for a writer), a device or a link at an entry path cannot hang
//   or redirect a compile; rename(2) replaces any of them except a directory.
// - One read() of an fstat-sized buffer loads an entry; parsing the one-line JSON header and
//   hashing ~10-100 KB of payload stay far below the 1 ms budget for a disk hit.
#include "obsidian/cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <iostream>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace obsidian {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// Version 2: the checksum covers the header too. The version is the key's first field, so
// entries of another version live under other names and are never read.
constexpr int kFormatVersion = 2;
constexpr const char* kMagic = "obsidian-kernel-cache";
constexpr const char* kKeyTag = "obsidian-kernel-cache/2";  // first hashed field of every key
constexpr const char* kExtension = ".obsk";

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

uint64_t fnv1a(uint64_t hash, const char* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    hash ^= static_cast<unsigned char>(data[i]);
    hash *= kFnvPrime;
  }
  return hash;
}

// Feeds one field as a netstring "<length>:<bytes>,", so field boundaries are unambiguous.
uint64_t fnvField(uint64_t hash, const std::string& field) {
  const std::string length = std::to_string(field.size()) + ":";
  hash = fnv1a(hash, length.data(), length.size());
  hash = fnv1a(hash, field.data(), field.size());
  return fnv1a(hash, ",", 1);
}

std::string hex16(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// The header line as written: compact JSON, fields in the order written. Invalid UTF-8 (in a
// kernel name or option) is replaced rather than thrown on; such an entry then simply fails
// the kernel-name comparison when read back and is rebuilt.
std::string headerText(const Json& header) {
  return header.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// The entry's checksum: over the header line without its "checksum" field, then the cubin
// bytes, then the ptx bytes, so that an edit of any header field is caught as well as damage
// to the payload.
std::string entryChecksum(const Json& header, const char* cubin, size_t cubinSize, const char* ptx,
                          size_t ptxSize) {
  Json covered = header;
  covered.erase("checksum");
  const std::string text = headerText(covered);
  uint64_t hash = fnv1a(kFnvOffset, text.data(), text.size());
  return hex16(fnv1a(fnv1a(hash, cubin, cubinSize), ptx, ptxSize));
}

int cachedNvrtcVersion() {
  static const int version = nvrtcVersion();
  return version;
}

std::string errnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

// ---------------------------------------------------------------------------- reading

enum class ReadStatus { Missing, Hit, OtherKernel, Corrupt };

struct ReadOutcome {
  ReadStatus status = ReadStatus::Missing;
  std::string why;  // for Corrupt
  CompileResult result;
};

ReadOutcome corrupt(std::string why) {
  ReadOutcome outcome;
  outcome.status = ReadStatus::Corrupt;
  outcome.why = std::move(why);
  return outcome;
}

// What kind of file `mode` is, for a path that should hold a regular file.
const char* fileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

enum class FileStatus { Read, Absent, NotRegular };

// The whole file in one buffer. Absent: nothing can be opened there (treated as no entry).
// NotRegular: something other than a regular file sits at the path; `kind` says what. The
// open neither blocks (a FIFO with no writer would otherwise hang the compile for good) nor
// follows a final symbolic link (entries are only ever renamed into place, never linked), and
// the type is checked on the open descriptor before anything is read.
FileStatus readWholeFile(const fs::path& path, std::string& data, std::string& kind) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0) {
    // A link (ELOOP) or a socket (ENXIO) is not opened at all; a regular file that cannot be
    // opened (no permission) is left alone as if absent.
    struct stat info {};
    if (::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
      kind = fileKind(info.st_mode);
      return FileStatus::NotRegular;
    }
    return FileStatus::Absent;
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    return FileStatus::Absent;
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    kind = fileKind(info.st_mode);
    return FileStatus::NotRegular;
  }
  bool ok = true;
  data.resize(static_cast<size_t>(info.st_size));
  size_t got = 0;
  while (got < data.size()) {  // one read() in practice; loops only on short reads
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ok = false;
      break;
    }
    if (n == 0) break;  // the file shrank under us: the size check reports it
    got += static_cast<size_t>(n);
  }
  data.resize(got);
  ::close(fd);
  return ok ? FileStatus::Read : FileStatus::Absent;
}

// A header field that is missing, of the wrong type or out of range: the entry is corrupt.
struct BadField {
  std::string why;
};

const Json& field(const Json& header, const char* name) {
  const auto it = header.find(name);
  if (it == header.end()) throw BadField{std::string("bad header field: no ") + name};
  return *it;
}

[[noreturn]] void badField(const char* name, const Json& value, const std::string& expected) {
  std::string shown = headerText(value);
  if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
  throw BadField{std::string("bad header field: ") + name + " is " + shown + ", expected " +
                 expected};
}

std::string stringField(const Json& header, const char* name) {
  const Json& value = field(header, name);
  if (!value.is_string()) badField(name, value, "a string");
  return value.get<std::string>();
}

// An integer in low..high: a ptxas figure that the report shows as is, or a format number.
int64_t intField(const Json& header, const char* name, int64_t low, int64_t high) {
  const Json& value = field(header, name);
  const std::string expected = "an integer in " + std::to_string(low) + ".." + std::to_string(high);
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > static_cast<uint64_t>(high)) badField(name, value, expected);
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  if (!value.is_number_integer()) badField(name, value, expected);
  const int64_t n = value.get<int64_t>();
  if (n < low || n > high) badField(name, value, expected);
  return n;
}

uint64_t sizeField(const Json& header, const char* name) {
  const Json& value = field(header, name);
  if (!value.is_number_unsigned()) badField(name, value, "a byte count");
  return value.get<uint64_t>();
}

ReadOutcome readEntry(const fs::path& path, const std::string& key, const std::string& kernelName,
                      const CompileOptions& options) {
  std::string data, kind;
  switch (readWholeFile(path, data, kind)) {
    case FileStatus::Read: break;
    case FileStatus::Absent: return {};
    case FileStatus::NotRegular: return corrupt("not a regular file: " + kind);
  }
  const size_t newline = data.find('\n');
  if (newline == std::string::npos) return corrupt("no header line");
  const Json header = Json::parse(data.data(), data.data() + newline, nullptr, false);
  if (header.is_discarded()) return corrupt("header is not JSON");
  if (!header.is_object()) return corrupt("header is not a JSON object");
  try {
    if (stringField(header, "magic") != kMagic) return corrupt("bad magic");
    if (const int64_t version = intField(header, "version", 0, INT32_MAX);
        version != kFormatVersion) {
      return corrupt("format version " + std::to_string(version) + ", expected " +
                     std::to_string(kFormatVersion));
    }
    if (stringField(header, "key") != key) return corrupt("header holds another key");
    if (stringField(header, "arch") != options.arch) return corrupt("header holds another arch");
    // Every field is checked before the entry is served: the figures go into reports as is.
    const std::string kernel = stringField(header, "kernel");
    const Json& usedOptions = field(header, "options");
    if (!usedOptions.is_array()) badField("options", usedOptions, "an array of strings");
    for (const Json& option : usedOptions) {
      if (!option.is_string()) badField("options", usedOptions, "an array of strings");
    }
    constexpr int64_t kIntMax = std::numeric_limits<int>::max();
    // -1: ptxas reported nothing (a compute_XX arch); 255 registers is the most a thread has.
    const int registers = static_cast<int>(intField(header, "registers", -1, 255));
    const int spillStoreBytes = static_cast<int>(intField(header, "spillStoreBytes", 0, kIntMax));
    const int spillLoadBytes = static_cast<int>(intField(header, "spillLoadBytes", 0, kIntMax));
    const int stackBytes = static_cast<int>(intField(header, "stackBytes", 0, kIntMax));
    const int staticSharedBytes =
        static_cast<int>(intField(header, "staticSharedBytes", 0, kIntMax));
    const Json& secondsValue = field(header, "seconds");
    if (!secondsValue.is_number() || !std::isfinite(secondsValue.get<double>()) ||
        secondsValue.get<double>() < 0) {
      badField("seconds", secondsValue, "a number of seconds >= 0");
    }
    const uint64_t cubinBytes = sizeField(header, "cubinBytes");
    const uint64_t ptxBytes = sizeField(header, "ptxBytes");
    const std::string checksum = stringField(header, "checksum");
    const uint64_t payloadBytes = data.size() - newline - 1;
    if (cubinBytes > payloadBytes || ptxBytes > payloadBytes - cubinBytes ||
        cubinBytes + ptxBytes != payloadBytes) {
      return corrupt("payload is " + std::to_string(payloadBytes) + " bytes, header says " +
                     std::to_string(cubinBytes) + " + " + std::to_string(ptxBytes));
    }
    const char* cubin = data.data() + newline + 1;
    const char* ptx = cubin + cubinBytes;
    if (checksum != entryChecksum(header, cubin, cubinBytes, ptx, ptxBytes)) {
      return corrupt("checksum mismatch");
    }
    ReadOutcome outcome;
    if (kernel != kernelName) {
      outcome.status = ReadStatus::OtherKernel;
      return outcome;
    }
    CompileResult& result = outcome.result;
    result.cubin.assign(cubin, cubin + cubinBytes);
    result.ptx.assign(ptx, ptxBytes);
    result.options = usedOptions.get<std::vector<std::string>>();
    result.registers = registers;
    result.spillStoreBytes = spillStoreBytes;
    result.spillLoadBytes = spillLoadBytes;
    result.stackBytes = stackBytes;
    result.staticSharedBytes = staticSharedBytes;
    result.seconds = secondsValue.get<double>();
    outcome.status = ReadStatus::Hit;
    return outcome;
  } catch (const BadField& bad) {
    return corrupt(bad.why);
  } catch (const Json::exception& error) {
    return corrupt(std::string("bad header field: ") + error.what());
  }
}

// ---------------------------------------------------------------------------- writing

std::string entryHeader(const std::string& key, const std::string& kernelName,
                        const CompileOptions& options, const CompileResult& result) {
  Json header;
  header["magic"] = kMagic;
  header["version"] = kFormatVersion;
  header["key"] = key;
  header["kernel"] = kernelName;
  header["arch"] = options.arch;
  header["options"] = result.options;
  header["registers"] = result.registers;
  header["spillStoreBytes"] = result.spillStoreBytes;
  header["spillLoadBytes"] = result.spillLoadBytes;
  header["stackBytes"] = result.stackBytes;
  header["staticSharedBytes"] = result.staticSharedBytes;
  header["seconds"] = result.seconds;
  header["cubinBytes"] = result.cubin.size();
  header["ptxBytes"] = result.ptx.size();
  header["checksum"] = entryChecksum(header, result.cubin.data(), result.cubin.size(),
                                     result.ptx.data(), result.ptx.size());
  return headerText(header);
}

bool writeAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Writes the entry to a temp file next to `path` and renames it into place. Returns "" on
// success, else why it failed (the temp file is removed then).
std::string writeEntry(const fs::path& dir, const fs::path& path, const std::string& header,
                       const CompileResult& result) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return "cannot create the directory: " + error.message();
  std::string tempName = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(tempName.data());
  if (fd < 0) return errnoText("cannot create a file there");
  ::fchmod(fd, 0644);  // mkstemp makes 0600; entries are as shareable as the directory
  const std::string headerLine = header + "\n";
  bool ok = writeAll(fd, headerLine.data(), headerLine.size()) &&
            writeAll(fd, result.cubin.data(), result.cubin.size()) &&
            writeAll(fd, result.ptx.data(), result.ptx.size());
  std::string why = ok ? "" : errnoText("write failed");
  if (::close(fd) != 0 && ok) {
    ok = false;
    why = errnoText("close failed");
  }
  if (ok && ::rename(tempName.c_str(), path.c_str()) != 0) {
    ok = false;
    why = errnoText("rename failed");
  }
  if (!ok) ::unlink(tempName.c_str());
  return why;
}

fs::path defaultDirectory() {
  if (const char* dir = std::getenv("OBSIDIAN_CACHE_DIR")) return dir;  // "" turns disk off
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return fs::path(home) / ".cache" / "obsidian";
  }
  return {};
}

}  // namespace

// ---------------------------------------------------------------------------- KernelCache

using ResultPtr = std::shared_ptr<const CompileResult>;

struct KernelCache::State {
  mutable std::mutex mutex;
  // Keyed by key + '\n' + kernel name: the ptxas figures depend on the kernel name.
  std::unordered_map<std::string, ResultPtr> memory;
  // Lookups under way (disk read or compile); other threads wait on them instead of repeating.
  std::unordered_map<std::string, std::shared_future<ResultPtr>> inFlight;
  std::set<std::string> reportedCorrupt;  // paths reported and not rewritten since
  bool diskWritable = true;
  Stats stats;
};

KernelCache::KernelCache(std::filesystem::path dir)
    : dir_(std::move(dir)), state_(std::make_unique<State>()) {}

KernelCache::~KernelCache() = default;

KernelCache& KernelCache::global() {
  // Never destroyed, so static destructors elsewhere may still use it.
  static KernelCache* const cache = new KernelCache(defaultDirectory());
  return *cache;
}

std::string KernelCache::key(const std::string& source, const CompileOptions& options) {
  uint64_t hash = kFnvOffset;
  hash = fnvField(hash, kKeyTag);
  hash = fnvField(hash, std::to_string(cachedNvrtcVersion()));
  hash = fnvField(hash, options.arch);
  hash = fnvField(hash, std::to_string(options.extraOptions.size()));
  for (const std::string& option : options.extraOptions) hash = fnvField(hash, option);
  hash = fnvField(hash, source);
  return hex16(hash);
}

CompileResult KernelCache::get(const std::string& source, const std::string& kernelName,
                               const CompileOptions& options) {
  const std::string entryKey = key(source, options);
  const std::string memoryKey = entryKey + '\n' + kernelName;
  State& state = *state_;

  std::promise<ResultPtr> promise;
  {
    std::unique_lock lock(state.mutex);
    if (auto it = state.memory.find(memoryKey); it != state.memory.end()) {
      ++state.stats.memoryHits;
      const ResultPtr result = it->second;
      lock.unlock();
      return *result;  // copied outside the lock
    }
    if (auto it = state.inFlight.find(memoryKey); it != state.inFlight.end()) {
      const std::shared_future<ResultPtr> pending = it->second;
      lock.unlock();
      const ResultPtr result = pending.get();  // rethrows the other thread's CompileError
      lock.lock();
      ++state.stats.memoryHits;
      lock.unlock();
      return *result;
    }
    state.inFlight.emplace(memoryKey, promise.get_future().share());
  }

  // This thread owns the lookup now: every exit publishes to waiters and clears inFlight.
  // Called with the mutex held.
  bool published = false;
  auto publish = [&](const ResultPtr& result, std::exception_ptr error) {
    if (result) state.memory[memoryKey] = result;
    state.inFlight.erase(memoryKey);
    published = true;
    if (error) {
      promise.set_exception(std::move(error));
    } else {
      promise.set_value(result);
    }
  };

  ResultPtr result;
  try {
    const fs::path path = dir_.empty() ? fs::path() : pathFor(entryKey);
    if (!path.empty()) {
      ReadOutcome outcome = readEntry(path, entryKey, kernelName, options);
      if (outcome.status == ReadStatus::Hit) {
        result = std::make_shared<const CompileResult>(std::move(outcome.result));
        std::lock_guard lock(state.mutex);
        ++state.stats.diskHits;
        publish(result, nullptr);
      } else if (outcome.status == ReadStatus::Corrupt) {
        std::lock_guard lock(state.mutex);
        ++state.stats.corrupt;
        if (state.reportedCorrupt.insert(path.string()).second) {
          std::cerr << "obsidian: kernel cache entry " << path.string() << " is corrupt ("
                    << outcome.why << "); recompiling" << std::endl;
        }
      }
    }

    if (!result) {
      result = std::make_shared<const CompileResult>(compileCuda(source, kernelName, options));
      bool write = false;
      if (!path.empty()) {
        std::lock_guard lock(state.mutex);
        write = state.diskWritable;
      }
      std::string writeError;
      if (write) {
        writeError =
            writeEntry(dir_, path, entryHeader(entryKey, kernelName, options, *result), *result);
      }
      std::lock_guard lock(state.mutex);
      ++state.stats.misses;
      if (write && writeError.empty()) state.reportedCorrupt.erase(path.string());
      if (write && !writeError.empty() && state.diskWritable) {
        state.diskWritable = false;
        std::cerr << "obsidian: cannot write kernel cache entry " << path.string() << " ("
                  << writeError << "); caching compiled kernels in memory only" << std::endl;
      }
      publish(result, nullptr);
    }
  } catch (...) {
    std::lock_guard lock(state.mutex);
    if (!published) publish(nullptr, std::current_exception());
    throw;
  }
  return *result;
}

KernelCache::Stats KernelCache::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

void KernelCache::clearMemory() {
  std::lock_guard lock(state_->mutex);
  state_->memory.clear();
}

std::filesystem::path KernelCache::pathFor(const std::string& key) const {
  return dir_ / (key + kExtension);
}

const std::filesystem::path& KernelCache::directory() const { return dir_; }

}  // namespace obsidian
