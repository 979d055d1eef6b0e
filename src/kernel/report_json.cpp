// A kernel report as JSON (see report_json.hpp).
#include "obsidian/report_json.hpp"

namespace obsidian {

namespace detail {
// `s` as valid UTF-8: a report's free text (require and ensure messages, NVRTC options) is the
// user's bytes, in any encoding, and JSON text must be UTF-8 (nlohmann's dump throws on
// anything else). Each byte that does not begin a well-formed sequence becomes U+FFFD.
std::string utf8Text(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    size_t n = 0;                        // continuation bytes
    unsigned char lo = 0x80, hi = 0xbf;  // the allowed range of the first continuation byte
    if (c < 0x80)
      n = 0;
    else if (c >= 0xc2 && c <= 0xdf)
      n = 1;
    else if (c == 0xe0)
      n = 2, lo = 0xa0;
    else if (c >= 0xe1 && c <= 0xec)
      n = 2;
    else if (c == 0xed)
      n = 2, hi = 0x9f;  // no surrogates
    else if (c >= 0xee && c <= 0xef)
      n = 2;
    else if (c == 0xf0)
      n = 3, lo = 0x90;
    else if (c >= 0xf1 && c <= 0xf3)
      n = 3;
    else if (c == 0xf4)
      n = 3, hi = 0x8f;  // at most U+10FFFF
    else
      n = SIZE_MAX;
    bool ok = n != SIZE_MAX && i + n < s.size();
    for (size_t k = 1; ok && k <= n; ++k) {
      const unsigned char b = byte(i + k);
      ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xbf);
    }
    if (ok) {
      out.append(s, i, n + 1);
      i += n + 1;
    } else {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++i;
    }
  }
  return out;
}

std::vector<std::string> utf8Text(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const std::string& s : v) out.push_back(utf8Text(s));
  return out;
}
}  // namespace detail

nlohmann::json toJson(const KernelReport& r) {
  using nlohmann::json;
  json j;
  j["name"] = r.name;
  j["threadsPerBlock"] = r.threadsPerBlock;
  j["sharedBytes"] = r.sharedBytes;
  j["gridBlocks"] = r.gridBlocks;

  json params = json::array();
  for (const ReportParam& p : r.params) {
    json q{{"name", p.name}, {"type", p.type}, {"kind", p.kind}};
    if (p.kind != "length" && p.kind != "scalar") q["length"] = p.length;
    params.push_back(q);
  }
  j["params"] = params;

  json pre = json::array();
  for (const ReportPrecondition& p : r.preconditions) {
    pre.push_back({{"condition", p.condition}, {"message", detail::utf8Text(p.message)}});
  }
  j["preconditions"] = pre;

  json post = json::array();
  for (const ReportPostcondition& p : r.postconditions) {
    post.push_back({{"output", p.output},
                    {"condition", p.condition},
                    {"index", p.index},
                    {"message", detail::utf8Text(p.message)}});
  }
  j["postconditions"] = post;

  json shared = json::array();
  for (const ReportSharedArray& a : r.sharedArrays) {
    shared.push_back({{"name", a.name},
                      {"type", a.type},
                      {"level", a.level},
                      {"elements", a.elements},
                      {"bytes", a.bytes},
                      {"offset", a.offset},
                      {"liveFrom", a.liveFrom},
                      {"liveTo", a.liveTo}});
  }
  j["sharedArrays"] = shared;
  json local = json::array();
  for (const ReportLocalArray& a : r.localArrays) {
    local.push_back({{"name", a.name}, {"type", a.type}, {"elements", a.elements}});
  }
  j["localArrays"] = local;
  json traffic = json::array();
  for (const ReportTraffic& t : r.traffic) {
    traffic.push_back({{"array", t.array},
                       {"type", t.type},
                       {"loads", t.loads},
                       {"stores", t.stores},
                       {"atomics", t.atomics}});
  }
  j["traffic"] = traffic;
  j["gridPasses"] = r.gridPasses;
  j["barriers"] = {{"block", r.barriers.block}, {"warp", r.barriers.warp}};
  j["nvrtcOptions"] = detail::utf8Text(r.nvrtcOptions);

  json timings = json::object();
  for (const PassTiming& t : r.timings) timings[t.pass] = t.milliseconds;
  if (r.compiled) {
    j["arch"] = r.compiled->arch;
    j["registers"] = r.compiled->registers;
    j["spillStoreBytes"] = r.compiled->spillStoreBytes;
    j["spillLoadBytes"] = r.compiled->spillLoadBytes;
    j["stackBytes"] = r.compiled->stackBytes;
    timings["compile"] = r.compiled->compileMilliseconds;
  } else {
    j["registers"] = nullptr;
    j["spillStoreBytes"] = nullptr;
    j["spillLoadBytes"] = nullptr;
    j["stackBytes"] = nullptr;
  }
  j["timingsMs"] = timings;
  return j;
}

namespace {

nlohmann::json countersJson(const SimCounters& c, bool all) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < kCounterCount; ++i) {
    if (all || c.values[i] != 0) j[counterName(static_cast<Counter>(i))] = c.values[i];
  }
  return j;
}

}  // namespace

nlohmann::json toJson(const SimProfile& p) {
  using nlohmann::json;
  json total = countersJson(p.total, true);
  total["globalLoadEfficiency"] = p.total.globalLoadEfficiency();
  total["globalStoreEfficiency"] = p.total.globalStoreEfficiency();
  total["sharedLoadWavefrontsPerRequest"] = p.total.sharedLoadWavefrontsPerRequest();
  total["sharedStoreWavefrontsPerRequest"] = p.total.sharedStoreWavefrontsPerRequest();
  total["simtEfficiency"] = p.total.simtEfficiency();
  json statements = json::array();
  for (const SimStatementProfile& s : p.statements) {
    statements.push_back({{"statement", s.statement},
                          {"cudaLine", s.cudaLine},
                          {"text", s.text},
                          {"loops", s.loops},
                          {"unrolled", s.unrolled},
                          {"counters", countersJson(s.counters, false)}});
  }
  return {{"blocks", p.blocks},
          {"threadsPerBlock", p.threadsPerBlock},
          {"sharedBytes", p.sharedBytes},
          {"total", total},
          {"statements", statements}};
}

nlohmann::json toJson(const CostEstimate& e) {
  return {{"microseconds", e.microseconds},
          {"bound", e.bound},
          {"dramUs", e.dramUs},
          {"l2Us", e.l2Us},
          {"l1Us", e.l1Us},
          {"issueUs", e.issueUs},
          {"sharedUs", e.sharedUs},
          {"blocksUs", e.blocksUs},
          {"latencyUs", e.latencyUs},
          {"waves", e.waves},
          {"residentWarps", e.residentWarps},
          {"loadRounds", e.loadRounds},
          {"barriers", e.barriers},
          {"instructions", e.instructions}};
}

nlohmann::json toJson(const KernelReport& r, const SimProfile& p, const DeviceModel& m) {
  nlohmann::json j = toJson(r);
  j["profile"] = toJson(p);
  j["predicted"] = toJson(predictTime(p, m));
  return j;
}

}  // namespace obsidian
