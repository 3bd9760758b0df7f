// The Chrome-trace JSON writer behind export_chrome and export_tensorboard.
// One pass per table; events are appended to a buffer flushed in 1 MiB
// pieces, so memory stays flat. Layout and names follow torch.profiler's
// Kineto output so that tools built for it (HTA, TensorBoard's plugin) accept it.
#pragma once

#include <set>
#include <string>
#include <utility>

#include "export/export_model.h"
#include "export/exporters.h"
#include "export/output_file.h"
#include "export/progress.h"

namespace gpuscope::formats {

class ChromeWriter {
 public:
  ChromeWriter(ExportModel& model, OutputFile& out, Progress& progress, uint64_t total_rows)
      : m_(model), out_(out), progress_(progress), total_rows_(total_rows) {
    buf_.reserve(kFlushAt + 4096);
  }

  // Writes the whole document.
  void write_all();
  uint64_t events() const { return events_; }

 private:
  static constexpr size_t kFlushAt = size_t{1} << 20;

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

  // Starts an event object: separator, then `{"ph":"<ph>"`.
  void begin(const char* ph) {
    buf_ += first_ ? "\n{\"ph\":\"" : ",\n{\"ph\":\"";
    first_ = false;
    buf_ += ph;
    buf_ += '"';
    ++events_;
  }
  // `,"pid":P,"tid":T,"ts":TS` and optionally `,"dur":D`.
  void where(int64_t pid, int64_t tid, int64_t ts);
  void span(int64_t pid, int64_t tid, int64_t start, int64_t end);
  void key(const char* k) {
    buf_ += ",\"";
    buf_ += k;
    buf_ += "\":";
  }
  void int_arg(const char* k, int64_t v) {
    key(k);
    append_int_(v);
  }
  void append_int_(int64_t v);
  void end_event() {
    buf_ += '}';
    if (buf_.size() >= kFlushAt) flush();
  }
  void flush();
  void row_done() {
    if ((++rows_ & 0x3FFF) == 0) progress_.update(rows_, total_rows_, "rows", events_);
  }
  void stream_name(int64_t device, int64_t stream);
  void gpu_name(int64_t device);
  void flow(const char* ph, uint64_t id, int64_t pid, int64_t tid, int64_t ts);

  ExportModel& m_;
  OutputFile& out_;
  Progress& progress_;
  std::string buf_;
  bool first_ = true;
  uint64_t events_ = 0, rows_ = 0, total_rows_ = 0;
  std::set<std::pair<int64_t, int64_t>> streams_named_;
  std::set<int64_t> gpus_named_;
};

// Rows the Chrome writer will visit, for progress.
uint64_t chrome_row_total(ExportModel& m);

}  // namespace gpuscope::formats
