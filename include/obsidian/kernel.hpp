/// A captured kernel: its lowered IR, its CUDA, its report, and its NVRTC compilation on
/// demand. capture (obsidian/capture.hpp) makes one; the runtime, the simulator and export take
/// one. The pass pipeline that made it stays inside the library (src/codegen/lower.hpp).
/// @file
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "obsidian/ir.hpp"
#include "obsidian/nvrtc.hpp"
#include "obsidian/report.hpp"

namespace obsidian {

/// How capture makes a kernel: static lengths, limits, names and what the passes do.
struct CaptureOptions {
  /// Lengths of the callable's SPull parameters, in parameter order (a static length is not in
  /// the type, so it is given here).
  std::vector<uint32_t> staticLengths = {};
  /// Shared memory the kernel may use, in bytes. The default is the opt-in maximum of sm_90
  /// (227 KB); the runtime checks the real device's limit again at launch.
  uint32_t sharedMemoryLimit = 227 * 1024;
  /// Give every shared array bytes of its own instead of reusing the bytes of dead arrays (the
  /// simulator's differential tests compare the two).
  bool reuseSharedMemory = true;
  /// Compute each repeated subexpression once, into a variable (the share pass: see share() in
  /// exp.hpp). Off, every use is printed and computed again, as the expressions were built
  /// (for comparing the two: the simulator's differential tests, bench/codegen).
  bool shareSubexpressions = true;
  /// NVRTC options this kernel is always compiled with (wherever it is compiled: Kernel::compile,
  /// the GPU runtime, exportBinary), e.g.\ "--fmad=false" for bit-exact float results.
  std::vector<std::string> nvrtcOptions = {};
  /// @{
  /// Names for the kernel's parameters, in the callable's order, and for its outputs, in result
  /// order: the generated CUDA, exported launchers, the report and error messages use them
  /// instead of in0, s2, out0. An array x's length parameter is xLen (its count in an exported
  /// launcher xCount); the components of an array of tuples are x_0, x_1, ... An empty list, or
  /// "" in it, keeps the default name. Names are C identifiers that nothing else in the
  /// generated code uses (capture throws Error naming the rule otherwise).
  std::vector<std::string> names = {};
  std::vector<std::string> outputNames = {};
  /// @}
  /// __launch_bounds__' second argument: the CUDA compiler keeps the kernel's registers few
  /// enough for this many blocks per SM (0: it chooses). Registers often decide how many blocks
  /// an SM holds; this trades them (spills show in the kernel's report) for occupancy. At most
  /// 2048 threads' worth (the blocks an sm_90 SM can hold).
  uint32_t minBlocksPerSm = 0;
  /// Keep the IR after every pass in Kernel::irDump(). OBSIDIAN_DUMP_IR=1 in the environment
  /// keeps it too and also prints it to std::cerr.
  bool dumpIr = false;
};

struct LoweredKernel;       // the pipeline's result (internal)
struct PostconditionCheck;  // below
namespace detail {
struct KernelAccess;
struct KernelMemo;
}  // namespace detail

/// A captured kernel: its lowered IR, its CUDA, its report, and its NVRTC compilation on demand.
/// Copies are cheap and share everything, the compile results included.
class Kernel {
 public:
  const std::string& name() const;  ///< the name given to capture
  /// Unique in this process, shared by copies of this Kernel (the runtime keys loaded code by it).
  uint64_t id() const { return id_; }
  const std::string& cuda() const;  ///< the generated CUDA source
  /// The bounds-checked variant of cuda() (LaunchOptions::checked): every write and atomic to a
  /// global array checks its index, skips the access when it is out of bounds and records the
  /// first such access. Made on first use.
  const std::string& checkedCuda() const;
  uint32_t threadsPerBlock() const;          ///< the real threads of each block
  uint32_t sharedBytes() const;              ///< dynamic shared memory per block, in bytes
  const std::vector<Param>& params() const;  ///< the kernel's parameters, in order
  /// @{
  /// The kernel's IR after every pass, and as capture reified it.
  const KernelIR& ir() const;
  const KernelIR& reifiedIr() const;
  /// @}
  const std::vector<PassTiming>& timings() const;  ///< how long each pass took
  /// CaptureOptions::nvrtcOptions.
  const std::vector<std::string>& nvrtcOptions() const;
  /// The IR printed after every pass (empty unless dumping was asked for).
  const std::string& irDump() const;
  /// The kernel's postconditions (ensure), each with the kernel that checks it.
  const std::vector<PostconditionCheck>& postconditions() const;

  /// Compile with NVRTC through the kernel cache (KernelCache::global(): memory and disk), and
  /// keep the result for these options with this Kernel. The kernel's own nvrtcOptions
  /// (CaptureOptions) come first, then options.extraOptions. The result for each set of options
  /// is kept, so a reference returned here stays valid while the Kernel (or a copy of it)
  /// lives, whatever is compiled later (each set of options compiled costs its PTX and CUBIN
  /// until then: a sweep over many option sets compiles copies it drops, or uses KernelCache
  /// directly). Safe to call from several threads.
  const CompileResult& compile(const CompileOptions& options = {}) const;
  /// `options` with the kernel's own NVRTC options added: what compile() passes to NVRTC.
  CompileOptions compileOptions(const CompileOptions& options = {}) const;
  /// Whether compile() has run (on this Kernel or a copy); report() shows the latest result.
  bool compiled() const;

  /// Name, parameters, threads per block, shared bytes with each array's offset and live
  /// range, barrier counts by level, preconditions, pass timings; registers, spills, stack and
  /// compile time once compiled. As JSON: toJson (obsidian/report_json.hpp).
  KernelReport report() const;

 private:
  friend struct detail::KernelAccess;
  explicit Kernel(std::shared_ptr<const LoweredKernel> lowered);
  KernelReport makeReport() const;

  std::shared_ptr<const LoweredKernel> data_;
  uint64_t id_;
  // What is made on demand (compile results by options, the checked CUDA), shared by copies
  // as the id is, behind a mutex (src/kernel/kernel.cpp).
  std::shared_ptr<detail::KernelMemo> memo_;
};

/// A postcondition of a kernel (ensure in capture.hpp) and the kernel that checks it: `check`
/// takes the kernel's arguments (its outputs as inputs), then a one-element uint32 array that
/// holds 0xffffffff, and leaves there the first index of output `output` where the condition
/// fails. simulate and checked GPU launches run it after the kernel.
struct PostconditionCheck {
  size_t output = 0;       ///< the output's position among the kernel's outputs
  std::string outputName;  ///< its name in the generated code
  std::string message;     ///< the message given to ensure
  std::string condition;   ///< in CUDA, over the element's index `index`
  std::string index;       ///< the name of the index variable in `condition`
  Kernel check;            ///< the kernel that finds the first failing element
};

}  // namespace obsidian
