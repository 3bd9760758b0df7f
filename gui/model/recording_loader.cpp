#include "gui/model/recording_loader.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <thread>

#include "trace_formats/common/error.h"
#include "trace_formats/common/time_math.h"
#include "gui/model/importer.h"
#include "trace_formats/store/cursor.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::gui {

void LoadContext::rows(int64_t n, const std::string& stage) {
  int64_t done = rows_done.fetch_add(n, std::memory_order_relaxed) + n;
  sink.on_progress(done, info ? info->total_rows : 0, stage);
}

TrackGroup device_group(int64_t device, const std::string& device_name) {
  TrackGroup g;
  g.key = "gpu:" + std::to_string(device);
  g.title = "GPU " + std::to_string(device) + (device_name.empty() ? "" : " · " + device_name);
  g.sort_key = device;  // GPUs before processes
  return g;
}

TrackGroup process_group(const ProcessInfo* p, int64_t pid) {
  TrackGroup g;
  g.key = "proc:" + std::to_string(pid);
  if (p && p->rank >= 0) {
    // A rank of a distributed job: named by rank, and ordered by it, before
    // the processes without a rank (the launcher).
    g.title = "rank " + std::to_string(p->rank) + (p->host.empty() ? "" : " · " + p->host) + " · pid " + std::to_string(pid);
    g.sort_key = (int64_t{1} << 39) + std::min(p->rank, int64_t{1} << 38);
    return g;
  }
  g.title = "Process " + std::to_string(pid);
  if (p) {
    std::string exe = p->exe.substr(p->exe.find_last_of('/') + 1);
    if (!exe.empty()) g.title += " · " + exe;
  }
  g.sort_key = saturating_add(int64_t{1} << 40, pid);  // an imported pid may be any int64
  return g;
}

namespace {

const char* const kCopyKinds[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                  "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
const char* const kSyncTypes[] = {"unknown", "cudaEventSynchronize", "cudaStreamWaitEvent",
                                  "cudaStreamSynchronize", "cudaDeviceSynchronize"};

std::shared_ptr<RecordingInfo> read_info(const std::string& path, const std::string& database) {
  store::Reader r(database);
  auto info = std::make_shared<RecordingInfo>();
  info->path = path;
  info->database = database;
  auto strings = std::make_shared<StringTable>(r.strings());
  info->memcpy_name_base = static_cast<uint32_t>(strings->size());
  for (const char* k : kCopyKinds) strings->push_back(std::string("Memcpy ") + k);
  info->memset_name = static_cast<uint32_t>(strings->size());
  strings->push_back("Memset");
  info->sync_name_base = static_cast<uint32_t>(strings->size());
  for (const char* k : kSyncTypes) strings->push_back(std::string("sync: ") + k);
  info->strings = std::move(strings);

  int64_t lo = INT64_MAX, hi = INT64_MIN;
  using P = store::rec::Process;
  store::Cursor<P> proc(r.db(), {P::kPid, P::kExe, P::kCmdline, P::kHost, P::kRank, P::kStart, P::kEnd},
                        "ORDER BY pid");
  while (proc.next()) {
    ProcessInfo p;
    p.pid = proc->pid;
    p.exe = proc->exe;
    p.cmdline = proc->cmdline;
    p.host = proc->host;
    p.rank = proc->null(P::kRank) ? -1 : proc->rank;
    p.start = proc->null(P::kStart) ? 0 : proc->start;  // NULL as 0, as the viewer always read it
    p.end = proc->null(P::kEnd) ? 0 : proc->end;
    lo = std::min(lo, p.start);
    hi = std::max(hi, p.end);
    info->processes.push_back(std::move(p));
  }
  if (lo <= hi) {
    info->t_min = lo;
    info->t_max = hi;
  } else {
    info->t_min = 0;
    info->t_max = 1'000'000'000;
  }
  store::Cursor<store::rec::Device> dev(r.db(), {store::rec::Device::kId, store::rec::Device::kName}, "ORDER BY id");
  while (dev.next()) info->groups.push_back(device_group(dev->id, std::string(dev->name)));
  for (const auto& p : info->processes) info->groups.push_back(process_group(&p, p.pid));
  // Rows to read, for progress: from the id range, which SQLite answers at once
  // (count(*) would read the whole table before the first frame).
  for (const char* t : {"kernel", "memcpy", "memset", "api_call", "sync", "op", "range", "counter",
                        "memory_event", "step"}) {
    if (!r.db().has_table(t)) continue;
    // One min() or max() per SELECT: SQLite reads a rowid end directly only then.
    const std::string q = std::string("\"") + t + "\"";
    auto st = r.query("SELECT (SELECT max(id) FROM " + q + ") - (SELECT min(id) FROM " + q + ") + 1 AS n");
    if (st.step() && !st.is_null("n")) info->total_rows += st.int64("n");
  }
  return info;
}

// Errors that name the temporary copy of an imported trace name the trace instead.
std::string naming_input(std::string message, const std::string& database, const std::string& path) {
  if (database == path) return message;
  for (size_t p = message.find(database); p != std::string::npos; p = message.find(database, p + path.size()))
    message.replace(p, database.size(), path);
  return message;
}

bool load_opened(const std::string& path, const OpenedInput& input, LoadSink& sink, const std::atomic<bool>* cancel,
                 bool findings) {
  const std::string& database = input.database;
  auto info = read_info(path, database);
  info->temp = input.temp;
  sink.on_info(info);

  LoadContext ctx{database, info, sink, cancel};
  std::exception_ptr gpu_error, cpu_error;
  // GPU streams and CPU threads are the two big parts; they read different
  // tables, so they run side by side, each with its own connection.
  std::thread gpu([&] {
    try {
      if (auto b = load_gpu_part(ctx)) sink.on_batch(b);
    } catch (...) {
      gpu_error = std::current_exception();
    }
  });
  std::thread cpu([&] {
    try {
      if (auto b = load_cpu_part(ctx)) sink.on_batch(b);
    } catch (...) {
      cpu_error = std::current_exception();
    }
  });
  std::exception_ptr counter_error;
  try {
    if (auto b = load_counter_part(ctx)) sink.on_batch(b);
  } catch (...) {
    counter_error = std::current_exception();
  }
  gpu.join();
  cpu.join();
  for (auto& e : {gpu_error, cpu_error, counter_error})
    if (e) std::rethrow_exception(e);
  if (findings && !ctx.cancelled()) {
    sink.on_progress(info->total_rows, info->total_rows, "analyzing");
    sink.on_findings(std::make_shared<FindingsResult>(analyze_findings(database)));
  }
  return !ctx.cancelled();
}

}  // namespace

bool load_recording(const std::string& path, LoadSink& sink, const std::atomic<bool>* cancel,
                    bool findings) {
  const OpenedInput input = open_input(path);
  try {
    return load_opened(path, input, sink, cancel, findings);
  } catch (const Error& e) {
    if (!input.temp) throw;
    throw Error(naming_input(e.what(), input.database, path));
  }
}

}  // namespace gpuscope::gui
