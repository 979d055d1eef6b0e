// The counters' names and ratios, and the cost model (see obsidian/profile.hpp).
#include "obsidian/profile.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "obsidian/error.hpp"

namespace obsidian {

const char* counterName(Counter c) {
  switch (c) {
    case Counter::GlobalLoadRequests: return "globalLoadRequests";
    case Counter::GlobalLoadSectors: return "globalLoadSectors";
    case Counter::GlobalLoadIdealSectors: return "globalLoadIdealSectors";
    case Counter::GlobalStoreRequests: return "globalStoreRequests";
    case Counter::GlobalStoreSectors: return "globalStoreSectors";
    case Counter::GlobalStoreIdealSectors: return "globalStoreIdealSectors";
    case Counter::GlobalAtomicRequests: return "globalAtomicRequests";
    case Counter::GlobalAtomicSectors: return "globalAtomicSectors";
    case Counter::GlobalAtomicIdealSectors: return "globalAtomicIdealSectors";
    case Counter::GlobalFirstTouchSectors: return "globalFirstTouchSectors";
    case Counter::GlobalBlockFirstTouchSectors: return "globalBlockFirstTouchSectors";
    case Counter::SharedLoadRequests: return "sharedLoadRequests";
    case Counter::SharedLoadWavefronts: return "sharedLoadWavefronts";
    case Counter::SharedLoadConflicts: return "sharedLoadConflicts";
    case Counter::SharedStoreRequests: return "sharedStoreRequests";
    case Counter::SharedStoreWavefronts: return "sharedStoreWavefronts";
    case Counter::SharedStoreConflicts: return "sharedStoreConflicts";
    case Counter::SharedAtomicRequests: return "sharedAtomicRequests";
    case Counter::SharedAtomicWavefronts: return "sharedAtomicWavefronts";
    case Counter::SharedAtomicConflicts: return "sharedAtomicConflicts";
    case Counter::WarpStatements: return "warpStatements";
    case Counter::ActiveLanes: return "activeLanes";
    case Counter::DivergentBranches: return "divergentBranches";
    case Counter::Barriers: return "barriers";
    case Counter::WarpSyncs: return "warpSyncs";
    case Counter::Fences: return "fences";
    case Counter::Shuffles: return "shuffles";
    case Counter::AtomicLanes: return "atomicLanes";
    case Counter::AtomicAddresses: return "atomicAddresses";
    case Counter::ArithmeticInstructions: return "arithmeticInstructions";
    case Counter::FloatOperations: return "floatOperations";
    case Counter::Count_: break;
  }
  OBSIDIAN_ASSERT(false, "every counter has a name");
  return "";
}

namespace {

double ratio(uint64_t num, uint64_t den) {
  return den == 0 ? 1.0 : static_cast<double>(num) / static_cast<double>(den);
}

}  // namespace

double SimCounters::globalLoadEfficiency() const {
  return ratio((*this)[Counter::GlobalLoadIdealSectors], (*this)[Counter::GlobalLoadSectors]);
}
double SimCounters::globalStoreEfficiency() const {
  return ratio((*this)[Counter::GlobalStoreIdealSectors], (*this)[Counter::GlobalStoreSectors]);
}
double SimCounters::sharedLoadWavefrontsPerRequest() const {
  return ratio((*this)[Counter::SharedLoadWavefronts], (*this)[Counter::SharedLoadRequests]);
}
double SimCounters::sharedStoreWavefrontsPerRequest() const {
  return ratio((*this)[Counter::SharedStoreWavefronts], (*this)[Counter::SharedStoreRequests]);
}
double SimCounters::simtEfficiency() const {
  return ratio((*this)[Counter::ActiveLanes], 32 * (*this)[Counter::WarpStatements]);
}

CostEstimate predictTime(const SimProfile& p, const DeviceModel& m, double scale) {
  if (!p.enabled) throw Error("predictTime: the run was not profiled (set SimOptions::profile)");
  if (!(scale >= 1))
    throw Error("predictTime: scale must be at least 1; got " + std::to_string(scale));
  auto total = [&](Counter c) { return static_cast<double>(p.total[c]) * scale; };
  const double clocksPerUs = m.clockGHz * 1e3;
  const double blocks = std::max(1.0, std::ceil(p.blocks * scale));
  const double warpsPerBlock = std::ceil(p.threadsPerBlock / 32.0);
  const double warps = blocks * warpsPerBlock;

  // Blocks resident on one SM at a time (registers unknown to the simulator: not a limit here).
  double perSm =
      std::min<double>(m.maxBlocksPerSm, m.maxThreadsPerSm / std::max(1u, p.threadsPerBlock));
  if (p.sharedBytes > 0) perSm = std::min<double>(perSm, m.sharedBytesPerSm / p.sharedBytes);
  perSm = std::max(1.0, std::floor(perSm));
  const double waves = std::ceil(blocks / (m.sms * perSm));
  const double smsUsed = std::min<double>(m.sms, blocks);

  CostEstimate e;
  // Throughputs over the whole device.
  e.dramUs = total(Counter::GlobalFirstTouchSectors) * 32 / (m.dramGBps * 1e3);
  e.l2Us = total(Counter::GlobalBlockFirstTouchSectors) / (m.l2SectorsPerClock * clocksPerUs);
  const double sectors = total(Counter::GlobalLoadSectors) + total(Counter::GlobalStoreSectors) +
                         total(Counter::GlobalAtomicSectors);
  e.l1Us = sectors / (smsUsed * m.l1SectorsPerSmPerClock * clocksPerUs);
  const double requests = total(Counter::GlobalLoadRequests) + total(Counter::GlobalStoreRequests) +
                          total(Counter::GlobalAtomicRequests) +
                          total(Counter::SharedLoadRequests) + total(Counter::SharedStoreRequests) +
                          total(Counter::SharedAtomicRequests) + total(Counter::Shuffles);
  const double instructions =
      m.sassPerOperation *
      (total(Counter::WarpStatements) + total(Counter::ArithmeticInstructions) + requests +
       total(Counter::Barriers) + total(Counter::WarpSyncs));
  e.issueUs = instructions / (smsUsed * m.issuePerSmPerClock * clocksPerUs);
  const double wavefronts = total(Counter::SharedLoadWavefronts) +
                            total(Counter::SharedStoreWavefronts) +
                            total(Counter::SharedAtomicWavefronts);
  e.sharedUs = wavefronts / (smsUsed * m.sharedWavefrontsPerSmPerClock * clocksPerUs);
  e.blocksUs = blocks / smsUsed * m.blockDispatchClocks / clocksPerUs;

  // Latency: a wave of resident blocks takes its blocks' chain of dependent steps and the SM's
  // time to issue their instructions (the two overlap little where the chain is long: warps
  // wait at barriers for the slowest of them). A warp's global loads within one statement (a
  // fold's) are in flight together, one round trip, and so are those of the iterations of
  // loops with literal bounds (unrolled); in other loops the CUDA compiler overlaps about
  // DeviceModel::loopOverlap iterations' loads. Each barrier waits for the block's slowest warp.
  double rounds = 0;
  for (const SimStatementProfile& s : p.statements) {
    if (s.counters[Counter::GlobalLoadRequests] == 0) continue;
    const bool dynamicLoop = s.loops > 0 && s.unrolled == 1;
    rounds += static_cast<double>(s.counters[Counter::WarpStatements]) / s.unrolled /
              (dynamicLoop ? m.loopOverlap : 1.0);
  }
  const double loadRounds = rounds * scale / warps;
  const double barriersPerWarp = total(Counter::Barriers) / warps;
  const double residentWarps = std::min(perSm, std::ceil(blocks / smsUsed)) * warpsPerBlock;
  const double waveIssue = residentWarps * (instructions / warps) / m.issuePerSmPerClock;
  const double chain = loadRounds * m.dramLatencyNs * m.clockGHz +
                       barriersPerWarp * (m.barrierClocks + m.barrierClocksPerWarp * warpsPerBlock);
  e.latencyUs = waves * (chain + waveIssue) / clocksPerUs;
  e.waves = waves;
  e.residentWarps = residentWarps;
  e.loadRounds = loadRounds;
  e.barriers = barriersPerWarp;
  e.instructions = instructions / warps;

  const std::pair<double, const char*> parts[] = {
      {e.dramUs, "dram"},     {e.l2Us, "l2"},         {e.l1Us, "l1"},          {e.issueUs, "issue"},
      {e.sharedUs, "shared"}, {e.blocksUs, "blocks"}, {e.latencyUs, "latency"}};
  const auto worst =
      std::max_element(std::begin(parts), std::end(parts),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
  e.microseconds = worst->first + m.launchMicroseconds;
  e.bound = worst->first < m.launchMicroseconds ? "launch" : worst->second;
  return e;
}

namespace {

uint64_t moved(const SimCounters& c) {
  return c[Counter::GlobalLoadSectors] + c[Counter::GlobalStoreSectors] +
         c[Counter::GlobalAtomicSectors] + c[Counter::SharedLoadWavefronts] +
         c[Counter::SharedStoreWavefronts] + c[Counter::SharedAtomicWavefronts];
}

}  // namespace

std::string profileSummary(const SimProfile& p, size_t top, const DeviceModel& m) {
  if (!p.enabled) throw Error("profileSummary: the run was not profiled (set SimOptions::profile)");
  const SimCounters& t = p.total;
  std::ostringstream o;
  o << std::fixed << std::setprecision(2);
  o << "  " << p.blocks << " blocks of " << p.threadsPerBlock << " threads, " << p.sharedBytes
    << " bytes of shared memory\n"
    << "  global loads: " << t[Counter::GlobalLoadRequests] << " requests, "
    << t[Counter::GlobalLoadSectors] << " sectors (efficiency " << t.globalLoadEfficiency()
    << "); stores: " << t[Counter::GlobalStoreRequests] << " requests, "
    << t[Counter::GlobalStoreSectors] << " sectors (efficiency " << t.globalStoreEfficiency()
    << "); atomics: " << t[Counter::GlobalAtomicRequests] << " requests\n"
    << "  shared loads: " << t[Counter::SharedLoadRequests] << " requests, "
    << t[Counter::SharedLoadWavefronts] << " wavefronts (" << t[Counter::SharedLoadConflicts]
    << " bank conflicts); stores: " << t[Counter::SharedStoreRequests] << " requests, "
    << t[Counter::SharedStoreWavefronts] << " wavefronts (" << t[Counter::SharedStoreConflicts]
    << " bank conflicts)\n"
    << "  SIMT efficiency " << t.simtEfficiency() << ", " << t[Counter::DivergentBranches]
    << " divergent branches, " << t[Counter::Barriers] << " barriers and " << t[Counter::Shuffles]
    << " shuffles (per warp), " << t[Counter::AtomicLanes] << " atomic lanes on "
    << t[Counter::AtomicAddresses] << " addresses\n";
  const CostEstimate e = predictTime(p, m);
  o << "  predicted on " << m.name << ": " << e.microseconds << " us, bound by " << e.bound << "\n";
  std::vector<const SimStatementProfile*> byMoved;
  for (const SimStatementProfile& s : p.statements) {
    if (moved(s.counters) > 0) byMoved.push_back(&s);
  }
  std::stable_sort(byMoved.begin(), byMoved.end(), [](const auto* a, const auto* b) {
    return moved(a->counters) > moved(b->counters);
  });
  for (size_t i = 0; i < byMoved.size() && i < top; ++i) {
    const SimStatementProfile& s = *byMoved[i];
    o << "  line " << s.cudaLine << ": "
      << s.counters[Counter::GlobalLoadSectors] + s.counters[Counter::GlobalStoreSectors]
      << " global sectors, "
      << s.counters[Counter::SharedLoadWavefronts] + s.counters[Counter::SharedStoreWavefronts]
      << " shared wavefronts: " << (s.text.size() > 90 ? s.text.substr(0, 87) + "..." : s.text)
      << "\n";
  }
  return o.str();
}

}  // namespace obsidian
