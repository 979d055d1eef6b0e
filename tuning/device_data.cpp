// The device twins of a sweep's host data (device_data.hpp): random inputs, plain reference
// kernels, the comparison of outputs, and the disk store of references.
#include "device_data.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <obsidian/cache.hpp>
#include <obsidian/device/reduce.hpp>

namespace tuning {

namespace {

using namespace obsidian;
namespace gpu = obsidian::gpu;

// The plain kernels' block size: they are not tuned, only run once per problem.
constexpr uint32_t kThreads = 128;
// Elements per segment of the whole-array references (a thread each).
constexpr uint32_t kWholeSegment = 4096;

// ------------------------------------------------------------------ random elements
// The formula of Random on an Exp<uint64_t> or a uint64_t r.
template <class T, class U>
auto element(const U& r, Random formula, const U& param) {
  constexpr bool onDevice = !std::is_same_v<U, uint64_t>;
  using Out = std::conditional_t<onDevice, Exp<T>, T>;
  const auto to = [](const auto& x) {
    if constexpr (onDevice) {
      return cast<T>(x);
    } else {
      return static_cast<T>(x);
    }
  };
  const auto word = [](const auto& x) {
    if constexpr (onDevice) {
      return cast<uint32_t>(x);
    } else {
      return static_cast<uint32_t>(x);
    }
  };
  switch (formula) {
    case Random::Words: return Out(to(word(r % param) + 1u));
    case Random::SmallInts: {
      const auto k = word(r % U(16ull)) + 1u;
      if constexpr (!std::is_same_v<T, float>) {
        return Out(to(k));
      } else if constexpr (onDevice) {
        return ifThenElse(k <= 8u, -cast<float>(k), cast<float>(k - 8u));
      } else {
        return k <= 8 ? -static_cast<float>(k) : static_cast<float>(k - 8);
      }
    }
    case Random::Bits:
      if constexpr (std::is_same_v<T, float>) {
        return Out(to(r >> U(40ull)) / 16777216.0f);
      } else {
        return Out(to(r));
      }
    case Random::Modulo: return Out(to(r % param));
    case Random::Signed:
      if constexpr (std::is_same_v<T, float>) {
        return Out(to(r >> U(40ull)) / 8388608.0f - 1.0f);
      } else {
        return Out(to(r));
      }
  }
  OBSIDIAN_ASSERT(false, "a Random formula");
  return Out(to(r));
}

void checkFormula(Random formula, uint64_t param) {
  if ((formula == Random::Words || formula == Random::Modulo) && param == 0) {
    throw Error("random data: Words and Modulo need a non-zero parameter");
  }
}

template <class T>
Kernel makeRandomKernel(Random formula) {
  return capture(std::string("random") + typeName<T>(), kThreads,
                 [formula](EWord32 n, EWord64 base, EWord64 param) {
                   return push<Grid>(DPull<Exp<T>>(n, [=](const EWord32& i) {
                     return element<T>(mix64(base + cast<uint64_t>(i)), formula, param);
                   }));
                 });
}

// ------------------------------------------------------------------ plain references
// Thread s of the grid, for s below count, runs body(t, s).
template <class T, class Body>
DPush<Grid, Exp<T>> perThread(const EWord32& length, const EWord32& count, Body body) {
  return DPush<Grid, Exp<T>>(length, [=](const Program<Grid>& g, const Writer<Exp<T>>& w) {
    g.distrPar((count + (kThreads - 1)) / kThreads,
               [&](const Program<Block>& b, const EWord32& bid) {
                 b.forAll(kThreads, [&](const Program<Thread>& t, const EWord32& tid) {
                   const EWord32 s = bid * kThreads + tid;
                   t.cond(s < count, [&](const Program<Thread>& u) { body(u, s, w); });
                 });
               });
  });
}

// Thread s folds segment s in order: one sum per segment, or (scan) every prefix of it.
template <class T>
Kernel makeSegmentFold(bool scan) {
  return capture(
      std::string(scan ? "referenceSegmentScans" : "referenceSegmentSums") + typeName<T>(),
      kThreads, [scan](EWord32 segment, DPull<Exp<T>> in) {
        const EWord32 n = len(in);
        const EWord32 count = n / segment + ifThenElse(n % segment != 0u, EWord32(1u), EWord32(0u));
        return perThread<T>(scan ? n : count, count,
                            [=](const Program<Thread>& t, const EWord32& s, const auto& w) {
                              const EWord32 first = s * segment;
                              const Exp<T> acc = t.declare(Exp<T>(T{0}));
                              t.seqFor(min(segment, n - first),
                                       [&](const Program<Thread>& u, const EWord32& j) {
                                         u.assign(acc, acc + in[first + j]);
                                         if (scan) w(u, acc, first + j);
                                       });
                              if (!scan) w(t, acc, s);
                            });
      });
}

// local[i] + offsets[i / segment], less in[i] for an exclusive scan.
template <class T>
Kernel makeAddOffsets() {
  return capture(std::string("referenceAddOffsets") + typeName<T>(), kThreads,
                 [](EWord32 segment, EWord32 exclusive, DPull<Exp<T>> local, DPull<Exp<T>> offsets,
                    DPull<Exp<T>> in) {
                   return push<Grid>(DPull<Exp<T>>(len(local), [=](const EWord32& i) {
                     return local[i] + offsets[i / segment] -
                            ifThenElse(exclusive != 0u, in[i], Exp<T>(T{0}));
                   }));
                 });
}

template <class T>
Kernel makeTranspose() {
  return capture(std::string("referenceTranspose") + typeName<T>(), kThreads,
                 [](EWord32 rows, EWord32 cols, DPull<Exp<T>> in) {
                   return push<Grid>(DPull<Exp<T>>(len(in), [=](const EWord32& i) {
                     return in[(i % rows) * cols + i / rows];  // out[c * rows + r] = in(r, c)
                   }));
                 });
}

// Pixel i = row * width + column of examples/mandelbrot's image, as its mandelReference
// computes it: the same float operations in the same order, none contracted (--fmad=false).
Kernel makeMandelbrot() {
  CaptureOptions o;
  o.nvrtcOptions = {"--fmad=false"};
  return capture(
      "referenceMandelbrot", kThreads,
      [](EWord32 width, EWord32 height) {
        const EWord32 n = width * height;
        return perThread<uint8_t>(
            n, n, [=](const Program<Thread>& t, const EWord32& i, const auto& w) {
              const EFloat xmax(1.2f), xmin(-2.0f), ymax(1.2f), ymin(-1.2f);
              const EFloat deltaP = (xmax - xmin) / cast<float>(width);
              const EFloat deltaQ = (ymax - ymin) / cast<float>(height);
              const EFloat row = cast<float>(i / width), column = cast<float>(i % width);
              const EFloat x = t.declare(EFloat(0.0f)), y = t.declare(EFloat(0.0f));
              const EWord32 iter = t.declare(EWord32(1u));
              t.seqWhile(x * x + y * y < 4.0f && iter < 512u, [&](const Program<Thread>& u) {
                const EFloat xsq = x * x, ysq = y * y;
                // (variables: an expression of x read after x's assignment would read the new x)
                const EFloat nx = u.declare(xsq - ysq + (xmin + column * deltaP));
                const EFloat ny = u.declare(2.0f * x * y + (ymax - row * deltaQ));
                u.assign(x, nx);
                u.assign(y, ny);
                u.assign(iter, iter + 1u);
              });
              w(t, cast<uint8_t>((iter % 16u) * 16u), i);
            });
      },
      o);
}

// Mismatching words, counted by the device layer's one-launch reduction.
Kernel makeDifferingWords(uint32_t blocks) {
  return capture(
      "differingWords", reducePolicy().threads, [blocks](DPull<EWord32> got, DPull<EWord32> want) {
        return transformReduceAll<uint32_t>(
            Sum{}, 0u, [](const EWord32& a, const EWord32& b) { return cast<uint32_t>(a != b); },
            reducePolicy(), blocks, got, want);
      });
}

template <class T>
ScalarType scalarOf() {
  return scalarTypeOf<T>;
}

}  // namespace

Kernel kernelOnce(const std::string& key, const std::function<Kernel()>& make) {
  static std::mutex mutex;
  static std::map<std::string, Kernel> made;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = made.find(key);
  if (it == made.end()) it = made.emplace(key, make()).first;
  return it->second;
}

uint32_t countOnGpu(const Kernel& k, std::vector<KernelArg> args) {
  // One word for the process, never freed: a buffer per call cost a cuMemAlloc and a
  // cuMemFree (which waits for the device) per check.
  static std::mutex mutex;
  static gpu::DeviceBuffer<uint32_t>* word = nullptr;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!word) word = new gpu::DeviceBuffer<uint32_t>(1);
  word->zero();
  args.emplace_back(*word);
  gpu::launch(k, args);
  uint32_t count = 0;
  word->download(std::span<uint32_t>(&count, 1));
  return count;
}

// ------------------------------------------------------------------ random data
template <class T>
std::vector<T> randomOnHost(size_t n, uint64_t seed, Random formula, uint64_t param) {
  checkFormula(formula, param);
  std::vector<T> v(n);
  const uint64_t base = splitmix64(seed);
  for (size_t i = 0; i < n; ++i) v[i] = element<T>(splitmix64(base + i), formula, param);
  return v;
}

Kernel randomKernel(ScalarType type, Random formula) {
  switch (type) {
    case ScalarType::U8: return makeRandomKernel<uint8_t>(formula);
    case ScalarType::U32: return makeRandomKernel<uint32_t>(formula);
    case ScalarType::F32: return makeRandomKernel<float>(formula);
    default:
      throw Error("randomKernel: u8, u32 or f32 elements; got " + std::string(cudaTypeName(type)));
  }
}

template <class T>
void randomOnGpu(gpu::DeviceBuffer<T>& out, uint64_t seed, Random formula, uint64_t param) {
  checkFormula(formula, param);
  if (out.size() == 0) return;
  if (out.size() > UINT32_MAX) throw Error("randomOnGpu: at most 2^32 - 1 elements");
  const Kernel k = kernelOnce("random" + typeName<T>() + std::to_string(static_cast<int>(formula)),
                              [&] { return randomKernel(scalarOf<T>(), formula); });
  gpu::launch(k, {static_cast<uint32_t>(out.size()), splitmix64(seed), param, out});
}

// ------------------------------------------------------------------ comparing
uint64_t differingWordsOnGpu(uint64_t got, uint64_t want, size_t bytes) {
  uint64_t differ = 0;
  const size_t words = bytes / 4, tail = bytes % 4;
  if (words > 0) {
    if (words > UINT32_MAX) throw Error("differingWordsOnGpu: at most 2^32 - 1 words");
    const Kernel k = kernelOnce("differingWords", [] {
      return makeDifferingWords(gpu::occupancyBlocks(makeDifferingWords(1)));
    });
    differ += countOnGpu(k, {KernelArg::deviceArray(ScalarType::U32, got, words, false),
                             KernelArg::deviceArray(ScalarType::U32, want, words, false)});
  }
  if (tail > 0) {
    uint8_t a[4] = {}, b[4] = {};
    gpu::Device& d = gpu::Device::get();
    gpu::detail::copyToHost(d, a, got + words * 4, tail);
    gpu::detail::copyToHost(d, b, want + words * 4, tail);
    differ += std::memcmp(a, b, tail) != 0;
  }
  return differ;
}

// ------------------------------------------------------------------ references
Kernel segmentSumsKernel(ScalarType type) {
  if (type == ScalarType::U32) return makeSegmentFold<uint32_t>(false);
  if (type == ScalarType::F32) return makeSegmentFold<float>(false);
  throw Error("segmentSumsKernel: u32 or f32 elements; got " + std::string(cudaTypeName(type)));
}
Kernel segmentScansKernel(ScalarType type) {
  if (type == ScalarType::U32) return makeSegmentFold<uint32_t>(true);
  if (type == ScalarType::F32) return makeSegmentFold<float>(true);
  throw Error("segmentScansKernel: u32 or f32 elements; got " + std::string(cudaTypeName(type)));
}

namespace {
void checkSegment(uint32_t segment, size_t n, const char* what) {
  if (segment == 0) throw Error(std::string(what) + ": a segment of 0 elements");
  if (n > UINT32_MAX - segment) throw Error(std::string(what) + ": at most 2^32 - 1 elements");
}
}  // namespace

template <class T>
gpu::DeviceBuffer<T> segmentSumsOnGpu(const gpu::DeviceBuffer<T>& in, uint32_t segment) {
  checkSegment(segment, in.size(), "segmentSumsOnGpu");
  gpu::DeviceBuffer<T> out((in.size() + segment - 1) / segment);
  if (out.size() == 0) return out;
  const Kernel k =
      kernelOnce("sums" + typeName<T>(), [] { return segmentSumsKernel(scalarOf<T>()); });
  gpu::launch(k, {segment, in, out});
  return out;
}

template <class T>
gpu::DeviceBuffer<T> segmentScansOnGpu(const gpu::DeviceBuffer<T>& in, uint32_t segment) {
  checkSegment(segment, in.size(), "segmentScansOnGpu");
  gpu::DeviceBuffer<T> out(in.size());
  if (out.size() == 0) return out;
  const Kernel k =
      kernelOnce("scans" + typeName<T>(), [] { return segmentScansKernel(scalarOf<T>()); });
  gpu::launch(k, {segment, in, out});
  return out;
}

// Segments scanned on the device, their sums' exclusive prefixes on the host (one per 4096
// elements), added on the device.
template <class T>
gpu::DeviceBuffer<T> scanOnGpu(const gpu::DeviceBuffer<T>& in, bool exclusive) {
  gpu::DeviceBuffer<T> local = segmentScansOnGpu(in, kWholeSegment);
  if (in.size() == 0) return local;
  std::vector<T> offsets = segmentSumsOnGpu(in, kWholeSegment).download();
  T acc{0};
  for (T& o : offsets) o = std::exchange(acc, static_cast<T>(acc + o));
  const gpu::DeviceBuffer<T> dOffsets(offsets);
  gpu::DeviceBuffer<T> out(in.size());
  const Kernel k = kernelOnce("offsets" + typeName<T>(), [] { return makeAddOffsets<T>(); });
  gpu::launch(k, {kWholeSegment, uint32_t{exclusive}, local, dOffsets, in, out});
  return out;
}

// Segment sums on the device, folded on the host in 64-bit integers (u32: modulo 2^32; the
// small-integer floats: exact), as the host references fold.
template <class T>
T sumOnGpu(const gpu::DeviceBuffer<T>& in) {
  int64_t s = 0;
  for (T x : segmentSumsOnGpu(in, kWholeSegment).download()) s += static_cast<int64_t>(x);
  return static_cast<T>(std::is_same_v<T, float> ? s : s & 0xffffffffll);
}

template <class T>
gpu::DeviceBuffer<T> transposeOnGpu(const gpu::DeviceBuffer<T>& in, uint32_t rows, uint32_t cols) {
  if (size_t{rows} * cols != in.size()) {
    throw Error("transposeOnGpu: a " + std::to_string(rows) + " x " + std::to_string(cols) +
                " matrix has " + std::to_string(size_t{rows} * cols) + " elements; got " +
                std::to_string(in.size()));
  }
  gpu::DeviceBuffer<T> out(in.size());
  if (out.size() == 0) return out;
  const Kernel k = kernelOnce("transpose" + typeName<T>(), [] { return makeTranspose<T>(); });
  gpu::launch(k, {rows, cols, in, out});
  return out;
}

Kernel mandelbrotKernel() { return makeMandelbrot(); }

gpu::DeviceBuffer<uint8_t> mandelbrotOnGpu(uint32_t width, uint32_t height) {
  if (size_t{width} * height > UINT32_MAX) {
    throw Error("mandelbrotOnGpu: a " + std::to_string(width) + " x " + std::to_string(height) +
                " image is over 2^32 - 1 pixels");
  }
  gpu::DeviceBuffer<uint8_t> out(size_t{width} * height);
  if (out.size() == 0) return out;
  gpu::launch(kernelOnce("mandelbrot", makeMandelbrot), {width, height, out});
  return out;
}

#define OBSIDIAN_TUNING_DATA(T)                                                    \
  template std::vector<T> randomOnHost<T>(size_t, uint64_t, Random, uint64_t);     \
  template void randomOnGpu<T>(gpu::DeviceBuffer<T>&, uint64_t, Random, uint64_t); \
  template gpu::DeviceBuffer<T> transposeOnGpu<T>(const gpu::DeviceBuffer<T>&, uint32_t, uint32_t);
OBSIDIAN_TUNING_DATA(uint8_t)
OBSIDIAN_TUNING_DATA(uint32_t)
OBSIDIAN_TUNING_DATA(float)
#undef OBSIDIAN_TUNING_DATA
#define OBSIDIAN_TUNING_SUMS(T)                                                              \
  template gpu::DeviceBuffer<T> segmentSumsOnGpu<T>(const gpu::DeviceBuffer<T>&, uint32_t);  \
  template gpu::DeviceBuffer<T> segmentScansOnGpu<T>(const gpu::DeviceBuffer<T>&, uint32_t); \
  template gpu::DeviceBuffer<T> scanOnGpu<T>(const gpu::DeviceBuffer<T>&, bool);             \
  template T sumOnGpu<T>(const gpu::DeviceBuffer<T>&);
OBSIDIAN_TUNING_SUMS(uint32_t)
OBSIDIAN_TUNING_SUMS(float)
#undef OBSIDIAN_TUNING_SUMS

// ------------------------------------------------------------------ the disk store
uint64_t hashKey(const std::string& key) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

namespace {
// The binary holding this code (the tool, or the Python module): path, size, mtime.
std::string binaryIdentity() {
  static const std::string id = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&binaryIdentity), &info) == 0 || !info.dli_fname) {
      return std::string();
    }
    struct stat st {};
    if (stat(info.dli_fname, &st) != 0) return std::string();
    return std::string(info.dli_fname) + ":" + std::to_string(st.st_size) + ":" +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  }();
  return id;
}

constexpr char kMagic[8] = {'O', 'B', 'S', 'R', 'E', 'F', '1', '\n'};
}  // namespace

std::vector<uint8_t> storedBytes(const std::string& key,
                                 const std::function<std::vector<uint8_t>()>& make) {
  const std::filesystem::path dir = KernelCache::global().directory();
  const std::string id = binaryIdentity();
  if (dir.empty() || id.empty()) return make();
  const std::string full = key + "|" + id;
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.ref", static_cast<unsigned long long>(hashKey(full)));
  const std::filesystem::path path = dir / "references" / name;
  {  // An entry is the magic, the full key's length and text, the data's length and bytes.
    std::ifstream in(path, std::ios::binary);
    char magic[8];
    uint64_t keyLength = 0, size = 0;
    if (in.read(magic, 8) && std::memcmp(magic, kMagic, 8) == 0 &&
        in.read(reinterpret_cast<char*>(&keyLength), 8) && keyLength == full.size()) {
      std::string stored(keyLength, '\0');
      std::error_code ec;
      const uint64_t fileSize = std::filesystem::file_size(path, ec);
      if (in.read(stored.data(), static_cast<std::streamsize>(keyLength)) && stored == full &&
          in.read(reinterpret_cast<char*>(&size), 8) && !ec &&
          size == fileSize - (8 + 8 + keyLength + 8)) {  // what the header says is there
        std::vector<uint8_t> data(size);
        if (in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(size)) &&
            in.peek() == std::char_traits<char>::eof()) {
          return data;
        }
      }
    }
  }
  std::vector<uint8_t> data = make();
  // Written to a temporary file and renamed: a reader never sees half an entry. A failure to
  // write (read-only cache) only loses the reuse.
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  // (unique to this process and call: workers of --devices may make the same entry at once)
  static std::atomic<uint64_t> calls{0};
  const std::filesystem::path tmp =
      path.string() + ".tmp" + std::to_string(getpid()) + "." + std::to_string(calls.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::binary);
    const uint64_t keyLength = full.size(), size = data.size();
    out.write(kMagic, 8);
    out.write(reinterpret_cast<const char*>(&keyLength), 8);
    out.write(full.data(), static_cast<std::streamsize>(keyLength));
    out.write(reinterpret_cast<const char*>(&size), 8);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(size));
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return data;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
  return data;
}

}  // namespace tuning
