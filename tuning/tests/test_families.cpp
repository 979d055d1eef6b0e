// family.hpp's plain kernels: every family that lists them (Family::plainKernels) lists every
// one its point's data asks for on the GPU, so the compile threads make them ahead of the runs;
// and plainKernel makes each once, whichever threads ask.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "family.hpp"
#include "space.hpp"

using namespace tuning;
namespace gpu = obsidian::gpu;

namespace {

// One point of every family that lists its plain kernels, at a small size; each element type
// and variant of what its data makes on the device (the input's formula, the reference).
std::vector<Point> onePointEach() {
  const std::vector<std::pair<std::string, Params>> points = {
      {"reduce",
       {{"type", "f32"}, {"n", 8192}, {"chunk", 1024}, {"threads", 256}, {"variant", "red5"}}},
      {"test_wrong_reference",
       {{"type", "u32"}, {"n", 4096}, {"chunk", 512}, {"threads", 128}, {"variant", "red3"}}},
      {"reduce_whole",
       {{"type", "u32"}, {"n", 5000}, {"chunk", 1024}, {"threads", 128}, {"variant", "red3"}}},
      {"scan",
       {{"type", "u32"}, {"n", 4096}, {"chunk", 512}, {"threads", 256}, {"variant", "sklansky"}}},
      {"scan",
       {{"type", "f32"}, {"n", 4096}, {"chunk", 512}, {"threads", 256}, {"variant", "sklansky"}}},
      {"mandelbrot", {{"size", 64}, {"threads", 64}}},
      {"device_reduce", {{"type", "f32"}, {"n", 5003}, {"threads", 256}}},
      {"device_segmented_reduce",
       {{"type", "u32"}, {"n", 5003}, {"segment", 1000}, {"threads", 64}}},
      {"device_scan",
       {{"type", "f32"}, {"kind", "exclusive"}, {"n", 5003}, {"threads", 64}, {"items", 5}}},
      {"histogram", {{"type", "u8"}, {"n", 20011}, {"bins", 256}, {"threads", 256}}},
      {"transpose", {{"type", "u32"}, {"rows", 100}, {"cols", 70}, {"tile", 32}, {"threads", 256}}},
      {"radix_sort", {{"type", "f32"}, {"n", 3001}, {"threads", 256}, {"items", 5}}},
      {"merge_sort", {{"type", "f32"}, {"n", 3001}, {"threads", 64}, {"items", 5}}},
      {"segmented_sort",
       {{"type", "f32"},
        {"n", 3001},
        {"segment", 100},
        {"threads", 64},
        {"items", 2},
        {"radix_bits", 6}}},
  };
  std::vector<Point> out;
  for (const auto& [family, params] : points) out.push_back(makePoint(family, params, false));
  return out;
}

std::set<std::string> keysOf(const std::vector<PlainKernel>& plain) {
  std::set<std::string> keys;
  for (const PlainKernel& pk : plain) keys.insert(pk.key);
  return keys;
}

}  // namespace

TEST_CASE(
    "families: every family but blas, array, select and reduce_by_key lists its plain "
    "kernels, each one makeable") {
  // (blas's references, which the array family's BLAS programs share, make their kernels by
  // sequence as they run: 0.1% of its sweep; select's and reduce_by_key's inputs are made and
  // checked on the host, their runs by a sequential generator, so they launch none)
  const std::set<std::string> none = {"blas", "array", "select", "reduce_by_key"};
  std::set<std::string> listing, covered;
  for (const Family& f : families()) {
    CHECK_MESSAGE(bool(f.plainKernels) == !none.contains(f.name), f.name);
    if (f.plainKernels) listing.insert(f.name);
  }
  for (const Point& p : onePointEach()) {
    covered.insert(p.family->name);
    const std::vector<PlainKernel> plain = p.family->plainKernels(p.params);
    CHECK_MESSAGE(!plain.empty(), p.key);
    CHECK_MESSAGE(keysOf(plain).size() == plain.size(), p.key);  // no kernel twice
    for (const PlainKernel& pk : plain) {
      CHECK_MESSAGE(plainKernel(pk).name() == pk.make().name(), pk.key);
    }
  }
  CHECK(covered == listing);  // the GPU test below sees every listing family
  // The types are the point's: an f32 point lists no u32 kernel.
  const Point f32 =
      makePoint("device_segmented_reduce",
                {{"type", "f32"}, {"n", 5003}, {"segment", 1000}, {"threads", 64}}, false);
  for (const std::string& key : keysOf(f32.family->plainKernels(f32.params))) {
    CHECK_MESSAGE(key.find("u32") == std::string::npos, key);
  }
  // A point whose data cannot be made: the list throws the Error instantiate gives.
  const Point bad = makePoint(
      "reduce", {{"n", 1000}, {"chunk", 256}, {"threads", 64}, {"variant", "red1"}}, false);
  CHECK_THROWS_WITH_AS(bad.family->plainKernels(bad.params),
                       doctest::Contains("must be a multiple of chunk"), obsidian::Error);
}

TEST_CASE("families: plainKernel makes a key's kernel once, for all the threads that ask") {
  std::atomic<int> makes{0};
  const auto make = [&] {
    ++makes;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // others ask meanwhile
    return plainHash().make();
  };
  std::vector<std::thread> threads;
  std::vector<uint64_t> ids(8);
  for (size_t i = 0; i < ids.size(); ++i) {
    threads.emplace_back([&, i] { ids[i] = plainKernel({"test:once", make}).id(); });
  }
  for (std::thread& t : threads) t.join();
  CHECK(makes == 1);
  for (uint64_t id : ids) CHECK(id == ids[0]);
  CHECK(plainKernel({"test:once", make}).id() == ids[0]);
  CHECK(makes == 1);

  // A make that throws leaves the key unmade: the next ask makes it.
  int attempts = 0;
  const auto flaky = [&] {
    if (attempts++ == 0) throw obsidian::Error("test: the first make fails");
    return plainHash().make();
  };
  CHECK_THROWS_AS(plainKernel({"test:flaky", flaky}), obsidian::Error);
  CHECK_NOTHROW(plainKernel({"test:flaky", flaky}));
  CHECK(attempts == 2);

  // The recorder sees every key asked, made or not; one at a time.
  PlainKernelsAsked asked;
  plainKernel({"test:once", make});
  plainKernel(plainSegmentFold<float>(true));
  CHECK(asked.keys() == std::set<std::string>{"test:once", "segmentScansf32"});
  CHECK_THROWS_WITH_AS(PlainKernelsAsked(), doctest::Contains("one recorder at a time"),
                       obsidian::Error);
}

TEST_CASE("families on the GPU: a point's data asks for no plain kernel its family does not list") {
  if (!gpu::available()) {
    std::cout << "SKIPPED: no CUDA device (" << gpu::unavailableReason() << ")\n";
    return;
  }
  for (const Point& p : onePointEach()) {
    CAPTURE(p.key);
    const Generated g = generate(*p.family, p.params, false);
    const std::set<std::string> listed = keysOf(p.family->plainKernels(p.params));
    std::set<std::string> keys;
    std::string check;
    {
      PlainKernelsAsked asked;
      DataCache cache;
      std::unique_ptr<Instance> point = p.family->instantiate(p.params, g, cache);
      point->prepareGpu(cache);
      point->launch(0, {});
      check = point->checkGpu();
      keys = asked.keys();
    }
    CHECK(!keys.empty());
    for (const std::string& key : keys) CHECK_MESSAGE(listed.count(key) == 1, key);
    // The point ran as a sweep runs it: right, or (the test family) wrong.
    CHECK((check.empty()) == (p.family->name != "test_wrong_reference"));
  }
}
