// CPU side: per thread its CUDA API calls, syncs, ops and ranges (nested in
// lanes), per process its NVTX start/end ranges, which may cross threads.
#include <algorithm>
#include <map>
#include <utility>

#include "model/parallel_read.h"
#include "model/recording_loader.h"
#include "schema/enums.h"
#include "store/reader.h"
#include "store/rows.h"

namespace gpuscope::gui {
namespace {

constexpr int64_t kProgressEvery = 250'000;
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

std::string select_for(const std::string& table) {
  if (table == "api_call") return "SELECT id, pid, tid, name_id, start, \"end\", correlation FROM api_call";
  if (table == "sync") return "SELECT id, pid, tid, type, start, \"end\", correlation FROM sync";
  if (table == "op") return "SELECT id, pid, tid, name_id, start, \"end\" FROM op";
  // A range never closed lasts until its process's last flush.
  return "SELECT r.id, r.pid, r.tid, r.source, r.kind, r.name_id, r.start, "
         "coalesce(r.\"end\", (SELECT p.\"end\" FROM process p WHERE p.pid = r.pid), r.start), "
         "r.color FROM \"range\" r";
}

void read_range(LoadContext& ctx, const std::string& table, IdRange range, ThreadMap& map) {
  store::Reader r(ctx.database);
  const RecordingInfo& info = *ctx.info;
  const std::string stage = "CPU threads";
  const std::string id = table == "range" ? "r.id" : "id";
  auto st = r.query(select_for(table) + " WHERE " + id + " BETWEEN ? AND ?");
  st.bind(1, range.lo);
  st.bind(2, range.hi);
  int64_t pending = 0;
  while (st.step()) {
    Event e;
    e.row = static_cast<uint32_t>(st.int64(0));
    if (table == "api_call") {
      e.name = static_cast<uint32_t>(st.int64(3));
      e.start = clamp_time(st.int64(4));
      e.end = std::max(e.start, clamp_time(st.int64(5)));
      e.extra = static_cast<uint32_t>(st.int64(6));
      e.kind = EventKind::kApiCall;
      map.at(st.int64(1), st.int64(2)).push_back(e);
    } else if (table == "sync") {
      int64_t type = st.int64(3);
      e.name = info.sync_name_base + static_cast<uint32_t>(
          type >= schema::sync_type::unknown && type <= schema::sync_type::context_synchronize ? type : 0);
      e.start = clamp_time(st.int64(4));
      e.end = std::max(e.start, clamp_time(st.int64(5)));
      e.extra = static_cast<uint32_t>(st.int64(6));
      e.kind = EventKind::kSync;
      map.at(st.int64(1), st.is_null(2) ? kSyncTrack : st.int64(2)).push_back(e);
    } else if (table == "op") {
      e.name = static_cast<uint32_t>(st.int64(3));
      e.start = clamp_time(st.int64(4));
      e.end = std::max(e.start, clamp_time(st.int64(5)));
      e.kind = EventKind::kOp;
      map.at(st.int64(1), st.int64(2)).push_back(e);
    } else {
      e.kind = range_kind(st.int64(3), st.int64(4));
      e.name = static_cast<uint32_t>(st.int64(5));
      e.start = clamp_time(st.int64(6));
      e.end = e.kind == EventKind::kMark ? e.start : std::max(e.start, clamp_time(st.int64(7)));
      e.extra = st.is_null(8) ? 0 : static_cast<uint32_t>(st.int64(8));
      const int64_t tid = st.int64(3) == store::kRangeSourceSamplingWindow ? kTracedTrack
                          : e.kind == EventKind::kAsyncRange      ? kAsyncTrack
                                                                  : st.int64(2);
      map.at(st.int64(1), tid).push_back(e);
    }
    if (++pending == kProgressEvery) {
      ctx.rows(pending, stage);
      pending = 0;
      if (ctx.cancelled()) return;
    }
  }
  if (pending) ctx.rows(pending, stage);
  sort_lists(map.threads);
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
  std::vector<ThreadMap> maps(tasks.size());
  std::vector<std::function<void()>> jobs;
  for (size_t i = 0; i < tasks.size(); ++i)
    jobs.push_back([&, i] { read_range(ctx, tasks[i].table, tasks[i].range, maps[i]); });
  run_parallel(jobs);
  if (ctx.cancelled()) return nullptr;
  std::vector<EventMap<std::pair<int64_t, int64_t>>> parts;
  for (auto& m : maps) parts.push_back(std::move(m.threads));
  auto threads = merge_sorted(parts);

  std::map<std::pair<int64_t, int64_t>, std::string> names;
  auto th = r.query("SELECT pid, tid, name FROM thread");
  while (th.step()) names[{th.int64(0), th.int64(1)}] = std::string(th.text(2));

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
