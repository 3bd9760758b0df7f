// GPU activity: kernels, memcpys and memsets, one track per (device, process, stream).
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "common/time_math.h"
#include "model/parallel_read.h"
#include "model/recording_loader.h"
#include "store/reader.h"

namespace gpuscope::gui {
namespace {

using StreamKey = std::tuple<int64_t, int64_t, int64_t>;  // device, pid, stream

constexpr int64_t kProgressEvery = 250'000;

// Consecutive rows almost always hit the same stream: cache the last lookup.
struct StreamMap {
  EventMap<StreamKey> streams;
  StreamKey last_key{-1, -1, -1};
  std::vector<Event>* last = nullptr;
  std::vector<Event>& at(int64_t device, int64_t pid, int64_t stream) {
    StreamKey k{device, pid, stream};
    if (!last || k != last_key) {
      last = &streams[k];
      last_key = k;
    }
    return *last;
  }
};

Event make_event(const store::Statement& st, EventKind kind) {
  // Columns: id, pid, device, stream, correlation, start, end, ...
  Event e;
  e.row = static_cast<uint32_t>(st.int64(0));
  e.extra = static_cast<uint32_t>(st.int64(4));
  e.start = clamp_time(st.int64(5));
  e.end = std::max(e.start, clamp_time(st.int64(6)));
  e.kind = kind;
  return e;
}

// Reads rows [r.lo, r.hi] of one GPU table into `out`.
void read_range(LoadContext& ctx, const std::string& table, IdRange range, StreamMap& out,
                std::vector<int64_t>& copy_bytes) {
  store::Reader r(ctx.database);
  const RecordingInfo& info = *ctx.info;
  const std::string stage = "GPU activity";
  std::string cols = "id, pid, device, stream, correlation, start, \"end\"";
  if (table == "kernel") cols += ", name_id";
  if (table == "memcpy") cols += ", copy_kind, bytes";
  auto st = r.query("SELECT " + cols + " FROM " + table + " WHERE id BETWEEN ? AND ?");
  st.bind(1, range.lo);
  st.bind(2, range.hi);
  int64_t pending = 0;
  while (st.step()) {
    Event e;
    if (table == "kernel") {
      e = make_event(st, EventKind::kKernel);
      e.name = static_cast<uint32_t>(st.int64(7));
    } else if (table == "memcpy") {
      e = make_event(st, EventKind::kMemcpy);
      int64_t ck = st.int64(7);
      if (ck < 0 || ck > 10) ck = 0;
      e.aux = static_cast<uint8_t>(ck);
      e.name = info.memcpy_name_base + e.aux;
      copy_bytes[e.aux] = saturating_add(copy_bytes[e.aux], st.int64(8));
    } else {
      e = make_event(st, EventKind::kMemset);
      e.name = info.memset_name;
    }
    out.at(st.int64(2), st.int64(1), st.int64(3)).push_back(e);
    if (++pending == kProgressEvery) {
      ctx.rows(pending, stage);
      pending = 0;
      if (ctx.cancelled()) return;
    }
  }
  if (pending) ctx.rows(pending, stage);
  sort_lists(out.streams);
}

}  // namespace

std::shared_ptr<LoadBatch> load_gpu_part(LoadContext& ctx) {
  store::Reader r(ctx.database);
  const std::string stage = "GPU activity";
  // One task per id range; the kernel table is the big one.
  struct Task {
    std::string table;
    IdRange range;
  };
  std::vector<Task> tasks;
  for (const char* table : {"kernel", "memcpy", "memset"})
    for (const IdRange& range : split_ids(r, table, reader_threads())) tasks.push_back({table, range});
  std::vector<StreamMap> maps(tasks.size());
  std::vector<std::vector<int64_t>> bytes(tasks.size(), std::vector<int64_t>(16, 0));
  std::vector<std::function<void()>> jobs;
  for (size_t i = 0; i < tasks.size(); ++i)
    jobs.push_back([&, i] { read_range(ctx, tasks[i].table, tasks[i].range, maps[i], bytes[i]); });
  run_parallel(jobs);
  if (ctx.cancelled()) return nullptr;
  std::vector<int64_t> copy_bytes(16, 0);
  for (const auto& b : bytes)
    for (size_t k = 0; k < b.size(); ++k) copy_bytes[k] += b[k];
  std::vector<EventMap<StreamKey>> parts;
  for (auto& m : maps) parts.push_back(std::move(m.streams));
  EventMap<StreamKey> streams = merge_sorted(parts);

  auto batch = std::make_shared<LoadBatch>();
  batch->stage = stage;
  std::map<int64_t, std::set<int64_t>> pids_per_device;
  for (const auto& [key, ev] : streams) pids_per_device[std::get<0>(key)].insert(std::get<1>(key));
  std::map<int64_t, std::string> device_names;
  auto dev = r.query("SELECT id, name FROM device");
  while (dev.step()) device_names[dev.int64(0)] = std::string(dev.text(1));

  // Lanes and pyramids of each stream, in parallel.
  std::vector<std::function<void()>> pack_jobs;
  for (auto& [key, ev] : streams) {
    auto [device, pid, stream] = key;
    auto t = std::make_shared<Track>();
    t->title = "Stream " + std::to_string(stream);
    if (pids_per_device[device].size() > 1) t->title += " · pid " + std::to_string(pid);
    t->group_key = "gpu:" + std::to_string(device);
    // Ids of an imported trace may be any int64: held at the limits, not wrapped.
    int64_t by_stream = 0;
    if (__builtin_mul_overflow(stream, int64_t{1'000'000}, &by_stream)) by_stream = stream < 0 ? INT64_MIN : INT64_MAX;
    t->sort_key = saturating_add(by_stream, pid % 1'000'000);
    t->device = device;
    t->pid = pid;
    t->stream = stream;
    auto* events = &ev;
    pack_jobs.push_back([t, events] { t->lanes = pack_lanes(std::move(*events), true); });
    batch->tracks.push_back(std::move(t));
  }
  run_parallel(pack_jobs);
  if (ctx.cancelled()) return nullptr;
  for (const auto& [device, pids] : pids_per_device)
    batch->groups.push_back(device_group(device, device_names[device]));
  batch->kernels = summarize_names(batch->tracks, EventKind::kKernel);
  batch->memcpys = summarize_memcpys(batch->tracks, copy_bytes);
  batch->has_kernel_summary = batch->has_memcpy_summary = true;
  batch->gpu_corr.build(batch->tracks, true);
  return batch;
}

}  // namespace gpuscope::gui
