// Perfetto protobuf export. One packet sequence with interned event names
// and categories, a track per process, thread, GPU stream and counter
// (described the first time it is used), slices as BEGIN/END pairs and
// API -> GPU flows.
//
// Every row is visited once in global start order (perfetto_events.cpp), so
// packet timestamps never decrease and are written as deltas on an
// incremental clock (about a third of the bytes). Slices on one track must
// nest: END events carry no name, so the trace processor closes the most
// recent open slice of the track. A heap holds the open slices' ends; what
// may overlap without nesting (NVTX start/end ranges, syncs, steps, GPU
// annotations) goes to "lanes", child tracks on which slices are disjoint,
// and so does a slice that outlives the slice it starts in (kernels that
// overlap on one stream, a sync call ending after its op): it moves to an
// "overlapping" lane of its track, as Kineto moves overlapping events to
// their own rows, and keeps its recorded duration.
//
// The packets of slices, instants and counter values (all but a few hundred)
// are encoded by hand, byte for byte as the generated code would, because
// building and serializing a message per packet cost more than the rest of
// the export; descriptors and the first packet still use the messages.
#pragma once

#include <cstdint>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "trace_formats/export/export_model.h"
#include "trace_formats/export/event_waits.h"
#include "trace_formats/export/export_window.h"
#include "trace_formats/export/exporters.h"
#include "trace_formats/export/out_buffer.h"
#include "trace_formats/export/output_file.h"
#include "trace_formats/export/perfetto_rows.h"
#include "trace_formats/export/progress.h"
#include "trace_formats/store/coverage.h"
#include "perfetto_trace.pb.h"

namespace gpuscope::formats {

// The columns of each event table the export handles and those it leaves out
// on purpose (declared beside its reads in perfetto_events.cpp), for checks
// against a schema other than the built one.
std::vector<store::TableUse> perfetto_table_uses();

class PerfettoWriter {
 public:
  PerfettoWriter(ExportModel& model, OutputFile& out, Progress& progress, uint64_t total_rows);
  // `rows_in_memory`: sort up to this many rows in memory, else let SQLite sort them.
  void write_all(uint64_t rows_in_memory);
  uint64_t events() const { return events_; }
  // gpuscope's own marks (export_window.h), on a top-level "gpuscope" track.
  void set_marks(const std::vector<GpuscopeMark>& marks);
  // One process's steps as analyze bounds them instead of its step table's (replaced_steps()).
  void set_steps(const std::optional<ExportOptions::Steps>& steps);

  enum Category : uint64_t {
    kCpuOp = 1, kUserAnnotation, kCudaRuntime, kCudaDriver, kKernel, kMemcpy, kMemset, kCudaSync,
    kPythonFunction, kGpuUserAnnotation, kStep, kInstant, kOverhead, kGpuscope, kCategoryCount
  };

 private:
  // A track key: kind plus up to three numbers.
  using Key = std::tuple<int, int64_t, int64_t, int64_t>;
  enum TrackKind { kProcess, kThread, kGpu, kStream, kLane, kCounter, kSteps, kSync, kAnnotation, kOverlap, kMarks };

  struct Open {
    int64_t end;
    uint64_t track;
    bool operator>(const Open& o) const { return end > o.end; }
  };

  // perfetto_events.cpp: reading rows and writing each.
  bool write_sorted_in_memory(uint64_t limit);
  void write_sorted_by_sqlite();
  void row(const TimedRow& r);

  uint64_t process_track(int64_t pid);
  uint64_t thread_track(int64_t pid, int64_t tid);
  uint64_t gpu_track(int64_t device);
  uint64_t gpuscope_track();
  uint64_t stream_track(int64_t pid, int64_t device, int64_t stream);
  uint64_t child_track(const Key& key, uint64_t parent, const std::string& name, int32_t order);
  uint64_t counter_track(const Key& key, uint64_t parent, const std::string& name, bool bytes);
  uint64_t lane_track(int kind, int64_t a, int64_t b, int64_t start, int64_t end, uint64_t parent,
                      const std::string& name);

  // Interned names: string ids and RowTexts names share one iid space.
  uint64_t name_iid(int64_t name);
  uint64_t intern(std::string_view text);

  // Message packets (first packet, descriptors): built in pkt_, then emit().
  void start_sequence();
  void descriptor_packet();
  void emit();
  // Hand-encoded TrackEvent packets; `ts` never decreases from one to the next.
  void close_until(int64_t ts);
  // `flow_out`/`flow_in`: the launch -> GPU arrow (0: none); `waits_out`: the
  // stream waits whose arrows start here (a cudaEventRecord call), `waits_in`
  // those ending here (their waiting work), as indices into EventWaits::waits().
  // `more_out`: further arrows starting here (event syncs' recorded work), by flow id.
  void open_slice(uint64_t track, int64_t start, int64_t end, uint64_t cat, int64_t name, uint64_t flow_out,
                  uint64_t flow_in, const std::vector<size_t>* waits_out = nullptr,
                  const std::vector<size_t>* waits_in = nullptr, const std::vector<uint64_t>* more_out = nullptr);
  // Event syncs (event_waits.h): the work each waited for, from a pass over the GPU rows.
  void load_event_syncs();
  void instant(uint64_t track, int64_t ts, uint64_t cat, int64_t name);
  void counter_value(uint64_t track, int64_t ts, double value);
  // Writes one packet: timestamp delta, sequence id, the TrackEvent body
  // `te`, names interned since the last packet, and the sequence flags.
  void event_packet(int64_t ts, std::string_view te);
  int64_t delta(int64_t ts);

  ExportModel& m_;
  EventWaits waits_;
  std::vector<size_t> waits_in_;  // of the GPU row being written
  EventSyncs event_syncs_;
  std::vector<uint64_t> syncs_out_;  // of the GPU row being written: its event syncs' flow ids
  OutBuffer out_;
  Progress& progress_;
  perfetto::protos::TracePacket pkt_;
  std::string scratch_;
  std::string interned_;  // InternedData.event_names of the next event packet
  int64_t last_ts_ = 0;
  RowTexts texts_;
  std::vector<uint64_t> string_iids_, text_iids_;  // by string id / text index; 0 = not interned yet
  uint64_t next_iid_ = 1, next_uuid_ = 1;
  std::map<Key, uint64_t> tracks_;
  std::map<Key, std::vector<int64_t>> lanes_;         // per lane group: each lane's last end
  std::vector<std::vector<int64_t>> open_by_track_;   // by track uuid: nesting stack of ends
  std::priority_queue<Open, std::vector<Open>, std::greater<Open>> open_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;
  std::map<int64_t, int> stream_pids_;  // distinct pids per device, for stream track names
  std::vector<TimedRow> marks_;         // kSrcGpuscope rows, in write order
  std::vector<TimedRow> steps_;         // set_steps(): kSrcStep rows, in write order
  std::optional<int64_t> steps_pid_;    // the process whose step rows they replace
  // The last thread and stream track used: consecutive rows mostly share one.
  Key last_thread_{-1, 0, 0, 0}, last_stream_{-1, 0, 0, 0};
  uint64_t last_thread_uuid_ = 0, last_stream_uuid_ = 0;
  uint64_t events_ = 0, rows_ = 0, total_rows_ = 0;
};

}  // namespace gpuscope::formats
