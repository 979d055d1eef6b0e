// A sweep's data where its GPU runs are: inputs generated on the device, references computed
// there by plain kernels (one thread per segment, a sequential loop: nothing a tuned kernel
// shares), outputs checked there by a hash, and references the device cannot compute kept on
// disk. So a warm sweep spends its time in the GPU runs, not in generating, uploading,
// downloading and comparing arrays on the host (issue 20, item 4). Every device routine has a host
// twin giving the same values; the simulator runs the device kernels in the tests, which compare
// them with the twins.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <obsidian/obsidian.hpp>
#include <obsidian/runtime.hpp>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace tuning {

// Random data from a counter-based generator: element i is formula(splitmix64(base + i)),
// base = splitmix64(seed). Counter-based, so the device makes the same values in parallel.
template <class U>  // uint64_t, or Exp<uint64_t> in the device kernels
U mix64(U x) {
  x = x + U(0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> U(30ull))) * U(0xbf58476d1ce4e5b9ull);
  x = (x ^ (x >> U(27ull))) * U(0x94d049bb133111ebull);
  return x ^ (x >> U(31ull));
}
inline uint64_t splitmix64(uint64_t x) { return mix64<uint64_t>(x); }
// MurmurHash3's 32-bit finalizer (a bijection), on uint32_t or Exp<uint32_t>.
template <class U>
U fmix32(U h) {
  h = (h ^ (h >> U(16u))) * U(0x85ebca6bu);
  h = (h ^ (h >> U(13u))) * U(0xc2b2ae35u);
  return h ^ (h >> U(16u));
}

// What an element is made of r = splitmix64(base + i):
enum class Random {
  Words,      // 1 + r % param (u32): never zero
  SmallInts,  // k = 1 + r % 16; u32: k; f32: -k for k <= 8, else k - 8 (non-zero in [-8, 8]:
              // sums of up to 2^21 of them are exact integers in float, in any order)
  Bits,       // u8, u32: the low bits of r; f32: (r >> 40) / 2^24, in [0, 1)
  Modulo,     // r % param
  Signed,     // f32: (r >> 40) / 2^23 - 1, in [-1, 1) (exact); u8, u32: as Bits
};

// Element type names of the families' parameters.
template <class T>
std::string typeName() {
  static_assert(
      std::is_same_v<T, float> || std::is_same_v<T, uint8_t> || std::is_same_v<T, uint32_t>,
      "the sweeps' element types are f32, u8 and u32");
  if constexpr (std::is_same_v<T, float>) return "f32";
  if constexpr (std::is_same_v<T, uint8_t>) return "u8";
  return "u32";
}

// n random elements on the host.
template <class T>
std::vector<T> randomOnHost(size_t n, uint64_t seed, Random formula, uint64_t param = 0);
// The same elements on the device, in `out` (its size is n).
template <class T>
void randomOnGpu(obsidian::gpu::DeviceBuffer<T>& out, uint64_t seed, Random formula,
                 uint64_t param = 0);

// The check's hash of `bytes` bytes: the sum, modulo 2^64, of every 4-byte word w_i (a
// trailing partial word zero-padded) times k_i = fmix32(i) | 1 (MurmurHash3's finalizer: odd,
// a bijection of i). So equal bytes hash equal; one differing word always changes the hash (its
// k_i is odd, so invertible modulo 2^64); and words moved, or several wrong, leave it only by a
// coincidence of pseudo-random 64-bit sums. On the device it reads the bytes once, where a
// comparison reads the output and the reference: a point's check is one read of its output
// against the reference's hash, taken once per problem (DeviceReference).
uint64_t hashOnHost(const void* data, size_t bytes);
// (at most 2^32 - 1 whole words, from a 16-byte aligned address: it reads 16-byte vectors)
uint64_t hashOnGpu(uint64_t address, size_t bytes);
template <class T>
uint64_t hashOnGpu(const obsidian::gpu::DeviceBuffer<T>& a) {
  return hashOnGpu(a.address(), a.size() * sizeof(T));
}

// A problem's reference on the device, with its hash: what a point's output is checked against.
template <class T>
struct DeviceReference {
  explicit DeviceReference(obsidian::gpu::DeviceBuffer<T> v)
      : values(std::move(v)), hash(hashOnGpu(values)) {}
  // Whether `got` holds the reference's bytes (to the hash's certainty, above).
  bool matches(const obsidian::gpu::DeviceBuffer<T>& got) const {
    return got.size() == values.size() && hashOnGpu(got) == hash;
  }
  obsidian::gpu::DeviceBuffer<T> values;
  uint64_t hash;
};

// The plain kernels' block size: they are not tuned, only run once per problem (or check).
inline constexpr uint32_t kPlainThreads = 128;
// The plain kernels' mapping: thread s of a grid of kPlainThreads-thread blocks, for each s
// below count, runs body(t, s).
template <class Body>
void perThread(const obsidian::Program<obsidian::Grid>& g, const obsidian::EWord32& count,
               Body body) {
  using namespace obsidian;
  g.distrPar((count + (kPlainThreads - 1)) / kPlainThreads,
             [&](const Program<Block>& b, const EWord32& bid) {
               b.forAll(kPlainThreads, [&](const Program<Thread>& t, const EWord32& tid) {
                 const EWord32 s = bid * kPlainThreads + tid;
                 t.cond(s < count, [&](const Program<Thread>& u) { body(u, s); });
               });
             });
}

// A 64-bit hash of a key (FNV-1a): seeds and file names that do not change between builds.
uint64_t hashKey(const std::string& key);

// References by plain kernels, for u32 (wrapping) and the small-integer floats (exact).
// One sum per `segment` consecutive elements (the last segment may be short).
template <class T>
obsidian::gpu::DeviceBuffer<T> segmentSumsOnGpu(const obsidian::gpu::DeviceBuffer<T>& in,
                                                uint32_t segment);
// The inclusive prefixes of every `segment` consecutive elements.
template <class T>
obsidian::gpu::DeviceBuffer<T> segmentScansOnGpu(const obsidian::gpu::DeviceBuffer<T>& in,
                                                 uint32_t segment);
// The whole array's inclusive (or exclusive) prefixes, and its sum.
template <class T>
obsidian::gpu::DeviceBuffer<T> scanOnGpu(const obsidian::gpu::DeviceBuffer<T>& in, bool exclusive);
template <class T>
T sumOnGpu(const obsidian::gpu::DeviceBuffer<T>& in);
// The transpose of a rows x cols row-major matrix (cols x rows).
template <class T>
obsidian::gpu::DeviceBuffer<T> transposeOnGpu(const obsidian::gpu::DeviceBuffer<T>& in,
                                              uint32_t rows, uint32_t cols);

// examples/mandelbrot's image as its plain C++ mandelReference computes it (width x height
// pixels, row by row), by a plain kernel: one thread per pixel, the same float operations in
// the same order, none contracted. (It replaces seconds of CPU per image; the tests compare it
// with mandelReference on the simulator and on the GPU.)
obsidian::gpu::DeviceBuffer<uint8_t> mandelbrotOnGpu(uint32_t width, uint32_t height);

// Launches k with `args` and one more, a device word of W (u32, u64) that starts at 0 (a
// count or sum the kernel adds to), and returns the word.
template <class W = uint32_t>
W countOnGpu(const obsidian::Kernel& k, std::vector<obsidian::KernelArg> args);

// ------------------------------------------------------------------ the plain kernels
// A plain kernel, named: the key that names it in the process (equal keys, equal kernels) and
// how to make it (capturing and lowering it: 0.2 to 3 ms). The routines above launch
// them, each made once per process; so do other files' (blas_reference.cpp, which names its
// kernels as it launches them). A family lists, per point, the ones its data launches
// (Family::plainKernels), so that the compile threads make and compile them with the point's
// kernels, ahead of its runs and while the device's context is created, instead of on the
// runs' path the first time a process needs them.
struct PlainKernel {
  std::string key;
  std::function<obsidian::Kernel()> make;
};
// pk's kernel, made once per process and key (a thread asking while another makes it waits).
obsidian::Kernel plainKernel(const PlainKernel& pk);
// While one lives, the keys of every plain kernel asked for (plainKernel), by any thread: for
// the tests, that a point's data asks for none its family does not list. One at a time.
class PlainKernelsAsked {
 public:
  PlainKernelsAsked();
  ~PlainKernelsAsked();
  PlainKernelsAsked(const PlainKernelsAsked&) = delete;
  PlainKernelsAsked& operator=(const PlainKernelsAsked&) = delete;
  std::set<std::string> keys() const;

 private:
  std::set<std::string> keys_;
};

// What the routines launch, and the kernels' parameters:
// randomOnGpu (n, base, param -> out: n).
template <class T>
PlainKernel plainRandom(Random formula);
// hashOnGpu (blocks, in: words, sum: one u64 it adds to).
PlainKernel plainHash();
// segmentSumsOnGpu and sumOnGpu (scan: false), segmentScansOnGpu (segment, in -> out).
template <class T>
PlainKernel plainSegmentFold(bool scan);
// scanOnGpu, after both folds (segment, exclusive, local, offsets, in -> out).
template <class T>
PlainKernel plainAddOffsets();
// transposeOnGpu (rows, cols, in -> out).
template <class T>
PlainKernel plainTranspose();
// mandelbrotOnGpu (width, height -> out: width * height pixels).
PlainKernel plainMandelbrot();
// All that scanOnGpu launches.
template <class T>
std::vector<PlainKernel> plainScan() {
  return {plainSegmentFold<T>(true), plainSegmentFold<T>(false), plainAddOffsets<T>()};
}

// References the device cannot compute (a CPU emulation of float rounding, counts of random
// samples) kept on disk beside the kernel cache (<cache>/references), so later sweeps read
// them: make() on a miss, its result stored. The entry is keyed by `key` and by the binary that
// computes it (its path, size and modification time), so a rebuilt tool never reads a
// reference an older one made. No disk without a kernel cache directory.
std::vector<uint8_t> storedBytes(const std::string& key,
                                 const std::function<std::vector<uint8_t>()>& make);
template <class T>
std::vector<T> storedReference(const std::string& key,
                               const std::function<std::vector<T>()>& make) {
  static_assert(std::is_trivially_copyable_v<T>);
  const std::vector<uint8_t> bytes = storedBytes(key + ":" + typeName<T>(), [&] {
    const std::vector<T> v = make();
    std::vector<uint8_t> b(v.size() * sizeof(T));
    if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
    return b;
  });
  std::vector<T> v(bytes.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

}  // namespace tuning
