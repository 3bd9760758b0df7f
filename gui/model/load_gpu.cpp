// GPU activity: kernels, memcpys and memsets, one track per (device, process, stream).
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "model/recording_loader.h"
#include "store/reader.h"

namespace gpuscope::gui {
namespace {

using StreamKey = std::tuple<int64_t, int64_t, int64_t>;  // device, pid, stream

constexpr int64_t kProgressEvery = 250'000;

// Consecutive rows almost always hit the same stream: cache the last lookup.
struct StreamMap {
  std::map<StreamKey, std::vector<Event>> streams;
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
  e.start = st.int64(5);
  e.end = std::max(e.start, st.int64(6));
  e.kind = kind;
  return e;
}

}  // namespace

std::shared_ptr<LoadBatch> load_gpu_part(LoadContext& ctx) {
  store::Reader r(ctx.database);
  const RecordingInfo& info = *ctx.info;
  const std::string stage = "GPU activity";
  StreamMap map;
  int64_t pending = 0;
  auto tick = [&] {
    if (++pending == kProgressEvery) {
      ctx.rows(pending, stage);
      pending = 0;
    }
  };

  auto k = r.query("SELECT id, pid, device, stream, correlation, start, \"end\", name_id FROM kernel");
  while (k.step()) {
    Event e = make_event(k, EventKind::kKernel);
    e.name = static_cast<uint32_t>(k.int64(7));
    map.at(k.int64(2), k.int64(1), k.int64(3)).push_back(e);
    tick();
    if (pending == 0 && ctx.cancelled()) return nullptr;
  }
  std::vector<int64_t> copy_bytes(16, 0);
  auto m = r.query(
      "SELECT id, pid, device, stream, correlation, start, \"end\", copy_kind, bytes FROM memcpy");
  while (m.step()) {
    Event e = make_event(m, EventKind::kMemcpy);
    int64_t ck = m.int64(7);
    if (ck < 0 || ck > 10) ck = 0;
    e.aux = static_cast<uint8_t>(ck);
    e.name = info.memcpy_name_base + e.aux;
    copy_bytes[e.aux] += m.int64(8);
    map.at(m.int64(2), m.int64(1), m.int64(3)).push_back(e);
    tick();
  }
  auto s = r.query("SELECT id, pid, device, stream, correlation, start, \"end\" FROM memset");
  while (s.step()) {
    Event e = make_event(s, EventKind::kMemset);
    e.name = info.memset_name;
    map.at(s.int64(2), s.int64(1), s.int64(3)).push_back(e);
    tick();
  }
  if (pending) ctx.rows(pending, stage);
  if (ctx.cancelled()) return nullptr;

  auto batch = std::make_shared<LoadBatch>();
  batch->stage = stage;
  std::map<int64_t, std::set<int64_t>> pids_per_device;
  for (const auto& [key, ev] : map.streams) pids_per_device[std::get<0>(key)].insert(std::get<1>(key));
  std::map<int64_t, std::string> device_names;
  auto dev = r.query("SELECT id, name FROM device");
  while (dev.step()) device_names[dev.int64(0)] = std::string(dev.text(1));

  for (auto& [key, ev] : map.streams) {
    auto [device, pid, stream] = key;
    auto t = std::make_shared<Track>();
    t->title = "Stream " + std::to_string(stream);
    if (pids_per_device[device].size() > 1) t->title += " · pid " + std::to_string(pid);
    t->group_key = "gpu:" + std::to_string(device);
    t->sort_key = stream * 1'000'000 + pid % 1'000'000;
    t->device = device;
    t->pid = pid;
    t->stream = stream;
    t->lanes = pack_lanes(std::move(ev));
    batch->tracks.push_back(std::move(t));
    if (ctx.cancelled()) return nullptr;
  }
  for (const auto& [device, pids] : pids_per_device)
    batch->groups.push_back(device_group(device, device_names[device]));
  batch->kernels = summarize_names(batch->tracks, EventKind::kKernel);
  batch->memcpys = summarize_memcpys(batch->tracks, copy_bytes);
  batch->has_kernel_summary = batch->has_memcpy_summary = true;
  batch->gpu_corr.build(batch->tracks, true);
  return batch;
}

}  // namespace gpuscope::gui
