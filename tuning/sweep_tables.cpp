// The tables of a results file (printTables, sweep.hpp): per problem the best and worst point of
// every size, and per variant the best and worst time over thread counts (the paper's Figures 6
// and 10 as tables); aligned text, or Markdown.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>

#include "sweep.hpp"
#include "sweep_common.hpp"

namespace tuning {

using detail::fixed;
using detail::mode;
using obsidian::Error;

namespace {

// A table printed aligned for a terminal, or as Markdown (for RESULTS.md).
class TextTable {
 public:
  TextTable(std::string title, std::vector<std::string> head)
      : title_(std::move(title)), head_(std::move(head)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(bool markdown) const {
    std::vector<size_t> w(head_.size());
    for (size_t c = 0; c < head_.size(); ++c) {
      w[c] = head_[c].size();
      for (const auto& r : rows_) w[c] = std::max(w[c], r[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
      std::cout << (markdown ? "| " : "  ");
      for (size_t c = 0; c < cells.size(); ++c) {
        std::cout << std::setw(static_cast<int>(w[c])) << (c == 0 ? std::left : std::right)
                  << cells[c] << std::right << (markdown ? " | " : "  ");
      }
      std::cout << "\n";
    };
    std::cout << "\n" << (markdown ? "#### " : "") << title_ << "\n" << (markdown ? "\n" : "");
    line(head_);
    std::vector<std::string> rule;
    for (size_t c = 0; c < w.size(); ++c) {
      rule.push_back(markdown ? std::string(w[c], '-') : std::string(w[c], '-'));
    }
    line(rule);
    for (const auto& r : rows_) line(r);
  }

 private:
  std::string title_;
  std::vector<std::string> head_;
  std::vector<std::vector<std::string>> rows_;
};

// Lines with a time: measured on the GPU, or predicted by the cost model on the simulator.
bool timedOk(const nlohmann::json& j) {
  return j["status"] == "ok" && (j.contains("time_ms") || j.contains("predicted"));
}
double medianUs(const nlohmann::json& j) {
  return j.contains("time_ms") ? j["time_ms"]["median"].get<double>() * 1e3
                               : j["predicted"]["microseconds"].get<double>();
}
std::string gbpsText(const nlohmann::json& j) {
  return j.contains("gbps") ? fixed(j["gbps"].get<double>(), 0) : "-";
}
// A simulated point stands for the point at its full size (fullParams).
const nlohmann::json& paramsOf(const nlohmann::json& j) {
  return j.contains("fullParams") ? j["fullParams"] : j["params"];
}
std::string threadsText(const nlohmann::json& j) {
  return j["threads"].dump() + (j.value("virtualized", false) ? "*" : "");
}

}  // namespace

void printTables(const std::string& resultsPath, bool simulate, bool markdown, bool requireLines) {
  const std::vector<nlohmann::json> lines = readResults(resultsPath, mode(simulate));
  if (requireLines && lines.empty()) {
    const size_t other = readResults(resultsPath, mode(!simulate)).size();
    throw Error(resultsPath + " has no " + mode(simulate) + " lines" +
                (other ? " (its " + std::to_string(other) + " " + mode(!simulate) +
                             " lines are read " + (simulate ? "without" : "with") + " --simulate)"
                       : ""));
  }
  // family -> problem (the group without the size) -> size -> lines
  std::map<std::string,
           std::map<std::string, std::map<nlohmann::json, std::vector<const nlohmann::json*>>>>
      byProblem;
  for (const nlohmann::json& j : lines) {
    const std::string familyName = j["family"].get<std::string>();  // see space.cpp (GCC 13)
    const Family& f = findFamily(familyName);
    const nlohmann::json& params = paramsOf(j);
    byProblem[f.name][groupOf(f, params, f.sizeParam)][params.at(f.sizeParam)].push_back(&j);
  }
  for (const auto& [family, problems] : byProblem) {
    const Family& f = findFamily(family);
    if (simulate) {
      TextTable t(family + ": points by status (simulator: sizes capped)",
                  {"problem", f.sizeParam, "ok", "wrong", "skipped", "error"});
      for (const auto& [problem, bySize] : problems) {
        for (const auto& [size, js] : bySize) {
          std::map<std::string, size_t> n;
          for (const nlohmann::json* j : js) ++n[(*j)["status"].get<std::string>()];
          t.add({problem, size.dump(), std::to_string(n["ok"]), std::to_string(n["wrong"]),
                 std::to_string(n["skipped"]), std::to_string(n["error"])});
        }
      }
      t.print(markdown);
    }
    for (const auto& [problem, bySize] : problems) {
      const std::string what = family + (problem.empty() ? "" : " " + problem);
      // On the simulator, the cost model's predicted times at the full sizes.
      const std::string us = simulate ? "predicted us" : "median us";
      // Best and worst point per size (the paper's Figures 6 and 10 as tables).
      TextTable bw(what + ": best and worst point per " + f.sizeParam + " (* virtualized)",
                   {f.sizeParam, "best", "threads", us, "GB/s", "worst", "threads", us, "GB/s",
                    "points ok/all"});
      // Per variant: the best time over thread counts at each size, and its thread count
      // (Figure 6's two tables in one).
      std::set<nlohmann::json> sizes;
      std::map<std::string, std::map<nlohmann::json, const nlohmann::json*>> bestOf, worstOf;
      for (const auto& [size, js] : bySize) {
        const nlohmann::json *best = nullptr, *worst = nullptr;
        size_t ok = 0;
        for (const nlohmann::json* j : js) {
          if (!timedOk(*j)) continue;
          ++ok;
          if (!best || medianUs(*j) < medianUs(*best)) best = j;
          if (!worst || medianUs(*j) > medianUs(*worst)) worst = j;
          const std::string label = (*j)["label"];
          const nlohmann::json*& b = bestOf[label][size];
          if (!b || medianUs(*j) < medianUs(*b)) b = j;
          const nlohmann::json*& w = worstOf[label][size];
          if (!w || medianUs(*j) > medianUs(*w)) w = j;
          sizes.insert(size);
        }
        if (!best) continue;
        bw.add({size.dump(), (*best)["label"], threadsText(*best), fixed(medianUs(*best), 1),
                gbpsText(*best), (*worst)["label"], threadsText(*worst), fixed(medianUs(*worst), 1),
                gbpsText(*worst), std::to_string(ok) + "/" + std::to_string(js.size())});
      }
      if (sizes.empty()) continue;
      bw.print(markdown);
      std::vector<std::string> head{"variant"};
      for (const nlohmann::json& z : sizes) head.push_back(f.sizeParam + " " + z.dump());
      TextTable fig6(
          what + ": per variant, the best " + us + " over thread counts (threads; * virtualized)",
          head);
      TextTable worstT(
          what + ": per variant, the worst " + us + " over thread counts (threads; * virtualized)",
          head);
      for (const auto& [label, cells] : bestOf) {
        std::vector<std::string> row{label}, wrow{label};
        for (const nlohmann::json& z : sizes) {
          const auto b = cells.find(z);
          row.push_back(b == cells.end() ? "-"
                                         : fixed(medianUs(*b->second), 1) + " (" +
                                               threadsText(*b->second) + ")");
          const auto w = worstOf[label].find(z);
          wrow.push_back(w == worstOf[label].end() ? "-"
                                                   : fixed(medianUs(*w->second), 1) + " (" +
                                                         threadsText(*w->second) + ")");
        }
        fig6.add(row);
        worstT.add(wrow);
      }
      fig6.print(markdown);
      worstT.print(markdown);
    }
  }
}

}  // namespace tuning
