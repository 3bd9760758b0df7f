// Perfetto protobuf export. One packet sequence with interned event names
// and categories, a track per process, thread, GPU stream and counter
// (described the first time it is used), slices as BEGIN/END pairs and
// API -> GPU flows.
//
// Every row is read in one pass in global start order, so packet timestamps
// never decrease and are written as deltas on an incremental clock (about a
// third of the bytes). Slices on one track must nest: a heap holds the open
// slices' ends, a child is clamped into its parent, and what may overlap
// without nesting (NVTX start/end ranges, syncs, steps, GPU annotations) goes
// to "lanes", child tracks on which slices are disjoint.
#pragma once

#include <cstdint>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "export/export_model.h"
#include "export/output_file.h"
#include "export/progress.h"
#include "perfetto_trace.pb.h"

namespace gpuscope::formats {

class PerfettoWriter {
 public:
  PerfettoWriter(ExportModel& model, OutputFile& out, Progress& progress, uint64_t total_rows);
  void write_all();
  uint64_t events() const { return events_; }

  enum Category : uint64_t {
    kCpuOp = 1, kUserAnnotation, kCudaRuntime, kCudaDriver, kKernel, kMemcpy, kMemset, kCudaSync,
    kPythonFunction, kGpuUserAnnotation, kStep, kInstant, kCategoryCount
  };

 private:
  // A track key: kind plus up to three numbers.
  using Key = std::tuple<int, int64_t, int64_t, int64_t>;
  enum TrackKind { kProcess, kThread, kGpu, kStream, kLane, kCounter, kSteps, kSync, kAnnotation };

  struct Slice {
    int64_t start = 0, end = 0;
    uint64_t cat = 0;
    int64_t name_id = INT64_MIN;  // a string id, or INT64_MIN to use `text`
    std::string text;
    uint64_t flow_out = 0, flow_in = 0;
  };
  struct Open {
    int64_t end;
    uint64_t track;
    bool operator>(const Open& o) const { return end > o.end; }
  };

  void start_sequence();
  void row(store::Statement& q);

  uint64_t process_track(int64_t pid);
  uint64_t thread_track(int64_t pid, int64_t tid);
  uint64_t gpu_track(int64_t device);
  uint64_t stream_track(int64_t pid, int64_t device, int64_t stream);
  uint64_t child_track(const Key& key, uint64_t parent, const std::string& name, int32_t order);
  uint64_t counter_track(const Key& key, uint64_t parent, const std::string& name, bool bytes);
  uint64_t lane_track(int kind, int64_t a, int64_t b, int64_t start, int64_t end, uint64_t parent,
                      const std::string& name);

  uint64_t name_iid(int64_t string_id);
  uint64_t text_iid(const std::string& text);

  // Packets: `ts` must not decrease from one packet to the next.
  void begin_packet(int64_t ts);
  void descriptor_packet();
  void emit();
  void close_until(int64_t ts);
  void open_slice(uint64_t track, const Slice& s);
  void instant(uint64_t track, int64_t ts, uint64_t cat, int64_t name_id);
  void counter_value(uint64_t track, int64_t ts, double value);

  ExportModel& m_;
  OutputFile& out_;
  Progress& progress_;
  std::string buf_;
  perfetto::protos::TracePacket pkt_;
  int64_t last_ts_ = 0;
  std::vector<uint64_t> name_iids_;  // by string id; 0 = not interned yet
  std::unordered_map<std::string, uint64_t> text_iids_;
  uint64_t next_iid_ = 1, next_uuid_ = 1;
  std::map<Key, uint64_t> tracks_;
  std::map<Key, std::vector<int64_t>> lanes_;  // per lane group: each lane's last end
  std::unordered_map<uint64_t, std::vector<int64_t>> open_by_track_;  // nesting stacks
  std::priority_queue<Open, std::vector<Open>, std::greater<Open>> open_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;
  std::map<int64_t, int> stream_pids_;  // distinct pids per device, for stream track names
  Slice slice_;
  uint64_t events_ = 0, rows_ = 0, total_rows_ = 0;
};

}  // namespace gpuscope::formats
