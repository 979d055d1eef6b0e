/// Exporting generated kernels for applications that do not want a JIT: a standalone CUDA
/// header (.cuh) with the __global__ kernels and typed host launchers that check the same
/// preconditions as obsidian's launch (returning cudaError_t), and PTX/CUBIN files with a JSON
/// sidecar for the driver API or CuPy's RawModule.
/// @file
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "obsidian/kernel.hpp"

namespace obsidian {

/// Options of exportHeader: where the exported code goes and what is added to it.
struct ExportOptions {
  /// The C++ namespace that holds everything exported ("app::kernels" for a nested one), so
  /// that two exported headers never collide. Required. Each ::-separated part follows the rule
  /// for kernel names (no keyword, reserved or CUDA name); no leading ::, no empty part, and the
  /// outermost part is not std, stdN or posix.
  std::string ns;
  /// Extra host code appended inside the namespace, after the launchers (a multi-kernel
  /// pipeline's host function; see exportReducePipeline).
  std::string extraHostCode;
};

/// The header for `kernels` (one or several: a pipeline's kernels go in one header). For each
/// kernel `k` it holds `__global__ void k(...)` and
/// @code{.unparsed}
///   inline cudaError_t k_launch(<arrays as pointer + element count>, <scalars>,
///                               cudaStream_t stream = 0)
/// @endcode
/// which derives the lengths from the counts, checks null arrays, the kernel's preconditions
/// and the array sizes (cudaErrorInvalidValue, nothing launched), computes the grid and the
/// dynamic shared memory (raising the limit above 48 KB), and launches. It needs only the CUDA
/// runtime headers: no obsidian at the application's run time.
///
/// Compiled with OBSIDIAN_CHECKED defined (-DOBSIDIAN_CHECKED), the kernels check every write and
/// atomic to a global array against the array's length and skip it when it is out of bounds,
/// and each launcher waits for its kernel and, after an out-of-bounds write, prints the kernel,
/// array, index and length of the first one to stderr and returns cudaErrorAssert. An overlap of
/// an array the kernel writes with another array argument is refused (cudaErrorInvalidValue) in
/// either mode.
std::string exportHeader(const std::vector<Kernel>& kernels, const ExportOptions& options);

/// Writes exportHeader(...) to `path`, creating its directory; throws Error if it cannot, with
/// the path and the system's reason ("Permission denied", "Is a directory", ...).
void writeHeader(const std::filesystem::path& path, const std::vector<Kernel>& kernels,
                 const ExportOptions& options);

/// A level-by-level reduction as one host function (paper Section 6.1):
/// @code{.unparsed}
///   cudaError_t <function>(const T* in, size_t n, T* result, cudaStream_t stream = 0)
/// @endcode
/// reduces n >= 1 device elements into *result (device memory) with `partial`, a kernel that
/// maps n elements to ceil(n / chunk) partial results; scratch comes from cudaMallocAsync.
/// Returns host code for ExportOptions::extraHostCode.
std::string exportReducePipeline(const Kernel& partial, uint32_t chunk,
                                 const std::string& function);

/// A large scan as one host function (block scans, a scan of the block sums, add-back):
/// @code{.unparsed}
///   cudaError_t <function>(const T* in, size_t n, T* out, bool exclusive = false,
///                          cudaStream_t stream = 0)
/// @endcode
/// for n >= 1 device elements. `inclusive` and `exclusive` scan each chunk of their input
/// (in, sums, out: the block totals go to the mutable `sums`), `addBack` adds the block sums'
/// exclusive prefixes (partial, prefix, out). Scratch comes from cudaMallocAsync.
std::string exportScanPipeline(const Kernel& inclusive, const Kernel& exclusive,
                               const Kernel& addBack, uint32_t chunk, const std::string& function);

/// The files exportBinary wrote.
struct ExportedBinary {
  /// @{
  /// `<directory>/<name>`.ptx, .cubin and .json.
  std::filesystem::path ptx, cubin, json;
  /// @}
};

/// Writes `<directory>/<name>`.ptx, .cubin and .json (kernel name as the entry point, parameters
/// in order with kinds and types, threads per block, dynamic shared bytes, the grid expression,
/// preconditions and the compile options). Throws Error if the directory cannot be created or a
/// file cannot be written, with the path and the system's reason.
ExportedBinary exportBinary(const Kernel& k, const std::filesystem::path& directory,
                            const CompileOptions& options = {});

}  // namespace obsidian
