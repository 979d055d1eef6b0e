// A kernel report as JSON (see report_json.hpp).
#include "obsidian/report_json.hpp"

namespace obsidian {

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
    pre.push_back({{"condition", p.condition}, {"message", p.message}});
  }
  j["preconditions"] = pre;

  json post = json::array();
  for (const ReportPostcondition& p : r.postconditions) {
    post.push_back({{"output", p.output},
                    {"condition", p.condition},
                    {"index", p.index},
                    {"message", p.message}});
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
  j["nvrtcOptions"] = r.nvrtcOptions;

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

}  // namespace obsidian
