/// Runtime compilation of CUDA source with NVRTC: source text in, PTX + CUBIN + ptxas resource
/// report out. Needs no GPU, so code generation can be checked on any machine with the toolkit.
/// @file
#pragma once

#include <string>
#include <vector>

namespace obsidian {

/// What compileCuda compiles for and with.
struct CompileOptions {
  std::string arch = "sm_90";             ///< real arch: CUBIN for it, PTX for compute_XX
  std::vector<std::string> extraOptions;  ///< passed to NVRTC as is
};

/// What compileCuda produced: PTX, CUBIN, the logs and ptxas's resource report.
struct CompileResult {
  std::string ptx;                   ///< PTX text (no trailing NUL)
  std::vector<char> cubin;           ///< ELF image for `arch`; empty when arch is compute_XX
  std::string log;                   ///< NVRTC + ptxas log (ptxas -v lines included)
  std::vector<std::string> options;  ///< the options actually used
  /// ptxas report for the entry kernelName; left at these defaults when ptxas did not run
  /// (compute_XX arch) or reported nothing for the kernel.
  int registers = -1;         ///< "Used N registers"
  int spillStoreBytes = 0;    ///< "N bytes spill stores"
  int spillLoadBytes = 0;     ///< "N bytes spill loads"
  int stackBytes = 0;         ///< max("N bytes stack frame", "N bytes cumulative stack size")
  int staticSharedBytes = 0;  ///< "N bytes smem"
  double seconds = 0;         ///< wall time of the whole compile
};

/// Compiles `source` (self-contained: no -I paths are given, so it may include no headers) with
/// options `-arch=<arch> -std=c++17 --ptxas-options=-v <extraOptions...>`. kernelName is the entry
/// whose ptxas report is parsed (plain `extern "C"` name; a C++-mangled entry is matched too).
/// Throws CompileError when NVRTC rejects the source or options, or when an NVRTC call fails.
CompileResult compileCuda(const std::string& source, const std::string& kernelName,
                          const CompileOptions& options = {});

/// The source with each line prefixed by its right-aligned 1-based number: "  1 | line".
std::string numberedSource(const std::string& source);

/// Version of the NVRTC library loaded at run time, as major*1000 + minor*10 like CUDA_VERSION.
int nvrtcVersion();

}  // namespace obsidian
