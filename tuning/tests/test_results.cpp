// sweep.hpp's results files and outputs: a line that lacks a field is an error naming the file,
// the line and the field wherever results are read (resume, merge, tables); outputs that cannot
// be written fail naming the path; a sweep stopped by its cancellation hook leaves exactly the
// lines of the points it ran, each whole, and resumes from them.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>

#include "space.hpp"
#include "sweep.hpp"

using namespace tuning;
namespace fs = std::filesystem;

namespace {

// A directory of its own for each test case, removed at its end.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("obsidian-tune-test-" + std::to_string(::getpid()) + "-" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string operator/(const std::string& file) const { return (path / file).string(); }
};

// Six reduce points, quick on the simulator (sizes capped, no NVRTC).
std::vector<Point> smallSpace() {
  return parseSpace(
      nlohmann::json{
          {"family", "reduce"},
          {"params", {{"chunk", 256}, {"threads", {32, 64, 128}}, {"variant", {"red1", "red5"}}}}},
      true);
}

SweepOptions simulateInto(const std::string& output) {
  SweepOptions o;
  o.output = output;
  o.simulate = true;
  o.compile = false;
  o.jobs = 1;
  o.progress = 0;
  return o;
}

std::vector<std::string> linesOf(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text << "\n";
}

// std::cout into a string while it lives (the summaries and tables the functions print).
struct Silenced {
  std::ostringstream text;
  std::streambuf* saved = std::cout.rdbuf(text.rdbuf());
  ~Silenced() { std::cout.rdbuf(saved); }
};

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const obsidian::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("results: a line without a field is an error naming the file, the line and the field") {
  TempDir dir("fields");
  const std::string results = dir / "r.jsonl";
  const std::vector<Point> points = smallSpace();
  runSweep(points, simulateInto(results));
  REQUIRE(linesOf(results).size() == 6);
  const Silenced silenced;  // the summaries and tables

  // A line cut short (not JSON) is skipped, as documented; the issue's line is not.
  append(results, R"({"family":"reduce","mode":"simul)");
  CHECK(readResults(results, "simulate").size() == 6);
  append(results, R"({"mode":"simulate","key":"junk"})");
  const std::string expected = results +
                               ":8: no \"family\" (a string; a results line has family, mode, "
                               "key, params, status, label, threads, group)";
  // Every reader: resume, merge, the tables.
  CHECK(errorOf([&] { readResults(results, "simulate"); }).starts_with(expected));
  CHECK(errorOf([&] { runSweep(points, simulateInto(results)); }).starts_with(expected));
  CHECK(errorOf([&] {
          mergeResults({results}, dir / "m.jsonl", points, true);
        }).starts_with(expected));
  CHECK(errorOf([&] { printTables(results, true); }).starts_with(expected));

  // Each field the readers use, with its type.
  nlohmann::json good = nlohmann::json::parse(linesOf(results).front());
  const auto problem = [&](const std::function<void(nlohmann::json&)>& edit) {
    const std::string file = dir / "edited.jsonl";
    nlohmann::json j = good;
    edit(j);
    std::ofstream(file, std::ios::trunc) << good.dump() << "\n" << j.dump() << "\n";
    const std::string message = errorOf([&] { readResults(file, ""); });
    const std::string prefix = file + ":2: ";
    return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
  };
  CHECK(problem([](nlohmann::json&) {}) == "(no error)");
  CHECK(problem([](nlohmann::json& j) { j.erase("status"); }).starts_with("no \"status\""));
  CHECK(problem([](nlohmann::json& j) { j["key"] = 3; }).starts_with("\"key\" must be a string"));
  CHECK(problem([](nlohmann::json& j) {
          j["status"] = "fine";
        }).starts_with("\"status\" must be one of ok, wrong, skipped, pruned, error"));
  CHECK(problem([](nlohmann::json& j) {
          j["mode"] = "cpu";
        }).starts_with("\"mode\" must be \"gpu\" or \"simulate\""));
  CHECK(problem([](nlohmann::json& j) {
          j["family"] = "gemm";
        }).starts_with("unknown kernel family \"gemm\""));
  CHECK(problem([](nlohmann::json& j) { j.erase("params"); }).starts_with("no \"params\""));
  CHECK(problem([](nlohmann::json& j) {
          j["fullParams"].erase("chunk");
        }).starts_with("\"fullParams\" has no \"chunk\" (reduce's size)"));
  CHECK(problem([](nlohmann::json& j) {
          j["predicted"]["microseconds"] = "fast";
        }).starts_with("\"predicted.microseconds\" must be a number; got \"fast\""));
  CHECK(problem([](nlohmann::json& j) {
          j["time_ms"] = {{"min", 1.0}};
        }).starts_with("\"time_ms\" has no \"median\" (a number)"));
  CHECK(problem([](nlohmann::json& j) {
          j["virtualized"] = "yes";
        }).starts_with("\"virtualized\" must be true or false"));
  CHECK(problem([](nlohmann::json& j) {
          j = nlohmann::json::array();
        }).starts_with("a results line must be a JSON object"));
}

TEST_CASE("results: files that cannot be read or written are errors naming the path") {
  TempDir dir("paths");
  const std::string missing = dir / "none.jsonl";
  CHECK(errorOf([&] { readResults(missing, "gpu"); }) ==
        "cannot read the results file " + missing + ": No such file or directory");
  CHECK(readResults(missing, "gpu", false).empty());  // a sweep's first run: nothing to resume
  CHECK(errorOf([&] {
          printTables(missing, false);
        }).starts_with("cannot read the results file " + missing));
  CHECK(errorOf([&] { readResults(dir / "", "gpu"); }).ends_with(": it is a directory"));

  // The summary's directory is checked before the sweep: no point runs.
  const std::string results = dir / "r.jsonl";
  SweepOptions o = simulateInto(results);
  o.summary = dir / "no/such/dir/summary.json";
  CHECK(errorOf([&] { runSweep(smallSpace(), o); }) ==
        "cannot write the summary file " + o.summary + ": the directory " + (dir / "no/such/dir") +
            " does not exist");
  CHECK(linesOf(results).empty());
  o.summary = dir / "summary.json";
  runSweep(smallSpace(), o);
  CHECK(fs::file_size(o.summary) > 0);
  CHECK(errorOf([&] { writeFile(dir / "", "x", "the summary file"); }).ends_with(": a directory"));
  CHECK(errorOf([&] {
          checkWritable(dir / "a/b.json", "the summary file");
        }).starts_with("cannot write the summary file " + (dir / "a/b.json")));
  CHECK(!fs::exists(dir / "probe.json"));
  checkWritable(dir / "probe.json", "x");
  CHECK(!fs::exists(dir / "probe.json"));  // the check leaves no file behind

  // The tables of a file with no line of the mode: an error when asked for (--tables-only).
  const Silenced silenced;
  const std::string message = errorOf([&] { printTables(results, false, false, true); });
  printTables(results, false);  // after a sweep: nothing to print is no error
  CHECK(message == results + " has no gpu lines (its 6 simulate lines are read with --simulate)");
  // The merge's output.
  CHECK(errorOf([&] {
          mergeResults({results}, dir / "no/merged.jsonl", smallSpace(), true);
        }).starts_with("--merge: cannot write " + (dir / "no/merged.jsonl")));
}

TEST_CASE("results: a cancelled sweep stops between points, its lines whole, and resumes") {
  TempDir dir("cancel");
  const std::string results = dir / "r.jsonl";
  const std::vector<Point> points = smallSpace();
  SweepOptions o = simulateInto(results);
  size_t polls = 0;
  // Stop once three lines are written (polled between points and while waiting for kernels).
  o.cancelled = [&] {
    ++polls;
    return linesOf(results).size() >= 3;
  };
  const SweepSummary s = runSweep(points, o);
  CHECK(s.interrupted);
  CHECK(s.ran == 3);
  CHECK(polls >= 3);
  const std::vector<std::string> lines = linesOf(results);
  REQUIRE(lines.size() == 3);
  for (size_t i = 0; i < lines.size(); ++i) {
    const nlohmann::json j = nlohmann::json::parse(lines[i]);
    CHECK(j["key"] == points[i].key);
    CHECK(j["status"] == "ok");
  }
  CHECK(toJson(s)["interrupted"] == true);
  // Run again: the other three points, none twice.
  o.cancelled = nullptr;
  const SweepSummary rest = runSweep(points, o);
  CHECK(!rest.interrupted);
  CHECK(rest.resumed == 3);
  CHECK(rest.ran == 3);
  CHECK(readResults(results, "simulate").size() == 6);
  CHECK(linesOf(results).size() == 6);
}

TEST_CASE("results: an older simulated line is read as the full point it stands for") {
  // Before issue 40 a simulated line's key named the capped size it ran, its fullKey the point;
  // every reader takes fullKey, so resuming such a file runs none of its points again.
  TempDir dir("older");
  const std::vector<Point> points = smallSpace();
  const std::string results = dir / "older.jsonl";
  {
    Silenced quiet;
    runSweep(points, simulateInto(results));
  }
  const std::vector<std::string> lines = linesOf(results);
  REQUIRE(lines.size() == points.size());
  std::ofstream older(results, std::ios::trunc);
  for (const std::string& text : lines) {
    nlohmann::json j = nlohmann::json::parse(text);
    j["key"] = j["key"].get<std::string>() + " (capped)";  // what an older sweep wrote
    older << j.dump() << "\n";
  }
  older.close();
  const std::vector<nlohmann::json> read = readResults(results, "simulate", true, false);
  std::set<std::string> keys, want;
  for (const nlohmann::json& j : read) keys.insert(j["key"].get<std::string>());
  for (const Point& p : points) want.insert(p.key);
  CHECK(keys == want);
  Silenced quiet;
  const SweepSummary again = runSweep(points, simulateInto(results));
  CHECK(again.resumed == points.size());
  CHECK(again.ran == 0);
}
