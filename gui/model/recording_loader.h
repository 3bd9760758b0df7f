// Reads a recording through store::Reader into the viewer's tracks. The work
// is split in parts that run in parallel, each on its own connection; every
// part hands a finished batch of tracks to the sink as soon as it is built, so
// the viewer shows GPU streams while CPU threads are still loading.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "gui/model/findings_source.h"
#include "gui/model/timeline_data.h"
#include "gui/model/track_builder.h"

namespace gpuscope::gui {

struct ProcessInfo {
  int64_t pid = 0;
  std::string exe, cmdline, host;
  int64_t rank = -1;
  int64_t start = 0, end = 0;
};

// What is known right after opening: enough to lay out groups and the time axis.
struct RecordingInfo {
  std::string path;          // what the user opened
  std::string database;      // the SQLite file read (a temp file for imports)
  std::shared_ptr<const void> temp;  // imports: the temporary database, removed with the last owner
  std::shared_ptr<const StringTable> strings;  // string.id -> text, plus synthetic names
  std::vector<TrackGroup> groups;
  std::vector<ProcessInfo> processes;
  int64_t t_min = 0, t_max = 0;  // from the process table; refined by the tracks
  int64_t total_rows = 0;        // rows the load will read, for progress
  uint32_t memcpy_name_base = 0;  // strings[base + copy_kind] = "Memcpy HtoD" ...
  uint32_t memset_name = 0;
  uint32_t sync_name_base = 0;    // strings[base + sync type]
};

struct LoadBatch {
  std::string stage;  // "GPU activity", "CPU threads", "counters"
  std::vector<TrackGroup> groups;  // groups seen by this part (merged by key)
  std::vector<std::shared_ptr<Track>> tracks;
  std::vector<StepMarker> steps;
  std::vector<NameSummary> kernels, ops;
  std::vector<MemcpySummary> memcpys;
  bool has_kernel_summary = false, has_op_summary = false, has_memcpy_summary = false;
  CorrIndex gpu_corr, api_corr;
};

class LoadSink {
 public:
  virtual ~LoadSink() = default;
  // Called from the loading threads; implementations must be thread-safe.
  virtual void on_info(std::shared_ptr<const RecordingInfo> info) = 0;
  virtual void on_batch(std::shared_ptr<const LoadBatch> batch) = 0;
  virtual void on_progress(int64_t rows_done, int64_t rows_total, const std::string& stage) = 0;
  // After the tracks, when findings were asked for.
  virtual void on_findings(std::shared_ptr<const FindingsResult> findings) { (void)findings; }
};

// Opens `path` through open_input (model/importer.h): a recording, or a trace
// imported into a temporary database first. Throws gpuscope::Error("<path>:
// <reason>") when the file cannot be read.
// Returns false when `cancel` was raised. With `findings`, runs the analyzer
// after the tracks are delivered.
bool load_recording(const std::string& path, LoadSink& sink, const std::atomic<bool>* cancel,
                    bool findings = false);

// Shared by the parts.
struct LoadContext {
  std::string database;
  std::shared_ptr<const RecordingInfo> info;
  LoadSink& sink;
  const std::atomic<bool>* cancel;
  std::atomic<int64_t> rows_done{0};
  bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
  void rows(int64_t n, const std::string& stage);
};

TrackGroup device_group(int64_t device, const std::string& device_name);
// "Process 1234 · python3"; a ranked process "rank 2 · host · pid 1234", ordered by rank.
TrackGroup process_group(const ProcessInfo* p, int64_t pid);

std::shared_ptr<LoadBatch> load_gpu_part(LoadContext& ctx);
std::shared_ptr<LoadBatch> load_cpu_part(LoadContext& ctx);
std::shared_ptr<LoadBatch> load_counter_part(LoadContext& ctx);

}  // namespace gpuscope::gui
