/// The GPU runtime: devices, streams, events, typed device buffers, and launching captured
/// kernels on a real device. The CUDA driver is loaded with dlopen on first use: without a
/// driver or GPU everything here still links and loads, and using a device throws an Error
/// ("no CUDA device: ...").
/// @file
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "obsidian/arguments.hpp"
#include "obsidian/error.hpp"
#include "obsidian/kernel.hpp"

namespace obsidian {

/// A CUDA call failed: the message names the call, the CUDA error and the kernel (if any).
class CudaError : public Error {
 public:
  /// A CudaError whose what() is `message`, for the driver's error `code`.
  CudaError(const std::string& message, int code) : Error(message), code_(code) {}
  int code() const { return code_; }  ///< the CUresult

 private:
  int code_;
};

/// The GPU runtime: devices, streams, events, device buffers, launches and their timing.
namespace gpu {

/// Number of usable CUDA devices: 0 where there is no driver or device (never throws).
int deviceCount();
bool available();  ///< whether deviceCount() > 0
/// Why no device can be used ("" when one can).
std::string unavailableReason();

/// What the driver says about a device.
struct DeviceInfo {
  int ordinal = 0;   ///< its number (Device::get's argument)
  std::string name;  ///< the driver's name for it ("NVIDIA H100 80GB HBM3")
  /// @{
  /// Compute capability.
  int major = 0, minor = 0;
  /// @}
  int smCount = 0;                   ///< streaming multiprocessors
  int maxThreadsPerBlock = 0;        ///< threads a block may have
  uint32_t sharedPerBlock = 0;       ///< without opting in (48 KB)
  uint32_t sharedPerBlockOptin = 0;  ///< with the function attribute (227 KB on sm_90)
  uint32_t sharedPerSm = 0;          ///< shared memory of one SM, in bytes
  size_t totalMemory = 0;            ///< global memory, in bytes
  /// The arch to compile for: "sm_" major minor ("sm_90").
  std::string arch() const { return "sm_" + std::to_string(major) + std::to_string(minor); }
};

/// What Device::get(ordinal).info() says, read from the driver without creating the device's
/// context (creating it takes ~0.1 s: a caller can prepare work meanwhile, such as compiling
/// for info().arch()). Throws as Device::get does.
DeviceInfo deviceInfo(int ordinal = 0);

namespace detail {
// A kernel's function in a loaded module (CUmodule, CUfunction as void*).
struct LoadedFunction {
  void* module = nullptr;
  void* function = nullptr;
  uint64_t violation = 0;  // checked variants: the device address of the violation record
};
}  // namespace detail

/// A loaded kernel function (Device::function). While any copy of it lives, its module stays
/// loaded, even when the device's module cache would evict it: a held Function never dangles.
class Function {
 public:
  /// No function: false.
  Function() = default;
  /// Whether it holds a loaded function.
  explicit operator bool() const { return loaded_ != nullptr; }
  void* handle() const { return loaded_ ? loaded_->function : nullptr; }  ///< the CUfunction
  /// Checked variants (Device::checkedFunction): the device address of the violation record
  /// (one unsigned long long); 0 otherwise.
  uint64_t violationRecord() const { return loaded_ ? loaded_->violation : 0; }

 private:
  friend class Device;
  explicit Function(std::shared_ptr<const detail::LoadedFunction> loaded)
      : loaded_(std::move(loaded)) {}
  std::shared_ptr<const detail::LoadedFunction> loaded_;
};

/// A device and its primary context (retained for the device's lifetime, made current on the
/// calling thread by every operation that needs it).
///
/// Kernels are loaded once per device and kept in a cache of loaded modules with a capacity
/// (moduleCapacity(), kDefaultModuleCapacity unless set): loading a module beyond it unloads
/// the least recently used one that no Function handle holds, so a long sweep over thousands of
/// kernels keeps a bounded number loaded. Modules that handles hold are never unloaded; the
/// cache then stays above its capacity until they are released. An evicted kernel is loaded
/// again when it is next launched (its binary from the kernel cache, normally without
/// compiling). Before unloading, the device's context is synchronized: a kernel of the module
/// may still be running.
class Device {
 public:
  /// Device `ordinal`; throws Error("no CUDA device: <why>") when there is none.
  static Device& get(int ordinal = 0);
  ~Device();  ///< unloads its modules and releases the primary context
  /// @{
  /// Not copyable: Device::get hands out the one Device of each ordinal.
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  /// @}

  const DeviceInfo& info() const { return info_; }  ///< what the driver says about it
  void makeCurrent() const;  ///< makes its context current on the calling thread
  void synchronize() const;  ///< waits for all work on the device to finish

  /// The loaded function of kernel k (compiled through the kernel cache for this device's arch,
  /// loaded once, with the dynamic shared memory limit raised where k needs more than 48 KB).
  /// A compile does not hold the device: other threads' launches go on meanwhile.
  Function function(const Kernel& k);
  /// The bounds-checked variant of k (LaunchOptions::checked; Kernel::checkedCuda), with the
  /// device address of its violation record (Function::violationRecord).
  Function checkedFunction(const Kernel& k);

  static constexpr size_t kDefaultModuleCapacity = 256;  ///< moduleCapacity() unless set
  /// At most this many modules stay loaded but for those Function handles hold (at least 1;
  /// else Error). Lowering it unloads the excess now.
  void setModuleCapacity(size_t modules);
  size_t moduleCapacity() const;  ///< see setModuleCapacity
  /// Modules loaded now.
  size_t loadedModules() const;

 private:
  explicit Device(int ordinal);
  struct Modules;  // the cache of loaded modules (runtime/device.cpp)
  Function load(const Kernel& k, bool checked);
  void unload(const detail::LoadedFunction& f);
  DeviceInfo info_;
  int handle_ = 0;
  void* context_ = nullptr;
  mutable std::mutex mutex_;
  std::unique_ptr<Modules> modules_;
};

/// A CUDA stream of a device (RAII): work queued on it runs in order, concurrently with other
/// streams' work.
class Stream {
 public:
  /// A new stream of d that does not synchronize with the default stream (non-blocking).
  explicit Stream(Device& d = Device::get());
  ~Stream();  ///< destroys the stream (work queued on it still completes)
  /// @{
  /// Not copyable: the stream is destroyed once.
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  /// @}
  void* handle() const { return stream_; }    ///< the CUstream
  Device& device() const { return device_; }  ///< the device it belongs to
  void synchronize() const;                   ///< waits for the work queued on it

 private:
  Device& device_;
  void* stream_ = nullptr;
};

/// A CUDA event of a device (RAII), for timing work on a stream.
class Event {
 public:
  explicit Event(Device& d = Device::get());  ///< a new event of d
  ~Event();                                   ///< destroys the event
  /// @{
  /// Not copyable: the event is destroyed once.
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  /// @}
  void record(const Stream* s = nullptr);  ///< records it on s (null: the default stream)
  void synchronize() const;                ///< waits until the recorded point is reached
  /// Milliseconds from `start` to this event (both recorded; waits for this one).
  float millisecondsSince(const Event& start) const;

 private:
  Device& device_;
  void* event_ = nullptr;
};

namespace detail {
uint64_t allocate(Device& d, size_t bytes);
void release(Device& d, uint64_t address) noexcept;
void copyToDevice(Device& d, uint64_t dst, const void* src, size_t bytes);
void copyToHost(Device& d, void* dst, uint64_t src, size_t bytes);
// Sets `count` elements of `elementBytes` bytes (1, 2, 4 or 8) from dst to the bytes at
// `element`, on `stream` (null: the default stream); `count` > 0.
void fill(Device& d, uint64_t dst, const void* element, size_t elementBytes, size_t count,
          const Stream* stream);
}  // namespace detail

/// A typed array in device memory (RAII). Pass it to launch as an argument: a non-const buffer
/// may be written by the kernel, a const one only read.
template <KernelScalar T>
class DeviceBuffer {
 public:
  /// An uninitialised buffer of `count` elements on d.
  explicit DeviceBuffer(size_t count, Device& d = Device::get())
      : device_(&d), count_(count), address_(count ? detail::allocate(d, count * sizeof(T)) : 0) {}
  /// A buffer on d holding a copy of `host`.
  explicit DeviceBuffer(std::span<const T> host, Device& d = Device::get())
      : DeviceBuffer(host.size(), d) {
    upload(host);
  }
  /// A buffer on d holding a copy of `host`.
  explicit DeviceBuffer(const std::vector<T>& host, Device& d = Device::get())
      : DeviceBuffer(std::span<const T>(host), d) {}
  /// Frees the memory.
  ~DeviceBuffer() {
    if (address_) detail::release(*device_, address_);
  }
  /// Takes o's memory; o is left empty.
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : device_(o.device_), count_(o.count_), address_(std::exchange(o.address_, 0)) {}
  /// Swaps with o: o frees this buffer's old memory.
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(device_, o.device_);
    std::swap(count_, o.count_);
    std::swap(address_, o.address_);
    return *this;
  }
  /// @{
  /// Not copyable: the memory is freed once (copy with download and upload).
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  /// @}

  size_t size() const { return count_; }         ///< its number of elements
  uint64_t address() const { return address_; }  ///< the CUdeviceptr of element 0 (0 if empty)

  /// Copy host data in; the sizes must match.
  void upload(std::span<const T> host) {
    checkSize("upload", host.size());
    if (count_) detail::copyToDevice(*device_, address_, host.data(), count_ * sizeof(T));
  }
  /// Copy host data in; the sizes must match.
  void upload(const std::vector<T>& host) { upload(std::span<const T>(host)); }
  /// Copy the contents out; the sizes must match.
  void download(std::span<T> host) const {
    checkSize("download", host.size());
    if (count_) detail::copyToHost(*device_, host.data(), address_, count_ * sizeof(T));
  }
  /// The contents, copied out.
  std::vector<T> download() const {
    std::vector<T> host(count_);
    download(std::span<T>(host));
    return host;
  }
  /// Sets every element to zero bits: fill(T{}) on the default stream.
  void zero() { fill(T{}); }

  /// Sets every element to `value`: any value of T, bit for bit (a NaN's payload included).
  ///
  /// The fill is a driver memset queued on `stream` (null: the default stream), as a launch
  /// is: it may still be running when fill returns, and the launches and copies queued after
  /// it on that stream see the values; so does download() after a fill on the default stream.
  /// After a fill on a Stream, synchronize it before reading the buffer elsewhere. A value
  /// whose bytes are all equal (zero, or 0xFF bytes to poison an output) is one byte-wise
  /// memset; another is a memset of the narrowest 2- or 4-byte pattern that repeats it, and an
  /// 8-byte value whose two halves differ is two strided 4-byte memsets (one per half).
  ///
  /// An empty buffer is left alone. Throws Error when the stream belongs to another device
  /// (nothing is set), CudaError when the driver fails.
  void fill(const T& value, const Stream* stream = nullptr) { fill(value, 0, count_, stream); }
  /// Sets the `count` elements from element `first` on to `value`, the others left as they
  /// are; as fill(value, stream) otherwise. Throws Error, setting nothing, when they do not all
  /// lie in the buffer (`count` 0 sets nothing anywhere up to the end).
  void fill(const T& value, size_t first, size_t count, const Stream* stream = nullptr) {
    if (first > count_ || count > count_ - first) {
      throw Error("DeviceBuffer::fill: the buffer holds " + std::to_string(count_) + " elements; " +
                  std::to_string(count) + " from element " + std::to_string(first) + " do not fit");
    }
    if (stream && &stream->device() != device_) {
      throw Error("DeviceBuffer::fill: the stream belongs to device " +
                  std::to_string(stream->device().info().ordinal) + "; the buffer to device " +
                  std::to_string(device_->info().ordinal));
    }
    if (count) {
      detail::fill(*device_, address_ + first * sizeof(T), &value, sizeof(T), count, stream);
    }
  }

  /// As a launch argument the kernel may write.
  operator KernelArg() & {  // NOLINT: buffers are passed where arguments are expected
    return KernelArg::deviceArray(scalarTypeOf<T>, address_, count_, true);
  }
  /// As a launch argument the kernel only reads.
  operator KernelArg() const& {  // NOLINT
    return KernelArg::deviceArray(scalarTypeOf<T>, address_, count_, false);
  }

 private:
  void checkSize(const char* what, size_t host) const {
    if (host != count_) {
      throw Error("DeviceBuffer::" + std::string(what) + ": the buffer holds " +
                  std::to_string(count_) + " elements; the host array has " + std::to_string(host));
    }
  }
  Device* device_;
  size_t count_;
  uint64_t address_;
};

/// How launch runs a kernel.
struct LaunchOptions {
  /// Blocks to launch: 0 launches the kernel's gridBlocks (one real block per virtual block).
  uint32_t blocks = 0;
  /// Cap the grid at what fills the device (occupancyBlocks); virtual blocks loop over it.
  bool fillDevice = false;
  const Stream* stream = nullptr;  ///< null: the default stream
  bool synchronize = true;         ///< wait for the kernel (and report its errors) before returning
  /// Bounds-checked: run the variant of the kernel (Kernel::checkedCuda) in which every write and
  /// atomic to a global array checks its index against the array's length, skips the access if
  /// it is out of bounds, and records the first such access; the launch then waits for the
  /// kernel and throws an Error naming the kernel, the array, the index and the length. For
  /// kernels whose writes go to data-dependent indices (a DMutable histogram, a scatter), which
  /// the launch checks cannot bound. Slower (a compare per write, a synchronize per launch).
  /// The kernel's postconditions (ensure) are checked too, each by a kernel of its own after
  /// this one; the first failing element is an Error naming the kernel and the contract.
  bool checked = false;
};

/// launch(k, args, options): run kernel k on device 0 (obsidian drives one device for now; a
/// stream of another device is refused). The arguments are checked against the
/// kernel's signature and preconditions (bindArguments), and the kernel against the device's
/// limits (threads per block, shared memory), before anything reaches the GPU; each failed
/// check is an Error and nothing is launched.
void launch(const Kernel& k, const std::vector<KernelArg>& args, const LaunchOptions& options = {});

/// Blocks of kernel k that are resident on the whole device at once (occupancy x SMs): the
/// grid size that fills the device for kernels whose blocks are virtualized.
uint32_t occupancyBlocks(const Kernel& k);

}  // namespace gpu
}  // namespace obsidian
