// A sharded sweep's results files merged into one (mergeResults, sweep.hpp; obsidian-tune
// --merge): each point's last line, an error never replacing another line, in the space's order.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "sweep.hpp"
#include "sweep_common.hpp"

namespace tuning {

using detail::mode;
using obsidian::Error;

namespace {

// Did the line's point end in an error? (Its status, a string in every line readResults returns,
// compared as one: comparing the JSON value with "error" has GCC 12 at -O3 warn of a bounds
// violation in the temporary JSON it makes, -Warray-bounds.)
bool isError(const nlohmann::json& line) {
  return line.at("status").get_ref<const std::string&>() == "error";
}

}  // namespace

MergeReport mergeResults(const std::vector<std::string>& inputs, const std::string& output,
                         const std::vector<Point>& points, bool simulate) {
  std::map<std::string, nlohmann::json> byKey;
  std::vector<std::string> order;  // first appearance, for the foreign lines
  for (const std::string& path : inputs) {
    std::error_code ec;
    if (std::filesystem::equivalent(path, output, ec)) {
      throw Error("--merge: the output " + output + " is one of the inputs");
    }
    for (nlohmann::json& j : readResults(path, mode(simulate))) {
      const std::string key = j["key"];
      const auto it = byKey.find(key);
      if (it == byKey.end()) {
        order.push_back(key);
        byKey.emplace(key, std::move(j));
      } else if (!isError(j) || isError(it->second)) {
        it->second = std::move(j);
      }
    }
  }
  MergeReport r;
  std::ofstream out(output, std::ios::trunc);
  if (!out) throw Error("--merge: cannot write " + output + ": " + std::strerror(errno));
  std::set<std::string> inSpace;
  for (const Point& p : points) {
    inSpace.insert(p.key);
    const auto it = byKey.find(p.key);
    if (it == byKey.end()) {
      r.missing.push_back(p.key);
      continue;
    }
    out << it->second.dump() << "\n";
    ++r.lines;
  }
  for (const std::string& key : order) {
    if (inSpace.count(key)) continue;
    r.foreign.push_back(key);
    out << byKey[key].dump() << "\n";
    ++r.lines;
  }
  out.close();
  if (!out) throw Error("--merge: cannot write " + output + ": " + std::strerror(errno));
  return r;
}

}  // namespace tuning
