// What the exporters need to know about each (pid, correlation) pair: the
// op's external id from external_correlation, whether an API call carries
// the correlation (start of an ac2g arrow) and whether GPU work does (its
// end). Loaded once by ExportModel so that rows need no per-row SQLite index
// look-ups, which cost more than reading and writing the rows themselves.
//
// Open addressing with linear probing in one flat array: 32 bytes a slot,
// at most 3/4 full, so about 43-85 bytes per distinct correlation (16 MB for
// the 325 k correlations of the 500 MB benchmark trace).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpuscope::formats {

class CorrelationMap {
 public:
  struct Entry {
    int64_t pid = 0, correlation = 0;
    int64_t external_id = 0;  // valid when has_external
    bool used = false, has_external = false, api = false, gpu = false;
  };

  // The entry of (pid, correlation), created empty when missing.
  Entry& upsert(int64_t pid, int64_t correlation) {
    if ((used_ + 1) * 4 > slots_.size() * 3) grow();
    Entry& e = slots_[slot(pid, correlation)];
    if (!e.used) {
      e.used = true;
      e.pid = pid;
      e.correlation = correlation;
      ++used_;
    }
    return e;
  }

  // nullptr when the pair was never stored.
  const Entry* find(int64_t pid, int64_t correlation) const {
    if (slots_.empty()) return nullptr;
    const Entry& e = slots_[slot(pid, correlation)];
    return e.used ? &e : nullptr;
  }

  // Sizes the table for `n` entries in all at once, sparing the rehashes.
  void reserve(size_t n) {
    size_t want = slots_.empty() ? 1024 : slots_.size();
    while (std::max(n, used_ + 1) * 4 > want * 3) want *= 2;
    if (want != slots_.size()) rehash(want);
  }

  size_t size() const { return used_; }
  size_t bytes() const { return slots_.capacity() * sizeof(Entry); }

 private:
  static uint64_t hash(int64_t pid, int64_t correlation) {
    // Correlations are small consecutive integers: mix them so that
    // neighbours spread over the table (splitmix64's finalizer).
    uint64_t x = static_cast<uint64_t>(correlation) ^ (static_cast<uint64_t>(pid) * 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }

  // The pair's slot, or the free slot where it would go.
  size_t slot(int64_t pid, int64_t correlation) const {
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(pid, correlation) & mask;; i = (i + 1) & mask) {
      const Entry& e = slots_[i];
      if (!e.used || (e.correlation == correlation && e.pid == pid)) return i;
    }
  }

  void grow() { rehash(slots_.empty() ? 1024 : slots_.size() * 2); }

  void rehash(size_t capacity) {
    std::vector<Entry> old;
    old.swap(slots_);
    slots_.resize(capacity);
    for (const Entry& e : old)
      if (e.used) slots_[slot(e.pid, e.correlation)] = e;
  }

  std::vector<Entry> slots_;
  size_t used_ = 0;
};

}  // namespace gpuscope::formats
