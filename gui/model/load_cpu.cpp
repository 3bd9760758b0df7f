// CPU side: per thread its CUDA API calls, syncs, ops and ranges (nested in
// lanes), per process its NVTX start/end ranges, which may cross threads.
#include <algorithm>
#include <map>
#include <utility>

#include "model/recording_loader.h"
#include "store/reader.h"

namespace gpuscope::gui {
namespace {

constexpr int64_t kProgressEvery = 250'000;
constexpr int64_t kAsyncTrack = -1;  // tid key of a process's start/end ranges
constexpr int64_t kSyncTrack = -2;   // tid key of waits with no known thread

struct ThreadMap {
  std::map<std::pair<int64_t, int64_t>, std::vector<Event>> threads;
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
  if (kind == 3) return EventKind::kMark;
  if (kind == 2) return EventKind::kAsyncRange;
  switch (source) {
    case 3: return EventKind::kDataLoader;
    case 4: return EventKind::kOptimizer;
    default: return EventKind::kRange;
  }
}

}  // namespace

std::shared_ptr<LoadBatch> load_cpu_part(LoadContext& ctx) {
  store::Reader r(ctx.database);
  const RecordingInfo& info = *ctx.info;
  const std::string stage = "CPU threads";
  ThreadMap map;
  int64_t pending = 0;
  auto tick = [&] {
    if (++pending == kProgressEvery) {
      ctx.rows(pending, stage);
      pending = 0;
    }
  };

  auto a = r.query("SELECT id, pid, tid, name_id, start, \"end\", correlation FROM api_call");
  while (a.step()) {
    Event e;
    e.row = static_cast<uint32_t>(a.int64(0));
    e.name = static_cast<uint32_t>(a.int64(3));
    e.start = a.int64(4);
    e.end = std::max(e.start, a.int64(5));
    e.extra = static_cast<uint32_t>(a.int64(6));
    e.kind = EventKind::kApiCall;
    map.at(a.int64(1), a.int64(2)).push_back(e);
    tick();
    if (pending == 0 && ctx.cancelled()) return nullptr;
  }
  auto s = r.query("SELECT id, pid, tid, type, start, \"end\", correlation FROM sync");
  while (s.step()) {
    Event e;
    e.row = static_cast<uint32_t>(s.int64(0));
    int64_t type = s.int64(3);
    e.name = info.sync_name_base + static_cast<uint32_t>(type >= 0 && type <= 4 ? type : 0);
    e.start = s.int64(4);
    e.end = std::max(e.start, s.int64(5));
    e.extra = static_cast<uint32_t>(s.int64(6));
    e.kind = EventKind::kSync;
    map.at(s.int64(1), s.is_null(2) ? kSyncTrack : s.int64(2)).push_back(e);
    tick();
  }
  auto o = r.query("SELECT id, pid, tid, name_id, start, \"end\" FROM op");
  while (o.step()) {
    Event e;
    e.row = static_cast<uint32_t>(o.int64(0));
    e.name = static_cast<uint32_t>(o.int64(3));
    e.start = o.int64(4);
    e.end = std::max(e.start, o.int64(5));
    e.kind = EventKind::kOp;
    map.at(o.int64(1), o.int64(2)).push_back(e);
    tick();
    if (pending == 0 && ctx.cancelled()) return nullptr;
  }
  // A range never closed lasts until its process's last flush.
  auto g = r.query(
      "SELECT r.id, r.pid, r.tid, r.source, r.kind, r.name_id, r.start, "
      "coalesce(r.\"end\", (SELECT p.\"end\" FROM process p WHERE p.pid = r.pid), r.start), "
      "r.color FROM \"range\" r");
  while (g.step()) {
    Event e;
    e.row = static_cast<uint32_t>(g.int64(0));
    e.kind = range_kind(g.int64(3), g.int64(4));
    e.name = static_cast<uint32_t>(g.int64(5));
    e.start = g.int64(6);
    e.end = e.kind == EventKind::kMark ? e.start : std::max(e.start, g.int64(7));
    e.extra = g.is_null(8) ? 0 : static_cast<uint32_t>(g.int64(8));
    int64_t tid = e.kind == EventKind::kAsyncRange ? kAsyncTrack : g.int64(2);
    map.at(g.int64(1), tid).push_back(e);
    tick();
  }
  if (pending) ctx.rows(pending, stage);
  if (ctx.cancelled()) return nullptr;

  std::map<std::pair<int64_t, int64_t>, std::string> names;
  auto th = r.query("SELECT pid, tid, name FROM thread");
  while (th.step()) names[{th.int64(0), th.int64(1)}] = std::string(th.text(2));

  auto batch = std::make_shared<LoadBatch>();
  batch->stage = stage;
  std::map<int64_t, bool> pids;
  for (auto& [key, ev] : map.threads) {
    auto [pid, tid] = key;
    pids[pid] = true;
    auto t = std::make_shared<Track>();
    t->group_key = "proc:" + std::to_string(pid);
    t->pid = pid;
    t->tid = tid;
    if (tid == kAsyncTrack) {
      t->title = "NVTX start/end ranges";
      t->sort_key = INT64_MAX - 1;
    } else if (tid == kSyncTrack) {
      t->title = "GPU waits (thread unknown)";
      t->sort_key = INT64_MAX;
    } else {
      auto it = names.find(key);
      std::string name = it != names.end() && !it->second.empty() ? it->second : "thread";
      t->title = name + " " + std::to_string(tid) + (tid == pid ? " (main)" : "");
      t->sort_key = tid == pid ? 0 : tid;
    }
    t->lanes = pack_lanes(std::move(ev));
    batch->tracks.push_back(std::move(t));
    if (ctx.cancelled()) return nullptr;
  }
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
