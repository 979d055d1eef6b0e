// Devices, contexts, streams, events and device memory (see include/obsidian/runtime.hpp).
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "codegen/emit_cuda.hpp"
#include "obsidian/cache.hpp"
#include "obsidian/runtime.hpp"
#include "runtime/driver.hpp"
#include "runtime/lru.hpp"

namespace obsidian::gpu {

int deviceCount() {
  const driver::Api* a = driver::api();
  if (!a) return 0;
  int n = 0;
  return a->cuDeviceGetCount(&n) == CUDA_SUCCESS ? n : 0;
}

bool available() { return deviceCount() > 0; }

std::string unavailableReason() { return driver::unavailableReason(); }

namespace {
CUdevice deviceHandle(int h) { return static_cast<CUdevice>(h); }
CUcontext ctx(void* c) { return static_cast<CUcontext>(c); }

int attribute(CUdevice d, CUdevice_attribute a) {
  int v = 0;
  OBSIDIAN_CU(cuDeviceGetAttribute, &v, a, d);
  return v;
}
}  // namespace

namespace {
// Device::get's and deviceInfo's Error when there is no device `ordinal`.
void checkOrdinal(int ordinal) {
  if (!driver::api()) throw Error("no CUDA device: " + driver::unavailableReason());
  const int n = deviceCount();
  if (ordinal < 0 || ordinal >= n) {
    throw Error("no CUDA device " + std::to_string(ordinal) + ": the machine has " +
                std::to_string(n));
  }
}
}  // namespace

DeviceInfo deviceInfo(int ordinal) {
  checkOrdinal(ordinal);
  CUdevice d = 0;
  OBSIDIAN_CU(cuDeviceGet, &d, ordinal);
  DeviceInfo info;
  char name[256] = {};
  OBSIDIAN_CU(cuDeviceGetName, name, sizeof name, d);
  info.ordinal = ordinal;
  info.name = name;
  info.major = attribute(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.minor = attribute(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.smCount = attribute(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.maxThreadsPerBlock = attribute(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.sharedPerBlock =
      static_cast<uint32_t>(attribute(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  info.sharedPerBlockOptin =
      static_cast<uint32_t>(attribute(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  info.sharedPerSm =
      static_cast<uint32_t>(attribute(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
  OBSIDIAN_CU(cuDeviceTotalMem, &info.totalMemory, d);
  return info;
}

Device& Device::get(int ordinal) {
  // Never destroyed: buffers and streams in static objects may outlive any order of exit.
  static std::mutex& m = *new std::mutex;
  static std::map<int, std::unique_ptr<Device>>& devices =
      *new std::map<int, std::unique_ptr<Device>>;
  const std::lock_guard lock(m);
  checkOrdinal(ordinal);
  auto& d = devices[ordinal];
  if (!d) d.reset(new Device(ordinal));
  return *d;
}

// The loaded modules of a device: an LRU by load number (one per module), and the two ways a
// kernel finds its module without loading it again.
struct Device::Modules {
  struct Entry {
    std::shared_ptr<detail::LoadedFunction> loaded;  // Function handles share it
    std::string key;                                 // in byKey
    std::vector<uint64_t> kernels;                   // in byKernel
  };
  explicit Modules(Device& d)
      : lru(
            kDefaultModuleCapacity,
            // Only the cache holds it: no handle can be launched with it any more. (A new
            // handle is only made under the device's mutex, from the cache.)
            [](const Entry& e) { return e.loaded.use_count() > 1; },
            [this, &d](const uint64_t&, Entry& e) {
              byKey.erase(e.key);
              for (uint64_t id : e.kernels) byKernel.erase(id);
              d.unload(*e.loaded);
            }) {}
  Lru<uint64_t, Entry> lru;
  uint64_t loads = 0;
  std::unordered_map<std::string, uint64_t> byKey;  // kernel cache key -> load number
  // 2 * Kernel::id() + checked -> load number: no hashing of the source per launch.
  std::unordered_map<uint64_t, uint64_t> byKernel;
};

Device::Device(int ordinal)
    : info_(deviceInfo(ordinal)), modules_(std::make_unique<Modules>(*this)) {
  CUdevice d = 0;
  OBSIDIAN_CU(cuDeviceGet, &d, ordinal);
  handle_ = static_cast<int>(d);
  CUcontext c = nullptr;
  OBSIDIAN_CU(cuDevicePrimaryCtxRetain, &c, d);
  context_ = c;
}

Device::~Device() {
  try {
    modules_->lru.clear();
  } catch (...) {  // leaving anyway: the context is released below
  }
  driver::api()->cuDevicePrimaryCtxRelease(deviceHandle(handle_));
}

void Device::makeCurrent() const { OBSIDIAN_CU(cuCtxSetCurrent, ctx(context_)); }

void Device::synchronize() const {
  makeCurrent();
  OBSIDIAN_CU(cuCtxSynchronize);
}

Function Device::function(const Kernel& k) { return load(k, false); }

Function Device::checkedFunction(const Kernel& k) { return load(k, true); }

void Device::setModuleCapacity(size_t modules) {
  if (modules == 0) {
    throw Error("Device::setModuleCapacity(0): at least one module must stay loaded");
  }
  const std::lock_guard lock(mutex_);
  modules_->lru.setCapacity(modules);
}

size_t Device::moduleCapacity() const {
  const std::lock_guard lock(mutex_);
  return modules_->lru.capacity();
}

size_t Device::loadedModules() const {
  const std::lock_guard lock(mutex_);
  return modules_->lru.size();
}

void Device::unload(const detail::LoadedFunction& f) {
  makeCurrent();
  // Launches are asynchronous: a kernel of the module may still be running.
  OBSIDIAN_CU(cuCtxSynchronize);
  OBSIDIAN_CU(cuModuleUnload, static_cast<CUmodule>(f.module));
}

// The lock guards the maps and the loading of modules, not the compiling of a kernel (NVRTC:
// up to seconds): a thread launching a loaded kernel never waits for another thread's compile
// (a sweep times its runs while its compile threads ask the occupancy of new kernels). Two
// threads loading one new kernel compile it once (the kernel cache shares the compile); the
// second to lock finds the first's module.
Function Device::load(const Kernel& k, bool checked) {
  Modules& m = *modules_;
  const uint64_t id = 2 * k.id() + (checked ? 1 : 0);
  // The loaded module of `key`, now known to serve kernel `id`; null when none is loaded.
  const auto loaded = [&](const std::string& key) -> std::optional<Function> {
    if (const auto it = m.byKey.find(key); it != m.byKey.end()) {
      if (Modules::Entry* e = m.lru.find(it->second)) {
        // (another thread may have found it for this kernel just before: one entry each)
        const auto [known, added] = m.byKernel.try_emplace(id, it->second);
        if (added || known->second != it->second) {
          known->second = it->second;
          e->kernels.push_back(id);
        }
        return Function(e->loaded);
      }
    }
    return std::nullopt;
  };
  {
    const std::lock_guard lock(mutex_);
    if (const auto it = m.byKernel.find(id); it != m.byKernel.end()) {
      if (Modules::Entry* e = m.lru.find(it->second)) return Function(e->loaded);
    }
  }
  CompileOptions arch;
  arch.arch = info_.arch();
  const CompileOptions options = k.compileOptions(arch);
  const std::string* source = &k.cuda();
  if (checked) {
    // (emitted on its first use, into k: under the lock, one thread at a time, as checked
    // launches are rare; k.cuda() is emitted when k is made)
    const std::lock_guard lock(mutex_);
    source = &k.checkedCuda();
  }
  std::string key = KernelCache::key(*source, options);
  {
    const std::lock_guard lock(mutex_);
    if (std::optional<Function> f = loaded(key)) return *f;
  }
  const CompileResult binary = KernelCache::global().get(*source, k.name(), options);
  const std::lock_guard lock(mutex_);
  if (std::optional<Function> f = loaded(key)) return *f;  // loaded meanwhile
  makeCurrent();
  CUmodule module = nullptr;
  OBSIDIAN_CU_KERNEL(k.name(), cuModuleLoadData, &module, binary.cubin.data());
  CUfunction f = nullptr;
  CUdeviceptr violation = 0;
  try {
    OBSIDIAN_CU_KERNEL(k.name(), cuModuleGetFunction, &f, module, k.name().c_str());
    if (k.sharedBytes() > info_.sharedPerBlock) {
      OBSIDIAN_CU_KERNEL(k.name(), cuFuncSetAttribute, f,
                         CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                         static_cast<int>(k.sharedBytes()));
    }
    if (checked) {
      size_t bytes = 0;
      OBSIDIAN_CU_KERNEL(k.name(), cuModuleGetGlobal, &violation, &bytes, module,
                         violationSymbol(k.ir()).c_str());
    }
  } catch (...) {
    driver::api()->cuModuleUnload(module);
    throw;
  }
  const uint64_t number = m.loads++;
  m.byKey[key] = number;
  m.byKernel[id] = number;
  Modules::Entry entry{std::make_shared<detail::LoadedFunction>(
                           detail::LoadedFunction{module, f, static_cast<uint64_t>(violation)}),
                       std::move(key),
                       {id}};
  // The handle is taken before the insert trims, so that this module counts as in use.
  Function handle(entry.loaded);
  m.lru.insert(number, std::move(entry));
  return handle;
}

Stream::Stream(Device& d) : device_(d) {
  d.makeCurrent();
  CUstream s = nullptr;
  OBSIDIAN_CU(cuStreamCreate, &s, CU_STREAM_NON_BLOCKING);
  stream_ = s;
}
Stream::~Stream() { driver::api()->cuStreamDestroy(static_cast<CUstream>(stream_)); }
void Stream::synchronize() const {
  device_.makeCurrent();
  OBSIDIAN_CU(cuStreamSynchronize, static_cast<CUstream>(stream_));
}

Event::Event(Device& d) : device_(d) {
  d.makeCurrent();
  CUevent e = nullptr;
  OBSIDIAN_CU(cuEventCreate, &e, CU_EVENT_DEFAULT);
  event_ = e;
}
Event::~Event() { driver::api()->cuEventDestroy(static_cast<CUevent>(event_)); }
void Event::record(const Stream* s) {
  device_.makeCurrent();
  OBSIDIAN_CU(cuEventRecord, static_cast<CUevent>(event_),
              s ? static_cast<CUstream>(s->handle()) : nullptr);
}
void Event::synchronize() const { OBSIDIAN_CU(cuEventSynchronize, static_cast<CUevent>(event_)); }
float Event::millisecondsSince(const Event& start) const {
  synchronize();
  float ms = 0;
  OBSIDIAN_CU(cuEventElapsedTime, &ms, static_cast<CUevent>(start.event_),
              static_cast<CUevent>(event_));
  return ms;
}

namespace detail {
uint64_t allocate(Device& d, size_t bytes) {
  d.makeCurrent();
  CUdeviceptr p = 0;
  OBSIDIAN_CU(cuMemAlloc, &p, bytes);
  return p;
}
void release(Device& d, uint64_t address) noexcept {
  if (driver::api()->cuCtxSetCurrent(ctx(nullptr)) == CUDA_SUCCESS) {
    try {
      d.makeCurrent();
    } catch (...) {
      return;
    }
  }
  driver::api()->cuMemFree(static_cast<CUdeviceptr>(address));
}
void copyToDevice(Device& d, uint64_t dst, const void* src, size_t bytes) {
  d.makeCurrent();
  OBSIDIAN_CU(cuMemcpyHtoD, static_cast<CUdeviceptr>(dst), src, bytes);
}
void copyToHost(Device& d, void* dst, uint64_t src, size_t bytes) {
  d.makeCurrent();
  OBSIDIAN_CU(cuMemcpyDtoH, dst, static_cast<CUdeviceptr>(src), bytes);
}
void fill(Device& d, uint64_t dst, const void* element, size_t elementBytes, size_t count,
          const Stream* stream) {
  // The element's bytes as the device stores them (little-endian, as the host).
  uint64_t bits = 0;
  std::memcpy(&bits, element, elementBytes);
  // The narrowest pattern that repeats the value: a value whose halves are equal is its half,
  // twice as many times (every byte equal: one byte-wise memset).
  size_t width = elementBytes;
  while (width > 1) {
    const unsigned halfBits = static_cast<unsigned>(width) * 4;
    const uint64_t mask = (uint64_t{1} << halfBits) - 1;
    if ((bits & mask) != ((bits >> halfBits) & mask)) break;
    bits &= mask;
    width /= 2;
    count *= 2;
  }
  d.makeCurrent();
  const auto p = static_cast<CUdeviceptr>(dst);
  const auto s = stream ? static_cast<CUstream>(stream->handle()) : nullptr;
  const auto low = static_cast<unsigned>(bits), high = static_cast<unsigned>(bits >> 32);
  switch (width) {
    case 1:
      if (stream) {
        OBSIDIAN_CU(cuMemsetD8Async, p, static_cast<unsigned char>(bits), count, s);
      } else {
        OBSIDIAN_CU(cuMemsetD8, p, static_cast<unsigned char>(bits), count);
      }
      break;
    case 2:
      if (stream) {
        OBSIDIAN_CU(cuMemsetD16Async, p, static_cast<unsigned short>(bits), count, s);
      } else {
        OBSIDIAN_CU(cuMemsetD16, p, static_cast<unsigned short>(bits), count);
      }
      break;
    case 4:
      if (stream) {
        OBSIDIAN_CU(cuMemsetD32Async, p, low, count, s);
      } else {
        OBSIDIAN_CU(cuMemsetD32, p, low, count);
      }
      break;
    case 8:
      // No 8-byte memset: each half as a column of one 4-byte value per 8-byte row.
      if (stream) {
        OBSIDIAN_CU(cuMemsetD2D32Async, p, 8, low, 1, count, s);
        OBSIDIAN_CU(cuMemsetD2D32Async, p + 4, 8, high, 1, count, s);
      } else {
        OBSIDIAN_CU(cuMemsetD2D32, p, 8, low, 1, count);
        OBSIDIAN_CU(cuMemsetD2D32, p + 4, 8, high, 1, count);
      }
      break;
    default:
      throw Error("DeviceBuffer::fill: elements of " + std::to_string(elementBytes) +
                  " bytes (1, 2, 4 or 8 expected)");
  }
}
}  // namespace detail

}  // namespace obsidian::gpu
