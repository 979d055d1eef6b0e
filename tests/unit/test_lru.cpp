// The least-recently-used policy of the device's loaded modules (src/runtime/lru.hpp), on the
// CPU: capacity, recency, entries in use spared, the newest entry spared, eviction order and a
// callback that throws. (tests/gpu/test_gpu_modules.cpp checks the device that uses it.)
#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/lru.hpp"

using obsidian::Lru;

namespace {

// Values are shared pointers: an entry is in use while someone else holds its pointer, as a
// Function handle holds a loaded module.
using Value = std::shared_ptr<int>;

struct Recorder {
  std::vector<std::string> evicted;
  Lru<std::string, Value> lru;
  explicit Recorder(size_t capacity)
      : lru(
            capacity, [](const Value& v) { return v.use_count() > 1; },
            [this](const std::string& k, Value&) { evicted.push_back(k); }) {}
  Value add(const std::string& key) {
    auto v = std::make_shared<int>(static_cast<int>(key.size()));
    lru.insert(key, v);
    return v;
  }
};

}  // namespace

TEST_CASE("lru: beyond its capacity the least recently used entry is evicted") {
  Recorder r(2);
  r.add("a");
  r.add("b");
  CHECK(r.evicted.empty());
  CHECK(r.lru.size() == 2);
  r.add("c");
  CHECK(r.evicted == std::vector<std::string>{"a"});
  CHECK(r.lru.find("a") == nullptr);
  CHECK(r.lru.find("b") != nullptr);
  CHECK(r.lru.find("c") != nullptr);
  CHECK(r.lru.size() == 2);
}

TEST_CASE("lru: find makes an entry the most recently used") {
  Recorder r(2);
  r.add("a");
  r.add("b");
  REQUIRE(r.lru.find("a") != nullptr);  // now b is the least recently used
  r.add("c");
  CHECK(r.evicted == std::vector<std::string>{"b"});
  CHECK(r.lru.find("a") != nullptr);
  CHECK(r.lru.find("missing") == nullptr);
}

TEST_CASE("lru: entries in use are spared until released") {
  Recorder r(2);
  {
    const Value held = r.add("a");
    r.add("b").reset();
    r.add("c");  // a is the least recently used but held: b goes
    CHECK(r.evicted == std::vector<std::string>{"b"});
    r.add("d");  // a is still held: c goes
    CHECK(r.evicted == std::vector<std::string>{"b", "c"});
    CHECK(r.lru.size() == 2);
    CHECK(r.lru.find("a") != nullptr);
  }
  r.lru.trim();  // a is released, but the set is within its capacity: nothing goes
  CHECK(r.evicted == std::vector<std::string>{"b", "c"});
  CHECK(r.lru.size() == 2);
  r.add("e");  // a was found after d was added: d is the least recently used
  CHECK(r.evicted == std::vector<std::string>{"b", "c", "d"});
}

TEST_CASE("lru: the set stays above its capacity while every older entry is held") {
  Recorder r(1);
  const Value a = r.add("a");
  const Value b = r.add("b");  // a is held; b is new: neither goes
  CHECK(r.evicted.empty());
  CHECK(r.lru.size() == 2);
  r.add("c");  // a and b are held, c is the newest
  CHECK(r.evicted.empty());
  CHECK(r.lru.size() == 3);
  r.add("d");  // c is not held any more (add's pointer is gone): it goes
  CHECK(r.evicted == std::vector<std::string>{"c"});
  CHECK(r.lru.size() == 3);
}

TEST_CASE("lru: lowering the capacity evicts now, in least recently used order") {
  Recorder r(4);
  for (const char* k : {"a", "b", "c", "d"}) r.add(k);
  REQUIRE(r.lru.find("b") != nullptr);
  r.lru.setCapacity(2);
  CHECK(r.lru.capacity() == 2);
  CHECK(r.evicted == std::vector<std::string>{"a", "c"});
  CHECK(r.lru.size() == 2);
}

TEST_CASE("lru: clear evicts every entry, held or not") {
  Recorder r(3);
  const Value held = r.add("a");
  r.add("b");
  r.lru.clear();
  CHECK(r.lru.size() == 0);
  CHECK(r.evicted == std::vector<std::string>{"a", "b"});
  CHECK(r.lru.find("a") == nullptr);
}

TEST_CASE("lru: an eviction callback that throws leaves the set consistent") {
  std::vector<std::string> evicted;
  Lru<std::string, int> lru(
      1, [](const int&) { return false; },
      [&](const std::string& k, int&) {
        evicted.push_back(k);
        if (k == "x") throw std::runtime_error("unload failed");
      });
  lru.insert("x", 1);
  CHECK_THROWS_AS(lru.insert("y", 2), std::runtime_error);
  CHECK(evicted == std::vector<std::string>{"x"});
  CHECK(lru.size() == 1);
  CHECK(lru.find("x") == nullptr);
  REQUIRE(lru.find("y") != nullptr);
  CHECK(*lru.find("y") == 2);
  lru.insert("z", 3);
  CHECK(evicted == std::vector<std::string>{"x", "y"});
}
