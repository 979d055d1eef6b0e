// Search spaces: a JSON description of the points to sweep, and their enumeration.
//
// A space is one object, or an array of them (their points are concatenated):
//   {"family": "reduce",
//    "params": {"variant": ["red1", "red5"],                 a list of values
//               "threads": {"from": 32, "to": 1024, "mul": 2},  a range: 32 64 ... 1024
//               "chunk": {"from": 256, "to": 1024, "step": 256}, 256 512 768 1024
//               "n": 16777216}}                               one value
// Parameters the space does not give take the family's default. Points are generated with the
// family's first parameter outermost, then the points of one problem (groupOf) gathered in the
// order their problems first appear, across the array's objects too: points that share an input
// and a reference are adjacent, so a sweep makes each once. Points equal after the family's
// canonical form (e.g. `seq` for variants that ignore it) appear once. A range is validated
// (bounds, length) before it is expanded, and a space's size before its points are made.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "family.hpp"

namespace tuning {

// What a space may expand to, checked before anything is made: a range's values, and a space's
// points (the product of its parameters' values, over all its objects). A mistyped space is
// an error naming these, not a sweep that fills memory.
constexpr uint64_t kMaxRangeValues = 10000;
constexpr uint64_t kMaxSpacePoints = 100000;

struct Point {
  const Family* family = nullptr;
  Params params;  // canonical (see Family::canonical): on the simulator, its sizes capped
  // family name + canonical parameters at the full size (`full`): identifies the point in a
  // results file, the same on the GPU and on the simulator
  std::string key;
  // The point as the GPU runs it (sizes not capped): what a simulated point stands for.
  Params full;
};

// How many times the work of p.full is p.params's: the product of full / capped over the
// numeric parameters the simulator caps (the families' sizes scale their work linearly).
double workScale(const Point& p);

// Throws obsidian::Error with a message that names the offending construct (file, family,
// parameter, value).
std::vector<Point> parseSpace(const nlohmann::json& space, bool simulate,
                              const std::string& where = "space");
std::vector<Point> loadSpace(const std::string& path, bool simulate);

std::string pointKey(const std::string& family, const Params& params);

// Is `name` a design choice of the family (shown in the variant label or as threads)?
bool isChoice(const Family& f, const std::string& name);
// The problem parameters of a point ("type=u32 n=67108864 chunk=4096"): those not a design
// choice, in the family's order; without `except` (the size parameter, for tables whose columns
// are sizes).
std::string groupOf(const Family& f, const Params& p, const std::string& except = "");

// The one point of `family` that `params` names (one value per parameter; the family's defaults
// fill the rest), as parseSpace makes it. Throws obsidian::Error naming the parameter for a list
// or a range, and as parseSpace does for unknown parameters and values out of range.
Point makePoint(const std::string& family, const Params& params, bool simulate);

// Shard `index` of `count` (0-based) of a space's points: `count` contiguous slices of sizes
// differing by at most one (contiguous, so points that share an input stay in one shard).
// Together the shards hold every point once. Throws obsidian::Error unless index < count.
std::vector<Point> shardOf(const std::vector<Point>& points, size_t index, size_t count);
// "i/N" (as --shard takes it) read into {index, count}; an Error naming the rule otherwise.
std::pair<size_t, size_t> parseShard(const std::string& text);

}  // namespace tuning
