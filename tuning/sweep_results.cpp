// The results file (see sweep_results.hpp): its lines checked and read, resumed from, appended.
#include "sweep_results.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <utility>

#include "sweep.hpp"

namespace tuning {

using obsidian::Error;

namespace {

// Why a results line cannot be read ("": it can): the fields its readers need, each with its
// type. Every reader needs a line's identity and status (family, mode, key, params, status);
// `complete` (resume, merge, the tables) also the label, threads, group and size the tables and
// pruning read. A line of another tool or an edited one must say so, not reach a reader as a
// JSON type error.
std::string lineProblem(const nlohmann::json& j, bool complete) {
  if (!j.is_object()) return "a results line must be a JSON object; got " + j.dump();
  const auto missing = [&](const char* field, const char* type) {
    return std::string("no \"") + field + "\" (" + type +
           "; a results line has family, mode, key, params, status" +
           (complete ? ", label, threads, group)" : ")");
  };
  const auto wrong = [&](const std::string& field, const char* type) {
    const nlohmann::json::json_pointer at("/" + field);
    std::string path = field;
    std::replace(path.begin(), path.end(), '/', '.');
    return "\"" + path + "\" must be " + type + "; got " + j.at(at).dump();
  };
  for (const char* field : {"family", "mode", "key", "params", "status"}) {
    if (!j.contains(field)) return missing(field, field[0] == 'p' ? "an object" : "a string");
  }
  for (const char* field : {"label", "group"}) {
    if (complete && !j.contains(field)) return missing(field, "a string");
    if (j.contains(field) && !j[field].is_string()) return wrong(field, "a string");
  }
  if (complete && !j.contains("threads")) return missing("threads", "a number");
  for (const char* field : {"family", "mode", "key", "status"}) {
    if (!j[field].is_string()) return wrong(field, "a string");
  }
  if (!j["params"].is_object()) return wrong("params", "an object");
  const std::string m = j["mode"];
  if (m != "gpu" && m != "simulate") return wrong("mode", "\"gpu\" or \"simulate\"");
  const std::string st = j["status"];
  if (st != "ok" && st != "wrong" && st != "skipped" && st != "pruned" && st != "error") {
    return wrong("status", "one of ok, wrong, skipped, pruned, error");
  }
  const Family* f = nullptr;
  try {
    const std::string name = j["family"];  // see space.cpp (GCC 13)
    f = &findFamily(name);
  } catch (const Error& e) {
    return e.what();
  }
  if (j.contains("fullKey") && !j["fullKey"].is_string()) return wrong("fullKey", "a string");
  if (j.contains("fullParams") && !j["fullParams"].is_object()) {
    return wrong("fullParams", "an object");
  }
  const nlohmann::json& params = j.contains("fullParams") ? j["fullParams"] : j["params"];
  if (complete && !params.contains(f->sizeParam)) {
    return std::string("\"") + (j.contains("fullParams") ? "fullParams" : "params") +
           "\" has no \"" + f->sizeParam + "\" (" + f->name + "'s size)";
  }
  // The times the tables rank by: optional, each an object holding a number.
  for (const auto& [object, number] :
       {std::pair<std::string, std::string>{"time_ms", "median"}, {"predicted", "microseconds"}}) {
    if (!j.contains(object)) continue;
    if (!j[object].is_object()) return wrong(object, "an object");
    if (!j[object].contains(number)) {
      return "\"" + object + "\" has no \"" + number + "\" (a number)";
    }
    if (!j[object][number].is_number()) return wrong(object + "/" + number, "a number");
  }
  if (j.contains("gbps") && !j["gbps"].is_number()) return wrong("gbps", "a number");
  if (j.contains("virtualized") && !j["virtualized"].is_boolean()) {
    return wrong("virtualized", "true or false");
  }
  return "";
}

}  // namespace

std::vector<nlohmann::json> readResults(const std::string& path, const std::string& wantMode,
                                        bool mustExist, bool complete) {
  std::vector<nlohmann::json> lines;
  std::map<std::string, size_t> byKey;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw Error("cannot read the results file " + path + ": it is a directory");
  }
  std::ifstream in(path);
  if (!in) {
    if (!mustExist && !std::filesystem::exists(path, ec)) return lines;
    throw Error("cannot read the results file " + path + ": " + std::strerror(errno));
  }
  std::string text;
  for (size_t number = 1; std::getline(in, text); ++number) {
    if (text.empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error&) {
      continue;  // a line cut short by an interrupted run (README.md, "Resume and limits")
    }
    const std::string problem = lineProblem(j, complete);
    if (!problem.empty()) {
      throw Error(path + ":" + std::to_string(number) + ": " + problem +
                  " (a line obsidian-tune did not write, or an edited one: remove or fix it)");
    }
    if (!wantMode.empty() && j["mode"] != wantMode) continue;
    // A line is the point it stands for: a simulated line of an older sweep keyed the capped
    // size it ran and names the full point in fullKey (since then both are the full key), so
    // every reader (resume, merge, tables, replays) sees one key for one point.
    if (j.contains("fullKey")) j["key"] = j["fullKey"];
    // (every mode: a GPU line and a simulated one of the same point are both kept)
    const auto [it, added] = byKey.emplace(
        (wantMode.empty() ? j["mode"].get<std::string>() + " " : "") + j["key"].get<std::string>(),
        lines.size());
    if (added) {
      lines.push_back(std::move(j));
    } else {
      lines[it->second] = std::move(j);  // a point run again after an error
    }
  }
  if (in.bad()) throw Error("cannot read the results file " + path + ": " + std::strerror(errno));
  return lines;
}

void writeFile(const std::string& path, const std::string& text, const std::string& what) {
  checkWritable(path, what);
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw Error("cannot write " + what + " " + path + ": " + std::strerror(errno));
}

void checkWritable(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    throw Error("cannot write " + what + " " + path + ": the directory " + parent.string() +
                " does not exist");
  }
  if (fs::is_directory(path, ec))
    throw Error("cannot write " + what + " " + path + ": a directory");
  const bool existed = fs::exists(path, ec);
  if (!std::ofstream(path, std::ios::app)) {
    throw Error("cannot write " + what + " " + path + ": " + std::strerror(errno));
  }
  if (!existed) fs::remove(path, ec);
}

namespace detail {

Resumed resume(const std::string& path, const std::string& wantMode) {
  Resumed r;
  for (const nlohmann::json& j : readResults(path, wantMode, false)) {
    if (j["status"] == "error") continue;  // run again: an error may have been transient
    r.done.insert(j["key"].get<std::string>());
    if (j["status"] == "ok" && j.contains("time_ms")) {
      const std::string g = j["family"].get<std::string>() + " " + j["group"].get<std::string>();
      const double ms = j["time_ms"]["median"];
      if (!r.best.count(g) || ms < r.best[g].ms) {
        const double predicted =
            j.contains("predicted") ? j["predicted"]["microseconds"].get<double>() : 0.0;
        r.best[g] = {ms, predicted, j["label"].get<std::string>()};
      }
    }
  }
  return r;
}

std::ofstream openResults(const std::string& path) {
  {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) {
      throw Error("cannot write the results file " + path + ": cannot make its directory " +
                  parent.string() + ": " + ec.message());
    }
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (in && in.tellg() > 0) {
      in.seekg(-1, std::ios::end);
      char last = '\n';
      in.get(last);
      if (last != '\n') std::ofstream(path, std::ios::app) << "\n";
    }
  }
  std::ofstream out(path, std::ios::app);
  if (!out) throw Error("cannot write the results file " + path + ": " + std::strerror(errno));
  return out;
}

void appendLine(std::ofstream& out, const nlohmann::json& line, const std::string& path) {
  // A reason is an Error's text, which may quote a kernel's messages in any encoding: bytes
  // that are not UTF-8 are written as U+FFFD (dump would throw on them).
  out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
  if (!out) throw Error("cannot write the results file " + path + ": " + std::strerror(errno));
}

}  // namespace detail

}  // namespace tuning
