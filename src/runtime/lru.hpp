// A least-recently-used set with a capacity, the policy of the device's loaded modules
// (runtime/device.cpp). Pure (no CUDA), so it is unit-tested on the CPU (tests/unit/test_lru).
// Entries that are in use (a live handle holds them, as the caller's inUse predicate says) are
// never evicted: the set may then stay above its capacity until they are released and a later
// insert (or trim) evicts them. Eviction removes the entry first and then calls the evict
// callback with it, so a callback that throws leaves the set consistent.
#pragma once

#include <cstddef>
#include <functional>
#include <iterator>
#include <list>
#include <unordered_map>
#include <utility>

namespace obsidian {

template <class Key, class Value>
class Lru {
 public:
  using InUse = std::function<bool(const Value&)>;
  using Evict = std::function<void(const Key&, Value&)>;

  // capacity >= 1 (the caller checks what it is given).
  Lru(size_t capacity, InUse inUse, Evict evict)
      : capacity_(capacity), inUse_(std::move(inUse)), evict_(std::move(evict)) {}
  ~Lru() = default;  // evicts nothing: the owner calls clear() if leaving needs a callback
  Lru(const Lru&) = delete;
  Lru& operator=(const Lru&) = delete;

  // The value of key, now the most recently used; null when absent.
  Value* find(const Key& key) {
    const auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }

  // Adds key (which must be absent) as the most recently used, then trims. The new entry itself
  // is never evicted by this: the caller has not had the chance to use it yet.
  Value& insert(const Key& key, Value value) {
    order_.emplace_front(key, std::move(value));
    index_[key] = order_.begin();
    trim();
    return order_.front().second;
  }

  // Evicts least recently used entries not in use, sparing the most recent one, while the set
  // holds more than its capacity.
  void trim() {
    if (order_.empty()) return;
    auto it = std::prev(order_.end());
    while (index_.size() > capacity_ && it != order_.begin()) {
      const auto victim = it--;
      if (!inUse_(victim->second)) remove(victim);
    }
  }

  void setCapacity(size_t capacity) {
    capacity_ = capacity;
    trim();
  }
  size_t capacity() const { return capacity_; }
  size_t size() const { return index_.size(); }

  // Evicts every entry, in use or not (the owner is going away).
  void clear() {
    while (!order_.empty()) remove(std::prev(order_.end()));
  }

 private:
  using Entry = std::pair<Key, Value>;
  using Iterator = typename std::list<Entry>::iterator;

  void remove(Iterator it) {
    Entry e = std::move(*it);
    index_.erase(e.first);
    order_.erase(it);
    evict_(e.first, e.second);
  }

  size_t capacity_;
  InUse inUse_;
  Evict evict_;
  std::list<Entry> order_;  // most recently used first
  std::unordered_map<Key, Iterator> index_;
};

}  // namespace obsidian
