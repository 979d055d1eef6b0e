// Search spaces (see space.hpp).
#include "space.hpp"

#include <algorithm>
#include <cassert>
#include <fstream>
#include <map>
#include <set>

namespace tuning {

namespace {

using obsidian::Error;

// A JSON integer as int64_t; an Error naming `what` for one beyond int64_t (2^63 and up, which
// get<int64_t>() would wrap to a negative number).
int64_t intOf(const nlohmann::json& v, const std::string& what) {
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) {
    throw Error(what + " " + v.dump() + " is beyond the integers a space can hold (2^63 - 1)");
  }
  return v.get<int64_t>();
}

std::string boundsText(const ParamSpec& s) {
  return "[" + std::to_string(s.min) + ", " + std::to_string(s.max) + "]";
}

// A range's values, validated before any is made: its bounds are checked against the
// parameter's and its length computed exactly (no step or product may overflow), so that no
// range, however mistyped, can run away (from: 1, to: 2^63 - 1, mul: 2 overflowed and never
// ended).
std::vector<nlohmann::json> expandRange(const nlohmann::json& r, const ParamSpec& s,
                                        const std::string& where) {
  for (const auto& [k, v] : r.items()) {
    if (k != "from" && k != "to" && k != "mul" && k != "step") {
      throw Error(where + ": unknown range key \"" + k +
                  "\" (a range is {\"from\": a, \"to\": b, \"mul\": m} or {\"from\": a, \"to\": "
                  "b, \"step\": s})");
    }
    if (!v.is_number_integer()) throw Error(where + ": range key \"" + k + "\" must be an integer");
  }
  if (!r.contains("from") || !r.contains("to")) {
    throw Error(where + ": a range needs \"from\" and \"to\"");
  }
  if (r.contains("mul") == r.contains("step")) {
    throw Error(where + ": a range needs exactly one of \"mul\" and \"step\"");
  }
  const std::string range = where + ": the range " + r.dump();
  const int64_t from = intOf(r["from"], range + ": from"), to = intOf(r["to"], range + ": to");
  if (from > to) {
    throw Error(range + " is empty: from (" + std::to_string(from) + ") > to (" +
                std::to_string(to) + ")");
  }
  if (from < s.min || from > s.max) {
    throw Error(range + " starts at " + std::to_string(from) + ", outside the parameter's " +
                boundsText(s));
  }
  // The number of values and the last one, without making them.
  uint64_t count = 1;
  int64_t last = from, increment = 0, factor = 0;
  if (r.contains("mul")) {
    factor = intOf(r["mul"], range + ": mul");
    if (factor < 2 || from < 1)
      throw Error(range + ": a \"mul\" range needs from >= 1 and mul >= 2");
    while (last <= to / factor) {  // last * factor <= to, which cannot overflow
      last *= factor;
      ++count;
    }
  } else {
    increment = intOf(r["step"], range + ": step");
    if (increment < 1) throw Error(range + ": a \"step\" range needs step >= 1");
    // to - from in unsigned arithmetic: it may exceed INT64_MAX (from < 0).
    count = (static_cast<uint64_t>(to) - static_cast<uint64_t>(from)) /
                static_cast<uint64_t>(increment) +
            1;
    last = static_cast<int64_t>(static_cast<uint64_t>(from) +
                                (count - 1) * static_cast<uint64_t>(increment));
  }
  if (last > s.max) {
    throw Error(range + " reaches " + std::to_string(last) + ", outside the parameter's " +
                boundsText(s));
  }
  if (count > kMaxRangeValues) {
    throw Error(range + " has " + std::to_string(count) + " values; a range may have at most " +
                std::to_string(kMaxRangeValues));
  }
  std::vector<nlohmann::json> values;
  values.reserve(count);
  int64_t x = from;
  for (uint64_t i = 0; i < count; ++i) {
    values.emplace_back(x);
    if (i + 1 < count) x = factor ? x * factor : x + increment;  // never past `last`
  }
  return values;
}

void checkValue(const ParamSpec& s, const nlohmann::json& v, const std::string& where) {
  if (s.kind == ParamSpec::Kind::Choice) {
    std::string choices;
    for (const std::string& c : s.choices) choices += (choices.empty() ? "" : ", ") + c;
    if (!v.is_string()) throw Error(where + ": expected one of " + choices + "; got " + v.dump());
    if (std::find(s.choices.begin(), s.choices.end(), v.get<std::string>()) == s.choices.end()) {
      throw Error(where + ": unknown value " + v.dump() + "; expected one of " + choices);
    }
    return;
  }
  if (!v.is_number_integer()) throw Error(where + ": expected an integer; got " + v.dump());
  const int64_t x = intOf(v, where + ": the value");
  if (x < s.min || x > s.max)
    throw Error(where + ": " + std::to_string(x) + " is outside " + boundsText(s));
}

std::vector<nlohmann::json> valuesOf(const ParamSpec& s, const nlohmann::json& given,
                                     const std::string& where) {
  std::vector<nlohmann::json> values;
  if (given.is_array()) {
    if (given.empty()) throw Error(where + ": the list of values is empty");
    values.assign(given.begin(), given.end());
  } else if (given.is_object()) {
    if (s.kind != ParamSpec::Kind::Int) throw Error(where + ": a range needs an integer parameter");
    values = expandRange(given, s, where);
  } else {
    values.push_back(given);
  }
  for (const nlohmann::json& v : values) checkValue(s, v, where);
  return values;
}

// `budget`: how many more points (before duplicates are dropped) the space may expand to.
std::vector<Point> parseOne(const nlohmann::json& space, bool simulate, const std::string& where,
                            uint64_t& budget) {
  if (!space.is_object())
    throw Error(where + ": expected an object {\"family\": ..., \"params\": {...}}");
  for (const auto& [k, v] : space.items()) {
    if (k != "family" && k != "params" && k != "comment") {
      throw Error(where + ": unknown key \"" + k + "\" (expected family, params, comment)");
    }
  }
  if (!space.contains("family") || !space["family"].is_string()) {
    throw Error(where + ": \"family\" (a string) is missing");
  }
  // A named string first: GCC 13 takes a reference from a temporary argument for a dangling one.
  const std::string familyName = space["family"];
  const Family& family = findFamily(familyName);
  const std::string at = where + " (family " + family.name + ")";
  const nlohmann::json params = space.value("params", nlohmann::json::object());
  if (!params.is_object()) throw Error(at + ": \"params\" must be an object");
  for (const auto& [k, v] : params.items()) {
    const bool known = std::any_of(family.params.begin(), family.params.end(),
                                   [&k](const ParamSpec& s) { return s.name == k; });
    if (!known) {
      std::string names;
      for (const ParamSpec& s : family.params) names += (names.empty() ? "" : ", ") + s.name;
      throw Error(at + ": unknown parameter \"" + k + "\"; " + family.name + " has: " + names);
    }
  }
  // Every parameter's values, in the family's order.
  std::vector<std::vector<nlohmann::json>> axes;
  for (const ParamSpec& s : family.params) {
    const std::string w = at + ", parameter \"" + s.name + "\"";
    if (params.contains(s.name)) {
      axes.push_back(valuesOf(s, params[s.name], w));
    } else if (!s.defaultValue.is_null()) {
      axes.push_back({s.defaultValue});
    } else {
      throw Error(at + ": parameter \"" + s.name + "\" (" + s.help + ") has no default; give it");
    }
  }
  // The number of points, counted before any is made (and before the product can overflow).
  uint64_t count = 1;
  std::string shape;
  for (size_t a = 0; a < axes.size(); ++a) {
    if (axes[a].size() == 1) continue;
    shape +=
        (shape.empty() ? "" : " x ") + family.params[a].name + " " + std::to_string(axes[a].size());
    count = count > budget / axes[a].size() ? budget + 1 : count * axes[a].size();
  }
  if (count > budget) {
    throw Error(at + ": the space expands to more than " + std::to_string(kMaxSpacePoints) +
                " points (" + shape +
                (budget < kMaxSpacePoints ? ", with the objects before" : "") +
                "); a space may have at most " + std::to_string(kMaxSpacePoints));
  }
  budget -= count;
  std::vector<Point> points;
  std::set<std::string> seen;
  std::vector<size_t> index(axes.size(), 0);
  for (;;) {
    Params p = nlohmann::json::object();
    for (size_t a = 0; a < axes.size(); ++a) p[family.params[a].name] = axes[a][index[a]];
    Params full = family.canonical(p, false);
    p = family.canonical(std::move(p), simulate);
    // A simulated point is named by the point it stands for, as a GPU sweep names it: points
    // whose sizes the simulator caps alike stay distinct (each predicted at its own size), and
    // a simulated sweep's lines answer for the space's points (a search replaying it).
    std::string key = pointKey(family.name, full);
    if (seen.insert(key).second) {
      points.push_back(Point{&family, std::move(p), std::move(key), std::move(full)});
    }
    // next index, the last parameter fastest
    size_t a = axes.size();
    while (a > 0 && ++index[a - 1] == axes[a - 1].size()) index[--a] = 0;
    if (a == 0) break;
  }
  return points;
}

}  // namespace

double workScale(const Point& p) {
  double scale = 1;
  for (const auto& [name, value] : p.params.items()) {
    if (!value.is_number() || !p.full.contains(name) || p.full[name] == value) continue;
    scale *= p.full[name].get<double>() / value.get<double>();
  }
  return scale;
}

std::string pointKey(const std::string& family, const Params& params) {
  return family + " " + params.dump();  // object keys are sorted: a stable key
}

bool isChoice(const Family& f, const std::string& name) {
  return name == f.threadsParam ||
         std::find(f.labelParams.begin(), f.labelParams.end(), name) != f.labelParams.end();
}

std::string groupOf(const Family& f, const Params& p, const std::string& except) {
  std::string g;
  for (const ParamSpec& s : f.params) {
    if (isChoice(f, s.name) || s.name == except || !p.contains(s.name)) continue;
    const nlohmann::json& v = p[s.name];
    g += (g.empty() ? "" : " ") + s.name + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return g;
}

std::vector<Point> parseSpace(const nlohmann::json& space, bool simulate,
                              const std::string& where) {
  std::vector<Point> all;
  uint64_t budget = kMaxSpacePoints;
  if (!space.is_array()) {
    all = parseOne(space, simulate, where, budget);
  } else {
    std::set<std::string> seen;
    for (size_t i = 0; i < space.size(); ++i) {
      for (Point& p : parseOne(space[i], simulate, where + "[" + std::to_string(i) + "]", budget)) {
        if (seen.insert(p.key).second) all.push_back(std::move(p));
      }
    }
  }
  // Each problem's points together, problems in the order they first appear.
  std::map<std::string, size_t> rankOf;
  std::vector<std::pair<size_t, size_t>> order;  // (problem's rank, position)
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string problem = all[i].family->name + " " + groupOf(*all[i].family, all[i].params);
    order.emplace_back(rankOf.emplace(problem, rankOf.size()).first->second, i);
  }
  std::sort(order.begin(), order.end());
  std::vector<Point> sorted;
  sorted.reserve(all.size());
  for (const auto& [rank, i] : order) sorted.push_back(std::move(all[i]));
  return sorted;
}

Point makePoint(const std::string& family, const Params& params, bool simulate) {
  const std::string where = "point of " + family;
  if (!params.is_object()) throw Error(where + ": the parameters must be an object");
  for (const auto& [k, v] : params.items()) {
    if (v.is_array() || v.is_object()) {
      throw Error(where + ": parameter \"" + k + "\" needs one value; got " + v.dump());
    }
  }
  std::vector<Point> points =
      parseSpace(nlohmann::json{{"family", family}, {"params", params}}, simulate, where);
  assert(points.size() == 1);  // one value per parameter: one point
  return std::move(points.front());
}

// The rule of shard numbers, for shardOf and parseShard; `what` names the shard as given.
static void checkShard(size_t index, size_t count, const std::string& what) {
  if (count == 0 || index >= count) {
    throw Error(what + ": needs 0 <= i < N (shards are numbered from 0)");
  }
}

std::vector<Point> shardOf(const std::vector<Point>& points, size_t index, size_t count) {
  checkShard(index, count, "shard " + std::to_string(index) + "/" + std::to_string(count));
  const size_t n = points.size();
  const auto begin = points.begin() + static_cast<std::ptrdiff_t>(n * index / count);
  const auto end = points.begin() + static_cast<std::ptrdiff_t>(n * (index + 1) / count);
  return {begin, end};
}

std::pair<size_t, size_t> parseShard(const std::string& text) {
  const size_t slash = text.find('/');
  const auto number = [&](const std::string& part) -> size_t {
    if (part.empty() || part.size() > 9 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      throw Error("--shard " + text + ": expected i/N with whole numbers (e.g. 0/4)");
    }
    return std::stoul(part);
  };
  if (slash == std::string::npos) {
    throw Error("--shard " + text + ": expected i/N with whole numbers (e.g. 0/4)");
  }
  const size_t index = number(text.substr(0, slash)), count = number(text.substr(slash + 1));
  checkShard(index, count, "--shard " + text);
  return {index, count};
}

std::vector<Point> loadSpace(const std::string& path, bool simulate) {
  std::ifstream file(path);
  if (!file) throw Error("cannot open the space file " + path);
  nlohmann::json space;
  try {
    space = nlohmann::json::parse(file);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(path + ": not valid JSON: " + e.what());
  }
  return parseSpace(space, simulate, path);
}

}  // namespace tuning
