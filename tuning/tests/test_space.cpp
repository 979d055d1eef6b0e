// space.hpp: the points of one problem are adjacent, across a space's objects too, in the
// order their problems first appear (so a sweep makes each input and reference once).
#include <doctest/doctest.h>

#include <set>

#include "space.hpp"

using namespace tuning;

TEST_CASE("space: each problem's points are adjacent, problems in the order they first appear") {
  // Two objects over the same four problems (type x n): without the gathering, the second
  // object's points would visit every problem again.
  const auto object = [](uint32_t threads) {
    return nlohmann::json{{"family", "device_scan"},
                          {"params",
                           {{"type", {"u32", "f32"}},
                            {"n", {4096, 8192}},
                            {"threads", threads},
                            {"items", {11, 15}}}}};
  };
  const std::vector<Point> points = parseSpace(nlohmann::json{object(128), object(256)}, false);
  REQUIRE(points.size() == 16);
  std::vector<std::string> order;
  for (const Point& p : points) {
    const std::string g = groupOf(*p.family, p.params);
    if (order.empty() || order.back() != g) order.push_back(g);
  }
  CHECK(order.size() == 4);  // each problem once: adjacent
  CHECK(std::set<std::string>(order.begin(), order.end()).size() == 4);
  CHECK(order.front() == "type=u32 kind=inclusive n=4096");
  CHECK(order.back() == "type=f32 kind=inclusive n=8192");
  // Within a problem, the space's own order: the first object's points, then the second's.
  CHECK(points[0].params["threads"] == 128);
  CHECK(points[2].params["threads"] == 256);
  CHECK(points[1].params["items"] == 15);
}

namespace {

// The message of parseSpace's Error for a reduce space whose `name` parameter is `value`.
std::string errorOf(const std::string& name, const nlohmann::json& value,
                    const std::string& family = "reduce") {
  nlohmann::json params = {{"chunk", 256}, {"threads", 32}, {"variant", "red1"}};
  params[name] = value;
  try {
    parseSpace(nlohmann::json{{"family", family}, {"params", params}}, false, "s.json");
  } catch (const obsidian::Error& e) {
    return e.what();
  }
  return "(no error)";
}

nlohmann::json range(int64_t from, int64_t to, const char* by, int64_t m) {
  return {{"from", from}, {"to", to}, {by, m}};
}

}  // namespace

TEST_CASE("space: a range is validated before it is expanded, bounds in the message") {
  const int64_t max = INT64_MAX;
  // The issue's range: x *= 2 overflowed past 2^62 and never ended; now its last value is
  // computed without overflow and is outside n's bounds.
  CHECK(errorOf("n", range(1, max, "mul", 2)) ==
        "s.json (family reduce), parameter \"n\": the range "
        "{\"from\":1,\"mul\":2,\"to\":9223372036854775807} reaches 4611686018427387904, outside "
        "the parameter's [1, 2147483648]");
  CHECK(errorOf("threads", range(1, max, "step", 1)) ==
        "s.json (family reduce), parameter \"threads\": the range "
        "{\"from\":1,\"step\":1,\"to\":9223372036854775807} reaches 9223372036854775807, "
        "outside the parameter's [1, 1024]");
  // A step or product past int64's range ends the range rather than wrapping around.
  for (const char* by : {"mul", "step"}) {
    const std::vector<Point> one = parseSpace(
        nlohmann::json{
            {"family", "reduce"},
            {"params", {{"chunk", 256}, {"threads", range(3, max, by, max)}, {"variant", "red1"}}}},
        false);
    REQUIRE(one.size() == 1);
    CHECK(one[0].params["threads"] == 3);
  }
  CHECK(errorOf("n", range(-max, max, "step", max))
            .find("starts at -9223372036854775807, "
                  "outside the parameter's [1, ") != std::string::npos);
  // Within the bounds but too many values: the cap is named.
  CHECK(errorOf("n", range(1, 1 << 30, "step", 1))
            .find("has 1073741824 values; a range may have at most 10000") != std::string::npos);
  // Each rule of the step and mul forms.
  CHECK(errorOf("threads", range(32, 64, "step", 0)).find("a \"step\" range needs step >= 1") !=
        std::string::npos);
  CHECK(errorOf("threads", range(32, 64, "step", -32)).find("needs step >= 1") !=
        std::string::npos);
  CHECK(errorOf("threads", range(32, 64, "mul", 1)).find("needs from >= 1 and mul >= 2") !=
        std::string::npos);
  CHECK(errorOf("threads", range(32, 64, "mul", -2)).find("needs from >= 1 and mul >= 2") !=
        std::string::npos);
  CHECK(errorOf("seq", range(-4, 64, "mul", 2))
            .find("starts at -4, outside the parameter's "
                  "[1, 65536]") != std::string::npos);
  CHECK(errorOf("threads", range(64, 32, "mul", 2)).find("is empty: from (64) > to (32)") !=
        std::string::npos);
  CHECK(errorOf("threads", range(0, 32, "step", 1))
            .find("starts at 0, outside the parameter's "
                  "[1, 1024]") != std::string::npos);
  CHECK(errorOf("threads",
                nlohmann::json::parse(R"({"from": 1, "to": 18446744073709551615, "step": 1})"))
            .find("18446744073709551615 is beyond the integers a space can hold") !=
        std::string::npos);
  CHECK(errorOf("threads", nlohmann::json::parse("18446744073709551615"))
            .find("beyond the integers") != std::string::npos);
  // A range whose `to` is past the bounds but whose values are not is fine, as it always was.
  const std::vector<Point> points = parseSpace(
      nlohmann::json{
          {"family", "reduce"},
          {"params",
           {{"chunk", 4096}, {"threads", range(32, 2000, "mul", 2)}, {"variant", "red5"}}}},
      false);
  REQUIRE(points.size() == 6);
  CHECK(points.back().params["threads"] == 1024);
}

TEST_CASE("space: the number of points is capped before any is made, the cap named") {
  const nlohmann::json big = {{"family", "reduce"},
                              {"params",
                               {{"chunk", range(1, 1024, "step", 1)},
                                {"threads", range(1, 1024, "step", 1)},
                                {"variant", "red1"}}}};
  try {
    parseSpace(big, false, "big.json");
    FAIL("no error");
  } catch (const obsidian::Error& e) {
    CHECK(std::string(e.what()) ==
          "big.json (family reduce): the space expands to more than 100000 points (chunk 1024 x "
          "threads 1024); a space may have at most 100000");
  }
  // Objects of an array add up: two of 60000 points are too many together.
  const nlohmann::json half = {{"family", "reduce"},
                               {"params",
                                {{"chunk", range(1, 60, "step", 1)},
                                 {"threads", range(1, 1000, "step", 1)},
                                 {"variant", "red1"}}}};
  CHECK_THROWS_WITH_AS(parseSpace(nlohmann::json{half, half}, false, "two.json"),
                       doctest::Contains("two.json[1] (family reduce): the space expands to more "
                                         "than 100000 points (chunk 60 x threads 1000, with the "
                                         "objects before)"),
                       obsidian::Error);
}

TEST_CASE("space: a simulated point is named by the point it stands for") {
  // Two sizes the simulator caps alike: each is its own point (predicted at its own size), and
  // its key is the GPU sweep's, so a simulated sweep's lines answer for the space's points.
  const nlohmann::json space = {
      {"family", "device_reduce"},
      {"params", {{"type", "u32"}, {"n", {16777216, 268435456}}, {"threads", 256}}}};
  const std::vector<Point> simulated = parseSpace(space, true);
  const std::vector<Point> gpu = parseSpace(space, false);
  REQUIRE(simulated.size() == 2);
  REQUIRE(gpu.size() == 2);
  CHECK(simulated[0].params == simulated[1].params);  // capped alike
  CHECK(simulated[0].params["n"] < 16777216);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(simulated[i].key == gpu[i].key);
    CHECK(simulated[i].full == gpu[i].params);
  }
}
