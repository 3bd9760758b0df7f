// Maps torch.profiler (Kineto) trace events onto the gpuscope schema as they
// stream by. State kept is per process, thread and distinct name only, never
// per event. The mapping is documented in docs/formats.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "trace_formats/import/row_writer.h"
#include "trace_formats/import/trace_reader.h"

namespace gpuscope::formats {

struct ImportCounts {
  int64_t events = 0;  // elements seen
  int64_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, syncs = 0, ops = 0;
  int64_t ranges = 0, steps = 0, memory_events = 0, counters = 0, correlations = 0;
  std::map<std::string, int64_t> unknown;  // category (or "ph:X") -> events
  std::map<std::string, int64_t> skipped;  // known but not stored (flows, spans, overhead)
  // Events that would be stored but cannot be: reason ("ts out of range", "no ts") -> events.
  std::map<std::string, int64_t> dropped;
};

class KinetoMapper : public TraceSink {
 public:
  explicit KinetoMapper(RowWriter& out) : out_(out) {}

  void on_event(const TraceEvent& ev) override;
  void on_device(const DeviceProps& dev) override;
  void on_distributed(const DistributedInfo& info) override;
  void on_base_time(int64_t ns) override { base_time_ns_ = ns; }
  void on_top_level(std::string_view key, std::string_view value) override;

  // Writes processes, threads, stats and meta; fixes what streaming could not
  // know in time (GPU rows seen before their process, unsorted nesting).
  void finish(const std::string& source_name);

  // The origin finish() would settle on if the input ended here: the earliest
  // time seen so far; nullopt before the first timed event.
  std::optional<int64_t> settled_origin() const {
    if (!have_origin_) return std::nullopt;
    return min_rel_ < 0 ? origin_ns_ + min_rel_ : origin_ns_;
  }
  // Starts from this origin instead of the first event's time. With the right
  // one (settled_origin() of a look-ahead, origin_lookahead.h) finish() need
  // not shift every stored time by an UPDATE of each table.
  void preset_origin(int64_t ns) {
    have_origin_ = true;
    origin_ns_ = ns;
  }

  const ImportCounts& counts() const { return counts_; }
  // Events that mapped to a row (0 means the input held no trace events).
  int64_t recognized() const { return recognized_; }

 private:
  struct Thread {
    std::vector<int64_t> op_ends, range_ends;
    int64_t last_op_start = INT64_MIN, last_range_start = INT64_MIN;
  };
  struct Process {
    int64_t start = INT64_MAX, end = INT64_MIN;
    std::string name;
  };

  enum class Cat;
  Cat classify(const TraceEvent& ev) const;
  int64_t rel(int64_t ts);
  int64_t end_of(const TraceEvent& ev, int64_t start) const;
  int64_t cpu_pid(const TraceId& id);
  int64_t cpu_tid(const TraceId& id);
  int64_t gpu_owner_pid();
  void note_process(int64_t pid, int64_t start, int64_t end);
  Thread& thread(int64_t pid, int64_t tid);

  void add_kernel(const TraceEvent& ev);
  void add_memcpy(const TraceEvent& ev);
  void add_memset(const TraceEvent& ev);
  void add_api(const TraceEvent& ev, int64_t domain);
  void add_sync(const TraceEvent& ev);
  void add_op(const TraceEvent& ev);
  void add_range(const TraceEvent& ev, int64_t source, int64_t kind);
  void add_overhead(const TraceEvent& ev);
  void add_step(const TraceEvent& ev, int64_t start, int64_t end, int64_t pid);
  void add_gpu_annotation(const TraceEvent& ev);
  void add_memory(const TraceEvent& ev);
  void add_counter(const TraceEvent& ev);
  void add_metadata(const TraceEvent& ev);
  void count_unknown(const std::string& key) { ++counts_.unknown[key]; }
  void count_skipped(const std::string& key) { ++counts_.skipped[key]; }

  RowWriter& out_;
  ImportCounts counts_;
  int64_t recognized_ = 0;

  bool have_origin_ = false;
  int64_t origin_ns_ = 0;
  int64_t base_time_ns_ = kAbsent;
  int64_t min_rel_ = INT64_MAX;

  int64_t main_pid_ = kAbsent;  // the process GPU rows belong to
  bool used_pending_pid_ = false;
  bool unsorted_ops_ = false, unsorted_ranges_ = false;
  int64_t next_synthetic_ = 1;
  std::unordered_map<std::string, int64_t> synthetic_ids_;
  std::unordered_set<int64_t> gpu_pids_;
  std::map<int64_t, Process> processes_;
  std::unordered_map<uint64_t, Thread> threads_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;
  // gpuscope's Chrome export puts events that do not nest on their thread on
  // "<thread> (overlapping)" rows (tid + level << 28): read back as the thread's.
  std::unordered_set<int64_t> overlap_rows_;
  DistributedInfo dist_;
  std::map<std::string, std::string> top_level_;
  int64_t next_step_ = 0;
  std::string scratch_, dims_, types_;
};

}  // namespace gpuscope::formats
