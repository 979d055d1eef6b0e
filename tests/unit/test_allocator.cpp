// Tests for the first-fit shared-memory allocator that the memory map simulates.
#include <doctest/doctest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "memmap/allocator.hpp"

using obsidian::Allocator;

namespace {

bool overlaps(uint32_t a, uint32_t aBytes, uint32_t b, uint32_t bBytes) {
  return a < b + bBytes && b < a + aBytes;
}

}  // namespace

TEST_CASE("allocator: first fit packs blocks from offset 0, aligned to 16") {
  Allocator a;
  CHECK(a.allocate(100) == 0);
  CHECK(a.allocate(10) == 112);  // 100 rounded up to 112
  CHECK(a.allocate(1) == 128);   // 122 rounded up to 128
  CHECK(a.allocate(16) == 144);  // 129 rounded up to 144
  CHECK(a.allocate(32) == 160);  // 160 is already aligned
  CHECK(a.peak() == 192);
  CHECK(a.inUse() == 100 + 10 + 1 + 16 + 32);
  for (const auto& [offset, bytes] : a.blocks()) {
    CHECK(offset % 16 == 0);
    CHECK(bytes > 0);
  }
  CHECK(a.blocks().size() == 5);
}

TEST_CASE("allocator: a custom alignment of 4") {
  Allocator a(4);
  CHECK(a.allocate(5) == 0);
  CHECK(a.allocate(3) == 8);
  CHECK(a.allocate(4) == 12);
  CHECK(a.allocate(1) == 16);
  CHECK(a.peak() == 17);
  Allocator one(1);
  CHECK(one.allocate(3) == 0);
  CHECK(one.allocate(3) == 3);
  CHECK(one.peak() == 6);
}

TEST_CASE("allocator: freed space is handed out again") {
  Allocator a;
  const uint32_t x = a.allocate(64);
  const uint32_t y = a.allocate(64);
  CHECK(x == 0);
  CHECK(y == 64);
  a.free(x);
  CHECK(a.inUse() == 64);
  CHECK(a.allocate(32) == 0);    // into the hole x left
  CHECK(a.allocate(32) == 32);   // the rest of the hole
  CHECK(a.allocate(16) == 128);  // the hole is full now
  CHECK(a.peak() == 144);
  a.free(y);
  CHECK(a.allocate(64) == 64);  // y's bytes again
  CHECK(a.peak() == 144);
}

TEST_CASE("allocator: the peak never decreases on free") {
  Allocator a;
  const uint32_t x = a.allocate(1000);
  const uint32_t y = a.allocate(24);
  CHECK(y == 1008);  // 1000 rounded up to a multiple of 16
  CHECK(a.peak() == 1008 + 24);
  a.free(y);
  CHECK(a.peak() == 1032);
  a.free(x);
  CHECK(a.peak() == 1032);
  CHECK(a.inUse() == 0);
  CHECK(a.blocks().empty());
  // Everything is free: allocation starts at 0 again, and the peak stays.
  CHECK(a.allocate(8) == 0);
  CHECK(a.peak() == 1032);
  // A larger block raises the peak.
  CHECK(a.allocate(2000) == 16);
  CHECK(a.peak() == 2016);
}

TEST_CASE("allocator: gaps are used when they fit and skipped when not") {
  Allocator a;
  CHECK(a.allocate(20) == 0);
  const uint32_t mid = a.allocate(20);
  CHECK(mid == 32);
  CHECK(a.allocate(16) == 64);
  a.free(mid);                  // a 32-byte gap [32, 64): 20 rounded up to 32
  CHECK(a.allocate(33) == 80);  // does not fit the gap: goes after the last block
  CHECK(a.allocate(32) == 32);  // fits the gap exactly
  CHECK(a.allocate(1) == 128);  // no gap left
  CHECK(a.peak() == 129);
  // First fit, not best fit: the lowest gap that fits wins even if a later one is tighter.
  Allocator b;
  const uint32_t b0 = b.allocate(64);  // [0, 64)
  CHECK(b.allocate(16) == 64);         // [64, 80)
  const uint32_t b2 = b.allocate(16);  // [80, 96)
  CHECK(b.allocate(16) == 96);         // [96, 112)
  b.free(b0);                          // gap of 64 at 0
  b.free(b2);                          // gap of 16 at 80
  CHECK(b.allocate(16) == 0);
  CHECK(b.allocate(48) == 16);
  CHECK(b.allocate(16) == 80);
}

TEST_CASE("allocator: the ping-pong of a halving reduction peaks at the first two arrays") {
  // red2/red3 force arrays of 1024, 512, 256, ... bytes; each is freed once the next is written
  // (at the barrier after that), so at most two are live: peak = 1024 + 512.
  Allocator a;
  std::vector<std::pair<uint32_t, uint32_t>> live;  // (offset, bytes)
  std::vector<uint32_t> offsets;
  for (uint32_t bytes = 1024; bytes >= 4; bytes /= 2) {
    const uint32_t at = a.allocate(bytes);
    offsets.push_back(at);
    for (const auto& [o, n] : live) CHECK_FALSE(overlaps(at, bytes, o, n));
    live.emplace_back(at, bytes);
    if (live.size() == 2) {  // the previous array dies at the barrier after this one is written
      a.free(live.front().first);
      live.erase(live.begin());
    }
  }
  CHECK(a.peak() == 1536);
  // Offsets alternate between the low end (reusing the first array's bytes) and just past
  // the previous array.
  const std::vector<uint32_t> expected{0, 1024, 0, 256, 0, 64, 0, 16, 0};
  CHECK(offsets == expected);
}
