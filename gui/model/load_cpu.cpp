// CPU side: per thread its CUDA API calls, syncs, ops and ranges (nested in
// lanes), per process its NVTX start/end ranges, which may cross threads.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "gui/model/parallel_read.h"
#include "gui/model/recording_loader.h"
#include "trace_formats/schema/enums.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/rows.h"

namespace gpuscope::gui {
namespace {

namespace rec = store::rec;

constexpr int64_t kAsyncTrack = -1;  // tid key of a process's start/end ranges
constexpr int64_t kSyncTrack = -2;   // tid key of waits with no known thread
constexpr int64_t kTracedTrack = -4;  // tid key of a sampled recording's traced stretches (range source 7)

struct ThreadMap {
  EventMap<std::pair<int64_t, int64_t>> threads;
  std::pair<int64_t, int64_t> last_key{-1, -3};
  std::vector<Event>* last = nullptr;
  std::vector<Event>& at(int64_t pid, int64_t tid) {
    std::pair<int64_t, int64_t> k{pid, tid};
    if (!last || k != last_key) {
      last = &threads[k];
      last_key = k;
    }
    return *last;
  }
};

EventKind range_kind(int64_t source, int64_t kind) {
  if (kind == schema::range_kind::mark) return EventKind::kMark;
  if (source == schema::range_source::tracer_overhead) return EventKind::kTracerOverhead;
  if (kind == schema::range_kind::start_end) return EventKind::kAsyncRange;
  switch (source) {
    case schema::range_source::dataloader: return EventKind::kDataLoader;
    case schema::range_source::optimizer: return EventKind::kOptimizer;
    default: return EventKind::kRange;
  }
}

// The columns read of each CPU table.
constexpr rec::ApiCall::Column kApiCallColumns[] = {rec::ApiCall::kId,         rec::ApiCall::kPid,   rec::ApiCall::kTid,
                                                    rec::ApiCall::kNameId,     rec::ApiCall::kStart, rec::ApiCall::kEnd,
                                                    rec::ApiCall::kCorrelation};
constexpr rec::Sync::Column kSyncColumns[] = {rec::Sync::kId,         rec::Sync::kPid,   rec::Sync::kTid,
                                              rec::Sync::kType,       rec::Sync::kStart, rec::Sync::kEnd,
                                              rec::Sync::kCorrelation};
constexpr rec::Op::Column kOpColumns[] = {rec::Op::kId,     rec::Op::kPid,   rec::Op::kTid,
                                          rec::Op::kNameId, rec::Op::kStart, rec::Op::kEnd};
constexpr rec::Range::Column kRangeColumns[] = {rec::Range::kId,     rec::Range::kPid,  rec::Range::kTid,
                                                rec::Range::kSource, rec::Range::kKind, rec::Range::kNameId,
                                                rec::Range::kStart,  rec::Range::kEnd,  rec::Range::kColor};

// Each process's last flush (process.end), where it is known.
using FlushEnds = std::unordered_map<int64_t, int64_t>;

FlushEnds flush_ends(store::Reader& r) {
  FlushEnds out;
  store::Cursor<rec::Process> p(r.db(), {rec::Process::kPid, rec::Process::kEnd});
  while (p.next())
    if (!p->null(rec::Process::kEnd)) out.emplace(p->pid, p->end);
  return out;
}

// Reads rows [range.lo, range.hi] of `table` into `map`.
void read_range(LoadContext& ctx, const std::string& table, IdRange range, const FlushEnds& flush, ThreadMap& map) {
  const RecordingInfo& info = *ctx.info;
  const std::string stage = "CPU threads";
  bool done = true;
  if (table == "api_call") {
    using A = rec::ApiCall;
    done = read_ids<A, kApiCallColumns>(ctx, stage, range, [&](const A& a) {
      Event e;
      e.row = static_cast<uint32_t>(a.id);
      e.name = static_cast<uint32_t>(a.name_id);
      e.start = clamp_time(a.start_or_zero());
      e.end = std::max(e.start, clamp_time(a.end_or_zero()));
      e.extra = static_cast<uint32_t>(a.correlation);
      e.kind = EventKind::kApiCall;
      map.at(a.pid_or_zero(), a.tid_or_zero()).push_back(e);
    });
  } else if (table == "sync") {
    using S = rec::Sync;
    done = read_ids<S, kSyncColumns>(ctx, stage, range, [&](const S& s) {
      Event e;
      e.row = static_cast<uint32_t>(s.id);
      // An unknown type (NULL too) is named as type 0.
      const bool known = s.type >= schema::sync_type::unknown && s.type <= schema::sync_type::context_synchronize;
      e.name = info.sync_name_base + static_cast<uint32_t>(known ? s.type : 0);
      e.start = clamp_time(s.start_or_zero());
      e.end = std::max(e.start, clamp_time(s.end_or_zero()));
      e.extra = static_cast<uint32_t>(s.correlation);
      e.kind = EventKind::kSync;
      map.at(s.pid_or_zero(), s.null(S::kTid) ? kSyncTrack : s.tid).push_back(e);
    });
  } else if (table == "op") {
    using O = rec::Op;
    done = read_ids<O, kOpColumns>(ctx, stage, range, [&](const O& o) {
      Event e;
      e.row = static_cast<uint32_t>(o.id);
      e.name = static_cast<uint32_t>(o.name_id);
      e.start = clamp_time(o.start_or_zero());
      e.end = std::max(e.start, clamp_time(o.end_or_zero()));
      e.kind = EventKind::kOp;
      map.at(o.pid_or_zero(), o.tid_or_zero()).push_back(e);
    });
  } else {
    using R = rec::Range;
    done = read_ids<R, kRangeColumns>(ctx, stage, range, [&](const R& g) {
      const int64_t source = g.source_or_zero();
      Event e;
      e.row = static_cast<uint32_t>(g.id);
      e.kind = range_kind(source, g.kind_or_zero());
      e.name = static_cast<uint32_t>(g.name_id);
      e.start = clamp_time(g.start_or_zero());
      // A range never closed lasts until its process's last flush.
      int64_t end = g.end;
      if (g.null(R::kEnd)) {
        auto it = g.null(R::kPid) ? flush.end() : flush.find(g.pid);
        end = it != flush.end() ? it->second : g.start_or_zero();
      }
      e.end = e.kind == EventKind::kMark ? e.start : std::max(e.start, clamp_time(end));
      e.extra = g.null(R::kColor) ? 0 : static_cast<uint32_t>(g.color);
      const int64_t tid = source == store::kRangeSourceSamplingWindow ? kTracedTrack
                          : e.kind == EventKind::kAsyncRange          ? kAsyncTrack
                                                                      : g.tid_or_zero();
      map.at(g.pid_or_zero(), tid).push_back(e);
    });
  }
  if (done) sort_lists(map.threads);
}

}  // namespace

std::shared_ptr<LoadBatch> load_cpu_part(LoadContext& ctx) {
  store::Reader r(ctx.database);
  const RecordingInfo& info = *ctx.info;
  const std::string stage = "CPU threads";
  struct Task {
    std::string table;
    IdRange range;
  };
  std::vector<Task> tasks;
  for (const char* table : {"api_call", "op", "sync", "range"})
    for (const IdRange& range : split_ids(r, table, reader_threads())) tasks.push_back({table, range});
  const FlushEnds flush = flush_ends(r);
  std::vector<ThreadMap> maps(tasks.size());
  std::vector<std::function<void()>> jobs;
  for (size_t i = 0; i < tasks.size(); ++i)
    jobs.push_back([&, i] { read_range(ctx, tasks[i].table, tasks[i].range, flush, maps[i]); });
  run_parallel(jobs);
  if (ctx.cancelled()) return nullptr;
  std::vector<EventMap<std::pair<int64_t, int64_t>>> parts;
  for (auto& m : maps) parts.push_back(std::move(m.threads));
  auto threads = merge_sorted(parts);

  std::map<std::pair<int64_t, int64_t>, std::string> names;
  store::Cursor<rec::Thread> th(r.db(), {rec::Thread::kPid, rec::Thread::kTid, rec::Thread::kName});
  while (th.next())
    names[{th->pid_or_zero(), th->tid_or_zero()}] =
        std::string(th->name);

  auto batch = std::make_shared<LoadBatch>();
  batch->stage = stage;
  std::map<int64_t, bool> pids;
  std::vector<std::function<void()>> pack_jobs;
  for (auto& [key, ev] : threads) {
    auto [pid, tid] = key;
    pids[pid] = true;
    auto t = std::make_shared<Track>();
    t->group_key = "proc:" + std::to_string(pid);
    t->pid = pid;
    t->tid = tid;
    if (tid == kAsyncTrack) {
      t->title = "NVTX start/end ranges";
      t->sort_key = INT64_MAX - 1;
    } else if (tid == kTracedTrack) {
      t->title = "traced (sampled recording)";
      t->sort_key = INT64_MIN;
    } else if (tid == kSyncTrack) {
      t->title = "GPU waits (thread unknown)";
      t->sort_key = INT64_MAX;
    } else {
      auto it = names.find(key);
      std::string name = it != names.end() && !it->second.empty() ? it->second : "thread";
      t->title = name + " " + std::to_string(tid) + (tid == pid ? " (main)" : "");
      t->sort_key = tid == pid ? 0 : tid;
    }
    auto* events = &ev;
    pack_jobs.push_back([t, events] { t->lanes = pack_lanes(std::move(*events), true); });
    batch->tracks.push_back(std::move(t));
  }
  run_parallel(pack_jobs);
  if (ctx.cancelled()) return nullptr;
  for (const auto& [pid, unused] : pids) {
    const ProcessInfo* p = nullptr;
    for (const auto& q : info.processes)
      if (q.pid == pid) p = &q;
    batch->groups.push_back(process_group(p, pid));
  }
  batch->ops = summarize_names(batch->tracks, EventKind::kOp);
  batch->has_op_summary = true;
  batch->api_corr.build(batch->tracks, false);
  return batch;
}

}  // namespace gpuscope::gui
