// Reading big tables on several threads: each table is split into ranges of
// its integer primary key, every range is read on its own connection into
// per-row lists of events sorted there, and the sorted lists are merged.
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "gui/model/event.h"
#include "gui/model/recording_loader.h"
#include "gui/model/track_builder.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::gui {

struct IdRange {
  int64_t lo = 0, hi = -1;  // inclusive
};

// [min(id), max(id)] of `table` cut into at most `parts` ranges (none when empty).
inline std::vector<IdRange> split_ids(store::Reader& r, const std::string& table, int parts) {
  std::vector<IdRange> out;
  // Separate sub-selects: SQLite reads a rowid end directly only for a lone min() or max().
  const std::string q = "\"" + table + "\"";
  auto st = r.query("SELECT (SELECT min(id) FROM " + q + ") AS lo, (SELECT max(id) FROM " + q + ") AS hi");
  if (!st.step() || st.is_null("lo")) return out;
  const int64_t lo = st.int64("lo"), hi = st.int64("hi");
  const int64_t n = hi - lo + 1;
  parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(parts, n / 100'000 + 1)));
  for (int i = 0; i < parts; ++i)
    out.push_back({lo + n * i / parts, lo + n * (i + 1) / parts - 1});
  return out;
}

// Rows read between two progress reports (and checks for cancel).
inline constexpr int64_t kProgressEvery = 250'000;

// Threads for one big table: the machine's cores, within reason.
inline int reader_threads() {
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
}

// Runs the tasks on up to `threads` threads; rethrows the first failure.
inline void run_parallel(const std::vector<std::function<void()>>& tasks, int threads = reader_threads()) {
  std::vector<std::exception_ptr> errors(tasks.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < tasks.size();) {
      try {
        tasks[i]();
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  const size_t n = std::min<size_t>(tasks.size(), static_cast<size_t>(std::max(threads, 1)));
  for (size_t i = 1; i < n; ++i) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

template <class Key>
using EventMap = std::map<Key, std::vector<Event>>;

// Sorts every list (in the pack_lanes order); call on the reading thread.
template <class Key>
void sort_lists(EventMap<Key>& m) {
  for (auto& [key, ev] : m) sort_for_lanes(ev);
}

// Merges per-range maps of sorted lists into one map of sorted lists.
template <class Key>
EventMap<Key> merge_sorted(std::vector<EventMap<Key>>& parts) {
  EventMap<Key> out;
  for (auto& part : parts) {
    for (auto& [key, ev] : part) {
      auto& into = out[key];
      if (into.empty()) {
        into = std::move(ev);
        continue;
      }
      std::vector<Event> merged;
      merged.reserve(into.size() + ev.size());
      std::merge(into.begin(), into.end(), ev.begin(), ev.end(), std::back_inserter(merged), lane_order);
      into = std::move(merged);
      std::vector<Event>().swap(ev);
    }
    part.clear();
  }
  return out;
}

}  // namespace gpuscope::gui
