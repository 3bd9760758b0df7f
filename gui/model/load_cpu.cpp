// CPU side: per thread its CUDA API calls, syncs, ops and ranges (nested in
// lanes), per process its NVTX start/end ranges, which may cross threads.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "gui/model/load_events.h"
#include "gui/model/parallel_read.h"
#include "gui/model/recording_loader.h"
#include "trace_formats/common/time_math.h"
#include "trace_formats/schema/enums.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/rows.h"

namespace gpuscope::gui {
namespace {

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

FlushEnds flush_ends(store::Reader& r) {
  FlushEnds out;
  store::Cursor<rec::Process> p(r.db(), {rec::Process::kPid, rec::Process::kEnd});
  while (p.next())
    if (!p->null(rec::Process::kEnd)) out.emplace(p->pid, p->end);
  return out;
}

}  // namespace

inline bool EventLoad::on(const rec::ApiCall& a) {
  Event e;
  e.row = static_cast<uint32_t>(a.id);
  e.name = static_cast<uint32_t>(a.name_id);
  e.start = clamp_time(a.start_or_zero());
  e.end = std::max(e.start, clamp_time(a.end_or_zero()));
  e.extra = static_cast<uint32_t>(a.correlation);
  e.kind = EventKind::kApiCall;
  threads.at({a.pid_or_zero(), a.tid_or_zero()}).push_back(e);
  return row_read();
}

inline bool EventLoad::on(const rec::Sync& s) {
  Event e;
  e.row = static_cast<uint32_t>(s.id);
  // An unknown type (NULL too) is named as type 0.
  const bool known = s.type >= schema::sync_type::unknown && s.type <= schema::sync_type::context_synchronize;
  e.name = info_.sync_name_base + static_cast<uint32_t>(known ? s.type : 0);
  e.start = clamp_time(s.start_or_zero());
  e.end = std::max(e.start, clamp_time(s.end_or_zero()));
  e.extra = static_cast<uint32_t>(s.correlation);
  e.kind = EventKind::kSync;
  threads.at({s.pid_or_zero(), s.null(rec::Sync::kTid) ? kSyncTrack : s.tid}).push_back(e);
  return row_read();
}

inline bool EventLoad::on(const rec::Op& o) {
  Event e;
  e.row = static_cast<uint32_t>(o.id);
  e.name = static_cast<uint32_t>(o.name_id);
  e.start = clamp_time(o.start_or_zero());
  e.end = std::max(e.start, clamp_time(o.end_or_zero()));
  e.kind = EventKind::kOp;
  threads.at({o.pid_or_zero(), o.tid_or_zero()}).push_back(e);
  return row_read();
}

inline bool EventLoad::on(const rec::Range& g) {
  using R = rec::Range;
  const int64_t source = g.source_or_zero();
  Event e;
  e.row = static_cast<uint32_t>(g.id);
  e.kind = range_kind(source, g.kind_or_zero());
  e.name = static_cast<uint32_t>(g.name_id);
  e.start = clamp_time(g.start_or_zero());
  // A range never closed lasts until its process's last flush.
  int64_t end = g.end;
  if (g.null(R::kEnd)) {
    auto it = g.null(R::kPid) ? flush_->end() : flush_->find(g.pid);
    end = it != flush_->end() ? it->second : g.start_or_zero();
  }
  e.end = e.kind == EventKind::kMark ? e.start : std::max(e.start, clamp_time(end));
  e.extra = g.null(R::kColor) ? 0 : static_cast<uint32_t>(g.color);
  const int64_t tid = source == store::kRangeSourceSamplingWindow ? kTracedTrack
                      : e.kind == EventKind::kAsyncRange          ? kAsyncTrack
                                                                  : g.tid_or_zero();
  threads.at({g.pid_or_zero(), tid}).push_back(e);
  return row_read();
}

std::shared_ptr<LoadBatch> load_cpu_part(LoadContext& ctx) {
  store::Reader r(ctx.database);
  const RecordingInfo& info = *ctx.info;
  const std::string stage = "CPU threads";
  const FlushEnds flush = flush_ends(r);
  std::vector<EventLoad> loads =
      visit_in_parallel<rec::ApiCall, rec::Op, rec::Sync, rec::Range>(ctx, r, stage, &flush);
  if (ctx.cancelled()) return nullptr;
  std::vector<EventMap<ThreadKey>> parts;
  for (EventLoad& l : loads) parts.push_back(std::move(l.threads.lists));
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
