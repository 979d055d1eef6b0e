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
#include <obsidian/atomic.hpp>
#include <obsidian/block/reduce.hpp>
#include <obsidian/cache.hpp>
#include <optional>

namespace tuning {

namespace {

using namespace obsidian;
namespace gpu = obsidian::gpu;

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
  return capture(std::string("random") + typeName<T>(), kPlainThreads,
                 [formula](EWord32 n, EWord64 base, EWord64 param) {
                   return push<Grid>(DPull<Exp<T>>(n, [=](const EWord32& i) {
                     return element<T>(mix64(base + cast<uint64_t>(i)), formula, param);
                   }));
                 });
}

// ------------------------------------------------------------------ plain references
// perThread's mapping, as a push of `length` elements that body(t, s, w) writes.
template <class T, class Body>
DPush<Grid, Exp<T>> perThreadWriting(const EWord32& length, const EWord32& count, Body body) {
  return DPush<Grid, Exp<T>>(length, [=](const Program<Grid>& g, const Writer<Exp<T>>& w) {
    perThread(g, count, [&](const Program<Thread>& t, const EWord32& s) { body(t, s, w); });
  });
}

// Thread s folds segment s in order: one sum per segment, or (scan) every prefix of it.
template <class T>
Kernel makeSegmentFold(bool scan) {
  return capture(
      std::string(scan ? "referenceSegmentScans" : "referenceSegmentSums") + typeName<T>(),
      kPlainThreads, [scan](EWord32 segment, DPull<Exp<T>> in) {
        const EWord32 n = len(in);
        const EWord32 count = n / segment + ifThenElse(n % segment != 0u, EWord32(1u), EWord32(0u));
        return perThreadWriting<T>(scan ? n : count, count,
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
  return capture(std::string("referenceAddOffsets") + typeName<T>(), kPlainThreads,
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
  return capture(std::string("referenceTranspose") + typeName<T>(), kPlainThreads,
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
      "referenceMandelbrot", kPlainThreads,
      [](EWord32 width, EWord32 height) {
        const EWord32 n = width * height;
        return perThreadWriting<uint8_t>(
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

// hashOnHost's term of the word w at index i, on uint32_t or Exp<uint32_t>.
template <class W>
auto hashTerm(const W& w, const W& i) {
  if constexpr (std::is_same_v<W, uint32_t>) {
    return uint64_t{w} * (fmix32(i) | 1u);
  } else {
    return cast<uint64_t>(w) * cast<uint64_t>(fmix32(i) | 1u);
  }
}

// The hash of whole words: each thread sums the terms of its 16-byte vectors (grid-strided,
// four loads in flight, as a memory-bound sweep needs) and of at most one of the len % 4 words
// after them, each block folds its threads' sums (blockReduce), and adds it to `sum`. The grid
// (`blocks`: the device's occupancy) is a parameter, so the kernel is captured once.
Kernel makeHash() {
  const auto body = [](EWord32 blocks, DPull<EWord32> in, DMutable<uint64_t> sum) {
    const auto vecs = vectors<4>(in);
    const EWord32 start = len(vecs) * 4u;  // the words after the whole vectors
    const DPull<EWord32> indices(len(vecs), [](const EWord32& j) { return j; });
    const auto addVector = [vecs](const EWord64& acc, const EWord32& j) {
      const auto v = vecs[j];
      const EWord32 i = j * 4u;
      return acc + hashTerm(hana::at_c<0>(v), i) + hashTerm(hana::at_c<1>(v), i + 1u) +
             hashTerm(hana::at_c<2>(v), i + 2u) + hashTerm(hana::at_c<3>(v), i + 3u);
    };
    // Thread gid's sum: its vectors, and word start + gid if there is one (compared as a
    // count: start + gid could wrap near 2^32 words).
    const auto threadSum = [=](const Program<Thread>& t, const EWord32& gid, const auto& done) {
      seqFoldStrided(addVector, EWord64(uint64_t{0}), indices, gid, blocks * kPlainThreads, 4)(
          t, [&](const Program<Thread>& u, const EWord64& acc, const EWord32&) {
            done(u, acc + ifThenElse(gid < len(in) - start, hashTerm(in[start + gid], start + gid),
                                     EWord64(uint64_t{0})));
          });
    };
    return effect([=](const Program<Grid>& g) {
      g.distrPar(blocks, [&](const Program<Block>& b, const EWord32& bid) {
        const auto sums = force(
            b, mkPush<Block, EWord64>(
                   kPlainThreads, [=](const Program<Block>& q, const Writer<EWord64>& w) {
                     q.forAll(kPlainThreads, [&](const Program<Thread>& t, const EWord32& tid) {
                       threadSum(t, bid * kPlainThreads + tid,
                                 [&](const Program<Thread>& u, const EWord64& x) { w(u, x, tid); });
                     });
                   }));
        const EWord64 total = blockReduce(b, Sum{}, sums);
        b.forAll(1u, [&](const Program<Thread>& t, const EWord32&) {
          atomicAdd(t, sum, EWord32(0u), total);
        });
      });
    });
  };
  return capture("hashWords", kPlainThreads, body);
}

// plainKernel's slots, and the recorder of the keys asked for (PlainKernelsAsked).
std::mutex onceMutex;
std::set<std::string>* asked = nullptr;

}  // namespace

Kernel plainKernel(const PlainKernel& pk) {
  // The map's lock is held only to find the key's slot, so kernels of different keys are made
  // at the same time; a thread asking for one being made waits on its slot (a compile thread
  // making it ahead, the sweep's thread needing it). A make that throws leaves it unmade.
  struct Slot {
    std::mutex mutex;
    std::optional<Kernel> kernel;
  };
  static std::map<std::string, Slot> slots;  // (never erased: a slot's address stays valid)
  Slot* slot = nullptr;
  {
    const std::lock_guard<std::mutex> lock(onceMutex);
    slot = &slots[pk.key];
    if (asked) asked->insert(pk.key);
  }
  const std::lock_guard<std::mutex> lock(slot->mutex);
  if (!slot->kernel) slot->kernel.emplace(pk.make());
  return *slot->kernel;
}

PlainKernelsAsked::PlainKernelsAsked() {
  const std::lock_guard<std::mutex> lock(onceMutex);
  if (asked) throw Error("PlainKernelsAsked: one recorder at a time");
  asked = &keys_;
}
PlainKernelsAsked::~PlainKernelsAsked() {
  const std::lock_guard<std::mutex> lock(onceMutex);
  asked = nullptr;
}
std::set<std::string> PlainKernelsAsked::keys() const {
  const std::lock_guard<std::mutex> lock(onceMutex);
  return keys_;
}

template <class T>
PlainKernel plainRandom(Random formula) {
  return {"random" + typeName<T>() + std::to_string(static_cast<int>(formula)),
          [formula] { return makeRandomKernel<T>(formula); }};
}
PlainKernel plainHash() { return {"hash", makeHash}; }
template <class T>
PlainKernel plainSegmentFold(bool scan) {
  return {std::string(scan ? "segmentScans" : "segmentSums") + typeName<T>(),
          [scan] { return makeSegmentFold<T>(scan); }};
}
template <class T>
PlainKernel plainAddOffsets() {
  return {"offsets" + typeName<T>(), [] { return makeAddOffsets<T>(); }};
}
template <class T>
PlainKernel plainTranspose() {
  return {"transpose" + typeName<T>(), [] { return makeTranspose<T>(); }};
}
PlainKernel plainMandelbrot() { return {"mandelbrot", makeMandelbrot}; }

template PlainKernel plainRandom<uint8_t>(Random);
template PlainKernel plainRandom<uint32_t>(Random);
template PlainKernel plainRandom<float>(Random);
template PlainKernel plainSegmentFold<uint32_t>(bool);
template PlainKernel plainSegmentFold<float>(bool);
template PlainKernel plainAddOffsets<uint32_t>();
template PlainKernel plainAddOffsets<float>();
template PlainKernel plainTranspose<uint8_t>();
template PlainKernel plainTranspose<uint32_t>();
template PlainKernel plainTranspose<float>();

template <class W>
W countOnGpu(const Kernel& k, std::vector<KernelArg> args) {
  // One word for the process, never freed: a buffer per call cost a cuMemAlloc and a
  // cuMemFree (which waits for the device) per check.
  static std::mutex mutex;
  static gpu::DeviceBuffer<W>* word = nullptr;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!word) word = new gpu::DeviceBuffer<W>(1);
  word->zero();
  args.emplace_back(*word);
  gpu::launch(k, args);
  W count = 0;
  word->download(std::span<W>(&count, 1));
  return count;
}
template uint32_t countOnGpu<uint32_t>(const Kernel&, std::vector<KernelArg>);
template uint64_t countOnGpu<uint64_t>(const Kernel&, std::vector<KernelArg>);

// ------------------------------------------------------------------ random data
template <class T>
std::vector<T> randomOnHost(size_t n, uint64_t seed, Random formula, uint64_t param) {
  checkFormula(formula, param);
  std::vector<T> v(n);
  const uint64_t base = splitmix64(seed);
  for (size_t i = 0; i < n; ++i) v[i] = element<T>(splitmix64(base + i), formula, param);
  return v;
}

template <class T>
void randomOnGpu(gpu::DeviceBuffer<T>& out, uint64_t seed, Random formula, uint64_t param) {
  checkFormula(formula, param);
  if (out.size() == 0) return;
  if (out.size() > UINT32_MAX) throw Error("randomOnGpu: at most 2^32 - 1 elements");
  gpu::launch(plainKernel(plainRandom<T>(formula)),
              {static_cast<uint32_t>(out.size()), splitmix64(seed), param, out});
}

// ------------------------------------------------------------------ comparing
namespace {
void checkHashLength(size_t words, const char* what) {
  if (words > UINT32_MAX) {
    throw Error(std::string(what) + ": at most 2^32 - 1 whole 4-byte words; got " +
                std::to_string(words));
  }
}
// The last bytes % 4 bytes, zero-padded, as word `index`.
uint64_t tailTerm(const uint8_t* bytes, size_t count, size_t index) {
  uint32_t w = 0;
  std::memcpy(&w, bytes, count);  // (little-endian, as the device reads words)
  return hashTerm(w, static_cast<uint32_t>(index));
}
}  // namespace

uint64_t hashOnHost(const void* data, size_t bytes) {
  const size_t words = bytes / 4, tail = bytes % 4;
  checkHashLength(words, "hashOnHost");
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = 0;
  for (size_t i = 0; i < words; ++i) {
    uint32_t w;
    std::memcpy(&w, p + 4 * i, 4);
    h += hashTerm(w, static_cast<uint32_t>(i));
  }
  if (tail > 0) h += tailTerm(p + 4 * words, tail, words);
  return h;
}

uint64_t hashOnGpu(uint64_t address, size_t bytes) {
  const size_t words = bytes / 4, tail = bytes % 4;
  checkHashLength(words, "hashOnGpu");
  uint64_t h = 0;
  if (words > 0) {
    const Kernel k = plainKernel(plainHash());
    // (the grid that fills device 0, where launches run: asked once, not per check)
    static const uint32_t blocks = gpu::occupancyBlocks(k);
    h = countOnGpu<uint64_t>(
        k, {blocks, KernelArg::deviceArray(ScalarType::U32, address, words, false)});
  }
  if (tail > 0) {
    uint8_t last[4] = {};
    gpu::detail::copyToHost(gpu::Device::get(), last, address + words * 4, tail);
    h += tailTerm(last, tail, words);
  }
  return h;
}

// ------------------------------------------------------------------ references
namespace {
void checkSegment(uint32_t segment, size_t n, const char* what) {
  if (segment == 0) throw Error(std::string(what) + ": a segment of 0 elements");
  if (n > UINT32_MAX - segment) throw Error(std::string(what) + ": at most 2^32 - 1 elements");
}
}  // namespace

// Segment sums (scan: false) or scans on the device, by makeSegmentFold.
template <class T>
gpu::DeviceBuffer<T> segmentFoldOnGpu(const gpu::DeviceBuffer<T>& in, uint32_t segment, bool scan) {
  const char* what = scan ? "segmentScansOnGpu" : "segmentSumsOnGpu";
  checkSegment(segment, in.size(), what);
  gpu::DeviceBuffer<T> out(scan ? in.size() : (in.size() + segment - 1) / segment);
  if (out.size() == 0) return out;
  const Kernel k = plainKernel(plainSegmentFold<T>(scan));
  gpu::launch(k, {segment, in, out});
  return out;
}

template <class T>
gpu::DeviceBuffer<T> segmentSumsOnGpu(const gpu::DeviceBuffer<T>& in, uint32_t segment) {
  return segmentFoldOnGpu(in, segment, false);
}
template <class T>
gpu::DeviceBuffer<T> segmentScansOnGpu(const gpu::DeviceBuffer<T>& in, uint32_t segment) {
  return segmentFoldOnGpu(in, segment, true);
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
  const Kernel k = plainKernel(plainAddOffsets<T>());
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
  const Kernel k = plainKernel(plainTranspose<T>());
  gpu::launch(k, {rows, cols, in, out});
  return out;
}

gpu::DeviceBuffer<uint8_t> mandelbrotOnGpu(uint32_t width, uint32_t height) {
  if (size_t{width} * height > UINT32_MAX) {
    throw Error("mandelbrotOnGpu: a " + std::to_string(width) + " x " + std::to_string(height) +
                " image is over 2^32 - 1 pixels");
  }
  gpu::DeviceBuffer<uint8_t> out(size_t{width} * height);
  if (out.size() == 0) return out;
  gpu::launch(plainKernel(plainMandelbrot()), {width, height, out});
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
