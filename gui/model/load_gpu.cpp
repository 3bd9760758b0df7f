// GPU activity: kernels, memcpys and memsets, one track per (device, process, stream).
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <type_traits>

#include "trace_formats/common/time_math.h"
#include "gui/model/parallel_read.h"
#include "gui/model/recording_loader.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::gui {
namespace {

namespace rec = store::rec;

using StreamKey = std::tuple<int64_t, int64_t, int64_t>;  // device, pid, stream

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

// The columns read of each GPU table.
constexpr rec::Kernel::Column kKernelColumns[] = {rec::Kernel::kId,     rec::Kernel::kPid,         rec::Kernel::kDevice,
                                                  rec::Kernel::kStream, rec::Kernel::kCorrelation, rec::Kernel::kStart,
                                                  rec::Kernel::kEnd,    rec::Kernel::kNameId};
constexpr rec::Memcpy::Column kMemcpyColumns[] = {rec::Memcpy::kId,     rec::Memcpy::kPid,         rec::Memcpy::kDevice,
                                                  rec::Memcpy::kStream, rec::Memcpy::kCorrelation, rec::Memcpy::kStart,
                                                  rec::Memcpy::kEnd,    rec::Memcpy::kCopyKind,    rec::Memcpy::kBytes};
constexpr rec::Memset::Column kMemsetColumns[] = {rec::Memset::kId,     rec::Memset::kPid,         rec::Memset::kDevice,
                                                  rec::Memset::kStream, rec::Memset::kCorrelation, rec::Memset::kStart,
                                                  rec::Memset::kEnd};

// Reads rows [range.lo, range.hi] of R's table (kernel, memcpy or memset) into `out`.
template <class R, const auto& Columns>
void read_range(LoadContext& ctx, IdRange range, StreamMap& out, std::vector<int64_t>& copy_bytes) {
  const RecordingInfo& info = *ctx.info;
  const bool done = read_ids<R, Columns>(ctx, "GPU activity", range, [&](const R& row) {
    Event e;
    e.row = static_cast<uint32_t>(row.id);
    e.extra = static_cast<uint32_t>(row.correlation);
    e.start = clamp_time(row.start_or_zero());
    e.end = std::max(e.start, clamp_time(row.end_or_zero()));
    if constexpr (std::is_same_v<R, rec::Kernel>) {
      e.kind = EventKind::kKernel;
      e.name = static_cast<uint32_t>(row.name_id);
    } else if constexpr (std::is_same_v<R, rec::Memcpy>) {
      e.kind = EventKind::kMemcpy;
      int64_t ck = row.copy_kind;
      if (ck < 0 || ck > 10) ck = 0;  // NULL too
      e.aux = static_cast<uint8_t>(ck);
      e.name = info.memcpy_name_base + e.aux;
      copy_bytes[e.aux] = saturating_add(copy_bytes[e.aux], row.bytes_or_zero());
    } else {
      e.kind = EventKind::kMemset;
      e.name = info.memset_name;
    }
    out.at(row.device_or_zero(), row.pid_or_zero(), row.stream_or_zero())
        .push_back(e);
  });
  if (done) sort_lists(out.streams);
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
    jobs.push_back([&, i] {
      const Task& t = tasks[i];
      if (t.table == "kernel")
        read_range<rec::Kernel, kKernelColumns>(ctx, t.range, maps[i], bytes[i]);
      else if (t.table == "memcpy")
        read_range<rec::Memcpy, kMemcpyColumns>(ctx, t.range, maps[i], bytes[i]);
      else
        read_range<rec::Memset, kMemsetColumns>(ctx, t.range, maps[i], bytes[i]);
    });
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
