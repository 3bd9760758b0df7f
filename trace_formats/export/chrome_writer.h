// The Chrome-trace JSON writer behind export_chrome and export_tensorboard.
// One pass per table; events are written into a buffer flushed in 1 MiB
// pieces (json_out.h), so memory stays flat. Layout and names follow torch.profiler's
// Kineto output so that tools built for it (HTA, TensorBoard's plugin) accept it.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "common/time_math.h"
#include "export/export_model.h"
#include "export/exporters.h"
#include "export/json_out.h"
#include "export/output_file.h"
#include "export/progress.h"

namespace gpuscope::formats {

class ChromeWriter {
 public:
  ChromeWriter(ExportModel& model, OutputFile& out, Progress& progress, uint64_t total_rows)
      : m_(model), out_(out), o_(out), progress_(progress), total_rows_(total_rows) {}

  // Writes the whole document.
  void write_all();
  uint64_t events() const { return events_; }

 private:
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
  std::set<int64_t> gpus_named_;
};

// Rows the Chrome writer will visit, for progress.
uint64_t chrome_row_total(ExportModel& m);

}  // namespace gpuscope::formats
