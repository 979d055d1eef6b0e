// NVRTC wrapper: compiles CUDA source to PTX and CUBIN and parses ptxas' resource report.
//
// Facts about NVRTC (checked with CUDA 13.0) this file relies on:
// - With a real arch (-arch=sm_90) one compile yields both CUBIN and PTX (".target sm_90"), so
//   no second compile for compute_XX is needed. With -arch=compute_XX the CUBIN size is 0.
// - "--ptxas-options=-v" (also "-Xptxas=-v") puts ptxas' verbose report into the program log:
//     ptxas info    : Compiling entry function 'k' for 'sm_90'
//     ptxas info    : Function properties for k
//     ptxas         .     1024 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//     ptxas info    : Used 40 registers, used 0 barriers, 1024 bytes cumulative stack size,
//                     400 bytes smem, 372 bytes cmem[0]       (one line in the real log)
//   Non-entry functions get "Function properties for _Z..." blocks as well.
// - Bad options make nvrtcCompileProgram return NVRTC_ERROR_INVALID_OPTION with the reason in
//   the log, so they are reported like compile errors.
// - No standard headers are found without -I ("no directories in search list"); generated
//   sources are self-contained, so none is given.
//
// NVRTC itself is loaded with dlopen at the first compile (runtime/nvrtc_loader.hpp).
#include "obsidian/nvrtc.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "obsidian/error.hpp"
#include "runtime/compile_hook.hpp"
#include "runtime/nvrtc_loader.hpp"

namespace obsidian {
namespace {

std::mutex hookMutex;
std::function<void(const std::string&)> hookFunction;

std::function<void(const std::string&)> compileHook() {
  std::lock_guard<std::mutex> lock(hookMutex);
  return hookFunction;
}

void check(nvrtcResult result, const char* call, const std::string& kernelName) {
  if (result != NVRTC_SUCCESS) {
    const std::string where = kernelName.empty() ? "" : " for kernel '" + kernelName + "'";
    throw CompileError(std::string("NVRTC call ") + call + " failed" + where + ": " +
                       nvrtc::api().nvrtcGetErrorString(result));
  }
}

// Owns an nvrtcProgram so every exit path, exceptions included, destroys it.
class NvrtcProgram {
 public:
  NvrtcProgram(const std::string& source, const std::string& kernelName) {
    // The file name shows in diagnostics ("k.cu(3): error: ..."), so name it after the kernel.
    const std::string fileName = kernelName + ".cu";
    check(nvrtc::api().nvrtcCreateProgram(&program_, source.c_str(), fileName.c_str(), 0, nullptr,
                                          nullptr),
          "nvrtcCreateProgram", kernelName);
  }
  ~NvrtcProgram() {
    if (program_ != nullptr)
      nvrtc::api().nvrtcDestroyProgram(&program_);  // nothing useful to do on failure
  }
  NvrtcProgram(const NvrtcProgram&) = delete;
  NvrtcProgram& operator=(const NvrtcProgram&) = delete;

  nvrtcProgram get() const { return program_; }

 private:
  nvrtcProgram program_ = nullptr;
};

std::string programLog(nvrtcProgram program, const std::string& kernelName) {
  size_t size = 0;
  check(nvrtc::api().nvrtcGetProgramLogSize(program, &size), "nvrtcGetProgramLogSize", kernelName);
  std::string log(size, '\0');
  if (size > 0)
    check(nvrtc::api().nvrtcGetProgramLog(program, log.data()), "nvrtcGetProgramLog", kernelName);
  while (!log.empty() && log.back() == '\0') log.pop_back();  // size counts the terminator
  return log;
}

std::string trimRight(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' ||
                           text.back() == '\t')) {
    text.pop_back();
  }
  return text;
}

// The integer written just before `suffix` in `line` ("1024" for " bytes stack frame"), or -1.
int numberBefore(const std::string& line, const std::string& suffix) {
  const size_t end = line.find(suffix);
  if (end == std::string::npos) return -1;
  size_t begin = end;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  if (begin == end) return -1;
  return std::stoi(line.substr(begin, end - begin));
}

struct FunctionReport {
  bool isEntry = false;
  int registers = -1;
  int spillStoreBytes = 0;
  int spillLoadBytes = 0;
  int stackFrameBytes = 0;
  int cumulativeStackBytes = 0;
  int staticSharedBytes = 0;
};

// Splits the ptxas -v report into per-function stats. A stats line belongs to the function
// named by the latest "Compiling entry function '...'" or "Function properties for ..." line.
std::map<std::string, FunctionReport> parsePtxasReport(const std::string& log) {
  static const std::string entryTag = "Compiling entry function '";
  static const std::string propertiesTag = "Function properties for ";
  std::map<std::string, FunctionReport> reports;
  FunctionReport* current = nullptr;
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("ptxas", 0) != 0) continue;
    if (size_t at = line.find(entryTag); at != std::string::npos) {
      const size_t begin = at + entryTag.size();
      const size_t end = line.find('\'', begin);
      if (end == std::string::npos) continue;
      current = &reports[line.substr(begin, end - begin)];
      current->isEntry = true;
      continue;
    }
    if (size_t at = line.find(propertiesTag); at != std::string::npos) {
      current = &reports[trimRight(line.substr(at + propertiesTag.size()))];
      continue;
    }
    if (current == nullptr) continue;
    if (int n = numberBefore(line, " registers"); n >= 0 && line.find("Used ") != line.npos) {
      current->registers = n;
    }
    if (int n = numberBefore(line, " bytes stack frame"); n >= 0) current->stackFrameBytes = n;
    if (int n = numberBefore(line, " bytes spill stores"); n >= 0) current->spillStoreBytes = n;
    if (int n = numberBefore(line, " bytes spill loads"); n >= 0) current->spillLoadBytes = n;
    if (int n = numberBefore(line, " bytes cumulative stack size"); n >= 0) {
      current->cumulativeStackBytes = n;
    }
    if (int n = numberBefore(line, " bytes smem"); n >= 0) current->staticSharedBytes = n;
  }
  return reports;
}

// True when `symbol` is a C++-mangled name whose last component is `name`, e.g. "_Z4kernPii"
// or "_ZN2ns4kernEPi" for "kern".
bool isMangledFrom(const std::string& symbol, const std::string& name) {
  if (symbol.rfind("_Z", 0) != 0) return false;
  const std::string encoded = std::to_string(name.size()) + name;
  for (size_t at = symbol.find(encoded); at != std::string::npos;
       at = symbol.find(encoded, at + 1)) {
    const bool digitBefore = symbol[at - 1] >= '0' && symbol[at - 1] <= '9';  // at >= 2
    if (!digitBefore) return true;
  }
  return false;
}

const FunctionReport* findKernelReport(const std::map<std::string, FunctionReport>& reports,
                                       const std::string& kernelName) {
  if (auto it = reports.find(kernelName); it != reports.end()) return &it->second;
  const FunctionReport* mangled = nullptr;
  const FunctionReport* onlyEntry = nullptr;
  int entries = 0;
  for (const auto& [symbol, report] : reports) {
    if (report.isEntry && isMangledFrom(symbol, kernelName)) mangled = &report;
    if (report.isEntry) {
      ++entries;
      onlyEntry = &report;
    }
  }
  if (mangled != nullptr) return mangled;
  // A single entry is the kernel even if its name was spelled differently (e.g. by a macro).
  return entries == 1 ? onlyEntry : nullptr;
}

}  // namespace

CompileResult compileCuda(const std::string& source, const std::string& kernelName,
                          const CompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (std::function<void(const std::string&)> hook = compileHook()) hook(kernelName);
  CompileResult result;
  result.options = {"-arch=" + options.arch, "-std=c++17", "--ptxas-options=-v"};
  result.options.insert(result.options.end(), options.extraOptions.begin(),
                        options.extraOptions.end());
  std::vector<const char*> optionPointers;
  optionPointers.reserve(result.options.size());
  for (const std::string& option : result.options) optionPointers.push_back(option.c_str());

  NvrtcProgram program(source, kernelName);
  const nvrtcResult compiled = nvrtc::api().nvrtcCompileProgram(
      program.get(), static_cast<int>(optionPointers.size()), optionPointers.data());
  result.log = programLog(program.get(), kernelName);
  if (compiled != NVRTC_SUCCESS) {
    std::string reason = trimRight(result.log);
    // Compilation errors explain themselves in the log; other failures may leave it empty.
    if (compiled != NVRTC_ERROR_COMPILATION) {
      reason += std::string(reason.empty() ? "" : "\n") +
                "(nvrtcCompileProgram: " + nvrtc::api().nvrtcGetErrorString(compiled) + ")";
    }
    throw CompileError("NVRTC failed to compile kernel '" + kernelName + "' for " + options.arch +
                       ":\n" + reason + "\n--- source ---\n" + numberedSource(source));
  }

  size_t ptxSize = 0;
  check(nvrtc::api().nvrtcGetPTXSize(program.get(), &ptxSize), "nvrtcGetPTXSize", kernelName);
  result.ptx.assign(ptxSize, '\0');
  if (ptxSize > 0)
    check(nvrtc::api().nvrtcGetPTX(program.get(), result.ptx.data()), "nvrtcGetPTX", kernelName);
  while (!result.ptx.empty() && result.ptx.back() == '\0') result.ptx.pop_back();

  size_t cubinSize = 0;
  check(nvrtc::api().nvrtcGetCUBINSize(program.get(), &cubinSize), "nvrtcGetCUBINSize", kernelName);
  result.cubin.resize(cubinSize);
  if (cubinSize > 0) {
    check(nvrtc::api().nvrtcGetCUBIN(program.get(), result.cubin.data()), "nvrtcGetCUBIN",
          kernelName);
  }

  const auto reports = parsePtxasReport(result.log);
  if (const FunctionReport* report = findKernelReport(reports, kernelName)) {
    result.registers = report->registers;
    result.spillStoreBytes = report->spillStoreBytes;
    result.spillLoadBytes = report->spillLoadBytes;
    // The cumulative size includes callees' frames: that is what a launch must provide.
    result.stackBytes = std::max(report->stackFrameBytes, report->cumulativeStackBytes);
    result.staticSharedBytes = report->staticSharedBytes;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string numberedSource(const std::string& source) {
  std::vector<std::string> lines;
  std::istringstream stream(source);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  const size_t width = std::max<size_t>(3, std::to_string(lines.size()).size());
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string number = std::to_string(i + 1);
    out += std::string(width - number.size(), ' ') + number + " |";
    // No trailing blank after "|" on empty lines, so the text diffs cleanly.
    if (!lines[i].empty()) out += " " + lines[i];
    out += '\n';
  }
  return out;
}

int nvrtcVersion() {
  int major = 0;
  int minor = 0;
  check(nvrtc::api().nvrtcVersion(&major, &minor), "nvrtcVersion", "");
  return major * 1000 + minor * 10;
}

namespace testing {
void setCompileHook(std::function<void(const std::string& kernelName)> hook) {
  std::lock_guard<std::mutex> lock(hookMutex);
  hookFunction = std::move(hook);
}
}  // namespace testing

}  // namespace obsidian
