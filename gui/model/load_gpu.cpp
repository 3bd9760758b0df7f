// GPU activity: kernels, memcpys and memsets, one track per (device, process, stream).
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "gui/model/load_events.h"
#include "gui/model/parallel_read.h"
#include "gui/model/recording_loader.h"
#include "trace_formats/common/time_math.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::gui {

namespace {

// The part every GPU row's event shares: its row, correlation and clamped times.
template <class R>
Event gpu_event(const R& r, EventKind kind) {
  Event e;
  e.row = static_cast<uint32_t>(r.id);
  e.extra = static_cast<uint32_t>(r.correlation);
  e.start = clamp_time(r.start_or_zero());
  e.end = std::max(e.start, clamp_time(r.end_or_zero()));
  e.kind = kind;
  return e;
}

}  // namespace

inline bool EventLoad::on(const rec::Kernel& k) {
  Event e = gpu_event(k, EventKind::kKernel);
  e.name = static_cast<uint32_t>(k.name_id);
  streams.at({k.device_or_zero(), k.pid_or_zero(), k.stream_or_zero()}).push_back(e);
  return row_read();
}

inline bool EventLoad::on(const rec::Memcpy& m) {
  Event e = gpu_event(m, EventKind::kMemcpy);
  int64_t ck = m.copy_kind;
  if (ck < 0 || ck > 10) ck = 0;  // NULL too
  e.aux = static_cast<uint8_t>(ck);
  e.name = info_.memcpy_name_base + e.aux;
  copy_bytes[e.aux] = saturating_add(copy_bytes[e.aux], m.bytes_or_zero());
  streams.at({m.device_or_zero(), m.pid_or_zero(), m.stream_or_zero()}).push_back(e);
  return row_read();
}

inline bool EventLoad::on(const rec::Memset& m) {
  Event e = gpu_event(m, EventKind::kMemset);
  e.name = info_.memset_name;
  streams.at({m.device_or_zero(), m.pid_or_zero(), m.stream_or_zero()}).push_back(e);
  return row_read();
}

std::shared_ptr<LoadBatch> load_gpu_part(LoadContext& ctx) {
  store::Reader r(ctx.database);
  const std::string stage = "GPU activity";
  // Id ranges of each table, the kernel table the big one, read in parallel.
  std::vector<EventLoad> loads = visit_in_parallel<rec::Kernel, rec::Memcpy, rec::Memset>(ctx, r, stage);
  if (ctx.cancelled()) return nullptr;
  std::vector<int64_t> copy_bytes(16, 0);
  for (const EventLoad& l : loads)
    for (size_t k = 0; k < l.copy_bytes.size(); ++k) copy_bytes[k] += l.copy_bytes[k];
  std::vector<EventMap<StreamKey>> parts;
  for (EventLoad& l : loads) parts.push_back(std::move(l.streams.lists));
  EventMap<StreamKey> streams = merge_sorted(parts);

  auto batch = std::make_shared<LoadBatch>();
  batch->stage = stage;
  std::map<int64_t, std::set<int64_t>> pids_per_device;
  for (const auto& [key, ev] : streams) pids_per_device[std::get<0>(key)].insert(std::get<1>(key));
  std::map<int64_t, std::string> device_names;
  store::Cursor<rec::Device> dev(r.db(), {rec::Device::kId, rec::Device::kName});
  while (dev.next()) device_names[dev->id] = std::string(dev->name);

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
