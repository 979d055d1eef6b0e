// The non-template parts of the algorithm layer (include/obsidian/{warp,block,device}): the
// variants' names, the tile checks, the device calls' kernel memo and the architecture lookup.
#include <map>
#include <mutex>

#include "obsidian/block/load_store.hpp"
#include "obsidian/block/reduce.hpp"
#include "obsidian/block/scan.hpp"
#include "obsidian/device/algorithm.hpp"
#include "obsidian/device/dispatch.hpp"

namespace obsidian {

namespace {
template <class E, size_t N>
E parseName(const char* what, const std::array<E, N>& all, const std::string& s) {
  std::string known;
  for (E a : all) {
    if (name(a) == s) return a;
    known += (known.empty() ? "" : ", ") + name(a);
  }
  throw Error(std::string(what) + ": unknown algorithm '" + s + "'; the algorithms are " + known);
}
}  // namespace

std::string name(BlockReduceAlgorithm a) {
  switch (a) {
    case BlockReduceAlgorithm::Red1: return "red1";
    case BlockReduceAlgorithm::Red2: return "red2";
    case BlockReduceAlgorithm::Red3: return "red3";
    case BlockReduceAlgorithm::Red4: return "red4";
    case BlockReduceAlgorithm::Red5: return "red5";
    case BlockReduceAlgorithm::Red6: return "red6";
    case BlockReduceAlgorithm::Red7: return "red7";
    case BlockReduceAlgorithm::WarpShuffle: return "warpShuffle";
  }
  return "?";
}
BlockReduceAlgorithm parseBlockReduceAlgorithm(const std::string& s) {
  return parseName("BlockReduceAlgorithm", kBlockReduceAlgorithms, s);
}

std::string name(BlockScanAlgorithm a) {
  switch (a) {
    case BlockScanAlgorithm::Sklansky: return "sklansky";
    case BlockScanAlgorithm::Sklansky2: return "sklansky2";
    case BlockScanAlgorithm::Sklansky3: return "sklansky3";
    case BlockScanAlgorithm::KoggeStone: return "koggeStone";
    case BlockScanAlgorithm::ThreadSequential: return "threadSequential";
  }
  return "?";
}
BlockScanAlgorithm parseBlockScanAlgorithm(const std::string& s) {
  return parseName("BlockScanAlgorithm", kBlockScanAlgorithms, s);
}
uint32_t elementsPerThread(BlockScanAlgorithm a) {
  return a == BlockScanAlgorithm::Sklansky2 || a == BlockScanAlgorithm::Sklansky3 ? 2 : 1;
}

std::string name(BlockLoadAlgorithm a) {
  switch (a) {
    case BlockLoadAlgorithm::Direct: return "direct";
    case BlockLoadAlgorithm::Striped: return "striped";
    case BlockLoadAlgorithm::WarpStriped: return "warpStriped";
    case BlockLoadAlgorithm::Vectorized: return "vectorized";
  }
  return "?";
}
BlockLoadAlgorithm parseBlockLoadAlgorithm(const std::string& s) {
  return parseName("BlockLoadAlgorithm", kBlockLoadAlgorithms, s);
}

namespace detail {
uint32_t log2Tile(BlockScanAlgorithm a, uint32_t n) {
  if (a == BlockScanAlgorithm::ThreadSequential) return 0;  // any multiple of the block
  if (n == 0 || (n & (n - 1)) != 0) {
    throw Error("blockScan(" + name(a) + ") needs a power-of-two tile; got " + str(n));
  }
  if (elementsPerThread(a) == 2 && n < 2) {
    throw Error("blockScan(" + name(a) +
                ") scans two elements per thread: it needs a tile of at least 2 elements; got " +
                str(n));
  }
  uint32_t log = 0;
  while ((1u << log) < n) ++log;
  return log;
}

void checkBlockTile(const char* what, uint32_t items, uint32_t length, uint32_t threads) {
  if (items == 0 || length != threads * items) {
    throw Error(std::string(what) + " needs threads x items elements (" + str(threads) + " x " +
                str(items) + "); got " + str(length));
  }
}

void checkWholeWarps(const char* what, uint32_t threads) {
  if (threads % 32 != 0) {
    throw Error(std::string(what) +
                " needs a block of whole warps (a multiple of 32 threads); got " + str(threads) +
                " threads");
  }
}
}  // namespace detail

SmVersion currentSm() {
  if (!gpu::available()) return kSimulatedSm;
  const gpu::DeviceInfo& info = gpu::Device::get().info();
  return static_cast<SmVersion>(info.major * 10 + info.minor);
}

uint32_t currentSmCount() {
  if (!gpu::available()) return kSimulatedSmCount;
  return static_cast<uint32_t>(gpu::Device::get().info().smCount);
}

namespace device::detail {
Kernel memoKernel(const std::string& key, const std::function<Kernel()>& make) {
  if (key.empty()) return make();
  static std::mutex mutex;
  static std::map<std::string, Kernel> kernels;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = kernels.find(key); it != kernels.end()) return it->second;
  }
  Kernel k = make();  // outside the lock: capture may take a while
  std::lock_guard<std::mutex> lock(mutex);
  return kernels.emplace(key, std::move(k)).first->second;
}

std::string joinKey(const std::string& op, const std::vector<std::string>& parts) {
  if (op.empty()) return "";
  std::string key = op;
  for (const std::string& p : parts) key += "|" + p;
  return key;
}
}  // namespace device::detail

std::string describe(const ProblemClass& c) {
  std::string out;
  const auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (c.elementBytes != 0) add(std::to_string(c.elementBytes) + "-byte elements");
  switch (c.op) {
    case OperatorClass::Any: break;
    case OperatorClass::Sum: add("sums"); break;
    case OperatorClass::MinMax: add("min/max"); break;
    case OperatorClass::Other: add("other operators"); break;
  }
  switch (c.values) {
    case Values::Any: break;
    case Values::KeysOnly: add("keys only"); break;
    case Values::Pairs: add("key/value pairs"); break;
  }
  switch (c.scale) {
    case Scale::Any: break;
    case Scale::Large: add("large"); break;
    case Scale::Small: add("small"); break;
  }
  return out.empty() ? "any" : out;
}

void device::launchOn(const Target& t, const Kernel& k, const std::vector<KernelArg>& args,
                      const Options& options) {
  if (t.gpu) {
    gpu::LaunchOptions launch;
    launch.stream = options.stream;
    launch.synchronize = options.synchronize;
    launch.checked = options.checked;
    gpu::launch(k, args, launch);
    return;
  }
  SimStats stats = simulate(k, args, options.simulation);
  if (options.simulatedEach) options.simulatedEach->push_back(stats);
  if (options.simulated) *options.simulated = std::move(stats);
}

}  // namespace obsidian
