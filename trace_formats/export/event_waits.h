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

// Event syncs as flows: a sync row of type event_synchronize whose
// event_correlation names the cudaEventRecord it waited for (recordings whose
// collector linked them; older ones, such as tests/data/mlp_h200.db, have
// only CUPTI's event id and get no arrows). The host waited for the GPU work
// the event recorded: the last GPU activity launched on the recorded stream
// (wait_stream) before the record (correlation ids grow in launch order). The
// Chrome export draws an arrow from that work to the sync; the Perfetto
// export too where the work started before the sync did (its trace processor
// binds an arrow at slice starts, in time order).
class EventSyncs {
 public:
  struct Sync {
    int64_t pid = 0, stream = 0;     // the stream the event was recorded on
    int64_t record_correlation = 0;  // of the cudaEventRecord call
    int64_t correlation = 0;         // of the sync: the flow's id
    int64_t start = 0;               // of the sync
  };
  struct Work {
    int64_t correlation = INT64_MIN, device = 0, stream = 0, ts = 0;  // ts: where the arrow starts
  };

  void load(store::Connection& db, const std::string& and_pid) {
    using store::rec::Sync;
    store::Cursor<Sync> q(db,
                          {Sync::kPid, Sync::kWaitStream, Sync::kCorrelation, Sync::kEventCorrelation, Sync::kStart},
                          "WHERE type=" + std::to_string(schema::sync_type::event_synchronize) + and_pid);
    while (q.next()) {
      const Sync& s = q.row();
      if (s.null(Sync::kEventCorrelation) || s.null(Sync::kWaitStream) || s.null(Sync::kPid) ||
          s.null(Sync::kCorrelation))
        continue;
      syncs_.push_back({s.pid, s.wait_stream, s.event_correlation, s.correlation, s.start_or_zero()});
    }
    std::sort(syncs_.begin(), syncs_.end(), [](const EventSyncs::Sync& a, const EventSyncs::Sync& b) {
      return std::tie(a.pid, a.stream, a.record_correlation) < std::tie(b.pid, b.stream, b.record_correlation);
    });
    work_.assign(syncs_.size(), Work{});
  }
  bool empty() const { return syncs_.empty(); }

  // A GPU activity, in any order: it is the recorded work of the syncs whose
  // record came after it on its stream, unless a later one is. Kept at the
  // first such sync; finish() hands it on to the later ones.
  void note_work(int64_t pid, int64_t stream, int64_t correlation, int64_t device, int64_t ts) {
    if (syncs_.empty()) return;
    auto it = std::upper_bound(syncs_.begin(), syncs_.end(), std::make_tuple(pid, stream, correlation),
                               [](const auto& k, const EventSyncs::Sync& s) {
                                 return k < std::make_tuple(s.pid, s.stream, s.record_correlation);
                               });
    if (it == syncs_.end() || it->pid != pid || it->stream != stream) return;
    Work& w = work_[static_cast<size_t>(it - syncs_.begin())];
    if (correlation > w.correlation) w = {correlation, device, stream, ts};
  }
  // Once every GPU activity was noted.
  void finish() {
    for (size_t i = 1; i < syncs_.size(); ++i)
      if (syncs_[i].pid == syncs_[i - 1].pid && syncs_[i].stream == syncs_[i - 1].stream &&
          work_[i - 1].correlation > work_[i].correlation)
        work_[i] = work_[i - 1];
    by_correlation_.clear();
    by_work_.clear();
    for (size_t i = 0; i < syncs_.size(); ++i) {
      if (work_[i].correlation == INT64_MIN) continue;
      by_correlation_[{syncs_[i].pid, syncs_[i].correlation}] = i;
      by_work_[{syncs_[i].pid, work_[i].correlation}].push_back(i);
    }
  }
  // The syncs (pid, correlation) whose recorded work is the GPU activity (pid,
  // correlation), after finish(); nullptr for most.
  const std::vector<size_t>* synced_by(int64_t pid, int64_t correlation) const {
    if (by_work_.empty()) return nullptr;
    auto it = by_work_.find({pid, correlation});
    return it == by_work_.end() ? nullptr : &it->second;
  }
  const std::vector<Sync>& syncs() const { return syncs_; }
  // The recorded work of the sync (pid, correlation), after finish(); nullptr
  // where there is none (no link, or nothing ran on the stream before the record).
  const Work* work_of(int64_t pid, int64_t correlation) const {
    auto it = by_correlation_.find({pid, correlation});
    return it == by_correlation_.end() ? nullptr : &work_[it->second];
  }

 private:
  std::vector<Sync> syncs_;  // by pid, stream, record correlation
  std::vector<Work> work_;   // by sync
  std::map<std::pair<int64_t, int64_t>, size_t> by_correlation_;
  std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> by_work_;
};

}  // namespace gpuscope::formats
