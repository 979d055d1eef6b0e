// The GPU runtime: devices, streams, events, typed device buffers, and launching captured
// kernels on a real device. The CUDA driver is loaded with dlopen on first use: without a
// driver or GPU everything here still links and loads, and using a device throws an Error
// ("no CUDA device: ...").
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

// A CUDA call failed: the message names the call, the CUDA error and the kernel (if any).
class CudaError : public Error {
 public:
  CudaError(const std::string& message, int code) : Error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

namespace gpu {

// Number of usable CUDA devices: 0 where there is no driver or device (never throws).
int deviceCount();
bool available();
// Why no device can be used ("" when one can).
std::string unavailableReason();

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int smCount = 0;
  int maxThreadsPerBlock = 0;
  uint32_t sharedPerBlock = 0;       // without opting in (48 KB)
  uint32_t sharedPerBlockOptin = 0;  // with the function attribute (227 KB on sm_90)
  uint32_t sharedPerSm = 0;
  size_t totalMemory = 0;
  std::string arch() const { return "sm_" + std::to_string(major) + std::to_string(minor); }
};

// What Device::get(ordinal).info() says, read from the driver without creating the device's
// context (creating it takes ~0.1 s: a caller can prepare work meanwhile, such as compiling
// for info().arch()). Throws as Device::get does.
DeviceInfo deviceInfo(int ordinal = 0);

namespace detail {
// A kernel's function in a loaded module (CUmodule, CUfunction as void*).
struct LoadedFunction {
  void* module = nullptr;
  void* function = nullptr;
  uint64_t violation = 0;  // checked variants: the device address of the violation record
};
}  // namespace detail

// A loaded kernel function (Device::function). While any copy of it lives, its module stays
// loaded, even when the device's module cache would evict it: a held Function never dangles.
class Function {
 public:
  Function() = default;
  explicit operator bool() const { return loaded_ != nullptr; }
  void* handle() const { return loaded_ ? loaded_->function : nullptr; }  // the CUfunction
  // Checked variants (Device::checkedFunction): the device address of the violation record
  // (one unsigned long long); 0 otherwise.
  uint64_t violationRecord() const { return loaded_ ? loaded_->violation : 0; }

 private:
  friend class Device;
  explicit Function(std::shared_ptr<const detail::LoadedFunction> loaded)
      : loaded_(std::move(loaded)) {}
  std::shared_ptr<const detail::LoadedFunction> loaded_;
};

// A device and its primary context (retained for the device's lifetime, made current on the
// calling thread by every operation that needs it).
//
// Kernels are loaded once per device and kept in a cache of loaded modules with a capacity
// (moduleCapacity(), kDefaultModuleCapacity unless set): loading a module beyond it unloads
// the least recently used one that no Function handle holds, so a long sweep over thousands of
// kernels keeps a bounded number loaded. Modules that handles hold are never unloaded; the
// cache then stays above its capacity until they are released. An evicted kernel is loaded
// again when it is next launched (its binary from the kernel cache, normally without
// compiling). Before unloading, the device's context is synchronized: a kernel of the module
// may still be running.
class Device {
 public:
  // Device `ordinal`; throws Error("no CUDA device: <why>") when there is none.
  static Device& get(int ordinal = 0);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const { return info_; }
  void makeCurrent() const;
  void synchronize() const;

  // The loaded function of kernel k (compiled through the kernel cache for this device's arch,
  // loaded once, with the dynamic shared memory limit raised where k needs more than 48 KB).
  // A compile does not hold the device: other threads' launches go on meanwhile.
  Function function(const Kernel& k);
  // The bounds-checked variant of k (LaunchOptions::checked; Kernel::checkedCuda), with the
  // device address of its violation record (Function::violationRecord).
  Function checkedFunction(const Kernel& k);

  static constexpr size_t kDefaultModuleCapacity = 256;
  // At most this many modules stay loaded but for those Function handles hold (at least 1;
  // else Error). Lowering it unloads the excess now.
  void setModuleCapacity(size_t modules);
  size_t moduleCapacity() const;
  // Modules loaded now.
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

class Stream {
 public:
  explicit Stream(Device& d = Device::get());
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void* handle() const { return stream_; }
  Device& device() const { return device_; }
  void synchronize() const;

 private:
  Device& device_;
  void* stream_ = nullptr;
};

class Event {
 public:
  explicit Event(Device& d = Device::get());
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(const Stream* s = nullptr);
  void synchronize() const;
  // Milliseconds from `start` to this event (both recorded; waits for this one).
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
void setBytes(Device& d, uint64_t dst, uint8_t value, size_t bytes);
}  // namespace detail

// A typed array in device memory (RAII). Pass it to launch as an argument: a non-const buffer
// may be written by the kernel, a const one only read.
template <KernelScalar T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t count, Device& d = Device::get())
      : device_(&d), count_(count), address_(count ? detail::allocate(d, count * sizeof(T)) : 0) {}
  explicit DeviceBuffer(std::span<const T> host, Device& d = Device::get())
      : DeviceBuffer(host.size(), d) {
    upload(host);
  }
  explicit DeviceBuffer(const std::vector<T>& host, Device& d = Device::get())
      : DeviceBuffer(std::span<const T>(host), d) {}
  ~DeviceBuffer() {
    if (address_) detail::release(*device_, address_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : device_(o.device_), count_(o.count_), address_(std::exchange(o.address_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(device_, o.device_);
    std::swap(count_, o.count_);
    std::swap(address_, o.address_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  size_t size() const { return count_; }
  uint64_t address() const { return address_; }

  // Copy host data in; the sizes must match.
  void upload(std::span<const T> host) {
    checkSize("upload", host.size());
    if (count_) detail::copyToDevice(*device_, address_, host.data(), count_ * sizeof(T));
  }
  void upload(const std::vector<T>& host) { upload(std::span<const T>(host)); }
  // Copy the contents out; the sizes must match.
  void download(std::span<T> host) const {
    checkSize("download", host.size());
    if (count_) detail::copyToHost(*device_, host.data(), address_, count_ * sizeof(T));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    download(std::span<T>(host));
    return host;
  }
  void zero() {
    if (count_) detail::setBytes(*device_, address_, 0, count_ * sizeof(T));
  }

  operator KernelArg() & {  // NOLINT: buffers are passed where arguments are expected
    return KernelArg::deviceArray(scalarTypeOf<T>, address_, count_, true);
  }
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

struct LaunchOptions {
  // Blocks to launch: 0 launches the kernel's gridBlocks (one real block per virtual block).
  uint32_t blocks = 0;
  // Cap the grid at what fills the device (occupancyBlocks); virtual blocks loop over it.
  bool fillDevice = false;
  const Stream* stream = nullptr;  // null: the default stream
  bool synchronize = true;         // wait for the kernel (and report its errors) before returning
  // Bounds-checked: run the variant of the kernel (Kernel::checkedCuda) in which every write and
  // atomic to a global array checks its index against the array's length, skips the access if
  // it is out of bounds, and records the first such access; the launch then waits for the
  // kernel and throws an Error naming the kernel, the array, the index and the length. For
  // kernels whose writes go to data-dependent indices (a DMutable histogram, a scatter), which
  // the launch checks cannot bound. Slower (a compare per write, a synchronize per launch).
  // The kernel's postconditions (ensure) are checked too, each by a kernel of its own after
  // this one; the first failing element is an Error naming the kernel and the contract.
  bool checked = false;
};

// launch(k, args, options): run kernel k on device 0 (obsidian drives one device for now; a
// stream of another device is refused). The arguments are checked against the
// kernel's signature and preconditions (bindArguments), and the kernel against the device's
// limits (threads per block, shared memory), before anything reaches the GPU; each failed
// check is an Error and nothing is launched.
void launch(const Kernel& k, const std::vector<KernelArg>& args, const LaunchOptions& options = {});

// Blocks of kernel k that are resident on the whole device at once (occupancy x SMs): the
// grid size that fills the device for kernels whose blocks are virtualized.
uint32_t occupancyBlocks(const Kernel& k);

}  // namespace gpu
}  // namespace obsidian
