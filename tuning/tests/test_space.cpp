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
