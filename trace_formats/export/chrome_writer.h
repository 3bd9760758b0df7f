// The Chrome-trace JSON writer behind export_chrome and export_tensorboard.
// One pass over the event stream (store/event_stream.h); events are written
// into a buffer flushed in 1 MiB pieces (json_out.h), so memory stays flat.
// Layout and names follow torch.profiler's Kineto output so that tools built
// for it (HTA, TensorBoard's plugin) accept it.
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
#include "trace_formats/export/chrome_columns.h"
#include "trace_formats/export/event_waits.h"
#include "trace_formats/export/export_model.h"
#include "trace_formats/export/export_window.h"
#include "trace_formats/export/exporters.h"
#include "trace_formats/export/json_out.h"
#include "trace_formats/export/json_text.h"
#include "trace_formats/export/output_file.h"
#include "trace_formats/export/progress.h"
#include "trace_formats/store/coverage.h"
#include "trace_formats/store/event_stream.h"

namespace gpuscope::formats {

// A visitor of the event stream (store/event_stream.h): one on() a kind,
// writing the kind's events as the rows come, in table order.
class ChromeWriter {
 public:
  ChromeWriter(ExportModel& model, OutputFile& out, Progress& progress, uint64_t total_rows)
      : m_(model), out_(out), o_(out), progress_(progress), total_rows_(total_rows) {}

  // gpuscope's own marks (export_window.h), written on each process's "gpuscope" row.
  void set_marks(std::vector<GpuscopeMark> marks) { marks_ = std::move(marks); }
  // One process's steps as analyze bounds them instead of its step table's (replaced_steps()).
  void set_steps(std::optional<ExportOptions::Steps> s) { replaced_ = std::move(s); }
  // Writes the whole document.
  void write_all();
  uint64_t events() const { return events_; }
  static constexpr std::string_view kConsumer = "chrome export";

  // The event stream's visitor: per kind, what it reads (chrome_columns.h)
  // and its method. chrome_cpu_events.cpp writes the host kinds,
  // chrome_gpu_events.cpp the device kinds.
  template <class R, const auto& Read, const auto& LeftOut = store::events::kNone<R>>
  using Columns = store::events::Columns<R, Read, LeftOut>;
  template <class R>
  using Tag = store::events::Tag<R>;
  static Columns<store::rec::Step, chrome_columns::kStepRead, chrome_columns::kStepLeftOut> columns(
      Tag<store::rec::Step>);
  static Columns<store::rec::Op, chrome_columns::kOpRead, chrome_columns::kOpLeftOut> columns(Tag<store::rec::Op>);
  static Columns<store::rec::Range, chrome_columns::kRangeRead, chrome_columns::kRangeLeftOut> columns(
      Tag<store::rec::Range>);
  static Columns<store::rec::ApiCall, chrome_columns::kApiCallRead> columns(Tag<store::rec::ApiCall>);
  static Columns<store::rec::Kernel, chrome_columns::kKernelRead, chrome_columns::kKernelLeftOut> columns(
      Tag<store::rec::Kernel>);
  static Columns<store::rec::Memcpy, chrome_columns::kMemcpyRead, chrome_columns::kMemcpyLeftOut> columns(
      Tag<store::rec::Memcpy>);
  static Columns<store::rec::Memset, chrome_columns::kMemsetRead, chrome_columns::kMemsetLeftOut> columns(
      Tag<store::rec::Memset>);
  static Columns<store::rec::Sync, chrome_columns::kSyncRead, chrome_columns::kSyncLeftOut> columns(
      Tag<store::rec::Sync>);
  static Columns<store::rec::MemoryEvent, chrome_columns::kMemoryRead, chrome_columns::kMemoryLeftOut> columns(
      Tag<store::rec::MemoryEvent>);
  static Columns<store::rec::Counter, chrome_columns::kCounterRead, chrome_columns::kCounterLeftOut> columns(
      Tag<store::rec::Counter>);
  // Steps by process, then start: the ProfilerStep rows of each process in order.
  static constexpr std::string_view order(Tag<store::rec::Step>) { return "pid, start"; }
  void on(const store::rec::Step& step);
  void on(const store::rec::Op& op);
  void on(const store::rec::Range& r);
  void on(const store::rec::ApiCall& a);
  void on(const store::rec::Kernel& k);
  void on(const store::rec::Memcpy& m);
  void on(const store::rec::Memset& m);
  void on(const store::rec::Sync& s);
  void on(const store::rec::MemoryEvent& e);
  void on(const store::rec::Counter& c);
  // Phases between kinds: which processes need ProfilerStep events, before
  // the steps come; the rows that move to overlap rows once they are known,
  // before the first host event; the correlations, before the API calls
  // (which mark what was launched); the ProfilerStep events after the GPU
  // rows, where Kineto writes them.
  void before(Tag<store::rec::Step>);
  void before(Tag<store::rec::Op>) { plan_overlaps(); }
  void before(Tag<store::rec::ApiCall>) {
    m_.load_correlations(ExportModel::kExternalIds | ExportModel::kGpuActivity);
    waits_.load(m_.reader().db(), m_.and_pid());
    wait_ends_.assign(waits_.waits().size(), WaitEnd{});
    event_syncs_.load(m_.reader().db(), m_.and_pid());
  }
  // The stream waits' arrows end on their waiting work, known once every GPU
  // row was seen; so is the work each event sync waited for.
  void before(Tag<store::rec::Sync>) {
    wait_flow_ends();
    event_syncs_.finish();
  }
  void before(Tag<store::rec::MemoryEvent>) { steps(); }

 private:
  void header();
  void metadata();
  void steps();
  // chrome_overlaps.cpp: which host rows do not nest on their thread, and
  // the rows they move to (moved_, row_tid).
  void plan_overlaps();
  void overlap_thread(int64_t pid, int64_t tid, int64_t level);
  template <class Rows>
  void fit_for_hta(const Rows& kept, std::vector<int64_t> soft);
  // Host rows HtaFit moved (hta_fit.h), by HostTable: row id -> written start, end.
  std::unordered_map<int64_t, std::pair<int64_t, int64_t>> fitted_[4];
  int64_t hta_unfixed_ = 0;
  // Where a host row is written: its bounds, or those HtaFit gave it.
  std::pair<int64_t, int64_t> fitted(int table, int64_t id, int64_t start, int64_t end) const {
    if (fitted_[table].empty()) return {start, end};
    auto it = fitted_[table].find(id);
    return it == fitted_[table].end() ? std::pair{start, end} : it->second;
  }
  // A moved row's arguments keep its recorded times ("recorded ts", "recorded
  // dur", microseconds), from which import restores them.
  void recorded_args(int64_t start, int64_t end, int64_t written_start, int64_t written_end) {
    if (start == written_start && end == written_end) return;
    key("recorded ts");
    o_.put_us(start);
    key("recorded dur");
    o_.put_us(span_ns(start, end));
  }
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
  // (the busiest) and their bounds; each with its number and source. Read
  // by on(Step); finish_step_rows() adds analyze's window and the threads.
  void finish_step_rows();
  struct StepRow {
    int64_t number, source;
  };
  std::map<int64_t, std::pair<int64_t, std::vector<std::pair<int64_t, int64_t>>>> step_rows_;
  std::map<int64_t, std::vector<StepRow>> step_info_;
  std::map<int64_t, bool> step_ranges_;  // processes whose steps are ProfilerStep ranges
  std::optional<ExportOptions::Steps> replaced_;  // analyze's steps, replacing its process's
  std::map<int64_t, int64_t> replaced_sources_;   // the recorded sources of those steps, by number
  void trailer();
  // GPU rows of one table share a few names: escape each once.
  struct NameCache {
    int64_t a = INT64_MIN, b = INT64_MIN, c = INT64_MIN;
    std::string json;
    template <typename F>
    const std::string& get(int64_t a2, int64_t b2, int64_t c2, F&& name) {
      if (a2 != a || b2 != b || c2 != c) {
        a = a2;
        b = b2;
        c = c2;
        json.clear();
        append_json_string(json, name());
      }
      return json;
    }
  };
  NameCache memcpy_names_, memset_names_;
  int64_t sm_device_ = INT64_MIN, sms_ = 0;  // the SM count of the last kernel's device

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
  // Where an event on a GPU row starts in the file. HTA reads fractional
  // microseconds by rounding ts up and ts + dur down (trace_parser.py, "Rounding
  // down ns resolution events"), so an event inside one microsecond would end
  // before it starts, and its temporal breakdown asserts. Such an event starts
  // at its microsecond's beginning instead (less than 1 us early, its duration
  // kept); every other event where it was recorded. Computed in the doubles
  // the written decimals parse to.
  static int64_t hta_start(int64_t start, int64_t end) {
    const double ts = double(start) / 1000, dur = double(span_ns(start, end)) / 1000;
    if (std::ceil(ts) <= std::floor(ts + dur) || std::abs(start) >= (int64_t{1} << 53)) return start;
    return start >= 0 ? start / 1000 * 1000 : -((999 - start) / 1000) * 1000;
  }
  // span() for an event on a GPU row (pid = device, tid = stream), from hta_start.
  void gpu_span(int64_t device, int64_t stream, int64_t start, int64_t end) {
    const int64_t d = span_ns(start, end), at = hta_start(start, end);
    span(device, stream, at, saturating_add(at, d));
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
    gpu_span(device, stream, start, end);
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
  // What they end with: the arguments closed, and the flow from the API call
  // that launched them.
  void gpu_event_tail(const CorrelationMap::Entry* c, int64_t pid, int64_t corr, int64_t device, int64_t stream,
                      int64_t start, int64_t end) {
    o_.put('}');
    end_event();
    if (c && c->api) flow(false, m_.flow_id(pid, corr), device, stream, hta_start(start, end));
    note_waiting_work(pid, corr, device, stream, hta_start(start, end));
    event_syncs_.note_work(pid, stream, corr, device, hta_start(start, end));
    row_done();
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
  // Stream waits (event_waits.h): an arrow from the cudaEventRecord call to
  // the first GPU work launched on the waiting stream after the wait.
  void wait_flow(bool start, uint64_t id, int64_t pid, int64_t tid, int64_t ts);
  void note_waiting_work(int64_t pid, int64_t corr, int64_t device, int64_t stream, int64_t ts) {
    if (waits_.empty()) return;
    // Rows come in table order, not launch order: keep each wait's earliest launched work.
    auto [first, last] = waits_.waits_before(pid, stream, corr);
    for (size_t i = last; i > first && corr < wait_ends_[i - 1].corr; --i) wait_ends_[i - 1] = {corr, device, stream, ts};
  }
  void wait_flow_ends();
  EventWaits waits_;
  // Event syncs (event_waits.h): an arrow from the GPU work the event recorded to the sync.
  EventSyncs event_syncs_;
  void sync_flow(bool start, uint64_t id, int64_t pid, int64_t tid, int64_t ts);
  struct WaitEnd {
    int64_t corr = INT64_MAX, device = 0, stream = 0, ts = 0;
  };
  std::vector<WaitEnd> wait_ends_;  // by wait: its waiting work so far

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
  void write_marks();
  std::unordered_map<int64_t, int64_t> moved_[4];  // by HostTable: row id -> overlap level
};

// Rows the Chrome writer will visit, for progress.
uint64_t chrome_row_total(ExportModel& m);

// One Chrome trace file of `model` at `path` (export_chrome, and each process's
// file of export_tensorboard), committed and counted into `stats`.
void write_chrome_file(ExportModel& model, const std::string& path, const ExportOptions& opt,
                       std::vector<GpuscopeMark> marks, ExportStats& stats);

// Every column of the tables the Chrome export carries, handled or left out
// on purpose (chrome_columns.h): a column added to one of them fails to
// compile in the event stream's check, and this list is checked against a
// changed schema by tests/trace_formats/export/export_coverage_test.cpp.
std::vector<store::TableUse> chrome_table_uses();

}  // namespace gpuscope::formats
