// Counter rows (NVML samples, GPU memory over time) and step markers.
#include <algorithm>
#include <map>
#include <tuple>

#include "gui/model/load_events.h"
#include "gui/model/parallel_read.h"
#include "gui/model/ranks.h"
#include "gui/model/recording_loader.h"
#include "trace_formats/schema/enums.h"
#include "trace_formats/store/cursor.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::gui {
namespace {

std::string unit_of(const std::string& name) {
  auto ends = [&](const char* tail) {
    std::string t(tail);
    return name.size() >= t.size() && name.compare(name.size() - t.size(), t.size(), t) == 0;
  };
  if (ends("_pct")) return "%";
  if (ends("_w")) return "W";
  if (ends("_mhz")) return "MHz";
  if (ends("_c")) return "°C";
  if (name.find("memory") != std::string::npos || ends("_bytes")) return "B";
  return "";
}

std::shared_ptr<Track> counter_track(std::string title, std::string group, int64_t order,
                                     std::vector<CounterSample> samples, std::string unit) {
  auto t = std::make_shared<Track>();
  t->type = TrackType::kCounter;
  t->title = std::move(title);
  t->group_key = std::move(group);
  t->sort_key = (int64_t{1} << 50) + order;  // below the streams and threads
  std::stable_sort(samples.begin(), samples.end(),
                   [](const CounterSample& a, const CounterSample& b) { return a.ts < b.ts; });
  t->samples = std::move(samples);
  t->counter_lod.build(t->samples);
  t->unit = std::move(unit);
  return t;
}

}  // namespace

bool EventLoad::on(const rec::Step& s) {
  steps.push_back({s.pid_or_zero(), s.number_or_zero(), s.start_or_zero(), s.end_or_zero()});
  return row_read();
}

// Device counters go to their GPU, host counters to their process.
bool EventLoad::on(const rec::Counter& c) {
  int64_t device = c.null(rec::Counter::kDevice) ? -1 : c.device;
  int64_t pid = device >= 0 ? -1 : c.pid_or_zero();
  counters[{device, pid, c.name_id_or_zero()}].push_back({c.ts_or_zero(), c.value});
  return row_read();
}

// The torch allocator reports its totals; raw CUDA allocations are summed here.
bool EventLoad::on(const rec::MemoryEvent& e) {
  using M = rec::MemoryEvent;
  Memory& x = memory[{e.device_or_zero(), e.pid_or_zero()}];
  int64_t ts = e.ts_or_zero();
  if (e.source == schema::memory_source::torch_allocator) {
    if (!e.null(M::kTotalAllocated)) x.allocated.push_back({ts, static_cast<double>(e.total_allocated)});
    if (!e.null(M::kTotalReserved)) x.reserved.push_back({ts, static_cast<double>(e.total_reserved)});
  } else {
    const int64_t bytes = std::clamp<int64_t>(e.bytes_or_zero(), -INT64_MAX, INT64_MAX);
    x.cuda_total = saturating_add(x.cuda_total, e.op == schema::memory_op::free ? -bytes : bytes);
    x.cuda.push_back({ts, static_cast<double>(x.cuda_total)});
  }
  return row_read();
}

std::shared_ptr<LoadBatch> load_counter_part(LoadContext& ctx) {
  store::Reader r(ctx.database);
  const RecordingInfo& info = *ctx.info;
  auto batch = std::make_shared<LoadBatch>();
  batch->stage = "counters";
  EventLoad load(ctx, batch->stage);
  namespace events = store::events;
  const bool done = events::visit<rec::Step>(r.db(), load) && events::visit<rec::Counter>(r.db(), load) &&
                    events::visit<rec::MemoryEvent>(r.db(), load);
  load.report_rows();
  if (!done) return nullptr;
  batch->steps = std::move(load.steps);
  // A distributed job: each rank's steps as a lane on top of its group, so
  // that step N of every rank sits above one another.
  if (is_multi_rank(info.processes)) {
    std::map<int64_t, std::vector<StepMarker>> by_pid;
    for (const auto& s : batch->steps) by_pid[s.pid].push_back(s);
    for (const ProcessInfo* p : ranked_processes(info.processes)) {
      auto it = by_pid.find(p->pid);
      if (it == by_pid.end()) continue;
      auto t = std::make_shared<Track>();
      t->type = TrackType::kSteps;
      t->title = "steps";
      t->group_key = "proc:" + std::to_string(p->pid);
      t->sort_key = INT64_MIN;
      t->pid = p->pid;
      t->steps = std::move(it->second);
      batch->tracks.push_back(std::move(t));
      batch->groups.push_back(process_group(p, p->pid));
    }
  }

  // One counter row per (device, name); host counters per (process, name).
  int64_t order = 0;
  for (auto& [key, samples] : load.counters) {
    auto [device, pid, name_id] = key;
    std::string name = info.strings->at(static_cast<size_t>(name_id));
    std::string group = device >= 0 ? "gpu:" + std::to_string(device) : "proc:" + std::to_string(pid);
    batch->tracks.push_back(counter_track(name, group, order++, std::move(samples), unit_of(name)));
  }

  std::map<std::pair<int64_t, int64_t>, EventLoad::Memory>& mem = load.memory;  // by (device, pid)
  const auto gpu_series = std::count_if(mem.begin(), mem.end(), [](const auto& e) { return e.first.first >= 0; });
  for (auto& [key, x] : mem) {
    auto [device, pid] = key;
    // The CPU allocator (device -1) belongs to its process, not to a GPU.
    const bool cpu = device < 0;
    std::string group = cpu ? "proc:" + std::to_string(pid) : "gpu:" + std::to_string(device);
    std::string who = cpu ? " (CPU)" : gpu_series > 1 ? " · pid " + std::to_string(pid) : "";
    if (cpu) {
      const ProcessInfo* p = nullptr;
      for (const auto& q : info.processes)
        if (q.pid == pid) p = &q;
      batch->groups.push_back(process_group(p, pid));
    }
    if (!x.allocated.empty())
      batch->tracks.push_back(counter_track("torch allocated" + who, group, order++,
                                            std::move(x.allocated), "B"));
    if (!x.reserved.empty())
      batch->tracks.push_back(counter_track("torch reserved" + who, group, order++,
                                            std::move(x.reserved), "B"));
    if (!x.cuda.empty())
      batch->tracks.push_back(
          counter_track("CUDA memory" + who, group, order++, std::move(x.cuda), "B"));
  }
  for (const auto& t : batch->tracks)
    if (t->group_key.rfind("gpu:", 0) == 0) {
      int64_t d = std::stoll(t->group_key.substr(4));
      batch->groups.push_back(device_group(d, ""));
    }
  return batch;
}

}  // namespace gpuscope::gui
