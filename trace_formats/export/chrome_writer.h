// The Chrome-trace JSON writer behind export_chrome and export_tensorboard.
// One pass per table; events are written into a buffer flushed in 1 MiB
// pieces (json_out.h), so memory stays flat. Layout and names follow torch.profiler's
// Kineto output so that tools built for it (HTA, TensorBoard's plugin) accept it.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace_formats/common/time_math.h"
#include "trace_formats/export/export_model.h"
#include "trace_formats/export/export_window.h"
#include "trace_formats/export/exporters.h"
#include "trace_formats/export/json_out.h"
#include "trace_formats/export/output_file.h"
#include "trace_formats/export/progress.h"
#include "trace_formats/store/coverage.h"

namespace gpuscope::formats {

class ChromeWriter {
 public:
  ChromeWriter(ExportModel& model, OutputFile& out, Progress& progress, uint64_t total_rows)
      : m_(model), out_(out), o_(out), progress_(progress), total_rows_(total_rows) {}

  // gpuscope's own marks (export_window.h), written on each process's "gpuscope" row.
  void set_marks(std::vector<GpuscopeMark> marks) { marks_ = std::move(marks); }
  // The window's steps (ExportOptions::Window::steps) instead of the step table's.
  void set_window(const std::optional<ExportOptions::Window>& w) { window_ = w; }
  // Writes the whole document.
  void write_all();
  uint64_t events() const { return events_; }
  // What the host and the device passes do with each column of the tables
  // they carry, declared next to their reads (chrome_table_uses()).
  static std::vector<store::TableUse> host_table_uses();
  static std::vector<store::TableUse> device_table_uses();

 private:
  static constexpr std::string_view kConsumer = "chrome export";
  void header();
  void metadata();
  void ops();
  void ranges();
  void api_calls();
  void kernels();
  void memcpys();
  void memsets();
  void syncs();
  void steps();
  // chrome_overlaps.cpp: which host rows do not nest on their thread, and
  // the rows they move to (moved_, row_tid).
  void plan_overlaps();
  void overlap_thread(int64_t pid, int64_t tid, int64_t level);
  static constexpr int64_t kOverlapLevels = 3;
  // Linux thread ids stay below 2^22; rows stay within int32 for viewers that read them so.
  static int64_t overlap_tid(int64_t tid, int64_t level) { return tid + level * (int64_t{1} << 28); }
  // The row a host event goes to: its thread's, or an overlapping one.
  int64_t row_tid(int table, int64_t id, int64_t tid) const {
    if (moved_[table].empty()) return tid;
    auto it = moved_[table].find(id);
    return it == moved_[table].end() ? tid : overlap_tid(tid, it->second);
  }
  enum HostTable { kOpRows = 0, kApiRows = 1, kRangeRows = 2, kStepRows = 3 };
  // The steps that need a ProfilerStep#N event (the step table's, where no
  // ProfilerStep ranges were recorded), by pid: the thread that carries them
  // (the busiest) and their bounds; each with its number and source.
  void load_step_rows();
  struct StepRow {
    int64_t number, source;
  };
  std::map<int64_t, std::pair<int64_t, std::vector<std::pair<int64_t, int64_t>>>> step_rows_;
  std::map<int64_t, std::vector<StepRow>> step_info_;
  void memory();
  void counters();
  void trailer();

  // Starts an event object, `{"ph":"<ph>"` after the separator, with room
  // for `var` bytes of names and values besides the fixed parts.
  void begin(char ph, size_t var = 0) {
    o_.room(var + JsonOut::kEventSlack);
    if (first_) o_.lit("\n{\"ph\":\"");
    else o_.lit(",\n{\"ph\":\"");
    first_ = false;
    o_.put(ph);
    o_.put('"');
    ++events_;
  }
  // `,"pid":P,"tid":T,"ts":TS` and optionally `,"dur":D`.
  void where(int64_t pid, int64_t tid, int64_t ts) {
    o_.lit(",\"pid\":");
    o_.put_int(pid);
    o_.lit(",\"tid\":");
    o_.put_int(tid);
    o_.lit(",\"ts\":");
    o_.put_us(ts);
  }
  void span(int64_t pid, int64_t tid, int64_t start, int64_t end) {
    where(pid, tid, start);
    o_.lit(",\"dur\":");
    o_.put_us(span_ns(start, end));
  }
  // As span() for events on a CPU thread, which consumers nest by comparing
  // ts + dur in doubles (TensorBoard's tree builder): where the sum of the
  // written ts and dur is not the double nearest the end, dur is written as
  // the double that makes it so. An event ending where another ends or starts
  // then still does so after parsing, instead of one unit of the last place
  // past it. Where no double does (the sum falls halfway between two), a step
  // with room before it starts one unit of the last place earlier, else the
  // end lands one unit before the end, or after it for a step with room after
  // it (the flags).
  void host_span(int64_t pid, int64_t tid, int64_t start, int64_t end, bool may_start_early = false,
                 bool may_end_late = false) {
    const int64_t d = span_ns(start, end);
    const double s = double(start) / 1000, e = double(end) / 1000;
    if (d == 0 || s + double(d) / 1000 == e || std::abs(start) >= (int64_t{1} << 53)) {
      where(pid, tid, start);
      o_.lit(",\"dur\":");
      return o_.put_us(d);
    }
    // e - s is exact when e <= 2s; else a neighbour of it may be the one.
    auto dur_for = [e](double ts) {
      double x = e - ts;
      for (int i = 0; i < 4 && ts + x != e; ++i) x = std::nextafter(x, ts + x < e ? INFINITY : 0.0);
      return x;
    };
    double ts = s, x = dur_for(s);
    if (s + x != e && may_start_early && dur_for(std::nextafter(s, -INFINITY)) + std::nextafter(s, -INFINITY) == e) {
      ts = std::nextafter(s, -INFINITY);
      x = dur_for(ts);
    }
    for (int i = 0; i < 4 && (may_end_late ? ts + x < e : ts + x > e); ++i)
      x = std::nextafter(x, may_end_late ? INFINITY : 0.0);
    o_.lit(",\"pid\":");
    o_.put_int(pid);
    o_.lit(",\"tid\":");
    o_.put_int(tid);
    o_.lit(",\"ts\":");
    if (ts == s) o_.put_us(start);
    else o_.put_double(ts);
    o_.lit(",\"dur\":");
    if (x > 0 && (may_end_late ? ts + x >= e : ts + x <= e)) o_.put_double(x);
    else o_.put_us(d);
  }
  // `,"<k>":` for a literal key.
  template <size_t N>
  void key(const char (&k)[N]) {
    o_.lit(",\"");
    o_.lit(k);
    o_.lit("\":");
  }
  template <size_t N>
  void int_arg(const char (&k)[N], int64_t v) {
    key(k);
    o_.put_int(v);
  }
  // What kernels, memcpys and memsets start with: the complete event on the
  // stream's track and the arguments they share, `,"args":{` left open.
  template <size_t N>
  void gpu_event_head(const char (&cat)[N], const std::string& name, int64_t device, int64_t stream, int64_t start,
                      int64_t end, const CorrelationMap::Entry* c, int64_t context, int64_t corr) {
    begin('X', name.size());
    o_.lit(",\"cat\":\"");
    o_.lit(cat);
    o_.lit("\",\"name\":");
    o_.put(name);
    span(device, stream, start, end);
    o_.lit(",\"args\":{");
    if (c && c->has_external) {
      o_.lit("\"External id\":");
      o_.put_int(c->external_id);
      o_.put(',');
    }
    o_.lit("\"device\":");
    o_.put_int(device);
    int_arg("context", context);
    int_arg("stream", stream);
    int_arg("correlation", corr);
  }
  // Arguments whose first member is optional are written with a comma
  // before every member; close_args turns the first comma into the brace.
  char* open_args() {
    o_.lit(",\"args\":");
    return o_.pos();
  }
  void close_args(char* mark) {
    if (o_.pos() == mark) o_.put('{');
    else *mark = '{';
    o_.put('}');
  }
  void end_event() {
    o_.put('}');
    o_.maybe_flush();
  }
  void row_done() {
    if ((++rows_ & 0x3FFF) == 0) progress_.update(rows_, total_rows_, "rows", events_);
  }
  void stream_name(int64_t device, int64_t stream) {
    if (device == last_stream_.first && stream == last_stream_.second) return;
    name_stream(device, stream);
  }
  void name_stream(int64_t device, int64_t stream);
  // The "gpuscope" row of a process (tid kGpuscopeTid): gpuscope's own marks,
  // such as the stretches it traced and did not trace, named once.
  static constexpr int64_t kGpuscopeTid = 0;
  void gpuscope_thread(int64_t pid);
  void gpu_name(int64_t device);
  void flow(bool start, uint64_t id, int64_t pid, int64_t tid, int64_t ts);

  ExportModel& m_;
  OutputFile& out_;
  JsonOut o_;
  Progress& progress_;
  bool first_ = true;
  uint64_t events_ = 0, rows_ = 0, total_rows_ = 0;
  std::set<std::pair<int64_t, int64_t>> streams_named_;
  std::pair<int64_t, int64_t> last_stream_{INT64_MIN, INT64_MIN};  // named already
  std::set<int64_t> gpus_named_, gpuscope_named_;
  std::vector<GpuscopeMark> marks_;
  std::optional<ExportOptions::Window> window_;
  void write_marks();
  std::unordered_map<int64_t, int64_t> moved_[4];  // by HostTable: row id -> overlap level
};

// Rows the Chrome writer will visit, for progress.
uint64_t chrome_row_total(ExportModel& m);

// Every column of the tables the Chrome export carries, handled or left out
// on purpose (store/coverage.h): a column added to one of them fails the
// static_assert next to its read, and this list is checked against a changed
// schema by tests/trace_formats/export/export_coverage_test.cpp.
std::vector<store::TableUse> chrome_table_uses();

}  // namespace gpuscope::formats
