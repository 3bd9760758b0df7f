// What the exporters need to know about each (pid, correlation) pair: the
// op's external id from external_correlation, whether an API call carries
// the correlation (start of an ac2g arrow) and whether GPU work does (its
// end). Loaded once by ExportModel so that rows need no per-row SQLite index
// look-ups, which cost more than reading and writing the rows themselves.
//
// Correlation ids count up from where a process's profiling began, and rows
// meet them roughly in order. So each process gets a flat array indexed by
// correlation - base (16 bytes an entry): neighbouring rows touch
// neighbouring entries, where a hash table's scattered slots missed the
// cache on nearly every look-up (a tenth of the Chrome export's time). Ids
// that would stretch an array past 4 entries per stored pair plus 64 Ki go
// to an open-addressing hash table instead. The 500 MB benchmark trace's 325 k
// correlations take 5 MB.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpuscope::formats {

class CorrelationMap {
 public:
  struct Entry {
    int64_t external_id = 0;  // valid when has_external
    bool used = false, has_external = false, api = false, gpu = false;
  };

  // The entry of (pid, correlation), created empty when missing.
  Entry& upsert(int64_t pid, int64_t correlation) {
    Process& p = process(pid);
    Entry* e = p.slot(correlation);
    // A pair stored in the hash table before the array grew over its id stays there.
    if ((!e || !e->used) && p.sparse)
      if (Entry* s = sparse_.find(pid, correlation)) return *s;
    if (!e) e = p.grow_to(correlation);
    if (!e) {
      e = &sparse_.upsert(pid, correlation);
      if (!e->used) ++p.sparse;
    }
    if (!e->used) {
      e->used = true;
      ++size_;
      ++p.stored;
    }
    return *e;
  }

  // nullptr when the pair was never stored.
  const Entry* find(int64_t pid, int64_t correlation) {
    Process* p = find_process(pid);
    if (!p) return nullptr;
    if (const Entry* e = p->slot(correlation); e && e->used) return e;
    return p->sparse ? sparse_.find(pid, correlation) : nullptr;
  }

  size_t size() const { return size_; }
  size_t bytes() const {
    size_t n = sparse_.bytes();
    for (const Process& p : processes_) n += p.dense.capacity() * sizeof(Entry);
    return n;
  }

 private:
  struct Process {
    int64_t pid = 0, base = 0;
    size_t stored = 0, sparse = 0;  // pairs in all, pairs in the hash table
    std::vector<Entry> dense;

    Entry* slot(int64_t correlation) {
      if (correlation < base) return nullptr;
      auto i = static_cast<uint64_t>(correlation) - static_cast<uint64_t>(base);
      return i < dense.size() ? &dense[i] : nullptr;
    }
    Entry* grow_to(int64_t correlation) {
      if (dense.empty()) base = correlation - std::min<int64_t>(correlation < 0 ? 0 : correlation, 1024);
      if (correlation < base) return nullptr;
      auto need = static_cast<uint64_t>(correlation) - static_cast<uint64_t>(base) + 1;
      if (need > 4 * (stored + 1) + (uint64_t{1} << 16)) return nullptr;
      dense.resize(std::max<uint64_t>(need, std::min<uint64_t>(2 * dense.size(), 4 * (stored + 1) + (1 << 16))));
      return slot(correlation);
    }
  };

  Process& process(int64_t pid) {
    if (Process* p = find_process(pid)) return *p;
    processes_.push_back({});
    processes_.back().pid = pid;
    last_ = processes_.size() - 1;
    return processes_.back();
  }
  Process* find_process(int64_t pid) {
    if (last_ < processes_.size() && processes_[last_].pid == pid) return &processes_[last_];
    for (size_t i = 0; i < processes_.size(); ++i)
      if (processes_[i].pid == pid) return &processes_[last_ = i];
    return nullptr;
  }

  // Open addressing with linear probing, for ids no array takes.
  class Sparse {
   public:
    Entry& upsert(int64_t pid, int64_t correlation) {
      if ((used_ + 1) * 4 > slots_.size() * 3) rehash(slots_.empty() ? 64 : slots_.size() * 2);
      Slot& s = slots_[slot(pid, correlation)];
      if (!s.entry.used) {
        s.pid = pid;
        s.correlation = correlation;
        ++used_;
      }
      return s.entry;  // CorrelationMap::upsert marks it used at once
    }
    Entry* find(int64_t pid, int64_t correlation) {
      if (slots_.empty()) return nullptr;
      Slot& s = slots_[slot(pid, correlation)];
      return s.entry.used ? &s.entry : nullptr;
    }
    size_t bytes() const { return slots_.capacity() * sizeof(Slot); }

   private:
    struct Slot {
      int64_t pid = 0, correlation = 0;
      Entry entry;
    };
    static uint64_t hash(int64_t pid, int64_t correlation) {
      // splitmix64's finalizer over both keys.
      uint64_t x = static_cast<uint64_t>(correlation) ^ (static_cast<uint64_t>(pid) * 0x9E3779B97F4A7C15ull);
      x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
      x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
      return x ^ (x >> 31);
    }
    // The pair's slot, or the free slot where it would go.
    size_t slot(int64_t pid, int64_t correlation) const {
      size_t mask = slots_.size() - 1;
      for (size_t i = hash(pid, correlation) & mask;; i = (i + 1) & mask) {
        const Slot& s = slots_[i];
        if (!s.entry.used || (s.correlation == correlation && s.pid == pid)) return i;
      }
    }
    void rehash(size_t capacity) {
      std::vector<Slot> old;
      old.swap(slots_);
      slots_.resize(capacity);
      for (const Slot& s : old)
        if (s.entry.used) slots_[slot(s.pid, s.correlation)] = s;
    }

    std::vector<Slot> slots_;
    size_t used_ = 0;
  };

  std::vector<Process> processes_;
  size_t last_ = 0, size_ = 0;
  Sparse sparse_;
};

}  // namespace gpuscope::formats
