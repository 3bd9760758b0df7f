// Stream waits as flows: a sync row of type stream_wait_event (schema v2)
// names the cudaEventRecord call that recorded the awaited event
// (event_correlation). Both exporters draw an arrow from that call to the
// waiting work: the first GPU activity launched on the waiting stream after
// the wait (correlation ids grow in launch order, and a stream runs its work
// in that order). Recordings of schema v1 have no such links and get no arrows.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "trace_formats/schema/enums.h"
#include "trace_formats/store/cursor.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::formats {

class EventWaits {
 public:
  struct Wait {
    int64_t pid = 0, stream = 0;
    int64_t correlation = 0;         // of the cudaStreamWaitEvent call: the flow's id
    int64_t record_correlation = 0;  // of the cudaEventRecord call: where the flow starts
  };

  // The waits of the exported processes (`and_pid`: " AND pid=N" or "").
  void load(store::Connection& db, const std::string& and_pid) {
    using store::rec::Sync;
    // Filtered here, not in SQL: a v1 file has no event_correlation column (the cursor reads it as NULL).
    store::Cursor<Sync> q(db, {Sync::kPid, Sync::kType, Sync::kStream, Sync::kCorrelation, Sync::kEventCorrelation},
                          "WHERE type=" + std::to_string(schema::sync_type::stream_wait_event) + and_pid);
    while (q.next()) {
      const Sync& s = q.row();
      if (s.null(Sync::kEventCorrelation) || s.null(Sync::kStream) || s.null(Sync::kPid) ||
          s.null(Sync::kCorrelation))
        continue;
      waits_.push_back({s.pid, s.stream, s.correlation, s.event_correlation});
    }
    std::sort(waits_.begin(), waits_.end(), [](const Wait& a, const Wait& b) {
      return std::tie(a.pid, a.stream, a.correlation) < std::tie(b.pid, b.stream, b.correlation);
    });
    for (size_t i = 0; i < waits_.size(); ++i) by_record_[{waits_[i].pid, waits_[i].record_correlation}].push_back(i);
    done_.assign(waits_.size(), false);
  }
  bool empty() const { return waits_.empty(); }
  const std::vector<Wait>& waits() const { return waits_; }

  // The waits whose awaited event the API call (pid, correlation) recorded
  // (indices into waits()); nullptr for most calls.
  const std::vector<size_t>* recorded_by(int64_t pid, int64_t correlation) const {
    if (by_record_.empty()) return nullptr;
    auto it = by_record_.find({pid, correlation});
    return it == by_record_.end() ? nullptr : &it->second;
  }
  // The waits on (pid, stream) launched before GPU work launched there as
  // `correlation`: indices [first, last) into waits(), in launch order. The
  // work is the waiting work of those of them that saw none before it.
  std::pair<size_t, size_t> waits_before(int64_t pid, int64_t stream, int64_t correlation) const {
    auto key = [](const Wait& w) { return std::make_tuple(w.pid, w.stream, w.correlation); };
    auto lo = std::lower_bound(waits_.begin(), waits_.end(), std::make_tuple(pid, stream, INT64_MIN),
                               [&](const Wait& w, const auto& k) { return key(w) < k; });
    auto hi = std::lower_bound(lo, waits_.end(), std::make_tuple(pid, stream, correlation),
                               [&](const Wait& w, const auto& k) { return key(w) < k; });
    return {static_cast<size_t>(lo - waits_.begin()), static_cast<size_t>(hi - waits_.begin())};
  }
  // For a writer that sees the GPU rows in time order: calls f(index) for
  // each wait whose waiting work this row is (the first GPU work on its
  // stream after it), once per wait.
  template <class F>
  void take_waiting(int64_t pid, int64_t stream, int64_t correlation, F&& f) {
    if (waits_.empty()) return;
    auto [first, last] = waits_before(pid, stream, correlation);
    for (size_t i = last; i > first && !done_[i - 1]; --i) {
      done_[i - 1] = true;
      f(i - 1);
    }
  }

 private:
  std::vector<Wait> waits_;  // by pid, stream, correlation
  std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> by_record_;
  std::vector<bool> done_;
};

}  // namespace gpuscope::formats
